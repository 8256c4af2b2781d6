#!/usr/bin/env bash
# Runs the whole test suite on a fresh machine: installs what the tests need, then
# formatting and lint checks, then every test of the workspace (unit, integration,
# interop against the real @auth/core, doctests).
set -euo pipefail
cd "$(dirname "$0")/.."

need_apt=()
command -v node >/dev/null 2>&1 || need_apt+=(nodejs)
command -v npm >/dev/null 2>&1 || need_apt+=(npm)
# Headless Chromium for the browser tests (WebAuthn with a virtual authenticator).
[ -x /usr/bin/chromium ] || need_apt+=(chromium)
# The real proxies in front of the gateway (started on loopback by the tests themselves;
# the packages' own services are not used).
command -v nginx >/dev/null 2>&1 || [ -x /usr/sbin/nginx ] || need_apt+=(nginx)
command -v caddy >/dev/null 2>&1 || need_apt+=(caddy)
command -v openssl >/dev/null 2>&1 || need_apt+=(openssl)
# OpenLDAP for authcore-ldap's tests, which start their own slapd on loopback (the
# package's own service is not used) and seed it with ldap-utils' ldapadd.
[ -x /usr/sbin/slapd ] && command -v ldapadd >/dev/null 2>&1 || need_apt+=(slapd ldap-utils)
# Python with venv for the Python relying party of the OpenID Provider tests.
python3 -c 'import venv, ensurepip' >/dev/null 2>&1 || need_apt+=(python3-venv)
if [ ${#need_apt[@]} -gt 0 ]; then
  echo "==> [${SECONDS}s] installing ${need_apt[*]} with apt"
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need_apt[@]}"
fi

# cargo-deny, installed once per machine, builds in the background at the lowest priority
# while the steps below run (their test runs leave a core idle much of the time); the deny
# step waits for it. Built without link-time optimisation (it reads a few hundred
# manifests, which needs no optimised build), in a build directory of its own, so the
# workspace's build directory is never locked by it.
deny_install=""
deny_log="$(mktemp)"
if ! command -v cargo-deny >/dev/null 2>&1; then
  echo "==> [${SECONDS}s] cargo install cargo-deny (in the background)"
  env -u CARGO_TARGET_DIR CARGO_PROFILE_RELEASE_LTO=false CARGO_PROFILE_RELEASE_CODEGEN_UNITS=16 \
    CARGO_PROFILE_RELEASE_OPT_LEVEL=1 nice -n 19 cargo install cargo-deny --locked >"$deny_log" 2>&1 &
  deny_install=$!
fi

# Real peers, pinned by their package-lock.json: @auth/core for the interop tests, the
# oidc-provider OpenID provider that the OAuth end-to-end tests start on loopback,
# openid-client, the relying party that signs in through authcore as an OpenID Provider,
# the SMTP server of the email tests, playwright-core driving Debian's Chromium, and
# simple-icons for the check that the vendored brand icons are current; @auth/express, the
# real Auth.js app of the shared-session browser test.
for dir in interop testsupport/oidc testsupport/oidc-rp testsupport/smtp testsupport/browser testsupport/authjs-express scripts; do
  echo "==> [${SECONDS}s] npm ci --prefix $dir"
  npm ci --prefix "$dir" --no-audit --no-fund --loglevel=error
done

# Authlib (PyPI), the Python relying party of the OpenID Provider tests, in a virtual
# environment of its own, pinned by its requirements file.
echo "==> [${SECONDS}s] pip install -r testsupport/oidc-rp/requirements.txt (in testsupport/oidc-rp/.venv)"
[ -x testsupport/oidc-rp/.venv/bin/python ] || python3 -m venv testsupport/oidc-rp/.venv
testsupport/oidc-rp/.venv/bin/pip install -q --disable-pip-version-check -r testsupport/oidc-rp/requirements.txt

# Database servers for the adapter tests (PostgreSQL at 127.0.0.1:5432, database `test`,
# trust auth; MariaDB at 127.0.0.1:3306, `root` without a password, database `test`; Redis
# at 127.0.0.1:6379): start them if they have stopped.
if command -v pg_isready >/dev/null 2>&1 && ! pg_isready -q -h 127.0.0.1 -p 5432; then
  echo "==> [${SECONDS}s] starting PostgreSQL"
  pg_ctlcluster --skip-systemctl-redirect "$(ls /etc/postgresql)" main start || true
  for _ in $(seq 1 30); do pg_isready -q -h 127.0.0.1 -p 5432 && break; sleep 1; done
fi
if command -v mariadb-admin >/dev/null 2>&1 && ! mariadb-admin -h 127.0.0.1 -P 3306 -u root ping >/dev/null 2>&1; then
  echo "==> [${SECONDS}s] starting MariaDB"
  start-stop-daemon --start --oknodo --background --exec /usr/sbin/mariadbd || true
  for _ in $(seq 1 30); do mariadb-admin -h 127.0.0.1 -P 3306 -u root ping >/dev/null 2>&1 && break; sleep 1; done
fi
if command -v mariadb >/dev/null 2>&1; then
  mariadb -h 127.0.0.1 -P 3306 -u root -e 'CREATE DATABASE IF NOT EXISTS test' || true
fi
if command -v redis-cli >/dev/null 2>&1 && ! redis-cli -h 127.0.0.1 -p 6379 ping >/dev/null 2>&1; then
  echo "==> [${SECONDS}s] starting Redis"
  redis-server --daemonize yes --bind 127.0.0.1 -::1 --port 6379 --save "" --appendonly no \
    --dir /var/lib/redis --logfile /var/log/redis/ci.log || true
  for _ in $(seq 1 30); do redis-cli -h 127.0.0.1 -p 6379 ping >/dev/null 2>&1 && break; sleep 1; done
fi

echo "==> [${SECONDS}s] brand icons vendored from the pinned simple-icons (crates/authcore/src/brand_icons.rs)"
node scripts/vendor-brand-icons.mjs --check

echo "==> [${SECONDS}s] cargo fmt --check"
cargo fmt --all -- --check

# The check steps run without RUSTC_BOOTSTRAP, as the tests build: proc-macro2's and
# thiserror's build scripts rerun when that variable changes and turn on other cfgs, so a
# check step with it and a test build without it would each rebuild every proc macro and
# everything above them at every run. Only rustdoc's JSON output needs the variable, and
# scripts/public-api.sh gives it to rustdoc alone.
echo "==> [${SECONDS}s] cargo clippy"
cargo clippy --workspace --all-targets --locked -- -D warnings

# Right after clippy, whose build it replays.
echo "==> [${SECONDS}s] every publishable crate packages with the files it reads (scripts/package-check.sh)"
./scripts/package-check.sh

echo "==> [${SECONDS}s] cargo doc (broken or private intra-doc links fail)"
RUSTDOCFLAGS="-D warnings" cargo doc --workspace --no-deps --locked

echo "==> [${SECONDS}s] the library crates' public APIs against crates/<name>/public-api.txt (scripts/public-api.sh)"
./scripts/public-api.sh

# Every crate's tests, among them the fuzz targets' saved reproducers and committed seeds
# replayed as an ordinary test (`fuzz/tests/regressions.rs`, no instrumented build;
# exploring new inputs is scripts/fuzz-smoke.sh and fuzz/README.md's long runs).
#
# With cargo-nextest (on this machine kind): each test in a process of its own, four at a
# time (.config/nextest.toml). The test binaries are built first; while they run (their tests
# wait on sockets, servers and browsers more than on the cores), authcore's builds with no
# optional feature and with each alone (scripts/test-features.sh) compile beside them at a
# lower priority: nextest holds no lock on the build directory while tests run. Then the
# doctests, which nextest does not run. Without nextest: cargo test, one test binary after
# another, then the feature builds.
if command -v cargo-nextest >/dev/null 2>&1; then
  echo "==> [${SECONDS}s] cargo nextest run: building the tests"
  cargo nextest run --workspace --locked --no-run
  echo "==> [${SECONDS}s] cargo nextest run, and beside it authcore with no optional feature and with each alone (scripts/test-features.sh)"
  features_log="$(mktemp)"
  # A few seconds late, so that nextest's own look at the (built) tests takes the build
  # directory's lock first.
  (sleep 5 && nice -n 10 ./scripts/test-features.sh) >"$features_log" 2>&1 &
  features=$!
  tests_ok=0
  cargo nextest run --workspace --locked --no-fail-fast || tests_ok=$?
  echo "==> [${SECONDS}s] waiting for scripts/test-features.sh"
  features_ok=0
  wait "$features" || features_ok=$?
  cat "$features_log"
  [ "$tests_ok" = 0 ] || { echo "cargo nextest run failed" >&2; exit 1; }
  [ "$features_ok" = 0 ] || { echo "scripts/test-features.sh failed" >&2; exit 1; }
  echo "==> [${SECONDS}s] cargo test --doc"
  cargo test --workspace --locked --doc
else
  # Without nextest, the suites of nextest's `heavy` group run after the others, one test
  # at a time, as .config/nextest.toml runs them.
  heavy=(browser_ differential:: hygiene:: load_faults::)
  echo "==> [${SECONDS}s] cargo test"
  cargo test --workspace --locked -- "${heavy[@]/#/--skip=}"
  echo "==> [${SECONDS}s] cargo test: the heavy suites, one test at a time"
  cargo test -p authcore-server --test integration --locked -- --test-threads=1 "${heavy[@]}"
  echo "==> [${SECONDS}s] authcore with no optional feature and with each alone (scripts/test-features.sh)"
  ./scripts/test-features.sh
fi

echo "==> [${SECONDS}s] cargo deny (licences, bans, sources; advisories need the network, which CI has not)"
if [ -n "$deny_install" ]; then
  wait "$deny_install" || { cat "$deny_log" >&2; echo "cargo install cargo-deny failed" >&2; exit 1; }
fi
cargo deny --log-level error check licenses bans sources


# The MSRV (rust-version of Cargo.toml) builds everything. When it is the toolchain in use,
# the steps above were that check.
msrv="$(sed -n 's/^rust-version = "\(.*\)"/\1/p' Cargo.toml)"
if rustc --version | grep -Eq "^rustc ${msrv//./\\.}(\.0)? "; then
  echo "==> [${SECONDS}s] MSRV $msrv: the toolchain in use ($(rustc --version))"
else
  echo "==> [${SECONDS}s] MSRV $msrv: cargo +$msrv check"
  rustup toolchain list | grep -q "^$msrv" || rustup toolchain install "$msrv" --profile minimal
  cargo "+$msrv" check --workspace --all-targets --locked
fi
