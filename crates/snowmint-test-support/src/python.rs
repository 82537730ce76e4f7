//! A Python with real third-party packages from PyPI, for tests that check
//! snowmint against other people's code: a memcached client (pymemcache),
//! a YAML parser (PyYAML).
//!
//! The packages go into one virtualenv under the workspace's `target/`,
//! made once and reused (`python3 -m venv`, then `pip install` of pinned
//! versions); a file lock keeps test processes that start together from
//! making it twice. A machine without `python3 -m venv` fails the test and
//! says what to install.

use std::fs::File;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The packages, pinned: what the tests were written against.
pub const PACKAGES: [&str; 2] = ["pymemcache==4.0.0", "PyYAML==6.0.2"];

/// The virtualenv's `python`, with [`PACKAGES`] installed.
pub fn python() -> PathBuf {
    let target = target_dir();
    std::fs::create_dir_all(&target).expect("creating target/");
    let lock = File::create(target.join("test-venv.lock")).expect("creating the venv's lock file");
    lock.lock().expect("locking the venv");
    let venv = target.join("test-venv");
    let python = venv.join("bin/python");
    let stamp = venv.join("snowmint-packages.txt");
    let wanted = PACKAGES.join("\n");
    if std::fs::read_to_string(&stamp).ok().as_deref() == Some(wanted.as_str()) {
        return python;
    }
    run(
        Command::new("python3")
            .args(["-m", "venv", "--clear"])
            .arg(&venv),
        "python3 -m venv (Debian: apt-get install python3-venv; scripts/test installs it)",
    );
    run(
        Command::new(&python)
            .args([
                "-m",
                "pip",
                "install",
                "--quiet",
                "--disable-pip-version-check",
            ])
            .args(PACKAGES),
        "pip install from PyPI",
    );
    std::fs::write(&stamp, wanted).expect("writing the venv's stamp");
    python
}

/// Runs `code` with the virtualenv's Python, `args` after it
/// (`sys.argv[1:]`); panics with its output if it fails, and returns its
/// standard output.
pub fn run_python(code: &str, args: &[&str]) -> String {
    let output = Command::new(python())
        .arg("-c")
        .arg(code)
        .args(args)
        .output()
        .expect("running the virtualenv's python");
    assert!(
        output.status.success(),
        "python failed ({}):\n{}",
        output.status,
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout).expect("python wrote UTF-8")
}

fn run(command: &mut Command, what: &str) {
    let output = command
        .output()
        .unwrap_or_else(|e| panic!("cannot run {what}: {e}"));
    assert!(
        output.status.success(),
        "{what} failed ({}):\n{}{}",
        output.status,
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
}

/// The workspace's `target/` (where `cargo test` builds), from this
/// crate's place in it.
fn target_dir() -> PathBuf {
    std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target"))
}
