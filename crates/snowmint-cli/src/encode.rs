//! `snowmint encode`.

use std::process::ExitCode;

use clap::Args;

use crate::Global;

/// Arguments of `snowmint encode`.
#[derive(Debug, Args)]
pub struct EncodeArgs {}

/// Runs `snowmint encode`.
pub fn run(_args: EncodeArgs, _global: &Global) -> anyhow::Result<ExitCode> {
    anyhow::bail!("snowmint encode is not built yet")
}
