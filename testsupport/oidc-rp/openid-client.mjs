// A relying party from the registry, openid-client 6 (strict: RFC 9207 `iss`, PKCE,
// nonce, ID token signature and claims), signing in through authcore as an OpenID Provider.
// Driven by crates/authcore-server/tests/oidc_provider.rs:
//   node openid-client.mjs <issuer> <client id> <client secret> <redirect URI> <cookie header> <post-logout redirect URI> [<key prefix> <ID token alg>]
// With a key prefix (the files client-key.mjs writes; "-" as the secret), the client
// authenticates with private_key_jwt (RFC 7523) and asks for ID tokens signed with the
// given algorithm.
// With --par (anywhere among the arguments) every authorization request is pushed first
// (RFC 9126, buildAuthorizationUrlWithPAR) and the browser goes with client_id and
// request_uri alone.
// The "browser" is fetch with the signed-in user's cookie, following authcore's redirects
// until the redirect URI. One JSON line per step; {"done": true} at the end; a failure
// prints {"error": "..."} and exits 1.
import { readFileSync } from 'node:fs';
import * as client from 'openid-client';
import { importPKCS8, decodeProtectedHeader } from 'jose';
import { browse as browseTo } from './browse.mjs';

const say = (o) => process.stdout.write(`${JSON.stringify(o)}\n`);
const argv = process.argv.slice(2);
const par = argv.includes('--par');
const [issuer, clientId, secret, redirectUri, cookie, loggedOut, keyPrefix, idTokenAlg] = argv.filter((a) => a !== '--par');
if (!loggedOut) {
  console.error('usage: node openid-client.mjs <issuer> <client id> <client secret> <redirect URI> <cookie header> <post-logout redirect URI>');
  process.exit(2);
}

// The authorization request as a browser makes it: the answer at the redirect URI.
const browse = (url, headers) => browseTo(url, headers, redirectUri);

// The authorization URL of `params`: pushed first in PAR mode.
async function authorizationUrl(config, params) {
  if (!par) return client.buildAuthorizationUrl(config, params);
  const url = await client.buildAuthorizationUrlWithPAR(config, params);
  say({ step: 'pushed', query: [...url.searchParams.keys()].sort() });
  return url;
}

try {
  let metadata = { id_token_signed_response_alg: 'EdDSA' };
  let auth = client.ClientSecretBasic(secret);
  if (keyPrefix) {
    const [jwk] = JSON.parse(readFileSync(`${keyPrefix}.jwks.json`, 'utf8')).keys;
    const key = await importPKCS8(readFileSync(`${keyPrefix}.pem`, 'utf8'), jwk.alg);
    metadata = { id_token_signed_response_alg: idTokenAlg, token_endpoint_auth_method: 'private_key_jwt' };
    auth = client.PrivateKeyJwt({ key, kid: jwk.kid });
  }
  const config = await client.discovery(
    new URL(issuer),
    clientId,
    metadata,
    auth,
    { execute: [client.allowInsecureRequests] },
  );
  say({ step: 'discovery', issuer: config.serverMetadata().issuer });

  const verifier = client.randomPKCECodeVerifier();
  const challenge = await client.calculatePKCECodeChallenge(verifier);
  const nonce = client.randomNonce();
  const state = client.randomState();
  const url = await authorizationUrl(config, {
    redirect_uri: redirectUri,
    scope: 'openid profile email offline_access',
    code_challenge: challenge,
    code_challenge_method: 'S256',
    nonce,
    state,
  });
  const callback = await browse(url, { cookie });
  const checks = { pkceCodeVerifier: verifier, expectedNonce: nonce, expectedState: state, idTokenExpected: true };
  const tokens = await client.authorizationCodeGrant(config, callback, checks);
  const claims = tokens.claims();
  const userinfo = await client.fetchUserInfo(config, tokens.access_token, claims.sub);
  const idTokenHeader = decodeProtectedHeader(tokens.id_token);
  say({ step: 'signed-in', claims, userinfo, scope: tokens.scope, tokenType: tokens.token_type, refresh: Boolean(tokens.refresh_token), idTokenAlg: idTokenHeader.alg });

  // Refresh (the library checks the new ID token against the first: iss, sub, aud), then
  // the spent refresh token again: refused, and its grant revoked, so the token that
  // replaced it is refused too.
  const refreshed = await client.refreshTokenGrant(config, tokens.refresh_token);
  const again = await client.fetchUserInfo(config, refreshed.access_token, claims.sub);
  say({
    step: 'refreshed',
    claims: refreshed.claims(),
    userinfo: again,
    rotated: Boolean(refreshed.refresh_token) && refreshed.refresh_token !== tokens.refresh_token,
  });
  for (const [name, token] of [['reuse', tokens.refresh_token], ['after-reuse', refreshed.refresh_token]]) {
    try {
      await client.refreshTokenGrant(config, token);
      say({ step: name, accepted: true });
    } catch (e) {
      say({ step: name, accepted: false, reason: e.error ?? e.code ?? String(e) });
    }
  }
  try {
    await client.fetchUserInfo(config, refreshed.access_token, claims.sub);
    say({ step: 'revoked-access', accepted: true });
  } catch (e) {
    say({ step: 'revoked-access', accepted: false, reason: e.error ?? e.code ?? String(e) });
  }

  // The same code again: refused.
  try {
    await client.authorizationCodeGrant(config, callback, checks);
    say({ step: 'replay', accepted: true });
  } catch (e) {
    say({ step: 'replay', accepted: false, reason: e.error ?? e.code ?? String(e) });
  }

  // prompt=none without a session: login_required, reported by the client library.
  const silent = await authorizationUrl(config, {
    redirect_uri: redirectUri,
    scope: 'openid',
    code_challenge: challenge,
    code_challenge_method: 'S256',
    nonce,
    state,
    prompt: 'none',
  });
  const answer = await browse(silent, {});
  try {
    await client.authorizationCodeGrant(config, answer, checks);
    say({ step: 'prompt-none', accepted: true });
  } catch (e) {
    say({ step: 'prompt-none', accepted: false, reason: e.error ?? e.code ?? String(e) });
  }
  // RP-initiated logout: the end-session URL the library builds leads to authcore's
  // sign-out page (which the user confirms there).
  const end = client.buildEndSessionUrl(config, {
    id_token_hint: tokens.id_token,
    post_logout_redirect_uri: loggedOut,
    state: 'bye',
  });
  const res = await fetch(end, { headers: { cookie }, redirect: 'manual' });
  say({ step: 'end-session', status: res.status, location: res.headers.get('location') });
  say({ done: true });
} catch (e) {
  const detail = e && e.error_description ? ` (${e.error_description})` : '';
  say({ error: `${e && e.stack ? e.stack : e}${detail}` + (e && e.cause ? ` cause: ${JSON.stringify(e.cause)}` : '') });
  process.exitCode = 1;
}
