#!/usr/bin/env bash
# Account enumeration by time: does an answer of authcore-server take longer for an address
# that has an account than for one that has none? For each of password sign-in (a wrong
# password), the forgotten-password request and sign-up, N requests with a known address
# and N with an unknown one, interleaved (the order of each pair alternates), each timed by
# curl's time_total; then the median, the 90th percentile, the difference of the medians
# with a bootstrap 95 % interval, and a Mann-Whitney U test.
#
# The server is the release build, on loopback, with password accounts in a fresh SQLite
# database, the console mailer (every link printed to a file), rate limits off
# (AUTHCORE_RATE_LIMITS=off: the limits would refuse the repeated requests) and, when the
# binary knows it, the sign-up page on (AUTHCORE_PASSWORD_SIGN_UP=on, AUTHCORE_SIGN_UP=open).
# A route the binary does not serve is reported and skipped.
#
#   nice cargo build --release -p authcore-server
#   bench/enumeration.sh [path/to/authcore-server]     # SAMPLES=200 by default
#
# Needs curl and python3 (standard library only). Sends requests to 127.0.0.1 only, a
# bounded number of them, and stops the server it started.
set -euo pipefail

ROOT="$(cd "$(dirname "$0")/.." && pwd)"
BIN="${1:-${CARGO_TARGET_DIR:-$ROOT/target}/release/authcore-server}"
SAMPLES="${SAMPLES:-200}"
WARMUP="${WARMUP:-10}"
PASSWORD="a horse, a battery and a staple"
WRONG="not the password of anyone"
KNOWN="known@example.com"

[[ -x "$BIN" ]] || { echo "no server binary at $BIN: build it with cargo build --release -p authcore-server" >&2; exit 1; }
command -v curl >/dev/null || { echo "needs curl" >&2; exit 1; }
command -v python3 >/dev/null || { echo "needs python3" >&2; exit 1; }

WORK="$(mktemp -d "${TMPDIR:-/tmp}/authcore-enumeration.XXXXXX")"
SERVER_PID=""
cleanup() {
    if [[ -n "$SERVER_PID" ]]; then
        kill "$SERVER_PID" 2>/dev/null || true
        wait "$SERVER_PID" 2>/dev/null || true
    fi
    rm -rf "$WORK"
}
trap cleanup EXIT

PORT="$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')"
BASE="http://127.0.0.1:$PORT"
export AUTH_SECRET="enumeration-bench-secret-0123456789abcdef"
export AUTHCORE_DATABASE_URL="sqlite://$WORK/enumeration.db?mode=rwc"

# The known account, made as an operator makes it (the address taken as confirmed).
printf '%s\n' "$PASSWORD" | "$BIN" add-user "$KNOWN" >"$WORK/add-user.log" 2>&1 \
    || { cat "$WORK/add-user.log" >&2; exit 1; }

SIGN_UP_VARS=()
if grep -qa AUTHCORE_PASSWORD_SIGN_UP "$BIN"; then
    SIGN_UP_VARS=(AUTHCORE_PASSWORD_SIGN_UP=on AUTHCORE_SIGN_UP=open)
fi
env AUTHCORE_ADDR="127.0.0.1:$PORT" AUTHCORE_PASSWORDS=on AUTHCORE_RATE_LIMITS=off \
    RUST_LOG=error "${SIGN_UP_VARS[@]}" "$BIN" >"$WORK/server.log" 2>&1 &
SERVER_PID=$!
for _ in $(seq 1 300); do
    curl -s -o /dev/null "$BASE/healthz" && break
    kill -0 "$SERVER_PID" 2>/dev/null || { cat "$WORK/server.log" >&2; exit 1; }
    sleep 0.1
done

JAR="$WORK/jar"
TOKEN="$(curl -s -c "$JAR" -b "$JAR" "$BASE/auth/csrf" | python3 -c 'import json,sys; print(json.load(sys.stdin)["csrfToken"])')"

# One timed request: prints "<status> <time_total>".
timed() { # path, then curl's other arguments
    local path="$1"
    shift
    curl -s -o /dev/null -b "$JAR" -w '%{http_code} %{time_total}\n' \
        -H 'Accept: application/json' -X POST "$BASE$path" --data-urlencode "csrfToken=$TOKEN" "$@"
}

# One request of `endpoint` for the `kind` (known or unknown) address of sample `i`.
request() { # endpoint, kind, i
    local endpoint="$1" kind="$2" i="$3" email
    case "$kind" in
        known) email="$KNOWN" ;;
        # A new address each time: a sign-up makes the account, which would then be known.
        unknown) email="nobody-$endpoint-$i-$RANDOM@example.com" ;;
    esac
    case "$endpoint" in
        signin) timed /auth/callback/password -H 'X-Auth-Return-Redirect: 1' \
            --data-urlencode "username=$email" --data-urlencode "password=$WRONG" ;;
        forgot) timed /auth/password/forgot --data-urlencode "email=$email" ;;
        signup) timed /auth/password/signup --data-urlencode "email=$email" \
            --data-urlencode "password=$PASSWORD" ;;
    esac
}

ENDPOINTS=()
for endpoint in signin forgot signup; do
    case "$endpoint" in
        signin) ENDPOINTS+=(signin); continue ;;
    esac
    status="$(curl -s -o /dev/null -w '%{http_code}' "$BASE/auth/password/$endpoint")"
    if [[ "$status" == 200 ]]; then
        ENDPOINTS+=("$endpoint")
    else
        echo "# $endpoint: GET /auth/password/$endpoint answers $status: this build does not serve it, skipped"
    fi
done

RESULTS="$WORK/results.tsv"
: >"$RESULTS"
for endpoint in "${ENDPOINTS[@]}"; do
    for i in $(seq 1 "$WARMUP"); do
        request "$endpoint" known "w$i" >/dev/null
        request "$endpoint" unknown "w$i" >/dev/null
    done
    for i in $(seq 1 "$SAMPLES"); do
        if ((i % 2)); then order=(known unknown); else order=(unknown known); fi
        for kind in "${order[@]}"; do
            read -r status secs < <(request "$endpoint" "$kind" "$i")
            printf '%s\t%s\t%s\t%s\n' "$endpoint" "$kind" "$status" "$secs" >>"$RESULTS"
        done
    done
done

echo "# $(nproc) CPUs, commit $(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo unknown), $SAMPLES samples per row, load average $(cut -d' ' -f1-3 /proc/loadavg)"
python3 - "$RESULTS" <<'EOF'
import math, random, statistics, sys
from collections import defaultdict

samples = defaultdict(list)
statuses = defaultdict(set)
for line in open(sys.argv[1]):
    endpoint, kind, status, secs = line.split("\t")
    samples[(endpoint, kind)].append(float(secs) * 1000)
    statuses[(endpoint, kind)].add(status)

def pct(xs, p):
    xs = sorted(xs)
    k = (len(xs) - 1) * p
    lo, hi = math.floor(k), math.ceil(k)
    return xs[lo] + (xs[hi] - xs[lo]) * (k - lo)

def bootstrap(a, b, rounds=2000, seed=7):
    rng = random.Random(seed)
    diffs = sorted(
        statistics.median(rng.choices(a, k=len(a))) - statistics.median(rng.choices(b, k=len(b)))
        for _ in range(rounds)
    )
    return diffs[int(0.025 * rounds)], diffs[int(0.975 * rounds) - 1]

def mann_whitney(a, b):
    """Two-sided p of the U test, normal approximation with the tie correction."""
    pooled = sorted([(x, 0) for x in a] + [(x, 1) for x in b])
    ranks, i, ties = [0.0] * len(pooled), 0, 0.0
    while i < len(pooled):
        j = i
        while j + 1 < len(pooled) and pooled[j + 1][0] == pooled[i][0]:
            j += 1
        for k in range(i, j + 1):
            ranks[k] = (i + j) / 2 + 1
        t = j - i + 1
        ties += t**3 - t
        i = j + 1
    n1, n2 = len(a), len(b)
    r1 = sum(r for r, (_, g) in zip(ranks, pooled) if g == 0)
    u = r1 - n1 * (n1 + 1) / 2
    n = n1 + n2
    sigma = math.sqrt(n1 * n2 / 12 * ((n + 1) - ties / (n * (n - 1))))
    z = (u - n1 * n2 / 2) / sigma if sigma else 0.0
    return u, 2 * (1 - 0.5 * (1 + math.erf(abs(z) / math.sqrt(2))))

names = {"signin": "sign-in, wrong password", "forgot": "forgotten password", "signup": "sign-up"}
print()
print("| Request | Address | Answers | Median ms | p90 ms | Known − unknown, medians (95 % CI) | Mann-Whitney p |")
print("|---|---|---|---:|---:|---:|---:|")
for endpoint in ["signin", "forgot", "signup"]:
    if (endpoint, "known") not in samples:
        continue
    known, unknown = samples[(endpoint, "known")], samples[(endpoint, "unknown")]
    lo, hi = bootstrap(known, unknown)
    diff = statistics.median(known) - statistics.median(unknown)
    _, p = mann_whitney(known, unknown)
    for kind, xs in (("known", known), ("unknown", unknown)):
        first = kind == "known"
        print(
            f"| {names[endpoint] if first else ''} | {kind} | {', '.join(sorted(statuses[(endpoint, kind)]))} "
            f"| {statistics.median(xs):.1f} | {pct(xs, 0.9):.1f} "
            f"| {f'{diff:+.2f} ({lo:+.2f} … {hi:+.2f})' if first else ''} "
            f"| {f'{p:.3f}' if first else ''} |"
        )
EOF
