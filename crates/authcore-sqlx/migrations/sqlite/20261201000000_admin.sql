-- Bans (beyond Auth.js): at most one per user, as an administrator last set it (why, when,
-- until when — NULL: until lifted — and by whom). It goes with the user.
CREATE TABLE IF NOT EXISTS bans
(
  "userId" TEXT NOT NULL PRIMARY KEY REFERENCES users (id) ON DELETE CASCADE,
  reason TEXT NOT NULL,
  "createdAt" TEXT NOT NULL,
  expires TEXT,
  "bannedBy" TEXT
);

-- The audit log (beyond Auth.js): append-only, one row per record, kept exactly as given.
-- `seq` is the key, so that of two instances appending the same next record one is
-- refused; `at` to the millisecond (the hash chain covers it); `actor` and `target` record
-- who and reference nothing: the record outlives the user.
CREATE TABLE IF NOT EXISTS audit_log
(
  seq INTEGER NOT NULL PRIMARY KEY,
  "at" TEXT NOT NULL,
  kind TEXT NOT NULL,
  actor TEXT,
  target TEXT,
  data TEXT NOT NULL,
  "prevHash" TEXT NOT NULL,
  hash TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS audit_log_kind_idx ON audit_log (kind);
CREATE INDEX IF NOT EXISTS audit_log_actor_idx ON audit_log (actor);
CREATE INDEX IF NOT EXISTS audit_log_target_idx ON audit_log (target);
CREATE INDEX IF NOT EXISTS audit_log_at_idx ON audit_log ("at");

-- The administrator who signed in as the session's user (impersonation); NULL for the
-- user's own sign-in.
ALTER TABLE sessions ADD COLUMN impersonator TEXT;
