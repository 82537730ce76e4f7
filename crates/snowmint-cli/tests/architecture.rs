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

/// The directories whose files may cite this page.
const CITING: &[&str] = &["crates", "bench", "fuzz", "scripts", "deploy", "proto"];

/// Every `ARCHITECTURE.md §N` cited anywhere in the code names a section
/// of the page, and every `§N, "Title"` a heading of that section; a
/// citation may run over two comment lines.
#[test]
fn every_cited_section_is_there() {
    let page = std::fs::read_to_string(repository().join("docs/ARCHITECTURE.md")).unwrap();
    let sections = sections(&page);
    let mut files = Vec::new();
    for dir in CITING {
        walk(&repository().join(dir), &mut files);
    }
    let mut failures = Vec::new();
    let mut count = 0;
    for file in &files {
        let Ok(text) = std::fs::read_to_string(file) else {
            continue; // not text
        };
        let prose = comment_text(&text);
        for (at, _) in prose.match_indices("ARCHITECTURE.md") {
            let rest = prose[at + "ARCHITECTURE.md".len()..].trim_start();
            let Some(rest) = rest.strip_prefix('§') else {
                continue;
            };
            let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
            if digits.is_empty() {
                continue; // `§N`, as this file writes it
            }
            count += 1;
            let shown = file.strip_prefix(repository()).unwrap_or(file).display();
            let Some(titles) = digits.parse().ok().and_then(|n: u32| sections.get(&n)) else {
                failures.push(format!("{shown}: cites §{digits}, which is no section"));
                continue;
            };
            let rest = &rest[digits.len()..];
            if let Some(title) = rest
                .strip_prefix(", \"")
                .and_then(|rest| rest.split_once('"'))
                .map(|(title, _)| title)
                && !titles.iter().any(|heading| heading == title)
            {
                failures.push(format!(
                    "{shown}: cites §{digits}, \"{title}\", which is no heading of §{digits}"
                ));
            }
        }
    }
    assert!(count >= 20, "only {count} citations found");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// The page's numbered sections (`## 3. The invariants`), each with the
/// titles of its `###` headings.
fn sections(page: &str) -> BTreeMap<u32, Vec<String>> {
    let mut sections: BTreeMap<u32, Vec<String>> = BTreeMap::new();
    let mut current = None;
    for line in page.lines() {
        if let Some(title) = line.strip_prefix("## ") {
            current = title
                .split_once(". ")
                .and_then(|(number, _)| number.parse().ok());
            if let Some(number) = current {
                sections.entry(number).or_default();
            }
        } else if let (Some(title), Some(number)) = (line.strip_prefix("### "), current) {
            sections.entry(number).or_default().push(title.to_owned());
        }
    }
    sections
}

/// The files under `dir`, but for build output and dependencies.
fn walk(dir: &Path, files: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy();
        if path.is_dir() {
            if !["target", "node_modules", ".venv", "__pycache__"].contains(&&*name) {
                walk(&path, files);
            }
        } else {
            files.push(path);
        }
    }
}

/// `text` with each line's comment markers (`//!`, `///`, `//`, `#`, `*`)
/// and indentation left out and the lines joined by spaces, so that a
/// citation broken over two comment lines reads as one.
fn comment_text(text: &str) -> String {
    text.lines()
        .map(|line| {
            line.trim_start()
                .trim_start_matches(['/', '!', '#', '*'])
                .trim()
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// Module docs say what a module's components are, in prose; a bullet
/// list of its files (`` - `engine.rs`: ... ``, `` - [`Layout`]
/// (`layout.rs`): ... ``) goes stale as files come and go, and lists
/// nothing a reader cannot see in the directory.
#[test]
fn module_docs_list_no_files() {
    let mut files = Vec::new();
    for dir in ["crates", "bench", "fuzz"] {
        walk(&repository().join(dir), &mut files);
    }
    let mut failures = Vec::new();
    for file in files
        .iter()
        .filter(|file| file.extension().is_some_and(|e| e == "rs"))
    {
        let text = std::fs::read_to_string(file).unwrap();
        for (at, line) in text.lines().enumerate() {
            let Some(item) = line.trim_start().strip_prefix("//! - ") else {
                continue;
            };
            // The first code span of the bullet, or the one in parentheses
            // right after a linked item.
            let span = match item.strip_prefix('`') {
                Some(rest) => rest.split('`').next(),
                None if item.starts_with("[`") => item
                    .split_once("] (`")
                    .and_then(|(_, rest)| rest.split('`').next()),
                None => None,
            };
            if span.is_some_and(|span| {
                span.ends_with(".rs") || (span.ends_with('/') && !span.contains(' '))
            }) {
                failures.push(format!(
                    "{}:{}: {}",
                    file.strip_prefix(repository()).unwrap_or(file).display(),
                    at + 1,
                    line.trim()
                ));
            }
        }
    }
    assert!(
        failures.is_empty(),
        "module docs that list files; say what the components are, in prose:\n{}",
        failures.join("\n")
    );
}
