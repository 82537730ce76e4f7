//! A real etcd server (Debian's etcd-server) for one test.

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::time::Duration;

use etcd_client::{Client, GetOptions};
use snowmint_fleet::EtcdBackend;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use super::Cluster;
use super::process::ServerProcess;
use crate::net::free_port;
use crate::temp::temp_dir;
use crate::wait::within;

pub(crate) const INSTALL: &str = "apt-get install etcd-server (or put an etcd 3.4+ binary on PATH)";

/// A single-member etcd cluster on loopback ports.
pub struct EtcdCluster {
    process: ServerProcess,
}

impl EtcdCluster {
    async fn client(&self) -> Client {
        connect(&[self.process.addr()]).await
    }

    /// [`Cluster::start`], with `extra` flags given to etcd (such as
    /// `--auth-token-ttl 1`).
    pub async fn start_with(extra: &[&str]) -> EtcdCluster {
        let extra: Vec<String> = extra.iter().map(|flag| (*flag).to_owned()).collect();
        EtcdCluster {
            process: spawn("http", &extra).await,
        }
    }

    /// Turns etcd's authentication (RBAC) on, with the user `root` (role
    /// `root`) and each of `users`: a name, a password and, when given,
    /// a permission (on a key or a prefix) in a role of its own. The
    /// clients of [`Cluster`]'s methods do not log in: call them before.
    pub async fn enable_auth(
        &self,
        root_password: &str,
        users: &[(&str, &str, Option<etcd_client::Permission>)],
    ) {
        let mut root = self.client().await;
        root.user_add("root", root_password, None).await.unwrap();
        root.user_grant_role("root", "root").await.unwrap();
        for (user, password, permission) in users {
            root.user_add(*user, *password, None).await.unwrap();
            if let Some(permission) = permission {
                let role = format!("{user}-role");
                root.role_add(role.as_str()).await.unwrap();
                root.role_grant_permission(role.as_str(), permission.clone())
                    .await
                    .unwrap();
                root.user_grant_role(*user, role.as_str()).await.unwrap();
            }
        }
        root.auth_enable()
            .await
            .expect("cannot enable etcd's authentication");
    }

    /// The test's own client, logged in as `user`.
    pub async fn client_as(&self, user: &str, password: &str) -> Client {
        let mut client = self.client().await;
        client
            .update_user(Some((user.to_owned(), password.to_owned())))
            .await
            .unwrap_or_else(|err| panic!("cannot log in to etcd as {user}: {err}"));
        client
    }
}

/// The test's own client of the etcd members at `endpoints`.
pub(crate) async fn connect(endpoints: &[SocketAddr]) -> Client {
    let urls: Vec<String> = endpoints
        .iter()
        .map(|addr| format!("http://{addr}"))
        .collect();
    let what = "the test's own etcd client to connect";
    within(what, Duration::from_secs(20), Client::connect(urls, None))
        .await
        .expect("cannot connect to the test etcd")
}

/// Whether the etcd member serving clients on `port` says it is healthy
/// (in etcd 3.4: it has a leader and a quorum read succeeds).
pub(crate) async fn healthy(port: u16) -> bool {
    let Ok(mut stream) = TcpStream::connect(("127.0.0.1", port)).await else {
        return false;
    };
    let request = "GET /health HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n";
    let mut answer = String::new();
    stream.write_all(request.as_bytes()).await.is_ok()
        && stream.read_to_string(&mut answer).await.is_ok()
        && answer.contains(r#""health":"true""#)
}

/// Starts a single-member etcd in a directory of its own, its client URL
/// with `scheme` (`http`, or `https` with TLS flags in `extra`), and waits
/// until it is healthy: its metrics listener (always plain HTTP) answers
/// `/health`.
pub(crate) async fn spawn(scheme: &str, extra: &[String]) -> ServerProcess {
    let dir = temp_dir("etcd");
    let data = dir.path().join("data");
    let (client_port, peer_port, metrics_port) = (free_port(), free_port(), free_port());
    let client_url = format!("{scheme}://127.0.0.1:{client_port}");
    let peer_url = format!("http://127.0.0.1:{peer_port}");
    let mut args: Vec<String> = [
        "--name",
        "snowmint-test",
        "--data-dir",
        &data.display().to_string(),
        "--listen-client-urls",
        &client_url,
        "--advertise-client-urls",
        &client_url,
        "--listen-peer-urls",
        &peer_url,
        "--initial-advertise-peer-urls",
        &peer_url,
        "--initial-cluster",
        &format!("snowmint-test={peer_url}"),
        "--listen-metrics-urls",
        &format!("http://127.0.0.1:{metrics_port}"),
        // A short election: the single member leads sooner.
        "--heartbeat-interval",
        "50",
        "--election-timeout",
        "500",
    ]
    .map(String::from)
    .to_vec();
    args.extend_from_slice(extra);
    let process = ServerProcess::spawn("etcd", "etcd", &args, dir, INSTALL, client_port);
    process.wait_ready(move |_| healthy(metrics_port)).await;
    process
}

impl Cluster for EtcdCluster {
    type Backend = EtcdBackend;

    const NAME: &'static str = "etcd";

    async fn start() -> EtcdCluster {
        EtcdCluster {
            process: spawn("http", &[]).await,
        }
    }

    fn backend(&self, addr: SocketAddr) -> EtcdBackend {
        EtcdBackend::new(vec![addr.to_string()])
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

/// The slot keys of `fleet` as etcd has them: slot -> holder.
pub(crate) async fn slot_holders(client: &mut Client, fleet: &str) -> BTreeMap<u64, String> {
    let prefix = format!("/snowmint/{fleet}/slots/");
    let listed = client
        .get(prefix.as_str(), Some(GetOptions::new().with_prefix()))
        .await
        .expect("cannot list the slot keys");
    listed
        .kvs()
        .iter()
        .map(|kv| {
            let key = kv.key_str().expect("slot key is not UTF-8");
            let slot = key.strip_prefix(&prefix).and_then(|n| n.parse().ok());
            let slot = slot.unwrap_or_else(|| panic!("unexpected key {key}"));
            (
                slot,
                kv.value_str().expect("holder is not UTF-8").to_owned(),
            )
        })
        .collect()
}

/// The high-water mark of `slot` as etcd has it.
pub(crate) async fn stored_mark(client: &mut Client, fleet: &str, slot: u64) -> Option<i64> {
    let key = format!("/snowmint/{fleet}/hwm/{slot}");
    let found = client.get(key, None).await.expect("cannot read the mark");
    found.kvs().first().map(|kv| {
        kv.value_str()
            .expect("mark is not UTF-8")
            .parse()
            .expect("mark is not a number")
    })
}
