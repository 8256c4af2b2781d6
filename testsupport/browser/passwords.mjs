// Password accounts' self-service in a real browser, driven by
// crates/authcore-server/tests/browser_passwords.rs (which serves authcore-server with
// password sign-up on, mailing over SMTP to a test server, and a mailbox that hands out
// what that server received): node passwords.mjs <base URL> <mailbox URL> <screenshot dir>
//
// Headless Debian Chromium: the sign-in page's links to sign up and to a forgotten password;
// the sign-up page refuses a weak password (an alert, the form again) and takes a good one
// ("Check your email"); the mailed link confirms the address; the sign-in page's password
// form signs in by clicks; the account page changes the password; sign-out; the forgotten
// password page mails a reset link whose form sets a new password, after which the new
// password signs in and the old one does not. Each page in light and dark: a screenshot,
// WCAG contrast, its inputs' labels and autocomplete tokens, its width at 320 px. One JSON
// line per check; {"done": true} at the end; a failure prints {"error": "..."} and exits 1.
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { measure, run, say } from './lib.mjs';

const [base, mailbox, shots] = process.argv.slice(2);
if (!base || !mailbox || !shots) {
  console.error('usage: node passwords.mjs http://localhost:<port> http://127.0.0.1:<port> <screenshot dir>');
  process.exit(2);
}
mkdirSync(shots, { recursive: true });

const EMAIL = 'ada@example.com';
const WEAK = 'Password1234';
const FIRST = 'correct horse battery staple';
const SECOND = 'violet umbrella under nine moons';
const THIRD = 'seven quiet otters rowing north';

/** The next mail to `to` whose subject or text holds `contains` (the Rust side waits for
 * it at the SMTP server): its subject and the links in its text. */
async function mail(contains) {
  const query = new URLSearchParams({ to: EMAIL, contains });
  const res = await fetch(`${mailbox}/next?${query}`);
  if (!res.ok) throw new Error(`mailbox: ${res.status} ${await res.text()}`);
  return res.json();
}

await run(async (browser) => {
  const context = await browser.newContext({ viewport: { width: 800, height: 900 } });
  const page = await context.newPage();
  page.setDefaultTimeout(15000);
  const cspViolations = [];
  page.on('console', (m) => { if (/Content Security Policy/i.test(m.text())) cspViolations.push(m.text()); });
  const pageErrors = [];
  page.on('pageerror', (e) => pageErrors.push(String(e)));

  const session = async () => (await page.request.get(`${base}/auth/session`)).json();
  const sessionCookie = async () => (await context.cookies(base)).some((c) => c.name === 'authjs.session-token');
  const heading = () => page.locator('h1').first().textContent();
  const alerts = () => page.locator('[role=alert]').allTextContents();
  const notices = () => page.locator('[role=status]').allTextContents();
  // Submits by a click on the button named `button` and waits for the page it leads to.
  const submit = async (button, scope = page) => {
    const [response] = await Promise.all([
      page.waitForNavigation(),
      scope.getByRole('button', { name: button, exact: true }).click(),
    ]);
    return response ? response.status() : null;
  };

  // Each page in light and dark: a screenshot, contrast, width, inputs (lib.mjs `measure`).
  const inspect = async (name) => {
    for (const m of await measure(page, (scheme) => join(shots, `password-${name}-${scheme}.png`))) {
      say({ step: 'render', page: name, ...m });
    }
  };
  // The sign-in page's password form (beside the magic link's): fills it and clicks.
  const signIn = async (password) => {
    await page.goto(`${base}/auth/signin`);
    const form = page.locator('form[action$="/auth/callback/password"]');
    await form.getByLabel('Email').fill(EMAIL);
    await form.getByLabel('Password').fill(password);
    await Promise.all([page.waitForNavigation(), form.getByRole('button').click()]);
    return {
      url: page.url(),
      alerts: await alerts(),
      cookie: await sessionCookie(),
      email: (await session())?.user?.email ?? null,
    };
  };

  // 1. The sign-in page links to sign-up and to a forgotten password.
  await page.goto(`${base}/auth/signin`);
  const links = await page.locator('main a').evaluateAll((as) => as.map((a) => ({ text: a.textContent.trim(), href: a.href })));
  say({ step: 'signin-links', links });
  await inspect('signin');

  // 2. Sign-up, by the link: the page, a weak password (refused), a good one.
  await Promise.all([page.waitForNavigation(), page.getByRole('link', { name: 'Create an account' }).click()]);
  say({ step: 'signup-page', url: page.url(), heading: await heading() });
  await inspect('signup');
  const fillSignUp = async (password) => {
    await page.getByLabel('Name (optional)').fill('Ada Lovelace');
    await page.getByLabel('Email').fill(EMAIL);
    await page.getByLabel('New password').fill(password);
  };
  await fillSignUp(WEAK);
  let status = await submit('Create account');
  say({
    step: 'signup-weak',
    status,
    url: page.url(),
    heading: await heading(),
    alerts: await alerts(),
    form: await page.getByRole('button', { name: 'Create account' }).count(),
  });
  await inspect('signup-error');
  await fillSignUp(FIRST);
  status = await submit('Create account');
  say({ step: 'signup-sent', status, heading: await heading(), session: await session() });
  await inspect('check-email');

  // 3. The confirmation link from the mail confirms the address.
  const confirmation = await mail('/auth/password/verify');
  const confirmLink = confirmation.links.find((l) => l.includes('/auth/password/verify?'));
  await page.goto(confirmLink);
  say({ step: 'confirmed', subject: confirmation.subject, link: confirmLink, heading: await heading() });
  await inspect('address-confirmed');

  // 4. The sign-in page's password form, by clicks: signed in.
  say({ step: 'signed-in', ...(await signIn(FIRST)) });

  // 5. The account page's Password section: a wrong current password, then the change.
  await page.goto(`${base}/auth/account`);
  await inspect('account');
  const change = async (current, next) => {
    await page.getByLabel('Current password').fill(current);
    await page.getByLabel('New password').fill(next);
    const s = await submit('Change password');
    return { status: s, url: page.url(), alerts: await alerts(), notices: await notices() };
  };
  say({ step: 'change-wrong-current', ...(await change(THIRD, SECOND)) });
  say({ step: 'changed', ...(await change(FIRST, SECOND)), email: (await session())?.user?.email ?? null });
  await inspect('account-changed');
  const changedNotice = await mail('Security alert');
  say({ step: 'changed-notice', subject: changedNotice.subject });

  // 6. Sign-out by the button.
  await page.goto(`${base}/auth/signout`);
  await Promise.all([page.waitForNavigation(), page.click('#submitButton')]);
  say({ step: 'signed-out', session: await session(), cookie: await sessionCookie() });

  // 7. A forgotten password, by the sign-in page's link: the mailed link's form sets a new one.
  await page.goto(`${base}/auth/signin`);
  await Promise.all([page.waitForNavigation(), page.getByRole('link', { name: 'Forgot your password?' }).click()]);
  say({ step: 'forgot-page', url: page.url(), heading: await heading() });
  await inspect('forgot');
  await page.getByLabel('Email').fill(EMAIL);
  status = await submit('Send the link');
  say({ step: 'forgot-sent', status, heading: await heading() });
  const reset = await mail('/auth/password/reset');
  const resetLink = reset.links.find((l) => l.includes('/auth/password/reset?'));
  await page.goto(resetLink);
  say({ step: 'reset-page', subject: reset.subject, link: resetLink, heading: await heading() });
  await inspect('reset');
  await page.getByLabel('New password').fill(WEAK);
  status = await submit('Set the password');
  say({
    step: 'reset-weak',
    status,
    heading: await heading(),
    alerts: await alerts(),
    form: await page.getByRole('button', { name: 'Set the password' }).count(),
  });
  await inspect('reset-error');
  // The refused password left the link usable: the form again takes a good one.
  await page.getByLabel('New password').fill(THIRD);
  status = await submit('Set the password');
  say({ step: 'reset', status, heading: await heading() });
  await inspect('password-changed');
  const resetNotice = await mail('Security alert');
  say({ step: 'reset-notice', subject: resetNotice.subject });

  // 8. The old password no longer signs in; the new one does.
  say({ step: 'old-password', ...(await signIn(SECOND)) });
  say({ step: 'new-password', ...(await signIn(THIRD)) });

  say({ step: 'csp', violations: cspViolations, pageErrors });
  await context.close();
});
