//! How a failed command ends: the message on stderr and the exit code.
//!
//! - Bad arguments or input (a field out of range, an ID that does not
//!   parse, a time outside the layout): exit code 2, like clap's own usage
//!   errors, with the message first and the usage line after it.
//! - Anything else (the clock went back, an I/O error): exit code 1.
//! - A closed pipe (`snowmint generate | head -1`): exit code 0, silently;
//!   the reader has what it wanted.

use std::fmt;
use std::io;
use std::process::ExitCode;

/// Exit code for bad arguments and input, the same as clap's.
pub const BAD_INPUT: u8 = 2;

/// A failure caused by what the user gave: exit code 2.
///
/// The message is the first line on stderr and names the value and the valid
/// range; the core's [`snowmint::Error`] messages already do.
#[derive(Debug)]
pub struct BadInput {
    message: String,
    /// An extra line that helps fix the input (the valid times, say).
    hint: Option<String>,
}

impl BadInput {
    /// A bad-input failure with this message.
    pub fn new(message: impl fmt::Display) -> BadInput {
        BadInput {
            message: message.to_string(),
            hint: None,
        }
    }

    /// Says where the value came from, after the message:
    /// `... (from SNOWMINT_LAYOUT)`, as `snowmint serve` says it.
    pub fn with_origin(mut self, origin: &str) -> BadInput {
        self.message = format!("{} (from {origin})", self.message);
        self
    }

    /// Adds a line of help under the message.
    pub fn with_hint(mut self, hint: impl fmt::Display) -> BadInput {
        self.hint = Some(hint.to_string());
        self
    }
}

impl fmt::Display for BadInput {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for BadInput {}

impl From<snowmint::Error> for BadInput {
    fn from(error: snowmint::Error) -> BadInput {
        let hint = match &error {
            snowmint::Error::TimestampBeforeEpoch {
                epoch_ms, last_ms, ..
            }
            | snowmint::Error::TimestampPastEnd {
                epoch_ms, last_ms, ..
            } => Some(format!(
                "the layout covers {} ..= {}",
                snowmint::format_time(*epoch_ms),
                snowmint::format_time(*last_ms)
            )),
            _ => None,
        };
        BadInput {
            message: error.to_string(),
            hint,
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
    if let Some(bad) = error.downcast_ref::<BadInput>() {
        let mut text = format!("error: {bad}\n");
        if let Some(hint) = &bad.hint {
            text.push_str(&format!("  {hint}\n"));
        }
        if !usage.is_empty() {
            text.push_str(&format!(
                "\n{usage}\n\nFor more information, try '--help'.\n"
            ));
        }
        eprint!("{text}");
        return ExitCode::from(BAD_INPUT);
    }
    eprintln!("error: {error:#}");
    ExitCode::FAILURE
}

/// Whether the error is, somewhere in its chain, a write to a closed pipe.
pub fn is_broken_pipe(error: &anyhow::Error) -> bool {
    error.chain().any(|cause| {
        cause
            .downcast_ref::<io::Error>()
            .is_some_and(|io| io.kind() == io::ErrorKind::BrokenPipe)
    })
}
