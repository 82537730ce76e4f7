//! How a failed command ends: the message on stderr and the exit code.
//!
//! - Bad arguments or input (a field out of range, an ID that does not
//!   parse, a time outside the layout): exit code 2, like clap's own usage
//!   errors, with the message first and the usage line after it.
//! - Anything else (the clock went back, an I/O error): exit code 1.
//! - A closed pipe (`snowmint generate | head -1`): exit code 0, silently;
//!   the reader has what it wanted.
//!
//! A core error's exit code comes from its kind, in the one `match` of
//! [`exit_code`] (docs/ARCHITECTURE.md §6).

use std::fmt;
use std::io;
use std::process::ExitCode;

use snowmint::{ErrorKind, Limit};

/// Exit code for bad arguments and input, the same as clap's.
pub const BAD_INPUT: u8 = 2;

/// Exit code for everything else that failed.
pub const FAILED: u8 = 1;

/// The exit code of a core error of kind `kind`. A new kind does not
/// compile until it is given one here.
pub fn exit_code(kind: ErrorKind) -> u8 {
    match kind {
        ErrorKind::OutOfRange
        | ErrorKind::InvalidText
        | ErrorKind::UnknownName
        | ErrorKind::InvalidFields
        | ErrorKind::InvalidLayout
        | ErrorKind::EmptyWindow => BAD_INPUT,
        // Not the arguments' fault: the same command may succeed later.
        ErrorKind::ClockBehind | ErrorKind::SequenceExhausted => FAILED,
    }
}

/// A failure the user is told about in one message: exit code 2 for bad
/// input, else 1.
///
/// The message is the first line on stderr; for bad input it names the
/// value and the valid range (the core's [`snowmint::Error`] messages
/// already do).
#[derive(Debug)]
pub struct Failure {
    message: String,
    /// An extra line that helps fix the input (the valid times, say).
    hint: Option<String>,
    /// The exit code.
    code: u8,
}

impl Failure {
    /// A bad-input failure (exit code 2) with this message.
    pub fn bad_input(message: impl fmt::Display) -> Failure {
        Failure {
            message: message.to_string(),
            hint: None,
            code: BAD_INPUT,
        }
    }

    /// Says where the value came from, after the message:
    /// `... (from SNOWMINT_LAYOUT)`, as `snowmint serve` says it.
    pub fn with_origin(mut self, origin: &str) -> Failure {
        self.message = format!("{} (from {origin})", self.message);
        self
    }

    /// Adds a line of help under the message.
    pub fn with_hint(mut self, hint: impl fmt::Display) -> Failure {
        self.hint = Some(hint.to_string());
        self
    }
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for Failure {}

impl From<snowmint::Error> for Failure {
    fn from(error: snowmint::Error) -> Failure {
        // A time outside the layout is easier to fix knowing which times
        // it holds.
        let hint = match (error.subject(), error.min(), error.max()) {
            (Some("timestamp"), Some(Limit::Integer(epoch_ms)), Some(Limit::Integer(last_ms))) => {
                Some(format!(
                    "the layout covers {} ..= {}",
                    snowmint::format_time(epoch_ms as i64),
                    snowmint::format_time(last_ms as i64)
                ))
            }
            _ => None,
        };
        Failure {
            message: error.to_string(),
            hint,
            code: exit_code(error.kind()),
        }
    }
}

/// Prints `error` the way its kind asks for and returns the exit code.
///
/// `usage` is the failed command's usage line, shown under bad input.
pub fn report(error: &anyhow::Error, usage: &str) -> ExitCode {
    if is_broken_pipe(error) {
        return ExitCode::SUCCESS;
    }
    // A core error that reached here unwrapped is told as one wrapped.
    let unwrapped = error
        .downcast_ref::<snowmint::Error>()
        .map(|core| Failure::from(core.clone()));
    if let Some(failure) = error.downcast_ref::<Failure>().or(unwrapped.as_ref()) {
        let mut text = format!("error: {failure}\n");
        if let Some(hint) = &failure.hint {
            text.push_str(&format!("  {hint}\n"));
        }
        // The usage helps to fix arguments, not to wait for a clock.
        if failure.code == BAD_INPUT && !usage.is_empty() {
            text.push_str(&format!(
                "\n{usage}\n\nFor more information, try '--help'.\n"
            ));
        }
        eprint!("{text}");
        return ExitCode::from(failure.code);
    }
    eprintln!("error: {error:#}");
    ExitCode::from(FAILED)
}

/// Whether the error is, somewhere in its chain, a write to a closed pipe.
pub fn is_broken_pipe(error: &anyhow::Error) -> bool {
    error.chain().any(|cause| {
        cause
            .downcast_ref::<io::Error>()
            .is_some_and(|io| io.kind() == io::ErrorKind::BrokenPipe)
    })
}
