//! The known-answer vectors against their sources: vectors/generate.mjs,
//! run with Node.js where the pinned npm packages it cross-checks against
//! (vectors/package.json: `@sapphire/snowflake`, `ulid`, `uuid`, `bson`,
//! `ksuid`, `@atproto/common-web`) are installed, makes the file again
//! from the published examples, the published layouts and those
//! implementations, and must find vectors/vectors.json unchanged.
//!
//! The packages go into this test's directory under target/, installed by
//! `npm ci` from the committed lock file, never into the repository. This
//! needs `node` and `npm` (Debian: `apt-get install nodejs npm`) and the
//! npm registry.
//!
//! After a deliberate change to the generator, write the file anew with
//! `SNOWMINT_WRITE_VECTORS=1 cargo test -p snowmint --test vectors_sources`.

use std::path::{Path, PathBuf};
use std::process::Command;

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Runs `program` in `dir`, failing with its output and how to get it.
fn run(dir: &Path, program: &str, args: &[&str]) -> String {
    let output = Command::new(program)
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap_or_else(|err| {
            panic!(
                "cannot run {program} ({err}): the vectors' cross-checks need Node.js and npm \
                 (Debian: apt-get install nodejs npm)"
            )
        });
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(
        output.status.success(),
        "{program} {args:?} in {}: {}\n{text}",
        dir.display(),
        output.status
    );
    text
}

#[test]
fn the_vectors_are_what_their_sources_say() {
    let vectors = repo().join("vectors");
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("vectors-npm");
    std::fs::create_dir_all(&dir).unwrap();
    for file in ["package.json", "package-lock.json", "generate.mjs"] {
        std::fs::copy(vectors.join(file), dir.join(file))
            .unwrap_or_else(|err| panic!("cannot copy vectors/{file}: {err}"));
    }
    run(
        &dir,
        "npm",
        &["ci", "--no-audit", "--no-fund", "--loglevel=error"],
    );
    let file = vectors.join("vectors.json");
    let file = file.to_str().expect("a UTF-8 path");
    let write = std::env::var_os("SNOWMINT_WRITE_VECTORS").is_some_and(|v| v == "1");
    let args: &[&str] = if write {
        &["generate.mjs", file]
    } else {
        &["generate.mjs", "--check", file]
    };
    let said = run(&dir, "node", args);
    println!("{said}");
}
