//! Release builds on x86_64 Linux link the server's binaries with `link-order.txt` (made by
//! `scripts/link-order.sh`) as LLD's symbol ordering file: the functions that start-up and
//! the demo's requests run are placed side by side, so the server maps a few hundred KiB of
//! its code instead of pages scattered over all of it (idle RSS, see the README).
//!
//! Only where the linker is known to be LLD (the default of Rust ≥ 1.90 on
//! `x86_64-unknown-linux-gnu`, this crate's MSRV is later): not when the flags or Cargo's
//! configuration choose a linker; `AUTHCORE_LINK_ORDER=off` leaves it out.

use std::env;
use std::path::Path;

fn main() {
    println!("cargo:rerun-if-changed=link-order.txt");
    println!("cargo:rerun-if-env-changed=AUTHCORE_LINK_ORDER");
    println!("cargo:rerun-if-env-changed=CARGO_TARGET_X86_64_UNKNOWN_LINUX_GNU_LINKER");
    let target = env::var("TARGET").unwrap_or_default();
    let profile = env::var("PROFILE").unwrap_or_default();
    let flags = env::var("CARGO_ENCODED_RUSTFLAGS").unwrap_or_default();
    // `-C linker=…`, `-C linker-flavor`, `-C linker-features`, `-C link-self-contained`,
    // `-C link-arg=-fuse-ld=…`, or a linker from Cargo's configuration (`RUSTC_LINKER`).
    // Deliberately broad (it also catches `-C linker-plugin-lto`): a build without the
    // ordering file only loses its RSS saving, one with it under another linker fails.
    let other_linker = ["linker", "link-self-contained", "fuse-ld"]
        .iter()
        .any(|f| flags.contains(f))
        || env::var_os("RUSTC_LINKER").is_some()
        || env::var_os("CARGO_TARGET_X86_64_UNKNOWN_LINUX_GNU_LINKER").is_some();
    let off = env::var("AUTHCORE_LINK_ORDER").is_ok_and(|v| v == "off");
    let file =
        Path::new(&env::var("CARGO_MANIFEST_DIR").unwrap_or_default()).join("link-order.txt");
    if target == "x86_64-unknown-linux-gnu"
        && profile == "release"
        && !other_linker
        && !off
        && file.is_file()
    {
        println!(
            "cargo:rustc-link-arg-bins=-Wl,--symbol-ordering-file={}",
            file.display()
        );
        println!("cargo:rustc-link-arg-bins=-Wl,--no-warn-symbol-ordering");
    }
}
