//! Every fuzz target's saved reproducers (`regressions/<target>/`, inputs that once failed)
//! and committed seeds (`corpus/<target>/`) replayed as an ordinary test, without libFuzzer
//! or instrumentation: a property broken again fails here, in the test command. Exploring
//! new inputs is `scripts/fuzz-smoke.sh` (a short run) and the long runs of `README.md`.

use std::path::Path;

type Target = fn(&[u8]);

const TARGETS: &[(&str, Target)] = &[
    ("callback_url", authcore_fuzz::targets::callback_url::run),
    ("config_toml", authcore_fuzz::targets::config_toml::run),
    ("cookies", authcore_fuzz::targets::cookies::run),
    (
        "email_normalise",
        authcore_fuzz::targets::email_normalise::run,
    ),
    ("jwt_decode", authcore_fuzz::targets::jwt_decode::run),
    (
        "oauth_responses",
        authcore_fuzz::targets::oauth_responses::run,
    ),
    ("request", authcore_fuzz::targets::request::run),
];

#[test]
fn saved_regressions_and_seeds_pass() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    for (name, run) in TARGETS {
        let mut replayed = 0;
        for dir in ["regressions", "corpus"] {
            let Ok(entries) = std::fs::read_dir(root.join(dir).join(name)) else {
                continue;
            };
            let mut files: Vec<_> = entries.map(|e| e.expect("readable entry").path()).collect();
            files.sort();
            for file in files {
                let input = std::fs::read(&file).expect("readable input");
                eprintln!("{name}: {}", file.display());
                run(&input);
                replayed += 1;
            }
        }
        assert!(replayed > 0, "{name}: no seed and no regression to replay");
    }
}

#[test]
fn every_target_is_replayed() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut binaries: Vec<String> = std::fs::read_dir(root.join("fuzz_targets"))
        .expect("fuzz_targets/")
        .map(|e| {
            let path = e.expect("readable entry").path();
            path.file_stem()
                .expect("a file name")
                .to_string_lossy()
                .into_owned()
        })
        .collect();
    binaries.sort();
    let replayed: Vec<String> = TARGETS.iter().map(|(n, _)| (*n).to_owned()).collect();
    assert_eq!(binaries, replayed);
}
