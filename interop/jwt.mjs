#!/usr/bin/env node
// JSON-over-stdio CLI around the real, pinned @auth/core (see package.json), used by
// authcore's interop tests (crates/authcore/tests/interop_authjs.rs) as the reference peer.
//
// Protocol: one JSON object on stdin, one JSON object on stdout, exit code 0 — also when a
// token fails to decode (reported as {"ok": false, ...}). Exit code 1 only for unusable
// input (not JSON, not an object).
//
//   {"op":"encode","secret":"s"|["s1","s2"],"salt":"authjs.session-token","token":{...},"maxAge":60}
//     -> {"token":"<compact JWE>"}
//   {"op":"decode","secret":...,"salt":"...","token":"<compact JWE>"}
//     -> {"ok":true,"payload":{...}}  (payload is null for an empty token, as upstream)
//     -> {"ok":false,"error":"<message>","code":"<jose error code, if any>"}
//   {"op":"csrf","secret":...,"token":"<64 hex>"}
//     -> {"cookie":"<token>|<sha256hex(token + String(secret))>","verified":true}
//   {"op":"v4encode","secret":"s","token":{...},"maxAge":60}   (next-auth 4's next-auth/jwt)
//     -> {"token":"<compact JWE>"}
//   {"op":"v4decode","secret":"s","token":"<compact JWE>"}
//     -> {"ok":true,"payload":{...}} | {"ok":false,"error":"..."}
//   {"op":"v4session","secret":"s","token":"<session cookie value>"|null}
//     -> {"body":<what next-auth 4's session route answers>}  (its core handler, JWT sessions)
//   {"op":"batch","items":[<op>, ...]} -> {"results":[<result>, ...]}
//
// A failing item inside a batch yields {"error":"<message>"} in its slot; the batch goes on.

import { encode, decode } from "@auth/core/jwt";
// next-auth 4 (pinned; its peers next/react are not installed: `legacy-peer-deps` in .npmrc),
// whose `next-auth/jwt` needs none of them.
import nextAuthV4Jwt from "next-auth/jwt";
// next-auth 4's route handler, by file path (its "exports" map hides core/).
import nextAuthV4Core from "./node_modules/next-auth/core/index.js";
// @auth/core does not export its CSRF helpers (the package "exports" map hides lib/), so
// they are imported by file path from the pinned install. They are the exact functions
// Auth.js's `init` uses: `createHash` (SHA-256 hex of a string) and `createCSRFToken`
// (cookie check). The secret is interpolated as a JS string, so a secret list becomes
// "s1,s2" (spec §5, pitfall 2) — we keep that by passing the secret through unchanged.
import { createHash } from "./node_modules/@auth/core/lib/utils/web.js";
import { createCSRFToken } from "./node_modules/@auth/core/lib/actions/callback/oauth/csrf-token.js";

async function runOp(item) {
  if (item === null || typeof item !== "object" || Array.isArray(item)) {
    throw new Error("each op must be a JSON object");
  }
  switch (item.op) {
    case "encode": {
      const params = { token: item.token ?? {}, secret: item.secret, salt: item.salt };
      if (item.maxAge !== undefined) params.maxAge = item.maxAge;
      return { token: await encode(params) };
    }
    case "decode": {
      try {
        const payload = await decode({ token: item.token, secret: item.secret, salt: item.salt });
        return { ok: true, payload: payload ?? null };
      } catch (err) {
        const out = { ok: false, error: String(err?.message ?? err) };
        if (err?.code) out.code = String(err.code);
        return out;
      }
    }
    case "v4encode": {
      const params = { token: item.token ?? {}, secret: item.secret };
      if (item.maxAge !== undefined) params.maxAge = item.maxAge;
      return { token: await nextAuthV4Jwt.encode(params) };
    }
    case "v4decode": {
      try {
        const payload = await nextAuthV4Jwt.decode({ token: item.token, secret: item.secret });
        return { ok: true, payload: payload ?? null };
      } catch (err) {
        return { ok: false, error: String(err?.message ?? err) };
      }
    }
    case "v4session": {
      const cookies = item.token ? { "next-auth.session-token": item.token } : {};
      const res = await nextAuthV4Core.AuthHandler({
        req: {
          action: "session", method: "GET", cookies, query: {}, body: {},
          headers: { host: "localhost:3000" }, host: "http://localhost:3000",
        },
        options: { providers: [], secret: item.secret, logger: { error() {}, warn() {}, debug() {} } },
      });
      return { body: res.body ?? null };
    }
    case "csrf": {
      if (typeof item.token !== "string") throw new Error("csrf: token must be a string");
      // Same expression as createCSRFToken: `${csrfToken}${options.secret}`.
      const cookie = `${item.token}|${await createHash(`${item.token}${item.secret}`)}`;
      // Cross-check with upstream's own verifier: a POST whose body token matches the
      // cookie must be accepted.
      const check = await createCSRFToken({
        options: { secret: item.secret },
        cookieValue: cookie,
        isPost: true,
        bodyValue: item.token,
      });
      return { cookie, verified: check.csrfTokenVerified === true };
    }
    case "batch": {
      if (!Array.isArray(item.items)) throw new Error("batch: items must be an array");
      const results = [];
      for (const sub of item.items) {
        if (sub?.op === "batch") {
          results.push({ error: "batch: nested batches are not supported" });
          continue;
        }
        try {
          results.push(await runOp(sub));
        } catch (err) {
          results.push({ error: String(err?.message ?? err) });
        }
      }
      return { results };
    }
    default:
      throw new Error(`unknown op: ${JSON.stringify(item.op)}`);
  }
}

async function readStdin() {
  const chunks = [];
  for await (const chunk of process.stdin) chunks.push(chunk);
  return Buffer.concat(chunks).toString("utf8");
}

let request;
try {
  request = JSON.parse(await readStdin());
} catch (err) {
  process.stderr.write(`jwt.mjs: stdin is not valid JSON: ${err.message}\n`);
  process.exit(1);
}

let result;
try {
  result = await runOp(request);
} catch (err) {
  // Top-level failures of a single (non-batch) op are still answered in JSON.
  result = { error: String(err?.message ?? err) };
}
process.stdout.write(JSON.stringify(result) + "\n");
