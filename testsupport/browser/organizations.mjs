// Organizations in a real browser, driven by
// crates/authcore-server/tests/browser_organizations.rs (which serves authcore-server with
// password accounts, sign-up by invitation, organizations with a `billing` role and gateway
// rules on organization "acme"; an application behind that gateway; and a mailbox that hands
// out what its SMTP test server received):
// node organizations.mjs <auth URL> <application URL> <mailbox URL> <screenshot dir>
//
// Headless Debian Chromium, one browser context per person. Ada, owner of Acme, signs in
// with the sign-in page's password form, sees Acme on the account page and invites
// bea@example.com as billing with its form. Bea, who has no account, opens the mailed link,
// is sent to sign in, signs up on the password sign-up page, confirms her address by the
// mailed link, signs in and is back on the invitation, accepts it and lands on the account
// page; the application behind the gateway then admits her where billing:read is asked and
// refuses her where admins are; her link, opened again, is no longer valid, and opened by Ada
// it is refused. Ada makes an API key for Acme with member:read, shown once. Cy, invited to
// nothing, opens Bea's link and cannot sign up. The new pages in light and dark: a
// screenshot, WCAG contrast, width at 320 px, labelled inputs. One JSON line per check;
// {"done": true} at the end; a failure prints {"error": "..."} and exits 1.
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { click, measure, open, person, run, say } from './lib.mjs';

const [base, app, mailbox, shots] = process.argv.slice(2);
if (!base || !app || !mailbox || !shots) {
  console.error('usage: node organizations.mjs http://localhost:<port> http://localhost:<port> http://127.0.0.1:<port> <screenshot dir>');
  process.exit(2);
}
mkdirSync(shots, { recursive: true });

// Ada's password is set by the Rust side.
const ADA = ['ada@example.com', 'correct horse battery staple'];
const BEA = ['bea@example.com', 'violet umbrella under nine moons'];
const CY = ['cy@example.com', 'seven quiet otters rowing north'];

/** The next mail to `to` whose subject or text holds `contains` (the Rust side waits for
 * it at the SMTP server): its subject and the link in its text that holds `contains`. */
async function mail(to, contains) {
  const query = new URLSearchParams({ to, contains });
  const res = await fetch(`${mailbox}/next?${query}`);
  if (!res.ok) throw new Error(`mailbox: ${res.status} ${await res.text()}`);
  const { subject, links } = await res.json();
  return { subject, link: links.find((l) => l.includes(contains)) ?? null };
}

/** What a page says: its URL, heading, paragraphs, alerts and notices. */
async function shown(page) {
  return {
    url: page.url(),
    heading: await page.locator('h1').first().textContent(),
    lines: (await page.locator('main p').allTextContents()).map((t) => t.trim()),
    alerts: await page.locator('[role=alert]').allTextContents(),
    notices: await page.locator('[role=status]').allTextContents(),
  };
}

/** The sign-in page's password form (beside the magic link's), filled and sent. */
async function signIn(page, [email, password]) {
  const form = page.locator('form[action$="/auth/callback/password"]');
  await form.getByLabel('Email').fill(email);
  await form.getByLabel('Password').fill(password);
  const status = await click(page, form.getByRole('button'));
  return { status, ...(await shown(page)) };
}

/** From the sign-in page, by its link, the password sign-up page filled and sent. */
async function signUp(page, [email, password]) {
  await click(page, page.getByRole('link', { name: 'Create an account' }));
  const url = page.url();
  await page.getByLabel('Email').fill(email);
  await page.getByLabel('New password').fill(password);
  const status = await click(page, page.getByRole('button', { name: 'Create account' }));
  const form = await page.getByRole('button', { name: 'Create account' }).count();
  return { signUpPage: url, status, form, ...(await shown(page)) };
}

/** The account page's Organizations section: each membership's line (name, then roles and
 * whether it is the active one), and the invitations shown. */
async function organizations(page) {
  const section = page.locator('section[aria-labelledby=orgs-h]');
  return {
    memberships: (await section.locator('li > span:not(.muted)').allInnerTexts()).map((t) => t.trim()),
    members: (await section.locator('li > span.muted').allInnerTexts()).map((t) => t.trim()),
  };
}

/** The account page's API keys: those listed, and the new key's text when it is shown. */
async function apiKeys(page) {
  const section = page.locator('section[aria-labelledby=keys-h]');
  const fresh = page.locator('section[aria-labelledby=newkey-h] code').filter({ hasNotText: 'Authorization' });
  return {
    listed: (await section.locator('li > span').allInnerTexts()).map((t) => t.trim()),
    shown: (await fresh.count()) ? await fresh.first().textContent() : null,
  };
}

/** The application behind the gateway at `path`: the status, and what it was told. */
async function application(page, path) {
  const status = await open(page, `${app}${path}`);
  const body = await page.locator('body').innerText();
  let told = null;
  try { told = JSON.parse(body); } catch { /* an authcore page: not the application */ }
  return { path, status, url: page.url(), told };
}

await run(async (browser) => {
  const inspect = async (page, name) => {
    for (const m of await measure(page, (scheme) => join(shots, `organizations-${name}-${scheme}.png`))) {
      say({ step: 'render', page: name, ...m });
    }
  };

  // 1. Ada signs in by the sign-in page's password form and sees Acme on the account page.
  const ada = await person(browser);
  await open(ada.page, `${base}/auth/signin`);
  say({ step: 'ada-signed-in', ...(await signIn(ada.page, ADA)) });
  await open(ada.page, `${base}/auth/account`);
  say({ step: 'ada-account', ...(await organizations(ada.page)) });
  await inspect(ada.page, 'account-owner');

  // 2. She invites Bea as billing with the account page's form; the link comes by mail.
  const invite = ada.page.locator('form:has(input[name=op][value=org-invite])');
  await invite.getByLabel('Invite to Acme by email').fill(BEA[0]);
  await invite.getByLabel('Role').fill('billing');
  const invited = await click(ada.page, invite.getByRole('button', { name: 'Invite' }));
  say({ step: 'invited', status: invited, ...(await shown(ada.page)) });
  const invitation = await mail(BEA[0], '/auth/invitation?token=');
  say({ step: 'invitation-mail', ...invitation });
  const link = invitation.link;

  // 3. Bea, signed out: the application sends her to sign in; so does the link, where she
  // signs up, confirms her address and signs in, and is back on the invitation.
  const bea = await person(browser);
  say({ step: 'bea-application-signed-out', ...(await application(bea.page, '/billing/')) });
  await open(bea.page, link);
  say({ step: 'bea-sent-to-sign-in', url: bea.page.url() });
  say({ step: 'bea-signed-up', ...(await signUp(bea.page, BEA)) });
  const confirmation = await mail(BEA[0], '/auth/password/verify');
  await open(bea.page, confirmation.link);
  say({ step: 'bea-confirmed', ...(await shown(bea.page)) });
  await click(bea.page, bea.page.getByRole('link', { name: 'Sign in' }));
  say({ step: 'bea-signed-in', ...(await signIn(bea.page, BEA)) });
  await inspect(bea.page, 'invitation');

  // 4. She accepts, and lands on the account page with Acme, as billing, active.
  const accepted = await click(bea.page, bea.page.getByRole('button', { name: 'Accept the invitation' }));
  say({ step: 'accepted', status: accepted, ...(await shown(bea.page)), ...(await organizations(bea.page)) });
  await inspect(bea.page, 'account-member');

  // 5. The application behind the gateway: billing:read is hers, the admins' path is not.
  say({ step: 'bea-application', ...(await application(bea.page, '/billing/invoices')) });
  say({ step: 'bea-application', ...(await application(bea.page, '/admin/')) });

  // 6. The link again: used. Opened by Ada, another address: refused.
  say({ step: 'bea-link-again', status: await open(bea.page, link), ...(await shown(bea.page)) });
  await inspect(bea.page, 'invitation-used');
  say({ step: 'ada-opens-bea-link', status: await open(ada.page, link), ...(await shown(ada.page)) });
  say({ step: 'ada-application', ...(await application(ada.page, '/billing/invoices')) });
  say({ step: 'ada-application', ...(await application(ada.page, '/admin/')) });

  // 7. Ada's account page lists Bea in Acme. She makes an API key for Acme with
  // member:read: shown once; a reload of that page makes no other and shows none.
  await open(ada.page, `${base}/auth/account`);
  say({ step: 'ada-account-later', ...(await organizations(ada.page)) });
  const keyForm = ada.page.locator('form:has(input[name=op][value=key-create])');
  const organizationId = await keyForm.locator('option', { hasText: 'Acme' }).getAttribute('value');
  await keyForm.getByLabel('New key').fill('invoices export');
  await keyForm.getByLabel('For').selectOption({ label: 'Acme' });
  await keyForm.getByLabel('Permissions (space-separated)').fill('member:read');
  const made = await click(ada.page, keyForm.getByRole('button', { name: 'Create key' }));
  const key = await apiKeys(ada.page);
  say({ step: 'key-made', status: made, organizationId, ...(await shown(ada.page)), ...key });
  await inspect(ada.page, 'account-new-key');
  const reloaded = await ada.page.reload();
  say({ step: 'key-after-reload', status: reloaded?.status() ?? null, ...(await shown(ada.page)), ...(await apiKeys(ada.page)) });
  await open(ada.page, `${base}/auth/account`);
  say({ step: 'key-after-done', ...(await shown(ada.page)), ...(await apiKeys(ada.page)) });
  // The key alone, as a client sends it (no cookie), to the members route.
  const members = await fetch(`${base}/account/organizations/members?${new URLSearchParams({ organizationId })}`, {
    headers: { authorization: `Bearer ${key.shown}`, accept: 'application/json' },
  });
  say({ step: 'key-on-members-route', status: members.status, body: await members.text() });

  // 8. Cy, invited to nothing, opens Bea's link: sent to sign in, and cannot sign up.
  const cy = await person(browser);
  await open(cy.page, link);
  say({ step: 'cy-sent-to-sign-in', url: cy.page.url() });
  say({ step: 'cy-signed-up', ...(await signUp(cy.page, CY)) });
  await inspect(cy.page, 'signup-refused');

  say({ step: 'csp', ada: ada.seen, bea: bea.seen, cy: cy.seen });
  for (const p of [ada, bea, cy]) await p.context.close();
});
