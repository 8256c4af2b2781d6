// One session across a real Auth.js app (@auth/express, testsupport/authjs-express) and an
// authcore app on two ports of localhost, driven like a user in headless Chromium:
//   node shared-session.mjs <Auth.js base> <authcore base>
// Each app's built-in sign-in and sign-out pages are used by clicking; session updates go
// through `POST <base>/auth/session` with `{csrfToken, data}` as next-auth/react's `update`
// sends them; `/whoami` is what each application itself sees (@auth/express's getSession,
// authcore-axum's extractor).
import { run, say } from './lib.mjs';

const [authjs, authcore] = process.argv.slice(2);
if (!authjs || !authcore) {
  console.error('usage: node shared-session.mjs <Auth.js base URL> <authcore base URL>');
  process.exit(2);
}

await run(async (browser) => {
  const context = await browser.newContext();
  const page = await context.newPage();
  page.setDefaultTimeout(15000);
  const who = async (base) => (await page.request.get(`${base}/whoami`)).json();
  const both = async () => ({ authjs: await who(authjs), authcore: await who(authcore) });
  const submit = async (selector) => {
    await Promise.all([page.waitForNavigation(), page.click(selector)]);
  };
  const signIn = async (base, username) => {
    await page.goto(`${base}/auth/signin`);
    await page.fill('form[action$="/callback/credentials"] input[name="username"]', username);
    await submit('form[action$="/callback/credentials"] button');
  };
  const signOut = async (base) => {
    await page.goto(`${base}/auth/signout`);
    await submit('form[action$="/signout"] button');
  };
  const update = async (base, name) => {
    const { csrfToken } = await (await page.request.get(`${base}/auth/csrf`)).json();
    const r = await page.request.post(`${base}/auth/session`, { data: { csrfToken, data: { name } } });
    return { status: r.status(), session: await r.json() };
  };

  await signIn(authjs, 'ada');
  say({ step: 'signed in on Auth.js', ...(await both()) });
  say({ step: 'updated on authcore', result: await update(authcore, 'Ada L'), ...(await both()) });
  say({ step: 'updated on Auth.js', result: await update(authjs, 'Ada K'), ...(await both()) });
  await signOut(authcore);
  say({ step: 'signed out on authcore', ...(await both()) });
  await signIn(authcore, 'grace');
  say({ step: 'signed in on authcore', ...(await both()) });
  await signOut(authjs);
  say({ step: 'signed out on Auth.js', ...(await both()) });

  // The Auth.js client contract: @auth/express's own sign-in and sign-out forms (their
  // fields, CSRF token and callbackUrl as Auth.js renders them), posted to authcore.
  const retarget = () => page.evaluate((target) => {
    for (const form of document.querySelectorAll('form')) {
      form.action = form.action.replace(location.origin, target);
    }
  }, authcore);
  await page.goto(`${authjs}/auth/signin`);
  await retarget();
  await page.fill('form[action$="/callback/credentials"] input[name="username"]', 'lin');
  await submit('form[action$="/callback/credentials"] button');
  say({ step: "Auth.js's sign-in form posted to authcore", ...(await both()) });
  await page.goto(`${authjs}/auth/signout`);
  await retarget();
  await submit('form[action$="/signout"] button');
  say({ step: "Auth.js's sign-out form posted to authcore", ...(await both()) });

  // The real OpenID provider (it signs user-1 in without a form): through either app.
  for (const [name, base, other] of [['Auth.js', authjs, authcore], ['authcore', authcore, authjs]]) {
    await page.goto(`${base}/auth/signin`);
    await Promise.all([
      page.waitForURL((u) => u.href.startsWith(base) && !u.pathname.startsWith('/auth/')),
      page.click('form[action$="/signin/oidc"] button'),
    ]);
    say({ step: `signed in at the OpenID provider through ${name}`, ...(await both()) });
    await signOut(other);
  }
  await context.close();
});
