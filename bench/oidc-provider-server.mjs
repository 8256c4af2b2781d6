#!/usr/bin/env node
// panva's oidc-provider (pinned in testsupport/oidc/package.json) configured like authcore's
// OpenID Provider in bench/load.sh, so both can be compared request for request: one
// confidential client "bench" (client_secret_basic, the same secret), client_credentials
// allowed, and a demo user whose access token (scope "openid email", made at start-up through
// oidc-provider's own Grant and AccessToken models, as a code flow would leave them) reads
// userinfo. Its in-memory adapter, its default opaque access tokens, an Ed25519 signing key;
// EdDSA-signed JWT access tokens, as authcore issues, for a client_credentials request that
// names the resource urn:bench:api.
//
//   npm ci --prefix testsupport/oidc
//   NODE_ENV=production node bench/oidc-provider-server.mjs   # listens on 127.0.0.1:${PORT:-3003}
//
// Env: PORT (3003), OP_CLIENT_SECRET (the client's secret; bench/load.sh passes its own).
// Prints one line to stdout when it listens: {"bench_access_token":"<the user's token>"}.

import http from "node:http";
import { generateKeyPairSync } from "node:crypto";

// oidc-provider prints its notices with console.info; stdout carries only the ready line.
for (const name of ["log", "info", "debug"]) {
  console[name] = (...args) => console.error(...args);
}

// Imported by file path so the script runs from any working directory (ESM ignores
// NODE_PATH); oidc-provider's own imports then resolve inside testsupport/oidc/node_modules.
const { default: Provider, errors } = await import(
  "../testsupport/oidc/node_modules/oidc-provider/lib/index.js"
);

// The resource server whose access tokens are JWTs (see resourceIndicators below).
const RESOURCE = "urn:bench:api";

const port = Number(process.env.PORT ?? 3003);
const host = "127.0.0.1";
const secret = process.env.OP_CLIENT_SECRET ?? "bench-client-secret-0123456789abcdef0123";
const issuer = `http://${host}:${port}/oidc`;

const { privateKey } = generateKeyPairSync("ed25519");
const jwk = { ...privateKey.export({ format: "jwk" }), alg: "EdDSA", use: "sig", kid: "bench" };

const provider = new Provider(issuer, {
  clients: [
    {
      client_id: "bench",
      client_secret: secret,
      token_endpoint_auth_method: "client_secret_basic",
      redirect_uris: ["http://127.0.0.1:9/callback"],
      grant_types: ["authorization_code", "client_credentials"],
      response_types: ["code"],
      id_token_signed_response_alg: "EdDSA",
    },
  ],
  jwks: { keys: [jwk] },
  cookies: { keys: ["bench-cookie-key-0123456789abcdef"] },
  features: {
    clientCredentials: { enabled: true },
    devInteractions: { enabled: false },
    // A token endpoint request naming the resource RESOURCE gets what authcore issues: an
    // access token that is a JWT signed with the Ed25519 key (EdDSA). Without it, the
    // default opaque token.
    resourceIndicators: {
      enabled: true,
      defaultResource: () => undefined,
      useGrantedResource: () => false,
      getResourceServerInfo(_ctx, resource) {
        if (resource !== RESOURCE) throw new errors.InvalidTarget();
        return {
          audience: RESOURCE,
          scope: "api",
          accessTokenTTL: 600,
          accessTokenFormat: "jwt",
          jwt: { sign: { alg: "EdDSA" } },
        };
      },
    },
  },
  // authcore's endpoint paths under the issuer.
  routes: { userinfo: "/userinfo", token: "/token" },
  // authcore's default lifetimes (a grant lives as long as a refresh token).
  ttl: { AccessToken: 600, ClientCredentials: 600, Grant: 30 * 86400 },
  claims: { openid: ["sub"], email: ["email", "email_verified"] },
  async findAccount(_ctx, id) {
    if (id !== "demo") return undefined;
    return {
      accountId: id,
      async claims() {
        return { sub: id, email: "demo@example.com", email_verified: true };
      },
    };
  },
});

// The demo user's grant to the client and an access token of it: what the authorization
// code flow leaves in the adapter, made directly.
const client = await provider.Client.find("bench");
const grant = new provider.Grant({ accountId: "demo", clientId: "bench" });
grant.addOIDCScope("openid email");
const grantId = await grant.save();
const accessToken = new provider.AccessToken({
  accountId: "demo",
  client,
  grantId,
  scope: "openid email",
});
const token = await accessToken.save();

// The issuer's path: oidc-provider mounted under /oidc, as authcore serves it.
const callback = provider.callback();
const server = http.createServer((req, res) => {
  if (req.url.startsWith("/oidc/") || req.url === "/oidc") {
    req.originalUrl = req.url;
    req.url = req.url.slice("/oidc".length) || "/";
    return callback(req, res);
  }
  res.writeHead(404).end();
});
server.listen(port, host, () => {
  process.stdout.write(`${JSON.stringify({ bench_access_token: token })}\n`);
});
for (const signal of ["SIGTERM", "SIGINT"]) process.on(signal, () => process.exit(0));
