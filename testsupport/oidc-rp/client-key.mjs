// A relying party's key pair for private_key_jwt (crates/authcore-server/tests/openid_provider.rs):
//   node client-key.mjs <path prefix> <alg: RS256 | ES256 | EdDSA>
// Writes the private key to <prefix>.pem (PKCS#8) and the public JWK Set, with a kid, to
// <prefix>.jwks.json, and prints the JWK Set.
import { writeFileSync } from 'node:fs';
import { generateKeyPair, exportPKCS8, exportJWK, calculateJwkThumbprint } from 'jose';

const [prefix, alg] = process.argv.slice(2);
if (!alg) {
  console.error('usage: node client-key.mjs <path prefix> <alg>');
  process.exit(2);
}
const { publicKey, privateKey } = await generateKeyPair(alg, { extractable: true });
writeFileSync(`${prefix}.pem`, await exportPKCS8(privateKey), { mode: 0o600 });
const jwk = await exportJWK(publicKey);
jwk.kid = await calculateJwkThumbprint(jwk);
jwk.alg = alg;
jwk.use = 'sig';
const set = JSON.stringify({ keys: [jwk] });
writeFileSync(`${prefix}.jwks.json`, set);
process.stdout.write(`${set}\n`);
