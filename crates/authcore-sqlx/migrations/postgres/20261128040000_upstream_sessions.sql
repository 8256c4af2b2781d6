-- Sessions signed in through an upstream OpenID provider's session (beyond Auth.js): the
-- provider, its session id (`sid`), the user and the database session here (NULL for a JWT
-- session), until the session expires. A back-channel logout token naming the `sid` takes
-- the rows and ends those sessions.
CREATE TABLE IF NOT EXISTS upstream_sessions
(
  id TEXT NOT NULL PRIMARY KEY,
  provider TEXT NOT NULL,
  sid TEXT NOT NULL,
  "userId" INTEGER NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  "sessionToken" TEXT,
  expires TIMESTAMPTZ NOT NULL
);
CREATE INDEX IF NOT EXISTS upstream_sessions_sid ON upstream_sessions (provider, sid);
CREATE INDEX IF NOT EXISTS upstream_sessions_expires ON upstream_sessions (expires);
