// One database session across a real Auth.js app (@auth/express with @auth/pg-adapter) and
// an authcore app (authcore-sqlx) on the same PostgreSQL schema, in headless Chromium:
//   node shared-session-db.mjs <Auth.js base> <authcore base>
// Magic links are requested on one app's sign-in page and opened — on the same app or on the
// other one, whose adapter finds the token row the first one wrote; `GET <base>/test/link`
// hands the test the link each app "mailed".
import { run, say } from './lib.mjs';

const [authjs, authcore] = process.argv.slice(2);
if (!authjs || !authcore) {
  console.error('usage: node shared-session-db.mjs <Auth.js base URL> <authcore base URL>');
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
  const signInByEmail = async (requestOn, openOn, email) => {
    await page.goto(`${requestOn}/auth/signin`);
    await page.fill('form[action$="/signin/email"] input[name="email"]', email);
    await submit('form[action$="/signin/email"] button');
    const link = await (await page.request.get(`${requestOn}/test/link?email=${encodeURIComponent(email)}`)).json();
    if (!link.url) throw new Error(`no magic link for ${email} from ${requestOn}`);
    await page.goto(link.url.replace(requestOn, openOn));
  };
  const signOut = async (base) => {
    await page.goto(`${base}/auth/signout`);
    await submit('form[action$="/signout"] button');
  };

  await signInByEmail(authjs, authjs, 'ada@example.com');
  say({ step: 'signed in on Auth.js', ...(await both()) });
  await signOut(authcore);
  say({ step: 'signed out on authcore', ...(await both()) });
  await signInByEmail(authcore, authcore, 'grace@example.com');
  say({ step: 'signed in on authcore', ...(await both()) });
  await signOut(authjs);
  say({ step: 'signed out on Auth.js', ...(await both()) });
  await signInByEmail(authjs, authcore, 'lin@example.com');
  say({ step: 'Auth.js link opened on authcore', ...(await both()) });
  await context.close();
});
