// Browser end-to-end test of authcore's passkeys, driven by the Rust test
// crates/authcore-server/tests/browser_webauthn.rs, which serves the demo app and passes
// its base URL (http://localhost:<port>) and the token of a database session of a user
// whose email is proven (as a magic-link sign-in leaves it).
//
// Headless Debian Chromium with a CDP virtual authenticator (CTAP2, internal, resident
// keys, user verification): signed in by that session, register a passkey on the
// built-in sign-in page (a new address cannot sign up with a passkey alone where an
// email provider could later prove it), sign out, sign in with it, sign in through conditional UI (autofill), sign in
// through Auth.js's browser client (@simplewebauthn/browser 9.0.1), and fail with a
// credential the server does not know. Prints one JSON line per step:
//   {"step": "...", ...facts}   and finally {"done": true}
// Any failure prints {"error": "..."} and exits 1.
import { randomBytes } from 'node:crypto';
import { run, say } from './lib.mjs';

const [base, sessionToken] = process.argv.slice(2);
if (!base || !sessionToken) {
  console.error('usage: node webauthn.mjs http://localhost:<port> <session token>');
  process.exit(2);
}

await run(async (browser) => {
  const context = await browser.newContext();
  const page = await context.newPage();
  page.setDefaultTimeout(15000);
  const cdp = await context.newCDPSession(page);
  await cdp.send('WebAuthn.enable');
  let { authenticatorId } = await cdp.send('WebAuthn.addVirtualAuthenticator', {
    options: {
      protocol: 'ctap2', transport: 'internal', hasResidentKey: true,
      hasUserVerification: true, isUserVerified: true, automaticPresenceSimulation: true,
    },
  });
  const session = async () => (await page.request.get(`${base}/auth/session`)).json();
  const credentials = async () =>
    (await cdp.send('WebAuthn.getCredentials', { authenticatorId })).credentials;
  const signOut = async () => {
    await page.goto(`${base}/auth/signout`);
    await Promise.all([page.waitForURL(`${base}/`), page.click('button[type=submit]')]);
    if ((await session()) !== null) throw new Error('still signed in after sign-out');
  };

  // 1. Signed in by email, register a first passkey (conditional UI stays idle).
  await context.addCookies([{ name: 'authjs.session-token', value: sessionToken, url: base }]);
  if ((await session())?.user?.email !== 'browser@example.com') throw new Error('not signed in');
  await page.goto(`${base}/auth/signin`);
  await page.fill('#input-email-for-passkey-provider', 'browser@example.com');
  await Promise.all([page.waitForURL(`${base}/`), page.click('#submitButton-passkey')]);
  let creds = await credentials();
  say({ step: 'register', email: (await session())?.user?.email, credentials: creds.length,
    signCount: creds[0]?.signCount });

  // 1b. Signed in, the same button adds a second passkey (on a second device: the first
  // one refuses to register twice, as excludeCredentials asks). Device A is set aside and
  // restored with its credential afterwards.
  const [first] = creds;
  await cdp.send('WebAuthn.removeVirtualAuthenticator', { authenticatorId });
  const device = {
    protocol: 'ctap2', transport: 'internal', hasResidentKey: true,
    hasUserVerification: true, isUserVerified: true, automaticPresenceSimulation: true,
  };
  const second = (await cdp.send('WebAuthn.addVirtualAuthenticator', { options: device })).authenticatorId;
  await page.goto(`${base}/auth/signin`);
  await page.fill('#input-email-for-passkey-provider', 'browser@example.com');
  await Promise.all([page.waitForURL(`${base}/`), page.click('#submitButton-passkey')]);
  const added = (await cdp.send('WebAuthn.getCredentials', { authenticatorId: second })).credentials;
  say({ step: 'add-while-signed-in', email: (await session())?.user?.email, credentials: added.length });
  await cdp.send('WebAuthn.removeVirtualAuthenticator', { authenticatorId: second });
  authenticatorId = (await cdp.send('WebAuthn.addVirtualAuthenticator', { options: device })).authenticatorId;
  await cdp.send('WebAuthn.addCredential', { authenticatorId, credential: first });

  // 2. Sign out, then sign in with the passkey (email entered, button clicked). The
  // virtual authenticator answers conditional UI at once, so its request (the one with
  // action=authenticate) is held back here to exercise the button.
  await signOut();
  const conditionalRequest = /webauthn-options\/passkey\?action=authenticate/;
  await page.route(conditionalRequest, (route) => route.abort());
  await page.goto(`${base}/auth/signin`);
  await page.fill('#input-email-for-passkey-provider', 'browser@example.com');
  await Promise.all([page.waitForURL(`${base}/`), page.click('#submitButton-passkey')]);
  await page.unroute(conditionalRequest);
  creds = await credentials();
  say({ step: 'authenticate', email: (await session())?.user?.email, signCount: creds[0]?.signCount });

  // 3. Sign out, then conditional UI: the page offers the passkey on load, no click.
  await signOut();
  await page.goto(`${base}/auth/signin`);
  await page.waitForURL(`${base}/`);
  creds = await credentials();
  say({ step: 'conditional', email: (await session())?.user?.email, signCount: creds[0]?.signCount });

  // 3b. Sign out, then sign in the way an Auth.js front end does (next-auth/webauthn's
  // signIn): options from webauthn-options, the ceremony by @simplewebauthn/browser 9.0.1
  // (the version Auth.js's client pins), the response posted to the callback. That library
  // sends userHandle as UTF-8 text of the handle's bytes, which for the random handle the
  // built-in page registered is no base64url.
  await signOut();
  await page.goto(`${base}/`);
  await page.addScriptTag({
    path: new URL('./node_modules/@simplewebauthn/browser/dist/bundle/index.umd.min.js', import.meta.url).pathname,
  });
  const client = await page.evaluate(async () => {
    const options = await (await fetch('/auth/webauthn-options/passkey?action=authenticate')).json();
    const response = await SimpleWebAuthnBrowser.startAuthentication(options.options);
    const { csrfToken } = await (await fetch('/auth/csrf')).json();
    const answer = await fetch('/auth/callback/passkey', {
      method: 'POST',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded', 'X-Auth-Return-Redirect': '1' },
      body: new URLSearchParams({ action: 'authenticate', data: JSON.stringify(response), csrfToken, callbackUrl: '/' }),
    });
    return { status: answer.status, body: await answer.json(), userHandle: response.response.userHandle };
  });
  creds = await credentials();
  say({ step: 'simplewebauthn-browser', ...client, email: (await session())?.user?.email,
    signCount: creds[0]?.signCount });

  // 4. A credential the server never registered (same RP id): refused.
  await signOut();
  // The same key under a credential id the server never saw.
  const [known] = await credentials();
  await cdp.send('WebAuthn.clearCredentials', { authenticatorId });
  await cdp.send('WebAuthn.addCredential', {
    authenticatorId,
    credential: { ...known, credentialId: randomBytes(16).toString('base64'), signCount: 0 },
  });
  await page.goto(`${base}/auth/signin`);
  await page.waitForURL(/error=/);
  say({ step: 'unknown', url: page.url(), session: await session() });
});
