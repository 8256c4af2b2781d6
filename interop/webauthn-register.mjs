// Registers a credential the way Auth.js does: reads one JSON object from stdin
// {response, expectedChallenge, expectedOrigin, expectedRPID} (a RegistrationResponseJSON
// from authcore's software authenticator), verifies it with @simplewebauthn/server (the
// version @auth/core 0.41.3 is built with) and prints the Authenticator row Auth.js would
// store (lib/utils/webauthn-utils.ts: credential id and public key as standard base64,
// counter, device type, backed-up flag, comma-joined transports).
import { verifyRegistrationResponse } from '@simplewebauthn/server';

let input = '';
for await (const chunk of process.stdin) input += chunk;
const { response, expectedChallenge, expectedOrigin, expectedRPID } = JSON.parse(input);
const verification = await verifyRegistrationResponse({
  response,
  expectedChallenge,
  expectedOrigin,
  expectedRPID,
  requireUserVerification: true,
});
if (!verification.verified || !verification.registrationInfo) {
  console.error('not verified');
  process.exit(1);
}
const info = verification.registrationInfo;
const toBase64 = (bytes) => Buffer.from(bytes).toString('base64');
const credentialID = toBase64(info.credentialID);
process.stdout.write(JSON.stringify({
  providerAccountId: credentialID,
  credentialID,
  counter: info.counter,
  credentialBackedUp: info.credentialBackedUp,
  credentialPublicKey: toBase64(info.credentialPublicKey),
  transports: (response.response.transports ?? []).join(','),
  credentialDeviceType: info.credentialDeviceType,
}));
