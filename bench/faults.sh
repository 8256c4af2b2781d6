#!/usr/bin/env bash
# Load with faults, full size: crates/authcore-server/tests/load_faults.rs in
# release mode with 10,000 sign-ins and 100,000 session reads per store (PostgreSQL, then
# Redis), two instances each, then the store refused and silent for 9 s each under traffic
# (the requests started once the circuit breakers are open must answer in under 1 s).
# The test command runs the same test with 200 / 2,000.
#
#   bench/faults.sh                                  # both stores
#   LOAD_SIGNINS=1000 LOAD_READS=10000 bench/faults.sh
#   bench/faults.sh redis                            # one store: postgres or redis
#
# Needs PostgreSQL at 127.0.0.1:5432 (database `test`, trust; or AUTHCORE_TEST_POSTGRES_URL)
# and Redis at 127.0.0.1:6379. Prints one line of figures per store.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
export LOAD_SIGNINS="${LOAD_SIGNINS:-10000}" LOAD_READS="${LOAD_READS:-100000}"
# The suite is the load_faults module of authcore-server's test binary; a store narrows it
# to that store's test.
cargo test --release -p authcore-server --test integration -- --nocapture --test-threads=1 \
    "load_faults::${1:-}" \
    2>&1 | grep -E '^load_faults |^test |test result|panicked|assert'
