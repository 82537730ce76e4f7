//! A real PostgreSQL server (Debian's postgresql-15) for one test.
//!
//! `initdb` and `postgres` refuse to run as root, so when the test runs
//! as root the server runs as the `postgres` user that Debian's package
//! creates; its directory is handed over to that user. The server listens
//! on a free 127.0.0.1 port and on a socket in its own directory (never
//! the system's), and takes a password over TCP (SCRAM) from the one
//! superuser it is made with, [`ADMIN_USER`].
//!
//! With the feature `postgres`, the server is also a fleet coordinator
//! (`CoordinatorServer`), for the scenarios every backend runs.
//!
//! # Examples
//!
//! ```no_run
//! # async fn example() {
//! use snowmint_test_support::servers::postgres::PostgresServer;
//!
//! let server = PostgresServer::builder()
//!     .setting("shared_preload_libraries", "snowmint")
//!     .start()
//!     .await;
//! let admin = server.admin().await;
//! let row = admin.query_one("SELECT 1 + 1", &[]).await.unwrap();
//! assert_eq!(row.get::<_, i32>(0), 2);
//! # }
//! ```

use std::fs;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use tokio_postgres::{Client, NoTls};

use super::Site;
use super::process::{Owner, ServerProcess};
use crate::net::free_port;
use crate::temp::temp_dir;
use crate::wait::within;

pub(crate) const INSTALL: &str =
    "apt-get install postgresql-15 (scripts/test installs it), or set SNOWMINT_PG_BINDIR";

/// The superuser every test server is made with.
pub const ADMIN_USER: &str = "snowmint_admin";

/// The user the server runs as when the test runs as root.
const SYSTEM_USER: &str = "postgres";

/// How long a connection of the test's own may take.
const CONNECT_LIMIT: Duration = Duration::from_secs(20);

/// What a test asks of a server before it starts: settings given as
/// `postgres -c NAME=VALUE`.
#[derive(Debug, Default)]
pub struct Builder {
    settings: Vec<(String, String)>,
    env: Vec<(String, String)>,
    site: Site,
}

/// PostgreSQL's port, on a host.
pub const PORT: u16 = 5432;

impl Builder {
    /// Runs the server on `host` of a partition network, on [`PORT`] at
    /// the host's address, taking the superuser's password from every
    /// host of the network; the test connects through a forward
    /// ([`PostgresServer::admin_url`] names it), nodes on other hosts at
    /// the server's own address.
    pub fn on(mut self, host: &crate::partition::Host) -> Builder {
        self.site = Site::Host(host.clone());
        self
    }

    /// Sets `name` to `value` on the server's command line (such as
    /// `shared_preload_libraries`, or a custom `snowmint.machine`). A
    /// setting given twice keeps the last value.
    pub fn setting(mut self, name: &str, value: &str) -> Builder {
        self.settings.retain(|(known, _)| known != name);
        self.settings.push((name.to_owned(), value.to_owned()));
        self
    }

    /// Adds `key=value` to the server's environment (such as `LD_PRELOAD`
    /// and `FAKETIME` for libfaketime), from its first start on.
    pub fn env(mut self, key: &str, value: &str) -> Builder {
        self.env.push((key.to_owned(), value.to_owned()));
        self
    }

    /// Makes the cluster (`initdb`), starts the server and waits until the
    /// superuser can run a query. Panics, saying how to install
    /// PostgreSQL, when it is missing, and with the server's log when it
    /// does not start.
    pub async fn start(self) -> PostgresServer {
        let server = self.spawn();
        server.wait_ready().await;
        server
    }

    /// Makes the cluster and runs a server that must refuse to start (a
    /// setting it rejects at start): returns the end of its log once it
    /// has exited. Panics if it serves clients instead, or is still
    /// running after a minute.
    pub async fn start_failure(self) -> String {
        let server = self.spawn();
        let deadline = tokio::time::Instant::now() + Duration::from_secs(60);
        while server.process.is_running() {
            if let Ok(client) = connect(&server.admin_url()).await
                && client.simple_query("SELECT 1").await.is_ok()
            {
                panic!(
                    "the PostgreSQL server started, although it should have refused to; its log ends with:\n{}",
                    server.log_tail()
                );
            }
            assert!(
                tokio::time::Instant::now() < deadline,
                "the PostgreSQL server neither started nor exited within a minute; its log ends with:\n{}",
                server.log_tail()
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        server.log_tail()
    }

    /// Makes the cluster and runs the server, without waiting for it.
    fn spawn(self) -> PostgresServer {
        let bindir = bindir();
        let owner = owner();
        let dir = temp_dir("postgres");
        let password = format!("test-{}", free_port());
        let data = dir.path().join("data");
        let socket_dir = dir.path().join("socket");
        fs::create_dir(&socket_dir).expect("cannot create the socket directory");
        let password_file = dir.path().join("password");
        fs::write(&password_file, &password).expect("cannot write the password file");
        if let Some(owner) = owner {
            for path in [dir.path(), &socket_dir, &password_file] {
                std::os::unix::fs::chown(path, Some(owner.uid), Some(owner.gid)).unwrap_or_else(
                    |err| panic!("cannot hand {} to postgres: {err}", path.display()),
                );
            }
        }
        initdb(&bindir, &data, &password_file, dir.path(), owner);
        if let Site::Host(_) = self.site {
            // initdb lets in loopback only; the network's hosts log in too
            // (and the test's forward, which connects from the host).
            let prefix = crate::partition::SUBNET_PREFIX;
            let line = format!(
                "host all all {}.{}.{}.0/24 scram-sha-256\n",
                prefix[0], prefix[1], prefix[2]
            );
            let hba = data.join("pg_hba.conf");
            let mut text = fs::read_to_string(&hba).expect("cannot read pg_hba.conf");
            text.push_str(&line);
            fs::write(&hba, text).expect("cannot write pg_hba.conf");
        }
        self.run(dir, password)
    }

    /// Makes a standby of `primary` (`pg_basebackup -R`: a copy of its
    /// data directory that streams from it), starts it with this
    /// builder's settings and waits until it answers (read-only until
    /// `SELECT pg_promote()`). Its superuser and password are the
    /// primary's.
    pub async fn start_standby_of(self, primary: &PostgresServer) -> PostgresServer {
        let bindir = bindir();
        let owner = owner();
        let dir = temp_dir("postgres-standby");
        let socket_dir = dir.path().join("socket");
        fs::create_dir(&socket_dir).expect("cannot create the socket directory");
        if let Some(owner) = owner {
            for path in [dir.path(), &socket_dir] {
                std::os::unix::fs::chown(path, Some(owner.uid), Some(owner.gid)).unwrap_or_else(
                    |err| panic!("cannot hand {} to postgres: {err}", path.display()),
                );
            }
        }
        let mut command = Command::new(bindir.join("pg_basebackup"));
        command
            .args(["-h", "127.0.0.1", "-p", &primary.port().to_string()])
            .args(["-U", ADMIN_USER, "-R", "-X", "stream", "--no-sync", "-D"])
            .arg(dir.path().join("data"))
            .env("PGPASSWORD", primary.password())
            .current_dir(dir.path());
        if let Some(owner) = owner {
            use std::os::unix::process::CommandExt;
            command.uid(owner.uid).gid(owner.gid);
        }
        let output = command
            .output()
            .unwrap_or_else(|err| panic!("cannot run pg_basebackup ({err}); {INSTALL}"));
        assert!(
            output.status.success(),
            "pg_basebackup failed ({}):\n{}{}",
            output.status,
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        );
        let server = self.run(dir, primary.password().to_owned());
        server.wait_ready().await;
        server
    }

    /// Runs the server of the cluster in `dir`/data, without waiting for
    /// it.
    fn run(self, dir: crate::temp::TempDir, password: String) -> PostgresServer {
        let bindir = bindir();
        let owner = owner();
        let data = dir.path().join("data");
        let socket_dir = dir.path().join("socket");
        let port = self.site.port(PORT, free_port);
        let mut args: Vec<String> = [
            "-D",
            &data.display().to_string(),
            "-p",
            &port.to_string(),
            "-k",
            &socket_dir.display().to_string(),
            "-c",
            &format!("listen_addresses={}", self.site.ip()),
            // A crash here is a killed process, not a lost machine: the
            // kernel keeps what was written, so flushing buys nothing and
            // costs the tests time.
            "-c",
            "fsync=off",
        ]
        .map(str::to_owned)
        .to_vec();
        for (name, value) in &self.settings {
            args.push("-c".to_owned());
            args.push(format!("{name}={value}"));
        }
        let postgres = bindir.join("postgres").display().to_string();
        let process = ServerProcess::spawn_at(
            &self.site,
            "PostgreSQL",
            &postgres,
            &args,
            &self.env,
            owner,
            dir,
            INSTALL,
            port,
        );
        PostgresServer {
            process,
            password,
            socket_dir,
            data,
        }
    }
}

/// A PostgreSQL server on a loopback port, killed (with every process of
/// it) when dropped.
pub struct PostgresServer {
    process: ServerProcess,
    password: String,
    socket_dir: PathBuf,
    data: PathBuf,
}

impl PostgresServer {
    /// A server with no settings of the test's: see [`Builder`].
    pub fn builder() -> Builder {
        Builder::default()
    }

    /// Its TCP port on 127.0.0.1.
    pub fn port(&self) -> u16 {
        self.process.addr().port()
    }

    /// The superuser's password.
    pub fn password(&self) -> &str {
        &self.password
    }

    /// A libpq URL for the superuser and database `postgres`, password
    /// included.
    pub fn admin_url(&self) -> String {
        self.login_url(ADMIN_USER, &self.password, "postgres")
    }

    /// A libpq URL that logs in as `user` with `password` (empty: none) to
    /// `database` on this server.
    pub fn login_url(&self, user: &str, password: &str, database: &str) -> String {
        let secret = if password.is_empty() {
            String::new()
        } else {
            format!(":{password}")
        };
        format!(
            "postgres://{user}{secret}@127.0.0.1:{}/{database}",
            self.port()
        )
    }

    /// A connection of the superuser's to database `postgres`; its
    /// connection task runs on the current runtime.
    pub async fn admin(&self) -> Client {
        let what = "the test's own PostgreSQL connection";
        within(what, CONNECT_LIMIT, connect(&self.admin_url()))
            .await
            .unwrap_or_else(|err| {
                panic!(
                    "cannot connect to the test PostgreSQL ({err}); its log ends with:\n{}",
                    self.log_tail()
                )
            })
    }

    /// The directory holding the server's socket (`host=` for libpq).
    pub fn socket_dir(&self) -> &Path {
        &self.socket_dir
    }

    /// The cluster's data directory.
    pub fn data_dir(&self) -> &Path {
        &self.data
    }

    /// Kills every process of the server at once (SIGKILL), as a crash
    /// would; the data stays for [`restart`](Self::restart).
    pub fn kill(&self) {
        self.process.kill();
    }

    /// Freezes every process of the server (SIGSTOP): the postmaster and
    /// the backends serving open connections.
    pub fn pause(&self) {
        self.process.pause();
    }

    /// Lets a paused server run again (SIGCONT).
    pub fn resume(&self) {
        self.process.resume();
    }

    /// Stops the server cleanly (a fast shutdown: SIGINT to the
    /// postmaster) and waits until it has exited.
    pub fn stop(&self) {
        self.process.stop("INT");
    }

    /// Sets `key` to `value` in the environment of the next
    /// [`restart`](Self::restart).
    pub fn set_env(&self, key: &str, value: &str) {
        self.process.set_env(key, value);
    }

    /// Removes `key` from the environment of the next restart.
    pub fn remove_env(&self, key: &str) {
        self.process.remove_env(key);
    }

    /// Starts a stopped or killed server again on the same data, port and
    /// settings, and waits until it answers.
    pub async fn restart(&self) {
        self.process.restart();
        self.wait_ready().await;
    }

    /// The last lines of the server's log.
    pub fn log_tail(&self) -> String {
        self.process.log_tail()
    }

    /// The server's process.
    pub fn process(&self) -> &ServerProcess {
        &self.process
    }

    async fn wait_ready(&self) {
        let url = self.admin_url();
        self.process
            .wait_ready(|_| {
                let url = url.clone();
                async move {
                    match connect(&url).await {
                        Ok(client) => client.simple_query("SELECT 1").await.is_ok(),
                        Err(_) => false,
                    }
                }
            })
            .await;
    }
}

/// Connects to `url` without TLS; the connection runs on a task of its own.
async fn connect(url: &str) -> Result<Client, tokio_postgres::Error> {
    let (client, connection) = tokio_postgres::connect(url, NoTls).await?;
    tokio::spawn(async move {
        // Ends when the client is dropped or the server goes away.
        let _ = connection.await;
    });
    Ok(client)
}

/// The directory of PostgreSQL's programs: `SNOWMINT_PG_BINDIR`, else what
/// `pg_config --bindir` says, else the newest `/usr/lib/postgresql/N/bin`.
/// Panics, saying how to install PostgreSQL, when none holds `initdb`.
pub fn bindir() -> PathBuf {
    let from_env = std::env::var_os("SNOWMINT_PG_BINDIR").map(PathBuf::from);
    let from_pg_config = || {
        let output = Command::new("pg_config").arg("--bindir").output().ok()?;
        output
            .status
            .success()
            .then(|| PathBuf::from(String::from_utf8_lossy(&output.stdout).trim()))
    };
    let from_debian = || {
        let mut versions: Vec<(u32, PathBuf)> = fs::read_dir("/usr/lib/postgresql")
            .ok()?
            .flatten()
            .filter_map(|entry| {
                let version = entry.file_name().to_str()?.parse().ok()?;
                Some((version, entry.path().join("bin")))
            })
            .collect();
        versions.sort();
        versions.pop().map(|(_, bin)| bin)
    };
    let candidates = [from_env, from_pg_config(), from_debian()];
    candidates
        .into_iter()
        .flatten()
        .find(|dir| dir.join("initdb").exists())
        .unwrap_or_else(|| panic!("PostgreSQL is not installed (no initdb found); {INSTALL}"))
}

/// Hands `path` to the user the server runs as (when the test runs as
/// root), so that the server can read a file a test made for it, such as
/// a TLS key (which PostgreSQL wants owned by its user, mode 0600).
pub fn give_to_server(path: &Path) {
    if let Some(owner) = owner() {
        std::os::unix::fs::chown(path, Some(owner.uid), Some(owner.gid))
            .unwrap_or_else(|err| panic!("cannot hand {} to postgres: {err}", path.display()));
    }
}

/// Who the server runs as: nobody else when the test is not root (the
/// owner of `/proc/self` is the effective user), else Debian's `postgres`.
fn owner() -> Option<Owner> {
    let me = fs::metadata("/proc/self")
        .map(|meta| meta.uid())
        .unwrap_or(0);
    if me != 0 {
        return None;
    }
    let passwd = fs::read_to_string("/etc/passwd").unwrap_or_default();
    let entry = passwd
        .lines()
        .map(|line| line.split(':').collect::<Vec<_>>())
        .find(|fields| fields.first() == Some(&SYSTEM_USER) && fields.len() > 3);
    let Some(fields) = entry else {
        panic!(
            "the tests run as root, and PostgreSQL refuses root: they run it as the user \
             {SYSTEM_USER:?}, which does not exist; {INSTALL} (it creates that user)"
        );
    };
    let id = |field: &str| {
        field
            .parse()
            .unwrap_or_else(|_| panic!("bad id {field:?} for {SYSTEM_USER} in /etc/passwd"))
    };
    Some(Owner {
        uid: id(fields[2]),
        gid: id(fields[3]),
    })
}

/// Makes a cluster in `data` whose superuser is [`ADMIN_USER`] with the
/// password in `password_file`: trusted on the socket, SCRAM over TCP.
fn initdb(bindir: &Path, data: &Path, password_file: &Path, cwd: &Path, owner: Option<Owner>) {
    use std::os::unix::process::CommandExt;

    let mut command = Command::new(bindir.join("initdb"));
    command
        .arg("-D")
        .arg(data)
        .args([
            "-U",
            ADMIN_USER,
            "--auth-local=trust",
            "--auth-host=scram-sha-256",
        ])
        .arg(format!("--pwfile={}", password_file.display()))
        .args(["--encoding=UTF8", "--no-locale", "--no-sync"])
        .current_dir(cwd);
    if let Some(owner) = owner {
        command.uid(owner.uid).gid(owner.gid);
    }
    let output = command
        .output()
        .unwrap_or_else(|err| panic!("cannot run initdb ({err}); {INSTALL}"));
    assert!(
        output.status.success(),
        "initdb failed ({}):\n{}{}",
        output.status,
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
}

#[cfg(feature = "postgres")]
mod coordinator {
    use std::collections::BTreeMap;
    use std::net::SocketAddr;

    use snowmint_fleet::{CoordinatorUrl, PostgresBackend};
    use tokio_postgres::error::SqlState;

    use super::{ADMIN_USER, PostgresServer};
    use crate::servers::CoordinatorServer;
    use crate::servers::process::ServerProcess;

    /// Enough connections for a claim storm of 1,024 nodes, each with its
    /// one connection, and the test's own.
    const MAX_CONNECTIONS: &str = "1100";

    /// The server a fleet test coordinates with.
    fn coordinator_builder() -> super::Builder {
        PostgresServer::builder()
            .setting("max_connections", MAX_CONNECTIONS)
            // What the claim-storm bench counts the nodes' work with.
            .setting("shared_preload_libraries", "pg_stat_statements")
    }

    impl PostgresServer {
        /// A coordinator on `host` of a partition network (see
        /// [`Builder::on`](super::Builder::on)).
        pub async fn start_on(host: &crate::partition::Host) -> PostgresServer {
            coordinator_builder().on(host).start().await
        }

        /// Runs `sql` with `params` as the superuser, or says why it
        /// failed; a missing table (no node has created it yet) reads as
        /// no rows.
        async fn query(
            &self,
            sql: &str,
            params: &[&(dyn tokio_postgres::types::ToSql + Sync)],
        ) -> Vec<tokio_postgres::Row> {
            match self.admin().await.query(sql, params).await {
                Ok(rows) => rows,
                Err(err) if err.code() == Some(&SqlState::UNDEFINED_TABLE) => Vec::new(),
                Err(err) => panic!("{sql}: {err}"),
            }
        }
    }

    /// As a fleet coordinator, the nodes log in as the superuser, and the
    /// tables live in the default schema, `snowmint`.
    impl CoordinatorServer for PostgresServer {
        type Backend = PostgresBackend;

        const NAME: &'static str = "PostgreSQL";
        const SESSION_KIND: &'static str = "session";

        async fn start() -> PostgresServer {
            coordinator_builder().start().await
        }

        fn backend(&self, addr: SocketAddr) -> PostgresBackend {
            match self.url_at(addr).parse::<CoordinatorUrl>() {
                Ok(CoordinatorUrl::Postgres(url)) => PostgresBackend::new(*url),
                other => panic!("not a PostgreSQL URL: {other:?}"),
            }
        }

        /// The superuser's URL at `addr`, password included.
        fn url_at(&self, addr: SocketAddr) -> String {
            format!(
                "postgres://{ADMIN_USER}:{}@{addr}/postgres",
                self.password()
            )
        }

        fn shown_url(&self) -> String {
            self.url().replace(self.password(), "***")
        }

        async fn slot_holders(&self, fleet: &str) -> BTreeMap<u64, String> {
            let rows = self
                .query(
                    "SELECT slot, holder FROM snowmint.slots \
                     WHERE fleet = $1 AND expires_at >= now()",
                    &[&fleet],
                )
                .await;
            rows.iter()
                .map(|row| {
                    let slot: i64 = row.get(0);
                    (slot.unsigned_abs(), row.get(1))
                })
                .collect()
        }

        async fn stored_mark(&self, fleet: &str, slot: u64) -> Option<i64> {
            let slot = i64::try_from(slot).unwrap();
            let rows = self
                .query(
                    "SELECT mark_ms FROM snowmint.marks WHERE fleet = $1 AND slot = $2",
                    &[&fleet, &slot],
                )
                .await;
            rows.first().map(|row| row.get(0))
        }

        async fn set_mark(&self, fleet: &str, slot: u64, mark_ms: i64) {
            let slot = i64::try_from(slot).unwrap();
            self.query(
                "INSERT INTO snowmint.marks AS m (fleet, slot, mark_ms, version) \
                 VALUES ($1, $2, $3, 1) ON CONFLICT (fleet, slot) \
                 DO UPDATE SET mark_ms = excluded.mark_ms, version = m.version + 1",
                &[&fleet, &slot, &mark_ms],
            )
            .await;
        }

        async fn delete_slot(&self, fleet: &str, slot: u64) {
            let slot = i64::try_from(slot).unwrap();
            let deleted = self
                .admin()
                .await
                .execute(
                    "DELETE FROM snowmint.slots WHERE fleet = $1 AND slot = $2",
                    &[&fleet, &slot],
                )
                .await
                .expect("cannot delete the slot row");
            assert_eq!(deleted, 1, "no slot row to delete");
        }

        fn process(&self) -> &ServerProcess {
            &self.process
        }
    }
}
