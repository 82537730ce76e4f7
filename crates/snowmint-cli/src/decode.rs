//! `snowmint decode`.

use std::process::ExitCode;

use clap::Args;

use crate::Global;

/// Arguments of `snowmint decode`.
#[derive(Debug, Args)]
pub struct DecodeArgs {}

/// Runs `snowmint decode`.
pub fn run(_args: DecodeArgs, _global: &Global) -> anyhow::Result<ExitCode> {
    anyhow::bail!("snowmint decode is not built yet")
}
