// The "browser" of the relying-party scripts: fetch with the signed-in user's cookie,
// following authcore's redirects until the redirect URI; the URL it arrives at.
export async function browse(url, headers, redirectUri) {
  let current = url;
  for (let hop = 0; hop < 10; hop++) {
    if (current.href.startsWith(redirectUri)) return current;
    const res = await fetch(current, { headers, redirect: 'manual' });
    const location = res.headers.get('location');
    if (!location) throw new Error(`no redirect from ${current}: ${res.status} ${await res.text()}`);
    current = new URL(location, current);
  }
  throw new Error('too many redirects');
}
