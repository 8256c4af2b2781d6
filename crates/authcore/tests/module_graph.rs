//! The modules of `authcore` depend on each other in one direction (docs/architecture.md,
//! "Module graph"): no import circle between top-level modules, and nothing below the
//! actions reaches up into them. Read from the sources (`crate::<module>` paths outside
//! `#[cfg(test)] mod tests`), so a new circle fails here.
#![allow(clippy::unwrap_used)]

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// Top-level module → the top-level modules it names.
fn graph() -> BTreeMap<String, BTreeSet<String>> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut graph: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    let mut stack = vec![src.clone()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
                continue;
            }
            if path.extension().is_none_or(|e| e != "rs") {
                continue;
            }
            let rel = path.strip_prefix(&src).unwrap();
            let top = rel
                .components()
                .next()
                .unwrap()
                .as_os_str()
                .to_str()
                .unwrap()
                .trim_end_matches(".rs")
                .to_owned();
            if top == "lib" {
                continue;
            }
            let text = std::fs::read_to_string(&path).unwrap();
            let code = text.split("#[cfg(test)]\nmod tests").next().unwrap();
            let deps = graph.entry(top.clone()).or_default();
            for line in code.lines() {
                let line = line.split("//").next().unwrap();
                for (i, _) in line.match_indices("crate::") {
                    let name: String = line[i + 7..]
                        .chars()
                        .take_while(|c| c.is_ascii_lowercase() || *c == '_')
                        .collect();
                    if !name.is_empty() && name != top {
                        deps.insert(name);
                    }
                }
            }
        }
    }
    let modules: BTreeSet<String> = graph.keys().cloned().collect();
    for deps in graph.values_mut() {
        deps.retain(|d| modules.contains(d));
    }
    graph
}

/// Every module reachable from `from`.
fn reachable(graph: &BTreeMap<String, BTreeSet<String>>, from: &str) -> BTreeSet<String> {
    let mut seen = BTreeSet::new();
    let mut todo = vec![from.to_owned()];
    while let Some(m) = todo.pop() {
        for d in &graph[&m] {
            if seen.insert(d.clone()) {
                todo.push(d.clone());
            }
        }
    }
    seen
}

#[test]
fn no_module_reaches_itself() {
    let graph = graph();
    assert!(graph.len() > 15, "the sources were read: {graph:?}");
    let circles: Vec<String> = graph
        .keys()
        .filter(|m| reachable(&graph, m).contains(*m))
        .map(|m| format!("{m} -> {:?}", graph[m]))
        .collect();
    assert!(
        circles.is_empty(),
        "import circles:\n{}",
        circles.join("\n")
    );
}

#[test]
fn lower_layers_do_not_reach_the_actions() {
    let graph = graph();
    for lower in [
        "providers",
        "adapter",
        "jose",
        "jwt",
        "cookies",
        "oauth",
        "types",
        "error",
    ] {
        let up = reachable(&graph, lower);
        for above in ["actions", "handler", "request", "config"] {
            assert!(!up.contains(above), "{lower} reaches {above}: {up:?}");
        }
    }
}
