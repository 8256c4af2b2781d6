// Browser test of the built-in pages, driven by crates/authcore-server/tests/browser_pages.rs
// (which serves the demo app): node pages.mjs <base URL> <screenshot dir>
//
// Headless Debian Chromium: every page in light and dark (screenshots saved), usable at
// 320 px, the page's own inline script runs under its CSP, the credentials form signs in
// through a real click, the sign-out button signs out, and markup injected through any
// query parameter never runs. One JSON line per check; {"done": true} at the end; a
// failure prints {"error": "..."} and exits 1.
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { run, say, screenshot, wcagContrast } from './lib.mjs';

const [base, shots] = process.argv.slice(2);
if (!base || !shots) {
  console.error('usage: node pages.mjs http://localhost:<port> <screenshot dir>');
  process.exit(2);
}
mkdirSync(shots, { recursive: true });

await run(async (browser) => {
  const pages = {
    signin: '/auth/signin',
    signout: '/auth/signout',
    error: '/auth/error?error=Configuration',
    'verify-request': '/auth/verify-request?provider=email&type=email',
  };

  // 1. Light and dark, desktop and 320 px.
  for (const scheme of ['light', 'dark']) {
    const context = await browser.newContext({ colorScheme: scheme, viewport: { width: 800, height: 900 } });
    const page = await context.newPage();
    page.setDefaultTimeout(15000);
    const cspViolations = [];
    page.on('console', (m) => { if (/Content Security Policy/i.test(m.text())) cspViolations.push(m.text()); });
    for (const [name, path] of Object.entries(pages)) {
      // The sign-in page's own script asks for passkey autofill options on load.
      const ownScript = name === 'signin'
        ? page.waitForRequest((r) => r.url().includes('/webauthn-options/passkey?action=authenticate'))
        : Promise.resolve(null);
      await page.goto(base + path);
      await ownScript;
      const background = await page.evaluate(() => getComputedStyle(document.body).backgroundColor);
      const contrast = await wcagContrast(page);
      await screenshot(page, join(shots, `${name}-${scheme}.png`));
      await page.setViewportSize({ width: 320, height: 700 });
      const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
      await page.setViewportSize({ width: 800, height: 900 });
      say({ step: 'render', page: name, scheme, background, overflow, contrast });
    }
    say({ step: 'csp', scheme, violations: cspViolations });
    await context.close();
  }

  // 2. The credentials form signs in through a real click; 3. the sign-out button signs out.
  const context = await browser.newContext();
  const page = await context.newPage();
  page.setDefaultTimeout(15000);
  const session = async () => (await page.request.get(`${base}/auth/session`)).json();
  await page.goto(`${base}/auth/signin`);
  await page.fill('#input-username-for-credentials-provider', 'demo');
  await page.fill('#input-password-for-credentials-provider', process.env.DEMO_PASSWORD ?? 'authcore-demo');
  await Promise.all([page.waitForURL(`${base}/`), page.click('#submitButton-credentials')]);
  say({ step: 'credentials', name: (await session())?.user?.name });
  await page.goto(`${base}/auth/signout`);
  await Promise.all([page.waitForURL(`${base}/`), page.click('#submitButton')]);
  say({ step: 'signout', session: await session() });
  await context.close();

  // 4. Markup in every query parameter never runs.
  const evil = [
    '<script>window.__xss=1</script>',
    '"><script>window.__xss=1</script>',
    '"><img src=x onerror="window.__xss=1">',
    "javascript:window.__xss=1",
  ];
  const xss = await browser.newContext();
  const xpage = await xss.newPage();
  let dialogs = 0;
  xpage.on('dialog', (d) => { dialogs += 1; d.dismiss(); });
  let ran = 0;
  let checked = 0;
  for (const value of evil) {
    const v = encodeURIComponent(value);
    for (const path of [
      `/auth/signin?error=${v}&email=${v}&csrfToken=${v}`,
      `/auth/signin?callbackUrl=${encodeURIComponent(`${base}/${value}`)}`,
      `/auth/error?error=${v}`,
      `/auth/verify-request?provider=${v}&type=${v}`,
      `/auth/signout?callbackUrl=${v}`,
    ]) {
      await xpage.goto(base + path);
      await xpage.waitForTimeout(50);
      if (await xpage.evaluate(() => window.__xss === 1)) ran += 1;
      checked += 1;
    }
  }
  say({ step: 'xss', checked, ran, dialogs });
  await xss.close();
});
