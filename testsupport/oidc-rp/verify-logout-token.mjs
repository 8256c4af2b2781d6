// A logout token checked as a relying party checks it (OpenID Connect Back-Channel Logout
// 1.0 §2.6), with jose from the registry (the JOSE library openid-client itself uses):
// the signature against the provider's JWK Set, `typ` logout+jwt, `iss`, `aud`, `iat`,
// the back-channel logout event, `sub` or `sid`, and no `nonce`. Driven by
// crates/authcore-server/tests/openid_provider.rs:
//   node verify-logout-token.mjs <JWKS URL> <issuer> <client id> <logout token>
// Prints {"claims": {...}} and {"done": true}; a token that fails prints {"refused": "..."}.
import { createRemoteJWKSet, jwtVerify } from 'jose';

const say = (o) => process.stdout.write(`${JSON.stringify(o)}\n`);
const [jwksUrl, issuer, audience, token] = process.argv.slice(2);
if (!token) {
  console.error('usage: node verify-logout-token.mjs <JWKS URL> <issuer> <client id> <logout token>');
  process.exit(2);
}
const EVENT = 'http://schemas.openid.net/event/backchannel-logout';
try {
  const keys = createRemoteJWKSet(new URL(jwksUrl));
  const { payload } = await jwtVerify(token, keys, {
    issuer,
    audience,
    typ: 'logout+jwt',
    requiredClaims: ['iat', 'jti', 'events'],
    maxTokenAge: '2 minutes',
  });
  if (typeof payload.events !== 'object' || payload.events === null || !(EVENT in payload.events)) {
    throw new Error('no back-channel logout event');
  }
  if (!payload.sub && !payload.sid) throw new Error('neither sub nor sid');
  if ('nonce' in payload) throw new Error('a logout token has no nonce');
  say({ claims: payload });
} catch (e) {
  say({ refused: String(e && e.code ? `${e.code}: ${e.message}` : e) });
}
say({ done: true });
