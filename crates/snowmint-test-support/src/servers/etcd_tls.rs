//! A real etcd server that speaks only TLS and requires a client
//! certificate signed by the test's authority (`--cert-file`,
//! `--key-file`, `--trusted-ca-file`, `--client-cert-auth`, an `https://`
//! client URL), as a production etcd does.

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::time::Duration;

use etcd_client::{Certificate, Client, ConnectOptions, Identity, TlsOptions};
use snowmint_fleet::{CoordinatorTls, EtcdBackend};

use super::Cluster;
use super::etcd::{slot_holders, spawn, stored_mark};
use super::process::ServerProcess;
use crate::tls::{Issued, TestCa};
use crate::wait::within;

/// A single-member etcd on loopback that takes only mutual TLS.
pub struct EtcdTlsCluster {
    process: ServerProcess,
    /// The authority that signed the server's certificate and every
    /// client's.
    pub ca: TestCa,
    /// The certificate the nodes present.
    pub node: Issued,
    /// The certificate the test's own client presents.
    admin: Issued,
}

impl EtcdTlsCluster {
    /// The TLS files a node is given: the CA and its own certificate.
    pub fn node_tls(&self) -> CoordinatorTls {
        CoordinatorTls::new(self.ca.ca_file()).with_identity(&self.node.cert, &self.node.key)
    }

    /// The test's own client, over mutual TLS.
    pub async fn client(&self) -> Client {
        let read = |path: &std::path::Path| std::fs::read(path).expect("cannot read a TLS file");
        let tls = TlsOptions::new()
            .ca_certificate(Certificate::from_pem(read(self.ca.ca_file())))
            .identity(Identity::from_pem(
                read(&self.admin.cert),
                read(&self.admin.key),
            ));
        let options = ConnectOptions::new().with_tls(tls);
        let url = format!("https://{}", self.client_addr());
        within(
            "the test's own etcd client to connect over TLS",
            Duration::from_secs(20),
            Client::connect([url], Some(options)),
        )
        .await
        .expect("cannot connect to the test etcd over TLS")
    }
}

impl Cluster for EtcdTlsCluster {
    type Backend = EtcdBackend;

    const NAME: &'static str = "etcd over mutual TLS";

    async fn start() -> EtcdTlsCluster {
        let ca = TestCa::new("etcd-ca");
        let server = ca.server("etcd-server");
        let node = ca.client("snowmint-node");
        let admin = ca.client("test-admin");
        let path = |path: &std::path::Path| path.display().to_string();
        let extra = vec![
            "--cert-file".to_owned(),
            path(&server.cert),
            "--key-file".to_owned(),
            path(&server.key),
            "--trusted-ca-file".to_owned(),
            path(ca.ca_file()),
            "--client-cert-auth".to_owned(),
        ];
        let process = spawn("https", &extra).await;
        EtcdTlsCluster {
            process,
            ca,
            node,
            admin,
        }
    }

    fn backend(&self, addr: SocketAddr) -> EtcdBackend {
        EtcdBackend::new(vec![addr.to_string()]).with_tls(self.node_tls())
    }

    async fn slot_holders(&self, fleet: &str) -> BTreeMap<u64, String> {
        slot_holders(&mut self.client().await, fleet).await
    }

    async fn stored_mark(&self, fleet: &str, slot: u64) -> Option<i64> {
        stored_mark(&mut self.client().await, fleet, slot).await
    }

    async fn set_mark(&self, fleet: &str, slot: u64, mark_ms: i64) {
        let key = format!("/snowmint/{fleet}/hwm/{slot}");
        self.client()
            .await
            .put(key, mark_ms.to_string(), None)
            .await
            .expect("cannot write the mark");
    }

    async fn delete_slot(&self, fleet: &str, slot: u64) {
        let key = format!("/snowmint/{fleet}/slots/{slot}");
        let deleted = self
            .client()
            .await
            .delete(key, None)
            .await
            .expect("cannot delete the slot key");
        assert_eq!(deleted.deleted(), 1, "no slot key to delete");
    }

    fn process(&self) -> &ServerProcess {
        &self.process
    }
}
