#!/usr/bin/env node
// Minimal HTTP server around the real @auth/core (pinned in interop/package.json), configured
// like authcore's demo server (crates/authcore-server) so both can be compared request for
// request by bench/load.sh. Plain node:http, no framework: IncomingMessage -> WHATWG Request ->
// Auth(request, config) -> Response -> ServerResponse.
//
//   npm ci --prefix interop
//   AUTH_SECRET=... node bench/authjs-server.mjs        # listens on 127.0.0.1:${PORT:-3001}
//
// Env: AUTH_SECRET (required), PORT (default 3001), AUTHCORE_DEMO_PASSWORD (default
// "authcore-demo"; the demo user is "demo").

import http from "node:http";

// Imported by file path so the script runs from any working directory without NODE_PATH
// (ESM ignores NODE_PATH); @auth/core's own imports then resolve inside interop/node_modules.
import { Auth } from "../interop/node_modules/@auth/core/index.js";
import Credentials from "../interop/node_modules/@auth/core/providers/credentials.js";

const secret = process.env.AUTH_SECRET;
if (!secret) {
  console.error("authjs-server: AUTH_SECRET is not set");
  process.exit(1);
}
const demoPassword = process.env.AUTHCORE_DEMO_PASSWORD ?? "authcore-demo";
const port = Number(process.env.PORT ?? 3001);
const host = "127.0.0.1";

const config = {
  basePath: "/auth",
  trustHost: true,
  secret,
  providers: [
    Credentials({
      id: "credentials",
      name: "Credentials",
      credentials: {
        username: { label: "Username" },
        password: { label: "Password", type: "password" },
      },
      authorize(c) {
        if (c.username === "demo" && c.password === demoPassword) {
          return { id: "1", name: "Demo User", email: "demo@example.com" };
        }
        return null;
      },
    }),
  ],
};

async function readBody(req) {
  const chunks = [];
  for await (const chunk of req) chunks.push(chunk);
  return Buffer.concat(chunks);
}

async function toRequest(req) {
  const headers = new Headers();
  // rawHeaders keeps repeated headers as sent (IncomingMessage.headers joins or drops some).
  for (let i = 0; i < req.rawHeaders.length; i += 2) {
    headers.append(req.rawHeaders[i], req.rawHeaders[i + 1]);
  }
  const url = `http://${req.headers.host ?? `${host}:${port}`}${req.url}`;
  const init = { method: req.method, headers };
  if (req.method !== "GET" && req.method !== "HEAD") {
    const body = await readBody(req);
    if (body.length > 0) init.body = body;
  }
  return new Request(url, init);
}

async function writeResponse(res, response) {
  res.statusCode = response.status;
  for (const [name, value] of response.headers) {
    if (name !== "set-cookie") res.setHeader(name, value);
  }
  const cookies = response.headers.getSetCookie();
  if (cookies.length > 0) res.setHeader("set-cookie", cookies);
  const body = response.body ? Buffer.from(await response.arrayBuffer()) : undefined;
  res.end(body);
}

const server = http.createServer(async (req, res) => {
  try {
    await writeResponse(res, await Auth(await toRequest(req), config));
  } catch (err) {
    console.error("authjs-server: request failed:", err);
    if (!res.headersSent) {
      res.statusCode = 500;
      res.setHeader("content-type", "text/plain");
    }
    res.end("Internal Server Error");
  }
});

server.listen(port, host, () => {
  console.log(`authjs-server (@auth/core) listening on http://${host}:${port}/auth`);
});

for (const signal of ["SIGINT", "SIGTERM"]) {
  process.on(signal, () => server.close(() => process.exit(0)));
}
