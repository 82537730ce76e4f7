//! An etcd cluster (Debian's etcd-server) of three members on loopback
//! ports, or of one member on each host a test gives.

use std::collections::BTreeMap;
use std::net::SocketAddr;

use snowmint_fleet::EtcdBackend;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use super::{PROBE_LIMIT, Replicated, Role, member_ports};
use crate::servers::Site;
use crate::servers::etcd::{
    CLIENT_PORT, INSTALL, PEER_PORT, connect, healthy, slot_holders, stored_mark,
};
use crate::servers::process::ServerProcess;
use crate::temp::temp_dir;

/// A raft heartbeat, in ms: etcd's default.
pub const HEARTBEAT_MS: u64 = 100;
/// How long a follower waits for the leader before it stands for
/// election, in ms: etcd's default, ten heartbeats.
pub const ELECTION_TIMEOUT_MS: u64 = 1_000;

/// etcd members, `m0`, `m1`, ..., forming one cluster.
pub struct ReplicatedEtcd {
    members: Vec<ServerProcess>,
}

impl ReplicatedEtcd {
    /// The members that run now (not killed), for the test's own reads.
    fn running(&self) -> Vec<SocketAddr> {
        let running = self.members.iter().filter(|m| m.is_running());
        running.map(ServerProcess::addr).collect()
    }
}

/// `GET path` on the client port `port`, HTTP/1.0: the whole answer.
async fn http_get(port: u16, path: &str) -> Option<String> {
    let mut stream = TcpStream::connect(("127.0.0.1", port)).await.ok()?;
    let request = format!("GET {path} HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n");
    stream.write_all(request.as_bytes()).await.ok()?;
    let mut answer = String::new();
    stream.read_to_string(&mut answer).await.ok()?;
    Some(answer)
}

/// The value of the gauge `name` in a Prometheus text.
fn gauge(metrics: &str, name: &str) -> Option<f64> {
    metrics
        .lines()
        .find_map(|line| line.strip_prefix(name)?.strip_prefix(' '))
        .and_then(|value| value.trim().parse().ok())
}

impl Replicated for ReplicatedEtcd {
    type Backend = EtcdBackend;

    const NAME: &'static str = "etcd";
    const SCHEME: &'static str = "etcd";

    async fn start_at(sites: Vec<Site>) -> ReplicatedEtcd {
        let mut free = member_ports(2 * sites.len()).into_iter();
        let ports: Vec<(u16, u16)> = sites
            .iter()
            .map(|site| {
                let client = site.port(CLIENT_PORT, || free.next().unwrap());
                (client, site.port(PEER_PORT, || free.next().unwrap()))
            })
            .collect();
        let peers: Vec<String> = ports
            .iter()
            .zip(&sites)
            .enumerate()
            .map(|(m, ((_, peer), site))| format!("m{m}=http://{}:{peer}", site.ip()))
            .collect();
        let initial_cluster = peers.join(",");
        let token = format!("snowmint-test-{}-{}", std::process::id(), ports[0].0);
        let members: Vec<ServerProcess> = ports
            .iter()
            .zip(&sites)
            .enumerate()
            .map(|(m, (&(client_port, peer_port), site))| {
                let dir = temp_dir(&format!("etcd-m{m}"));
                let client_url = format!("http://{}:{client_port}", site.ip());
                let peer_url = format!("http://{}:{peer_port}", site.ip());
                let args: Vec<String> = [
                    "--name",
                    &format!("m{m}"),
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
                    &initial_cluster,
                    "--initial-cluster-state",
                    "new",
                    "--initial-cluster-token",
                    &token,
                    "--heartbeat-interval",
                    &HEARTBEAT_MS.to_string(),
                    "--election-timeout",
                    &ELECTION_TIMEOUT_MS.to_string(),
                ]
                .map(String::from)
                .to_vec();
                let name = format!("etcd member m{m}");
                ServerProcess::spawn_at(
                    site,
                    &name,
                    "etcd",
                    &args,
                    &[],
                    None,
                    dir,
                    INSTALL,
                    client_port,
                )
            })
            .collect();
        let cluster = ReplicatedEtcd { members };
        for member in 0..cluster.members.len() {
            cluster.wait_serving(member).await;
        }
        cluster
    }

    fn members(&self) -> &[ServerProcess] {
        &self.members
    }

    async fn role(&self, member: usize) -> Role {
        let port = self.members[member].addr().port();
        let metrics = tokio::time::timeout(PROBE_LIMIT, http_get(port, "/metrics")).await;
        let Ok(Some(metrics)) = metrics else {
            return Role::Silent;
        };
        match (
            gauge(&metrics, "etcd_server_has_leader"),
            gauge(&metrics, "etcd_server_is_leader"),
        ) {
            (Some(1.0), Some(1.0)) => Role::Leader,
            (Some(1.0), _) => Role::Follower,
            (Some(_), _) => Role::Alone,
            (None, _) => Role::Silent,
        }
    }

    fn backend(addrs: &[SocketAddr]) -> EtcdBackend {
        EtcdBackend::new(addrs.iter().map(SocketAddr::to_string).collect())
    }

    async fn slot_holders(&self, fleet: &str) -> BTreeMap<u64, String> {
        slot_holders(&mut connect(&self.running()).await, fleet).await
    }

    async fn stored_mark(&self, fleet: &str, slot: u64) -> Option<i64> {
        stored_mark(&mut connect(&self.running()).await, fleet, slot).await
    }

    async fn wait_serving(&self, member: usize) {
        self.members[member].wait_ready(healthy).await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn members_can_be_killed_restarted_paused_and_cut() {
        super::super::checks::members_can_be_killed_restarted_paused_and_cut::<ReplicatedEtcd>(
            b"GET /health HTTP/1.0\r\n\r\n",
        )
        .await;
    }
}
