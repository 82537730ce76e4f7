//! What a test needs from a coordination server, and the process that runs
//! one.

use std::collections::BTreeMap;
use std::fs;
use std::future::Future;
use std::net::{SocketAddr, TcpListener};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use snowmint_fleet::Backend;

use super::eventually;

/// A coordination server started for one test.
pub trait Cluster: Send + Sync + Sized + 'static {
    /// The backend that talks to it.
    type Backend: Backend;

    /// The service's name in messages.
    const NAME: &'static str;

    /// Starts a fresh server on free loopback ports and waits until it
    /// answers.
    fn start() -> impl Future<Output = Self> + Send;

    /// Where clients reach it.
    fn client_addr(&self) -> SocketAddr {
        self.process().addr()
    }

    /// A backend that reaches the server at `addr` (the server itself, or
    /// a proxy in front of it).
    fn backend(&self, addr: SocketAddr) -> Self::Backend;

    /// The slot keys of `fleet` as the server has them: slot -> holder.
    fn slot_holders(&self, fleet: &str) -> impl Future<Output = BTreeMap<u64, String>> + Send;

    /// The high-water mark of `slot` as the server has it.
    fn stored_mark(&self, fleet: &str, slot: u64) -> impl Future<Output = Option<i64>> + Send;

    /// Overwrites the high-water mark of `slot`, as another writer would.
    fn set_mark(&self, fleet: &str, slot: u64, mark_ms: i64) -> impl Future<Output = ()> + Send;

    /// Deletes the key of `slot`, as an operator would by hand.
    fn delete_slot(&self, fleet: &str, slot: u64) -> impl Future<Output = ()> + Send;

    /// The server's process.
    fn process(&self) -> &ServerProcess;
}

/// A free TCP port on 127.0.0.1 (free when asked; the server binds it
/// right after).
pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|listener| listener.local_addr())
        .expect("cannot bind a loopback port")
        .port()
}

/// A directory removed when dropped.
pub struct TempDir {
    path: PathBuf,
}

impl TempDir {
    /// A fresh, empty directory under the system's temp dir.
    pub fn new(label: &str) -> TempDir {
        static COUNT: AtomicU64 = AtomicU64::new(0);
        let path = std::env::temp_dir().join(format!(
            "snowmint-fleet-{label}-{}-{}",
            std::process::id(),
            COUNT.fetch_add(1, Ordering::Relaxed)
        ));
        let _ = fs::remove_dir_all(&path);
        fs::create_dir_all(&path).expect("cannot create a temp dir");
        TempDir { path }
    }

    /// Its path.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.path);
    }
}

/// A server process, killed when dropped. Its output goes to `server.log`
/// in its directory.
pub struct ServerProcess {
    child: Mutex<Child>,
    name: &'static str,
    /// The loopback port clients use.
    port: u16,
    // Declared last: dropped after the process is killed.
    dir: TempDir,
}

impl ServerProcess {
    /// Runs `program` with `args` in `dir` (`install` says how to get the
    /// program when it is missing), then waits until `ready(port)` says
    /// that it serves clients on `port`.
    pub async fn start<F, Fut>(
        name: &'static str,
        program: &str,
        args: &[String],
        dir: TempDir,
        install: &str,
        port: u16,
        ready: F,
    ) -> ServerProcess
    where
        F: Fn(u16) -> Fut,
        Fut: Future<Output = bool>,
    {
        let log =
            fs::File::create(dir.path().join("server.log")).expect("cannot create the server log");
        let child = Command::new(program)
            .args(args)
            .current_dir(dir.path())
            .stdin(Stdio::null())
            .stdout(log.try_clone().expect("cannot share the server log"))
            .stderr(log)
            .spawn()
            .unwrap_or_else(|err| {
                panic!("cannot run {program} for {name} ({err}); install it with: {install}")
            });
        let process = ServerProcess {
            child: Mutex::new(child),
            name,
            port,
            dir,
        };
        let what = format!("{name} to serve clients on port {port}");
        eventually(&what, Duration::from_secs(60), || async {
            process.assert_running();
            // A server that is still starting may accept and then say
            // nothing: each probe gets a second.
            let probe = tokio::time::timeout(Duration::from_secs(1), ready(port));
            probe.await.unwrap_or(false).then_some(())
        })
        .await;
        process
    }

    /// Where clients reach it.
    pub fn addr(&self) -> SocketAddr {
        SocketAddr::from(([127, 0, 0, 1], self.port))
    }

    /// The process id.
    pub fn pid(&self) -> u32 {
        self.child.lock().unwrap().id()
    }

    /// Freezes the server (SIGSTOP): connections stay open, nothing is
    /// answered, nothing expires.
    pub fn pause(&self) {
        self.signal("STOP");
    }

    /// Lets a paused server run again (SIGCONT).
    pub fn resume(&self) {
        self.signal("CONT");
    }

    fn signal(&self, signal: &str) {
        let status = Command::new("kill")
            .arg(format!("-{signal}"))
            .arg(self.pid().to_string())
            .status()
            .expect("cannot run kill");
        assert!(status.success(), "kill -{signal} {} failed", self.name);
    }

    /// Panics, with the end of the server's log, if the process has exited.
    pub fn assert_running(&self) {
        if let Ok(Some(status)) = self.child.lock().unwrap().try_wait() {
            panic!(
                "{} exited ({status}); its log ends with:\n{}",
                self.name,
                self.log_tail()
            );
        }
    }

    /// The last lines of the server's output.
    pub fn log_tail(&self) -> String {
        let text = fs::read_to_string(self.dir.path().join("server.log")).unwrap_or_default();
        let lines: Vec<&str> = text.lines().collect();
        lines[lines.len().saturating_sub(30)..].join("\n")
    }

    /// The server's directory.
    pub fn dir(&self) -> &Path {
        self.dir.path()
    }
}

impl Drop for ServerProcess {
    fn drop(&mut self) {
        let child = self.child.get_mut().unwrap_or_else(|e| e.into_inner());
        let _ = child.kill();
        let _ = child.wait();
    }
}
