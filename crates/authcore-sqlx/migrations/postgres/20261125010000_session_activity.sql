-- What authcore records about a database session's use (session management): when it was
-- created, last seen, and from which user agent. Nullable: rows written by Auth.js have none.
ALTER TABLE sessions
  ADD COLUMN IF NOT EXISTS "createdAt" TIMESTAMPTZ,
  ADD COLUMN IF NOT EXISTS "lastSeenAt" TIMESTAMPTZ,
  ADD COLUMN IF NOT EXISTS "userAgent" TEXT;
