#!/usr/bin/env node
// Writes crates/authcore/src/brand_icons.rs: the brand icons of the built-in sign-in page's
// provider buttons, vendored from the `simple-icons` npm package (CC0-1.0) at a pinned
// version (scripts/package.json). The generated file is committed; nothing is fetched at
// build or run time (the page's CSP allows no third-party images, and authcore serves no
// CDN assets), and the build does not run this script.
//
//   npm ci --prefix scripts
//   node scripts/vendor-brand-icons.mjs          # (re)writes the Rust file
//   node scripts/vendor-brand-icons.mjs --check  # exits 1 when the file is stale
//
// The mapping from Auth.js provider ids to simple-icons slugs is by hand (below). When the
// installed @auth/core is there (`npm ci --prefix interop`), every one of its OAuth ids must
// be either mapped or listed in UNMAPPED, so a new Auth.js provider is not forgotten. A
// mapped slug missing from simple-icons (brands are removed at their owners' request) is an
// error: move the id to UNMAPPED and it falls back to the monogram.
import { readFileSync, writeFileSync, existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import * as simpleIcons from 'simple-icons';

const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, '..');
const out = join(root, 'crates/authcore/src/brand_icons.rs');
const pkg = JSON.parse(readFileSync(join(here, 'node_modules/simple-icons/package.json'), 'utf8'));

// Auth.js provider module id → simple-icons slug. `providerId` where the provider's id
// differs from its module name (ory-hydra's provider is `hydra`).
const MAPPED = [
  { id: '42-school', slug: '42' },
  { id: 'apple', slug: 'apple' },
  { id: 'atlassian', slug: 'atlassian' },
  { id: 'auth0', slug: 'auth0' },
  { id: 'authentik', slug: 'authentik' },
  { id: 'battlenet', slug: 'battledotnet' },
  { id: 'bitbucket', slug: 'bitbucket' },
  { id: 'box', slug: 'box' },
  { id: 'bungie', slug: 'bungie' },
  { id: 'click-up', slug: 'clickup' },
  { id: 'discord', slug: 'discord' },
  { id: 'dribbble', slug: 'dribbble' },
  { id: 'dropbox', slug: 'dropbox' },
  { id: 'facebook', slug: 'facebook' },
  { id: 'faceit', slug: 'faceit' },
  { id: 'figma', slug: 'figma' },
  { id: 'foursquare', slug: 'foursquare' },
  { id: 'fusionauth', slug: 'fusionauth' },
  { id: 'github', slug: 'github' },
  { id: 'gitlab', slug: 'gitlab' },
  { id: 'google', slug: 'google' },
  { id: 'hubspot', slug: 'hubspot' },
  { id: 'huggingface', slug: 'huggingface' },
  { id: 'instagram', slug: 'instagram' },
  // Kakao Login's mark is the KakaoTalk speech bubble (`kakao` is the wordmark).
  { id: 'kakao', slug: 'kakaotalk' },
  { id: 'keycloak', slug: 'keycloak' },
  { id: 'line', slug: 'line' },
  { id: 'mailchimp', slug: 'mailchimp' },
  { id: 'mailru', slug: 'maildotru' },
  { id: 'mastodon', slug: 'mastodon' },
  { id: 'mattermost', slug: 'mattermost' },
  { id: 'medium', slug: 'medium' },
  { id: 'naver', slug: 'naver' },
  { id: 'netlify', slug: 'netlify' },
  { id: 'nextcloud', slug: 'nextcloud' },
  { id: 'notion', slug: 'notion' },
  { id: 'okta', slug: 'okta' },
  { id: 'ory-hydra', providerId: 'hydra', slug: 'ory' },
  { id: 'osu', slug: 'osu' },
  { id: 'patreon', slug: 'patreon' },
  { id: 'pinterest', slug: 'pinterest' },
  { id: 'reddit', slug: 'reddit' },
  { id: 'roblox', slug: 'roblox' },
  { id: 'simplelogin', slug: 'simplelogin' },
  { id: 'spotify', slug: 'spotify' },
  { id: 'strava', slug: 'strava' },
  { id: 'threads', slug: 'threads' },
  { id: 'tiktok', slug: 'tiktok' },
  { id: 'todoist', slug: 'todoist' },
  { id: 'trakt', slug: 'trakt' },
  { id: 'twitch', slug: 'twitch' },
  // Twitter is X; simple-icons has no Twitter bird any more.
  { id: 'twitter', slug: 'x' },
  { id: 'vk', slug: 'vk' },
  { id: 'webex', slug: 'webex' },
  { id: 'wechat', slug: 'wechat' },
  { id: 'wikimedia', slug: 'wikimediafoundation' },
  { id: 'wordpress', slug: 'wordpress' },
];

// simple-icons has only the brand's wordmark, unreadable at the button's 16 px.
const WORDMARK = 'only a wordmark in simple-icons, unreadable at 16 px';

// Auth.js ids without an icon here: their buttons keep the monogram. Why, per id.
const UNMAPPED = {
  asgardeo: 'not in simple-icons',
  'azure-ad': 'Microsoft marks are not in simple-icons',
  'azure-ad-b2c': 'Microsoft marks are not in simple-icons',
  'azure-devops': 'Microsoft marks are not in simple-icons',
  'bankid-no': 'not in simple-icons',
  beyondidentity: 'not in simple-icons',
  'boxyhq-saml': 'not in simple-icons',
  cognito: 'Amazon / AWS marks are not in simple-icons',
  coinbase: WORDMARK,
  concept2: 'not in simple-icons',
  descope: 'not in simple-icons',
  'duende-identity-server6': 'not in simple-icons',
  eventbrite: 'not in simple-icons',
  eveonline: 'not in simple-icons',
  freshbooks: 'not in simple-icons',
  frontegg: 'not in simple-icons',
  'identity-server4': 'not in simple-icons',
  kinde: 'not in simple-icons',
  linkedin: 'removed from simple-icons at the owner\'s request',
  logto: 'not in simple-icons',
  loops: 'an email provider in authcore (a form, not a button)',
  'microsoft-entra-id': 'Microsoft marks are not in simple-icons',
  netsuite: 'Oracle marks are not in simple-icons',
  onelogin: 'not in simple-icons',
  osso: 'not in simple-icons',
  passage: 'not in simple-icons (1Password\'s mark is not Passage\'s)',
  'ping-id': 'not in simple-icons',
  pipedrive: 'not in simple-icons',
  salesforce: 'removed from simple-icons at the owner\'s request',
  slack: 'removed from simple-icons at the owner\'s request',
  'united-effects': 'not in simple-icons',
  vipps: 'not in simple-icons',
  workos: 'not in simple-icons',
  yandex: 'not in simple-icons (only Yandex Cloud, another mark)',
  zitadel: 'not in simple-icons',
  zoho: WORDMARK,
  zoom: WORDMARK,
};

const fail = (msg) => {
  console.error(`vendor-brand-icons: ${msg}`);
  process.exit(1);
};

const bySlug = new Map(
  Object.values(simpleIcons)
    .filter((i) => i && typeof i === 'object' && typeof i.slug === 'string')
    .map((i) => [i.slug, i]),
);

// Every Auth.js OAuth id is mapped or knowingly unmapped (when @auth/core is installed).
const types = join(root, 'interop/node_modules/@auth/core/providers/provider-types.d.ts');
if (existsSync(types)) {
  const text = readFileSync(types, 'utf8');
  const oauth = text.match(/OAuthProviderId\s*=\s*([^;]+);/);
  if (!oauth) fail(`no OAuthProviderId in ${types}`);
  const ids = [...oauth[1].matchAll(/"([^"]+)"/g)].map((m) => m[1]);
  const known = new Set([...MAPPED.map((m) => m.id), ...Object.keys(UNMAPPED)]);
  const missing = ids.filter((id) => !known.has(id));
  if (missing.length) fail(`Auth.js ids neither mapped nor in UNMAPPED: ${missing.join(', ')}`);
  const stale = [...known].filter((id) => !ids.includes(id));
  if (stale.length) fail(`ids not in @auth/core any more: ${stale.join(', ')}`);
} else {
  console.error(`vendor-brand-icons: ${types} is missing (npm ci --prefix interop); coverage not checked`);
}

// Only characters of SVG path data: no markup can come through into the page.
const PATH_DATA = /^[MmLlHhVvCcSsQqTtAaZz0-9.,eE +-]+$/;
const rows = MAPPED.map((m) => {
  if (UNMAPPED[m.id]) fail(`${m.id} is both mapped and unmapped`);
  const icon = bySlug.get(m.slug);
  if (!icon) fail(`simple-icons ${pkg.version} has no "${m.slug}" (for ${m.id}): move it to UNMAPPED`);
  if (!/viewBox="0 0 24 24"/.test(icon.svg)) fail(`${m.slug} is not on a 24x24 viewBox`);
  if (!PATH_DATA.test(icon.path)) fail(`${m.slug}: unexpected characters in its path data`);
  const licence = icon.license
    ? `; licence: ${icon.license.type}${icon.license.url ? ` ${icon.license.url}` : ''}`
    : '';
  const guidelines = icon.guidelines ? `; guidelines: ${icon.guidelines}` : '';
  return {
    key: m.providerId ?? m.id,
    comment: `${icon.title} (simple-icons \`${icon.slug}\`${licence}${guidelines})`,
    path: icon.path,
  };
}).sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));

const keys = rows.map((r) => r.key);
if (new Set(keys).size !== keys.length) fail('duplicate provider ids');

const unmapped = Object.keys(UNMAPPED).sort();
const wrap = (words, prefix, width = 92) => {
  const lines = [];
  let line = prefix;
  for (const w of words) {
    if (line.length + w.length + 1 > width && line !== prefix) {
      lines.push(line.trimEnd());
      line = prefix;
    }
    line += `${w} `;
  }
  lines.push(line.trimEnd());
  return lines.join('\n');
};

const rust = `// @generated by scripts/vendor-brand-icons.mjs from simple-icons ${pkg.version}: do not edit
// by hand; change the script's mapping and run it again (\`npm ci --prefix scripts &&
// node scripts/vendor-brand-icons.mjs\`).
//
// The icon path data is from simple-icons (https://simpleicons.org), released under CC0-1.0
// (public domain dedication) by the Simple Icons Collaborators; where simple-icons records a
// licence or brand guidelines for an icon, the comment of its row says so. The brand marks
// themselves are trademarks of their respective owners: they are shown only to identify the
// provider a button signs in with.

//! Brand icons of the sign-in page's provider buttons, vendored at build time (no CDN:
//! the page's CSP loads nothing from elsewhere and the icons are inline SVG).
//!
//! Auth.js ids without an icon, whose buttons keep the monogram:
${wrap(unmapped.map((id) => `\`${id}\`,`), '//! ').replace(/,$/, '.')}

/// The SVG path data (\`d\`, on a 24×24 viewBox) of the brand icon of an Auth.js provider
/// id, if there is one. Path data only: digits, spaces, \`.\`, \`,\`, \`-\`, \`+\` and path
/// command letters, nothing that needs escaping in HTML.
#[rustfmt::skip]
pub(crate) fn brand_icon(provider_id: &str) -> Option<&'static str> {
    Some(match provider_id {
${rows.map((r) => `        // ${r.comment}\n        "${r.key}" => "${r.path}",`).join('\n')}
        _ => return None,
    })
}

/// Every provider id with an icon, in order.
#[cfg(test)]
pub(crate) const WITH_ICON: &[&str] = &[
${rows.map((r) => `    "${r.key}",`).join('\n')}
];
`;

if (process.argv.includes('--check')) {
  const current = existsSync(out) ? readFileSync(out, 'utf8') : '';
  if (current !== rust) fail(`${out} is stale: run node scripts/vendor-brand-icons.mjs`);
  console.log(`${out} is up to date (simple-icons ${pkg.version}, ${rows.length} icons)`);
} else {
  writeFileSync(out, rust);
  console.log(`wrote ${out}: ${rows.length} icons from simple-icons ${pkg.version}, ${unmapped.length} ids unmapped`);
}
