// The single sign-on gateway in a real browser, behind a real proxy (nginx or Caddy): the
// Rust test (crates/authcore-server/tests/gateway_proxies.rs) starts the proxy, authcore,
// the OpenID provider and an application echoing the headers it receives, and passes their
// URLs; the test host names (*.example.test) resolve to 127.0.0.1 in this Chromium only.
//
// argv[2]: {"auth": "http://auth.example.test:P", "app1": …, "app2": …, "admin": …}
import { run, say } from './lib.mjs';

const urls = JSON.parse(process.argv[2]);
const { auth, app1, app2, admin } = urls;

/** The identity the application saw (it answers with the request headers as JSON). */
async function seen(page) {
  const text = await page.locator('body').innerText();
  const headers = JSON.parse(text);
  return {
    user: headers['x-auth-request-user'] || null,
    email: headers['x-auth-request-email'] || null,
    provider: headers['x-auth-request-provider'] || null,
    groups: headers['x-auth-request-groups'] || null,
  };
}

async function expectSignInPage(page, what) {
  if (!page.url().startsWith(`${auth}/auth/signin`)) {
    throw new Error(`${what}: expected the sign-in page, got ${page.url()}`);
  }
}

async function signOut(page) {
  await page.goto(`${auth}/auth/signout`);
  await Promise.all([page.waitForURL((u) => u.href.startsWith(auth)), page.click('#submitButton')]);
}

/** Signs in at the OpenID provider as `hint` from the sign-in page `callbackUrl` leads to. */
async function signInWithOidc(page, hint, callbackUrl) {
  await page.goto(callbackUrl);
  await expectSignInPage(page, callbackUrl);
  const csrf = await page.locator('input[name=csrfToken]').first().inputValue();
  await Promise.all([
    page.waitForURL(callbackUrl),
    page.evaluate(({ action, csrfToken, callbackUrl }) => {
      const form = document.createElement('form');
      form.method = 'POST';
      form.action = action;
      for (const [name, value] of Object.entries({ csrfToken, callbackUrl })) {
        const input = document.createElement('input');
        input.type = 'hidden';
        input.name = name;
        input.value = value;
        form.append(input);
      }
      document.body.append(form);
      form.submit();
    }, { action: `${auth}/auth/signin/oidc?login_hint=${hint}&prompt=login`, csrfToken: csrf, callbackUrl }),
  ]);
}

await run(async (browser) => {
  // Credentials: protected page → sign-in page → back on the original URL.
  const context = await browser.newContext();
  const page = await context.newPage();
  page.setDefaultTimeout(15000);
  const target = `${app1}/dashboard?tab=1`;
  await page.goto(target);
  await expectSignInPage(page, 'protected page');
  await page.fill('#input-username-for-credentials-provider', 'demo');
  await page.fill('#input-password-for-credentials-provider', 'authcore-demo');
  await Promise.all([page.waitForURL(target), page.click('#submitButton-credentials')]);
  say({ step: 'credentials', url: page.url(), seen: await seen(page) });

  // The second subdomain is signed in too.
  await page.goto(`${app2}/`);
  say({ step: 'second subdomain', url: page.url(), seen: await seen(page) });

  // Outside the rules: the 403 page with a sign-out button.
  const forbidden = await page.goto(`${admin}/`);
  say({
    step: 'forbidden',
    status: forbidden.status(),
    text: await page.locator('h1').innerText(),
    signOut: await page.locator('a.button').getAttribute('href'),
  });

  // A public path, without any session.
  const anonymous = await browser.newContext();
  const publicPage = await anonymous.newPage();
  const pub = await publicPage.goto(`${app1}/public/app.css`);
  say({ step: 'public', status: pub.status(), seen: await seen(publicPage) });
  await anonymous.close();

  // Sign-out ends access on both subdomains.
  await signOut(page);
  const after = [];
  for (const app of [app1, app2]) {
    await page.goto(`${app}/`);
    after.push(page.url().startsWith(`${auth}/auth/signin`));
  }
  say({ step: 'signed out', signInAgain: after });
  await context.close();

  // The real OpenID provider: the sign-in page's button, then (as an admin) the group rule.
  const oidc = await browser.newContext();
  const oidcPage = await oidc.newPage();
  oidcPage.setDefaultTimeout(15000);
  await oidcPage.goto(target);
  await expectSignInPage(oidcPage, 'protected page (OIDC)');
  await Promise.all([oidcPage.waitForURL(target), oidcPage.click('#submitButton-oidc')]);
  say({ step: 'oidc', url: oidcPage.url(), seen: await seen(oidcPage) });
  const notAdmin = await oidcPage.goto(`${admin}/`);
  say({ step: 'oidc not admin', status: notAdmin.status() });
  await signOut(oidcPage);

  // Signing in again as admin-1 (the provider honours login_hint; prompt=login ends its own
  // session of user-1), straight to the admin host.
  await signInWithOidc(oidcPage, 'admin-1', `${admin}/`);
  say({ step: 'oidc admin', url: oidcPage.url(), seen: await seen(oidcPage) });
  await signOut(oidcPage);

  // user-1 once more: the same user id as at the first sign-in.
  await signInWithOidc(oidcPage, 'user-1', `${app1}/`);
  say({ step: 'oidc again', url: oidcPage.url(), seen: await seen(oidcPage) });
  await oidc.close();
}, ['MAP *.example.test 127.0.0.1']);
