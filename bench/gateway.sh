#!/usr/bin/env bash
# Load run of the forward-auth gateway behind nginx (docs/gateway.md's configuration):
# every request to a protected application goes through nginx's auth_request to authcore's
# /forward-auth/nginx (session JWT decrypted, rules evaluated, identity headers and a signed
# EdDSA identity JWT made), then to the application (here an nginx `return` that echoes the
# identity it received). The no-work ceiling is the same nginx proxying the same
# application without auth_request, measured in the same run.
#
# authcore and nginx run pinned to CPU 0, wrk to CPU 1 (-t1 -c32). Every response is
# checked (status 200 and the signed-in user's email in the body) by bench/wrk-check.lua.
#
#   bench/gateway.sh                       # builds authcore-server --release first
#   SKIP_BUILD=1 DURATION=30s bench/gateway.sh
#
# Env: DURATION (10s), WARMUP (2s), CONNECTIONS (32), CARGO_TARGET_DIR, SKIP_BUILD=1.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
DURATION=${DURATION:-10s}
WARMUP=${WARMUP:-2s}
CONNECTIONS=${CONNECTIONS:-32}
LUA="$ROOT/bench/wrk-check.lua"
WORK=$(mktemp -d "${TMPDIR:-/tmp}/authcore-gateway-load.XXXXXX")
TARGET=${CARGO_TARGET_DIR:-$ROOT/target}
PIDS=()
cleanup() {
  for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$WORK"
}
trap cleanup EXIT
die() {
  echo "gateway.sh: $*" >&2
  exit 1
}
for c in wrk nginx curl openssl taskset; do
  command -v "$c" >/dev/null || [[ -x /usr/sbin/$c ]] || die "$c is required (apt-get install $c)"
done
NGINX=$(command -v nginx || echo /usr/sbin/nginx)
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
PROXY=$(free_port)
CEILING=$(free_port)
AUTHCORE=$(free_port)
APP=$(free_port)

if [[ -z ${SKIP_BUILD:-} ]]; then
  cargo build --release -p authcore-server >&2
fi
BIN="$TARGET/release/authcore-server"
[[ -x $BIN ]] || die "$BIN not built"

# authcore with the gateway: JWT sessions, an Ed25519 identity key, public assets bypassed.
openssl genpkey -algorithm ed25519 -out "$WORK/identity.pem" 2>/dev/null
cat >"$WORK/authcore.toml" <<TOML
[server]
addr = "127.0.0.1:$AUTHCORE"
database_url = "none"
[auth]
secret = "authcore-gateway-bench-secret-8c1f"
url = "http://auth.example.test:$PROXY/auth"
[gateway]
cookie_domain = ".example.test"
allowed_redirect_hosts = ["*.example.test"]
signing_keys = ["$WORK/identity.pem"]
[[gateway.rules]]
path = "/public/"
policy = "bypass"
TOML
taskset -c 0 "$BIN" --config "$WORK/authcore.toml" >"$WORK/authcore.log" 2>&1 &
PIDS+=($!)

# nginx: the documented site, an application that echoes the identity, and the ceiling.
SITE=$(awk '/<!-- gateway-test: nginx -->/{f=1;next} f&&/^```nginx/{g=1;next} g&&/^```/{exit} g{print}' docs/gateway.md |
  sed -e "s/example\.com/example.test/g" -e "s/127\.0\.0\.1:3000/127.0.0.1:$AUTHCORE/g" \
    -e "s/127\.0\.0\.1:8080/127.0.0.1:$APP/g" -e "s/listen 80;/listen 127.0.0.1:$PROXY;/g")
mkdir -p "$WORK/tmp"
cat >"$WORK/nginx.conf" <<NGINX
daemon off;
worker_processes 1;
pid $WORK/nginx.pid;
error_log $WORK/error.log warn;
events { worker_connections 1024; }
http {
  access_log off;
  client_body_temp_path $WORK/tmp/body; proxy_temp_path $WORK/tmp/proxy;
  fastcgi_temp_path $WORK/tmp/fastcgi; uwsgi_temp_path $WORK/tmp/uwsgi; scgi_temp_path $WORK/tmp/scgi;
  $SITE
  server {
    listen 127.0.0.1:$APP;
    location / { return 200 "user=\$http_x_auth_request_email\n"; }
  }
  server {
    listen 127.0.0.1:$CEILING;
    location / {
      proxy_set_header X-Auth-Request-Email "demo@example.com";
      proxy_pass http://app;
    }
  }
}
NGINX
taskset -c 0 "$NGINX" -p "$WORK" -e "$WORK/error.log" -c "$WORK/nginx.conf" &
PIDS+=($!)
for _ in $(seq 100); do
  curl -s -o /dev/null "http://127.0.0.1:$PROXY/" -H "Host: app1.example.test" && break
  sleep 0.1
done

# Sign in once (credentials, the demo user) through nginx; keep the session cookie.
JAR="$WORK/jar"
H=(--resolve "auth.example.test:$PROXY:127.0.0.1" -c "$JAR" -b "$JAR" -s)
CSRF=$(curl "${H[@]}" "http://auth.example.test:$PROXY/auth/csrf" | sed -E 's/.*"csrfToken":"([^"]+)".*/\1/')
curl "${H[@]}" -o /dev/null -X POST "http://auth.example.test:$PROXY/auth/callback/credentials" \
  --data-urlencode "csrfToken=$CSRF" --data-urlencode "username=demo" \
  --data-urlencode "password=${AUTHCORE_DEMO_PASSWORD:-authcore-demo}" \
  --data-urlencode "callbackUrl=http://app1.example.test:$PROXY/"
SESSION=$(awk '$6 == "authjs.session-token" { print $7 }' "$JAR")
[[ -n $SESSION ]] || die "sign-in failed (no session cookie)"
CHECK=$(curl -s -H "Host: app1.example.test:$PROXY" -H "Cookie: authjs.session-token=$SESSION" "http://127.0.0.1:$PROXY/")
[[ $CHECK == "user=demo@example.com" ]] || die "the application did not see the user: $CHECK"

run() { # <label> <port>
  local out="$WORK/$2.txt"
  WRK_HOST="app1.example.test:$PROXY" WRK_COOKIE="authjs.session-token=$SESSION" WRK_EXPECT_BODY="user=demo@example.com" \
    taskset -c 1 wrk -t1 -c"$CONNECTIONS" -d"$WARMUP" -s "$LUA" "http://127.0.0.1:$2/" >/dev/null
  WRK_HOST="app1.example.test:$PROXY" WRK_COOKIE="authjs.session-token=$SESSION" WRK_EXPECT_BODY="user=demo@example.com" \
    taskset -c 1 wrk -t1 -c"$CONNECTIONS" -d"$DURATION" --latency -s "$LUA" "http://127.0.0.1:$2/" >"$out"
  local rps p99 bad
  rps=$(awk '/^Requests\/sec:/ { print $2 }' "$out")
  p99=$(awk '$1 == "99%" { print $2 }' "$out")
  bad=$(awk '/^bad_responses:/ { print $2 }' "$out")
  [[ ${bad:-1} == 0 ]] || die "$1: $bad wrong answers ($(grep first_bad "$out" || true))"
  printf '%s\t%s\t%s\n' "$1" "$rps" "$p99"
}
GATEWAY=$(run "nginx + authcore forward auth" "$PROXY")
CEIL=$(run "nginx alone (ceiling)" "$CEILING")
echo "| Scenario (wrk -t1 -c$CONNECTIONS, $DURATION) | req/s | p99 |"
echo "|---|---|---|"
echo "$GATEWAY" | awk -F'\t' '{ printf "| %s | %.0f | %s |\n", $1, $2, $3 }'
echo "$CEIL" | awk -F'\t' '{ printf "| %s | %.0f | %s |\n", $1, $2, $3 }'
awk -v g="$(cut -f2 <<<"$GATEWAY")" -v c="$(cut -f2 <<<"$CEIL")" 'BEGIN { printf "\nforward auth at %.0f%% of the ceiling\n", 100 * g / c }'
