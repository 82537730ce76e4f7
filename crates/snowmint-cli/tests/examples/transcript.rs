//! Reading examples written as terminal transcripts, in trycmd's syntax:
//!
//! ```text
//! $ snowmint decode -1          <- a command ("$ "); a line ending in `\`
//! ? 2                              goes on on the next line, as in sh
//! error: ID -1 is out of range  <- what it prints (stdout and stderr)
//! ```
//!
//! `? STATUS` right after a command gives its exit status (a number,
//! `success` or `failed`; `success` when left out). Everything after it,
//! up to the next `$ `, is the output; blank lines at its end only
//! separate examples.

/// One example: a command as shown, and what it is shown to do.
#[derive(Debug, Clone)]
pub struct Example {
    /// Where it is shown, for messages: `README.md:62`, `snowmint decode --help`.
    pub origin: String,
    /// The command as shown, without the prompt; continuation lines kept.
    pub command: String,
    /// The exit status shown (`? ...`), or success.
    pub status: Status,
    /// The output shown, its lines joined with `\n`, no final newline.
    pub output: String,
}

/// An exit status an example is shown to end with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Status {
    /// This exit code (0 for success).
    Code(i32),
    /// Any code but 0.
    Failed,
}

impl Status {
    /// Whether a process that exited with `code` (`None`: killed by a
    /// signal) ended as shown.
    pub fn matches(self, code: Option<i32>) -> bool {
        match self {
            Status::Code(expected) => code == Some(expected),
            Status::Failed => code.is_some_and(|code| code != 0),
        }
    }

    fn parse(text: &str) -> Result<Status, String> {
        match text {
            "success" => Ok(Status::Code(0)),
            "failed" => Ok(Status::Failed),
            code => code
                .parse()
                .map(Status::Code)
                .map_err(|_| format!("`? {code}`: expected an exit code, success or failed")),
        }
    }
}

/// The examples in `lines`, a transcript whose first line is line
/// `first_line` of `source` (for messages).
pub fn parse(source: &str, first_line: usize, lines: &[&str]) -> Result<Vec<Example>, String> {
    let mut examples = Vec::new();
    let mut index = 0;
    while index < lines.len() {
        let line = lines[index];
        let Some(first) = line.strip_prefix("$ ") else {
            if line.trim().is_empty() {
                index += 1;
                continue;
            }
            return Err(format!(
                "{source}:{}: expected a command (`$ ...`) before {line:?}",
                first_line + index
            ));
        };
        let origin = format!("{source}:{}", first_line + index);
        let mut command = first.to_owned();
        index += 1;
        while command.ends_with('\\') {
            let Some(next) = lines.get(index) else {
                return Err(format!("{origin}: the command goes on past the end"));
            };
            command.push('\n');
            command.push_str(next);
            index += 1;
        }
        let mut status = Status::Code(0);
        if let Some(shown) = lines.get(index).and_then(|line| line.strip_prefix("? ")) {
            status = Status::parse(shown.trim()).map_err(|error| format!("{origin}: {error}"))?;
            index += 1;
        }
        let mut output = Vec::new();
        while let Some(line) = lines.get(index).filter(|line| !line.starts_with("$ ")) {
            output.push(*line);
            index += 1;
        }
        while output.last().is_some_and(|line| line.trim().is_empty()) {
            output.pop();
        }
        examples.push(Example {
            origin,
            command,
            status,
            output: output.join("\n"),
        });
    }
    Ok(examples)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Commands, continuation lines, statuses and outputs are told apart.
    #[test]
    fn reads_a_transcript() {
        let lines = [
            "$ snowmint encode --timestamp 0 \\",
            "    --datacenter 1",
            "? 2",
            "error: one",
            "",
            "two",
            "",
            "$ snowmint layout",
            "$ snowmint decode 1",
            "id 1",
        ];
        let examples = parse("x", 10, &lines).unwrap();
        assert_eq!(examples.len(), 3);
        assert_eq!(examples[0].origin, "x:10");
        assert_eq!(
            examples[0].command,
            "snowmint encode --timestamp 0 \\\n    --datacenter 1"
        );
        assert_eq!(examples[0].status, Status::Code(2));
        assert_eq!(examples[0].output, "error: one\n\ntwo");
        assert_eq!(examples[1].origin, "x:17");
        assert_eq!(examples[1].output, "");
        assert_eq!(examples[2].status, Status::Code(0));
        assert_eq!(examples[2].output, "id 1");
    }

    /// Text before the first command is a mistake, not an example.
    #[test]
    fn text_without_a_command_is_refused() {
        let error = parse("x", 1, &["snowmint decode 1"]).unwrap_err();
        assert!(error.contains("x:1: expected a command"), "{error}");
        let error = parse("x", 1, &["$ snowmint decode 1", "? maybe"]).unwrap_err();
        assert!(error.contains("`? maybe`"), "{error}");
    }

    #[test]
    fn statuses() {
        assert!(Status::Code(0).matches(Some(0)));
        assert!(!Status::Code(0).matches(Some(2)));
        assert!(!Status::Code(2).matches(None));
        assert!(Status::Failed.matches(Some(1)));
        assert!(!Status::Failed.matches(Some(0)));
    }
}
