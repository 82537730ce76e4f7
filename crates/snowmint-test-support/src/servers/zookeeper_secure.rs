//! Real ZooKeeper servers guarded as production ensembles are: one whose
//! fleet authenticates with the `digest` scheme, so that its znodes carry
//! ACLs ([`ZooKeeperDigestServer`]), and one that speaks TLS on its secure
//! client port and requires a client certificate
//! ([`ZooKeeperTlsServer`]; Netty, PEM key and trust stores).

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::time::Duration;

use snowmint_fleet::{CoordinatorTls, Credentials, Secret, ZooKeeperBackend};
use zookeeper_client::Client;

use super::CoordinatorServer;
use super::process::ServerProcess;
use super::zookeeper::{slot_holders, spawn, stored_mark};
use crate::net::free_port;
use crate::tls::{Issued, TestCa};
use crate::wait::within;

/// The user the fleet's nodes authenticate as.
pub const FLEET_USER: &str = "fleet";
/// Its password.
pub const FLEET_PASSWORD: &str = "fleet-s3cret";

/// The test's client of the ZooKeeper server at `addr`, authenticated as
/// `user`:`password` with the `digest` scheme.
pub async fn client_as(addr: SocketAddr, user: &str, password: &str) -> Client {
    let auth = format!("{user}:{password}");
    within(
        "the test's own ZooKeeper client to connect",
        Duration::from_secs(20),
        Client::connector()
            .with_auth("digest", auth.as_bytes())
            .connect(&addr.to_string()),
    )
    .await
    .expect("cannot connect to the test ZooKeeper")
}

/// A standalone ZooKeeper whose fleets authenticate as
/// [`FLEET_USER`]`:`[`FLEET_PASSWORD`] (digest). The test's own client
/// (which reads, overwrites and deletes keys as an operator would)
/// authenticates as the fleet too.
pub struct ZooKeeperDigestServer {
    process: ServerProcess,
}

impl ZooKeeperDigestServer {
    /// The fleet's user and password.
    pub fn credentials() -> Credentials {
        Credentials {
            user: FLEET_USER.to_owned(),
            password: Secret::new(FLEET_PASSWORD),
        }
    }

    /// A client authenticated as the fleet.
    pub async fn client(&self) -> Client {
        client_as(self.client_addr(), FLEET_USER, FLEET_PASSWORD).await
    }
}

impl CoordinatorServer for ZooKeeperDigestServer {
    type Backend = ZooKeeperBackend;

    const NAME: &'static str = "ZooKeeper with digest authentication";
    const SESSION_KIND: &'static str = "session";

    async fn start() -> ZooKeeperDigestServer {
        ZooKeeperDigestServer {
            process: spawn("").await,
        }
    }

    fn backend(&self, addr: SocketAddr) -> ZooKeeperBackend {
        ZooKeeperBackend::new(vec![addr.to_string()], None)
            .with_credentials(ZooKeeperDigestServer::credentials(), false)
    }

    fn url_at(&self, addr: SocketAddr) -> String {
        format!("zk://{FLEET_USER}:{FLEET_PASSWORD}@{addr}")
    }

    fn shown_url(&self) -> String {
        format!("zk://{FLEET_USER}:***@{}", self.client_addr())
    }

    async fn slot_holders(&self, fleet: &str) -> BTreeMap<u64, String> {
        slot_holders(&self.client().await, fleet).await
    }

    async fn stored_mark(&self, fleet: &str, slot: u64) -> Option<i64> {
        stored_mark(&self.client().await, fleet, slot).await
    }

    async fn set_mark(&self, fleet: &str, slot: u64, mark_ms: i64) {
        let path = format!("/snowmint/{fleet}/hwm/{slot}");
        self.client()
            .await
            .set_data(&path, mark_ms.to_string().as_bytes(), None)
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

/// A standalone ZooKeeper that serves TLS on a secure client port and
/// requires a client certificate signed by the test's authority there
/// (`ssl.clientAuth=need`); its plain port stays for the test's own
/// client and the readiness probe.
pub struct ZooKeeperTlsServer {
    process: ServerProcess,
    secure_port: u16,
    /// The authority that signed the server's certificate and the nodes'.
    pub ca: TestCa,
    /// The certificate the nodes present.
    pub node: Issued,
}

impl ZooKeeperTlsServer {
    /// The TLS files a node is given: the CA and its own certificate.
    pub fn node_tls(&self) -> CoordinatorTls {
        CoordinatorTls::new(self.ca.ca_file()).with_identity(&self.node.cert, &self.node.key)
    }

    /// The plain client port, for the test's own client.
    pub fn plain_addr(&self) -> SocketAddr {
        self.process.addr()
    }

    async fn client(&self) -> Client {
        super::zookeeper::connect(&[self.plain_addr()]).await
    }
}

impl CoordinatorServer for ZooKeeperTlsServer {
    type Backend = ZooKeeperBackend;

    const NAME: &'static str = "ZooKeeper over mutual TLS";
    const SESSION_KIND: &'static str = "session";

    async fn start() -> ZooKeeperTlsServer {
        assert!(
            std::path::Path::new(super::zookeeper::NETTY_CODEC_JAR).exists(),
            "ZooKeeper's TLS needs {} (apt-get install libnetty-java)",
            super::zookeeper::NETTY_CODEC_JAR
        );
        let ca = TestCa::new("zookeeper-ca");
        let server = ca.server("zookeeper-server");
        let node = ca.client("snowmint-node");
        let secure_port = free_port();
        let extra = format!(
            "secureClientPort={secure_port}\n\
             secureClientPortAddress=127.0.0.1\n\
             serverCnxnFactory=org.apache.zookeeper.server.NettyServerCnxnFactory\n\
             ssl.keyStore.location={keystore}\n\
             ssl.keyStore.type=PEM\n\
             ssl.trustStore.location={truststore}\n\
             ssl.trustStore.type=PEM\n\
             ssl.clientAuth=need\n",
            keystore = server.combined.display(),
            truststore = ca.ca_file().display(),
        );
        let process = spawn(&extra).await;
        crate::net::wait_for_port(
            "ZooKeeper's secure client port",
            secure_port,
            Duration::from_secs(60),
        );
        ZooKeeperTlsServer {
            process,
            secure_port,
            ca,
            node,
        }
    }

    fn client_addr(&self) -> SocketAddr {
        SocketAddr::from(([127, 0, 0, 1], self.secure_port))
    }

    fn backend(&self, addr: SocketAddr) -> ZooKeeperBackend {
        ZooKeeperBackend::new(vec![addr.to_string()], None).with_tls(self.node_tls())
    }

    fn url_at(&self, addr: SocketAddr) -> String {
        // The TLS files are given beside the URL (--coordinator-ca, ...).
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
        self.client()
            .await
            .set_data(&path, mark_ms.to_string().as_bytes(), None)
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
