//! The manual cannot drift: every error code authcore logs is explained in
//! `docs/manual/troubleshooting.md`; the Auth.js migration table names every builder method
//! and only real ones, and its server settings exist in `authcore.example.toml`; every
//! relative link (and `#anchor`) in the README and `docs/` resolves.
#![allow(clippy::unwrap_used)]

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn read(path: &str) -> String {
    std::fs::read_to_string(root().join(path)).unwrap()
}

/// The text of `fn <name>` … up to the next item at the same indentation.
fn body_of<'a>(source: &'a str, start: &str) -> &'a str {
    let from = source.find(start).unwrap();
    let rest = &source[from..];
    let end = rest[start.len()..]
        .find("\n    pub fn ")
        .map_or(rest.len(), |i| i + start.len());
    &rest[..end]
}

/// Backticked words of `text`.
fn backticked(text: &str) -> Vec<&str> {
    text.split('`').skip(1).step_by(2).collect()
}

/// Table rows of `doc` whose first cell is present, as cells.
fn rows(doc: &str) -> Vec<Vec<String>> {
    doc.lines()
        .filter(|l| l.starts_with("| ") && !l.starts_with("|---"))
        .map(|l| {
            l.trim_matches('|')
                .split(" | ")
                .map(|c| c.trim().to_owned())
                .collect()
        })
        .collect()
}

#[test]
fn troubleshooting_explains_every_error_code() {
    let source = read("crates/authcore/src/error.rs");
    let codes: BTreeSet<&str> = body_of(&source, "pub fn error_type(&self)")
        .split("=> \"")
        .skip(1)
        .map(|s| s.split('"').next().unwrap())
        .collect();
    assert!(codes.len() >= 20, "{codes:?}");
    let doc = read("docs/manual/troubleshooting.md");
    let explained: BTreeSet<String> = rows(&doc)
        .iter()
        .filter_map(|r| backticked(&r[0]).first().map(|s| (*s).to_owned()))
        .collect();
    // Error log lines point to `troubleshooting.md#<code in lower case>`.
    let sections = anchors(&doc);
    for code in codes.iter().copied().chain(["Configuration"]) {
        assert!(
            explained.contains(code),
            "troubleshooting.md lacks `{code}`"
        );
        assert!(
            sections.contains(&code.to_lowercase()),
            "troubleshooting.md lacks a section for `{code}`"
        );
    }
}

#[test]
fn migration_table_matches_the_builder() {
    let source = read("crates/authcore/src/config.rs");
    let start = source.find("impl AuthConfigBuilder {").unwrap();
    let block = &source[start..];
    let block = &block[..block[1..].find("\nimpl ").map_or(block.len(), |i| i + 1)];
    let methods: BTreeSet<&str> = block
        .split("\n    pub fn ")
        .skip(1)
        .map(|s| s.split(['(', '<']).next().unwrap())
        .filter(|m| *m != "build")
        .collect();
    assert!(methods.len() >= 30, "{methods:?}");
    let doc = read("docs/manual/migrating-from-authjs.md");
    let table = rows(&doc);
    let named: BTreeSet<&str> = table
        .iter()
        .skip(1)
        .flat_map(|r| backticked(&r[1]))
        .filter(|w| {
            w.starts_with(|c: char| c.is_ascii_lowercase())
                && w.chars()
                    .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
        })
        .collect();
    for m in &methods {
        assert!(named.contains(m), "the migration table lacks `{m}`");
    }
    for n in &named {
        assert!(
            methods.contains(n),
            "`{n}` in the migration table is not a builder method"
        );
    }
    // `[section] key` server settings exist in the example file.
    let example = read("authcore.example.toml");
    for cell in table.iter().skip(1).map(|r| r[2].as_str()) {
        for setting in backticked(cell) {
            let Some((section, key)) = setting.strip_prefix('[').and_then(|s| s.split_once("] "))
            else {
                continue;
            };
            let at = example
                .find(&format!("[{section}]"))
                .unwrap_or_else(|| panic!("no [{section}] in authcore.example.toml"));
            let tail = &example[at..];
            let section_text = &tail[..tail[1..].find("\n[").map_or(tail.len(), |i| i + 1)];
            assert!(
                section_text.lines().any(|l| l
                    .trim_start_matches(['#', ' '])
                    .starts_with(&format!("{key} ="))),
                "no `{key}` under [{section}] in authcore.example.toml"
            );
        }
    }
}

/// GitHub's anchor for a heading.
fn slug(heading: &str) -> String {
    heading
        .trim()
        .to_lowercase()
        .chars()
        .filter(|c| c.is_alphanumeric() || *c == ' ' || *c == '-' || *c == '_')
        .map(|c| if c == ' ' { '-' } else { c })
        .collect()
}

fn anchors(doc: &str) -> BTreeSet<String> {
    doc.lines()
        .filter(|l| l.starts_with('#'))
        .map(|l| slug(l.trim_start_matches('#')))
        .collect()
}

#[test]
fn links_in_the_readme_and_docs_resolve() {
    let mut files = vec![root().join("README.md")];
    let mut dirs = vec![root().join("docs")];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                dirs.push(path);
            } else if path.extension().is_some_and(|e| e == "md") {
                files.push(path);
            }
        }
    }
    assert!(files.len() >= 10);
    let mut broken = Vec::new();
    for file in &files {
        let text = std::fs::read_to_string(file).unwrap();
        for link in text.split("](").skip(1) {
            let target = link.split([')', ' ']).next().unwrap();
            if target.starts_with("http") || target.starts_with("mailto:") || target.is_empty() {
                continue;
            }
            let (path, anchor) = target.split_once('#').unwrap_or((target, ""));
            let resolved = if path.is_empty() {
                file.clone()
            } else {
                file.parent().unwrap().join(path)
            };
            if !resolved.exists() {
                broken.push(format!("{}: {target}", file.display()));
                continue;
            }
            if !anchor.is_empty() && resolved.extension().is_some_and(|e| e == "md") {
                let doc = std::fs::read_to_string(&resolved).unwrap();
                if !anchors(&doc).contains(anchor) {
                    broken.push(format!("{}: {target} (no such heading)", file.display()));
                }
            }
        }
    }
    assert!(broken.is_empty(), "broken links:\n{}", broken.join("\n"));
}
