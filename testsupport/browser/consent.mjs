// The OpenID Provider's consent page in a real browser, driven by
// crates/authcore-server/tests/openid_provider.rs:
//   node consent.mjs <authorization URL> <cookie header> <screenshot dir>
// Headless Debian Chromium, with the signed-in user's cookies: the page in light and dark
// (screenshots saved), its WCAG contrast, its width at 320 px, CSP violations, and whether
// another origin can frame it. One JSON line per check; {"done": true} at the end.
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { run, say, screenshot, wcagContrast } from './lib.mjs';

const [url, cookieHeader, shots] = process.argv.slice(2);
if (!shots) {
  console.error('usage: node consent.mjs <authorization URL> <cookie header> <screenshot dir>');
  process.exit(2);
}
mkdirSync(shots, { recursive: true });
const cookies = cookieHeader.split(';').map((pair) => {
  const at = pair.indexOf('=');
  return { name: pair.slice(0, at).trim(), value: pair.slice(at + 1).trim(), url };
});

await run(async (browser) => {
  for (const scheme of ['light', 'dark']) {
    const context = await browser.newContext({ colorScheme: scheme, viewport: { width: 800, height: 900 } });
    await context.addCookies(cookies);
    const page = await context.newPage();
    page.setDefaultTimeout(15000);
    const cspViolations = [];
    page.on('console', (m) => { if (/Content Security Policy/i.test(m.text())) cspViolations.push(m.text()); });
    await page.goto(url);
    const heading = await page.textContent('h1');
    const contrast = await wcagContrast(page);
    await screenshot(page, join(shots, `consent-${scheme}.png`));
    await page.setViewportSize({ width: 320, height: 700 });
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
    say({ step: 'render', scheme, heading, overflow, contrast, cspViolations });
    await context.close();
  }
  // Framed by another origin (a page of its own): the browser shows an error page in the
  // frame instead of authcore's page (the consent page's, or the sign-in page it would send
  // a cookie-less frame to).
  const context = await browser.newContext();
  await context.addCookies(cookies);
  const page = await context.newPage();
  await page.setContent(`<iframe id="f" src="${url.replace(/"/g, '&quot;')}"></iframe>`);
  await page.waitForTimeout(1500);
  const frame = page.frames().find((f) => f !== page.mainFrame());
  let framedText = '';
  try { framedText = frame ? await frame.evaluate(() => document.body?.innerText ?? '') : ''; } catch { framedText = ''; }
  say({ step: 'framed', frameUrl: frame ? frame.url() : null, text: framedText.slice(0, 200) });
  await context.close();
});
