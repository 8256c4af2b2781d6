//! The standalone server's TOML configuration file:
//! `authcore_server::config_file::ConfigFile::parse` on arbitrary text, then, for the files it
//! accepts, the typed settings handed to authcore (`[auth]` as `AuthJsSettings`, each
//! `[providers.<id>]` as its preset's `SettingValues`), `Debug` (which redacts secrets) and
//! `Clone`/`PartialEq`.
//!
//! Properties: parsing is deterministic (twice the same result); a clone equals the
//! original; `[auth] trust_host` reaches its setting; a provider section's values hold its
//! client id.

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
    let auth = file.auth.auth_js_settings();
    assert_eq!(auth.trust_host, file.auth.trust_host);
    std::hint::black_box(format!("{auth:?}"));
    for section in file.providers.0.values() {
        let values = section.values();
        assert_eq!(values.get("id"), Some(section.id.as_str()));
        std::hint::black_box(format!("{values:?}"));
    }
}
