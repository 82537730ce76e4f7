//! `snowmint generate`.

use std::process::ExitCode;

use clap::Args;

use crate::Global;

/// Arguments of `snowmint generate`.
#[derive(Debug, Args)]
pub struct GenerateArgs {}

/// Runs `snowmint generate`.
pub fn run(_args: GenerateArgs, _global: &Global) -> anyhow::Result<ExitCode> {
    anyhow::bail!("snowmint generate is not built yet")
}
