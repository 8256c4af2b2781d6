// Two-factor authentication in a real browser, driven by
// crates/authcore-server/tests/browser_two_factor.rs (which serves the demo app on SQLite):
// node two-factor.mjs <base URL> <demo password>
//
// Headless Debian Chromium: sign in with the password, set up an authenticator app on the
// account page from the key it shows (codes computed by the `otpauth` package, as an app
// would), read the recovery codes shown once, sign out; sign in again: the password leads
// to the two-factor page (usable at 320 px), a code from the app signs in; once more with a
// recovery code; a reused recovery code is refused; then a passkey (a virtual authenticator)
// instead of a code. One JSON line per step; {"done": true}
// at the end; a failure prints {"error": "..."} and exits 1.
import * as OTPAuth from 'otpauth';
import { run, say, wcagContrast } from './lib.mjs';

const [base, password] = process.argv.slice(2);
if (!base || !password) {
  console.error('usage: node two-factor.mjs http://localhost:<port> <demo password>');
  process.exit(2);
}

await run(async (browser) => {
  const context = await browser.newContext({ viewport: { width: 320, height: 800 } });
  const page = await context.newPage();
  page.setDefaultTimeout(15000);
  const cspViolations = [];
  page.on('console', (m) => { if (/Content Security Policy/i.test(m.text())) cspViolations.push(m.text()); });

  const signInWithPassword = async () => {
    await page.goto(`${base}/auth/signin`);
    await page.fill('input[name="username"]', 'demo');
    await page.fill('input[name="password"]', password);
    await Promise.all([page.waitForNavigation(), page.click('#submitButton-credentials')]);
  };
  const signOut = async () => {
    await page.goto(`${base}/auth/signout`);
    await Promise.all([page.waitForNavigation(), page.click('#submitButton')]);
  };
  const session = async () => (await page.request.get(`${base}/auth/session`)).json();
  const fitsWidth = () => page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth);
  // WCAG contrast of the page as shown, in the light and the dark scheme.
  const contrast = async (name) => {
    for (const scheme of ['light', 'dark']) {
      await page.emulateMedia({ colorScheme: scheme });
      say({ step: 'contrast', page: name, scheme, ...(await wcagContrast(page)) });
    }
    await page.emulateMedia({ colorScheme: null });
  };

  // 1. Password only (nothing enrolled yet): signed in.
  await signInWithPassword();
  say({ step: 'first-sign-in', url: page.url(), email: (await session())?.user?.email ?? null });

  // 2. The account page: set up an authenticator app from its key, confirm with a code.
  await page.goto(`${base}/auth/account`);
  await contrast('account');
  await Promise.all([page.waitForNavigation(), page.click('text=Set up an authenticator app')]);
  await contrast('account-enrolment');
  const qr = await page.locator('figure.qr svg').count();
  const secret = await page.inputValue('#totp-secret');
  const totp = new OTPAuth.TOTP({ secret: OTPAuth.Secret.fromBase32(secret), digits: 6, period: 30 });
  // The previous step's code: the current one stays free for the sign-in below.
  await page.fill('#confirm-code', totp.generate({ timestamp: Date.now() - 30000 }));
  await Promise.all([page.waitForNavigation(), page.click('text=Turn on')]);
  const codes = await page.locator('ul.codes code').allTextContents();
  await contrast('account-recovery-codes');
  say({ step: 'enrolled', qr, secretLength: secret.length, codes: codes.length, fits: await fitsWidth() });
  await signOut();

  // 3. The password now leads to the two-factor page; no session until the code.
  await signInWithPassword();
  const atStep = page.url();
  const beforeCode = await session();
  const stepFits = await fitsWidth();
  await contrast('two-factor');
  await page.fill('#code', totp.generate());
  await Promise.all([page.waitForNavigation(), page.click('#submitButton')]);
  say({ step: 'code', atStep, beforeCode, fits: stepFits, url: page.url(), email: (await session())?.user?.email ?? null });
  await signOut();

  // 4. A recovery code instead, then the same one again.
  await signInWithPassword();
  await page.fill('#code', codes[0]);
  await Promise.all([page.waitForNavigation(), page.click('#submitButton')]);
  say({ step: 'recovery-code', url: page.url(), email: (await session())?.user?.email ?? null });
  await signOut();
  await signInWithPassword();
  await page.fill('#code', codes[0]);
  await Promise.all([page.waitForNavigation(), page.click('#submitButton')]);
  say({ step: 'recovery-code-reused', url: page.url(), session: await session(), alerts: await page.locator('[role=alert]').count() });

  // 5. A passkey as the second factor (a CDP virtual authenticator with user
  // verification): signed in with a code, add a passkey from the sign-in page's passkey
  // form; signed out, the password leads to the two-factor page, whose "Use a passkey"
  // finishes the sign-in without a code.
  const cdp = await context.newCDPSession(page);
  await cdp.send('WebAuthn.enable');
  await cdp.send('WebAuthn.addVirtualAuthenticator', {
    options: {
      protocol: 'ctap2', transport: 'internal', hasResidentKey: true,
      hasUserVerification: true, isUserVerified: true, automaticPresenceSimulation: true,
    },
  });
  await page.goto(`${base}/auth/two-factor`);
  await page.fill('#code', totp.generate({ timestamp: Date.now() + 30000 }));
  await Promise.all([page.waitForNavigation(), page.click('#submitButton')]);
  await page.goto(`${base}/auth/signin`);
  await page.fill('#input-email-for-passkey-provider', (await session())?.user?.email ?? '');
  await Promise.all([page.waitForURL(`${base}/`), page.click('#submitButton-passkey')]);
  await signOut();
  // The sign-in page's passkey autofill (conditional UI) would sign in with the passkey at
  // once (the virtual authenticator answers it): held back while the password is typed.
  const autofill = /webauthn-options\/passkey\?action=authenticate/;
  await page.route(autofill, (route) => route.abort());
  await signInWithPassword();
  await page.unroute(autofill);
  const passkeyStep = page.url();
  const offered = await page.locator('#passkeyButton').count();
  await contrast('two-factor-with-passkey');
  await Promise.all([page.waitForURL((u) => !u.pathname.startsWith('/auth/two-factor')), page.click('#passkeyButton')]);
  say({ step: 'passkey', atStep: passkeyStep, offered, url: page.url(), email: (await session())?.user?.email ?? null });
  say({ step: 'csp', violations: cspViolations });
});
