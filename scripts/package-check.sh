#!/usr/bin/env bash
# Every publishable crate packages (metadata, versioned path dependencies) and its package
# holds every file the crate's build reads.
#
# `cargo package` alone checks the manifests and refuses a path dependency without a
# version. Instead of its verification (each crate compiled again from its package, with its
# own features, in a build directory of its own: minutes on a fresh machine), the files the
# compiler and the build scripts read are taken from the build that `cargo clippy
# --all-targets` already made (dep-info of every library, binary, proc-macro and build script
# of the workspace, and the build scripts' `rerun-if-changed` paths) and looked up in each
# package's file list. A file a crate reads but does not ship fails, and so does one it reads
# from outside its own directory (a package carries only its directory). Run it after the
# test command's clippy step: with the same environment and arguments that build is fresh
# and replaying it compiles nothing.
#
# Not checked, as no compilation from the packages happens: a crate that uses a dependency
# feature only a sibling enables (every crate depends on authcore with its default features;
# `scripts/test-features.sh` builds authcore without them).
set -euo pipefail
cd "$(dirname "$0")/.."

target_dir="${CARGO_TARGET_DIR:-$PWD/target}"
case "$target_dir" in /*) ;; *) target_dir="$PWD/$target_dir" ;; esac
work="$target_dir/package-check"
rm -rf "$target_dir/package" "$work"
mkdir -p "$work"

# Offline: the index entries every dependency needs are there from the build (online,
# cargo package refreshes the index first, ten seconds of this step).
cargo package --workspace --exclude 'example-*' --exclude authcore-fuzz --locked --no-verify --quiet --offline
for crate in "$target_dir"/package/*.crate; do
  tar -tzf "$crate" > "$work/$(basename "$crate" .crate).files"
done

# The test command's clippy invocation, arguments and all (others would make clippy check the
# workspace's crates again, here and at its next run), replayed for its artifact list.
cargo clippy --workspace --all-targets --locked --message-format=json --quiet -- -D warnings > "$work/build.json"
cargo metadata --no-deps --format-version 1 --locked > "$work/metadata.json"

python3 - "$work" "$PWD" "$target_dir" <<'EOF'
import json, os, sys

work, root = sys.argv[1], os.path.realpath(sys.argv[2])
build_dir = os.path.realpath(sys.argv[3])
meta = json.load(open(os.path.join(work, "metadata.json")))
packages = {p["id"]: p for p in meta["packages"]}
files = {}
for name in os.listdir(work):
    if name.endswith(".files"):
        # "<name>-<version>/<path>" for every file of the package.
        listed = open(os.path.join(work, name)).read().split("\n")
        files[name[: -len(".files")]] = {l.split("/", 1)[1] for l in listed if "/" in l}

def dep_info(artifact):
    d, base = os.path.split(artifact)
    if base == "build-script-build":
        # A build script: its unit's own directory holds the dep-info, under the hashed name.
        found = [f for f in os.listdir(d) if f.endswith(".d")]
        return os.path.join(d, found[0]) if len(found) == 1 else artifact + ".d"
    stem, ext = os.path.splitext(base)
    if ext in (".rmeta", ".rlib", ".so") and stem.startswith("lib"):
        stem = stem[3:]
    return os.path.join(d, stem + ".d")

def read_paths(dep_file):
    paths = set()
    for line in open(dep_file):
        if line.startswith("#") or ":" not in line:
            continue
        target, deps = line.rstrip("\n").split(": ", 1) if ": " in line else (line.rstrip(":\n"), "")
        for p in [target] + deps.replace("\\ ", "\0").split():
            paths.add(p.replace("\0", " "))
    return paths

reads = {}  # package id -> set of absolute paths its build reads
checked = 0
for line in open(os.path.join(work, "build.json")):
    msg = json.loads(line)
    pkg = packages.get(msg.get("package_id"))
    if pkg is None:
        continue
    out = reads.setdefault(pkg["id"], set())
    if msg["reason"] == "compiler-artifact":
        kinds = set(msg["target"]["kind"])
        if not kinds & {"lib", "rlib", "proc-macro", "bin", "custom-build"} or msg["profile"]["test"]:
            continue
        dep_file = next((d for d in map(dep_info, msg["filenames"]) if os.path.isfile(d)), None)
        if dep_file is None:
            sys.exit(f"package check: no dep-info for {msg['target']['name']} ({msg['filenames']})")
        out |= {p for p in read_paths(dep_file) if not p.endswith((".d", ".rmeta", ".rlib"))}
        checked += 1
    elif msg["reason"] == "build-script-executed":
        pkg_dir = os.path.dirname(pkg["manifest_path"])
        output = os.path.join(os.path.dirname(msg["out_dir"]), "output")
        for l in open(output):
            for prefix in ("cargo:rerun-if-changed=", "cargo::rerun-if-changed="):
                if l.startswith(prefix):
                    out.add(os.path.join(pkg_dir, l[len(prefix):].strip()))

failures = []
for pid, paths in reads.items():
    pkg = packages[pid]
    key = f"{pkg['name']}-{pkg['version']}"
    if key not in files:
        continue  # not published (examples, fuzz)
    pkg_dir = os.path.realpath(os.path.dirname(pkg["manifest_path"]))
    for p in sorted(paths):
        p = os.path.realpath(p)
        if os.path.basename(p) in ("Cargo.toml", "clippy.toml", ".clippy.toml"):
            continue  # read by Cargo and Clippy, not by the compiled crate
        if not p.startswith(root + os.sep) or p.startswith(build_dir + os.sep):
            continue  # the toolchain, the registry, generated files in the build directory
        if os.path.isdir(p):
            wanted = [os.path.join(d, f) for d, _, fs in os.walk(p) for f in fs]
        else:
            wanted = [p]
        for w in wanted:
            if not w.startswith(pkg_dir + os.sep):
                failures.append(f"{pkg['name']} reads {os.path.relpath(w, root)}, outside its package")
            elif os.path.relpath(w, pkg_dir) not in files[key]:
                failures.append(f"{pkg['name']} reads {os.path.relpath(w, pkg_dir)}, which its package leaves out")

if checked == 0:
    sys.exit("package check: the build listed no workspace artifact")
if failures:
    sys.exit("package check failed:\n  " + "\n  ".join(sorted(set(failures))))
print(f"packages of {', '.join(sorted(files))}: every file their {checked} build targets read is in them")
EOF
