-- authcore's rate-limit counts and single-use and revocation marks (`SqlRateLimitStore`):
-- one row per key, a fixed window and a lock-out in milliseconds since the Unix epoch
-- (0: none), and when the row is of no more use ("expires", the later of the two), by which
-- expired rows are deleted. Keys are authcore's: a namespace and a SHA-256 in hex.
CREATE TABLE IF NOT EXISTS rate_limits
(
  id TEXT NOT NULL PRIMARY KEY,
  count INTEGER NOT NULL,
  "windowEnds" INTEGER NOT NULL,
  "lockedUntil" INTEGER NOT NULL,
  expires INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS rate_limits_expires ON rate_limits (expires);
