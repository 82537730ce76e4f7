//! A real etcd server (Debian's etcd-server) for one test.

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::time::Duration;

use snowmint_fleet::EtcdBackend;
use snowmint_fleet::etcd_api::kv_client::KvClient;
use snowmint_fleet::etcd_api::{DeleteRangeRequest, PutRequest, RangeRequest};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tonic::transport::{Channel, Endpoint};

use super::CoordinatorServer;
use super::process::ServerProcess;
use crate::net::free_port;
use crate::temp::temp_dir;
use crate::wait::within;

pub(crate) const INSTALL: &str = "apt-get install etcd-server (or put an etcd 3.4+ binary on PATH)";

/// A real etcd server (a single-member cluster) on loopback ports.
pub struct EtcdServer {
    process: ServerProcess,
}

impl EtcdServer {
    async fn client(&self) -> Client {
        connect(&[self.process.addr()]).await
    }
}

/// The test's own etcd client: the key-value calls of etcd's API, as
/// snowmint's backend speaks them.
pub(crate) type Client = KvClient<Channel>;

/// The test's own client of the etcd members at `endpoints` (requests
/// spread over them); it connects at the first request.
pub(crate) async fn connect(endpoints: &[SocketAddr]) -> Client {
    let endpoints = endpoints.iter().map(|addr| {
        Endpoint::from_shared(format!("http://{addr}"))
            .expect("a loopback address is a URL")
            .connect_timeout(Duration::from_secs(20))
    });
    KvClient::new(Channel::balance_list(endpoints))
}

/// Reads `key`, or every key under `prefix` (ending in `/`) with
/// `prefix: true`.
async fn range(client: &mut Client, key: &str, prefix: bool) -> Vec<(String, String)> {
    let mut range_end = Vec::new();
    if prefix {
        // Up to the prefix with its last byte raised: `/` + 1 is `0`.
        range_end = key.as_bytes().to_vec();
        *range_end.last_mut().expect("a prefix is not empty") += 1;
    }
    let request = RangeRequest {
        key: key.as_bytes().to_vec(),
        range_end,
        keys_only: false,
    };
    let what = format!("a read of {key} from the test etcd");
    let answer = within(&what, Duration::from_secs(20), client.range(request))
        .await
        .unwrap_or_else(|err| panic!("cannot read {key}: {err}"));
    answer
        .into_inner()
        .kvs
        .into_iter()
        .map(|kv| {
            (
                String::from_utf8(kv.key).expect("a key is UTF-8"),
                String::from_utf8(kv.value).expect("a value is UTF-8"),
            )
        })
        .collect()
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

impl CoordinatorServer for EtcdServer {
    type Backend = EtcdBackend;

    const NAME: &'static str = "etcd";
    const SESSION_KIND: &'static str = "lease";

    async fn start() -> EtcdServer {
        let dir = temp_dir("etcd");
        let (client_port, peer_port) = (free_port(), free_port());
        let client_url = format!("http://127.0.0.1:{client_port}");
        let peer_url = format!("http://127.0.0.1:{peer_port}");
        let args: Vec<String> = [
            "--name",
            "snowmint-test",
            "--data-dir",
            &dir.path().join("data").display().to_string(),
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
            // A short election: the single member leads sooner.
            "--heartbeat-interval",
            "50",
            "--election-timeout",
            "500",
        ]
        .map(String::from)
        .to_vec();
        let process =
            ServerProcess::start("etcd", "etcd", &args, dir, INSTALL, client_port, healthy).await;
        EtcdServer { process }
    }

    fn backend(&self, addr: SocketAddr) -> EtcdBackend {
        EtcdBackend::new(vec![addr.to_string()])
    }

    fn url_at(&self, addr: SocketAddr) -> String {
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

/// The slot keys of `fleet` as etcd has them: slot -> holder.
pub(crate) async fn slot_holders(client: &mut Client, fleet: &str) -> BTreeMap<u64, String> {
    let prefix = format!("/snowmint/{fleet}/slots/");
    range(client, &prefix, true)
        .await
        .into_iter()
        .map(|(key, holder)| {
            let slot = key.strip_prefix(&prefix).and_then(|n| n.parse().ok());
            let slot = slot.unwrap_or_else(|| panic!("unexpected key {key}"));
            (slot, holder)
        })
        .collect()
}

/// The high-water mark of `slot` as etcd has it.
pub(crate) async fn stored_mark(client: &mut Client, fleet: &str, slot: u64) -> Option<i64> {
    let key = format!("/snowmint/{fleet}/hwm/{slot}");
    range(client, &key, false)
        .await
        .first()
        .map(|(_, mark)| mark.parse().expect("mark is not a number"))
}
