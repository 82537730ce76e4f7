//! The documents hold together: every relative link lands on a file that
//! is there and, with `#anchor`, on a heading of it; no two headings of a
//! document share an anchor (the second could never be linked to); each
//! guide's contents list is its headings; the README stays short.

use std::collections::BTreeSet;
use std::path::{Component, Path, PathBuf};

use crate::markdown::{self, Heading};

/// Where a document's contents list starts and ends (HTML comments, so
/// that a reader sees only the list).
const CONTENTS_START: &str = "<!-- contents -->";
const CONTENTS_END: &str = "<!-- /contents -->";

/// Set to rewrite the contents lists instead of failing on one that
/// differs from the headings.
const WRITE_CONTENTS: &str = "SNOWMINT_WRITE_CONTENTS";

/// The README's length at most: what it is, getting it, the quick start,
/// a tour and links; the manual is in docs/.
const README_LINES: usize = 400;

/// A guide's length at most, about: beyond it a topic wants two guides.
const GUIDE_LINES: usize = 650;

/// Every relative link and `#anchor` of every document, and every alert's
/// runbook link, lands.
#[test]
fn every_link_and_anchor_lands() {
    let documents = markdown::documents();
    let mut failures = Vec::new();
    let mut count = 0;
    for document in &documents {
        for link in markdown::links(&document.text) {
            count += 1;
            if let Err(error) = lands(Path::new(&document.path), &link.target) {
                failures.push(format!(
                    "{}:{}: ({}) {error}",
                    document.path, link.line, link.target
                ));
            }
        }
    }
    // Each alert's runbook annotation names its section of a guide.
    for rules in [
        "deploy/prometheus/snowmint-rules.yml",
        "deploy/prometheus/snowmint-rules.test.yml",
    ] {
        let text = std::fs::read_to_string(markdown::root().join(rules)).unwrap();
        for (at, line) in text.lines().enumerate() {
            if let Some(target) = line.trim().strip_prefix("runbook: ") {
                count += 1;
                if let Err(error) = lands(Path::new("README.md"), target.trim_matches('"')) {
                    failures.push(format!("{rules}:{}: ({target}) {error}", at + 1));
                }
            }
        }
    }
    assert!(count >= 100, "only {count} links found");
    assert!(
        failures.is_empty(),
        "{} of {count} links do not land:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

/// No two headings of a document share an anchor, so that every heading
/// can be linked to.
#[test]
fn no_two_headings_of_a_document_share_an_anchor() {
    let mut failures = Vec::new();
    for document in markdown::documents() {
        let headings = markdown::headings(&document.text);
        for (index, heading) in headings.iter().enumerate() {
            if let Some(first) = headings[..index]
                .iter()
                .find(|earlier| earlier.anchor == heading.anchor)
            {
                failures.push(format!(
                    "{}:{}: \"{}\" has the anchor #{} of line {}",
                    document.path, heading.line, heading.text, heading.anchor, first.line
                ));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// The README, each guide and CONTRIBUTING.md have a contents list, and
/// it is their headings (`##` and `###`) in order. With
/// SNOWMINT_WRITE_CONTENTS=1 the lists are written instead.
#[test]
fn every_contents_list_is_its_documents_headings() {
    let write = std::env::var_os(WRITE_CONTENTS).is_some();
    let mut failures = Vec::new();
    for document in markdown::documents() {
        let wants_one = document.is_guide()
            || ["README.md", "CONTRIBUTING.md"].contains(&document.path.as_str());
        let Some((before, list, after)) = contents_list(&document.text) else {
            if wants_one {
                failures.push(format!(
                    "{} has no contents list: add the lines {CONTENTS_START} and \
                     {CONTENTS_END} after its introduction, then run this test with \
                     {WRITE_CONTENTS}=1",
                    document.path
                ));
            }
            continue;
        };
        let expected = contents(&markdown::headings(after));
        if list == expected {
            continue;
        }
        if write {
            let text = format!("{before}{CONTENTS_START}\n{expected}{CONTENTS_END}{after}");
            std::fs::write(markdown::root().join(&document.path), text).unwrap();
        } else {
            failures.push(format!(
                "{}: the contents list is not its headings; it should read (or run this \
                 test with {WRITE_CONTENTS}=1):\n\n{expected}",
                document.path
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

/// The README stays an overview and each guide one topic.
#[test]
fn documents_stay_short() {
    let mut failures = Vec::new();
    for document in markdown::documents() {
        let lines = document.text.lines().count();
        let limit = match document.path.as_str() {
            "README.md" => README_LINES,
            _ if document.is_guide() => GUIDE_LINES,
            _ => continue,
        };
        if lines > limit {
            failures.push(format!(
                "{} has {lines} lines, more than {limit}: move a part into a guide of its own",
                document.path
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// The parts of `text` before its contents list, the list, and after it.
fn contents_list(text: &str) -> Option<(&str, &str, &str)> {
    let start = text.find(CONTENTS_START)?;
    let list_start = start + CONTENTS_START.len() + 1;
    let end = list_start + text[list_start..].find(CONTENTS_END)?;
    Some((
        &text[..start],
        &text[list_start..end],
        &text[end + CONTENTS_END.len()..],
    ))
}

/// The contents list of `headings`: the `##`s, and under each its `###`s.
fn contents(headings: &[Heading]) -> String {
    headings
        .iter()
        .filter(|heading| heading.level == 2 || heading.level == 3)
        .map(|heading| {
            let indent = if heading.level == 3 { "  " } else { "" };
            format!("{indent}- [{}](#{})\n", heading.text, heading.anchor)
        })
        .collect()
}

/// Whether `target`, a link of the document at `from`, lands: on a file
/// or directory of the repository and, with `#anchor`, on a heading of
/// it. Links out of the repository are not followed.
fn lands(from: &Path, target: &str) -> Result<(), String> {
    if target.contains("://") || target.starts_with("mailto:") {
        return Ok(());
    }
    let (path, anchor) = target.split_once('#').unwrap_or((target, ""));
    let file = if path.is_empty() {
        from.to_path_buf()
    } else {
        normalized(&from.parent().unwrap().join(path))?
    };
    let on_disk = markdown::root().join(&file);
    if !on_disk.exists() {
        return Err(format!("{} is not in the repository", file.display()));
    }
    if anchor.is_empty() {
        return Ok(());
    }
    if on_disk
        .extension()
        .is_none_or(|extension| extension != "md")
    {
        return Err(format!("{} has no headings to link to", file.display()));
    }
    let text = std::fs::read_to_string(&on_disk).unwrap();
    let anchors: BTreeSet<String> = markdown::headings(&text)
        .into_iter()
        .map(|heading| heading.anchor)
        .collect();
    if anchors.contains(anchor) {
        Ok(())
    } else {
        Err(format!("{} has no heading #{anchor}", file.display()))
    }
}

/// `path` with its `.` and `..` resolved, still inside the repository.
fn normalized(path: &Path) -> Result<PathBuf, String> {
    let mut parts: Vec<Component> = Vec::new();
    for part in path.components() {
        match part {
            Component::CurDir => {}
            Component::ParentDir => {
                parts
                    .pop()
                    .ok_or_else(|| format!("{} leaves the repository", path.display()))?;
            }
            part => parts.push(part),
        }
    }
    Ok(parts.iter().collect())
}
