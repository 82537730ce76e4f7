//! The process of a coordination server started for one test.

use std::fs;
use std::future::Future;
use std::net::SocketAddr;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::Mutex;
use std::time::Duration;

use crate::temp::TempDir;
use crate::wait::eventually;

/// How long a server may take to start serving clients.
const START_LIMIT: Duration = Duration::from_secs(60);

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
        eventually(&what, START_LIMIT, || async {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::temp::temp_dir;

    /// The message a panic carries.
    fn message(panic: Box<dyn std::any::Any + Send>) -> String {
        match panic.downcast::<String>() {
            Ok(text) => *text,
            Err(panic) => panic.downcast_ref::<&str>().unwrap_or(&"").to_string(),
        }
    }

    /// A server that is not installed fails the test and says how to
    /// install it.
    #[tokio::test]
    async fn a_missing_server_fails_with_how_to_install_it() {
        let start = async {
            let dir = temp_dir("missing");
            let install = "apt-get install etcd-server";
            ServerProcess::start(
                "etcd",
                "/nonexistent/etcd",
                &[],
                dir,
                install,
                1,
                |_| async { true },
            )
            .await
        };
        let Err(failure) = tokio::spawn(start).await else {
            panic!("a missing program started");
        };
        let message = message(failure.into_panic());
        assert!(
            message.starts_with("cannot run /nonexistent/etcd for etcd (")
                && message.ends_with("); install it with: apt-get install etcd-server"),
            "{message}"
        );
    }

    /// A server that exits while starting fails the test with its log.
    #[tokio::test]
    async fn a_server_that_exits_fails_with_its_log() {
        let start = async {
            let args = ["-c".to_owned(), "echo no data dir; exit 1".to_owned()];
            let dir = temp_dir("exits");
            ServerProcess::start("demo", "sh", &args, dir, "", 1, |_| async { false }).await
        };
        let Err(failure) = tokio::spawn(start).await else {
            panic!("a server that exits started");
        };
        let message = message(failure.into_panic());
        assert!(
            message.starts_with("demo exited (exit status: 1)"),
            "{message}"
        );
        assert!(
            message.ends_with("its log ends with:\nno data dir"),
            "{message}"
        );
    }

    /// Dropping the server kills its process.
    #[tokio::test]
    async fn dropping_the_server_kills_it() {
        let args = ["600".to_owned()];
        let server =
            ServerProcess::start("demo", "sleep", &args, temp_dir("drop"), "", 1, |_| async {
                true
            })
            .await;
        let proc_dir = Path::new("/proc").join(server.pid().to_string());
        assert!(proc_dir.exists(), "the server is not running");
        drop(server);
        assert!(!proc_dir.exists(), "the server outlived its guard");
    }
}
