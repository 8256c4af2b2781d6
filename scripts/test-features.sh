#!/usr/bin/env bash
# Builds authcore and runs its unit tests with no optional feature and with each feature
# alone (the integration tests, which drive every provider type, run with the defaults in
# the workspace's `cargo test`). Features come from crates/authcore/Cargo.toml, so a new one
# is tested without editing this script.
set -euo pipefail
cd "$(dirname "$0")/.."

features=$(cargo metadata --no-deps --format-version 1 --locked |
  python3 -c 'import json,sys
m = json.load(sys.stdin)
p = next(p for p in m["packages"] if p["name"] == "authcore")
print(" ".join(f for f in p["features"] if f != "default"))')

for feature in "" $features; do
  echo "==> authcore with ${feature:-no optional feature}"
  cargo test -p authcore --lib --locked --no-default-features --features "$feature" -q
done
