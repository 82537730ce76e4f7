//! The process of a coordination server started for one test.

use std::fs;
use std::future::Future;
use std::net::SocketAddr;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::Mutex;
use std::time::Duration;

use crate::temp::TempDir;
use crate::wait::{eventually, wait_until};

/// How long a server may take to start serving clients.
const START_LIMIT: Duration = Duration::from_secs(60);

/// A server process, killed when dropped (also when the test panics). Its
/// output goes to `server.log` in its directory; a restart appends to it.
///
/// A member of a replicated server can be killed and started again with
/// the same arguments, directory and ports ([`kill`](Self::kill),
/// [`restart`](Self::restart)), and frozen and thawed
/// ([`pause`](Self::pause), [`resume`](Self::resume)).
pub struct ServerProcess {
    /// The running process; `None` once killed.
    child: Mutex<Option<Child>>,
    /// Its name in messages.
    name: String,
    /// What runs, kept for a restart.
    program: String,
    args: Vec<String>,
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
        name: &str,
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
        let process = ServerProcess::spawn(name, program, args, dir, install, port);
        process.wait_ready(ready).await;
        process
    }

    /// Runs `program` with `args` in `dir` without waiting for it to serve
    /// (the members of a replicated server serve only once a quorum runs,
    /// so they are all spawned first, then waited for).
    pub fn spawn(
        name: &str,
        program: &str,
        args: &[String],
        dir: TempDir,
        install: &str,
        port: u16,
    ) -> ServerProcess {
        fs::File::create(dir.path().join("server.log")).expect("cannot create the server log");
        let child = run(dir.path(), program, args).unwrap_or_else(|err| {
            panic!("cannot run {program} for {name} ({err}); install it with: {install}")
        });
        ServerProcess {
            child: Mutex::new(Some(child)),
            name: name.to_owned(),
            program: program.to_owned(),
            args: args.to_vec(),
            port,
            dir,
        }
    }

    /// Waits until `ready(port)` says that the server serves clients;
    /// panics, with the end of its log, if it exits or does not serve
    /// within a minute.
    pub async fn wait_ready<F, Fut>(&self, ready: F)
    where
        F: Fn(u16) -> Fut,
        Fut: Future<Output = bool>,
    {
        let what = format!("{} to serve clients on port {}", self.name, self.port);
        eventually(&what, START_LIMIT, || async {
            self.assert_running();
            // A server that is still starting may accept and then say
            // nothing: each probe gets a second.
            let probe = tokio::time::timeout(Duration::from_secs(1), ready(self.port));
            probe.await.unwrap_or(false).then_some(())
        })
        .await;
    }

    /// Its name in messages.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Where clients reach it.
    pub fn addr(&self) -> SocketAddr {
        SocketAddr::from(([127, 0, 0, 1], self.port))
    }

    /// The process id; panics if the process was killed.
    pub fn pid(&self) -> u32 {
        match self.child.lock().unwrap().as_ref() {
            Some(child) => child.id(),
            None => panic!("{} was killed and not restarted", self.name),
        }
    }

    /// Whether the process runs (it may be paused): not killed, not exited.
    pub fn is_running(&self) -> bool {
        let mut child = self.child.lock().unwrap();
        child
            .as_mut()
            .is_some_and(|child| matches!(child.try_wait(), Ok(None)))
    }

    /// Freezes the server (SIGSTOP): connections stay open, nothing is
    /// answered, nothing expires. Returns once every thread has stopped.
    pub fn pause(&self) {
        self.signal("STOP");
        let what = format!("every thread of {} to stop", self.name);
        wait_until(&what, START_LIMIT, || self.stopped().then_some(()));
    }

    /// Lets a paused server run again (SIGCONT).
    pub fn resume(&self) {
        self.signal("CONT");
    }

    /// Whether every thread of the process is stopped (state `T` in
    /// `/proc/PID/task/*/stat`).
    fn stopped(&self) -> bool {
        let tasks = Path::new("/proc").join(self.pid().to_string()).join("task");
        let Ok(tasks) = fs::read_dir(tasks) else {
            return false;
        };
        tasks.flatten().all(|task| {
            let stat = fs::read_to_string(task.path().join("stat")).unwrap_or_default();
            // "PID (COMMAND) STATE ...": the command may hold spaces.
            let state = stat
                .rsplit_once(") ")
                .and_then(|(_, rest)| rest.chars().next());
            matches!(state, Some('T' | 't'))
        })
    }

    /// Kills the server at once (SIGKILL, as a crash would) and reaps it;
    /// its directory stays for a [`restart`](Self::restart).
    pub fn kill(&self) {
        let mut child = self.child.lock().unwrap();
        let Some(mut running) = child.take() else {
            panic!("{} was already killed", self.name);
        };
        // A paused process dies of SIGKILL as well.
        let _ = running.kill();
        running
            .wait()
            .unwrap_or_else(|err| panic!("cannot reap {}: {err}", self.name));
    }

    /// Starts a killed server again: the same program, arguments,
    /// directory and ports. It does not wait for the server to serve (see
    /// [`wait_ready`](Self::wait_ready)).
    pub fn restart(&self) {
        let mut child = self.child.lock().unwrap();
        assert!(child.is_none(), "{} still runs: kill it first", self.name);
        let log = self.dir.path().join("server.log");
        let note = format!("--- {} restarted by the test ---\n", self.name);
        let _ = fs::OpenOptions::new()
            .append(true)
            .open(&log)
            .and_then(|mut file| std::io::Write::write_all(&mut file, note.as_bytes()));
        let started = run(self.dir.path(), &self.program, &self.args)
            .unwrap_or_else(|err| panic!("cannot restart {} ({err})", self.name));
        *child = Some(started);
    }

    fn signal(&self, signal: &str) {
        let pid = self.pid();
        let status = Command::new("kill")
            .arg(format!("-{signal}"))
            .arg(pid.to_string())
            .status()
            .expect("cannot run kill");
        assert!(status.success(), "kill -{signal} {} failed", self.name);
    }

    /// Panics, with the end of the server's log, if the process has exited
    /// (or was killed).
    pub fn assert_running(&self) {
        let mut child = self.child.lock().unwrap();
        let Some(running) = child.as_mut() else {
            panic!("{} was killed and not restarted", self.name);
        };
        if let Ok(Some(status)) = running.try_wait() {
            drop(child);
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

/// Runs `program` in `dir`, its output appended to `server.log` there.
fn run(dir: &Path, program: &str, args: &[String]) -> std::io::Result<Child> {
    let log = fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(dir.join("server.log"))?;
    Command::new(program)
        .args(args)
        .current_dir(dir)
        .stdin(Stdio::null())
        .stdout(log.try_clone()?)
        .stderr(log)
        .spawn()
}

impl Drop for ServerProcess {
    fn drop(&mut self) {
        let child = self.child.get_mut().unwrap_or_else(|e| e.into_inner());
        if let Some(child) = child.as_mut() {
            let _ = child.kill();
            let _ = child.wait();
        }
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
