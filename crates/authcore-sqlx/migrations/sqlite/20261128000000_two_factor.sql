-- Second factors (beyond Auth.js): a user's TOTP secret, sealed with the auth secret, and
-- when a first code confirmed it; the SHA-256 of each unused recovery code.
CREATE TABLE IF NOT EXISTS two_factors
(
  "userId" TEXT NOT NULL PRIMARY KEY REFERENCES users (id) ON DELETE CASCADE,
  "totpSecret" TEXT NOT NULL,
  "totpConfirmedAt" TEXT
);

CREATE TABLE IF NOT EXISTS recovery_codes
(
  "userId" TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  "codeHash" TEXT NOT NULL,

  PRIMARY KEY ("userId", "codeHash")
);
