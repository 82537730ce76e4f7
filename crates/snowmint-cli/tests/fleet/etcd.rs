//! `snowmint serve --coordinator etcd://...`: the real binary against a
//! real etcd server, and against a real 3-member etcd cluster while a
//! member is killed, stopped or cut off, or two of them are down, or under
//! random faults.

use snowmint_test_support::servers::etcd::EtcdServer;
use snowmint_test_support::servers::replicated::etcd::ReplicatedEtcd;

every_fleet_scenario!(EtcdServer);

every_cluster_scenario!(ReplicatedEtcd);

/// Random faults on nodes, links, clocks and members issue no ID twice,
/// and never one below a slot's earlier holder (see `chaos/mod.rs`).
#[test]
fn random_faults_issue_no_id_twice() {
    crate::chaos::run::<ReplicatedEtcd>(crate::SNOWMINT, "etcd::random_faults_issue_no_id_twice");
}
