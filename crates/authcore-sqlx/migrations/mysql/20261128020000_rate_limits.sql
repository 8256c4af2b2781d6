-- authcore's rate-limit counts and single-use and revocation marks (`SqlRateLimitStore`):
-- one row per key, a fixed window and a lock-out in milliseconds since the Unix epoch
-- (0: none), and when the row is of no more use (`expires`, the later of the two), by which
-- expired rows are deleted. Keys are authcore's: a namespace and a SHA-256 in hex (ASCII).
CREATE TABLE IF NOT EXISTS `rateLimit`
(
  `id` VARCHAR(255) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
  `count` BIGINT NOT NULL,
  `windowEnds` BIGINT NOT NULL,
  `lockedUntil` BIGINT NOT NULL,
  `expires` BIGINT NOT NULL,

  PRIMARY KEY (`id`),
  INDEX `rateLimit_expires` (`expires`)
);
