// Real SMTP server for authcore-smtp integration tests.
//
// Starts nodemailer's smtp-server on 127.0.0.1 with an OS-assigned port, no TLS and no
// authentication, and prints exactly one JSON ready line to stdout once it accepts
// connections:
//
//   {"port":<port>}
//
// After that, every accepted message is written to stdout as one JSON line:
//
//   {"envelope":{"from":"…","to":["…"]},"from":"…","to":"…","subject":"…",
//    "text":"…","html":"…","contentType":"…"}
//
// (`from`/`to` are the parsed header values as text, `text`/`html` the decoded parts.)
// Recipients ending in `@reject.example` are refused with 550. Diagnostics go to stderr.
// The process exits when its stdin closes (set SMTP_IGNORE_STDIN=1 to disable that when
// running it by hand with stdin at /dev/null), on SIGTERM and on SIGINT.

import { SMTPServer } from 'smtp-server';
import { simpleParser } from 'mailparser';

const server = new SMTPServer({
  secure: false,
  disabledCommands: ['STARTTLS', 'AUTH'],
  authOptional: true,
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
