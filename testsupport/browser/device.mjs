// The OpenID Provider's device page (RFC 8628 §3.3) in a real browser, driven by
// crates/authcore-server/tests/device_flow.rs:
//   node device.mjs <base URL> <user code> <screenshot dir>
// Headless Debian Chromium as a person who is not signed in: the verification URI sends
// them to the sign-in page and back; they type the code as people do (lower case, a space
// for the dash), see which app asks and for what, and allow it. The page's CSP violations,
// its WCAG contrast in light and dark, and its width at 320 px are reported. One JSON line
// per step; {"done": true} at the end.
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { click, open, person, run, say, screenshot, wcagContrast } from './lib.mjs';

const [base, userCode, shots] = process.argv.slice(2);
if (!shots) {
  console.error('usage: node device.mjs <base URL> <user code> <screenshot dir>');
  process.exit(2);
}
mkdirSync(shots, { recursive: true });

await run(async (browser) => {
  const { page, seen } = await person(browser);
  // Not signed in: to the sign-in page, and back to the device page after it.
  await open(page, `${base}/oidc/device/verify`);
  say({ step: 'sign-in-page', url: page.url() });
  await page.fill('input[name="username"]', 'demo');
  await page.fill('input[name="password"]', 'authcore-demo');
  const signedIn = await click(page, page.locator('#submitButton-credentials'));
  say({ step: 'entry', status: signedIn, url: page.url(), heading: await page.textContent('h1') });
  await screenshot(page, join(shots, 'device-entry.png'));

  // Typed as people type it: lower case, a space instead of the dash.
  const typed = userCode.toLowerCase().replace('-', ' ');
  await page.fill('#user_code', typed);
  const shown = await click(page, page.getByRole('button', { name: 'Continue' }));
  const text = await page.textContent('main');
  for (const scheme of ['light', 'dark']) {
    await page.emulateMedia({ colorScheme: scheme });
    say({ step: 'contrast', scheme, contrast: await wcagContrast(page) });
    await screenshot(page, join(shots, `device-confirm-${scheme}.png`));
  }
  await page.setViewportSize({ width: 320, height: 800 });
  const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
  say({ step: 'confirm', status: shown, heading: await page.textContent('h1'), text, overflow });

  const allowed = await click(page, page.getByRole('button', { name: 'Allow' }));
  say({
    step: 'allowed',
    status: allowed,
    heading: await page.textContent('h1'),
    violations: seen.violations,
    pageErrors: seen.pageErrors,
  });
});
