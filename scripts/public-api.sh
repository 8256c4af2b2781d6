#!/usr/bin/env bash
# The public API of authcore, one line per item (scripts/public-api.py over rustdoc's JSON),
# compared with crates/authcore/public-api.txt: a change to the API fails here until the file
# is updated with it (`scripts/public-api.sh --bless`), so every change shows in review.
# rustdoc's JSON output is unstable: RUSTC_BOOTSTRAP lets the stable toolchain write it. The
# variable goes to rustdoc alone, through a RUSTDOC wrapper: given to cargo, the build scripts
# of proc-macro2 and thiserror would see it and the dependencies would be built again, then
# again by the next build without it. rustdoc reads the dependencies' metadata from the
# check build that clippy and `cargo doc` share.
set -euo pipefail
cd "$(dirname "$0")/.."
target="${CARGO_TARGET_DIR:-target}"
mkdir -p "$target"
wrapper="$target/rustdoc-json"
printf '#!/bin/sh\nRUSTC_BOOTSTRAP=1 exec rustdoc "$@"\n' > "$wrapper"
chmod +x "$wrapper"
RUSTDOC="$wrapper" RUSTDOCFLAGS="-Z unstable-options --output-format json" \
  cargo doc -p authcore --no-deps --locked -q
python3 scripts/public-api.py "$target/doc/authcore.json" > "$target/public-api.txt"
if [ "${1:-}" = "--bless" ]; then
  cp "$target/public-api.txt" crates/authcore/public-api.txt
  echo "crates/authcore/public-api.txt updated ($(wc -l < crates/authcore/public-api.txt) items)"
elif ! diff -u crates/authcore/public-api.txt "$target/public-api.txt"; then
  echo "authcore's public API changed (above: - removed, + added). If intended, run scripts/public-api.sh --bless and commit the file." >&2
  exit 1
fi
