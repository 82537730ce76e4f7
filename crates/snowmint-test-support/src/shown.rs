//! Examples of the documentation that are the code of a test, word for
//! word: the test keeps the example as a function of its own and checks
//! that its source holds the example as shown.

/// The example in the first block fenced `` ```{fence} `` after the line
/// `heading` of `document` (from its start when `heading` is empty), as
/// the body of a function: indented by four spaces, with the `fn main`
/// around it (and `#[tokio::main]`, its `Ok(())` and its closing brace)
/// and rustdoc's hidden lines (`# ...`) left out. A test that names its
/// function's parameters differently replaces them in the result.
///
/// # Panics
///
/// When `document` has no such heading or block, naming which.
pub fn as_function_body(document: &str, heading: &str, fence: &str) -> String {
    let start = if heading.is_empty() {
        0
    } else {
        document
            .find(&format!("\n{heading}\n"))
            .unwrap_or_else(|| panic!("the document has no heading {heading:?}"))
    };
    let rest = &document[start..];
    let opening = format!("```{fence}\n");
    let code = &rest[rest
        .find(&opening)
        .unwrap_or_else(|| panic!("no ```{fence} block after {heading:?}"))
        + opening.len()..];
    let code = &code[..code.find("\n```").expect("the block ends") + 1];
    let mut in_main = false;
    let mut body = String::new();
    for line in code.lines() {
        if line == "#" || line.starts_with("# ") || line == "#[tokio::main]" {
            continue;
        }
        if line.starts_with("fn main(") || line.starts_with("async fn main(") {
            in_main = true;
            continue;
        }
        if in_main && (line == "}" || line == "    Ok(())") {
            continue;
        }
        match line {
            "" => body.push('\n'),
            line if in_main => {
                body.push_str(line);
                body.push('\n');
            }
            line => {
                body.push_str("    ");
                body.push_str(line);
                body.push('\n');
            }
        }
    }
    body
}

#[cfg(test)]
mod tests {
    use super::as_function_body;

    #[test]
    fn a_main_and_hidden_lines_are_left_out() {
        let document = "# Title\n\n## Example\n\n```rust,no_run\nuse a::B;\n\n\
                        #[tokio::main]\nasync fn main() -> Result<(), E> {\n    \
                        let b = B::new()?;\n    Ok(())\n}\n# fn hidden() {}\n```\n";
        assert_eq!(
            as_function_body(document, "## Example", "rust,no_run"),
            "    use a::B;\n\n    let b = B::new()?;\n"
        );
    }

    #[test]
    fn a_block_without_main_is_indented_whole() {
        let document = "```text\nlet a = 1;\n\nlet b = a;\n```\n";
        assert_eq!(
            as_function_body(document, "", "text"),
            "    let a = 1;\n\n    let b = a;\n"
        );
    }
}
