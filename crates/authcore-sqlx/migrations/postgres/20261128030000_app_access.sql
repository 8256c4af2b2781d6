-- Access a user granted to applications that sign in through authcore as an OpenID Provider
-- (beyond Auth.js): the scopes allowed (space-separated, empty once revoked), when access
-- was first and last granted, and the epoch that each revocation moves on (tokens of an
-- earlier epoch are void).
CREATE TABLE IF NOT EXISTS app_access
(
  "userId" INTEGER NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  "clientId" TEXT NOT NULL,
  "clientName" TEXT NOT NULL,
  scopes TEXT NOT NULL,
  "createdAt" TIMESTAMPTZ NOT NULL,
  "updatedAt" TIMESTAMPTZ NOT NULL,
  epoch BIGINT NOT NULL,

  PRIMARY KEY ("userId", "clientId")
);
