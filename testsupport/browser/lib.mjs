// Shared by the browser tests: Debian's Chromium launched headless with the flags this
// machine needs (no background networking, localhost pinned to 127.0.0.1), and the JSON
// line protocol the Rust harness reads (tests/support/browser.rs in authcore-server).
import { chromium } from 'playwright-core';

/** Prints one JSON line for the Rust harness. */
export const say = (o) => process.stdout.write(`${JSON.stringify(o)}\n`);

/** Headless Chromium (`CHROMIUM`, default /usr/bin/chromium); `hostRules` are more
 * `--host-resolver-rules` entries (`MAP *.example.test 127.0.0.1`). */
export function launch(hostRules = []) {
  return chromium.launch({
    executablePath: process.env.CHROMIUM ?? '/usr/bin/chromium',
    headless: true,
    args: [
      '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
      '--disable-background-networking', '--disable-component-update', '--disable-sync',
      `--host-resolver-rules=${['MAP localhost 127.0.0.1', ...hostRules].join(', ')}`,
    ],
  });
}

/** Runs `test(browser)`, then prints {"done": true}, or {"error": …} and exits 1. */
export async function run(test, hostRules = []) {
  const browser = await launch(hostRules);
  try {
    await test(browser);
    say({ done: true });
  } catch (e) {
    const pages = browser.contexts().flatMap((c) => c.pages());
    const status = pages.length
      ? await pages[0]
        .evaluate(() => [...document.querySelectorAll('[data-webauthn-status]')].map((el) => el.textContent).join(' | '))
        .catch(() => '')
      : '';
    const where = pages.length ? `${pages[0].url()} (status: ${status})` : 'no page';
    say({ error: `${String(e && e.stack ? e.stack : e)}\nat ${where}` });
    process.exitCode = 1;
  } finally {
    await browser.close();
  }
}

// A full-page screenshot, retried: under CPU load headless Chromium sometimes answers
// `Page.captureScreenshot` with "Unable to capture screenshot" for a page that is fine.
export async function screenshot(page, path) {
  for (let attempt = 1; ; attempt++) {
    try {
      return await page.screenshot({ path, fullPage: true });
    } catch (err) {
      if (attempt >= 3 || !String(err?.message).includes('Unable to capture screenshot')) throw err;
      await new Promise((resolve) => setTimeout(resolve, 250 * attempt));
    }
  }
}
