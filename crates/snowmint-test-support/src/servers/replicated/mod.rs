//! Replicated coordinators: a 3-member etcd cluster and a 3-server
//! ZooKeeper ensemble on loopback ports, each member its own process with
//! its own directory and ports, all killed on drop (also when the test
//! panics).
//!
//! A test can, per member: read its client address, ask its role (and so
//! find the leader), kill it (SIGKILL) and start it again on the same
//! directory and ports, freeze it (SIGSTOP) and thaw it (SIGCONT); and put
//! every member behind a [`Proxy`] of its own ([`MemberProxies`]), which
//! can cut the member off from one node and tells which members a node's
//! client is using.
//!
//! ```no_run
//! # async fn example() {
//! use snowmint_test_support::servers::replicated::{Replicated, etcd::ReplicatedEtcd};
//!
//! let cluster = ReplicatedEtcd::start().await;
//! let url = ReplicatedEtcd::url(&cluster.client_addrs()); // etcd://a,b,c
//! let leader = cluster.leader().await;
//! cluster.kill(leader);
//! cluster.restart(leader);
//! cluster.wait_serving(leader).await;
//! # }
//! ```
//!
//! - `etcd` (feature `etcd`): [`etcd::ReplicatedEtcd`].
//! - `zookeeper` (feature `zookeeper`): [`zookeeper::ReplicatedZooKeeper`].

#[cfg(feature = "etcd")]
pub mod etcd;
#[cfg(feature = "zookeeper")]
pub mod zookeeper;

use std::collections::BTreeMap;
use std::future::Future;
use std::net::SocketAddr;
use std::time::Duration;

use snowmint_fleet::Backend;

use super::Site;
use super::process::ServerProcess;
use super::proxy::Proxy;
use crate::wait::eventually;

/// How many members a replicated coordinator has unless a test places
/// them ([`Replicated::start_at`]).
pub const MEMBERS: usize = 3;
/// A liveness bound for the waits on members (not a timing assertion).
const LIMIT: Duration = Duration::from_secs(60);
/// How long a probe of one member may take: a paused member accepts a
/// connection and then says nothing.
pub(crate) const PROBE_LIMIT: Duration = Duration::from_secs(1);

/// `count` distinct free loopback ports for the members of one cluster,
/// below the kernel's range of ephemeral ports.
///
/// A member restarted on its ports, or started a moment after its peers,
/// must find them free. A port of the ephemeral range may meanwhile be
/// taken as the local end of an outgoing connection (the peers and the
/// nodes reconnect all the time), so these ports come from below it,
/// picked at random so that tests running side by side rarely meet; and
/// none is given twice in one test process, so that a test starting while
/// another's member is down cannot take that member's port from it.
pub fn member_ports(count: usize) -> Vec<u16> {
    use std::hash::BuildHasher;
    static GIVEN: std::sync::Mutex<std::collections::BTreeSet<u16>> =
        std::sync::Mutex::new(std::collections::BTreeSet::new());
    let mut given = GIVEN.lock().unwrap_or_else(|e| e.into_inner());
    let ephemeral_from = std::fs::read_to_string("/proc/sys/net/ipv4/ip_local_port_range")
        .ok()
        .and_then(|range| range.split_whitespace().next()?.parse::<u16>().ok())
        .unwrap_or(32_768);
    let (low, high) = (
        ephemeral_from.saturating_sub(12_000).max(1_024),
        ephemeral_from,
    );
    let random = std::collections::hash_map::RandomState::new();
    let mut ports = Vec::new();
    for attempt in 0u64.. {
        assert!(attempt < 10_000, "no free port in {low}..{high}");
        let port = low + (random.hash_one(attempt) % u64::from(high - low)) as u16;
        let free = std::net::TcpListener::bind(("127.0.0.1", port)).is_ok();
        if free && given.insert(port) {
            ports.push(port);
            if ports.len() == count {
                break;
            }
        }
    }
    ports
}

/// What a member says about itself now.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    /// It leads the quorum.
    Leader,
    /// It follows a leader.
    Follower,
    /// It answers, but is part of no quorum now (no leader, an election
    /// under way).
    Alone,
    /// It does not answer: killed, paused, or still starting.
    Silent,
}

/// A replicated coordinator started for one test: [`MEMBERS`] members on
/// loopback, or one on each host a test gives.
pub trait Replicated: Send + Sync + Sized + 'static {
    /// The backend that talks to it.
    type Backend: Backend;

    /// The service's name in messages.
    const NAME: &'static str;
    /// The scheme of its `--coordinator` URL: `etcd`, `zk`.
    const SCHEME: &'static str;

    /// Starts [`MEMBERS`] fresh members on free loopback ports and waits
    /// until every one of them serves clients (a quorum has formed).
    fn start() -> impl Future<Output = Self> + Send {
        Self::start_at(vec![Site::Loopback; MEMBERS])
    }

    /// Starts one fresh member at each of `sites` (on loopback, free
    /// ports; on hosts of a partition network, the service's usual ports
    /// at each host's address) and waits until every one of them serves
    /// clients.
    fn start_at(sites: Vec<Site>) -> impl Future<Output = Self> + Send;

    /// The members' processes, in a fixed order (the index names a member
    /// in every other call).
    fn members(&self) -> &[ServerProcess];

    /// What member `member` says about itself now.
    fn role(&self, member: usize) -> impl Future<Output = Role> + Send;

    /// A backend that reaches the members at `addrs` (the members
    /// themselves, or proxies in front of them).
    fn backend(addrs: &[SocketAddr]) -> Self::Backend;

    /// The slot keys of `fleet` as the coordinator has them: slot ->
    /// holder (read through every member that runs).
    fn slot_holders(&self, fleet: &str) -> impl Future<Output = BTreeMap<u64, String>> + Send;

    /// The high-water mark of `slot` as the coordinator has it.
    fn stored_mark(&self, fleet: &str, slot: u64) -> impl Future<Output = Option<i64>> + Send;

    /// Waits until member `member` serves clients again (after a start or
    /// a restart; it needs a quorum to do so).
    fn wait_serving(&self, member: usize) -> impl Future<Output = ()> + Send;

    /// The `--coordinator` URL that names every address of `addrs`:
    /// `etcd://a,b,c`, `zk://a,b,c`.
    fn url(addrs: &[SocketAddr]) -> String {
        let hosts: Vec<String> = addrs.iter().map(SocketAddr::to_string).collect();
        format!("{}://{}", Self::SCHEME, hosts.join(","))
    }

    /// Where the test reaches each member, in member order (on hosts:
    /// its forwards).
    fn client_addrs(&self) -> Vec<SocketAddr> {
        self.members().iter().map(ServerProcess::addr).collect()
    }

    /// Where each member serves clients, in member order: what nodes on
    /// hosts of a partition network are given.
    fn served_addrs(&self) -> Vec<SocketAddr> {
        self.members()
            .iter()
            .map(ServerProcess::served_addr)
            .collect()
    }

    /// Member `member`'s process.
    fn member(&self, member: usize) -> &ServerProcess {
        &self.members()[member]
    }

    /// Kills member `member` at once (SIGKILL); its directory stays.
    fn kill(&self, member: usize) {
        self.member(member).kill();
    }

    /// Starts a killed member again on the same directory and ports,
    /// without waiting (see [`wait_serving`](Self::wait_serving)).
    fn restart(&self, member: usize) {
        self.member(member).restart();
    }

    /// Freezes member `member` (SIGSTOP).
    fn pause(&self, member: usize) {
        self.member(member).pause();
    }

    /// Thaws member `member` (SIGCONT).
    fn resume(&self, member: usize) {
        self.member(member).resume();
    }

    /// Every member's role now, in member order.
    fn roles(&self) -> impl Future<Output = Vec<Role>> + Send {
        async move {
            let mut roles = Vec::new();
            for member in 0..self.members().len() {
                roles.push(self.role(member).await);
            }
            roles
        }
    }

    /// Waits until exactly one member says it leads, and returns it.
    fn leader(&self) -> impl Future<Output = usize> + Send {
        async move {
            let what = format!("one {} member to lead", Self::NAME);
            eventually(&what, LIMIT, || async {
                let roles = self.roles().await;
                let mut leaders = (0..roles.len()).filter(|&m| roles[m] == Role::Leader);
                match (leaders.next(), leaders.next()) {
                    (Some(leader), None) => Some(leader),
                    _ => None,
                }
            })
            .await
        }
    }

    /// A member that follows the leader now (waiting for one leader).
    fn follower(&self) -> impl Future<Output = usize> + Send {
        async move {
            let leader = self.leader().await;
            let what = format!("a {} member to follow member {leader}", Self::NAME);
            eventually(&what, LIMIT, || async {
                for member in (0..self.members().len()).filter(|&m| m != leader) {
                    if self.role(member).await == Role::Follower {
                        return Some(member);
                    }
                }
                None
            })
            .await
        }
    }
}

/// One node's way to the members: a [`Proxy`] in front of each, so that
/// the test can cut one member off from that node alone, and see which
/// members the node's client is using.
pub struct MemberProxies {
    proxies: Vec<Proxy>,
}

impl MemberProxies {
    /// A proxy in front of each of `members`, in their order.
    pub async fn start(members: &[SocketAddr]) -> MemberProxies {
        let mut proxies = Vec::new();
        for &member in members {
            proxies.push(Proxy::start(member).await);
        }
        MemberProxies { proxies }
    }

    /// The proxies' addresses, in member order: what the node is given.
    pub fn addrs(&self) -> Vec<SocketAddr> {
        self.proxies.iter().map(Proxy::addr).collect()
    }

    /// The proxy in front of member `member`.
    pub fn proxy(&self, member: usize) -> &Proxy {
        &self.proxies[member]
    }

    /// Cuts member `member` off from this node.
    pub fn cut(&self, member: usize) {
        self.proxies[member].cut();
    }

    /// Lets member `member` reach this node again.
    pub fn heal(&self, member: usize) {
        self.proxies[member].heal();
    }

    /// The members the node has a connection to now.
    pub fn connected(&self) -> Vec<usize> {
        (0..self.proxies.len())
            .filter(|&member| self.proxies[member].connections() > 0)
            .collect()
    }

    /// Bytes forwarded to and from each member so far, in member order.
    pub fn bytes(&self) -> Vec<u64> {
        self.proxies.iter().map(Proxy::bytes).collect()
    }

    /// The member that carried most of the node's traffic during
    /// `window`, among those it is connected to: the member its client
    /// uses. Waits for some traffic, within a minute.
    pub async fn busiest(&self, window: Duration) -> usize {
        eventually("the node to talk to a member", LIMIT, || async {
            let before = self.bytes();
            tokio::time::sleep(window).await;
            let after = self.bytes();
            let connected = self.connected();
            connected
                .into_iter()
                .map(|member| (after[member] - before[member], member))
                .filter(|(bytes, _)| *bytes > 0)
                .max()
                .map(|(_, member)| member)
        })
        .await
    }
}

/// What every replicated coordinator must let a test do, checked against
/// the real servers by each backend's tests.
#[cfg(test)]
pub(crate) mod checks {
    use super::*;
    use crate::wait::eventually;

    /// Three members serve, one leads; a killed leader is replaced by
    /// another member and, restarted on its directory and ports, serves
    /// again; a paused member is silent until it runs again; every member
    /// answers through a proxy (to `request`, in the server's protocol),
    /// and a cut proxy stops its traffic.
    pub(crate) async fn members_can_be_killed_restarted_paused_and_cut<R: Replicated>(
        request: &'static [u8],
    ) {
        let cluster = R::start().await;
        let roles = cluster.roles().await;
        assert_eq!(roles.len(), MEMBERS);
        assert!(
            roles
                .iter()
                .all(|role| matches!(role, Role::Leader | Role::Follower)),
            "{roles:?}"
        );
        let addrs = cluster.client_addrs();
        let url = R::url(&addrs);
        let hosts: Vec<String> = addrs.iter().map(ToString::to_string).collect();
        assert_eq!(url, format!("{}://{}", R::SCHEME, hosts.join(",")));

        let leader = cluster.leader().await;
        let old_pid = cluster.member(leader).pid();
        cluster.kill(leader);
        assert!(!cluster.member(leader).is_running());
        assert_eq!(cluster.role(leader).await, Role::Silent);
        let next = cluster.leader().await;
        assert_ne!(next, leader, "a killed member still leads");
        cluster.restart(leader);
        cluster.wait_serving(leader).await;
        assert_ne!(cluster.member(leader).pid(), old_pid);
        assert_eq!(cluster.member(leader).addr(), addrs[leader], "same port");

        let follower = cluster.follower().await;
        cluster.pause(follower);
        let paused = cluster.role(follower).await;
        assert_eq!(paused, Role::Silent, "member {follower} paused");
        cluster.resume(follower);
        eventually("the paused member to answer again", LIMIT, || async {
            matches!(cluster.role(follower).await, Role::Leader | Role::Follower).then_some(())
        })
        .await;

        // The test's own reads go through whichever members run.
        assert!(cluster.slot_holders("nobody").await.is_empty());
        assert_eq!(cluster.stored_mark("nobody", 0).await, None);

        let proxies = MemberProxies::start(&addrs).await;
        assert_eq!(proxies.connected(), Vec::<usize>::new());
        let before = proxies.bytes();
        let probe = |addr: SocketAddr| async move {
            let mut stream = tokio::net::TcpStream::connect(addr).await.unwrap();
            tokio::io::AsyncWriteExt::write_all(&mut stream, request)
                .await
                .unwrap();
            let mut answer = Vec::new();
            let read = tokio::io::AsyncReadExt::read_to_end(&mut stream, &mut answer);
            tokio::time::timeout(PROBE_LIMIT, read)
                .await
                .map(|_| answer.len())
        };
        let answered = probe(proxies.addrs()[1]).await.expect("member 1 answers");
        assert!(answered > 0);
        let after = proxies.bytes();
        assert_eq!((after[0], after[2]), (before[0], before[2]));
        assert!(after[1] > before[1], "{after:?}");
        proxies.cut(1);
        assert!(
            probe(proxies.addrs()[1]).await.is_err(),
            "a cut member answered"
        );
        proxies.heal(1);
        assert!(probe(proxies.addrs()[1]).await.is_ok());
    }
}
