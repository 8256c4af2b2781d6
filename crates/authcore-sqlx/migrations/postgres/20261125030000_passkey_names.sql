-- The name a user gives a passkey (account management); rows Auth.js writes have none.
ALTER TABLE authenticators ADD COLUMN IF NOT EXISTS name TEXT;
