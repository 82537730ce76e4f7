//! `snowmint manpages DIR` (hidden, for packagers): the manual pages of
//! `snowmint` and of each of its commands, made from the same clap
//! definitions as `--help`, so that the two never disagree. `scripts/dist`
//! runs it for the release archive and the Debian package.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use clap::Args;

/// Arguments of `snowmint manpages`.
#[derive(Debug, Args)]
pub struct ManpagesArgs {
    /// The directory to write `snowmint.1` and `snowmint-COMMAND.1` into;
    /// made if missing.
    #[arg(value_name = "DIR")]
    dir: PathBuf,
}

/// Runs `snowmint manpages`: one page for `command` and one for each of
/// its visible subcommands, named as `man` looks them up
/// (`man snowmint-serve`).
pub fn run(args: ManpagesArgs, command: clap::Command) -> anyhow::Result<ExitCode> {
    std::fs::create_dir_all(&args.dir)
        .with_context(|| format!("cannot make the directory {}", args.dir.display()))?;
    clap_mangen::generate_to(command, &args.dir)
        .with_context(|| format!("cannot write the manual pages into {}", args.dir.display()))?;
    Ok(ExitCode::SUCCESS)
}
