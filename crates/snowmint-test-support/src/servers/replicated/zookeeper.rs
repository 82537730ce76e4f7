//! A ZooKeeper ensemble (Debian's zookeeper) of three servers on loopback
//! ports, or of one server on each host a test gives.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::net::SocketAddr;

use snowmint_fleet::ZooKeeperBackend;

use super::{PROBE_LIMIT, Replicated, Role, member_ports};
use crate::servers::Site;
use crate::servers::process::ServerProcess;
use crate::servers::zookeeper::{
    CLIENT_PORT, INSTALL, QUORUM_PORTS, TICK_MS, connect, java_args, mode, slot_holders, srvr,
    stored_mark,
};
use crate::temp::temp_dir;

/// How many ticks a follower may take to connect and sync to a leader.
pub const INIT_LIMIT_TICKS: u64 = 10;
/// How many ticks a follower may fall behind the leader before it is
/// dropped (and a leader without a quorum of followers steps down).
pub const SYNC_LIMIT_TICKS: u64 = 5;
/// How long a server waits to connect to a peer during an election, in ms
/// (ZooKeeper's default is 5 s; a paused peer would hold each election up
/// that long).
pub const PEER_CONNECT_TIMEOUT_MS: u64 = 1_000;

/// ZooKeeper servers, ids 1, 2, ..., forming one ensemble.
pub struct ReplicatedZooKeeper {
    members: Vec<ServerProcess>,
}

impl ReplicatedZooKeeper {
    /// The members that run now (not killed), for the test's own reads.
    fn running(&self) -> Vec<SocketAddr> {
        let running = self.members.iter().filter(|m| m.is_running());
        running.map(ServerProcess::addr).collect()
    }
}

async fn serving(port: u16) -> bool {
    let answer = srvr(port).await;
    matches!(
        answer.as_deref().and_then(mode),
        Some("leader" | "follower")
    )
}

impl Replicated for ReplicatedZooKeeper {
    type Backend = ZooKeeperBackend;

    const NAME: &'static str = "ZooKeeper";
    const SCHEME: &'static str = "zk";

    async fn start_at(sites: Vec<Site>) -> ReplicatedZooKeeper {
        // (client, quorum, election) per server.
        let mut free = member_ports(3 * sites.len()).into_iter();
        let mut free = || free.next().unwrap();
        let ports: Vec<(u16, u16, u16)> = sites
            .iter()
            .map(|site| {
                (
                    site.port(CLIENT_PORT, &mut free),
                    site.port(QUORUM_PORTS.0, &mut free),
                    site.port(QUORUM_PORTS.1, &mut free),
                )
            })
            .collect();
        let mut servers = String::new();
        for (m, ((_, quorum, election), site)) in ports.iter().zip(&sites).enumerate() {
            let id = m + 1;
            let ip = site.ip();
            writeln!(servers, "server.{id}={ip}:{quorum}:{election}").unwrap();
        }
        let mut members = Vec::new();
        for (m, (&(client_port, ..), site)) in ports.iter().zip(&sites).enumerate() {
            let dir = temp_dir(&format!("zookeeper-{}", m + 1));
            let data = dir.path().join("data");
            std::fs::create_dir(&data).expect("cannot create the dataDir");
            std::fs::write(data.join("myid"), format!("{}\n", m + 1)).expect("cannot write myid");
            let config = format!(
                "tickTime={TICK_MS}\n\
                 initLimit={INIT_LIMIT_TICKS}\n\
                 syncLimit={SYNC_LIMIT_TICKS}\n\
                 dataDir={data}\n\
                 clientPort={client_port}\n\
                 clientPortAddress={ip}\n\
                 admin.enableServer=false\n\
                 4lw.commands.whitelist=*\n\
                 {servers}",
                data = data.display(),
                ip = site.ip(),
            );
            let config_path = dir.path().join("zoo.cfg");
            std::fs::write(&config_path, config).expect("cannot write zoo.cfg");
            let mut args = vec![format!("-Dzookeeper.cnxTimeout={PEER_CONNECT_TIMEOUT_MS}")];
            args.extend(java_args(&config_path));
            let name = format!("ZooKeeper server {}", m + 1);
            members.push(ServerProcess::spawn_at(
                site,
                &name,
                "java",
                &args,
                &[],
                None,
                dir,
                INSTALL,
                client_port,
            ));
        }
        let ensemble = ReplicatedZooKeeper { members };
        for member in 0..ensemble.members.len() {
            ensemble.wait_serving(member).await;
        }
        ensemble
    }

    fn members(&self) -> &[ServerProcess] {
        &self.members
    }

    async fn role(&self, member: usize) -> Role {
        let port = self.members[member].addr().port();
        let Ok(Some(answer)) = tokio::time::timeout(PROBE_LIMIT, srvr(port)).await else {
            return Role::Silent;
        };
        match mode(&answer) {
            Some("leader") => Role::Leader,
            Some("follower") => Role::Follower,
            // No mode: "This ZooKeeper instance is not currently serving
            // requests" (looking for a leader).
            _ => Role::Alone,
        }
    }

    fn backend(addrs: &[SocketAddr]) -> ZooKeeperBackend {
        ZooKeeperBackend::new(addrs.iter().map(SocketAddr::to_string).collect(), None)
    }

    async fn slot_holders(&self, fleet: &str) -> BTreeMap<u64, String> {
        slot_holders(&connect(&self.running()).await, fleet).await
    }

    async fn stored_mark(&self, fleet: &str, slot: u64) -> Option<i64> {
        stored_mark(&connect(&self.running()).await, fleet, slot).await
    }

    async fn wait_serving(&self, member: usize) {
        self.members[member].wait_ready(serving).await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn members_can_be_killed_restarted_paused_and_cut() {
        super::super::checks::members_can_be_killed_restarted_paused_and_cut::<ReplicatedZooKeeper>(b"srvr")
        .await;
    }
}
