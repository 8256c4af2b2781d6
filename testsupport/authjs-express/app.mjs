#!/usr/bin/env node
// A real Auth.js app for authcore's shared-session test: Express with @auth/express (pinned
// in package.json), JWT sessions, a credentials provider, and the `jwt` callback taking
// session updates — configured as the authcore app beside it (same secret, same cookies).
//
//   node app.mjs <secret>     → prints {"listening": <port>} once it serves on 127.0.0.1
import { ExpressAuth, getSession } from '@auth/express';
import Credentials from '@auth/express/providers/credentials';
import express from 'express';

const secret = process.argv[2];
if (!secret) {
  console.error('usage: node app.mjs <secret>');
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

const app = express();
app.set('trust proxy', true);
app.use('/auth/*', ExpressAuth(config));
app.get('/', (req, res) => res.send('Auth.js app'));
// What the application sees: the session through @auth/express's own getSession.
app.get('/whoami', async (req, res) => res.json(await getSession(req, config)));

const server = app.listen(0, '127.0.0.1', () => {
  process.stdout.write(`${JSON.stringify({ listening: server.address().port })}\n`);
});
process.on('SIGTERM', () => server.close(() => process.exit(0)));
