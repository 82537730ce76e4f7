//! docs/ARCHITECTURE.md §1 lists every crate of the repository and the
//! crates of the repository it depends on. This reads that table and
//! compares it with what `cargo metadata` says of the main workspace, the
//! PostgreSQL extension's and the fuzz targets' (each a workspace of its
//! own), so that the map cannot go stale without a failing test.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

fn repository() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The table of §1: each row's directory (`crates/snowmint-fleet`,
/// `bench`) and the short names of its dependencies (`core`, `fleet`).
fn documented() -> BTreeMap<String, BTreeSet<String>> {
    let path = repository().join("docs/ARCHITECTURE.md");
    let text = std::fs::read_to_string(&path).expect("docs/ARCHITECTURE.md");
    let section = text
        .split("## 1. The crates")
        .nth(1)
        .and_then(|rest| rest.split("\n## ").next())
        .expect("a section '## 1. The crates'");
    let mut rows = BTreeMap::new();
    for line in section.lines().filter(|line| line.starts_with("| `")) {
        let cells: Vec<&str> = line.trim_matches('|').split(" | ").collect();
        assert_eq!(cells.len(), 3, "a row of three cells: {line}");
        let dir = cells[0].trim().trim_matches('`').trim_end_matches('/');
        let deps = without_notes(cells[2])
            .split(',')
            .map(str::trim)
            .filter(|name| !name.is_empty() && *name != "—")
            .map(str::to_owned)
            .collect();
        rows.insert(dir.to_owned(), deps);
    }
    rows
}

/// `text` without its parenthesised notes.
fn without_notes(text: &str) -> String {
    let mut depth = 0;
    text.chars()
        .filter(|&c| {
            match c {
                '(' => depth += 1,
                ')' => depth -= 1,
                _ => return depth == 0,
            }
            false
        })
        .collect()
}

/// The table's short name of a package of this repository.
fn short(package: &str) -> String {
    match package {
        "snowmint" => "core".to_owned(),
        "snowmint-fuzz-targets" => "fuzz-targets".to_owned(),
        other => other.trim_start_matches("snowmint-").to_owned(),
    }
}

/// Every package of the workspace whose manifest is `manifest`: its
/// directory (relative to the repository) and the short names of the
/// packages of this repository it depends on (normal dependencies).
fn actual(manifest: &str) -> BTreeMap<String, BTreeSet<String>> {
    let root = repository().canonicalize().unwrap();
    let output = Command::new(env!("CARGO"))
        .args([
            "metadata",
            "--format-version",
            "1",
            "--no-deps",
            "--offline",
        ])
        .arg("--manifest-path")
        .arg(root.join(manifest))
        .output()
        .expect("cargo metadata runs");
    assert!(
        output.status.success(),
        "cargo metadata for {manifest}: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    let metadata: Value = serde_json::from_slice(&output.stdout).unwrap();
    let mut packages = BTreeMap::new();
    for package in metadata["packages"].as_array().unwrap() {
        let manifest_path = Path::new(package["manifest_path"].as_str().unwrap());
        let dir = manifest_path
            .parent()
            .unwrap()
            .strip_prefix(&root)
            .unwrap()
            .to_string_lossy()
            .into_owned();
        let deps = package["dependencies"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|dep| dep["kind"].is_null() && dep["path"].is_string())
            .map(|dep| short(dep["name"].as_str().unwrap()))
            .collect();
        packages.insert(dir, deps);
    }
    packages
}

#[test]
fn the_crate_table_is_what_cargo_metadata_says() {
    let documented = documented();
    let mut actual = actual("Cargo.toml");
    actual.extend(actual_of_own_workspace("crates/snowmint-pg/Cargo.toml"));
    actual.extend(actual_of_own_workspace("fuzz/Cargo.toml"));
    // The extension's integration tests are a crate of its workspace with
    // no dependency of its own; the table tells of them in the
    // extension's row.
    actual.remove("crates/snowmint-pg/itest");
    assert_eq!(
        documented.keys().collect::<Vec<_>>(),
        actual.keys().collect::<Vec<_>>(),
        "docs/ARCHITECTURE.md §1 lists other crates than the workspaces have"
    );
    for (dir, deps) in &actual {
        assert_eq!(
            &documented[dir], deps,
            "docs/ARCHITECTURE.md §1: what {dir} depends on"
        );
    }
}

fn actual_of_own_workspace(manifest: &str) -> BTreeMap<String, BTreeSet<String>> {
    actual(manifest)
}
