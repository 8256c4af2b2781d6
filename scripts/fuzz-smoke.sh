#!/usr/bin/env bash
# Fuzz smoke run: builds the cargo-fuzz targets of fuzz/ and runs each one for a few
# seconds (FUZZ_SMOKE_SECS, default 6: 7 targets × 6 s = 42 s of fuzzing) starting from
# its committed seeds, after replaying the inputs saved under fuzz/regressions/<target>/.
# Exits non-zero if any target crashes, times out, runs out of memory or fails a regression.
#
#   scripts/fuzz-smoke.sh                  # all targets
#   scripts/fuzz-smoke.sh cookies request  # some of them
#
# Toolchain: stable with `-s none` (no sanitizer: coverage guidance works, and Rust panics,
# overflows and debug assertions are caught); FUZZ_TOOLCHAIN=nightly builds with
# AddressSanitizer instead (authcore has no `unsafe`; ASan adds little but build time).
# New corpus entries and crash artifacts go to a scratch directory under /var/tmp (kept
# and printed on failure); the committed seeds are only read.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root/fuzz"

# A target directory of its own (instrumented builds share nothing with the workspace's),
# kept between runs: FUZZ_TARGET_DIR, not the caller's CARGO_TARGET_DIR.
export CARGO_TARGET_DIR="${FUZZ_TARGET_DIR:-/var/tmp/authcore-fuzz-target}"
# As `cargo fuzz run` does: the bundled SQLite (pulled in by authcore-server) defines the
# same static table twice, which AddressSanitizer would report as an ODR violation.
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_odr_violation=0"
# Line tables for libFuzzer's stack traces (the workspace's release profile has none).
export CARGO_PROFILE_RELEASE_DEBUG="${CARGO_PROFILE_RELEASE_DEBUG:-line-tables-only}"
secs="${FUZZ_SMOKE_SECS:-6}"
triple="$(rustc -vV | sed -n 's/^host: //p')"

if ! cargo fuzz --version >/dev/null 2>&1; then
    echo "fuzz-smoke: installing cargo-fuzz" >&2
    cargo install cargo-fuzz --locked
fi

toolchain="${FUZZ_TOOLCHAIN:-stable}"
case "$toolchain" in
    nightly) build=(cargo +nightly fuzz build --features libfuzzer) ;;
    stable) build=(cargo +stable fuzz build -s none --features libfuzzer) ;;
    *) echo "fuzz-smoke: FUZZ_TOOLCHAIN must be nightly or stable" >&2; exit 2 ;;
esac

if [[ $# -gt 0 ]]; then
    targets=("$@")
else
    mapfile -t targets < <(cargo fuzz list)
fi

echo "fuzz-smoke: building ${#targets[@]} targets with ${build[*]} (CARGO_TARGET_DIR=$CARGO_TARGET_DIR)"
# `cargo fuzz build` builds every target; with a name, only that one.
if [[ $# -eq 0 ]]; then
    nice -n 10 "${build[@]}"
else
    for t in "${targets[@]}"; do nice -n 10 "${build[@]}" "$t"; done
fi

bin_dir="$CARGO_TARGET_DIR/$triple/release"
scratch="$(mktemp -d /var/tmp/authcore-fuzz-smoke.XXXXXX)"
failed=()
start=$SECONDS
for t in "${targets[@]}"; do
    bin="$bin_dir/$t"
    if [[ ! -x "$bin" ]]; then
        echo "fuzz-smoke: $t: no binary at $bin" >&2
        failed+=("$t")
        continue
    fi
    mkdir -p "$scratch/corpus/$t" "$scratch/artifacts/$t"
    log="$scratch/$t.log"
    # 1. Saved reproducers must pass (run each once).
    if compgen -G "regressions/$t/*" >/dev/null; then
        if ! "$bin" -rss_limit_mb=2048 -timeout=10 regressions/"$t"/* >"$scratch/$t.regressions.log" 2>&1; then
            echo "fuzz-smoke: $t: a saved regression input fails (log: $scratch/$t.regressions.log)"
            grep -m1 -A4 'panicked at' "$scratch/$t.regressions.log" || tail -n 20 "$scratch/$t.regressions.log"
            failed+=("$t")
            continue
        fi
    fi
    # 2. A short fuzzing run from the seeds (read-only: new inputs go to the scratch corpus).
    dict=()
    [[ -f "dicts/$t.dict" ]] && dict=("-dict=dicts/$t.dict")
    if nice -n 10 "$bin" "$scratch/corpus/$t" "corpus/$t" \
        -max_total_time="$secs" -rss_limit_mb=2048 -timeout=10 -max_len=16384 \
        -artifact_prefix="$scratch/artifacts/$t/" -print_final_stats=1 "${dict[@]}" \
        >"$log" 2>&1; then
        runs="$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")"
        rss="$(sed -n 's/^stat::peak_rss_mb: *//p' "$log")"
        echo "fuzz-smoke: $t: ok (${runs:-?} runs in ${secs}s, peak RSS ${rss:-?} MB)"
    else
        echo "fuzz-smoke: $t: FAILED (log: $log)"
        grep -m1 -A6 -E 'panicked at|ERROR: libFuzzer|ERROR: AddressSanitizer' "$log" || tail -n 30 "$log"
        ls "$scratch/artifacts/$t/" 2>/dev/null | sed "s|^|    artifact: $scratch/artifacts/$t/|"
        failed+=("$t")
    fi
done

echo "fuzz-smoke: fuzzed for $((SECONDS - start)) s"
if [[ ${#failed[@]} -gt 0 ]]; then
    echo "fuzz-smoke: FAILED: ${failed[*]} (scratch kept: $scratch)"
    exit 1
fi
rm -rf "$scratch"
echo "fuzz-smoke: all ${#targets[@]} targets passed"
