#!/usr/bin/env bash
# Instructions per request of two release builds of authcore-server, counted by valgrind's
# callgrind: repeatable where timings on a shared VM are not (docs/performance.md).
#
#   scripts/callgrind-compare.sh [A] [B]
#       A, B: authcore-server binaries (default: the current release build,
#       $CARGO_TARGET_DIR/release/authcore-server; build it first with
#       `cargo build --release -p authcore-server`). Copy a baseline away before rebuilding.
#
# Each binary runs alone under `valgrind --tool=callgrind --instr-atstart=no` with one worker,
# no database and rate limits off (the demo server of bench/load.sh). After WARMUP
# unmeasured requests of each kind, each kind is counted on its own: the counters are zeroed,
# instrumentation turned on, N requests sent one after the other (a curl each, so a
# connection each, as a browser's first request), instrumentation turned off and the
# counters dumped; the dump's total over N is the figure. Every response is checked (status,
# and for the sign-in its Location).
#
# With OIDC=1 the server is the OpenID Provider of bench/load.sh instead (SQLite, an
# Ed25519 key, one client "bench"), and the kinds are its token endpoint (client_credentials,
# client_secret_basic) and userinfo (the demo user's access token from a code flow).
# OPAQUE=1 with it gives the client opaque access tokens (sealed, not signed).
#
# With KEEPALIVE=1 the N requests of a kind go over one connection (one curl, each request
# after the last answer), as wrk's load does: the figure is then a request's own cost,
# without a connection's accept, set-up and close.
#
# Env: N (100), WARMUP (20), PORT (3079), AUTH_SECRET (a fixed secret), OIDC (0), OPAQUE (0),
#      KEEPALIVE (0), KEEP (a directory: each kind's dump is copied there as <A|B>.<kind>.out,
#      for `callgrind_annotate --inclusive=yes KEEP/B.signin.out`),
#      CARGO_TARGET_DIR (respected for the default binary).
# Output: a Markdown table on stdout (kind, A, B, change); progress on stderr.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
N=${N:-100}
WARMUP=${WARMUP:-20}
PORT=${PORT:-3079}
export AUTH_SECRET=${AUTH_SECRET:-authcore-callgrind-secret-7c1e5b}
export AUTHCORE_DEMO_PASSWORD=authcore-demo
BASE="http://127.0.0.1:$PORT"

die() {
  echo "callgrind-compare.sh: $*" >&2
  exit 1
}

target_dir=${CARGO_TARGET_DIR:-target}
[[ $target_dir = /* ]] || target_dir="$ROOT/$target_dir"
CURRENT="$target_dir/release/authcore-server"
A=${1:-$CURRENT}
B=${2:-$CURRENT}
for bin in "$A" "$B"; do
  [[ -x $bin ]] || die "$bin is not an executable (build: cargo build --release -p authcore-server)"
done
[[ $N =~ ^[1-9][0-9]*$ && $WARMUP =~ ^[0-9]+$ ]] || die "N and WARMUP must be whole numbers (N > 0)"
for tool in valgrind callgrind_control curl; do
  command -v "$tool" >/dev/null || die "needs $tool"
done

WORK=$(mktemp -d "${TMPDIR:-/tmp}/authcore-callgrind.XXXXXX")
PID=""
stop_server() {
  [[ -n $PID ]] || return 0
  kill -INT "$PID" 2>/dev/null || true
  for _ in $(seq 100); do # up to ~20 s: valgrind writes its last dump on the way out
    kill -0 "$PID" 2>/dev/null || break
    sleep 0.2
  done
  kill -9 "$PID" 2>/dev/null || true
  wait "$PID" 2>/dev/null || true
  PID=""
}
cleanup() {
  stop_server
  rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# The kinds of request, in the table's order, and their labels.
KINDS=(signin signin_page session csrf providers)
[[ ${OIDC:-0} == 0 ]] || KINDS=(oidc_token oidc_userinfo)
declare -A LABEL=(
  [oidc_token]="POST /oidc/token (client_credentials)"
  [oidc_userinfo]="GET /oidc/userinfo (Bearer access token)"
  [signin]="POST /auth/callback/credentials"
  [signin_page]="GET /auth/signin (HTML page)"
  [session]="GET /auth/session (valid JWT)"
  [csrf]="GET /auth/csrf"
  [providers]="GET /auth/providers"
)

# start <side> <binary>: the server under callgrind, instrumentation off, answering.
start() {
  local side=$1 bin=$2
  if curl -s -o /dev/null --max-time 1 "$BASE/"; then
    die "port $PORT is already in use; stop whatever listens there or set PORT"
  fi
  local op=(AUTHCORE_DATABASE_URL=none)
  [[ ${OIDC:-0} == 0 ]] || op=(AUTHCORE_DATABASE_URL="sqlite://$WORK/$side.db?mode=rwc" AUTHCORE_CONFIG="$(op_config)")
  env AUTHCORE_WORKERS=1 AUTHCORE_RATE_LIMITS=off "${op[@]}" \
    AUTHCORE_ADDR="127.0.0.1:$PORT" RUST_LOG=warn \
    valgrind --tool=callgrind --instr-atstart=no --callgrind-out-file="$WORK/$side.out" \
    "$bin" >"$WORK/$side.log" 2>&1 &
  PID=$!
  for _ in $(seq 300); do # up to ~60 s
    kill -0 "$PID" 2>/dev/null || {
      tail -n 20 "$WORK/$side.log" >&2
      PID=""
      die "$bin exited during start-up (log above)"
    }
    curl -s -o /dev/null --max-time 2 "$BASE/auth/providers" && return 0
    sleep 0.2
  done
  tail -n 20 "$WORK/$side.log" >&2
  die "$bin did not answer on $BASE within 60 s (log above)"
}

# sign_in <jar>: the credentials flow a browser does; prints the CSRF token.
sign_in() {
  local jar=$1 csrf status
  csrf=$(curl -sf --max-time 30 -c "$jar" -b "$jar" "$BASE/auth/csrf" |
    sed -n 's/.*"csrfToken" *: *"\([0-9a-f]*\)".*/\1/p')
  [[ -n $csrf ]] || die "GET /auth/csrf gave no csrfToken"
  status=$(curl -s --max-time 30 -o /dev/null -w '%{http_code} %{redirect_url}' -c "$jar" -b "$jar" \
    --data "csrfToken=$csrf&username=demo&password=$AUTHCORE_DEMO_PASSWORD" "$BASE/auth/callback/credentials")
  [[ $status == 302* && $status != *error=* ]] || die "credentials sign-in failed: $status"
  echo "$csrf"
}

jar_cookie() { # <jar> <name>: the cookie value as stored
  awk -v n="$2" -F '\t' '$6 == n { v = $7 } END { print v }' "$1"
}

# The OpenID Provider's configuration (as bench/load.sh writes it): prints its path.
OP_SECRET=bench-client-secret-0123456789abcdef0123
OP_REDIRECT=http://127.0.0.1:9/callback
op_config() {
  [[ -f $WORK/op.pem ]] || openssl genpkey -algorithm ed25519 -out "$WORK/op.pem" 2>/dev/null ||
    die "openssl could not make the provider's key"
  cat >"$WORK/op.toml" <<TOML
[auth]
url = "$BASE/auth"
[oidc_provider]
signing_keys = ["$WORK/op.pem"]
[[oidc_provider.clients]]
id = "bench"
secret = "$OP_SECRET"
redirect_uris = ["$OP_REDIRECT"]
grant_types = ["authorization_code", "client_credentials"]
TOML
  [[ ${OPAQUE:-0} == 0 ]] || echo 'access_token_format = "opaque"' >>"$WORK/op.toml"
  echo "$WORK/op.toml"
}

# access_token <jar of a signed-in session>: the demo user's access token (a code flow).
access_token() {
  local location code token
  location=$(curl -s --max-time 30 -o /dev/null -w '%{redirect_url}' -b "$1" \
    "$BASE/oidc/authorize?client_id=bench&response_type=code&scope=openid%20email&redirect_uri=$OP_REDIRECT")
  code=$(sed -n 's/.*[?&]code=\([^&]*\).*/\1/p' <<<"$location")
  [[ -n $code ]] || die "no code from /oidc/authorize: $location"
  token=$(curl -s --max-time 30 -u "bench:$OP_SECRET" --data-urlencode grant_type=authorization_code \
    --data-urlencode "code=$code" --data-urlencode "redirect_uri=$OP_REDIRECT" "$BASE/oidc/token" |
    sed -n 's/.*"access_token":"\([^"]*\)".*/\1/p')
  [[ -n $token ]] || die "no access token from /oidc/token"
  echo "$token"
}

# send <kind> <count>: count requests of one kind, one after the other; stops the script
# unless every answer is the expected one.
send() {
  local kind=$1 count=$2 args=() expect=200 url
  case $kind in
    signin)
      url="$BASE/auth/callback/credentials"
      args=(-H "Cookie: authjs.csrf-token=$CSRF_COOKIE"
        --data "csrfToken=$CSRF&username=demo&password=$AUTHCORE_DEMO_PASSWORD")
      expect=302
      ;;
    signin_page) url="$BASE/auth/signin" ;;
    session) url="$BASE/auth/session" args=(-H "Cookie: authjs.session-token=$SESSION_COOKIE") ;;
    csrf) url="$BASE/auth/csrf" ;;
    providers) url="$BASE/auth/providers" ;;
    oidc_token) url="$BASE/oidc/token" args=(-u "bench:$OP_SECRET" --data grant_type=client_credentials) ;;
    oidc_userinfo) url="$BASE/oidc/userinfo" args=(-H "Authorization: Bearer $ACCESS_TOKEN") ;;
    *) die "unknown kind $kind" ;;
  esac
  local i answer
  if [[ ${KEEPALIVE:-0} != 0 ]]; then
    # One curl for all of them: one connection, each request after the last answer.
    local config="$WORK/keepalive.curl"
    for ((i = 0; i < count; i++)); do
      printf 'url = "%s"\noutput = "/dev/null"\n' "$url"
    done >"$config"
    curl -s --max-time 300 -w '%{http_code} %{redirect_url} %{num_connects}\n' "${args[@]}" -K "$config" >"$WORK/keepalive.out" ||
      die "${LABEL[$kind]}: curl failed"
    (($(wc -l <"$WORK/keepalive.out") == count)) || die "${LABEL[$kind]}: not $count answers"
    while read -r answer; do
      [[ $answer == "$expect"* && $answer != *error=* ]] ||
        die "${LABEL[$kind]}: answered $answer, expected $expect"
    done <"$WORK/keepalive.out"
    # Every request after the first on the connection the first opened.
    (($(awk '$NF != 0' "$WORK/keepalive.out" | wc -l) <= 1)) ||
      die "${LABEL[$kind]}: curl opened more than one connection"
    return 0
  fi
  for ((i = 0; i < count; i++)); do
    answer=$(curl -s --max-time 30 -o /dev/null -w '%{http_code} %{redirect_url}' "${args[@]}" "$url") ||
      die "${LABEL[$kind]}: curl failed ($answer)"
    [[ $answer == "$expect"* && $answer != *error=* ]] ||
      die "${LABEL[$kind]}: answered $answer, expected $expect"
  done
}

# control <option...>: callgrind_control on the server, bounded.
control() {
  timeout 60 callgrind_control "$@" "$PID" >>"$WORK/control.log" 2>&1 ||
    die "callgrind_control $* failed (log: $(tail -n 3 "$WORK/control.log"))"
}

declare -A RESULT # [side:kind] = instructions per request

# measure <side> <binary>
measure() {
  local side=$1 bin=$2 jar="$WORK/$1.jar" kind
  echo "$side: $bin" >&2
  start "$side" "$bin"
  CSRF=$(sign_in "$jar")
  CSRF_COOKIE=$(jar_cookie "$jar" authjs.csrf-token)
  SESSION_COOKIE=$(jar_cookie "$jar" authjs.session-token)
  [[ -n $CSRF_COOKIE && -n $SESSION_COOKIE ]] || die "the sign-in set no csrf or session cookie"
  curl -sf --max-time 30 -H "Cookie: authjs.session-token=$SESSION_COOKIE" "$BASE/auth/session" |
    grep -q '"demo@example.com"' || die "GET /auth/session with the new session cookie does not answer the demo user"
  [[ ${OIDC:-0} == 0 ]] || ACCESS_TOKEN=$(access_token "$jar")
  for kind in "${KINDS[@]}"; do
    send "$kind" "$WARMUP"
  done
  for kind in "${KINDS[@]}"; do
    echo "  $side: ${LABEL[$kind]} x $N ..." >&2
    local before after dump total
    before=$(ls "$WORK/$side.out".* 2>/dev/null || true)
    control -z
    control -i on
    send "$kind" "$N"
    control -i off
    control -d
    after=$(ls "$WORK/$side.out".* 2>/dev/null || true)
    dump=$(comm -13 <(sort <<<"$before") <(sort <<<"$after") | grep . | tail -n 1 || true)
    [[ -n $dump ]] || die "callgrind_control -d wrote no dump file"
    total=$(awk '$1 == "totals:" { print $2 }' "$dump")
    [[ $total =~ ^[0-9]+$ ]] || die "no totals: line in $dump"
    RESULT[$side:$kind]=$((total / N))
    [[ -z ${KEEP:-} ]] || { mkdir -p "$KEEP" && cp "$dump" "$KEEP/$side.$kind.out"; }
  done
  stop_server
}

measure A "$A"
measure B "$B"

kilo() { awk -v v="$1" 'BEGIN { printf "%.1fk", v / 1000 }'; }
echo "# Instructions per request (callgrind, $N requests after $WARMUP unmeasured of each kind$([[ ${KEEPALIVE:-0} == 0 ]] && echo ", a connection each" || echo ", one connection for each kind's"))"
echo
echo "- A: $A"
echo "- B: $B"
echo
echo "| request | A | B | change |"
echo "|---|---:|---:|---:|"
for kind in "${KINDS[@]}"; do
  a=${RESULT[A:$kind]} b=${RESULT[B:$kind]}
  change=$(awk -v a="$a" -v b="$b" 'BEGIN { if (a > 0) printf "%+.2f %%", 100 * (b - a) / a; else print "-" }')
  echo "| ${LABEL[$kind]} | $(kilo "$a") | $(kilo "$b") | $change |"
done
