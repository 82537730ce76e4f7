//! Test support: real coordination servers on free loopback ports, a TCP
//! proxy that can cut one node off (both in `../servers`), and in-process
//! nodes that issue IDs the way the service does.
//!
//! Shared by `tests/etcd.rs`, `tests/zookeeper.rs` and `benches/fleet.rs`;
//! each uses only part of it.
#![allow(dead_code)]

// The servers live in `../servers`, shared with the `snowmint` binary's
// fleet tests.
pub mod node;
pub mod scenarios;
#[path = "../servers/mod.rs"]
pub mod servers;

// Each test file names the server it runs against by one of these paths.
#[cfg(feature = "etcd")]
#[allow(unused_imports)]
pub use servers::etcd;
#[cfg(feature = "zookeeper")]
#[allow(unused_imports)]
pub use servers::zookeeper;
pub use servers::{cluster, eventually, proxy};

/// Declares every shared scenario as a test against one [`cluster::Cluster`].
macro_rules! scenario_tests {
    ($cluster:ty) => {
        #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
        async fn claims_a_free_slot_keeps_it_and_releases_it() {
            support::scenarios::claim_keep_release::<$cluster>().await;
        }

        #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
        async fn forty_nodes_race_for_thirty_two_slots() {
            support::scenarios::race_for_slots::<$cluster>().await;
        }

        #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
        async fn a_paused_server_fences_every_node_until_it_answers_again() {
            support::scenarios::server_pause_fences_everyone::<$cluster>().await;
        }

        #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
        async fn a_cut_node_fences_itself_before_its_slot_is_taken() {
            support::scenarios::partition_fences_the_cut_node::<$cluster>().await;
        }

        #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
        async fn a_deleted_slot_key_is_noticed() {
            support::scenarios::a_deleted_slot_key_is_noticed::<$cluster>().await;
        }

        #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
        async fn a_crashed_node_slot_is_taken_over_above_its_mark() {
            support::scenarios::crash_takeover_respects_the_mark::<$cluster>().await;
        }

        #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
        async fn reservations_raise_the_shared_mark_with_compare_and_set() {
            support::scenarios::reserve_rules::<$cluster>().await;
        }

        #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
        async fn a_slot_key_recreated_by_a_waiting_node_stops_the_old_holder() {
            support::scenarios::a_slot_key_recreated_by_a_waiting_node_stops_the_old_holder::<
                $cluster,
            >()
            .await;
        }

        #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
        async fn a_mark_write_that_finds_the_key_gone_ends_the_claim_at_once() {
            support::scenarios::a_mark_write_that_finds_the_key_gone_ends_the_claim_at_once::<
                $cluster,
            >()
            .await;
        }

        #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
        async fn a_fleet_keeps_the_layout_it_started_with() {
            support::scenarios::a_fleet_keeps_the_layout_it_started_with::<$cluster>().await;
        }
    };
}
pub(crate) use scenario_tests;
