//! `snowmint serve --coordinator zk://...`: the real binary against a real
//! ZooKeeper server, and against a real 3-server ensemble while a member is
//! killed, stopped or cut off, or two of them are down, or under random
//! faults.

use snowmint_test_support::servers::replicated::zookeeper::ReplicatedZooKeeper;
use snowmint_test_support::servers::zookeeper::ZooKeeperServer;

every_fleet_scenario!(ZooKeeperServer);

every_cluster_scenario!(ReplicatedZooKeeper);

/// Random faults on nodes, links, clocks and members issue no ID twice,
/// and never one below a slot's earlier holder (see `chaos/mod.rs`).
#[test]
fn random_faults_issue_no_id_twice() {
    crate::chaos::run::<ReplicatedZooKeeper>(
        crate::SNOWMINT,
        "zookeeper::random_faults_issue_no_id_twice",
    );
}
