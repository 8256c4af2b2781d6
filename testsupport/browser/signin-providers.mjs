// Browser test of the sign-in page with many OAuth providers (brand icons and monograms),
// driven by crates/authcore-server/tests/browser_pages.rs:
// node signin-providers.mjs <base URL> <screenshot dir>
//
// Headless Debian Chromium at 320 px, light and dark: no horizontal overflow, every provider
// button visible and inside the viewport with its label fitting, its brand icon (inline SVG)
// or monogram drawn, contrast of the labels, no CSP violation; a full-page screenshot per
// scheme (signin-providers-<scheme>.png). One JSON line per scheme; {"done": true} at the
// end; a failure prints {"error": "..."} and exits 1.
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { run, say, screenshot } from './lib.mjs';

const [base, shots] = process.argv.slice(2);
if (!base || !shots) {
  console.error('usage: node signin-providers.mjs http://localhost:<port> <screenshot dir>');
  process.exit(2);
}
mkdirSync(shots, { recursive: true });

await run(async (browser) => {
  for (const scheme of ['light', 'dark']) {
    const context = await browser.newContext({ colorScheme: scheme, viewport: { width: 320, height: 640 } });
    const page = await context.newPage();
    page.setDefaultTimeout(15000);
    const cspViolations = [];
    page.on('console', (m) => { if (/Content Security Policy/i.test(m.text())) cspViolations.push(m.text()); });
    await page.goto(`${base}/auth/signin`);

    const buttons = [];
    for (const b of await page.locator('button.provider-button').all()) {
      await b.scrollIntoViewIfNeeded();
      buttons.push({ visible: await b.isVisible(), ...await b.evaluate((el) => {
        const rect = el.getBoundingClientRect();
        const mark = el.querySelector('.provider-logo');
        const svg = mark && mark.querySelector('svg');
        const name = el.querySelector('.provider-name');
        const markRect = mark ? mark.getBoundingClientRect() : null;
        return {
          id: el.id.replace(/^submitButton-/, ''),
          left: rect.left,
          right: rect.right,
          width: rect.width,
          height: rect.height,
          // The label is not cut off (wraps rather than overflowing).
          labelFits: !!name && name.scrollWidth <= name.clientWidth + 1
            && name.getBoundingClientRect().right <= rect.right,
          mark: !mark ? 'none' : svg ? 'icon' : mark.classList.contains('provider-monogram') ? 'monogram' : 'logo',
          markSize: markRect ? [Math.round(markRect.width), Math.round(markRect.height)] : null,
          iconPaths: svg ? svg.querySelectorAll('path').length : 0,
          iconSize: svg ? [Math.round(svg.getBoundingClientRect().width), Math.round(svg.getBoundingClientRect().height)] : null,
          iconFill: svg ? getComputedStyle(svg).fill : null,
          markColor: mark ? getComputedStyle(mark).color : null,
        };
      }) });
    }
    const layout = await page.evaluate(() => ({
      scrollWidth: document.documentElement.scrollWidth,
      bodyScrollWidth: document.body.scrollWidth,
      innerWidth: window.innerWidth,
    }));
    // WCAG contrast of the button labels against the button.
    const worstLabel = await page.evaluate(() => {
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
      let worst = Infinity;
      for (const el of document.querySelectorAll('button.provider-button .provider-name')) {
        const button = el.closest('button');
        worst = Math.min(worst, ratio(getComputedStyle(el).color, getComputedStyle(button).backgroundColor));
      }
      return worst;
    });
    await screenshot(page, join(shots, `signin-providers-${scheme}.png`));
    say({ step: 'providers', scheme, layout, buttons, worstLabel, violations: cspViolations });
    await context.close();
  }
});
