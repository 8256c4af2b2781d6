#!/usr/bin/env bash
# Writes crates/authcore-server/link-order.txt: the symbols of every function the release
# build of authcore-server runs from start-up through one request of each kind the demo
# serves (bench/load.sh's endpoints and sign-out), as valgrind's callgrind saw them. crates/authcore-server/build.rs hands the file to the linker (LLD's
# --symbol-ordering-file), which places those functions next to each other: the pages of
# code the server touches are then close together instead of scattered over the whole text
# section, and the kernel maps (and counts in the RSS) far fewer of the binary's pages.
#
#   scripts/link-order.sh        # builds (release), traces, rewrites the file, rebuilds
#
# The names carry hashes of the crates' versions and resolved features: the file matches a
# build of the server alone (`cargo build --release -p authcore-server`, as `cargo run` and
# bench/load.sh make it), not one made in the same invocation as an example or a test.
# A symbol that the build no longer has is skipped by the linker, so a stale file only
# loses part of its effect; rerun this after larger changes (the README's RSS figure
# says how much it still buys: compare with AUTHCORE_LINK_ORDER=off).
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
OUT="$ROOT/crates/authcore-server/link-order.txt"
PORT=${PORT:-3077}
target_dir=${CARGO_TARGET_DIR:-target}
[[ $target_dir = /* ]] || target_dir="$ROOT/$target_dir"
BIN="$target_dir/release/authcore-server"
WORK=$(mktemp -d "${TMPDIR:-/tmp}/authcore-link-order.XXXXXX")
PID=""
cleanup() {
  [[ -z $PID ]] || kill "$PID" 2>/dev/null || true
  rm -rf "$WORK"
}
trap cleanup EXIT

command -v valgrind >/dev/null || {
  echo "link-order.sh: needs valgrind" >&2
  exit 1
}
cargo build --release -p authcore-server --bin authcore-server >&2

export AUTH_SECRET=link-order-secret-0123456789abcdef AUTHCORE_DEMO_PASSWORD=authcore-demo
AUTHCORE_RATE_LIMITS=off AUTHCORE_DATABASE_URL=none AUTHCORE_ADDR="127.0.0.1:$PORT" RUST_LOG=warn \
  valgrind --tool=callgrind --demangle=no --compress-strings=no --dump-instr=no \
  --callgrind-out-file="$WORK/callgrind.out" "$BIN" >"$WORK/server.log" 2>&1 &
PID=$!
B="http://127.0.0.1:$PORT"
for _ in $(seq 300); do
  curl -s -o /dev/null --max-time 1 "$B/auth/providers" && break
  kill -0 "$PID" 2>/dev/null || {
    cat "$WORK/server.log" >&2
    exit 1
  }
  sleep 0.2
done
J="$WORK/jar"
get() { curl -sf -o /dev/null --max-time 20 "$@"; }
csrf=$(curl -sf --max-time 20 -c "$J" -b "$J" "$B/auth/csrf" | sed -n 's/.*"csrfToken" *: *"\([0-9a-f]*\)".*/\1/p')
[[ -n $csrf ]] || {
  echo "link-order.sh: no CSRF token" >&2
  exit 1
}
get -c "$J" -b "$J" --data "csrfToken=$csrf&username=demo&password=$AUTHCORE_DEMO_PASSWORD" "$B/auth/callback/credentials"
for _ in 1 2; do
  get -b "$J" "$B/auth/session"
  get "$B/auth/session"
  get "$B/auth/signin"
  get "$B/auth/csrf"
  get "$B/auth/providers"
done
get -b "$J" -c "$J" --data "csrfToken=$csrf" "$B/auth/signout"
kill -INT "$PID"
wait "$PID" || true
PID=""

# Every function callgrind named (`fn=` / `cfn=`), sorted (they are all in use, so their
# order among themselves matters little, and a sorted file changes little between runs);
# addresses without a name are left out. Names outside the binary (libc's) are skipped by
# the linker.
sed -n -E 's/^c?fn=(\([0-9]+\) ?)?//p' "$WORK/callgrind.out" | grep -v -E '^(0x[0-9a-f]+)?$' |
  LC_ALL=C sort -u >"$OUT.new"
mv "$OUT.new" "$OUT"
echo "link-order.sh: $(wc -l <"$OUT") symbols in $OUT" >&2
cargo build --release -p authcore-server --bin authcore-server >&2
