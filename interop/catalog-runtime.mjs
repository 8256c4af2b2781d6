// What the installed @auth/core sends at run time for each OAuth preset of its catalogue,
// for crates/authcore/tests/catalog_presets.rs: the sign-in redirect, then the token and
// userinfo requests of a callback, with every `fetch` answered from the case's table (the
// same answers authcore's side gets from its brand stand-in) and recorded.
//
//   node interop/catalog-runtime.mjs < cases.json > results.json
//
// Input: {"app": "http://localhost:3000", "cases": [{"id", "options": {...},
// "answers": {"<METHOD> <url without query>": "<JSON body>"}, "code", "clientId",
// "clientSecret", "formPost", "idToken"}]}. `idToken` (OpenID Connect presets):
// {"url": <token endpoint>, "answer": {...token answer}, "claims": {...}, "alg": "RS256" |
// "HS256", "pem": <PKCS #8 key for RS256, kid "k1">}: the token answer gets an ID token with
// those claims, `iat`, `exp` and the `nonce` of the sign-in redirect. Output: one JSON
// array, per case {"id", "location", "requests": [{"method", "url", "headers", "body"}],
// "status", "error"}.
import { Auth } from "./node_modules/@auth/core/index.js";
import { SignJWT, importPKCS8 } from "./node_modules/jose/dist/webapi/index.js";

const input = JSON.parse(await new Promise((resolve) => {
  let text = "";
  process.stdin.setEncoding("utf8");
  process.stdin.on("data", (c) => { text += c; });
  process.stdin.on("end", () => resolve(text));
}));
const APP = input.app;
const SECRET = "catalogue-presets-secret";

let answers = {};
let recorded = [];
globalThis.fetch = async (resource, init) => {
  const req = new Request(resource, init);
  const body = await req.clone().text();
  recorded.push({
    method: req.method,
    url: req.url,
    headers: Object.fromEntries(req.headers),
    body,
  });
  const u = new URL(req.url);
  u.search = "";
  const answer = answers[`${req.method} ${u.href}`];
  return new Response(answer ?? "{}", {
    status: answer === undefined ? 404 : 200,
    headers: { "content-type": "application/json" },
  });
};

/** The `name=value` pairs of a response's Set-Cookie headers, as one Cookie header. */
function cookies(res, jar) {
  for (const line of res.headers.getSetCookie()) {
    const [pair] = line.split(";");
    const i = pair.indexOf("=");
    jar.set(pair.slice(0, i), pair.slice(i + 1));
  }
  return [...jar].map(([k, v]) => `${k}=${v}`).join("; ");
}

async function run(c) {
  answers = c.answers;
  recorded = [];
  const mod = await import(`./node_modules/@auth/core/providers/${c.id}.js`);
  const provider = mod.default({ clientId: c.clientId, clientSecret: c.clientSecret, ...c.options });
  const config = { providers: [provider], secret: SECRET, trustHost: true, basePath: "/auth" };
  const id = typeof provider === "function" ? provider().id : provider.id;
  const jar = new Map();
  let res = await Auth(new Request(`${APP}/auth/csrf`), config);
  const { csrfToken } = await res.json();
  let cookie = cookies(res, jar);
  const body = new URLSearchParams({ csrfToken, callbackUrl: `${APP}/dashboard` });
  res = await Auth(new Request(`${APP}/auth/signin/${id}`, {
    method: "POST",
    headers: { cookie, "content-type": "application/x-www-form-urlencoded" },
    body,
  }), config);
  const location = res.headers.get("location");
  cookie = cookies(res, jar);
  const out = { id: c.id, location, status: res.status, requests: [] };
  const signInRequests = recorded;
  let state = null;
  let nonce = null;
  try {
    state = new URL(location).searchParams.get("state");
    nonce = new URL(location).searchParams.get("nonce");
  } catch { /* no URL */ }
  if (c.idToken) {
    const now = Math.floor(Date.now() / 1000);
    const claims = { ...c.idToken.claims, iat: now, exp: now + 300 };
    if (nonce) claims.nonce = nonce;
    const rs256 = c.idToken.alg === "RS256";
    const key = rs256
      ? await importPKCS8(c.idToken.pem, "RS256")
      : new TextEncoder().encode(c.clientSecret);
    const idToken = await new SignJWT(claims)
      .setProtectedHeader(rs256 ? { alg: "RS256", kid: "k1" } : { alg: "HS256" })
      .sign(key);
    const u = new URL(c.idToken.url);
    u.search = "";
    answers[`POST ${u.href}`] = JSON.stringify({ ...c.idToken.answer, id_token: idToken });
  }
  const params = new URLSearchParams({ code: c.code });
  if (state) params.set("state", state);
  recorded = [];
  res = await Auth(c.formPost
    ? new Request(`${APP}/auth/callback/${id}`, {
      method: "POST",
      headers: { cookie, "content-type": "application/x-www-form-urlencoded" },
      body: params,
    })
    : new Request(`${APP}/auth/callback/${id}?${params}`, { headers: { cookie } }), config);
  out.requests = [...signInRequests, ...recorded];
  out.callbackStatus = res.status;
  out.callbackLocation = res.headers.get("location");
  return out;
}

// Auth.js logs its errors to the console; the results go to stdout alone.
console.error = () => {};
console.warn = () => {};
const results = [];
for (const c of input.cases) {
  try {
    results.push(await run(c));
  } catch (e) {
    results.push({ id: c.id, error: String(e && e.stack ? e.stack : e), requests: recorded });
  }
}
process.stdout.write(JSON.stringify(results));
