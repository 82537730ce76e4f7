//! `snowmint range`.

use std::process::ExitCode;

use clap::Args;

use crate::Global;

/// Arguments of `snowmint range`.
#[derive(Debug, Args)]
pub struct RangeArgs {}

/// Runs `snowmint range`.
pub fn run(_args: RangeArgs, _global: &Global) -> anyhow::Result<ExitCode> {
    anyhow::bail!("snowmint range is not built yet")
}
