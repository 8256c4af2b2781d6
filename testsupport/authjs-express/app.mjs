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
//                                  tokens' algorithm when not RS256)
//   DATABASE_URL, DATABASE_SCHEMA  database sessions through @auth/pg-adapter on that
//                                  schema, and magic links (kept in memory, served at
//                                  GET /test/link?email=…)
//
// Prints {"listening": <port>} once it serves.
import { ExpressAuth, getSession } from '@auth/express';
import Credentials from '@auth/express/providers/credentials';
import PostgresAdapter from '@auth/pg-adapter';
import express from 'express';
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
    jwt: async ({ token, trigger, session }) => {
      if (trigger === 'update' && typeof session?.name === 'string') token.name = session.name;
      return token;
    },
  },
};

if (env.OIDC_ISSUER) {
  config.providers.push({
    id: 'oidc',
    name: 'OIDC',
    type: 'oidc',
    issuer: env.OIDC_ISSUER,
    clientId: env.OIDC_ID,
    clientSecret: env.OIDC_SECRET,
    // The ID token's algorithm, when not RS256 (authcore as the provider signs with EdDSA).
    ...(env.OIDC_ID_TOKEN_ALG ? { client: { id_token_signed_response_alg: env.OIDC_ID_TOKEN_ALG } } : {}),
  });
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
app.get('/test/link', (req, res) => res.json({ url: links.get(String(req.query.email)) ?? null }));
// What the application sees: the session through @auth/express's own getSession.
app.get('/whoami', async (req, res) => res.json(await getSession(req, config)));

const server = app.listen(Number(env.PORT ?? 0), '127.0.0.1', () => {
  process.stdout.write(`${JSON.stringify({ listening: server.address().port })}\n`);
});
process.on('SIGTERM', () => server.close(() => (pool ? pool.end() : Promise.resolve()).then(() => process.exit(0))));
