//! The process of a server started for one test.
//!
//! Every signal a test sends (kill, pause, resume) goes to the server's
//! process and all its descendants: a server made of several processes,
//! such as PostgreSQL's postmaster and its backends (each in a session of
//! its own, so a process group would not hold them), crashes or freezes
//! as a whole, as it would on a failing machine.

use std::fs;
use std::future::Future;
use std::net::SocketAddr;
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::Mutex;
use std::time::Duration;

use super::Site;
use crate::partition::Forward;
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
    /// Variables added to its environment, also kept for a restart.
    env: Mutex<Vec<(String, String)>>,
    /// The user it runs as; `None` for the test's own.
    owner: Option<Owner>,
    /// Where it runs.
    site: Site,
    /// The port it serves clients on, at its site.
    served_port: u16,
    /// On a host: the test's way in (a loopback port of the test's that
    /// forwards to the served port).
    forward: Option<Forward>,
    // Declared last: dropped after the process is killed.
    dir: TempDir,
}

/// A user a server runs as, when it refuses to run as root (PostgreSQL).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Owner {
    /// Its user id.
    pub uid: u32,
    /// Its primary group id.
    pub gid: u32,
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
        ServerProcess::spawn_as(name, program, args, &[], None, dir, install, port)
    }

    /// [`spawn`](Self::spawn) with `env` added to the environment (kept for
    /// restarts), as `owner` (`None`: as the test's own user).
    #[allow(clippy::too_many_arguments)]
    pub fn spawn_as(
        name: &str,
        program: &str,
        args: &[String],
        env: &[(String, String)],
        owner: Option<Owner>,
        dir: TempDir,
        install: &str,
        port: u16,
    ) -> ServerProcess {
        let site = Site::Loopback;
        ServerProcess::spawn_at(&site, name, program, args, env, owner, dir, install, port)
    }

    /// [`spawn_as`](Self::spawn_as) at `site`: on a host, the program runs
    /// in the host's network namespace, serving clients on `port` there,
    /// and the test reaches it through a forward of its own
    /// ([`addr`](Self::addr)); the nodes on other hosts reach it at
    /// [`served_addr`](Self::served_addr).
    #[allow(clippy::too_many_arguments)]
    pub fn spawn_at(
        site: &Site,
        name: &str,
        program: &str,
        args: &[String],
        env: &[(String, String)],
        owner: Option<Owner>,
        dir: TempDir,
        install: &str,
        port: u16,
    ) -> ServerProcess {
        fs::File::create(dir.path().join("server.log")).expect("cannot create the server log");
        let child = run(site, dir.path(), program, args, env, owner).unwrap_or_else(|err| {
            panic!("cannot run {program} for {name} ({err}); install it with: {install}")
        });
        let forward = match site {
            Site::Loopback => None,
            Site::Host(host) => Some(host.forward(port)),
        };
        ServerProcess {
            child: Mutex::new(Some(child)),
            name: name.to_owned(),
            program: program.to_owned(),
            args: args.to_vec(),
            env: Mutex::new(env.to_vec()),
            owner,
            site: site.clone(),
            served_port: port,
            forward,
            dir,
        }
    }

    /// Sets `key` to `value` in the environment of the next
    /// [`restart`](Self::restart) (such as `LD_PRELOAD` for libfaketime).
    pub fn set_env(&self, key: &str, value: &str) {
        let mut env = self.env.lock().unwrap();
        env.retain(|(name, _)| name != key);
        env.push((key.to_owned(), value.to_owned()));
    }

    /// Removes `key` from the environment of the next restart.
    pub fn remove_env(&self, key: &str) {
        self.env.lock().unwrap().retain(|(name, _)| name != key);
    }

    /// Waits until `ready(port)` says that the server serves clients;
    /// panics, with the end of its log, if it exits or does not serve
    /// within a minute.
    pub async fn wait_ready<F, Fut>(&self, ready: F)
    where
        F: Fn(u16) -> Fut,
        Fut: Future<Output = bool>,
    {
        let port = self.addr().port();
        let what = format!("{} to serve clients on port {port}", self.name);
        eventually(&what, START_LIMIT, || async {
            self.assert_running();
            // A server that is still starting may accept and then say
            // nothing: each probe gets a second.
            let probe = tokio::time::timeout(Duration::from_secs(1), ready(port));
            probe.await.unwrap_or(false).then_some(())
        })
        .await;
    }

    /// Its name in messages.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Where the test reaches it: its loopback port, or, on a host, the
    /// test's forward to it.
    pub fn addr(&self) -> SocketAddr {
        match &self.forward {
            Some(forward) => forward.addr(),
            None => SocketAddr::from(([127, 0, 0, 1], self.served_port)),
        }
    }

    /// Where it serves clients at its site: the same as
    /// [`addr`](Self::addr) on loopback, the host's address on a host
    /// (what nodes on other hosts are given).
    pub fn served_addr(&self) -> SocketAddr {
        SocketAddr::new(self.site.ip(), self.served_port)
    }

    /// Where it runs.
    pub fn site(&self) -> &Site {
        &self.site
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

    /// Freezes the server (SIGSTOP to every process of it): connections
    /// stay open, nothing is answered, nothing expires. Returns once every
    /// thread has stopped.
    pub fn pause(&self) {
        self.signal_tree("STOP");
        let what = format!("every thread of {} to stop", self.name);
        wait_until(&what, START_LIMIT, || self.stopped().then_some(()));
    }

    /// Lets a paused server run again (SIGCONT to every process of it).
    pub fn resume(&self) {
        self.signal_tree("CONT");
    }

    /// Whether every thread of every process of the server is stopped
    /// (state `T` in `/proc/PID/task/*/stat`).
    fn stopped(&self) -> bool {
        let members = tree(self.pid());
        !members.is_empty()
            && members.iter().all(|pid| {
                let tasks = Path::new("/proc").join(pid.to_string()).join("task");
                let Ok(tasks) = fs::read_dir(tasks) else {
                    // Gone since it was listed.
                    return true;
                };
                tasks.flatten().all(|task| {
                    let stat = fs::read_to_string(task.path().join("stat")).unwrap_or_default();
                    matches!(stat_fields(&stat).first(), Some(&("T" | "t")))
                })
            })
    }

    /// Kills the server at once (SIGKILL to every process of it, as a
    /// crash of its machine would) and reaps it; its directory stays for a
    /// [`restart`](Self::restart).
    pub fn kill(&self) {
        let mut child = self.child.lock().unwrap();
        let Some(mut running) = child.take() else {
            panic!("{} was already killed", self.name);
        };
        // A paused process dies of SIGKILL as well.
        let members = kill_tree(&mut running);
        running
            .wait()
            .unwrap_or_else(|err| panic!("cannot reap {}: {err}", self.name));
        let what = format!("every process of {} to exit", self.name);
        wait_until(&what, START_LIMIT, || {
            members.iter().all(|pid| !alive(*pid)).then_some(())
        });
    }

    /// Asks the server to stop (`signal`, such as `INT` for PostgreSQL's
    /// fast shutdown, sent to its main process only) and waits until it
    /// has exited; its directory stays for a [`restart`](Self::restart).
    pub fn stop(&self, signal: &str) {
        self.signal(signal);
        let mut child = self.child.lock().unwrap();
        let Some(mut running) = child.take() else {
            panic!("{} was already killed", self.name);
        };
        let what = format!("{} to exit after SIG{signal}", self.name);
        let name = self.name.clone();
        wait_until(&what, START_LIMIT, || {
            running
                .try_wait()
                .unwrap_or_else(|err| panic!("cannot wait for {name}: {err}"))
        });
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
        let env = self.env.lock().unwrap().clone();
        let started = run(
            &self.site,
            self.dir.path(),
            &self.program,
            &self.args,
            &env,
            self.owner,
        )
        .unwrap_or_else(|err| panic!("cannot restart {} ({err})", self.name));
        *child = Some(started);
    }

    /// Sends `signal` to the main process.
    fn signal(&self, signal: &str) {
        send(signal, &self.pid().to_string(), &self.name);
    }

    /// Sends `signal` to every process of the server: its own first (so
    /// that a paused server forks no more), then its descendants.
    fn signal_tree(&self, signal: &str) {
        let pid = self.pid();
        send(signal, &pid.to_string(), &self.name);
        for member in tree(pid).into_iter().skip(1) {
            // A backend may have exited since it was listed.
            let _ = Command::new("kill")
                .args([&format!("-{signal}"), "--", &member.to_string()])
                .stderr(Stdio::null())
                .status();
        }
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

/// Runs `kill -SIGNAL TARGET`; fails the test if it cannot be sent.
fn send(signal: &str, target: &str, name: &str) {
    let status = Command::new("kill")
        .arg(format!("-{signal}"))
        .arg("--")
        .arg(target)
        .status()
        .expect("cannot run kill");
    assert!(status.success(), "kill -{signal} {name} failed");
}

/// SIGKILL to `child` and every descendant of it; returns the processes
/// it was sent to. The child is stopped first, so that it forks no more
/// while its descendants are listed.
fn kill_tree(child: &mut Child) -> Vec<u32> {
    let pid = child.id().to_string();
    let _ = Command::new("kill")
        .args(["-STOP", "--", &pid])
        .stderr(Stdio::null())
        .status();
    let members = tree(child.id());
    let mut command = Command::new("kill");
    command.args(["-KILL", "--"]);
    command.args(members.iter().map(u32::to_string));
    let _ = command.stderr(Stdio::null()).status();
    let _ = child.kill();
    members
}

/// The fields of a `/proc/PID/stat` line after the command, which may hold
/// spaces and parentheses: state, parent, process group, ...
fn stat_fields(stat: &str) -> Vec<&str> {
    stat.rsplit_once(") ")
        .map(|(_, rest)| rest.split(' ').collect())
        .unwrap_or_default()
}

/// Whether `pid` is a live process (a zombie is not).
fn alive(pid: u32) -> bool {
    let stat = fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    !matches!(stat_fields(&stat).first(), None | Some(&"Z"))
}

/// `root` and its live descendants, `root` first (empty if `root` is not
/// alive).
fn tree(root: u32) -> Vec<u32> {
    let Ok(entries) = fs::read_dir("/proc") else {
        return Vec::new();
    };
    // (pid, parent) of every live process.
    let processes: Vec<(u32, u32)> = entries
        .flatten()
        .filter_map(|entry| entry.file_name().to_str()?.parse::<u32>().ok())
        .filter_map(|pid| {
            let stat = fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
            let fields = stat_fields(&stat);
            if fields.first() == Some(&"Z") {
                return None;
            }
            Some((pid, fields.get(1)?.parse().ok()?))
        })
        .collect();
    if !processes.iter().any(|(pid, _)| *pid == root) {
        return Vec::new();
    }
    let mut members = vec![root];
    let mut next = 0;
    while next < members.len() {
        let parent = members[next];
        members.extend(
            processes
                .iter()
                .filter(|(_, of)| *of == parent)
                .map(|(pid, _)| *pid),
        );
        next += 1;
    }
    members
}

/// Runs `program` at `site` in `dir` as `owner`, with `env` added to its
/// environment and its output appended to `server.log` there.
fn run(
    site: &Site,
    dir: &Path,
    program: &str,
    args: &[String],
    env: &[(String, String)],
    owner: Option<Owner>,
) -> std::io::Result<Child> {
    let log = fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(dir.join("server.log"))?;
    if let Site::Host(_) = site {
        // `ip netns exec` runs anything: check the program here, so that
        // a missing one fails as it does on loopback.
        which(program)?;
    }
    let mut command = match (site, owner) {
        (Site::Loopback, _) => Command::new(program),
        (Site::Host(host), None) => host.command(program),
        (Site::Host(host), Some(owner)) => host.command_as(program, owner.uid, owner.gid),
    };
    command
        .args(args)
        .envs(env.iter().map(|(key, value)| (key, value)))
        .current_dir(dir)
        .stdin(Stdio::null())
        .stdout(log.try_clone()?)
        .stderr(log);
    if let (Site::Loopback, Some(owner)) = (site, owner) {
        command.uid(owner.uid).gid(owner.gid);
    }
    command.spawn()
}

/// Fails as a spawn would when `program` is neither a path to a file nor
/// found on PATH.
fn which(program: &str) -> std::io::Result<()> {
    let found = if program.contains('/') {
        Path::new(program).is_file()
    } else {
        std::env::var_os("PATH")
            .is_some_and(|path| std::env::split_paths(&path).any(|dir| dir.join(program).is_file()))
    };
    if found {
        Ok(())
    } else {
        Err(std::io::Error::new(
            std::io::ErrorKind::NotFound,
            "No such file or directory",
        ))
    }
}

impl Drop for ServerProcess {
    fn drop(&mut self) {
        let child = self.child.get_mut().unwrap_or_else(|e| e.into_inner());
        if let Some(child) = child.as_mut() {
            kill_tree(child);
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
