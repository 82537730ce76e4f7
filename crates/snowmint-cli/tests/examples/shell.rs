//! Running an example's command as a reader would: in `sh`, with the
//! `snowmint` binary under test first on PATH, in a fresh directory that
//! holds the files the examples read (`app.log`), and a private HOME.

use std::io::Read;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use snowmint_test_support::temp::{TempDir, temp_dir};
use snowmint_test_support::wait::Deadline;

use crate::check::Outcome;

/// Longest an example may run: a bound against hangs, many times what
/// the slowest example (a million IDs) needs, not a timing assertion.
const LIMIT: Duration = Duration::from_secs(120);

/// A place for a series of examples: a working directory and a HOME.
pub struct Sandbox {
    dir: TempDir,
}

impl Sandbox {
    /// A fresh working directory with the examples' files, and a HOME
    /// with the directories the completion examples write into, as a
    /// shell user's would have.
    pub fn new() -> Sandbox {
        let dir = temp_dir("examples");
        let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/examples");
        std::fs::create_dir(dir.path().join("work")).unwrap();
        std::fs::copy(fixtures.join("app.log"), dir.path().join("work/app.log"))
            .expect("copying tests/examples/app.log");
        for made in [
            ".local/share/bash-completion/completions",
            ".zfunc",
            ".config/fish/completions",
        ] {
            std::fs::create_dir_all(dir.path().join("home").join(made)).unwrap();
        }
        Sandbox { dir }
    }

    /// The private HOME.
    pub fn home(&self) -> PathBuf {
        self.dir.path().join("home")
    }

    /// Runs `command` with `sh -c`, its standard error into the same pipe
    /// as its standard output (so that both read in the order written).
    pub fn run(&self, command: &str) -> Outcome {
        let binary = Path::new(env!("CARGO_BIN_EXE_snowmint"));
        let path = std::env::join_paths(
            std::iter::once(binary.parent().unwrap().to_path_buf()).chain(std::env::split_paths(
                &std::env::var_os("PATH").unwrap_or_default(),
            )),
        )
        .unwrap();
        let mut shell = Command::new("sh");
        shell
            .arg("-c")
            .arg(format!("exec 2>&1\n{command}"))
            .current_dir(self.dir.path().join("work"))
            .env("PATH", path)
            .env("HOME", self.home())
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            // Its own process group, so that a hung pipeline is ended whole.
            .process_group(0);
        for (name, _) in std::env::vars_os() {
            let name = name.to_string_lossy();
            if name.starts_with("SNOWMINT_")
                || ["XDG_STATE_HOME", "COLUMNS", "LINES"].contains(&&*name)
            {
                shell.env_remove(&*name);
            }
        }
        let mut child = shell.spawn().expect("running sh");
        let mut stdout = child.stdout.take().unwrap();
        let reader = std::thread::spawn(move || {
            let mut output = Vec::new();
            let _ = stdout.read_to_end(&mut output);
            output
        });
        let deadline = Deadline::after(LIMIT, format!("`{command}` to end"));
        let status = loop {
            if let Some(status) = child.try_wait().unwrap() {
                break status;
            }
            if deadline.passed() {
                // The group, children included: procps' kill (dash's
                // builtin does not take `--`).
                let _ = Command::new("/bin/kill")
                    .args(["-KILL", "--", &format!("-{}", child.id())])
                    .status();
                let _ = child.wait();
                deadline.fail("");
            }
            std::thread::sleep(Duration::from_millis(10));
        };
        let output = reader.join().unwrap();
        Outcome {
            code: status.code(),
            output: String::from_utf8_lossy(&output).into_owned(),
        }
    }
}
