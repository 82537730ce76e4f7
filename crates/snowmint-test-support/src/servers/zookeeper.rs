//! A real ZooKeeper server (Debian's zookeeper package) for one test.

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::path::Path;
use std::time::Duration;

use snowmint_fleet::ZooKeeperBackend;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use zookeeper_client::{Client, Error};

use super::process::ServerProcess;
use super::{CoordinatorServer, Site};
use crate::net::free_port;
use crate::temp::temp_dir;
use crate::wait::within;

pub(crate) const INSTALL: &str = "apt-get install zookeeper (it brings Java)";
/// Debian's ZooKeeper jar; its manifest names the jars it needs.
const ZOOKEEPER_JAR: &str = "/usr/share/java/zookeeper.jar";
/// A logging backend for ZooKeeper's slf4j calls (Debian's libslf4j-java).
const SLF4J_SIMPLE_JAR: &str = "/usr/share/java/slf4j-simple.jar";
/// Netty's codecs, which ZooKeeper's Netty connection factory (the only
/// one that serves TLS) needs and Debian's zookeeper.jar leaves off its
/// class path (Debian's libnetty-java, a dependency of the package).
pub(crate) const NETTY_CODEC_JAR: &str = "/usr/share/java/netty-codec.jar";
/// ZooKeeper's tick: sessions may be as short as two ticks, and expire
/// within a tick of their timeout.
pub const TICK_MS: u64 = 200;

/// A standalone ZooKeeper server on a loopback port.
pub struct ZooKeeperServer {
    process: ServerProcess,
}

impl ZooKeeperServer {
    async fn client(&self) -> Client {
        connect(&[self.process.addr()]).await
    }
}

/// The test's own client of the ZooKeeper servers at `servers`.
pub(crate) async fn connect(servers: &[SocketAddr]) -> Client {
    let hosts: Vec<String> = servers.iter().map(SocketAddr::to_string).collect();
    let what = "the test's own ZooKeeper client to connect";
    within(
        what,
        Duration::from_secs(20),
        Client::connect(&hosts.join(",")),
    )
    .await
    .expect("cannot connect to the test ZooKeeper")
}

/// What the ZooKeeper server on `port` answers to `srvr`, if it answers.
pub(crate) async fn srvr(port: u16) -> Option<String> {
    let mut stream = TcpStream::connect(("127.0.0.1", port)).await.ok()?;
    let mut answer = String::new();
    stream.write_all(b"srvr").await.ok()?;
    stream.read_to_string(&mut answer).await.ok()?;
    Some(answer)
}

/// The mode in an answer to `srvr` (`standalone`, `leader`, `follower`);
/// none while the server is not serving requests.
pub(crate) fn mode(answer: &str) -> Option<&str> {
    answer
        .lines()
        .find_map(|line| line.strip_prefix("Mode: "))
        .map(str::trim)
}

async fn serving(port: u16) -> bool {
    srvr(port).await.as_deref().and_then(mode) == Some("standalone")
}

/// The classpath that runs ZooKeeper, checked to exist.
pub(crate) fn classpath() -> String {
    assert!(
        Path::new(ZOOKEEPER_JAR).exists(),
        "ZooKeeper is not installed ({ZOOKEEPER_JAR} is missing); install it with: {INSTALL}"
    );
    let mut classpath = ZOOKEEPER_JAR.to_owned();
    for jar in [SLF4J_SIMPLE_JAR, NETTY_CODEC_JAR] {
        if Path::new(jar).exists() {
            classpath = format!("{classpath}:{jar}");
        }
    }
    classpath
}

/// The Java arguments that run a ZooKeeper server from `config`: a small,
/// quickly started JVM.
pub(crate) fn java_args(config: &Path) -> Vec<String> {
    [
        "-Xmx256m",
        "-XX:+UseSerialGC",
        "-XX:TieredStopAtLevel=1",
        "-Dorg.slf4j.simpleLogger.defaultLogLevel=warn",
        "-cp",
        &classpath(),
        "org.apache.zookeeper.server.quorum.QuorumPeerMain",
        &config.display().to_string(),
    ]
    .map(String::from)
    .to_vec()
}

/// Starts a standalone ZooKeeper in a directory of its own, with the
/// lines of `extra` added to its configuration, and waits until it serves
/// on its (plain) client port.
pub(crate) async fn spawn(extra: &str) -> ServerProcess {
    spawn_at(&Site::Loopback, extra).await
}

/// ZooKeeper's client port, on a host.
pub const CLIENT_PORT: u16 = 2181;
/// ZooKeeper's quorum and election ports, on a host.
pub const QUORUM_PORTS: (u16, u16) = (2888, 3888);

/// [`spawn`] at `site`.
async fn spawn_at(site: &Site, extra: &str) -> ServerProcess {
    let dir = temp_dir("zookeeper");
    let client_port = site.port(CLIENT_PORT, free_port);
    let config = format!(
        "tickTime={TICK_MS}\n\
         dataDir={data}\n\
         clientPort={client_port}\n\
         clientPortAddress={ip}\n\
         admin.enableServer=false\n\
         4lw.commands.whitelist=srvr,mntr\n\
         maxClientCnxns=0\n\
         maxSessionTimeout=60000\n\
         {extra}",
        data = dir.path().join("data").display(),
        ip = site.ip(),
    );
    let config_path = dir.path().join("zoo.cfg");
    std::fs::write(&config_path, config).expect("cannot write zoo.cfg");
    let process = ServerProcess::spawn_at(
        site,
        "ZooKeeper",
        "java",
        &java_args(&config_path),
        &[],
        None,
        dir,
        INSTALL,
        client_port,
    );
    process.wait_ready(serving).await;
    process
}

impl ZooKeeperServer {
    /// A standalone ZooKeeper on `host` of a partition network, serving on
    /// [`CLIENT_PORT`] at the host's address; the test reads it through a
    /// forward ([`CoordinatorServer::client_addr`]), nodes on other hosts
    /// at [`CoordinatorServer::served_url`].
    pub async fn start_on(host: &crate::partition::Host) -> ZooKeeperServer {
        ZooKeeperServer {
            process: spawn_at(&Site::Host(host.clone()), "").await,
        }
    }
}

impl CoordinatorServer for ZooKeeperServer {
    type Backend = ZooKeeperBackend;

    const NAME: &'static str = "ZooKeeper";
    const SESSION_KIND: &'static str = "session";

    async fn start() -> ZooKeeperServer {
        ZooKeeperServer {
            process: spawn("").await,
        }
    }

    fn backend(&self, addr: SocketAddr) -> ZooKeeperBackend {
        ZooKeeperBackend::new(vec![addr.to_string()], None)
    }

    fn url_at(&self, addr: SocketAddr) -> String {
        format!("zk://{addr}")
    }

    async fn slot_holders(&self, fleet: &str) -> BTreeMap<u64, String> {
        slot_holders(&self.client().await, fleet).await
    }

    async fn stored_mark(&self, fleet: &str, slot: u64) -> Option<i64> {
        stored_mark(&self.client().await, fleet, slot).await
    }

    async fn set_mark(&self, fleet: &str, slot: u64, mark_ms: i64) {
        let path = format!("/snowmint/{fleet}/hwm/{slot}");
        let value = mark_ms.to_string();
        self.client()
            .await
            .set_data(&path, value.as_bytes(), None)
            .await
            .expect("cannot write the mark");
    }

    async fn delete_slot(&self, fleet: &str, slot: u64) {
        let path = format!("/snowmint/{fleet}/slots/{slot}");
        self.client()
            .await
            .delete(&path, None)
            .await
            .expect("cannot delete the slot znode");
    }

    fn process(&self) -> &ServerProcess {
        &self.process
    }
}

/// The slot znodes of `fleet` as ZooKeeper has them: slot -> holder.
pub(crate) async fn slot_holders(client: &Client, fleet: &str) -> BTreeMap<u64, String> {
    let dir = format!("/snowmint/{fleet}/slots");
    let names = match client.list_children(&dir).await {
        Ok(names) => names,
        Err(Error::NoNode) => return BTreeMap::new(),
        Err(err) => panic!("cannot list {dir}: {err}"),
    };
    let mut holders = BTreeMap::new();
    for name in names {
        let slot = name
            .parse()
            .unwrap_or_else(|_| panic!("unexpected znode {dir}/{name}"));
        match client.get_data(&format!("{dir}/{name}")).await {
            Ok((value, _)) => {
                holders.insert(slot, String::from_utf8(value).expect("holder is not UTF-8"));
            }
            // Gone between the listing and the read: not held.
            Err(Error::NoNode) => {}
            Err(err) => panic!("cannot read {dir}/{name}: {err}"),
        }
    }
    holders
}

/// The high-water mark of `slot` as ZooKeeper has it.
pub(crate) async fn stored_mark(client: &Client, fleet: &str, slot: u64) -> Option<i64> {
    let path = format!("/snowmint/{fleet}/hwm/{slot}");
    match client.get_data(&path).await {
        Ok((value, _)) => Some(
            String::from_utf8(value)
                .unwrap()
                .parse()
                .expect("mark is not a number"),
        ),
        Err(Error::NoNode) => None,
        Err(err) => panic!("cannot read {path}: {err}"),
    }
}
