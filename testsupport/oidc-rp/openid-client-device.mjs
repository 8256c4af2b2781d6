// openid-client 6 (npm) as a device without a browser (RFC 8628), signing in through
// authcore as an OpenID Provider. Driven by crates/authcore-server/tests/device_flow.rs:
//   node openid-client-device.mjs <issuer> <client id> <client secret, or "-" for a public client> <scope>
// It asks for a device code and prints it ({"step": "device", ...}); the test, as the user,
// enters the code in a signed-in browser and allows (or denies) it; the library polls the
// token endpoint at the interval until it answers, checks the ID token and calls userinfo,
// then refreshes. One JSON line per step; {"done": true} at the end; a failure prints
// {"error": "..."} and exits 1.
import * as client from 'openid-client';

const say = (o) => process.stdout.write(`${JSON.stringify(o)}\n`);
const [issuer, clientId, secret, scope] = process.argv.slice(2);
if (!scope) {
  console.error('usage: node openid-client-device.mjs <issuer> <client id> <client secret or -> <scope>');
  process.exit(2);
}
const reason = (e) => e.error ?? e.code ?? String(e);

try {
  const auth = secret === '-' ? client.None() : client.ClientSecretBasic(secret);
  const config = await client.discovery(
    new URL(issuer),
    clientId,
    { id_token_signed_response_alg: 'EdDSA' },
    auth,
    { execute: [client.allowInsecureRequests] },
  );
  const metadata = config.serverMetadata();
  say({
    step: 'discovery',
    issuer: metadata.issuer,
    deviceEndpoint: metadata.device_authorization_endpoint,
    grantTypes: metadata.grant_types_supported,
  });

  const device = await client.initiateDeviceAuthorization(config, { scope });
  say({
    step: 'device',
    userCode: device.user_code,
    verificationUri: device.verification_uri,
    verificationUriComplete: device.verification_uri_complete,
    expiresIn: device.expires_in,
    interval: device.interval,
    deviceCodeLength: device.device_code.length,
  });

  let tokens;
  try {
    tokens = await client.pollDeviceAuthorizationGrant(config, device);
  } catch (e) {
    say({ step: 'refused', reason: reason(e) });
    say({ done: true });
    process.exit(0);
  }
  const claims = tokens.claims();
  const userinfo = await client.fetchUserInfo(config, tokens.access_token, claims.sub);
  say({
    step: 'signed-in',
    claims,
    userinfo,
    scope: tokens.scope,
    tokenType: tokens.token_type,
    refresh: Boolean(tokens.refresh_token),
  });
  if (tokens.refresh_token) {
    const refreshed = await client.refreshTokenGrant(config, tokens.refresh_token);
    const again = await client.fetchUserInfo(config, refreshed.access_token, claims.sub);
    say({ step: 'refreshed', sub: refreshed.claims()?.sub, userinfo: again });
  }
  say({ done: true });
} catch (e) {
  const detail = e && e.error_description ? ` (${e.error_description})` : '';
  say({ error: `${e && e.stack ? e.stack : e}${detail}` + (e && e.cause ? ` cause: ${JSON.stringify(e.cause)}` : '') });
  process.exitCode = 1;
}
