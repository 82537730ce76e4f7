//! Every committed input of every target, replayed: the seeds (a corpus
//! that covers what fuzzing has reached, one input per line in hex, in
//! `fuzz/seeds/<target>.hex`) and the regressions (inputs that once failed,
//! a file each, in `fuzz/regressions/<target>/`). A failing input is named,
//! with its bytes.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::{Path, PathBuf};

use crate::{Check, TARGETS};

/// Where the fuzz targets keep their inputs.
fn fuzz_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fuzz")
}

/// The seeds of `target`, with where each comes from.
fn seeds(target: &str) -> Vec<(String, Vec<u8>)> {
    let path = fuzz_dir().join("seeds").join(format!("{target}.hex"));
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|err| panic!("cannot read {}: {err}", path.display()));
    text.lines()
        .enumerate()
        .filter(|(_, line)| !line.starts_with('#'))
        .map(|(index, line)| {
            let at = format!("{}:{}", path.display(), index + 1);
            let data = hex(line).unwrap_or_else(|| panic!("{at}: not hex: {line:?}"));
            (at, data)
        })
        .collect()
}

/// `text` as bytes, two hex digits each.
fn hex(text: &str) -> Option<Vec<u8>> {
    if !text.len().is_multiple_of(2) {
        return None;
    }
    (0..text.len())
        .step_by(2)
        .map(|at| u8::from_str_radix(text.get(at..at + 2)?, 16).ok())
        .collect()
}

/// The regressions of `target`, in name order; none when it has none.
fn regressions(target: &str) -> Vec<(String, Vec<u8>)> {
    let Ok(entries) = std::fs::read_dir(fuzz_dir().join("regressions").join(target)) else {
        return Vec::new();
    };
    let mut files: Vec<PathBuf> = entries
        .map(|entry| entry.expect("a readable directory entry").path())
        .filter(|path| path.is_file())
        .collect();
    files.sort();
    files
        .into_iter()
        .map(|file| {
            let data = std::fs::read(&file).expect("a readable input");
            (file.display().to_string(), data)
        })
        .collect()
}

/// Runs every seed and regression of `target` through `run`; fails naming
/// each input that fails, and when the target has no seeds at all (a
/// replay of nothing proves nothing).
fn replay(target: &str, run: Check) {
    let seeds = seeds(target);
    assert!(
        !seeds.is_empty(),
        "no seeds in fuzz/seeds/{target}.hex: scripts/fuzz --seeds {target} writes them"
    );
    let inputs: Vec<_> = seeds.into_iter().chain(regressions(target)).collect();
    let mut failed = Vec::new();
    for (at, data) in &inputs {
        if catch_unwind(AssertUnwindSafe(|| run(data))).is_err() {
            failed.push(format!("{at} ({:?})", String::from_utf8_lossy(data)));
        }
    }
    assert!(
        failed.is_empty(),
        "{target}: {} of {} inputs failed:\n{}",
        failed.len(),
        inputs.len(),
        failed.join("\n")
    );
}

/// Every target in [`TARGETS`], so that a new target is replayed too.
#[test]
fn every_target_passes_its_seeds_and_regressions() {
    for (target, run) in TARGETS {
        replay(target, run);
    }
    // The node `http_query` sent its inputs to lives as long as the
    // process; its state directory is this test's to remove.
    let _ = std::fs::remove_dir_all(crate::http_query::state_dir());
}
