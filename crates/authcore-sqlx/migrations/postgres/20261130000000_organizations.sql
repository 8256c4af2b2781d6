-- Organizations (beyond Auth.js): each with a unique slug; its members, one row per user
-- with their roles and the ids of their teams (each list space-separated, in the order
-- given: names and ids never contain spaces); its teams, each name once per organization;
-- invitations by email, to an organization or (without one) to sign up, of which only the
-- hash of the emailed token is kept, with where each stands (`status`: pending, accepted
-- or revoked; who accepted it, and when it was accepted or revoked). `inviterId` and
-- `acceptedBy` record who did it and reference nothing: the record outlives the user.
CREATE TABLE IF NOT EXISTS organizations
(
  id TEXT NOT NULL PRIMARY KEY,
  slug TEXT NOT NULL UNIQUE,
  name TEXT NOT NULL,
  "createdAt" TIMESTAMPTZ NOT NULL
);

CREATE TABLE IF NOT EXISTS organization_members
(
  "organizationId" TEXT NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
  "userId" INTEGER NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  roles TEXT NOT NULL,
  teams TEXT NOT NULL,
  "createdAt" TIMESTAMPTZ NOT NULL,

  PRIMARY KEY ("organizationId", "userId")
);
CREATE INDEX IF NOT EXISTS organization_members_userId_idx ON organization_members ("userId");

CREATE TABLE IF NOT EXISTS organization_teams
(
  id TEXT NOT NULL PRIMARY KEY,
  "organizationId" TEXT NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
  name TEXT NOT NULL,
  "createdAt" TIMESTAMPTZ NOT NULL,

  UNIQUE ("organizationId", name)
);

CREATE TABLE IF NOT EXISTS organization_invitations
(
  id TEXT NOT NULL PRIMARY KEY,
  "organizationId" TEXT REFERENCES organizations (id) ON DELETE CASCADE,
  email TEXT NOT NULL,
  roles TEXT NOT NULL,
  teams TEXT NOT NULL,
  "inviterId" INTEGER,
  "tokenHash" TEXT NOT NULL UNIQUE,
  "createdAt" TIMESTAMPTZ NOT NULL,
  expires TIMESTAMPTZ NOT NULL,
  status TEXT NOT NULL,
  "acceptedBy" INTEGER,
  "closedAt" TIMESTAMPTZ
);
CREATE INDEX IF NOT EXISTS organization_invitations_organizationId_idx
  ON organization_invitations ("organizationId");
CREATE INDEX IF NOT EXISTS organization_invitations_email_idx ON organization_invitations (email);

-- API keys (beyond Auth.js): the key's visible part as id, the hash of its secret part, the
-- user it acts as, the organization of an organization's key, its permissions
-- (space-separated), and when it expires, was last used and was revoked.
CREATE TABLE IF NOT EXISTS api_keys
(
  id TEXT NOT NULL PRIMARY KEY,
  hash TEXT NOT NULL,
  name TEXT NOT NULL,
  "userId" INTEGER NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  "organizationId" TEXT REFERENCES organizations (id) ON DELETE CASCADE,
  permissions TEXT NOT NULL,
  "createdAt" TIMESTAMPTZ NOT NULL,
  expires TIMESTAMPTZ,
  "lastUsedAt" TIMESTAMPTZ,
  "revokedAt" TIMESTAMPTZ
);
CREATE INDEX IF NOT EXISTS api_keys_userId_idx ON api_keys ("userId");
CREATE INDEX IF NOT EXISTS api_keys_organizationId_idx ON api_keys ("organizationId");

-- The organization a database session acts for (NULL: none chosen). Cleared when the
-- member leaves or the organization goes; it goes with the session's row.
ALTER TABLE sessions ADD COLUMN IF NOT EXISTS "activeOrganizationId" TEXT;
CREATE INDEX IF NOT EXISTS sessions_activeOrganizationId_idx ON sessions ("activeOrganizationId");
