//! A real etcd server that speaks only TLS and requires a client
//! certificate signed by the test's authority (`--cert-file`,
//! `--key-file`, `--trusted-ca-file`, `--client-cert-auth`, an `https://`
//! client URL), as a production etcd does.

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::time::Duration;

use snowmint_fleet::etcd_api::kv_client::KvClient;
use snowmint_fleet::etcd_api::{DeleteRangeRequest, PutRequest};
use snowmint_fleet::{CoordinatorTls, EtcdBackend};
use tonic::transport::{Certificate, ClientTlsConfig, Endpoint, Identity};

use super::CoordinatorServer;
use super::etcd::{Client, Permission, enable_auth, slot_holders, spawn, stored_mark};
use super::process::ServerProcess;
use crate::tls::{Issued, TestCa};

/// A single-member etcd on loopback that takes only mutual TLS.
pub struct EtcdTlsServer {
    process: ServerProcess,
    /// The authority that signed the server's certificate and every
    /// client's.
    pub ca: TestCa,
    /// The certificate the nodes present.
    pub node: Issued,
    /// The certificate the test's own client presents, named `root`: with
    /// RBAC on, etcd takes a client certificate's common name as the user
    /// of a request that carries no token, so the client stays root.
    admin: Issued,
}

impl EtcdTlsServer {
    /// The TLS files a node is given: the CA and its own certificate.
    pub fn node_tls(&self) -> CoordinatorTls {
        CoordinatorTls::new(self.ca.ca_file()).with_identity(&self.node.cert, &self.node.key)
    }

    /// Turns etcd's authentication (RBAC) on, as
    /// [`EtcdServer::enable_auth`](super::etcd::EtcdServer::enable_auth)
    /// does (etcdctl over mutual TLS). Nodes then log in with a user and
    /// password on top of their certificate; the test's own client goes
    /// on as root.
    pub async fn enable_auth(
        &self,
        root_password: &str,
        users: &[(&str, &str, Option<Permission>)],
    ) {
        let path = |path: &std::path::Path| path.display().to_string();
        let connection = [
            format!("--endpoints=https://{}", self.client_addr()),
            format!("--cacert={}", path(self.ca.ca_file())),
            format!("--cert={}", path(&self.admin.cert)),
            format!("--key={}", path(&self.admin.key)),
        ];
        enable_auth(&connection, root_password, users).await;
    }

    /// The test's own client, over mutual TLS; it connects at the first
    /// request.
    pub async fn client(&self) -> Client {
        let read = |path: &std::path::Path| std::fs::read(path).expect("cannot read a TLS file");
        let tls = ClientTlsConfig::new()
            .ca_certificate(Certificate::from_pem(read(self.ca.ca_file())))
            .identity(Identity::from_pem(
                read(&self.admin.cert),
                read(&self.admin.key),
            ));
        let endpoint = Endpoint::from_shared(format!("https://{}", self.client_addr()))
            .expect("a loopback address is a URL")
            .connect_timeout(Duration::from_secs(20))
            .tls_config(tls)
            .expect("the test's TLS files make a client");
        KvClient::new(endpoint.connect_lazy())
    }
}

impl CoordinatorServer for EtcdTlsServer {
    type Backend = EtcdBackend;

    const NAME: &'static str = "etcd over mutual TLS";
    const SESSION_KIND: &'static str = "lease";

    async fn start() -> EtcdTlsServer {
        let ca = TestCa::new("etcd-ca");
        let server = ca.server("etcd-server");
        let node = ca.client("snowmint-node");
        let admin = ca.client("root");
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
        EtcdTlsServer {
            process,
            ca,
            node,
            admin,
        }
    }

    fn backend(&self, addr: SocketAddr) -> EtcdBackend {
        EtcdBackend::new(vec![addr.to_string()]).with_tls(self.node_tls())
    }

    fn url_at(&self, addr: SocketAddr) -> String {
        // The TLS files are given beside the URL (--coordinator-ca, ...).
        format!("etcd://{addr}")
    }

    async fn slot_holders(&self, fleet: &str) -> BTreeMap<u64, String> {
        slot_holders(&mut self.client().await, fleet).await
    }

    async fn stored_mark(&self, fleet: &str, slot: u64) -> Option<i64> {
        stored_mark(&mut self.client().await, fleet, slot).await
    }

    async fn set_mark(&self, fleet: &str, slot: u64, mark_ms: i64) {
        let put = PutRequest {
            key: format!("/snowmint/{fleet}/hwm/{slot}").into_bytes(),
            value: mark_ms.to_string().into_bytes(),
            lease: 0,
        };
        self.client()
            .await
            .put(put)
            .await
            .expect("cannot write the mark");
    }

    async fn delete_slot(&self, fleet: &str, slot: u64) {
        let delete = DeleteRangeRequest {
            key: format!("/snowmint/{fleet}/slots/{slot}").into_bytes(),
            range_end: Vec::new(),
        };
        let deleted = self
            .client()
            .await
            .delete_range(delete)
            .await
            .expect("cannot delete the slot key");
        assert_eq!(deleted.into_inner().deleted, 1, "no slot key to delete");
    }

    fn process(&self) -> &ServerProcess {
        &self.process
    }
}
