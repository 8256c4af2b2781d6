// Real OpenID Provider for authcore integration tests.
//
// Starts panva/oidc-provider on 127.0.0.1 with an OS-assigned port and prints
// exactly one JSON line to stdout once it accepts connections:
//
//   {"issuer":"http://127.0.0.1:<port>","port":<port>}
//
// Everything else (oidc-provider notices and warnings, request errors) goes to
// stderr. The process exits when its stdin closes (set OIDC_IGNORE_STDIN=1 to
// disable that when running it by hand with stdin at /dev/null), on SIGTERM
// and on SIGINT.
//
// See README.md for the clients, the test-control endpoints and the
// misbehaving modes.

import { randomBytes } from 'node:crypto';
import { createServer } from 'node:http';

// oidc-provider prints its notices with console.info, i.e. to stdout. stdout
// is reserved for the single ready line, so route every console method to
// stderr *before* oidc-provider is loaded.
for (const name of ['log', 'info', 'debug']) {
  // eslint-disable-next-line no-console
  console[name] = (...args) => console.error(...args);
}

const { default: Provider } = await import('oidc-provider');
const jose = await import('jose');

// ---------------------------------------------------------------------------
// Configuration from the environment
// ---------------------------------------------------------------------------

const DEFAULT_REDIRECT_URIS = [
  'http://localhost:3000/auth/callback/oidc',
  'http://localhost:3000/auth/callback/oauth',
  'http://localhost:3000/auth/callback/formpost',
];

const redirectUris = (process.env.OIDC_REDIRECT_URIS ?? '')
  .split(',')
  .map((s) => s.trim())
  .filter(Boolean);
const REDIRECT_URIS = redirectUris.length ? redirectUris : DEFAULT_REDIRECT_URIS;

const MODES = new Set([
  'normal',
  'wrong-key',
  'alg-none',
  'wrong-aud',
  'expired',
  'wrong-nonce',
  'no-nonce',
  'wrong-iss',
  'token-error',
  'token-500',
  'slow-token',
  // Refresh-token grants are refused (invalid_grant); code grants work as usual.
  'refresh-error',
]);
let mode = 'normal';
if (process.env.OIDC_MODE) {
  if (!MODES.has(process.env.OIDC_MODE)) {
    console.error(`unknown OIDC_MODE ${process.env.OIDC_MODE}`);
    process.exit(2);
  }
  mode = process.env.OIDC_MODE;
}
const SLOW_TOKEN_MS = Number(process.env.OIDC_SLOW_TOKEN_MS ?? 10_000);

// ---------------------------------------------------------------------------
// Keys: generated fresh on every start.
// ---------------------------------------------------------------------------

const RSA_KID = `rsa-${randomBytes(6).toString('hex')}`;
const EC_KID = `ec-${randomBytes(6).toString('hex')}`;

async function privateJwk(alg, kid, options) {
  const { privateKey } = await jose.generateKeyPair(alg, { extractable: true, ...options });
  const jwk = await jose.exportJWK(privateKey);
  return { ...jwk, kid, alg, use: 'sig' };
}

const rsaJwk = await privateJwk('RS256', RSA_KID, { modulusLength: 2048 });
const ecJwk = await privateJwk('ES256', EC_KID);
// A second RSA key carrying the SAME kid as the real one ("wrong-key" mode).
const wrongRsaJwk = await privateJwk('RS256', RSA_KID, { modulusLength: 2048 });

// The key pair of the `client-private-key-jwt` client: its public half is registered with
// the client, its private half is handed to the tests by GET /__test/client-key.
const clientKeyPair = await jose.generateKeyPair('RS256', { extractable: true, modulusLength: 2048 });
const clientPublicJwk = { ...(await jose.exportJWK(clientKeyPair.publicKey)), kid: 'client-key-1', alg: 'RS256', use: 'sig' };
const clientPrivatePem = await jose.exportPKCS8(clientKeyPair.privateKey);

const rsaKey = await jose.importJWK(rsaJwk, 'RS256');
const wrongRsaKey = await jose.importJWK(wrongRsaJwk, 'RS256');

// ---------------------------------------------------------------------------
// Accounts
// ---------------------------------------------------------------------------

function accountClaims(id) {
  return {
    sub: id,
    name: 'Test User',
    email: `${id}@example.com`,
    email_verified: true,
    picture: `https://example.com/${id}.png`,
    preferred_username: id,
    // Accounts named admin-… are in the `admins` group (the gateway's group rules).
    ...(id.startsWith('admin') ? { groups: ['admins'] } : {}),
  };
}

async function findAccount(_ctx, id) {
  return {
    accountId: id,
    async claims() {
      return accountClaims(id);
    },
  };
}

// ---------------------------------------------------------------------------
// Clients
// ---------------------------------------------------------------------------

// OIDC_BACKCHANNEL_LOGOUT_URI: every client's back-channel logout URI (Back-Channel Logout
// 1.0; the logout token carries `sid`). The end-session endpoint posts a logout token to it
// for each client the ended session signed in to.
const BACKCHANNEL_LOGOUT_URI = process.env.OIDC_BACKCHANNEL_LOGOUT_URI ?? '';

const common = {
  redirect_uris: REDIRECT_URIS,
  grant_types: ['authorization_code'],
  response_types: ['code'],
  id_token_signed_response_alg: 'RS256',
  ...(BACKCHANNEL_LOGOUT_URI
    ? { backchannel_logout_uri: BACKCHANNEL_LOGOUT_URI, backchannel_logout_session_required: true }
    : {}),
};

const clients = [
  {
    ...common,
    client_id: 'client-basic',
    client_secret: 'secret-basic',
    token_endpoint_auth_method: 'client_secret_basic',
  },
  {
    ...common,
    client_id: 'client-post',
    client_secret: 'secret-post',
    token_endpoint_auth_method: 'client_secret_post',
  },
  {
    ...common,
    client_id: 'client-public',
    token_endpoint_auth_method: 'none',
  },
  {
    ...common,
    client_id: 'client-secret-jwt',
    client_secret: 'secret-jwt-0123456789abcdef0123456789abcdef',
    token_endpoint_auth_method: 'client_secret_jwt',
    token_endpoint_auth_signing_alg: 'HS256',
  },
  {
    ...common,
    client_id: 'client-private-key-jwt',
    token_endpoint_auth_method: 'private_key_jwt',
    token_endpoint_auth_signing_alg: 'RS256',
    jwks: { keys: [clientPublicJwk] },
  },
  {
    // The only client given refresh tokens (rotated on every use).
    ...common,
    grant_types: ['authorization_code', 'refresh_token'],
    client_id: 'client-refresh',
    client_secret: 'secret-refresh',
    token_endpoint_auth_method: 'client_secret_basic',
  },
  {
    ...common,
    client_id: 'client-formpost',
    client_secret: 'secret-formpost',
    token_endpoint_auth_method: 'client_secret_basic',
    response_modes: ['query', 'form_post'],
  },
];

// ---------------------------------------------------------------------------
// HTTP server first (the issuer needs the port), provider second.
// ---------------------------------------------------------------------------

const server = createServer();
await new Promise((resolve, reject) => {
  server.once('error', reject);
  server.listen(0, '127.0.0.1', resolve);
});
const { port } = server.address();
const issuer = `http://127.0.0.1:${port}`;

const provider = new Provider(issuer, {
  clients,
  findAccount,
  jwks: { keys: [rsaJwk, ecJwk] },
  claims: {
    // `amr` with `openid`: the ID tokens of the mfa-… accounts say how they signed in.
    openid: ['sub', 'amr'],
    profile: ['name', 'picture', 'preferred_username', 'groups'],
    email: ['email', 'email_verified'],
  },
  scopes: ['openid', 'profile', 'email'],
  // Put the scope-derived claims (name, email, ...) into the ID token as well,
  // not only into the userinfo response: Auth.js reads the profile of an
  // `oidc` provider from the ID token.
  conformIdTokenClaims: false,
  // PKCE (S256 only) is mandatory for the public client and optional (but
  // verified when a code_challenge was sent) for the confidential ones.
  pkce: {
    required: (_ctx, client) => client.clientAuthMethod === 'none',
  },
  features: {
    devInteractions: { enabled: false },
    backchannelLogout: { enabled: true },
  },
  // Outgoing requests (back-channel logout) go to the relying party on loopback, which
  // oidc-provider's SSRF guard refuses as a special-use address: this provider serves tests
  // on loopback only, so the guard's dispatcher is left out.
  fetch: (url, options) => {
    const { dispatcher: _loopbackRefused, ...rest } = options;
    return globalThis.fetch(url, rest);
  },
  interactions: {
    url: (_ctx, interaction) => `/interaction/${interaction.uid}`,
  },
  // Explicit lifetimes (seconds); also silences oidc-provider's notices.
  // Refresh tokens for the clients allowed the grant (client-refresh), without
  // offline_access and consent prompts, rotated on every use (a reused one is refused and
  // revokes the grant, as rotation asks).
  issueRefreshToken: async (_ctx, client) => client.grantTypeAllowed('refresh_token'),
  rotateRefreshToken: true,
  ttl: {
    // OIDC_ACCESS_TOKEN_TTL (seconds) makes access tokens short for refresh tests.
    AccessToken: Number(process.env.OIDC_ACCESS_TOKEN_TTL ?? 3600),
    RefreshToken: 86400,
    AuthorizationCode: 600,
    Grant: 3600,
    IdToken: 3600,
    Interaction: 600,
    Session: 3600,
  },
  cookies: {
    keys: [randomBytes(32).toString('base64url')],
  },
  renderError(ctx, out) {
    ctx.type = 'html';
    ctx.body = `<!DOCTYPE html><html><head><title>oidc-provider error</title></head><body><pre>${
      Object.entries(out)
        .map(([k, v]) => `${k}: ${String(v).replace(/[<>&"]/g, (c) => `&#${c.charCodeAt(0)};`)}`)
        .join('\n')
    }</pre></body></html>`;
  },
});

provider.on('server_error', (_ctx, err) => console.error('oidc-provider server_error:', err));
provider.on('backchannel.error', (_ctx, err, client) => console.error(`oidc-provider backchannel logout to ${client.clientId} failed:`, err.message, err.cause?.code ?? '', err.cause?.message ?? ''));
provider.on('backchannel.success', (_ctx, client) => console.error(`oidc-provider backchannel logout to ${client.clientId} delivered`));

const TOKEN_PATH = new URL(provider.pathFor('token'), issuer).pathname;

// ---------------------------------------------------------------------------
// Test control endpoints + token endpoint interception + interactions
// ---------------------------------------------------------------------------

let lastTokenRequest = null;
/** How many refresh-token grants the token endpoint has seen (`GET /__test/refresh-count`). */
let refreshRequests = 0;

const sleep = (ms) => new Promise((resolve) => { setTimeout(resolve, ms); });

async function readRawBody(req) {
  const chunks = [];
  for await (const chunk of req) chunks.push(chunk);
  return Buffer.concat(chunks).toString('utf8');
}

function b64urlJson(value) {
  return Buffer.from(JSON.stringify(value)).toString('base64url');
}

async function signWith(header, payload, key) {
  return new jose.CompactSign(new TextEncoder().encode(JSON.stringify(payload)))
    .setProtectedHeader(header)
    .sign(key);
}

// Rewrites the ID token according to the current mode.
async function tamperIdToken(idToken, currentMode) {
  const header = jose.decodeProtectedHeader(idToken);
  const payload = jose.decodeJwt(idToken);
  const now = Math.floor(Date.now() / 1000);
  switch (currentMode) {
    case 'wrong-key':
      return signWith(header, payload, wrongRsaKey);
    case 'alg-none': {
      const noneHeader = { ...header, alg: 'none' };
      delete noneHeader.kid;
      return `${b64urlJson(noneHeader)}.${b64urlJson(payload)}.`;
    }
    case 'wrong-aud':
      return signWith(header, { ...payload, aud: 'some-other-client' }, rsaKey);
    case 'expired': {
      const iat = now - 2 * 3600;
      const exp = now - 3600;
      const out = { ...payload, iat, exp };
      if (typeof out.auth_time === 'number') out.auth_time = Math.min(out.auth_time, iat);
      return signWith(header, out, rsaKey);
    }
    case 'wrong-nonce':
      return signWith(header, { ...payload, nonce: `wrong-nonce-${randomBytes(8).toString('hex')}` }, rsaKey);
    case 'no-nonce': {
      const out = { ...payload };
      delete out.nonce;
      return signWith(header, out, rsaKey);
    }
    case 'wrong-iss':
      return signWith(header, { ...payload, iss: 'https://evil.example.com' }, rsaKey);
    default:
      return idToken;
  }
}

function sendJson(ctx, status, body) {
  ctx.status = status;
  ctx.type = 'application/json';
  ctx.set('cache-control', 'no-store');
  ctx.body = body === null ? 'null' : body;
}

// Test control routes.
provider.use(async (ctx, next) => {
  if (ctx.path === '/__test/mode') {
    if (ctx.method === 'GET') {
      sendJson(ctx, 200, { mode });
      return;
    }
    if (ctx.method === 'POST') {
      let requested;
      try {
        requested = JSON.parse(await readRawBody(ctx.req)).mode;
      } catch {
        sendJson(ctx, 400, { error: 'body must be JSON {"mode": "..."}' });
        return;
      }
      if (!MODES.has(requested)) {
        sendJson(ctx, 400, { error: `unknown mode ${JSON.stringify(requested)}`, modes: [...MODES] });
        return;
      }
      mode = requested;
      console.error(`oidc test provider: mode set to ${mode}`);
      sendJson(ctx, 200, { mode });
      return;
    }
    sendJson(ctx, 405, { error: 'method not allowed' });
    return;
  }
  if (ctx.path === '/__test/sign' && ctx.method === 'POST') {
    // A JWS of the given payload signed with the provider's own RSA key (or, with
    // "key": "wrong", another key under the same kid): forged and replayed logout tokens
    // for the relying party's attack tests.
    let body;
    try {
      body = JSON.parse(await readRawBody(ctx.req));
    } catch {
      sendJson(ctx, 400, { error: 'body must be JSON {"payload": {...}}' });
      return;
    }
    const header = { alg: 'RS256', kid: RSA_KID, typ: 'logout+jwt', ...(body.header ?? {}) };
    const jws = await signWith(header, body.payload ?? {}, body.key === 'wrong' ? wrongRsaKey : rsaKey);
    sendJson(ctx, 200, { jws });
    return;
  }
  if (ctx.path === '/__test/client-key') {
    sendJson(ctx, 200, { pem: clientPrivatePem, kid: clientPublicJwk.kid });
    return;
  }
  if (ctx.path === '/__test/last-token-request') {
    sendJson(ctx, 200, lastTokenRequest);
    return;
  }
  if (ctx.path === '/__test/refresh-count') {
    sendJson(ctx, 200, { count: refreshRequests });
    return;
  }
  await next();
});

function decodeFormComponent(value) {
  return decodeURIComponent(value.replace(/\+/g, ' '));
}

// Returns an error description when the token request authenticates a known
// client with another method than the one it is registered with.
function clientAuthMismatch(ctx, body) {
  let used;
  let clientId;
  const authorization = ctx.get('authorization');
  if (/^basic /i.test(authorization)) {
    used = 'client_secret_basic';
    try {
      const decoded = Buffer.from(authorization.slice(6).trim(), 'base64').toString('utf8');
      clientId = decodeFormComponent(decoded.slice(0, decoded.indexOf(':')));
    } catch {
      return undefined; // malformed: let oidc-provider produce its own error
    }
  } else if (body.client_secret !== undefined) {
    used = 'client_secret_post';
    clientId = body.client_id;
  } else if (body.client_assertion !== undefined) {
    return undefined;
  } else {
    used = 'none';
    clientId = body.client_id;
  }
  const client = clients.find((c) => c.client_id === clientId);
  if (!client || client.token_endpoint_auth_method === used) return undefined;
  return `client ${clientId} is registered with token_endpoint_auth_method `
    + `${client.token_endpoint_auth_method} but authenticated using ${used} (test provider strict check)`;
}

// Token endpoint: record the request, then misbehave as asked.
provider.use(async (ctx, next) => {
  if (ctx.method !== 'POST' || ctx.path !== TOKEN_PATH) {
    await next();
    return;
  }
  const raw = await readRawBody(ctx.req);
  // oidc-provider's body parser falls back to req.body when the stream has
  // already been consumed (it logs a one-time warning about that on stderr).
  ctx.req.body = raw;
  const currentMode = mode;
  if (new URLSearchParams(raw).get('grant_type') === 'refresh_token') refreshRequests += 1;
  lastTokenRequest = {
    method: ctx.method,
    path: ctx.path,
    headers: { ...ctx.headers },
    raw_body: raw,
    body: Object.fromEntries(new URLSearchParams(raw)),
    mode: currentMode,
  };

  // oidc-provider treats client_secret_basic and client_secret_post as
  // interchangeable; real providers often don't. Be strict so that a client
  // using the wrong method fails loudly.
  const mismatch = clientAuthMismatch(ctx, lastTokenRequest.body);
  if (mismatch) {
    lastTokenRequest.response_status = 401;
    ctx.set('www-authenticate', 'Basic realm="token"');
    sendJson(ctx, 401, { error: 'invalid_client', error_description: mismatch });
    return;
  }

  switch (currentMode) {
    case 'token-error':
      // GitHub style: an error object with a 200 status.
      sendJson(ctx, 200, {
        error: 'invalid_grant',
        error_description: 'The code passed is incorrect or expired. (test mode token-error)',
      });
      return;
    case 'token-500':
      ctx.status = 500;
      ctx.type = 'html';
      ctx.body = '<!DOCTYPE html><html><head><title>500 Internal Server Error</title></head>'
        + '<body><h1>Internal Server Error</h1><p>test mode token-500</p></body></html>';
      return;
    case 'slow-token':
      await sleep(SLOW_TOKEN_MS);
      break;
    case 'refresh-error':
      if (lastTokenRequest.body.grant_type === 'refresh_token') {
        sendJson(ctx, 400, {
          error: 'invalid_grant',
          error_description: 'refresh refused (test mode refresh-error)',
        });
        return;
      }
      break;
    default:
      break;
  }

  await next();

  if (ctx.status === 200 && ctx.body && typeof ctx.body === 'object' && typeof ctx.body.id_token === 'string') {
    const idToken = await tamperIdToken(ctx.body.id_token, currentMode);
    if (idToken !== ctx.body.id_token) {
      ctx.body = { ...ctx.body, id_token: idToken };
    }
  }
  lastTokenRequest.response_status = ctx.status;
});

// Interactions: complete every prompt without any user interface.
provider.use(async (ctx, next) => {
  const match = /^\/interaction\/([^/]+)$/.exec(ctx.path);
  if (!match || ctx.method !== 'GET') {
    await next();
    return;
  }
  const details = await provider.interactionDetails(ctx.req, ctx.res);
  const { prompt, params, session } = details;

  let result;
  switch (prompt.name) {
    case 'login': {
      const accountId = typeof params.login_hint === 'string' && params.login_hint
        ? params.login_hint
        : 'user-1';
      // Accounts named mfa-… signed in with several factors here: their ID tokens say so
      // (`amr`, for relying parties that trust this provider's MFA).
      result = accountId.startsWith('mfa-')
        ? { login: { accountId, amr: ['pwd', 'otp', 'mfa'] } }
        : { login: { accountId } };
      break;
    }
    case 'consent': {
      const grant = details.grantId
        ? await provider.Grant.find(details.grantId)
        : new provider.Grant({ accountId: session.accountId, clientId: params.client_id });
      const d = prompt.details ?? {};
      if (d.missingOIDCScope) grant.addOIDCScope(d.missingOIDCScope.join(' '));
      if (d.missingOIDCClaims) grant.addOIDCClaims(d.missingOIDCClaims);
      if (d.missingResourceScopes) {
        for (const [indicator, scopes] of Object.entries(d.missingResourceScopes)) {
          grant.addResourceScope(indicator, scopes.join(' '));
        }
      }
      const grantId = await grant.save();
      result = { consent: { grantId } };
      break;
    }
    default:
      result = {
        error: 'access_denied',
        error_description: `test provider cannot satisfy prompt ${prompt.name}`,
      };
  }

  const returnTo = await provider.interactionResult(ctx.req, ctx.res, result, {
    mergeWithLastSubmission: true,
  });
  ctx.redirect(returnTo);
  ctx.status = 303;
});

server.on('request', provider.callback());

// ---------------------------------------------------------------------------
// Lifetime
// ---------------------------------------------------------------------------

let stopping = false;
function shutdown(code = 0) {
  if (stopping) return;
  stopping = true;
  server.closeAllConnections?.();
  server.close();
  process.exit(code);
}

process.on('SIGTERM', () => shutdown(0));
process.on('SIGINT', () => shutdown(0));
if (process.env.OIDC_IGNORE_STDIN !== '1') {
  process.stdin.on('end', () => shutdown(0));
  process.stdin.on('close', () => shutdown(0));
  process.stdin.on('error', () => shutdown(0));
  process.stdin.resume();
}

process.stdout.write(`${JSON.stringify({ issuer, port })}\n`);
