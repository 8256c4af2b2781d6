-- The JWT revocation list (`jwt_revocation`): per user, JWT sessions signed in before
-- "revokedBefore" are refused, except the one whose `sid` is "keepSession".
CREATE TABLE IF NOT EXISTS session_revocations
(
  "userId" TEXT NOT NULL PRIMARY KEY REFERENCES users (id) ON DELETE CASCADE,
  "revokedBefore" TEXT NOT NULL,
  "keepSession" TEXT
);
