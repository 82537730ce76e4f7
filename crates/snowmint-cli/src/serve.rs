//! `snowmint serve`.

use std::process::ExitCode;

use clap::Args;

use crate::Global;

/// Arguments of `snowmint serve`.
#[derive(Debug, Args)]
pub struct ServeArgs {}

/// Runs `snowmint serve`.
pub fn run(_args: ServeArgs, _global: &Global) -> anyhow::Result<ExitCode> {
    anyhow::bail!("snowmint serve is not built yet")
}
