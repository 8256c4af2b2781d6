-- Password accounts (beyond Auth.js): each user's password hash as given (a PHC string such
-- as `$argon2id$v=19$…`, or an imported bcrypt hash) and when it was last set.
CREATE TABLE IF NOT EXISTS user_passwords
(
  "userId" INTEGER NOT NULL PRIMARY KEY REFERENCES users (id) ON DELETE CASCADE,
  hash TEXT NOT NULL,
  "updatedAt" TIMESTAMPTZ NOT NULL
);

-- The groups a user source gave a user at their last sign-in (beyond Auth.js), in the
-- order given: one row per group, `position` from 0.
CREATE TABLE IF NOT EXISTS user_groups
(
  "userId" INTEGER NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  position BIGINT NOT NULL,
  name TEXT NOT NULL,

  PRIMARY KEY ("userId", position)
);
