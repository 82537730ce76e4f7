//! The coordinators the scenarios run on, placed on hosts of the
//! partition network: etcd and ZooKeeper as one server or several
//! members, PostgreSQL as one server.

use std::future::Future;

use snowmint_fleet::{CoordinatorAccess, FleetHistory, FleetName};
use snowmint_test_support::partition::Host;
use snowmint_test_support::servers::postgres::PostgresServer;
use snowmint_test_support::servers::process::ServerProcess;
use snowmint_test_support::servers::replicated::Replicated;
use snowmint_test_support::servers::replicated::etcd::ReplicatedEtcd;
use snowmint_test_support::servers::replicated::zookeeper::ReplicatedZooKeeper;
use snowmint_test_support::servers::zookeeper::ZooKeeperServer;
use snowmint_test_support::servers::{CoordinatorServer, Site};
use snowmint_test_support::wait::within;

use crate::LIMIT;

/// A coordinator on hosts of a partition network.
pub trait Placed: Send + Sync + Sized + 'static {
    /// Its name in messages and test names.
    const NAME: &'static str;

    /// Starts it with one member (or the one server) on each of `hosts`,
    /// and waits until it serves.
    fn start_on(hosts: &[Host]) -> impl Future<Output = Self> + Send;

    /// Its processes, in member order.
    fn members(&self) -> Vec<&ServerProcess>;

    /// The `--coordinator` URL the nodes are given: every member at its
    /// own address.
    fn node_url(&self) -> String;

    /// The URL the test reads it through: every member through the test's
    /// forward, which no cut reaches.
    fn test_url(&self) -> String;

    /// The member that leads now (waiting for one); 0 for a single
    /// server.
    fn leader(&self) -> impl Future<Output = usize> + Send;

    /// Waits until member `member` serves again after a restart.
    fn wait_serving(&self, member: usize) -> impl Future<Output = ()> + Send;

    /// The fleet's claim history, read through [`test_url`](Self::test_url).
    fn history(&self, fleet: &str) -> impl Future<Output = FleetHistory> + Send {
        let url = self.test_url();
        let fleet: FleetName = fleet.parse().expect("a fleet name");
        async move {
            let url = url.parse().expect("the test's coordinator URL");
            let access = CoordinatorAccess::default();
            // Read again after a transient refusal: just after a heal a
            // replicated coordinator may answer "leader changed" once.
            let read = async {
                let mut attempts = 0;
                loop {
                    match snowmint_fleet::read_fleet_history(&url, &access, &fleet).await {
                        Ok(history) => return Ok(history),
                        Err(error) if attempts < 5 => {
                            attempts += 1;
                            eprintln!("reading the claim history again after: {error}");
                            tokio::time::sleep(std::time::Duration::from_millis(500)).await;
                        }
                        Err(error) => return Err(error),
                    }
                }
            };
            within("the fleet's claim history", LIMIT, read)
                .await
                .unwrap_or_else(|error| panic!("cannot read the claim history: {error}"))
        }
    }
}

/// etcd: one member or several, as one cluster.
pub struct Etcd(ReplicatedEtcd);

impl Placed for Etcd {
    const NAME: &'static str = "etcd";

    async fn start_on(hosts: &[Host]) -> Etcd {
        let sites = hosts.iter().cloned().map(Site::Host).collect();
        Etcd(ReplicatedEtcd::start_at(sites).await)
    }

    fn members(&self) -> Vec<&ServerProcess> {
        self.0.members().iter().collect()
    }

    fn node_url(&self) -> String {
        ReplicatedEtcd::url(&self.0.served_addrs())
    }

    fn test_url(&self) -> String {
        ReplicatedEtcd::url(&self.0.client_addrs())
    }

    async fn leader(&self) -> usize {
        self.0.leader().await
    }

    async fn wait_serving(&self, member: usize) {
        self.0.wait_serving(member).await;
    }
}

/// ZooKeeper: a standalone server, or an ensemble.
pub enum ZooKeeper {
    Standalone(Box<ZooKeeperServer>),
    Ensemble(ReplicatedZooKeeper),
}

impl Placed for ZooKeeper {
    const NAME: &'static str = "ZooKeeper";

    async fn start_on(hosts: &[Host]) -> ZooKeeper {
        match hosts {
            // One server listed alone runs standalone, with no leader.
            [host] => ZooKeeper::Standalone(Box::new(ZooKeeperServer::start_on(host).await)),
            _ => {
                let sites = hosts.iter().cloned().map(Site::Host).collect();
                ZooKeeper::Ensemble(ReplicatedZooKeeper::start_at(sites).await)
            }
        }
    }

    fn members(&self) -> Vec<&ServerProcess> {
        match self {
            ZooKeeper::Standalone(server) => vec![server.process()],
            ZooKeeper::Ensemble(ensemble) => ensemble.members().iter().collect(),
        }
    }

    fn node_url(&self) -> String {
        match self {
            ZooKeeper::Standalone(server) => server.served_url(),
            ZooKeeper::Ensemble(ensemble) => ReplicatedZooKeeper::url(&ensemble.served_addrs()),
        }
    }

    fn test_url(&self) -> String {
        match self {
            ZooKeeper::Standalone(server) => server.url(),
            ZooKeeper::Ensemble(ensemble) => ReplicatedZooKeeper::url(&ensemble.client_addrs()),
        }
    }

    async fn leader(&self) -> usize {
        match self {
            ZooKeeper::Standalone(_) => 0,
            ZooKeeper::Ensemble(ensemble) => ensemble.leader().await,
        }
    }

    async fn wait_serving(&self, member: usize) {
        match self {
            ZooKeeper::Standalone(_) => panic!("a standalone ZooKeeper has no members to restart"),
            ZooKeeper::Ensemble(ensemble) => ensemble.wait_serving(member).await,
        }
    }
}

/// PostgreSQL: one server (a replica that can lag loses the guarantee:
/// docs/ARCHITECTURE.md §3).
pub struct Postgres(PostgresServer);

impl Placed for Postgres {
    const NAME: &'static str = "PostgreSQL";

    async fn start_on(hosts: &[Host]) -> Postgres {
        let [host] = hosts else {
            panic!(
                "PostgreSQL coordinates from one server, not {}",
                hosts.len()
            );
        };
        Postgres(PostgresServer::start_on(host).await)
    }

    fn members(&self) -> Vec<&ServerProcess> {
        vec![self.0.process()]
    }

    fn node_url(&self) -> String {
        self.0.served_url()
    }

    fn test_url(&self) -> String {
        self.0.url()
    }

    async fn leader(&self) -> usize {
        0
    }

    async fn wait_serving(&self, _member: usize) {
        panic!("PostgreSQL coordinates from one server, with no members to restart");
    }
}
