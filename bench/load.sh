#!/usr/bin/env bash
# Load comparison: authcore's demo server (crates/authcore-server) vs the real @auth/core
# (bench/authjs-server.mjs), same endpoints, same credentials provider, same secret.
#
# Each server runs alone, pinned to CPU 0; wrk runs pinned to CPU 1 (-t1 -c32 --latency),
# after a warm-up run. Every response is checked by bench/wrk-check.lua; a scenario with
# a wrong answer is flagged and makes the script exit 1.
#
#   bench/load.sh                  # both servers (builds authcore-server --release first)
#   ONLY=node bench/load.sh        # only @auth/core;  ONLY=rust: only authcore
#   ONLY=op bench/load.sh          # only the OpenID Providers: authcore and oidc-provider
#   DURATION=30s WARMUP=5s bench/load.sh
#
# Env: DURATION (10s), WARMUP (2s), CONNECTIONS (32), ONLY (both|rust|node|op),
#      AUTH_SECRET (fixed bench secret), RUST_PORT (3000), NODE_PORT (3001), CEILING_PORT (3002),
#      CARGO_TARGET_DIR (respected), SKIP_BUILD=1 (use the existing release binary),
#      SCALING=0 (skip the two-core run of the demo), SIGNIN_PAGE_BYTES (5404: the body
#      length of the page ceiling, the ceiling server answering a page as long as the demo's
#      sign-in page),
#      BASELINE_BIN, BASELINE_ENV, ROUNDS, AB_SCENARIOS (an A/B run against an older build
#      or other settings, see below),
#      POSTGRES_URL (database sessions on PostgreSQL; default the local server's
#      `authcore_bench` database, created when missing; empty: skip that scenario).
# authcore also runs as an OpenID Provider (SQLite, [oidc_provider] with one client):
# the token endpoint (client_credentials) and userinfo, as fractions of the ceiling, beside
# panva's oidc-provider configured alike (bench/oidc-provider-server.mjs, from
# testsupport/oidc/node_modules, pinned to the same CPU): OIDC_PROVIDER=0 skips it,
# OIDC_PROVIDER_PORT (3003) is its port, OP_ROUNDS (1) alternates the two that many times
# (the table gives each one's mean).
# Output: a table on stdout, also written to bench/results/latest.md (git-ignored), with the
# ceiling, the page ceiling, RSS, the server's CPU time per request (user + system, all
# threads, over the measured run) for the session read on one core and with two workers,
# and the CPU time the hypervisor stole from the server's CPU during each measured run
# (/proc/stat; runs above STEAL_LIMIT %, default 2, are listed: on a shared VM they measure
# the neighbours); for the OpenID Providers, each one's CPU time per request, the share of
# the run it was busy and the share of wrk's CPU stolen (a rate that falls with the VM is
# then told apart from work that grew).
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"

DURATION=${DURATION:-10s}
WARMUP=${WARMUP:-2s}
CONNECTIONS=${CONNECTIONS:-32}
ONLY=${ONLY:-both}
RUST_PORT=${RUST_PORT:-3000}
NODE_PORT=${NODE_PORT:-3001}
CEILING_PORT=${CEILING_PORT:-3002}
OIDC_PROVIDER=${OIDC_PROVIDER:-1}
OIDC_PROVIDER_PORT=${OIDC_PROVIDER_PORT:-3003}
OP_ROUNDS=${OP_ROUNDS:-1}
CEILING=""
# The body length of the demo's sign-in page on 127.0.0.1:3000, for the page ceiling (the
# report shows the length measured in the run beside it).
SIGNIN_PAGE_BYTES=${SIGNIN_PAGE_BYTES:-5404}
MEASURED_PAGE_BYTES=""
export AUTH_SECRET=${AUTH_SECRET:-authcore-bench-secret-4f0c2a9e7d1b}
DEMO_PASSWORD=${AUTHCORE_DEMO_PASSWORD:-authcore-demo}
# The database-session scenario on PostgreSQL (this machine kind's server, a database of
# its own so the tests' `test` is left alone; created when missing; "" skips it).
POSTGRES_URL=${POSTGRES_URL-postgres://postgres@127.0.0.1:5432/authcore_bench}
export AUTHCORE_DEMO_PASSWORD=$DEMO_PASSWORD
LUA="$ROOT/bench/wrk-check.lua"
RESULTS_DIR="$ROOT/bench/results"
WORK=$(mktemp -d "${TMPDIR:-/tmp}/authcore-load.XXXXXX")

case "$ONLY" in both | rust | node | op) ;; *)
  echo "ONLY must be both, rust, node or op (got '$ONLY')" >&2
  exit 2
  ;;
esac

SERVER_PID=""
stop_server() {
  if [[ -n "$SERVER_PID" ]] && kill -0 "$SERVER_PID" 2>/dev/null; then
    kill "$SERVER_PID" 2>/dev/null || true
    for _ in $(seq 50); do kill -0 "$SERVER_PID" 2>/dev/null || break; sleep 0.1; done
    kill -9 "$SERVER_PID" 2>/dev/null || true
    wait "$SERVER_PID" 2>/dev/null || true
  fi
  SERVER_PID=""
}
cleanup() {
  stop_server
  rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

die() {
  echo "load.sh: $*" >&2
  exit 1
}

# Seconds of a wrk duration ("10s", "2m", "1h", "15"), for the hard timeout around wrk.
seconds() {
  local d=$1
  case "$d" in
    *ms) echo 1 ;;
    *s) echo "${d%s}" ;;
    *m) echo $((${d%m} * 60)) ;;
    *h) echo $((${d%h} * 3600)) ;;
    *) echo "$d" ;;
  esac
}

# ---------------------------------------------------------------- prerequisites
need_root_apt() {
  local as=()
  [[ $(id -u) -eq 0 ]] || as=(sudo)
  "${as[@]}" apt-get update && "${as[@]}" apt-get install -y "$@"
}
command -v wrk >/dev/null || need_root_apt wrk || die "cannot install wrk"
command -v curl >/dev/null || need_root_apt curl || die "cannot install curl"
command -v taskset >/dev/null || die "taskset (util-linux) is required"

CPUS=$(nproc)
if ((CPUS >= 2)); then
  SERVER_CPU=(taskset -c 0)
  LOAD_CPU=(taskset -c 1)
else
  echo "warning: only $CPUS CPU; server and wrk will share it (numbers not comparable to 2-core runs)" >&2
  SERVER_CPU=()
  LOAD_CPU=()
fi

if [[ $ONLY == both || $ONLY == node ]]; then
  command -v node >/dev/null || die "node (>= 20) is required for the @auth/core server"
  if [[ ! -f interop/node_modules/@auth/core/package.json ]]; then
    npm ci --prefix interop --no-audit --no-fund || die "npm ci --prefix interop failed"
  fi
fi
if [[ $ONLY != node && $OIDC_PROVIDER != 0 ]]; then
  command -v node >/dev/null || die "node (>= 20) is required for oidc-provider (OIDC_PROVIDER=0 skips it)"
  if [[ ! -f testsupport/oidc/node_modules/oidc-provider/package.json ]]; then
    npm ci --prefix testsupport/oidc --no-audit --no-fund || die "npm ci --prefix testsupport/oidc failed"
  fi
fi

RUST_BIN=""
if [[ $ONLY != node ]]; then
  target_dir=${CARGO_TARGET_DIR:-target}
  [[ $target_dir = /* ]] || target_dir="$ROOT/$target_dir"
  RUST_BIN="$target_dir/release/authcore-server"
  CEILING_BIN="$target_dir/release/examples/ceiling"
  if [[ ${SKIP_BUILD:-0} != 1 ]]; then
    echo "building authcore-server and the ceiling example (release)..." >&2
    # Two builds: with the example in the same invocation, Cargo would unify the features of
    # authcore-server's dev-dependencies into the server's own build, which changes its
    # symbols' hashes and so defeats link-order.txt (build.rs); alone, the server is built
    # exactly as `cargo run --release -p authcore-server` builds it.
    cargo build --release -p authcore-server --bin authcore-server >&2 ||
      die "cargo build --release -p authcore-server failed"
    cargo build --release -p authcore-server --example ceiling >&2 ||
      die "cargo build --release -p authcore-server --example ceiling failed"
  fi
  [[ -x $RUST_BIN ]] || die "$RUST_BIN not found (build failed or CARGO_TARGET_DIR differs)"
  [[ -x $CEILING_BIN ]] || die "$CEILING_BIN not found (build failed or CARGO_TARGET_DIR differs)"
fi

# ---------------------------------------------------------------- server control
# start_server <name> <port> <command...>: starts pinned to CPU 0, waits until it answers.
start_server() {
  local name=$1 port=$2
  shift 2
  if curl -s -o /dev/null --max-time 1 "http://127.0.0.1:$port/"; then
    die "port $port is already in use; stop whatever listens there or set RUST_PORT/NODE_PORT"
  fi
  "${SERVER_CPU[@]}" "$@" >"$WORK/$name.log" 2>&1 &
  SERVER_PID=$!
  for _ in $(seq 100); do # up to ~10 s
    if ! kill -0 "$SERVER_PID" 2>/dev/null; then
      tail -n 20 "$WORK/$name.log" >&2
      SERVER_PID=""
      die "$name exited during start-up (log above)"
    fi
    if curl -s -o /dev/null --max-time 1 "http://127.0.0.1:$port/auth/providers"; then
      return 0
    fi
    sleep 0.1
  done
  tail -n 20 "$WORK/$name.log" >&2
  die "$name did not answer on 127.0.0.1:$port within 10 s (log above)"
}

rss_mib() {
  awk '/^VmRSS:/ { printf "%.1f", $2 / 1024 }' "/proc/$1/status"
}

# sign_in <base url> <jar>: the credentials flow a browser does; prints the CSRF token.
sign_in() {
  local base=$1 jar=$2 csrf status
  csrf=$(curl -sf -c "$jar" -b "$jar" "$base/auth/csrf" | sed -n 's/.*"csrfToken" *: *"\([0-9a-f]*\)".*/\1/p')
  [[ -n $csrf ]] || die "GET $base/auth/csrf gave no csrfToken"
  status=$(curl -s -o /dev/null -w '%{http_code} %{redirect_url}' -c "$jar" -b "$jar" \
    --data "csrfToken=$csrf&username=demo&password=$DEMO_PASSWORD" "$base/auth/callback/credentials")
  [[ $status == 302* && $status != *error=* ]] || die "credentials sign-in at $base failed: $status"
  echo "$csrf"
}

jar_cookie() { # <jar> <name>: the cookie value as stored (still percent-encoded)
  awk -v n="$2" -F '\t' '$6 == n { v = $7 } END { print v }' "$1"
}

# ---------------------------------------------------------------- wrk
# run_wrk <out> <url> [VAR=value ...]: warm-up, then the measured run, both pinned to CPU 1.
run_wrk() {
  local out=$1 url=$2
  shift 2
  local limit=$(($(seconds "$WARMUP") + $(seconds "$DURATION") + 30))
  env "$@" timeout "$limit" "${LOAD_CPU[@]}" wrk -t1 -c"$CONNECTIONS" -d"$WARMUP" -s "$LUA" "$url" >/dev/null ||
    die "wrk warm-up failed for $url"
  local ticks_before steal_before load_steal_before
  ticks_before=$(cpu_ticks "$SERVER_PID")
  steal_before=$(steal_ticks)
  load_steal_before=$(load_steal_ticks)
  env "$@" timeout "$limit" "${LOAD_CPU[@]}" wrk -t1 -c"$CONNECTIONS" -d"$DURATION" --latency -s "$LUA" "$url" >"$out" ||
    die "wrk failed for $url"
  echo "server_cpu_ticks $(($(cpu_ticks "$SERVER_PID") - ticks_before))" >>"$out"
  echo "steal_ticks $(($(steal_ticks) - steal_before)) of $(($(seconds "$DURATION") * $(getconf CLK_TCK) * STEAL_CPUS))" >>"$out"
  echo "load_steal_ticks $(($(load_steal_ticks) - load_steal_before)) of $(($(seconds "$DURATION") * $(getconf CLK_TCK)))" >>"$out"
}

# Steal time (the hypervisor running something else on the server's CPU, /proc/stat) in
# clock ticks: of CPU 0 where the server is pinned, of all CPUs for unpinned runs.
STEAL_LINE=cpu0
STEAL_CPUS=1
((CPUS >= 2)) || { STEAL_LINE=cpu; STEAL_CPUS=$CPUS; }
steal_ticks() {
  awk -v c="$STEAL_LINE" '$1 == c { print $9 + 0 }' /proc/stat
}
# The same for wrk's CPU (CPU 1; all CPUs when they are shared): a load generator the
# hypervisor holds back leaves the server waiting, which its busy share below shows.
LOAD_STEAL_LINE=cpu1
((CPUS >= 2)) || LOAD_STEAL_LINE=cpu
load_steal_ticks() {
  awk -v c="$LOAD_STEAL_LINE" '$1 == c { print $9 + 0 }' /proc/stat
}

# steal_pct <wrk output> → the share of the measured run the server's CPU was stolen, in %.
steal_pct() {
  awk '$1 == "steal_ticks" { if ($4 > 0) printf "%.1f", 100 * $2 / $4; else print "-" }' "$1"
}

# Scenarios whose server CPU was stolen more than STEAL_LIMIT % of the measured run: their
# rates say more about the VM's neighbours than about the server.
STEAL_LIMIT=${STEAL_LIMIT:-2}
STOLEN=()
note_steal() { # <wrk output> <label>
  local pct
  pct=$(steal_pct "$1")
  [[ $pct != - ]] || return 0
  if awk -v p="$pct" -v l="$STEAL_LIMIT" 'BEGIN { exit !(p > l) }'; then
    STOLEN+=("$2: $pct % of CPU time stolen")
  fi
}

cpu_ticks() { # <pid>: CPU time of the process, all its threads, in clock ticks (user + system)
  awk '{ print $14 + $15 }' "/proc/$1/stat"
}

# cpu_use <wrk output> → "<µs> µs, <busy> %, <stolen> %": the server's CPU time per answered
# request, the share of the measured run it was busy (100 %: the server was the bottleneck;
# less: it waited for wrk), and the share of wrk's CPU the hypervisor stole.
cpu_use() {
  [[ -f $1 ]] || { echo "-"; return; }
  awk -v per="$(cpu_per_request "$1")" '
    $1 == "server_cpu_ticks" { t = $2 }
    $1 == "steal_ticks" { run = $4 }
    $1 == "load_steal_ticks" { ls = $2; lrun = $4 }
    END {
      if (per != "-" && run > 0 && lrun > 0) printf "%s µs, %.0f %%, %.1f %%", per, 100 * t / run, 100 * ls / lrun
      else print "-"
    }' "$1"
}

# cpu_per_request <wrk output> → the server's CPU time per answered request, in µs.
cpu_per_request() {
  awk -v hz="$(getconf CLK_TCK)" '
    $2 == "requests" && $3 == "in" { n = $1 }
    $1 == "server_cpu_ticks" { t = $2 }
    END { if (n > 0) printf "%.1f", t * 1e6 / hz / n; else print "-" }
  ' "$1"
}

# parse <wrk output> → "req_per_s p99_ms errors"; errors = socket errors + wrong answers
# (the Lua count, or wrk's own non-2xx/3xx count if larger: both see the same responses).
parse_wrk() {
  awk '
    function ms(v) {
      if (v ~ /us$/) return v / 1000
      if (v ~ /ms$/) return v + 0
      if (v ~ /m$/) return v * 60000
      if (v ~ /s$/) return v * 1000
      return v + 0
    }
    /^Requests\/sec:/ { rps = $2 }
    $1 == "99%" { p99 = ms($2) }
    /Non-2xx or 3xx responses:/ { non2xx = $NF }
    /Socket errors:/ { for (i = 3; i <= NF; i++) { gsub(",", "", $i); if ($i ~ /^[0-9]+$/) sock += $i } }
    /^bad_responses:/ { bad = $2 }
    /^checked_responses:/ { checked = $2 }
    END {
      err = sock + (bad > non2xx ? bad : non2xx)
      if (checked == 0 || rps == "") err += 1 # nothing was checked: treat as broken
      printf "%s %.2f %d\n", (rps == "" ? 0 : rps), p99, err
    }
  ' "$1"
}

# Scenarios both servers run; then authcore alone with database sessions (DB_SCENARIOS,
# each on its own server start with AUTHCORE_DATABASE_URL set).
SCENARIOS=(session session_none csrf providers signin_page signin)
DB_SCENARIOS=(session_sqlite session_postgres)
# authcore as an OpenID Provider (SQLite, a configuration file with [oidc_provider]): a
# service client's token (an EdDSA signature per request) and userinfo with a user's token.
# Userinfo first: oidc-provider's in-memory adapter keeps its last 1000 entries, so the
# tokens of the token scenario would push the user's token out of it.
OP_SCENARIOS=(oidc_userinfo oidc_token)
# authcore's too with its client of opaque tokens (oidc-provider's default kind), whose
# rows face oidc-provider's own oidc_userinfo and oidc_token.
RUST_OP_SCENARIOS=("${OP_SCENARIOS[@]}" oidc_userinfo_opaque oidc_token_opaque)
declare -A LABEL=(
  [session]="GET /auth/session (valid JWT)"
  [session_none]="GET /auth/session (no cookie)"
  [csrf]="GET /auth/csrf"
  [providers]="GET /auth/providers"
  [signin_page]="GET /auth/signin (HTML page)"
  [signin]="POST /auth/callback/credentials"
  [session_sqlite]="GET /auth/session (database session, SQLite)"
  [session_postgres]="GET /auth/session (database session, PostgreSQL)"
  [oidc_token]="POST /oidc/token (client_credentials)"
  [oidc_token_jwt]="POST /oidc/token (client_credentials), oidc-provider's tokens EdDSA JWTs as authcore's"
  [oidc_userinfo]="GET /oidc/userinfo (Bearer access token)"
  [oidc_token_opaque]="POST /oidc/token (client_credentials), both providers' tokens opaque"
  [oidc_userinfo_opaque]="GET /oidc/userinfo (Bearer access token), both providers' tokens opaque"
)
declare -A RESULT # [server:scenario] = "rps p99 errors"
declare -A IDLE_RSS
declare -A PEAK_RSS # VmHWM after the load: the most the server held at once
ERRORS=()

peak_rss_mib() {
  awk '/^VmHWM:/ { printf "%.1f", $2 / 1024 }' "/proc/$1/status"
}

# bench_server <server key> <port> [scenario ...]: the server must already be running.
bench_server() {
  local key=$1 port=$2 base="http://127.0.0.1:$2" jar="$WORK/$1.jar"
  shift 2
  local scenarios=("$@")
  ((${#scenarios[@]} > 0)) || scenarios=("${SCENARIOS[@]}")
  local csrf csrf_cookie session_cookie access_token="" opaque_token=""
  IDLE_RSS[$key]=${IDLE_RSS[$key]:-$(rss_mib "$SERVER_PID")}

  csrf=$(sign_in "$base" "$jar")
  csrf_cookie=$(jar_cookie "$jar" authjs.csrf-token)
  session_cookie=$(jar_cookie "$jar" authjs.session-token)
  [[ -n $csrf_cookie && -n $session_cookie ]] || die "$key: sign-in did not set the csrf and session cookies"
  curl -sf -H "Cookie: authjs.session-token=$session_cookie" "$base/auth/session" | grep -q '"demo@example.com"' ||
    die "$key: GET /auth/session with the new session cookie does not return the demo user"

  local s
  for s in "${scenarios[@]}"; do
    local out="$WORK/$key-$s.txt"
    echo "  $key: ${LABEL[$s]} ..." >&2
    case $s in
      session | session_sqlite | session_postgres)
        run_wrk "$out" "$base/auth/session" WRK_COOKIE="authjs.session-token=$session_cookie" \
          WRK_EXPECT_BODY='"demo@example.com"'
        ;;
      session_none)
        run_wrk "$out" "$base/auth/session" WRK_EXPECT_BODY='null'
        ;;
      signin_page)
        [[ $key != rust ]] || MEASURED_PAGE_BYTES=$(curl -sf "$base/auth/signin" | wc -c)
        run_wrk "$out" "$base/auth/signin" WRK_EXPECT_BODY='action="http://127.0.0.1:'"$port"'/auth/callback/credentials"'
        ;;
      csrf)
        run_wrk "$out" "$base/auth/csrf" WRK_EXPECT_BODY='"csrfToken"'
        ;;
      providers)
        run_wrk "$out" "$base/auth/providers" WRK_EXPECT_BODY='"credentials"'
        ;;
      signin)
        run_wrk "$out" "$base/auth/callback/credentials" WRK_METHOD=POST \
          WRK_BODY="csrfToken=$csrf&username=demo&password=$DEMO_PASSWORD" \
          WRK_COOKIE="authjs.csrf-token=$csrf_cookie" WRK_EXPECT_CLASS=3 WRK_REJECT_LOCATION="error="
        ;;
      oidc_token | oidc_userinfo)
        # The user's access token only once (a code flow per call).
        [[ -n $access_token || $s != oidc_userinfo ]] || access_token=$(op_access_token "$base" "$jar" bench)
        op_wrk "$out" "$base" "$s" "$access_token"
        ;;
      oidc_token_opaque | oidc_userinfo_opaque)
        [[ -n $opaque_token || $s != oidc_userinfo_opaque ]] ||
          opaque_token=$(op_access_token "$base" "$jar" bench-opaque)
        op_wrk "$out" "$base" "$s" "$opaque_token"
        ;;
    esac
    record_result "$key" "$s" "$out"
    [[ $s == session_sqlite || $s == session_postgres || $key != rust ]] || PEAK_RSS[$key]=$(peak_rss_mib "$SERVER_PID")
  done
}

# op_wrk <out> <issuer's origin> <scenario> <a user's access token>: the OpenID
# Provider's scenarios, the same requests for authcore and oidc-provider (the *_opaque
# ones, authcore's only, as client bench-opaque).
op_wrk() {
  local out=$1 base=$2 s=$3 token=$4 client=bench
  [[ $s != *_opaque ]] || client=bench-opaque
  case $s in
    oidc_token | oidc_token_opaque)
      run_wrk "$out" "$base/oidc/token" WRK_METHOD=POST WRK_BODY="grant_type=client_credentials" \
        WRK_AUTHORIZATION="Basic $(printf '%s:%s' "$client" "$OP_CLIENT_SECRET" | base64 -w0)" \
        WRK_EXPECT_BODY='"access_token"'
      ;;
    oidc_token_jwt) # oidc-provider only: the resource whose access tokens are JWTs
      run_wrk "$out" "$base/oidc/token" WRK_METHOD=POST \
        WRK_BODY="grant_type=client_credentials&resource=urn%3Abench%3Aapi" \
        WRK_AUTHORIZATION="Basic $(printf 'bench:%s' "$OP_CLIENT_SECRET" | base64 -w0)" \
        WRK_EXPECT_BODY='"access_token":"eyJ'
      ;;
    oidc_userinfo | oidc_userinfo_opaque)
      run_wrk "$out" "$base/oidc/userinfo" WRK_AUTHORIZATION="Bearer $token" \
        WRK_EXPECT_BODY='"demo@example.com"'
      ;;
  esac
}

# record_result <server key> <scenario> <wrk output>: its rate, p99 and errors.
record_result() {
  local key=$1 s=$2 out=$3
  RESULT[$key:$s]=$(parse_wrk "$out")
  note_steal "$out" "$key ${LABEL[$s]}"
  local errors=${RESULT[$key:$s]##* }
  if ((errors > 0)); then
    ERRORS+=("$key ${LABEL[$s]}: $errors bad responses/socket errors — $(grep -h -E 'first_bad_response|Non-2xx|Socket errors' "$out" | tr '\n' ' ')")
  fi
}

# oidc_provider_server: starts bench/oidc-provider-server.mjs (pinned as authcore is); the
# demo user's access token it made goes to OIDC_PROVIDER_TOKEN.
OIDC_PROVIDER_TOKEN=""
oidc_provider_server() {
  start_server oidc-provider "$OIDC_PROVIDER_PORT" env PORT="$OIDC_PROVIDER_PORT" NODE_ENV=production \
    OP_CLIENT_SECRET="$OP_CLIENT_SECRET" node "$ROOT/bench/oidc-provider-server.mjs"
  local token
  token=$(sed -n 's/.*"bench_access_token":"\([^"]*\)".*/\1/p' "$WORK/oidc-provider.log")
  [[ -n $token ]] || die "oidc-provider printed no access token ($WORK/oidc-provider.log)"
  OIDC_PROVIDER_TOKEN=$token
}

# The PostgreSQL database of session_postgres: "" when POSTGRES_URL is empty, created
# when missing; the script stops when the server does not answer.
postgres_bench_url() {
  [[ -n $POSTGRES_URL ]] || return 0
  if ! psql "$POSTGRES_URL" -Atc 'select 1' >/dev/null 2>&1; then
    local pg_db=${POSTGRES_URL##*/}
    pg_db=${pg_db%%\?*}
    psql "${POSTGRES_URL%/*}/postgres" -qc "create database \"$pg_db\"" >/dev/null 2>&1 ||
      die "PostgreSQL at $POSTGRES_URL does not answer (start it, or POSTGRES_URL= to skip)"
  fi
  echo "$POSTGRES_URL"
}

# The OpenID Provider's configuration: an Ed25519 signing key and one client, "bench",
# that may sign users in and get tokens of its own.
OP_CLIENT_SECRET=bench-client-secret-0123456789abcdef0123
OP_REDIRECT=http://127.0.0.1:9/callback
op_config() { # <port>: writes $WORK/op.toml, prints its path
  [[ -f $WORK/op.pem ]] || openssl genpkey -algorithm ed25519 -out "$WORK/op.pem" 2>/dev/null ||
    die "openssl could not make the provider's key"
  cat >"$WORK/op.toml" <<TOML
[auth]
url = "http://127.0.0.1:$1/auth"
[oidc_provider]
signing_keys = ["$WORK/op.pem"]
[[oidc_provider.clients]]
id = "bench"
secret = "$OP_CLIENT_SECRET"
redirect_uris = ["$OP_REDIRECT"]
grant_types = ["authorization_code", "client_credentials"]
[[oidc_provider.clients]]
id = "bench-opaque"
secret = "$OP_CLIENT_SECRET"
redirect_uris = ["$OP_REDIRECT"]
grant_types = ["authorization_code", "client_credentials"]
access_token_format = "opaque"
TOML
  echo "$WORK/op.toml"
}

# op_access_token <base url> <jar of a signed-in session> <client>: the demo user's access
# token for the client, by the authorization code flow (authorize with the session cookie,
# then the token endpoint), as a relying party gets it.
op_access_token() {
  local base=$1 jar=$2 client=$3 location code token
  location=$(curl -s -o /dev/null -w '%{redirect_url}' -b "$jar" \
    "$base/oidc/authorize?client_id=$client&response_type=code&scope=openid%20email&redirect_uri=$OP_REDIRECT")
  code=$(sed -n 's/.*[?&]code=\([^&]*\).*/\1/p' <<<"$location")
  [[ -n $code ]] || die "no code from $base/oidc/authorize: $location"
  token=$(curl -s -u "$client:$OP_CLIENT_SECRET" --data-urlencode grant_type=authorization_code \
    --data-urlencode "code=$code" --data-urlencode "redirect_uri=$OP_REDIRECT" "$base/oidc/token" |
    sed -n 's/.*"access_token":"\([^"]*\)".*/\1/p')
  [[ -n $token ]] || die "no access token from $base/oidc/token"
  echo "$token"
}

# The AUTHCORE_DATABASE_URL a scenario runs on.
database_of() {
  case $1 in
    session_sqlite | oidc_*) echo "sqlite://$WORK/demo.db?mode=rwc" ;;
    session_postgres) postgres_bench_url ;;
    *) echo none ;;
  esac
}

# ---------------------------------------------------------------- A/B
# BASELINE_BIN=<another authcore-server build> and/or BASELINE_ENV="NAME=value ..." (the
# baseline is this build with those settings, e.g. AUTHCORE_DATABASE_DIRECT_READS=off):
# baseline and current take turns, ROUNDS times (4), on AB_SCENARIOS (space-separated;
# default the JWT scenarios; session_sqlite and session_postgres run on their database, the
# oidc_* ones with the OpenID Provider's configuration), and
# the mean req/s of each is reported; nothing else runs. Alternating cancels most of the
# VM's drift, which a ceiling fraction from separate runs does not.
if [[ -n ${BASELINE_BIN:-} || -n ${BASELINE_ENV:-} ]]; then
  BASELINE_BIN=${BASELINE_BIN:-$RUST_BIN}
  [[ -x $BASELINE_BIN ]] || die "BASELINE_BIN=$BASELINE_BIN is not an executable"
  read -r -a baseline_env <<<"${BASELINE_ENV:-}"
  read -r -a ab_scenarios <<<"${AB_SCENARIOS:-${SCENARIOS[*]}}"
  for ((round = 1; round <= ${ROUNDS:-4}; round++)); do
    for side in baseline current; do
      bin=$RUST_BIN
      side_env=()
      [[ $side == current ]] || { bin=$BASELINE_BIN; side_env=("${baseline_env[@]}"); }
      for s in "${ab_scenarios[@]}"; do
        db=$(database_of "$s") || exit 1
        [[ -n $db ]] || die "$s needs POSTGRES_URL"
        # The OpenID Provider's scenarios run with its configuration file.
        op=()
        [[ $s != oidc_* ]] || op=(AUTHCORE_CONFIG="$(op_config "$RUST_PORT")")
        start_server "ab-$side" "$RUST_PORT" env AUTHCORE_RATE_LIMITS=off AUTHCORE_DATABASE_URL="$db" \
          AUTHCORE_ADDR="127.0.0.1:$RUST_PORT" RUST_LOG="${RUST_LOG:-warn}" "${op[@]}" "${side_env[@]}" "$bin"
        bench_server "$side$round" "$RUST_PORT" "$s"
        stop_server
      done
    done
  done
  echo "# A/B: $BASELINE_BIN ${BASELINE_ENV:-} (baseline) against $RUST_BIN, ${ROUNDS:-4} alternating rounds of wrk -t1 -c$CONNECTIONS -d$DURATION"
  echo
  echo "| endpoint | baseline req/s (mean) | current req/s (mean) | change | rounds' changes: median (lowest … highest) |"
  echo "|---|---:|---:|---:|---:|"
  for s in "${ab_scenarios[@]}"; do
    # Each round's pair (the baseline, then the current build right after it) gives one
    # change; their median and range show how far one round's figure can be trusted.
    for ((round = 1; round <= ${ROUNDS:-4}; round++)); do
      echo "${RESULT[baseline$round:$s]%% *} ${RESULT[current$round:$s]%% *}"
    done | awk -v label="${LABEL[$s]}" '
      { sb += $1; sc += $2; d[NR] = 100 * ($2 - $1) / $1 }
      END {
        n = NR
        for (i = 2; i <= n; i++) { v = d[i]; for (j = i - 1; j >= 1 && d[j] > v; j--) d[j + 1] = d[j]; d[j + 1] = v }
        med = n % 2 ? d[(n + 1) / 2] : (d[n / 2] + d[n / 2 + 1]) / 2
        printf "| %s | %.0f | %.0f | %+.1f %% | %+.1f %% (%+.1f … %+.1f) |\n", label, sb / n, sc / n, 100 * (sc - sb) / sb, med, d[1], d[n] }'
  done
  ((${#ERRORS[@]} == 0)) || { printf -- '- %s\n' "${ERRORS[@]}"; exit 1; }
  exit 0
fi

# round_mean <server key prefix> <scenario> → "rps p99 errors" over the OP_ROUNDS rounds:
# the mean rate, the worst p99, the errors summed.
round_mean() {
  local round
  for ((round = 1; round <= OP_ROUNDS; round++)); do
    echo "${RESULT[$1$round:$2]}"
  done | awk '{ r += $1; if ($2 > p) p = $2; e += $3; n++ } END { printf "%.0f %.2f %d\n", r / n, p, e }'
}
OIDC_PROVIDER_VERSION=$(node -p 'require("./testsupport/oidc/node_modules/oidc-provider/package.json").version' 2>/dev/null || echo "?")

# ---------------------------------------------------------------- run
LOADAVG=$(cut -d' ' -f1-3 /proc/loadavg)
if awk -v l="${LOADAVG%% *}" 'BEGIN { exit !(l > 0.5) }'; then
  echo "warning: load average is $LOADAVG before the run; other work on this machine skews the numbers" >&2
fi
START=$(date +%s)
# The ceiling: the same HTTP stack answering a fixed body with no work. No server on this
# machine answers faster, so ceiling / @auth/core bounds every reachable ratio. The VM's
# speed drifts over minutes, so it is measured before and after authcore's runs and the
# mean is the yardstick (both are reported).
CEILINGS=()
PAGE_CEILINGS=()
measure_ceiling() {
  local n=${#CEILINGS[@]}
  echo "ceiling (axum, fixed body) on 127.0.0.1:$CEILING_PORT" >&2
  start_server ceiling "$CEILING_PORT" env AUTHCORE_ADDR="127.0.0.1:$CEILING_PORT" \
    CEILING_PAGE_BYTES="$SIGNIN_PAGE_BYTES" "$CEILING_BIN"
  run_wrk "$WORK/ceiling-$n.txt" "http://127.0.0.1:$CEILING_PORT/auth/csrf" WRK_EXPECT_BODY='"csrfToken"'
  CEILINGS+=("$(parse_wrk "$WORK/ceiling-$n.txt")")
  note_steal "$WORK/ceiling-$n.txt" "ceiling run $((n + 1))"
  ((${CEILINGS[-1]##* } == 0)) || ERRORS+=("ceiling run $((n + 1)): bad responses or socket errors")
  # The same with a body as long as the demo's sign-in page: what sending it costs.
  run_wrk "$WORK/page-ceiling-$n.txt" "http://127.0.0.1:$CEILING_PORT/page" WRK_EXPECT_BODY='action="ceiling"'
  PAGE_CEILINGS+=("$(parse_wrk "$WORK/page-ceiling-$n.txt")")
  note_steal "$WORK/page-ceiling-$n.txt" "page ceiling run $((n + 1))"
  ((${PAGE_CEILINGS[-1]##* } == 0)) || ERRORS+=("page ceiling run $((n + 1)): bad responses or socket errors")
  stop_server
}
# Two-core scaling: the demo unpinned with two workers (and wrk unpinned beside it, as it
# must be on a two-CPU machine) against its one-core rate of `GET /auth/session`.
SCALE=""
measure_scaling() {
  ((CPUS >= 2)) || return 0
  # Unpinned: start_server and run_wrk read these two arrays (bash scopes them dynamically).
  local SERVER_CPU=() LOAD_CPU=() STEAL_LINE=cpu STEAL_CPUS=$CPUS
  local jar="$WORK/scale.jar" cookie
  echo "authcore on both cores (AUTHCORE_WORKERS=2, unpinned): GET /auth/session ..." >&2
  start_server authcore-2cores "$RUST_PORT" env AUTHCORE_RATE_LIMITS=off AUTHCORE_DATABASE_URL=none \
    AUTHCORE_WORKERS=2 AUTHCORE_ADDR="127.0.0.1:$RUST_PORT" RUST_LOG="${RUST_LOG:-warn}" "$RUST_BIN"
  sign_in "http://127.0.0.1:$RUST_PORT" "$jar" >/dev/null
  cookie=$(jar_cookie "$jar" authjs.session-token)
  run_wrk "$WORK/scale.txt" "http://127.0.0.1:$RUST_PORT/auth/session" \
    WRK_COOKIE="authjs.session-token=$cookie" WRK_EXPECT_BODY='"demo@example.com"'
  SCALE=$(parse_wrk "$WORK/scale.txt")
  note_steal "$WORK/scale.txt" "two-core run"
  ((${SCALE##* } == 0)) || ERRORS+=("two-core GET /auth/session: bad responses or socket errors")
  stop_server
}
if [[ $ONLY != node ]]; then
  measure_ceiling
  echo "authcore (Rust) on 127.0.0.1:$RUST_PORT" >&2
  rust_server() { # <database url> [VAR=value ...]
    local db=$1
    shift
    start_server authcore "$RUST_PORT" env AUTHCORE_RATE_LIMITS=off AUTHCORE_DATABASE_URL="$db" "$@" \
      AUTHCORE_ADDR="127.0.0.1:$RUST_PORT" RUST_LOG="${RUST_LOG:-warn}" "$RUST_BIN"
  }
  if [[ $ONLY != op ]]; then
    rust_server none
    bench_server rust "$RUST_PORT"
    stop_server
    # Database sessions: a fresh SQLite file; PostgreSQL at POSTGRES_URL when it answers.
    for s in "${DB_SCENARIOS[@]}"; do
      db=$(database_of "$s") || exit 1
      [[ -n $db ]] || continue # POSTGRES_URL="": skipped
      rust_server "$db"
      bench_server rust "$RUST_PORT" "$s"
      stop_server
    done
  fi
  # The OpenID Providers, taking turns: authcore (one server for both scenarios), then
  # oidc-provider on the same CPU.
  for ((round = 1; round <= OP_ROUNDS; round++)); do
    rust_server "$(database_of oidc_token)" AUTHCORE_CONFIG="$(op_config "$RUST_PORT")"
    bench_server "rust-op$round" "$RUST_PORT" "${RUST_OP_SCENARIOS[@]}"
    stop_server
    [[ $OIDC_PROVIDER != 0 ]] || continue
    echo "oidc-provider $OIDC_PROVIDER_VERSION (Node $(node --version)) on 127.0.0.1:$OIDC_PROVIDER_PORT" >&2
    oidc_provider_server
    for s in "${OP_SCENARIOS[@]}" oidc_token_jwt; do
      echo "  oidc-provider: ${LABEL[$s]} ..." >&2
      op_wrk "$WORK/oidcp$round-$s.txt" "http://127.0.0.1:$OIDC_PROVIDER_PORT" "$s" "$OIDC_PROVIDER_TOKEN"
      record_result "oidcp$round" "$s" "$WORK/oidcp$round-$s.txt"
    done
    stop_server
  done
  for s in "${RUST_OP_SCENARIOS[@]}"; do
    RESULT[rust:$s]=$(round_mean rust-op "$s")
  done
  for s in "${OP_SCENARIOS[@]}"; do
    [[ $OIDC_PROVIDER == 0 ]] || RESULT[oidcp:$s]=$(round_mean oidcp "$s")
  done
  if [[ $OIDC_PROVIDER != 0 ]]; then
    # authcore's JWT token endpoint faces oidc-provider's JWTs too; oidc-provider's
    # default (opaque) rows face authcore's opaque ones.
    RESULT[rust:oidc_token_jwt]=${RESULT[rust:oidc_token]}
    RESULT[oidcp:oidc_token_jwt]=$(round_mean oidcp oidc_token_jwt)
    RESULT[oidcp:oidc_token_opaque]=${RESULT[oidcp:oidc_token]}
    RESULT[oidcp:oidc_userinfo_opaque]=${RESULT[oidcp:oidc_userinfo]}
  fi
  measure_ceiling
  # The yardstick: the two ceilings' mean rate (worst p99, errors summed).
  CEILING=$(printf '%s\n' "${CEILINGS[@]}" |
    awk '{ r += $1; if ($2 > p) p = $2; e += $3; n++ } END { printf "%.0f %.2f %d\n", r / n, p, e }')
  [[ ${SCALING:-1} == 0 || $ONLY == op ]] || measure_scaling
fi
if [[ $ONLY == both || $ONLY == node ]]; then
  echo "@auth/core (Node $(node --version)) on 127.0.0.1:$NODE_PORT" >&2
  start_server authjs "$NODE_PORT" env PORT="$NODE_PORT" NODE_ENV=production node "$ROOT/bench/authjs-server.mjs"
  bench_server node "$NODE_PORT"
  stop_server
fi
ELAPSED=$(($(date +%s) - START))

# ---------------------------------------------------------------- report
cell() { # <server> <scenario> <field 1=rps 2=p99>
  local r=${RESULT[$1:$2]:-}
  [[ -n $r ]] || { echo "-"; return; }
  local rps p99 err
  read -r rps p99 err <<<"$r"
  local flag=""
  ((err == 0)) || flag=" (ERR)"
  if [[ $3 == 1 ]]; then printf "%.0f%s" "$rps" "$flag"; else printf "%.2f ms" "$p99"; fi
}
ratio() { # <scenario> [numerator "rps p99 err"; default: authcore's result] [denominator's key; node]
  local a=${2:-${RESULT[rust:$1]:-}} b=${RESULT[${3:-node}:$1]:-}
  [[ -n $a && -n $b ]] || { echo "-"; return; }
  awk -v a="${a%% *}" -v b="${b%% *}" 'BEGIN { if (b > 0) printf "%.2fx", a / b; else print "-" }'
}

stolen() { # <scenario> [server key]: the share of the measured run the server's CPU was stolen
  local f="$WORK/${2:-rust}-$1.txt"
  [[ -f $f ]] || { echo "-"; return; }
  echo "$(steal_pct "$f") %"
}

share() { # <scenario> [server key]: its rate (authcore's by default) as a percentage of the ceiling's
  local a=${RESULT[${2:-rust}:$1]:-}
  [[ -n $a && -n $CEILING ]] || { echo "-"; return; }
  awk -v a="${a%% *}" -v c="${CEILING%% *}" 'BEGIN { if (c > 0) printf "%.0f %%", 100 * a / c; else print "-" }'
}

cpu_model=$(awk -F': ' '/^model name/ { print $2; exit }' /proc/cpuinfo)
[[ -n $cpu_model ]] || cpu_model=$(lscpu 2>/dev/null | awk -F': +' '/Model name/ { print $2; exit }')
# How an idle CPU waits (the guest's cpuidle driver and, under haltpoll, how long it polls
# before it halts): a halted CPU is woken by the hypervisor, a cost the waker pays, so a
# server whose answers often find wrk asleep pays more per answer where this is 0.
idle_driver=$(cat /sys/devices/system/cpu/cpuidle/current_driver 2>/dev/null || echo unknown)
halt_poll_ns=$(cat /sys/module/haltpoll/parameters/guest_halt_poll_ns 2>/dev/null || echo -)
auth_core_version=$(node -p 'require("./interop/node_modules/@auth/core/package.json").version' 2>/dev/null || echo "?")

report() {
  echo "# authcore vs @auth/core load test"
  echo
  echo "- date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  echo "- machine: $CPUS CPUs available ($(nproc --all) online), ${cpu_model:-unknown CPU}, $(uname -sr), load average before the run: $LOADAVG"
  echo "- idle CPUs: cpuidle driver $idle_driver, guest_halt_poll_ns $halt_poll_ns (0: an idle CPU halts at once, and an answer that finds wrk asleep pays to wake its CPU)"
  echo "- server pinned to CPU 0, wrk pinned to CPU 1: wrk -t1 -c$CONNECTIONS -d$DURATION --latency (after a $WARMUP warm-up)"
  [[ $ONLY == rust || $ONLY == op ]] || echo "- @auth/core $auth_core_version on Node $(node --version 2>/dev/null || echo '?'), bench/authjs-server.mjs"
  [[ $ONLY == node || $OIDC_PROVIDER == 0 ]] || echo "- oidc-provider $OIDC_PROVIDER_VERSION on Node $(node --version 2>/dev/null || echo '?'), bench/oidc-provider-server.mjs (in-memory adapter, opaque access tokens); $OP_ROUNDS round(s), authcore and oidc-provider taking turns"
  [[ $ONLY == node ]] || echo "- authcore: release build of authcore-server ($RUST_BIN)"
  echo "- RSS: authcore idle ${IDLE_RSS[rust]:--} MiB, peak under load (VmHWM) ${PEAK_RSS[rust]:--} MiB; @auth/core idle ${IDLE_RSS[node]:--} MiB, peak ${PEAK_RSS[node]:--} MiB (JWT runs; the database runs start their own server)"
  echo "- command: ONLY=$ONLY DURATION=$DURATION WARMUP=$WARMUP bench/load.sh (${ELAPSED}s)"
  if [[ -n $CEILING ]]; then
    local c_rps c_p99 c_err c_flag=""
    read -r c_rps c_p99 c_err <<<"$CEILING"
    ((c_err == 0)) || c_flag=" (ERR)"
    printf -- '- ceiling (examples/ceiling.rs: the same axum/hyper/tokio stack answering a fixed body, no work): %.0f req/s (mean of %s and %s req/s, before and after authcore; CPU 0 stolen %s %% and %s %%), p99 %.2f ms%s\n' \
      "$c_rps" "${CEILINGS[0]%% *}" "${CEILINGS[1]%% *}" "$(steal_pct "$WORK/ceiling-0.txt")" "$(steal_pct "$WORK/ceiling-1.txt")" "$c_p99" "$c_flag"
    if [[ -n ${RESULT[rust:signin_page]:-} ]]; then
      printf '%s\n' "${PAGE_CEILINGS[@]}" | awk -v a="${RESULT[rust:signin_page]%% *}" -v b="$SIGNIN_PAGE_BYTES" -v m="$MEASURED_PAGE_BYTES" '
        { r += $1; n++ } END { if (n > 0 && r > 0) printf "- page ceiling (the same server answering a fixed %d-byte HTML body; the demo'"'"'s sign-in page measured %s bytes): %.0f req/s; the sign-in page reaches %.0f %% of it\n", b, m, r / n, 100 * a * n / r }'
    fi
  fi
  if [[ -n $SCALE && -n ${RESULT[rust:session]:-} ]]; then
    awk -v two="${SCALE%% *}" -v one="${RESULT[rust:session]%% *}" \
      -v cpu1="$(cpu_per_request "$WORK/rust-session.txt")" -v cpu2="$(cpu_per_request "$WORK/scale.txt")" 'BEGIN {
      printf "- two cores: GET /auth/session with AUTHCORE_WORKERS=2, server and wrk unpinned: %.0f req/s = %.2fx the one-core rate (wrk needs CPU time on the same two cores)\n", two, two / one
      if (cpu1 + 0 > 0 && cpu2 + 0 > 0)
        printf "- server CPU time per request: %s µs on one core, %s µs with two workers: with two cores to itself the server would answer %.2fx its one-core rate (2 × %s ÷ %s)\n", cpu1, cpu2, 2 * cpu1 / cpu2, cpu1, cpu2 }'
  fi
  echo
  echo "| endpoint | authcore req/s | of ceiling | authcore p99 | CPU 0 stolen (authcore run) | @auth/core req/s | @auth/core p99 | authcore ÷ @auth/core | ceiling ÷ @auth/core |"
  echo "|---|---:|---:|---:|---:|---:|---:|---:|---:|"
  local s
  for s in "${SCENARIOS[@]}" "${DB_SCENARIOS[@]}"; do
    [[ -n ${RESULT[rust:$s]:-}${RESULT[node:$s]:-} ]] || continue
    echo "| ${LABEL[$s]} | $(cell rust "$s" 1) | $(share "$s") | $(cell rust "$s" 2) | $(stolen "$s") | $(cell node "$s" 1) | $(cell node "$s" 2) | $(ratio "$s") | $(ratio "$s" "$CEILING") |"
  done
  echo
  echo "of ceiling = authcore req/s ÷ ceiling req/s (the no-work server of the same run); ceiling ÷ @auth/core = the most any server on this stack and machine could reach against @auth/core. Every response was checked (status class, body or Location)."
  if [[ -n ${RESULT[rust:oidc_token]:-} ]]; then
    echo
    echo "| OpenID Provider | authcore req/s | of ceiling | authcore p99 | oidc-provider req/s | of ceiling | oidc-provider p99 | authcore ÷ oidc-provider | CPU 0 stolen (authcore / oidc-provider, round 1) | authcore CPU: per request, busy, wrk's CPU stolen (round 1) | oidc-provider CPU: the same |"
    echo "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
    for s in "${OP_SCENARIOS[@]}" oidc_token_jwt oidc_userinfo_opaque oidc_token_opaque; do
      [[ -n ${RESULT[rust:$s]:-} ]] || continue
      echo "| ${LABEL[$s]} | $(cell rust "$s" 1) | $(share "$s") | $(cell rust "$s" 2) | $(cell oidcp "$s" 1) | $(share "$s" oidcp) | $(cell oidcp "$s" 2) | $(ratio "$s" "${RESULT[rust:$s]}" oidcp) | $(stolen "${s%_jwt}" rust-op1) / $(stolen "${s%_opaque}" oidcp1) | $(cpu_use "$WORK/rust-op1-${s%_jwt}.txt") | $(cpu_use "$WORK/oidcp1-${s%_opaque}.txt") |"
    done
    echo
    echo "Both providers: one confidential client (client_secret_basic, the same secret), the token endpoint's client_credentials grant, userinfo with the demo user's access token (scope openid email); authcore on SQLite with EdDSA-signed JWT access tokens, oidc-provider with its in-memory adapter and opaque tokens, except in the third row, where the request names a resource (urn:bench:api) whose access tokens oidc-provider issues as EdDSA-signed JWTs, the work authcore does for every token; in the last two rows authcore's client has access_token_format = \"opaque\" (its tokens sealed, not signed), facing oidc-provider's opaque ones."
    echo "CPU: the server's CPU time (user + system, all threads) per answered request over the measured run; busy = that time as a share of the run (100 %: the server was the bottleneck; less: it waited for the load); wrk's CPU stolen = the share of the run the hypervisor gave wrk's CPU to something else. A rate that falls while the CPU time per request does not says the VM held the server or wrk back; CPU time per request that rises with the same code says the machine ran the same work slower."
  fi
  echo "CPU 0 stolen = the share of the measured run the hypervisor gave the server's CPU to something else (/proc/stat steal); above $STEAL_LIMIT % a rate says more about the VM's neighbours than about the server."
  if ((${#STOLEN[@]} > 0)); then
    echo
    echo "**Stolen CPU time above $STEAL_LIMIT % (STEAL_LIMIT) — these numbers measure the VM, not the code:**"
    printf -- '- %s\n' "${STOLEN[@]}"
  fi
  if ((${#ERRORS[@]} > 0)); then
    echo
    echo "**Errors — the flagged numbers are not valid:**"
    printf -- '- %s\n' "${ERRORS[@]}"
  fi
}

mkdir -p "$RESULTS_DIR"
report | tee "$RESULTS_DIR/latest.md"
((${#ERRORS[@]} == 0))
