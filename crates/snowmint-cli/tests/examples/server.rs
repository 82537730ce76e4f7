//! The `snowmint serve` the README's examples talk to (or, for the
//! one that shows a second process refused, compete with): started as the
//! README starts it, on a free port and in a temporary state directory
//! instead of 8080 and /var/lib/snowmint; the examples' commands and
//! outputs are rewritten between the two.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// Where the README's examples reach the service.
pub const SHOWN_ADDRESS: &str = "localhost:8080";

/// The README's state directory.
pub const SHOWN_STATE_DIR: &str = "/var/lib/snowmint";

/// How the README starts the service; the test starts it the same way.
const SHOWN_START: &str = "snowmint serve --datacenter 3 --machine 7 --state-dir /var/lib/snowmint";

/// The process id the README shows for the service.
const SHOWN_PID: &str = "4242";

/// How long a start may take: a bound against hangs, not a timing
/// assertion.
const START_LIMIT: Duration = Duration::from_secs(60);

/// A running service, killed on drop.
pub struct Server {
    child: Child,
    address: SocketAddr,
    state_dir: PathBuf,
    _dir: tempfile::TempDir,
}

impl Server {
    /// Starts the service as the README does and waits until it is ready.
    pub fn start() -> Server {
        let readme =
            std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("../../README.md"))
                .unwrap();
        assert!(
            readme.lines().any(|line| line == SHOWN_START),
            "README.md no longer starts the service with `{SHOWN_START}`: \
             start it here as the README does"
        );
        let dir = tempfile::Builder::new()
            .prefix("snowmint-examples-serve-")
            .tempdir()
            .unwrap();
        let state_dir = dir.path().join("state");
        let log = dir.path().join("serve.log");
        let arguments = SHOWN_START
            .replace(SHOWN_STATE_DIR, &state_dir.display().to_string())
            .split(' ')
            .skip(1)
            .map(str::to_owned)
            .collect::<Vec<_>>();
        let mut command = Command::new(env!("CARGO_BIN_EXE_snowmint"));
        command
            .args(&arguments)
            .args(["--listen", "127.0.0.1:0"])
            .env("HOME", dir.path())
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(std::fs::File::create(&log).unwrap());
        for (name, _) in std::env::vars_os() {
            if name.to_string_lossy().starts_with("SNOWMINT_") {
                command.env_remove(name);
            }
        }
        let mut child = command.spawn().expect("running snowmint serve");
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
        let logged = || std::fs::read_to_string(&log).unwrap_or_default();
        let address = loop {
            if let Ok(address) = receiver.recv_timeout(Duration::from_millis(50)) {
                break address;
            }
            if let Some(status) = child.try_wait().unwrap() {
                panic!(
                    "snowmint serve exited with {status} before listening:\n{}",
                    logged()
                );
            }
            assert!(
                Instant::now() < deadline,
                "snowmint serve did not listen within {START_LIMIT:?}:\n{}",
                logged()
            );
        };
        while !ready(address) {
            assert!(
                Instant::now() < deadline,
                "snowmint serve was not ready within {START_LIMIT:?}:\n{}",
                logged()
            );
            std::thread::sleep(Duration::from_millis(50));
        }
        Server {
            child,
            address,
            state_dir,
            _dir: dir,
        }
    }

    /// The command as it runs here: against this service and its state
    /// directory.
    pub fn rewrite_command(&self, command: &str) -> String {
        command
            .replace(SHOWN_ADDRESS, &self.address.to_string())
            .replace(SHOWN_STATE_DIR, &self.state_dir.display().to_string())
    }

    /// The output as the README shows it: with its address, state
    /// directory and process id.
    pub fn rewrite_output(&self, output: &str) -> String {
        output
            .replace(&self.state_dir.display().to_string(), SHOWN_STATE_DIR)
            .replace(&self.address.to_string(), SHOWN_ADDRESS)
            .replace(
                &format!("process {}", self.child.id()),
                &format!("process {SHOWN_PID}"),
            )
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Whether `GET /readyz` answers 200.
fn ready(address: SocketAddr) -> bool {
    let Ok(mut stream) = TcpStream::connect_timeout(&address, Duration::from_secs(5)) else {
        return false;
    };
    let _ = stream.set_read_timeout(Some(Duration::from_secs(5)));
    let request = "GET /readyz HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n";
    let mut answer = String::new();
    stream.write_all(request.as_bytes()).is_ok()
        && stream.read_to_string(&mut answer).is_ok()
        && answer.starts_with("HTTP/1.1 200")
}
