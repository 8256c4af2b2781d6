-- Second factors (beyond Auth.js): a user's TOTP secret, sealed with the auth secret, and
-- when a first code confirmed it; the SHA-256 of each unused recovery code. No foreign
-- keys, as for `sessionRevocation`: `delete_user` deletes the rows itself.
CREATE TABLE IF NOT EXISTS `twoFactor`
(
  `userId` VARCHAR(255) NOT NULL,
  `totpSecret` TEXT NOT NULL,
  `totpConfirmedAt` DATETIME(3),

  PRIMARY KEY (`userId`)
) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin;

CREATE TABLE IF NOT EXISTS `recoveryCode`
(
  `userId` VARCHAR(255) NOT NULL,
  `codeHash` VARCHAR(64) NOT NULL,

  PRIMARY KEY (`userId`, `codeHash`)
) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin;
