#!/usr/bin/env node
// A real Auth.js app for authcore's shared-session test: Express with @auth/express (pinned
// in package.json), a credentials provider and the `jwt` callback taking session updates —
// configured as the authcore app beside it (same secret, same cookies). Settings from the
// environment:
//
//   AUTH_SECRET                    the secret (required)
//   PORT                           where to listen on 127.0.0.1 (default: any free port)
//   OIDC_ISSUER, OIDC_ID, OIDC_SECRET, OIDC_ID_TOKEN_ALG
//                                  also sign in at that OpenID provider (id `oidc`; its ID
//                                  tokens' algorithm when not RS256), with what an app
//                                  adds around Auth.js for it (below)
//   DATABASE_URL, DATABASE_SCHEMA  database sessions through @auth/pg-adapter on that
//                                  schema, and magic links (kept in memory, served at
//                                  GET /test/link?email=…)
//
// Prints {"listening": <port>} once it serves.
import { getToken } from '@auth/core/jwt';
import { ExpressAuth, getSession } from '@auth/express';
import Credentials from '@auth/express/providers/credentials';
import PostgresAdapter from '@auth/pg-adapter';
import express from 'express';
import { createRemoteJWKSet, decodeJwt, jwtVerify } from 'jose';
import * as oauth from 'oauth4webapi';
import pg from 'pg';

const env = process.env;
const secret = env.AUTH_SECRET;
if (!secret) {
  console.error('AUTH_SECRET is required');
  process.exit(2);
}

const config = {
  secret,
  trustHost: true,
  basePath: '/auth',
  providers: [
    Credentials({
      credentials: { username: { label: 'Username' } },
      // The same users as the authcore app: any name signs in as <name>@example.com.
      authorize: async ({ username }) =>
        typeof username === 'string' && /^[a-z]+$/.test(username)
          ? { id: `u-${username}`, name: username, email: `${username}@example.com` }
          : null,
    }),
  ],
  callbacks: {
    jwt: async ({ token, trigger, session, account }) => {
      if (trigger === 'update' && typeof session?.name === 'string') token.name = session.name;
      if (account?.provider === 'oidc') return { ...token, oidc: signedIn(account) };
      if (token.oidc) return oidcSession(token);
      return token;
    },
    // With database sessions there is no token (Auth.js passes the user instead).
    session: ({ session, token }) => {
      if (token?.oidc) {
        const { sid, refreshes, expiresAt, error } = token.oidc;
        session.oidc = { sid, refreshes, expiresAt, error };
      }
      return session;
    },
  },
};

// The OpenID provider, as Auth.js's OIDC provider signs in with it: PKCE, state and nonce;
// the profile from userinfo (`idToken: false`: Auth.js checks the ID token, then asks
// userinfo for the same `sub`); a refresh token (`offline_access`).
const oidcClient = {
  client_id: env.OIDC_ID,
  // The ID token's algorithm, when not RS256 (authcore as the provider signs with EdDSA).
  ...(env.OIDC_ID_TOKEN_ALG ? { id_token_signed_response_alg: env.OIDC_ID_TOKEN_ALG } : {}),
};
if (env.OIDC_ISSUER) {
  config.providers.push({
    id: 'oidc',
    name: 'OIDC',
    type: 'oidc',
    issuer: env.OIDC_ISSUER,
    clientId: env.OIDC_ID,
    clientSecret: env.OIDC_SECRET,
    checks: ['pkce', 'state', 'nonce'],
    idToken: false,
    authorization: { params: { scope: 'openid profile email offline_access' } },
    client: oidcClient,
  });
}

// What an app adds around Auth.js for an OpenID provider, with the libraries Auth.js itself
// uses (oauth4webapi, jose):
// - refresh-token rotation in the jwt callback, as https://authjs.dev/guides/refresh-token-rotation
//   shows it;
// - federated sign-out: GET /logout sends the user to the provider's end_session_endpoint
//   with the ID token as hint (OpenID Connect RP-Initiated Logout 1.0);
// - back-channel logout (Auth.js has none): POST /backchannel-logout takes the provider's
//   logout token (OpenID Connect Back-Channel Logout 1.0 §2.6) and the JWT sessions of the
//   provider session it names are refused from then on (the jwt callback returns null).
const insecure = { [oauth.allowInsecureRequests]: true };
let metadata;
async function provider() {
  if (!metadata) {
    const issuer = new URL(env.OIDC_ISSUER);
    metadata = await oauth.processDiscoveryResponse(issuer, await oauth.discoveryRequest(issuer, insecure));
  }
  return metadata;
}
// Provider sessions (`sid`) and users (`sub`, with when) that back-channel logout ended.
const endedSids = new Set();
const endedSubs = new Map();
const seenLogoutTokens = new Set();

function signedIn(account) {
  const { sid, sub } = decodeJwt(account.id_token);
  return {
    sid,
    sub,
    at: Math.floor(Date.now() / 1000),
    idToken: account.id_token,
    accessToken: account.access_token,
    refreshToken: account.refresh_token,
    expiresAt: account.expires_at,
    refreshes: 0,
  };
}

async function oidcSession(token) {
  const o = token.oidc;
  if (endedSids.has(o.sid) || (endedSubs.get(o.sub) ?? -1) >= o.at) return null;
  if (Date.now() < o.expiresAt * 1000 || !o.refreshToken) return token;
  try {
    const as = await provider();
    const clientAuth = oauth.ClientSecretBasic(env.OIDC_SECRET);
    const res = await oauth.refreshTokenGrantRequest(as, oidcClient, clientAuth, o.refreshToken, insecure);
    const t = await oauth.processRefreshTokenResponse(as, oidcClient, res);
    token.oidc = {
      ...o,
      accessToken: t.access_token,
      refreshToken: t.refresh_token ?? o.refreshToken,
      idToken: t.id_token ?? o.idToken,
      expiresAt: Math.floor(Date.now() / 1000) + (t.expires_in ?? 0),
      refreshes: o.refreshes + 1,
      error: undefined,
    };
  } catch (e) {
    console.error('refresh failed', e);
    token.oidc = { ...o, error: 'RefreshTokenError' };
  }
  return token;
}

const BACKCHANNEL_LOGOUT_EVENT = 'http://schemas.openid.net/event/backchannel-logout';
async function takeLogoutToken(logoutToken) {
  const as = await provider();
  const { payload } = await jwtVerify(logoutToken, createRemoteJWKSet(new URL(as.jwks_uri)), {
    issuer: as.issuer,
    audience: env.OIDC_ID,
    typ: 'logout+jwt',
    requiredClaims: ['iat', 'exp', 'jti', 'events'],
    maxTokenAge: '2 minutes',
  });
  if (typeof payload.events?.[BACKCHANNEL_LOGOUT_EVENT] !== 'object') throw new Error('no back-channel logout event');
  if ('nonce' in payload) throw new Error('a logout token has no nonce');
  if (!payload.sid && !payload.sub) throw new Error('neither sid nor sub');
  if (seenLogoutTokens.has(payload.jti)) throw new Error('replayed');
  seenLogoutTokens.add(payload.jti);
  if (payload.sid) endedSids.add(payload.sid);
  else endedSubs.set(payload.sub, payload.iat);
}

// Magic links "sent", by address.
const links = new Map();
let pool;
if (env.DATABASE_URL) {
  pool = new pg.Pool({
    connectionString: env.DATABASE_URL,
    options: `-c search_path=${env.DATABASE_SCHEMA ?? 'public'}`,
    max: 4,
  });
  config.adapter = PostgresAdapter(pool);
  config.session = { strategy: 'database' };
  config.providers.push({
    id: 'email',
    type: 'email',
    name: 'Email',
    from: 'auth@example.com',
    maxAge: 24 * 60 * 60,
    sendVerificationRequest: async ({ identifier, url }) => {
      links.set(identifier, url);
    },
  });
}

const app = express();
app.set('trust proxy', true);
app.use('/auth/*', ExpressAuth(config));
app.get('/', (req, res) => res.send('Auth.js app'));
// The provider's userinfo with the session's access token (as refreshed).
app.get('/userinfo', async (req, res) => {
  const token = await getToken({ req, secret, secureCookie: false });
  if (!token?.oidc) return res.status(401).json({ error: 'not signed in with oidc' });
  const as = await provider();
  const answer = await oauth.userInfoRequest(as, oidcClient, token.oidc.accessToken, insecure);
  if (!answer.ok) return res.status(answer.status).json({ error: 'userinfo refused', status: answer.status });
  res.json(await oauth.processUserInfoResponse(as, oidcClient, token.oidc.sub, answer));
});
app.get('/logout', async (req, res) => {
  const token = await getToken({ req, secret, secureCookie: false });
  if (!token?.oidc) return res.redirect('/logged-out');
  const end = new URL((await provider()).end_session_endpoint);
  end.searchParams.set('id_token_hint', token.oidc.idToken);
  end.searchParams.set('post_logout_redirect_uri', `${req.protocol}://${req.get('host')}/logged-out`);
  end.searchParams.set('state', 'bye');
  res.redirect(end.href);
});
app.get('/logged-out', (req, res) => res.send('signed out'));
app.post('/backchannel-logout', express.urlencoded({ extended: false, limit: '16kb' }), async (req, res) => {
  res.set('cache-control', 'no-store');
  try {
    await takeLogoutToken(String(req.body?.logout_token ?? ''));
    res.status(200).end();
  } catch (e) {
    res.status(400).json({ error: 'invalid_request', error_description: String(e?.code ?? e?.message ?? e) });
  }
});
app.get('/test/link', (req, res) => res.json({ url: links.get(String(req.query.email)) ?? null }));
// What the application sees: the session through @auth/express's own getSession.
app.get('/whoami', async (req, res) => res.json(await getSession(req, config)));

const server = app.listen(Number(env.PORT ?? 0), '127.0.0.1', () => {
  process.stdout.write(`${JSON.stringify({ listening: server.address().port })}\n`);
});
process.on('SIGTERM', () => server.close(() => (pool ? pool.end() : Promise.resolve()).then(() => process.exit(0))));
