// An ID token checked as a relying party checks it, with jose from the registry (the JOSE
// library openid-client itself uses): the signature against the provider's JWK Set, with
// only the algorithm given accepted (`Ed25519`, RFC 9864, or `EdDSA`, …), `iss` and `aud`.
// Driven by crates/authcore-server/tests/oidc_ed25519.rs:
//   node verify-id-token.mjs <JWKS URL> <issuer> <client id> <alg> <ID token>
// Prints {"claims": {...}, "alg": "..."} and {"done": true}; a token that fails prints
// {"refused": "..."}.
import { createRemoteJWKSet, jwtVerify } from 'jose';

const say = (o) => process.stdout.write(`${JSON.stringify(o)}\n`);
const [jwksUrl, issuer, audience, alg, token] = process.argv.slice(2);
if (!token) {
  console.error('usage: node verify-id-token.mjs <JWKS URL> <issuer> <client id> <alg> <ID token>');
  process.exit(2);
}
try {
  const keys = createRemoteJWKSet(new URL(jwksUrl));
  const { payload, protectedHeader } = await jwtVerify(token, keys, { issuer, audience, algorithms: [alg] });
  say({ claims: payload, alg: protectedHeader.alg });
} catch (e) {
  say({ refused: String(e && e.code ? `${e.code}: ${e.message}` : e) });
}
say({ done: true });
