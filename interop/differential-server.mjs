// The reference side of the differential suite (crates/authcore-server/tests/differential.rs):
// the real @auth/core (pinned in interop/package.json) behind node:http, configured like the
// authcore side of the same test.
//
//   node interop/differential-server.mjs jwt|database [<OIDC issuer>]
//
// Listens on 127.0.0.1 (port chosen by the OS), prints {"port": N} on stdout, and exits when
// its stdin closes (so it never outlives the test). Variants:
// - jwt: a Credentials provider (ada / pw) and an OAuth provider with fixed endpoints: its
//   authorization endpoint is never fetched, its token endpoint is this server's
//   POST /__token, which refuses every code (`invalid_grant`), and with an issuer an OIDC
//   provider `oidc` (the test's oidc-provider, client `client-basic`), JWT sessions.
// - database: an in-memory adapter (rows as a SQL adapter returns them: absent columns are
//   null), an email provider whose mails are kept for the test (GET /__mail?email=… answers
//   the last link as {"url": …}), a Passkey provider, database sessions.
import http from "node:http";
import { randomUUID } from "node:crypto";

import { Auth, createActionURL } from "./node_modules/@auth/core/index.js";
import Credentials from "./node_modules/@auth/core/providers/credentials.js";
import Passkey from "./node_modules/@auth/core/providers/passkey.js";

const SECRET = "differential-suite-secret-long-enough-for-both";
const variant = process.argv[2];
const issuer = process.argv[3];

const oauth = {
  id: "demo-oauth",
  name: "Demo OAuth",
  type: "oauth",
  clientId: "client",
  clientSecret: "secret",
  authorization: { url: "http://127.0.0.1:9/authorize", params: { scope: "openid email" } },
  // Set to this server's /__token once it listens.
  token: "http://127.0.0.1:9/token",
  userinfo: "http://127.0.0.1:9/userinfo",
  checks: ["pkce", "state"],
};

const credentials = Credentials({
  credentials: { username: { label: "Username" }, password: { label: "Password", type: "password" } },
  authorize(c) {
    if (c.username === "ada" && c.password === "pw") {
      return { id: "1", name: "Ada Lovelace", email: "ada@example.com" };
    }
    return null;
  },
});

/** An Auth.js adapter over Maps; every method Auth.js calls. */
function memoryAdapter() {
  const users = new Map();
  const accounts = new Map();
  const sessions = new Map();
  const tokens = new Map();
  const authenticators = new Map();
  const row = (u) => (u ? { ...u } : null);
  return {
    async createUser(u) {
      const user = { name: null, image: null, emailVerified: null, ...u, id: u.id ?? randomUUID() };
      users.set(user.id, user);
      return row(user);
    },
    async getUser(id) { return row(users.get(id)); },
    async getUserByEmail(email) { return row([...users.values()].find((u) => u.email === email)); },
    async getUserByAccount({ provider, providerAccountId }) {
      const a = accounts.get(`${provider}:${providerAccountId}`);
      return a ? row(users.get(a.userId)) : null;
    },
    async updateUser(u) {
      const user = { ...users.get(u.id), ...u };
      users.set(user.id, user);
      return row(user);
    },
    async deleteUser(id) { users.delete(id); },
    async linkAccount(a) { accounts.set(`${a.provider}:${a.providerAccountId}`, { ...a }); return a; },
    async unlinkAccount({ provider, providerAccountId }) { accounts.delete(`${provider}:${providerAccountId}`); },
    async getAccount(providerAccountId, provider) { return accounts.get(`${provider}:${providerAccountId}`) ?? null; },
    async createSession(s) { sessions.set(s.sessionToken, { ...s }); return s; },
    async getSessionAndUser(token) {
      const s = sessions.get(token);
      if (!s) return null;
      return { session: { ...s }, user: row(users.get(s.userId)) };
    },
    async updateSession(s) {
      const old = sessions.get(s.sessionToken);
      if (!old) return null;
      const next = { ...old, ...s };
      sessions.set(s.sessionToken, next);
      return next;
    },
    async deleteSession(token) {
      const s = sessions.get(token);
      sessions.delete(token);
      return s ?? null;
    },
    async createVerificationToken(t) { tokens.set(`${t.identifier}:${t.token}`, { ...t }); return t; },
    async useVerificationToken({ identifier, token }) {
      const t = tokens.get(`${identifier}:${token}`);
      tokens.delete(`${identifier}:${token}`);
      return t ?? null;
    },
    async getAuthenticator(id) { return authenticators.get(id) ?? null; },
    async createAuthenticator(a) { authenticators.set(a.credentialID, { ...a }); return a; },
    async listAuthenticatorsByUserId(userId) { return [...authenticators.values()].filter((a) => a.userId === userId); },
    async updateAuthenticatorCounter(id, counter) {
      const a = authenticators.get(id);
      a.counter = counter;
      return a;
    },
  };
}

const mail = new Map();
const configs = {
  jwt: {
    providers: [
      credentials,
      oauth,
      ...(issuer
        ? [{ id: "oidc", name: "OIDC", type: "oidc", issuer, clientId: "client-basic", clientSecret: "secret-basic" }]
        : []),
    ],
  },
  database: {
    adapter: memoryAdapter(),
    experimental: { enableWebAuthn: true },
    providers: [
      {
        id: "email",
        type: "email",
        name: "Email",
        from: "auth@example.com",
        maxAge: 24 * 60 * 60,
        options: {},
        async sendVerificationRequest({ identifier, url }) { mail.set(identifier, url); },
      },
      Passkey({}),
    ],
  },
};
if (!configs[variant]) {
  console.error(`usage: node differential-server.mjs ${Object.keys(configs).join("|")}`);
  process.exit(2);
}
const config = {
  basePath: "/auth",
  trustHost: true,
  secret: SECRET,
  // The suite reads the error lines from the responses, not from here.
  logger: { error() {}, warn() {}, debug() {} },
  ...configs[variant],
};

async function toRequest(req, port) {
  const headers = new Headers();
  for (let i = 0; i < req.rawHeaders.length; i += 2) headers.append(req.rawHeaders[i], req.rawHeaders[i + 1]);
  const init = { method: req.method, headers };
  if (req.method !== "GET" && req.method !== "HEAD") {
    const chunks = [];
    for await (const chunk of req) chunks.push(chunk);
    if (chunks.length > 0) init.body = Buffer.concat(chunks);
  }
  // The origin as Auth.js's framework integrations find it (`X-Forwarded-*` first, the
  // host being trusted); @auth/core itself takes the request URL as given.
  headers.set("host", req.headers.host ?? `127.0.0.1:${port}`);
  const origin = createActionURL("", "http", headers, {}, {}).origin;
  return new Request(`${origin}${req.url}`, init);
}

const server = http.createServer(async (req, res) => {
  try {
    const url = new URL(req.url, "http://x");
    if (url.pathname === "/__token") {
      res.statusCode = 400;
      res.setHeader("content-type", "application/json");
      res.end(JSON.stringify({ error: "invalid_grant", error_description: "code refused" }));
      return;
    }
    if (url.pathname === "/__mail") {
      res.setHeader("content-type", "application/json");
      res.end(JSON.stringify({ url: mail.get(url.searchParams.get("email")) ?? null }));
      return;
    }
    const response = await Auth(await toRequest(req, server.address().port), config);
    res.statusCode = response.status;
    for (const [name, value] of response.headers) if (name !== "set-cookie") res.setHeader(name, value);
    const cookies = response.headers.getSetCookie();
    if (cookies.length > 0) res.setHeader("set-cookie", cookies);
    res.end(response.body ? Buffer.from(await response.arrayBuffer()) : undefined);
  } catch (e) {
    res.statusCode = 599;
    res.end(String(e && e.stack ? e.stack : e));
  }
});
server.listen(0, "127.0.0.1", () => {
  oauth.token = `http://127.0.0.1:${server.address().port}/__token`;
  process.stdout.write(`${JSON.stringify({ port: server.address().port })}\n`);
});
process.stdin.resume();
process.stdin.on("end", () => process.exit(0));
