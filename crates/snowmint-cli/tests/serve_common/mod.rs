//! Running the real `snowmint serve` binary in tests: on a free loopback
//! port, with a private HOME and state directory, killed on drop.

#![allow(dead_code)] // Each test file uses its own part of this module.

use std::fs::File;
use std::io::{BufRead, BufReader};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

#[path = "../../../snowmint-server/tests/common/http.rs"]
pub mod http;
#[path = "../../../snowmint-server/tests/common/temp.rs"]
mod temp;

pub use temp::TempDir;

/// How long a start may take before the test gives up (a safety net
/// against hangs, not a timing assertion).
const START_LIMIT: Duration = Duration::from_secs(60);

/// `snowmint serve` with `args`, in the environment `env` (no inherited
/// SNOWMINT_* variables; HOME is `home`).
pub fn command(home: &Path, args: &[&str], env: &[(&str, &str)]) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_snowmint"));
    command.arg("serve").args(args);
    for (name, _) in std::env::vars() {
        if name.starts_with("SNOWMINT_") || name == "XDG_STATE_HOME" {
            command.env_remove(name);
        }
    }
    command.env("HOME", home).envs(env.iter().copied());
    command
}

/// A running service.
pub struct Service {
    child: Child,
    pub address: SocketAddr,
    stderr: PathBuf,
}

impl Service {
    /// Starts the binary with `--listen 127.0.0.1:0` added and waits for its
    /// `listening on http://ADDR` line.
    pub fn start(home: &Path, args: &[&str], env: &[(&str, &str)]) -> Service {
        let stderr = home.join(format!(
            "stderr-{}.log",
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .unwrap()
                .as_nanos()
        ));
        let mut all = vec!["--listen", "127.0.0.1:0"];
        all.extend_from_slice(args);
        let mut child = command(home, &all, env)
            .stdout(Stdio::piped())
            .stderr(File::create(&stderr).unwrap())
            .spawn()
            .expect("running the snowmint binary");
        let stdout = child.stdout.take().unwrap();
        let (sender, receiver) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                if let Some(address) = line.strip_prefix("listening on http://") {
                    let _ = sender.send(address.parse::<SocketAddr>().unwrap());
                }
            }
        });
        let deadline = Instant::now() + START_LIMIT;
        loop {
            if let Ok(address) = receiver.recv_timeout(Duration::from_millis(50)) {
                return Service {
                    child,
                    address,
                    stderr,
                };
            }
            if let Some(status) = child.try_wait().unwrap() {
                panic!(
                    "snowmint serve exited with {status} before listening:\n{}",
                    std::fs::read_to_string(&stderr).unwrap_or_default()
                );
            }
            assert!(
                Instant::now() < deadline,
                "snowmint serve did not start:\n{}",
                std::fs::read_to_string(&stderr).unwrap_or_default()
            );
        }
    }

    /// A new connection to the service.
    pub fn connect(&self) -> http::Connection {
        http::Connection::open(self.address).unwrap()
    }

    /// `GET target` on a new connection; the body as JSON.
    pub fn json(&self, target: &str) -> serde_json::Value {
        let response = self.connect().get(target).unwrap();
        assert_eq!(response.status, 200, "{target}: {}", response.body);
        serde_json::from_str(&response.body).unwrap()
    }

    /// What the service logged so far.
    pub fn log(&self) -> String {
        std::fs::read_to_string(&self.stderr).unwrap_or_default()
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// SIGKILL, and reap.
    pub fn kill(mut self) {
        self.child.kill().unwrap();
        self.child.wait().unwrap();
    }

    /// SIGTERM, then wait for the exit.
    pub fn terminate(mut self) -> (ExitStatus, String) {
        // The shell's built-in `kill`: no procps needed, and no unsafe code.
        let sent = Command::new("sh")
            .args(["-c", &format!("kill -TERM {}", self.child.id())])
            .status()
            .unwrap();
        assert!(sent.success());
        let status = self.child.wait().unwrap();
        (status, self.log())
    }
}

impl Drop for Service {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Runs the binary to its end (for starts that must fail).
pub fn run_to_end(
    home: &Path,
    args: &[&str],
    env: &[(&str, &str)],
) -> (ExitStatus, String, String) {
    let mut all = vec!["--listen", "127.0.0.1:0"];
    all.extend_from_slice(args);
    let output = command(home, &all, env)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    (
        output.status,
        String::from_utf8_lossy(&output.stdout).into_owned(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

/// The fields of a Twitter-layout ID, by the formula of DESIGN.md.
pub fn timestamp_ms(id: u64) -> i64 {
    (id >> 22) as i64 + 1_288_834_974_657
}

/// The system clock, Unix ms.
pub fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as i64
}
