//! Every example the documentation shows runs here, and what it prints is
//! compared with what it is shown to print:
//!
//! - each `$ ` example of `snowmint --help` and of every subcommand's
//!   `--help`, read from the real binary's help (so that no example can be
//!   shown there without being run);
//! - each ```` ```console ```` block of every document (README.md, the
//!   guides of docs/, the crates' READMEs; see `markdown::documents`); the
//!   ones that talk to `localhost:8080` or use `/var/lib/snowmint` run
//!   against a `snowmint serve` that this test starts as the service
//!   guide does.
//!
//! Examples are terminal transcripts in trycmd's syntax (see
//! `transcript`), run with `sh` so that pipes work as shown; output that
//! changes with the clock is compared with a pattern (see `check`).
//!
//! The documents' links and anchors are checked here too (`links`).

mod check;
mod links;
mod markdown;
mod server;
mod shell;
mod transcript;

use check::Outcome;
use shell::Sandbox;
use transcript::Example;

/// The width the help is read at: examples must fit an 80-column
/// terminal, or clap wraps them and they no longer run as shown.
const COLUMNS: &str = "80";

/// Every example of every `--help` does what it shows.
#[test]
fn every_help_example_runs_as_shown() {
    let mut failures = Vec::new();
    let mut count = 0;
    for (title, help) in help_texts() {
        let examples = help_examples(&title, &help).unwrap_or_else(|error| panic!("{error}"));
        // The examples of one help text share a directory, in order, as
        // they would in a reader's terminal.
        let sandbox = Sandbox::new();
        for example in examples {
            count += 1;
            let outcome = sandbox.run(&example.command);
            record(&mut failures, &example, &outcome);
        }
    }
    // snowmint --help and each command's but `serve` show examples.
    assert!(count >= 20, "only {count} help examples found");
    report(count, &failures);
}

/// Every command of every ```` ```console ```` block of every document
/// does what the block shows.
#[test]
fn every_console_block_runs_as_shown() {
    let blocks = console_blocks().unwrap_or_else(|error| panic!("{error}"));
    assert!(
        std::process::Command::new("curl")
            .arg("--version")
            .output()
            .is_ok_and(|output| output.status.success()),
        "the documents' HTTP examples need curl: apt-get install curl (scripts/test does)"
    );
    // The nodes the documents start, each started when an example first
    // talks to it.
    let mut servers: Vec<Option<server::Server>> = server::SHOWN.iter().map(|_| None).collect();
    let mut failures = Vec::new();
    let mut count = 0;
    for block in &blocks {
        let sandbox = Sandbox::new();
        for example in block {
            count += 1;
            let shown = server::SHOWN
                .iter()
                .position(|shown| shown.serves(&example.command));
            let outcome = match shown {
                Some(at) => {
                    let server = servers[at]
                        .get_or_insert_with(|| server::Server::start(&server::SHOWN[at]));
                    let mut outcome = sandbox.run(&server.rewrite_command(&example.command));
                    outcome.output = server.rewrite_output(&outcome.output);
                    outcome
                }
                None => sandbox.run(&example.command),
            };
            record(&mut failures, example, &outcome);
        }
    }
    for (shown, server) in server::SHOWN.iter().zip(&servers) {
        assert!(
            server.is_some(),
            "no example talks to the node {} starts ({})",
            shown.document,
            shown.address
        );
    }
    assert!(count >= 30, "only {count} examples found in the documents");
    report(count, &failures);
}

/// Each pattern of output that changes with the clock belongs to an
/// example that is shown, so that none outlives its example.
#[test]
fn every_clock_pattern_belongs_to_a_shown_example() {
    let mut commands: Vec<String> = console_blocks()
        .unwrap()
        .into_iter()
        .flatten()
        .map(|example| example.command)
        .collect();
    for (title, help) in help_texts() {
        commands.extend(
            help_examples(&title, &help)
                .unwrap()
                .into_iter()
                .map(|example| example.command),
        );
    }
    for (command, _) in check::VARYING {
        assert!(
            commands.iter().any(|shown| shown == command),
            "check::VARYING has a pattern for `{command}`, which no help text or document shows"
        );
    }
}

fn record(failures: &mut Vec<String>, example: &Example, outcome: &Outcome) {
    if let Err(difference) = check::check(example, outcome) {
        failures.push(format!(
            "{}: $ {}\n{difference}",
            example.origin, example.command
        ));
    }
}

fn report(count: usize, failures: &[String]) {
    assert!(
        failures.is_empty(),
        "{} of {count} examples do not do what they show:\n\n{}",
        failures.len(),
        failures.join("\n\n")
    );
}

/// `snowmint --help` and the help of each command it lists, with a title
/// such as `snowmint decode --help`.
fn help_texts() -> Vec<(String, String)> {
    let main = help(&[]);
    let mut texts = Vec::new();
    let commands: Vec<String> = main
        .lines()
        .skip_while(|line| *line != "Commands:")
        .skip(1)
        .take_while(|line| !line.trim().is_empty())
        .filter_map(|line| line.split_whitespace().next())
        .filter(|name| *name != "help")
        .map(str::to_owned)
        .collect();
    assert!(
        commands.len() >= 7,
        "no list of commands in snowmint --help:\n{main}"
    );
    texts.push(("snowmint --help".to_owned(), main));
    for command in commands {
        texts.push((format!("snowmint {command} --help"), help(&[&command])));
    }
    texts
}

/// The help the real binary prints for `command`.
fn help(command: &[&str]) -> String {
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_snowmint"))
        .args(command)
        .arg("--help")
        .env("COLUMNS", COLUMNS)
        .env_remove("SNOWMINT_LAYOUT")
        .env_remove("SNOWMINT_EPOCH")
        .output()
        .expect("running snowmint --help");
    assert!(
        output.status.success(),
        "snowmint {command:?} --help failed"
    );
    String::from_utf8(output.stdout).unwrap()
}

/// The examples of a help text: the indented lines under `Examples:`.
/// A `$ ` line anywhere else is a mistake (it would not be run).
fn help_examples(title: &str, help: &str) -> Result<Vec<Example>, String> {
    let lines: Vec<&str> = help.lines().collect();
    let Some(start) = lines.iter().position(|line| *line == "Examples:") else {
        return match lines
            .iter()
            .position(|line| line.trim_start().starts_with("$ "))
        {
            Some(at) => Err(format!(
                "{title}:{}: an example outside an Examples: section",
                at + 1
            )),
            None => Ok(Vec::new()),
        };
    };
    let section: Vec<&str> = lines[start + 1..]
        .iter()
        .take_while(|line| line.is_empty() || line.starts_with("  "))
        .map(|line| line.strip_prefix("  ").unwrap_or(line))
        .collect();
    let after = start + 1 + section.len();
    if let Some(at) = lines[after..]
        .iter()
        .position(|line| line.trim_start().starts_with("$ "))
    {
        return Err(format!(
            "{title}:{}: an example outside the Examples: section",
            after + at + 1
        ));
    }
    let examples = transcript::parse(title, start + 2, &section)?;
    if examples.is_empty() {
        return Err(format!("{title}: an Examples: section without examples"));
    }
    Ok(examples)
}

/// The examples of each ```` ```console ```` block of every document.
fn console_blocks() -> Result<Vec<Vec<Example>>, String> {
    let mut examples = Vec::new();
    for document in markdown::documents() {
        for block in markdown::code_blocks(&document.path, &document.text)? {
            if block.info == "console" {
                examples.push(transcript::parse(
                    &document.path,
                    block.first_line,
                    &block.lines,
                )?);
            }
        }
    }
    Ok(examples)
}
