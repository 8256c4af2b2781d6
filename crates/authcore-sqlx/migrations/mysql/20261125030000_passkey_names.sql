-- The name a user gives a passkey (account management); rows Auth.js writes have none.
ALTER TABLE `authenticator` ADD COLUMN `name` VARCHAR(255) NULL;
