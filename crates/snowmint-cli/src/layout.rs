//! `snowmint layout`.

use std::process::ExitCode;

use clap::Args;

use crate::Global;

/// Arguments of `snowmint layout`.
#[derive(Debug, Args)]
pub struct LayoutArgs {}

/// Runs `snowmint layout`.
pub fn run(_args: LayoutArgs, _global: &Global) -> anyhow::Result<ExitCode> {
    anyhow::bail!("snowmint layout is not built yet")
}
