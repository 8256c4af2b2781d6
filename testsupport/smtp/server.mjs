// Real SMTP server for authcore-smtp integration tests.
//
// Starts nodemailer's smtp-server on 127.0.0.1 with an OS-assigned port and prints exactly
// one JSON ready line to stdout once it accepts connections:
//
//   {"port":<port>}
//
// After that, every accepted message is written to stdout as one JSON line:
//
//   {"envelope":{"from":"…","to":["…"]},"from":"…","to":"…","subject":"…",
//    "text":"…","html":"…","contentType":"…"}
//
// (`from`/`to` are the parsed header values as text, `text`/`html` the decoded parts;
// `secure` tells whether the message came over TLS, `user` who authenticated.)
//
// By default: plain text, no authentication. SMTP_TLS=starttls offers STARTTLS and
// SMTP_TLS=implicit speaks TLS from the first byte, both with the test certificate in tls/
// (server.pem for 127.0.0.1, signed by the test CA tls/ca.pem; its key is test-only).
// SMTP_AUTH=user:pass requires AUTH PLAIN/LOGIN with exactly these credentials.
// Recipients ending in `@reject.example` are refused with 550. Diagnostics go to stderr.
// The process exits when its stdin closes (set SMTP_IGNORE_STDIN=1 to disable that when
// running it by hand with stdin at /dev/null), on SIGTERM and on SIGINT.

import { readFileSync } from 'node:fs';
import { SMTPServer } from 'smtp-server';
import { simpleParser } from 'mailparser';

const tlsMode = process.env.SMTP_TLS ?? 'none';
if (!['none', 'starttls', 'implicit'].includes(tlsMode)) {
  console.error(`SMTP_TLS must be none, starttls or implicit (got ${tlsMode})`);
  process.exit(2);
}
const auth = process.env.SMTP_AUTH ? process.env.SMTP_AUTH.split(':') : null;
const tlsFiles =
  tlsMode === 'none'
    ? {}
    : {
        key: readFileSync(new URL('./tls/server.key', import.meta.url)),
        cert: readFileSync(new URL('./tls/server.pem', import.meta.url)),
      };
const disabledCommands = [];
if (tlsMode !== 'starttls') disabledCommands.push('STARTTLS');
if (!auth) disabledCommands.push('AUTH');

const server = new SMTPServer({
  secure: tlsMode === 'implicit',
  ...tlsFiles,
  disabledCommands,
  authOptional: !auth,
  // Credentials only over TLS, as a real relay would insist.
  allowInsecureAuth: false,
  authMethods: ['PLAIN', 'LOGIN'],
  onAuth(a, _session, callback) {
    if (auth && a.username === auth[0] && a.password === auth[1]) {
      callback(null, { user: a.username });
    } else {
      callback(new Error('Invalid username or password'));
    }
  },
  logger: false,
  banner: 'authcore-smtp test server',
  onRcptTo(address, _session, callback) {
    if (address.address.toLowerCase().endsWith('@reject.example')) {
      const err = new Error(`<${address.address}>: Recipient address rejected`);
      err.responseCode = 550;
      callback(err);
      return;
    }
    callback();
  },
  onData(stream, session, callback) {
    simpleParser(stream)
      .then((mail) => {
        const line = {
          envelope: {
            from: session.envelope.mailFrom ? session.envelope.mailFrom.address : null,
            to: session.envelope.rcptTo.map((r) => r.address),
          },
          from: mail.from ? mail.from.text : null,
          to: mail.to ? (Array.isArray(mail.to) ? mail.to.map((t) => t.text).join(', ') : mail.to.text) : null,
          subject: mail.subject ?? null,
          text: mail.text ?? null,
          html: typeof mail.html === 'string' ? mail.html : null,
          contentType: mail.headers.get('content-type')?.value ?? null,
          secure: Boolean(session.secure),
          user: session.user ?? null,
        };
        process.stdout.write(`${JSON.stringify(line)}\n`);
        callback();
      })
      .catch((err) => {
        console.error('smtp test server: cannot parse message:', err);
        callback(err);
      });
  },
});

server.on('error', (err) => {
  console.error('smtp test server error:', err);
});

server.listen(0, '127.0.0.1', () => {
  const { port } = server.server.address();
  process.stdout.write(`${JSON.stringify({ port })}\n`);
});

function shutdown() {
  server.close(() => process.exit(0));
  setTimeout(() => process.exit(0), 1000).unref();
}

process.on('SIGTERM', shutdown);
process.on('SIGINT', shutdown);
if (!process.env.SMTP_IGNORE_STDIN) {
  process.stdin.on('end', shutdown);
  process.stdin.on('close', shutdown);
  process.stdin.resume();
}
