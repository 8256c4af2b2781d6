-- The tables of Auth.js's @auth/pg-adapter (same names, columns and types), plus the
-- `authenticators` table of Auth.js's Prisma/Drizzle schemas, plus the constraints the
-- adapter relies on. `IF NOT EXISTS` everywhere: on a database already set up for
-- @auth/pg-adapter this adds only what is missing (the authenticators table, the unique
-- indexes); foreign keys are not added to existing tables, which is fine because
-- delete_user deletes a user's rows explicitly.

CREATE TABLE IF NOT EXISTS users
(
  id SERIAL,
  name VARCHAR(255),
  email VARCHAR(255),
  "emailVerified" TIMESTAMPTZ,
  image TEXT,

  PRIMARY KEY (id)
);

CREATE TABLE IF NOT EXISTS verification_token
(
  identifier TEXT NOT NULL,
  expires TIMESTAMPTZ NOT NULL,
  token TEXT NOT NULL,

  PRIMARY KEY (identifier, token)
);

CREATE TABLE IF NOT EXISTS accounts
(
  id SERIAL,
  "userId" INTEGER NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  type VARCHAR(255) NOT NULL,
  provider VARCHAR(255) NOT NULL,
  "providerAccountId" VARCHAR(255) NOT NULL,
  refresh_token TEXT,
  access_token TEXT,
  expires_at BIGINT,
  id_token TEXT,
  scope TEXT,
  session_state TEXT,
  token_type TEXT,

  PRIMARY KEY (id)
);

CREATE TABLE IF NOT EXISTS sessions
(
  id SERIAL,
  "userId" INTEGER NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  expires TIMESTAMPTZ NOT NULL,
  "sessionToken" VARCHAR(255) NOT NULL,

  PRIMARY KEY (id)
);

-- Auth.js Prisma/Drizzle `Authenticator` model. `counter` is BIGINT (not INTEGER) so every
-- WebAuthn u32 counter fits.
CREATE TABLE IF NOT EXISTS authenticators
(
  "credentialID" TEXT NOT NULL,
  "userId" INTEGER NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  "providerAccountId" TEXT NOT NULL,
  "credentialPublicKey" TEXT NOT NULL,
  counter BIGINT NOT NULL,
  "credentialDeviceType" TEXT NOT NULL,
  "credentialBackedUp" BOOLEAN NOT NULL,
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
