//! `snowmint page --export DIR`: the calculator page `snowmint serve`
//! serves at `/`, written out as static files that work when opened from
//! disk, with no node: the page decodes, encodes, inspects and draws with
//! the npm package's reader, bundled into it, and asks a node only for new
//! IDs (opened from disk, its Generate card says it needs one).
//!
//! The files are the ones the binary serves, byte for byte (see
//! `snowmint_server::page`).

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Context;
use clap::Args;
use snowmint_server::page::ASSETS;

use crate::failure::Failure;

/// Arguments of `snowmint page`.
#[derive(Debug, Args)]
#[command(after_help = "\
Examples:
  $ snowmint page --export calculator
  wrote 4 files into calculator: open calculator/index.html in a browser

  $ find calculator -type f | sort
  calculator/assets/favicon.svg
  calculator/assets/page.js
  calculator/assets/style.css
  calculator/index.html

  $ snowmint page --export calculator
  ? 2
  error: calculator is not empty: give a new or empty directory, or --force
  ...

  $ snowmint page --export calculator --force
  wrote 4 files into calculator: open calculator/index.html in a browser

Opened from disk, the page decodes, encodes, inspects and compares IDs of
every layout with no node; only Generate needs one (snowmint serve, whose
page at / is the same).")]
pub struct PageArgs {
    /// Write the page's files into this directory (made if missing; it
    /// must be empty unless --force).
    #[arg(long, value_name = "DIR")]
    export: PathBuf,
    /// Write into a directory that holds files already, replacing the
    /// page's own files there (other files are left alone).
    #[arg(long)]
    force: bool,
}

/// Runs `snowmint page`.
pub fn run(args: PageArgs) -> anyhow::Result<ExitCode> {
    let dir = &args.export;
    if dir.exists() && !args.force && !is_empty_dir(dir)? {
        return Err(Failure::bad_input(format!(
            "{} is not empty: give a new or empty directory, or --force",
            dir.display()
        ))
        .into());
    }
    for asset in &ASSETS {
        let relative = match asset.path {
            "/" => "index.html",
            path => path.trim_start_matches('/'),
        };
        let file = dir.join(relative);
        if let Some(parent) = file.parent() {
            std::fs::create_dir_all(parent)
                .with_context(|| format!("cannot make the directory {}", parent.display()))?;
        }
        std::fs::write(&file, asset.body)
            .with_context(|| format!("cannot write {}", file.display()))?;
    }
    println!(
        "wrote {} files into {}: open {} in a browser",
        ASSETS.len(),
        dir.display(),
        dir.join("index.html").display()
    );
    Ok(ExitCode::SUCCESS)
}

/// Whether `dir` is a directory with nothing in it (a file is not).
fn is_empty_dir(dir: &Path) -> anyhow::Result<bool> {
    if !dir.is_dir() {
        return Err(Failure::bad_input(format!("{} is not a directory", dir.display())).into());
    }
    let mut entries = std::fs::read_dir(dir)
        .with_context(|| format!("cannot read the directory {}", dir.display()))?;
    Ok(entries.next().is_none())
}
