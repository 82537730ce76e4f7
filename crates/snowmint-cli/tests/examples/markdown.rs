//! The documents of the repository and what the tests read in them: code
//! blocks, headings with the anchors GitHub gives them, and links.
//!
//! This reads the plain Markdown the documents are written in, not all of
//! CommonMark: a code block is fenced with three backticks (indented as
//! far as the list item it belongs to), a heading is a line of `#`s, a
//! link is `[text](target)` or an HTML `src="target"`.

use std::path::{Path, PathBuf};

/// The repository's root.
pub fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// A document of the repository.
pub struct Document {
    /// Its path from the repository's root, with `/`: `docs/fleet.md`.
    pub path: String,
    /// Its text.
    pub text: String,
}

impl Document {
    /// Reads the document at `path` (from the repository's root).
    pub fn read(path: &str) -> Document {
        let text = std::fs::read_to_string(root().join(path))
            .unwrap_or_else(|error| panic!("reading {path}: {error}"));
        Document {
            path: path.to_owned(),
            text,
        }
    }

    /// Whether it is a guide: a page of `docs/` for users (ARCHITECTURE
    /// is for contributors, and numbered).
    pub fn is_guide(&self) -> bool {
        self.path.starts_with("docs/") && self.path != "docs/ARCHITECTURE.md"
    }
}

/// Every document a reader can land on: the README, the guides of `docs/`,
/// the crates' and the npm package's READMEs, and the pages beside the
/// README.
pub fn documents() -> Vec<Document> {
    let mut paths = vec![
        "README.md".to_owned(),
        "CONTRIBUTING.md".to_owned(),
        "CHANGELOG.md".to_owned(),
        "BENCHMARKS.md".to_owned(),
    ];
    let names = |dir: &str| -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(root().join(dir))
            .unwrap_or_else(|error| panic!("listing {dir}: {error}"))
            .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    };
    for name in names("docs") {
        if name.ends_with(".md") {
            paths.push(format!("docs/{name}"));
        }
    }
    for name in names("crates") {
        if root()
            .join("crates")
            .join(&name)
            .join("README.md")
            .is_file()
        {
            paths.push(format!("crates/{name}/README.md"));
        }
    }
    // The packages that live beside the crates (the npm package).
    if root().join("js/README.md").is_file() {
        paths.push("js/README.md".to_owned());
    }
    paths.iter().map(|path| Document::read(path)).collect()
}

/// A fenced code block.
pub struct Block<'a> {
    /// What follows the opening fence: `console`, `rust,no_run`.
    pub info: &'a str,
    /// The line number (from 1) of its first line of code.
    pub first_line: usize,
    /// Its lines, without the indentation of its fence.
    pub lines: Vec<&'a str>,
}

/// The fenced code blocks of `text`, or where one is malformed: a block
/// without a language (trycmd would take it for a transcript, and a
/// reader cannot tell what it is), or one that does not end.
pub fn code_blocks<'a>(path: &str, text: &'a str) -> Result<Vec<Block<'a>>, String> {
    let lines: Vec<&str> = text.lines().collect();
    let mut blocks = Vec::new();
    let mut at = 0;
    while at < lines.len() {
        let indent = lines[at].len() - lines[at].trim_start().len();
        let Some(info) = lines[at].trim_start().strip_prefix("```") else {
            at += 1;
            continue;
        };
        let info = info.trim();
        if info.is_empty() {
            return Err(format!(
                "{path}:{}: a code block without a language",
                at + 1
            ));
        }
        let closing = format!("{}```", &lines[at][..indent]);
        let start = at + 1;
        let Some(length) = lines[start..].iter().position(|line| *line == closing) else {
            return Err(format!("{path}:{}: a code block that does not end", at + 1));
        };
        blocks.push(Block {
            info,
            first_line: start + 1,
            lines: lines[start..start + length]
                .iter()
                .map(|line| line.get(indent..).unwrap_or("").trim_end_matches(' '))
                .collect(),
        });
        at = start + length + 1;
    }
    Ok(blocks)
}

/// The lines of `text` outside code blocks, with their numbers (from 1).
pub fn prose(text: &str) -> Vec<(usize, &str)> {
    let mut fenced = false;
    let mut lines = Vec::new();
    for (at, line) in text.lines().enumerate() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
        } else if !fenced {
            lines.push((at + 1, line));
        }
    }
    lines
}

/// A heading.
pub struct Heading {
    /// 1 for `#`, 2 for `##`, ...
    pub level: usize,
    /// Its text as written: `Which process issued an ID: \`whois\``.
    pub text: String,
    /// The anchor GitHub gives it: `which-process-issued-an-id-whois`.
    pub anchor: String,
    /// Its line number, from 1.
    pub line: usize,
}

/// The headings of `text`, in order.
pub fn headings(text: &str) -> Vec<Heading> {
    prose(text)
        .into_iter()
        .filter_map(|(line, content)| {
            let level = content.len() - content.trim_start_matches('#').len();
            let title = content[level..].strip_prefix(' ')?;
            (1..=6).contains(&level).then(|| Heading {
                level,
                text: title.trim().to_owned(),
                anchor: anchor(title),
                line,
            })
        })
        .collect()
}

/// The anchor GitHub makes of a heading: its visible text in lower case,
/// spaces as `-`, and every character but letters, digits, `-` and `_`
/// left out.
pub fn anchor(heading: &str) -> String {
    visible(heading)
        .trim()
        .chars()
        .flat_map(char::to_lowercase)
        .filter_map(|c| match c {
            ' ' => Some('-'),
            c if c.is_alphanumeric() || c == '-' || c == '_' => Some(c),
            _ => None,
        })
        .collect()
}

/// The text a reader sees of inline Markdown: links' text without their
/// targets, code without its backticks.
fn visible(text: &str) -> String {
    let mut out = String::new();
    let mut rest = text;
    while let Some(at) = rest.find("](") {
        let Some(end) = rest[at..].find(')') else {
            break;
        };
        out.push_str(&rest[..at]);
        rest = &rest[at + end + 1..];
    }
    out.push_str(rest);
    out.replace(['`', '['], "")
}

/// A link of a document: where it is and where it goes.
pub struct Link {
    /// Its line number, from 1.
    pub line: usize,
    /// Its target as written: `fleet.md#the-guarantee`, `#sizing`,
    /// `https://...`.
    pub target: String,
}

/// The links of `text` outside code: `[text](target)`, reference
/// definitions `[name]: target`, and HTML `src="target"`.
pub fn links(text: &str) -> Vec<Link> {
    let mut links = Vec::new();
    for (line, content) in prose(text) {
        let content = without_code_spans(content);
        let mut rest = content.as_str();
        while let Some(at) = rest.find("](") {
            rest = &rest[at + 2..];
            let end = rest.find(')').unwrap_or(rest.len());
            links.push(Link {
                line,
                target: rest[..end].trim().to_owned(),
            });
            rest = &rest[end..];
        }
        let mut rest = content.as_str();
        while let Some(at) = rest.find("src=\"") {
            rest = &rest[at + 5..];
            let end = rest.find('"').unwrap_or(rest.len());
            links.push(Link {
                line,
                target: rest[..end].to_owned(),
            });
            rest = &rest[end..];
        }
        if let Some((name, target)) = content.split_once("]: ")
            && name.starts_with('[')
            && !name.contains(' ')
        {
            links.push(Link {
                line,
                target: target.trim().to_owned(),
            });
        }
    }
    links
}

/// `line` with its inline code spans (`` `...` ``) left out.
fn without_code_spans(line: &str) -> String {
    line.split('`').step_by(2).collect::<Vec<_>>().join("")
}
