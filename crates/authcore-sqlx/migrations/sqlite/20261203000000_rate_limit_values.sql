-- The short-lived values of the single-use store (`SqlRateLimitStore::put_value`: an
-- OpenID Provider's pending device authorizations), in the rows of their own keys, deleted
-- with the expired rows as counts are. NULL in the rows of counts and marks.
ALTER TABLE rate_limits ADD COLUMN data TEXT;
