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

/** A person: a browser context of their own, its page, and the CSP violations and script
 * errors seen there. */
export async function person(browser) {
  const context = await browser.newContext({ viewport: { width: 800, height: 900 } });
  const page = await context.newPage();
  page.setDefaultTimeout(15000);
  const seen = { violations: [], pageErrors: [] };
  page.on('console', (m) => { if (/Content Security Policy/i.test(m.text())) seen.violations.push(m.text()); });
  page.on('pageerror', (e) => seen.pageErrors.push(String(e)));
  return { context, page, seen };
}

/** Clicks `target` and waits for the page it leads to: that page's status. */
export async function click(page, target) {
  const [response] = await Promise.all([page.waitForNavigation(), target.click()]);
  return response ? response.status() : null;
}

/** Goes to `url`: the status of the page it ends on. */
export async function open(page, url) {
  const response = await page.goto(url);
  return response ? response.status() : null;
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

/** The page as shown, in the light and the dark scheme: a full-page screenshot at 800 px to
 * `shot(scheme)`, then at 320 px its WCAG contrast (`wcagContrast`), its background and how
 * much wider than the window it is; with its inputs, their labels, autocomplete tokens and
 * hints (a hidden one, for password managers, with its value). One measure per scheme; the
 * page is left at 800 px in its own scheme. */
export async function measure(page, shot) {
  const inputs = await page.evaluate(() => [...document.querySelectorAll('input:not([type=hidden])')].map((i) => ({
    name: i.name,
    type: i.type,
    hidden: i.hidden,
    value: i.hidden ? i.value : undefined,
    autocomplete: i.getAttribute('autocomplete'),
    label: [...(i.labels ?? [])].map((l) => l.textContent.trim()).join(' '),
    describedBy: i.getAttribute('aria-describedby')
      ? (document.getElementById(i.getAttribute('aria-describedby'))?.textContent ?? null)
      : null,
  })));
  const measures = [];
  for (const scheme of ['light', 'dark']) {
    await page.emulateMedia({ colorScheme: scheme });
    await page.setViewportSize({ width: 800, height: 900 });
    await screenshot(page, shot(scheme));
    await page.setViewportSize({ width: 320, height: 700 });
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
    const background = await page.evaluate(() => getComputedStyle(document.body).backgroundColor);
    const contrast = await wcagContrast(page);
    measures.push({ scheme, overflow, background, contrast, inputs });
  }
  await page.emulateMedia({ colorScheme: null });
  await page.setViewportSize({ width: 800, height: 900 });
  return measures;
}

/** WCAG contrast on the page as shown: the worst ratio of a text element against its
 * background (AA asks 4.5:1) and of an input border against its surroundings (non-text UI,
 * 3:1), with the worst text element's markup. */
export function wcagContrast(page) {
  return page.evaluate(() => {
    const rgb = (c) => (c.match(/[\d.]+/g) || []).slice(0, 3).map(Number);
    const lum = (c) => {
      const [r, g, b] = rgb(c).map((v) => {
        const x = v / 255;
        return x <= 0.03928 ? x / 12.92 : ((x + 0.055) / 1.055) ** 2.4;
      });
      return 0.2126 * r + 0.7152 * g + 0.0722 * b;
    };
    const ratio = (a, b) => {
      const [hi, lo] = [lum(a), lum(b)].sort((x, y) => y - x);
      return (hi + 0.05) / (lo + 0.05);
    };
    const bgOf = (el) => {
      for (let e = el; e; e = e.parentElement) {
        const bg = getComputedStyle(e).backgroundColor;
        if (bg && !bg.endsWith(', 0)') && bg !== 'transparent') return bg;
      }
      return 'rgb(255, 255, 255)';
    };
    let worstText = Infinity;
    let worstElement = '';
    for (const el of document.querySelectorAll('h1, h2, p, label, button, a, li, code, th, td, input:not([type=hidden])')) {
      if (el.classList.contains('provider-monogram') || !el.textContent.trim() && el.tagName !== 'INPUT') continue;
      const r = ratio(getComputedStyle(el).color, bgOf(el));
      if (r < worstText) { worstText = r; worstElement = el.outerHTML.slice(0, 80); }
    }
    let worstBorder = Infinity;
    for (const el of document.querySelectorAll('input:not([type=hidden])')) {
      worstBorder = Math.min(worstBorder, ratio(getComputedStyle(el).borderTopColor, bgOf(el.parentElement)));
    }
    return { worstText, worstElement, worstBorder: worstBorder === Infinity ? null : worstBorder };
  });
}
