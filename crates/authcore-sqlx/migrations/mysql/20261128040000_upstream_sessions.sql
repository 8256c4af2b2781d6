-- Sessions signed in through an upstream OpenID provider's session (beyond Auth.js): the
-- provider, its session id (`sid`, at most 255 characters), the user and the database
-- session here (NULL for a JWT session), until the session expires. A back-channel logout
-- token naming the `sid` takes the rows and ends those sessions. No foreign key, as for
-- `sessionRevocation`: `delete_user` deletes the rows itself.
CREATE TABLE IF NOT EXISTS `upstreamSession`
(
  `id` VARCHAR(64) NOT NULL PRIMARY KEY,
  `provider` VARCHAR(255) NOT NULL,
  `sid` VARCHAR(255) NOT NULL,
  `userId` VARCHAR(255) NOT NULL,
  `sessionToken` VARCHAR(255),
  `expires` DATETIME(3) NOT NULL,

  INDEX `upstreamSession_sid` (`provider`, `sid`),
  INDEX `upstreamSession_expires` (`expires`)
) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin;
