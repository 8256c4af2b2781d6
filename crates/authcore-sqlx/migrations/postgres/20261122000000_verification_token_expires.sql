-- create_verification_token deletes tokens a day past their expiry on every insert; without
-- an index that DELETE scans the whole table, and unauthenticated WebAuthn options requests
-- add a row each.
CREATE INDEX IF NOT EXISTS verification_token_expires ON verification_token (expires);
