-- What authcore records about a database session's use (session management): when it was
-- created, last seen, and from which user agent. Nullable: rows written by Auth.js have none.
ALTER TABLE `session`
  ADD COLUMN `createdAt` DATETIME(3) NULL,
  ADD COLUMN `lastSeenAt` DATETIME(3) NULL,
  ADD COLUMN `userAgent` TEXT NULL;
