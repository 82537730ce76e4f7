//! `snowmint serve` in fleets: the real binary on real coordinators, each
//! started by its test on loopback ports (Debian's etcd-server, zookeeper
//! and postgresql-15). One test binary for every coordinator, so that the
//! suites link once.
//!
//! The fleet scenarios on one server (slots taken and freed, SIGTERM,
//! SIGKILL, a stopped coordinator) run against every backend by
//! [`every_fleet_scenario!`]; the faults of a replicated coordinator
//! (three etcd members, three ZooKeeper servers: a member killed, stopped
//! or cut off, two of them down) against both by
//! [`every_cluster_scenario!`], each test printing how long the fault
//! kept each node from issuing (`--nocapture`). Beside them: the
//! randomized fault test on a replicated coordinator, a node that gives up
//! a slot whose node another process on its host holds, and the tests of
//! what only one backend has. Each coordinator's tests sit under its
//! name: `cargo test -p snowmint-cli --test fleet etcd::`.
//!
//! The suites' functions are private to this crate: one that no list
//! names is never used, which `dead_code` (and so clippy) reports.

/// The `snowmint` executable cargo built for these tests.
const SNOWMINT: &str = env!("CARGO_BIN_EXE_snowmint");

/// Declares every scenario of [`scenarios`] as a test against one
/// [`CoordinatorServer`](snowmint_test_support::servers::CoordinatorServer):
/// `every_fleet_scenario!(EtcdServer);` in the server's module.
macro_rules! every_fleet_scenario {
    ($server:ty) => {
        #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
        async fn two_nodes_take_different_slots_and_never_collide() {
            crate::scenarios::two_nodes_take_different_slots::<$server>(crate::SNOWMINT).await;
        }

        #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
        async fn sigterm_frees_the_slot_at_once() {
            crate::scenarios::sigterm_frees_the_slot_at_once::<$server>(crate::SNOWMINT).await;
        }

        #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
        async fn sigkill_frees_the_slot_after_the_ttl_and_the_mark_holds() {
            crate::scenarios::sigkill_then_takeover_above_the_mark::<$server>(crate::SNOWMINT)
                .await;
        }

        #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
        async fn a_stopped_coordinator_fences_every_node_until_it_runs_again() {
            crate::scenarios::a_stopped_coordinator_fences_every_node::<$server>(crate::SNOWMINT)
                .await;
        }

        #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
        async fn a_sonyflake_fleet_claims_slots_past_twitters() {
            crate::scenarios::a_sonyflake_fleet_claims_slots_past_twitters::<$server>(
                crate::SNOWMINT,
            )
            .await;
        }

        #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
        async fn a_fleet_of_two_slot_nodes_claims_aligned_blocks() {
            crate::scenarios::a_fleet_of_two_slot_nodes_claims_aligned_blocks::<$server>(
                crate::SNOWMINT,
            )
            .await;
        }
    };
}

/// Declares every scenario of [`cluster`] as a test against one
/// [`Replicated`](snowmint_test_support::servers::replicated::Replicated)
/// coordinator, in a module `cluster`: `every_cluster_scenario!(ReplicatedEtcd);`
/// in the backend's module.
macro_rules! every_cluster_scenario {
    ($cluster:ty) => {
        mod cluster {
            use super::*;

            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn killing_the_leader_issues_no_id_twice() {
                crate::cluster::kill_the_leader::<$cluster>(crate::SNOWMINT).await;
            }

            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn killing_a_follower_issues_no_id_twice() {
                crate::cluster::kill_a_follower::<$cluster>(crate::SNOWMINT).await;
            }

            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn stopping_the_member_in_use_past_the_ttl_issues_no_id_twice() {
                crate::cluster::pause_the_member_in_use::<$cluster>(crate::SNOWMINT).await;
            }

            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn cutting_a_member_off_issues_no_id_twice() {
                crate::cluster::cut_a_member_off::<$cluster>(crate::SNOWMINT).await;
            }

            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn losing_the_quorum_fences_every_node_until_it_returns() {
                crate::cluster::lose_the_quorum::<$cluster>(crate::SNOWMINT).await;
            }
        }
    };
}

mod chaos;
mod cluster;
mod scenarios;

mod etcd;
mod guide;
mod pass_over;
mod postgres;
mod zookeeper;
