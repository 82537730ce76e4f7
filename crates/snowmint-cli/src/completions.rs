//! `snowmint completions`.

use std::io::Write;
use std::process::ExitCode;

use clap::Args;
use clap_complete::Shell;

/// Arguments of `snowmint completions`.
#[derive(Debug, Args)]
#[command(after_help = "\
Examples:
  $ snowmint completions bash \\
      > ~/.local/share/bash-completion/completions/snowmint
  $ snowmint completions zsh > ~/.zfunc/_snowmint
  $ snowmint completions fish > ~/.config/fish/completions/snowmint.fish

For zsh, the directory (here ~/.zfunc) must be on $fpath before compinit
runs: add `fpath=(~/.zfunc $fpath)` to ~/.zshrc.")]
pub struct CompletionsArgs {
    /// The shell to write the script for.
    #[arg(value_enum)]
    shell: Shell,
}

/// Runs `snowmint completions`: writes the script for `command` to stdout.
pub fn run(args: CompletionsArgs, mut command: clap::Command) -> anyhow::Result<ExitCode> {
    // Generated into memory first: the generator panics on write errors, and
    // a closed pipe must not be one.
    let mut script = Vec::new();
    clap_complete::generate(args.shell, &mut command, "snowmint", &mut script);
    let mut out = std::io::stdout().lock();
    out.write_all(&script)?;
    out.flush()?;
    Ok(ExitCode::SUCCESS)
}
