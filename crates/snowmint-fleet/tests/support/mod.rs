//! Test support: real coordination servers on free loopback ports, a TCP
//! proxy that can cut one node off, and in-process nodes that issue IDs the
//! way the service does.
//!
//! Shared by `tests/etcd.rs`, `tests/zookeeper.rs` and `benches/fleet.rs`;
//! each uses only part of it.
#![allow(dead_code)]

pub mod cluster;
#[cfg(feature = "etcd")]
pub mod etcd;
pub mod node;
pub mod proxy;
pub mod scenarios;
#[cfg(feature = "zookeeper")]
pub mod zookeeper;

use std::future::Future;
use std::time::{Duration, Instant};

/// Polls `check` until it gives a value; panics with `what` after `limit`.
///
/// The limit is a liveness bound (something that should take a second must
/// not hang the suite), not a timing assertion: it is many times what the
/// step needs.
pub async fn eventually<T, F, Fut>(what: &str, limit: Duration, mut check: F) -> T
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Option<T>>,
{
    let started = Instant::now();
    loop {
        if let Some(value) = check().await {
            return value;
        }
        assert!(
            started.elapsed() < limit,
            "gave up after {limit:?} waiting for: {what}"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// Declares every shared scenario as a test against one [`cluster::Cluster`].
macro_rules! scenario_tests {
    ($cluster:ty) => {
        #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
        async fn claims_the_lowest_free_slot_keeps_it_and_releases_it() {
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
    };
}
pub(crate) use scenario_tests;
