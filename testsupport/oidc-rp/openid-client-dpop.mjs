// openid-client 6 (npm) as a public client with DPoP (RFC 9449): its own ES256 key pair
// (randomDPoPKeyPair), a DPoP handle (getDPoPHandle) that signs a proof for each request
// and answers the server's use_dpop_nonce by retrying with its DPoP-Nonce. Driven by
// crates/authcore-oidc-provider/tests/dpop.rs:
//   node openid-client-dpop.mjs <issuer> <client id> <redirect URI> <cookie header> [par]
// With "par", the authorization request is pushed first (RFC 9126), with a DPoP proof that
// binds the code to the key (RFC 9449 §10.1).
// The "browser" is browse.mjs, with the signed-in user's cookie. Every token and userinfo request is logged as a step (status,
// error, whether a DPoP proof was sent). One JSON line per step; {"done": true} at the end;
// a failure prints {"error": "..."} and exits 1.
import * as client from 'openid-client';
import { calculateJwkThumbprint, exportJWK } from 'jose';
import { browse } from './browse.mjs';

const say = (o) => process.stdout.write(`${JSON.stringify(o)}\n`);
const [issuer, clientId, redirectUri, cookie, mode] = process.argv.slice(2);
if (!cookie) {
  console.error('usage: node openid-client-dpop.mjs <issuer> <client id> <redirect URI> <cookie header>');
  process.exit(2);
}

const refused = async (name, f) => {
  try {
    await f();
    say({ step: name, accepted: true });
  } catch (e) {
    say({ step: name, accepted: false, reason: e.error ?? e.code ?? String(e), status: e.status });
  }
};

try {
  const config = await client.discovery(
    new URL(issuer),
    clientId,
    { token_endpoint_auth_method: 'none' },
    client.None(),
    { execute: [client.allowInsecureRequests] },
  );
  // Each request the library makes, as the server answered it.
  config[client.customFetch] = async (url, options) => {
    const res = await fetch(url, options);
    const headers = new Headers(options.headers);
    let error;
    if (res.status >= 400) {
      error = res.headers.get('www-authenticate') ?? (await res.clone().text());
    }
    say({
      step: 'request',
      path: new URL(url).pathname,
      status: res.status,
      proof: headers.has('dpop'),
      scheme: headers.get('authorization')?.split(' ')[0],
      nonce: res.headers.has('dpop-nonce'),
      error,
    });
    return res;
  };
  say({ step: 'discovery', algs: config.serverMetadata().dpop_signing_alg_values_supported });

  const keyPair = await client.randomDPoPKeyPair('ES256');
  const jkt = await calculateJwkThumbprint(await exportJWK(keyPair.publicKey));
  const DPoP = client.getDPoPHandle(config, keyPair);

  const verifier = client.randomPKCECodeVerifier();
  const nonce = client.randomNonce();
  const state = client.randomState();
  const parameters = {
    redirect_uri: redirectUri,
    scope: 'openid email offline_access',
    code_challenge: await client.calculatePKCECodeChallenge(verifier),
    code_challenge_method: 'S256',
    nonce,
    state,
  };
  const url =
    mode === 'par'
      ? await client.buildAuthorizationUrlWithPAR(config, parameters, { DPoP })
      : client.buildAuthorizationUrl(config, parameters);
  const callback = await browse(url, { cookie }, redirectUri);
  const tokens = await client.authorizationCodeGrant(
    config,
    callback,
    { pkceCodeVerifier: verifier, expectedNonce: nonce, expectedState: state, idTokenExpected: true },
    undefined,
    { DPoP },
  );
  const sub = tokens.claims().sub;
  const userinfo = await client.fetchUserInfo(config, tokens.access_token, sub, { DPoP });
  say({ step: 'signed-in', jkt, tokenType: tokens.token_type, access: tokens.access_token, userinfo });

  const refreshed = await client.refreshTokenGrant(config, tokens.refresh_token, undefined, { DPoP });
  const again = await client.fetchUserInfo(config, refreshed.access_token, sub, { DPoP });
  say({ step: 'refreshed', tokenType: refreshed.token_type, access: refreshed.access_token, userinfo: again });

  // The bound access token without its proof, as a bearer token; the refresh token with a
  // proof of another key: both refused.
  await refused('as-bearer', () => client.fetchUserInfo(config, refreshed.access_token, sub));
  const thief = client.getDPoPHandle(config, await client.randomDPoPKeyPair('ES256'));
  await refused('thief-userinfo', () => client.fetchUserInfo(config, refreshed.access_token, sub, { DPoP: thief }));
  await refused('thief-refresh', () => client.refreshTokenGrant(config, refreshed.refresh_token, undefined, { DPoP: thief }));
  // Still the client's own: its key refreshes it.
  const third = await client.refreshTokenGrant(config, refreshed.refresh_token, undefined, { DPoP });
  say({ step: 'refreshed-again', tokenType: third.token_type });
  say({ done: true });
} catch (e) {
  const detail = e && e.error_description ? ` (${e.error_description})` : '';
  say({ error: `${e && e.stack ? e.stack : e}${detail}` + (e && e.cause ? ` cause: ${JSON.stringify(e.cause)}` : '') });
  process.exitCode = 1;
}
