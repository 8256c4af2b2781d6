// A minimal React app on `next-auth/react` — the client Auth.js apps use — for
// next-auth-react.mjs, which bundles it (esbuild) once for next-auth 4 and once for
// next-auth 5 and serves it on the authcore app's origin. The page shows what `useSession`
// holds (`#session`: `data-status` and the session JSON) and hands the client's functions to
// the test as `window.client` (with the hook's `update`).
import { createRoot } from 'react-dom/client';
import {
  SessionProvider, useSession, signIn, signOut, getSession, getCsrfToken, getProviders,
} from 'next-auth/react';

window.client = { signIn, signOut, getSession, getCsrfToken, getProviders, update: null };

function Session() {
  const { data, status, update } = useSession();
  window.client.update = update;
  return <pre id="session" data-status={status}>{JSON.stringify(data ?? null)}</pre>;
}

createRoot(document.getElementById('root')).render(
  <SessionProvider basePath={document.documentElement.dataset.basePath}>
    <Session />
  </SessionProvider>,
);
