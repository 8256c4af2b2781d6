// The administrators' page in a real browser, driven by
// crates/authcore-server/tests/browser_admin.rs (which serves a small authcore host with
// credentials sign-in, database sessions, the audit log stored and root@example.com as its
// administrator, beside ada@example.com):
// node admin.mjs <auth URL> <screenshot dir>
//
// Headless Debian Chromium. Root signs in with the sign-in page's form, opens the
// administrators' page, finds Ada by the search, bans her with a reason, lifts the ban,
// signs in as her (the account page's banner says so), is refused the administrators'
// page meanwhile, ends the impersonation by the banner's button, signs in again and is
// back on Ada's page; then the audit log. The pages in light and dark: a screenshot, WCAG
// contrast, width at 320 px, labelled inputs. One JSON line per check; {"done": true} at
// the end; a failure prints {"error": "..."} and exits 1.
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { click, measure, open, person, run, say } from './lib.mjs';

const [base, shots] = process.argv.slice(2);
if (!base || !shots) {
  console.error('usage: node admin.mjs http://localhost:<port> <screenshot dir>');
  process.exit(2);
}
mkdirSync(shots, { recursive: true });

const ROOT = ['root@example.com', 'root password, long enough'];

/** What a page says: its URL, heading, alerts and notices. */
async function shown(page) {
  return {
    url: page.url(),
    heading: await page.locator('h1').first().textContent(),
    alerts: (await page.locator('[role=alert]').allTextContents()).map((t) => t.trim()),
    notices: (await page.locator('[role=status]').allTextContents()).map((t) => t.trim()),
  };
}

/** The sign-in page's credentials form, filled and sent. */
async function signIn(page, [email, password]) {
  const form = page.locator('form[action$="/auth/callback/credentials"]');
  await form.getByLabel('Email').fill(email);
  await form.getByLabel('Password').fill(password);
  const status = await click(page, form.getByRole('button'));
  return { status, url: page.url() };
}

/** The user page's ban section: its lines and whether the "Banned" badge shows. */
async function ban(page) {
  const section = page.locator('section[aria-labelledby=ban-h]');
  return {
    badge: await page.locator('.badge').count(),
    lines: (await section.locator('li').allInnerTexts()).map((t) => t.replace(/\s+/g, ' ').trim()),
  };
}

/** The session as the session endpoint reads it (from the page, with its cookies). */
async function session(page) {
  return page.evaluate(async (url) => (await fetch(url)).json(), `${base}/auth/session`);
}

await run(async (browser) => {
  const { context, page, seen } = await person(browser);
  const inspect = async (name) => {
    for (const m of await measure(page, (scheme) => join(shots, `admin-${name}-${scheme}.png`))) {
      say({ step: 'render', page: name, ...m });
    }
  };

  // 1. Root signs in and opens the administrators' page.
  await open(page, `${base}/auth/signin`);
  say({ step: 'root-signed-in', ...(await signIn(page, ROOT)) });
  say({ step: 'admin', status: await open(page, `${base}/auth/admin`), ...(await shown(page)) });
  await inspect('search');

  // 2. He finds Ada and opens her page.
  await page.getByLabel('Email or name').fill('ada');
  await click(page, page.getByRole('button', { name: 'Search' }));
  const found = (await page.locator('section[aria-labelledby=search-h] li a').allTextContents()).map((t) => t.trim());
  say({ step: 'found', url: page.url(), found });
  await click(page, page.getByRole('link', { name: 'ada@example.com' }));
  say({ step: 'user', ...(await shown(page)), ...(await ban(page)) });
  await inspect('user');

  // 3. He bans her with a reason, then lifts the ban.
  await page.getByLabel('Reason (seen by administrators only)').fill('Spam in the forum');
  const banned = await click(page, page.getByRole('button', { name: 'Ban user' }));
  say({ step: 'banned', status: banned, ...(await shown(page)), ...(await ban(page)) });
  await inspect('banned');
  const lifted = await click(page, page.getByRole('button', { name: 'Lift the ban' }));
  say({ step: 'unbanned', status: lifted, ...(await shown(page)), ...(await ban(page)) });

  // 4. He signs in as Ada: the account page's banner says who is who, until when.
  const impersonated = await click(page, page.getByRole('button', { name: 'Sign in as this user' }));
  const banner = page.locator('aside[aria-label=Impersonation]');
  say({
    step: 'impersonating',
    status: impersonated,
    ...(await shown(page)),
    banner: (await banner.count()) ? (await banner.locator('p').innerText()).trim() : null,
    user: (await session(page))?.user?.email ?? null,
  });
  await inspect('account-impersonated');

  // 5. Meanwhile the administrators' page is refused.
  const refused = await open(page, `${base}/auth/admin`);
  say({ step: 'admin-refused', status: refused, ...(await shown(page)), finds: await page.getByText('Find users').count() });
  await inspect('refused');

  // 6. One click on the banner ends it: to sign in again, signed out.
  await open(page, `${base}/auth/account`);
  const ended = await click(page, page.locator('aside[aria-label=Impersonation]').getByRole('button', { name: 'End impersonation' }));
  say({ step: 'ended', status: ended, url: page.url(), session: await session(page) });

  // 7. Signed in again, he is back on Ada's page; then the audit log.
  say({ step: 'root-again', ...(await signIn(page, ROOT)), ...(await shown(page)) });
  await click(page, page.getByRole('link', { name: 'Audit log' }));
  const kinds = (await page.locator('section[aria-labelledby=audit-h] li').allInnerTexts())
    .map((t) => t.split(' · ')[0].trim());
  say({ step: 'audit', url: page.url(), kinds });
  await inspect('audit');

  say({ step: 'csp', ...seen });
  await context.close();
});
