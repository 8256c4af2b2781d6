-- How the user of a database session signed in, recorded with second factors on for step-up
-- checks: the RFC 8176 methods (space-separated, in order) and the time. Nullable: rows
-- written by Auth.js, or before second factors were on, have none.
ALTER TABLE `session`
  ADD COLUMN `amr` TEXT NULL,
  ADD COLUMN `authTime` DATETIME(3) NULL;
