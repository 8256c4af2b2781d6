// The Auth.js browser client, `next-auth/react` (useSession, signIn, signOut, update,
// getSession, getCsrfToken, getProviders), driven unchanged against an authcore app:
//   node next-auth-react.mjs <authcore base URL> <base path> <v4|v5>
// `v5` bundles next-auth 5 (the `/auth/*` client of Auth.js v5), `v4` next-auth 4 (its
// `json=true` posts, against authcore's `next_auth_v4()`). The page is served on the authcore
// app's origin by intercepting `/react-client` (authcore itself answers everything under the
// base path); a second tab follows the first through the client's own broadcasts.
import { fileURLToPath } from 'node:url';
import * as esbuild from 'esbuild';
import { run, say } from './lib.mjs';

const [base, basePath, version] = process.argv.slice(2);
if (!base || !basePath || !['v4', 'v5'].includes(version)) {
  console.error('usage: node next-auth-react.mjs <authcore base URL> <base path> <v4|v5>');
  process.exit(2);
}

const { outputFiles } = await esbuild.build({
  entryPoints: [fileURLToPath(new URL('./next-auth-react/app.jsx', import.meta.url))],
  bundle: true,
  write: false,
  format: 'iife',
  jsx: 'automatic',
  alias: version === 'v5' ? { 'next-auth': 'next-auth-v5' } : {},
  define: { 'process.env.NODE_ENV': '"production"' },
  // next-auth reads NEXTAUTH_URL & co. from process.env; in a browser there are none.
  banner: { js: 'var process = { env: {} };' },
  logLevel: 'error',
});
const script = outputFiles[0].text;
const html = `<!doctype html><html data-base-path="${basePath}"><head><meta charset="utf-8">
<title>next-auth/react</title></head><body><div id="root"></div>
<script src="/react-client.js"></script></body></html>`;

await run(async (browser) => {
  const context = await browser.newContext();
  await context.route(`${base}/react-client*`, (route) => {
    const js = new URL(route.request().url()).pathname.endsWith('.js');
    return route.fulfill({
      contentType: js ? 'text/javascript' : 'text/html',
      body: js ? script : html,
    });
  });
  const errors = [];
  const open = async () => {
    const page = await context.newPage();
    // Generous: CI runs three browser tests at once beside compilers on two cores.
    page.setDefaultTimeout(30000);
    page.on('pageerror', (e) => errors.push(String(e)));
    await page.goto(`${base}/react-client`);
    return page;
  };
  // What `useSession` shows once its status is `status` (and the user's name `name`).
  const shown = async (page, status, name) => {
    try {
      await page.waitForFunction(([s, n]) => {
        const el = document.getElementById('session');
        return el?.dataset.status === s && (n === null || JSON.parse(el.textContent)?.user?.name === n);
      }, [status, name ?? null]);
    } catch (e) {
      const now = await page.evaluate(() => document.getElementById('session')?.outerHTML);
      throw new Error(`${page === other ? 'other' : 'tab'}: useSession never showed ${status} ${name ?? ''}: ${now} (page errors: ${errors.join('; ')})`);
    }
    return page.evaluate(() => JSON.parse(document.getElementById('session').textContent));
  };
  const call = (page, fn, ...args) => page.evaluate(([f, a]) => window.client[f](...a), [fn, args]);

  const tab = await open();
  let other;
  say({ step: 'no session', session: await shown(tab, 'unauthenticated') });
  say({
    step: 'providers and csrf',
    providers: await call(tab, 'getProviders'),
    csrfToken: await call(tab, 'getCsrfToken'),
  });
  say({
    step: 'wrong credentials',
    result: await call(tab, 'signIn', 'credentials', { username: 'NOT-A-USER', redirect: false }),
    session: await shown(tab, 'unauthenticated'),
  });
  const signedIn = await call(tab, 'signIn', 'credentials', { username: 'ada', redirect: false });
  say({ step: 'signed in', result: signedIn, session: await shown(tab, 'authenticated') });

  other = await open();
  say({ step: 'second tab', session: await shown(other, 'authenticated') });
  // next-auth 4 broadcasts through localStorage, stamped in whole seconds: the second tab's
  // own `getSession` broadcast of this second would make the update's identical message no
  // change, which fires no `storage` event. A user does not update within a second of
  // opening a tab; the test waits for the next second.
  if (version === 'v4') await tab.waitForTimeout(1100);
  const updated = await call(tab, 'update', { name: 'Ada L' });
  say({
    step: 'updated',
    result: updated,
    session: await shown(tab, 'authenticated', 'Ada L'),
    other: await shown(other, 'authenticated', 'Ada L'),
    getSession: await call(tab, 'getSession'),
  });
  say({
    step: 'signed out',
    result: await call(tab, 'signOut', { redirect: false }),
    session: await shown(tab, 'unauthenticated'),
    other: await shown(other, 'unauthenticated'),
    getSession: await call(tab, 'getSession'),
  });

  // The default: signIn redirects the page to the callbackUrl.
  await Promise.all([
    tab.waitForURL(`${base}/react-client?back=1`),
    call(tab, 'signIn', 'credentials', { username: 'grace', callbackUrl: `${base}/react-client?back=1` })
      .catch(() => {}), // the page navigates away while the call is in flight
  ]);
  say({ step: 'signed in with a redirect', url: tab.url(), session: await shown(tab, 'authenticated') });
  await Promise.all([
    tab.waitForURL(`${base}/react-client?out=1`),
    call(tab, 'signOut', { callbackUrl: `${base}/react-client?out=1` }).catch(() => {}),
  ]);
  say({ step: 'signed out with a redirect', url: tab.url(), session: await shown(tab, 'unauthenticated') });
  say({ step: 'page errors', errors });
  await context.close();
});
