//! Running the real `snowmint serve` binary in tests: on a free loopback
//! port, with a private HOME and state directory, killed on drop.
//!
//! Only the binary's own crate knows where cargo built it, so every call
//! takes its path: `env!("CARGO_BIN_EXE_snowmint")` in the `snowmint-cli`
//! tests and benches.

use std::fs::File;
use std::io::{BufRead, BufReader};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::Duration;

use crate::http;
use crate::partition::Host;
use crate::wait::{Deadline, child_exit};

/// How long a start may take before the test gives up (a safety net
/// against hangs, not a timing assertion).
const START_LIMIT: Duration = Duration::from_secs(60);
/// How long a stopped service may take to exit (a clean shutdown releases
/// its claim first).
const EXIT_LIMIT: Duration = Duration::from_secs(60);

/// `snowmint serve` with `args`, in the environment `env` (no inherited
/// SNOWMINT_* variables; HOME is `home`); `binary` is the `snowmint`
/// executable.
pub fn command(binary: &str, home: &Path, args: &[&str], env: &[(&str, &str)]) -> Command {
    serve_command(Command::new(binary), home, args, env)
}

/// `serve` with `args` added to `base` (the binary, run as it is or on a
/// host), in the environment `env` with HOME at `home`.
fn serve_command(
    mut command: Command,
    home: &Path,
    args: &[&str],
    env: &[(&str, &str)],
) -> Command {
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
    /// Where it listens.
    pub address: SocketAddr,
    /// Where its gRPC API listens, when started with `--grpc-listen`.
    pub grpc: Option<SocketAddr>,
    /// Where it serves memcached's protocol, when started with
    /// `--memcached-listen`.
    pub memcached: Option<SocketAddr>,
    /// Whether it serves TLS (it said `https://`).
    pub tls: bool,
    /// The file its standard error goes to.
    stderr: PathBuf,
    /// The host it runs on, when on a partition network: the test
    /// connects to it from there.
    host: Option<Host>,
}

impl Service {
    /// Starts `binary` with `--listen 127.0.0.1:0` added and waits for its
    /// `listening on http://ADDR` line (after `gRPC listening on
    /// http://ADDR` and `memcached listening on ADDR`, when `args` ask for
    /// them; `https://` with TLS).
    pub fn start(binary: &str, home: &Path, args: &[&str], env: &[(&str, &str)]) -> Service {
        let mut all = vec!["--listen", "127.0.0.1:0"];
        all.extend_from_slice(args);
        Service::spawn(command(binary, home, &all, env), home, None)
    }

    /// Starts `binary` on `host` of a partition network (`ip netns exec`),
    /// listening on `port` at the host's address, and waits for its
    /// `listening on` line; the test's own requests ([`connect`](Self::connect))
    /// are made from the host. Its pid is the service's.
    pub fn start_on(
        host: &Host,
        port: u16,
        binary: &str,
        home: &Path,
        args: &[&str],
        env: &[(&str, &str)],
    ) -> Service {
        let listen = host.addr(port).to_string();
        let mut all = vec!["--listen", listen.as_str()];
        all.extend_from_slice(args);
        let command = serve_command(host.command(binary), home, &all, env);
        Service::spawn(command, home, Some(host.clone()))
    }

    /// Runs `command` and waits for its `listening on` line.
    fn spawn(mut command: Command, home: &Path, host: Option<Host>) -> Service {
        let stderr = home.join(format!(
            "stderr-{}.log",
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .unwrap()
                .as_nanos()
        ));
        let mut child = command
            .stdout(Stdio::piped())
            .stderr(File::create(&stderr).unwrap())
            .spawn()
            .expect("running the snowmint binary");
        let stdout = child.stdout.take().unwrap();
        let (sender, receiver) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let (mut grpc, mut memcached) = (None, None);
            let url = |line: &str, prefix: &str| {
                let rest = line.strip_prefix(prefix)?;
                let (tls, address) = match rest.strip_prefix("https://") {
                    Some(address) => (true, address),
                    None => (false, rest.strip_prefix("http://")?),
                };
                Some((address.parse::<SocketAddr>().unwrap(), tls))
            };
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                if let Some((address, _)) = url(&line, "gRPC listening on ") {
                    grpc = Some(address);
                } else if let Some(address) = line.strip_prefix("memcached listening on ") {
                    memcached = Some(address.parse::<SocketAddr>().unwrap());
                } else if let Some((address, tls)) = url(&line, "listening on ") {
                    let _ = sender.send((address, grpc, memcached, tls));
                }
            }
        });
        let deadline = Deadline::after(START_LIMIT, "snowmint serve to say where it listens");
        loop {
            if let Ok((address, grpc, memcached, tls)) =
                receiver.recv_timeout(Duration::from_millis(50))
            {
                return Service {
                    child,
                    address,
                    grpc,
                    memcached,
                    tls,
                    stderr,
                    host,
                };
            }
            if let Some(status) = child.try_wait().unwrap() {
                panic!(
                    "snowmint serve exited with {status} before listening:\n{}",
                    std::fs::read_to_string(&stderr).unwrap_or_default()
                );
            }
            deadline.check_with(|| std::fs::read_to_string(&stderr).unwrap_or_default());
        }
    }

    /// A new connection to the service (made from its host, when it runs
    /// on one).
    pub fn connect(&self) -> http::Connection {
        match &self.host {
            None => http::Connection::open(self.address).unwrap(),
            Some(host) => {
                http::Connection::from_stream(host.connect(self.address).unwrap()).unwrap()
            }
        }
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

    /// The file its standard error goes to (it stays after the process
    /// ends, until HOME is removed).
    pub fn log_path(&self) -> &Path {
        &self.stderr
    }

    /// Its process id.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// How it exited, if it has (without waiting).
    pub fn exited(&mut self) -> Option<ExitStatus> {
        self.child
            .try_wait()
            .expect("cannot ask whether snowmint serve exited")
    }

    /// SIGSTOP: the process stays, with its sockets open, but answers
    /// nothing until [`Service::resume`].
    pub fn pause(&self) {
        self.signal("STOP");
    }

    /// SIGCONT after [`Service::pause`].
    pub fn resume(&self) {
        self.signal("CONT");
    }

    fn signal(&self, name: &str) {
        // The shell's built-in `kill`: no procps needed, and no unsafe code.
        let sent = Command::new("sh")
            .args(["-c", &format!("kill -{name} {}", self.child.id())])
            .status()
            .unwrap();
        assert!(sent.success(), "kill -{name} {} failed", self.child.id());
    }

    /// SIGKILL, and reap.
    pub fn kill(mut self) {
        self.child.kill().unwrap();
        child_exit(&mut self.child, "snowmint serve", EXIT_LIMIT);
    }

    /// SIGTERM, then wait for the exit.
    pub fn terminate(mut self) -> (ExitStatus, String) {
        // The shell's built-in `kill`: no procps needed, and no unsafe code.
        let sent = Command::new("sh")
            .args(["-c", &format!("kill -TERM {}", self.child.id())])
            .status()
            .unwrap();
        assert!(sent.success());
        let status = child_exit(&mut self.child, "snowmint serve", EXIT_LIMIT);
        (status, self.log())
    }
}

impl Drop for Service {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Runs `binary` to its end (for starts that must fail): exit status,
/// standard output, standard error. Fails the test if it is still running
/// after a minute (a start that should have failed did not), killing it.
pub fn run_to_end(
    binary: &str,
    home: &Path,
    args: &[&str],
    env: &[(&str, &str)],
) -> (ExitStatus, String, String) {
    let mut all = vec!["--listen", "127.0.0.1:0"];
    all.extend_from_slice(args);
    let mut child = command(binary, home, &all, env)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("running the snowmint binary");
    let stdout = read_all(child.stdout.take().unwrap());
    let stderr = read_all(child.stderr.take().unwrap());
    // Killed if the wait gives up, so that the panic leaves no process.
    let mut guard = KillOnDrop(child);
    let status = child_exit(&mut guard.0, "snowmint serve", EXIT_LIMIT);
    (
        status,
        stdout.join().expect("reading standard output"),
        stderr.join().expect("reading standard error"),
    )
}

/// A child process killed (and reaped) when dropped.
struct KillOnDrop(Child);

impl Drop for KillOnDrop {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Reads `pipe` to its end on a thread of its own, so that a child that
/// fills one pipe cannot block on it while the test waits on the other.
fn read_all(mut pipe: impl std::io::Read + Send + 'static) -> std::thread::JoinHandle<String> {
    std::thread::spawn(move || {
        let mut bytes = Vec::new();
        let _ = pipe.read_to_end(&mut bytes);
        String::from_utf8_lossy(&bytes).into_owned()
    })
}

/// The timestamp (Unix ms) of a Twitter-layout ID, by the formula in
/// the README (`(unix_ms - epoch) << 22 | ...`).
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
