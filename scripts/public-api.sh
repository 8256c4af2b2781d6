#!/usr/bin/env bash
# The public API of the library crates a host builds on (authcore, authcore-keys,
# authcore-gateway, authcore-oidc-provider), one line per item (scripts/public-api.py over
# rustdoc's JSON), each compared with crates/<name>/public-api.txt: a change to an API fails
# here until its file is updated with it (`scripts/public-api.sh --bless` writes them all),
# so every change shows in review.
# rustdoc's JSON output is unstable: RUSTC_BOOTSTRAP lets the stable toolchain write it. The
# variable goes to rustdoc alone, through a RUSTDOC wrapper: given to cargo, the build scripts
# of proc-macro2 and thiserror would see it and the dependencies would be built again, then
# again by the next build without it. rustdoc reads the dependencies' metadata from the
# check build that clippy and `cargo doc` share.
set -euo pipefail
cd "$(dirname "$0")/.."
crates=(authcore authcore-keys authcore-gateway authcore-oidc-provider)
target="${CARGO_TARGET_DIR:-target}"
mkdir -p "$target"
wrapper="$target/rustdoc-json"
printf '#!/bin/sh\nRUSTC_BOOTSTRAP=1 exec rustdoc "$@"\n' > "$wrapper"
chmod +x "$wrapper"
packages=()
for c in "${crates[@]}"; do packages+=(-p "$c"); done
RUSTDOC="$wrapper" RUSTDOCFLAGS="-Z unstable-options --output-format json" \
  cargo doc "${packages[@]}" --no-deps --locked -q
changed=()
for c in "${crates[@]}"; do
  listed="crates/$c/public-api.txt"
  current="$target/public-api-$c.txt"
  python3 scripts/public-api.py "$target/doc/${c//-/_}.json" > "$current"
  if [ "${1:-}" = "--bless" ]; then
    cp "$current" "$listed"
    echo "$listed updated ($(wc -l < "$listed") items)"
  elif ! diff -u "$listed" "$current"; then
    changed+=("$c")
  fi
done
if [ "${#changed[@]}" -gt 0 ]; then
  echo "the public API of ${changed[*]} changed (above: - removed, + added). If intended, run scripts/public-api.sh --bless and commit the files." >&2
  exit 1
fi
