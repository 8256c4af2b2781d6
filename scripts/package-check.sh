#!/usr/bin/env bash
# Every publishable crate packages (metadata, versioned path dependencies, the files it
# needs) and compiles from its package alone.
#
# `cargo package` verifies by building each crate from its package, each with its own
# features, in a build directory of its own: minutes on a fresh machine. Here the packages
# are made without that build, unpacked side by side as one workspace in which each crate
# finds its siblings as their packages (`[patch]`), and checked together (`cargo check`) in
# the shared build directory, where the dependencies other steps compiled are reused. A file
# a crate reads left out of its package, or a path dependency without a version, fails
# here as in the verification. Checked together, the crates share their dependencies'
# features: a crate that uses a feature only a sibling enables is not caught (every crate
# depends on authcore with its default features; `scripts/test-features.sh` builds authcore
# alone without them).
set -euo pipefail
cd "$(dirname "$0")/.."

target_dir="${CARGO_TARGET_DIR:-$PWD/target}"
case "$target_dir" in /*) ;; *) target_dir="$PWD/$target_dir" ;; esac
check_dir="$target_dir/package-check"

rm -rf "$target_dir/package" "$check_dir"
cargo package --workspace --exclude 'example-*' --exclude authcore-fuzz --locked --no-verify --quiet

mkdir -p "$check_dir"
members=()
names=()
patches=()
for crate in "$target_dir"/package/*.crate; do
  dir="$(basename "$crate" .crate)"
  name="${dir%-*}"
  # --touch: the unpacked files are newer than any earlier check of them, whatever time
  # the package recorded, so a changed crate is never taken for an unchanged one.
  tar -xzf "$crate" --touch -C "$check_dir"
  members+=("\"$dir\"")
  names+=("$name")
  patches+=("$name = { path = \"$dir\" }")
done

{
  echo "[workspace]"
  echo "resolver = \"3\""
  echo "members = [$(IFS=,; echo "${members[*]}")]"
  echo
  echo "[patch.crates-io]"
  printf '%s\n' "${patches[@]}"
} > "$check_dir/Cargo.toml"
# The workspace's lock file pins the same versions; entries the packages do not use drop out.
cp Cargo.lock "$check_dir/Cargo.lock"

echo "checking the packages of ${names[*]}"
(cd "$check_dir" && cargo check --workspace --offline --quiet)
