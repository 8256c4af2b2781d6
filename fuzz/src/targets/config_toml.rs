//! The standalone server's TOML configuration file:
//! `authcore_server::config_file::ConfigFile::parse` on arbitrary text, then, for the files it
//! accepts, `auth_js_env` (the Auth.js variables the file stands for), `Debug` (which
//! redacts secrets) and `Clone`/`PartialEq`.
//!
//! Properties: parsing is deterministic (twice the same result); a clone equals the
//! original; `[auth] trust_host` reaches its variable.

use authcore_server::config_file::ConfigFile;

/// One fuzz input (the `fuzz_targets/config_toml.rs` target and the regression test); not UTF-8: skipped, as libFuzzer does for a `&str` target.
pub fn run(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let Ok(file) = ConfigFile::parse(text) else {
        return;
    };
    assert_eq!(
        ConfigFile::parse(text).ok().as_ref(),
        Some(&file),
        "parse is not deterministic"
    );
    assert_eq!(file.clone(), file);
    let debug = format!("{file:?}");
    std::hint::black_box(&debug);
    let env = file.auth_js_env();
    if let Some(trust) = file.auth.trust_host {
        assert_eq!(env.get("AUTH_TRUST_HOST"), Some(trust.to_string().as_str()));
    }
    std::hint::black_box(format!("{env:?}"));
}
