-- The tables of Auth.js's @auth/pg-adapter with SQLite types: same table and column names.
-- Ids are UUID v4 text; timestamps are ISO 8601 UTC text as JavaScript's toISOString()
-- writes them (`2025-01-31T12:00:00.000Z`, what @auth/d1-adapter and the Kysely adapter
-- store in SQLite); booleans are 0/1. Plus the `authenticators` table of Auth.js's
-- Prisma/Drizzle schemas and the constraints the adapter relies on.

CREATE TABLE IF NOT EXISTS users
(
  id TEXT NOT NULL PRIMARY KEY,
  name TEXT,
  email TEXT,
  "emailVerified" TEXT,
  image TEXT
);

CREATE TABLE IF NOT EXISTS verification_token
(
  identifier TEXT NOT NULL,
  expires TEXT NOT NULL,
  token TEXT NOT NULL,

  PRIMARY KEY (identifier, token)
);

CREATE TABLE IF NOT EXISTS accounts
(
  id TEXT NOT NULL PRIMARY KEY,
  "userId" TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  type TEXT NOT NULL,
  provider TEXT NOT NULL,
  "providerAccountId" TEXT NOT NULL,
  refresh_token TEXT,
  access_token TEXT,
  expires_at INTEGER,
  id_token TEXT,
  scope TEXT,
  session_state TEXT,
  token_type TEXT
);

CREATE TABLE IF NOT EXISTS sessions
(
  id TEXT NOT NULL PRIMARY KEY,
  "userId" TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  expires TEXT NOT NULL,
  "sessionToken" TEXT NOT NULL
);

CREATE TABLE IF NOT EXISTS authenticators
(
  "credentialID" TEXT NOT NULL,
  "userId" TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  "providerAccountId" TEXT NOT NULL,
  "credentialPublicKey" TEXT NOT NULL,
  counter INTEGER NOT NULL,
  "credentialDeviceType" TEXT NOT NULL,
  "credentialBackedUp" INTEGER NOT NULL,
  transports TEXT,

  PRIMARY KEY ("userId", "credentialID")
);

CREATE UNIQUE INDEX IF NOT EXISTS users_email_key ON users (email);
CREATE UNIQUE INDEX IF NOT EXISTS accounts_provider_providerAccountId_key
  ON accounts (provider, "providerAccountId");
CREATE INDEX IF NOT EXISTS accounts_userId_idx ON accounts ("userId");
CREATE UNIQUE INDEX IF NOT EXISTS sessions_sessionToken_key ON sessions ("sessionToken");
CREATE INDEX IF NOT EXISTS sessions_userId_idx ON sessions ("userId");
CREATE UNIQUE INDEX IF NOT EXISTS authenticators_credentialID_key
  ON authenticators ("credentialID");
