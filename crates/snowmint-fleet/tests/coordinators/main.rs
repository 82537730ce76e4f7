//! The fleet claim engine against every real coordinator: etcd, ZooKeeper
//! and PostgreSQL servers (Debian's etcd-server, zookeeper and
//! postgresql-15), each started by its test on free loopback ports. One
//! test binary for the three, so that the scenarios link once.
//!
//! The scenarios (claims, races, pauses, partitions, crashes, marks, slot
//! keys recreated by hand, the fleet's layout) are written once, for an
//! in-process node that issues IDs only under a valid claim, as the
//! service runs one, and run against every server by [`every_scenario!`]:
//! each server's tests sit under its name (`cargo test -p snowmint-fleet
//! --all-features --test coordinators etcd::`), beside the tests of what
//! only that backend has. The same servers run secured as in production
//! (TLS, etcd's users and roles, ZooKeeper's digest and ACLs), with the
//! scenarios through them and the refusals a node explains in one
//! sentence.

/// Declares every scenario of [`scenarios`] as a test against one
/// [`CoordinatorServer`](snowmint_test_support::servers::CoordinatorServer):
/// `every_scenario!(EtcdServer);` in the server's module. The scenarios
/// are private to this crate: one left out of this list is never used,
/// which `dead_code` (and so clippy) reports.
macro_rules! every_scenario {
    ($server:ty) => {
        #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
        async fn claims_a_free_slot_keeps_it_and_releases_it() {
            crate::scenarios::claim_keep_release::<$server>().await;
        }

        #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
        async fn forty_nodes_race_for_thirty_two_slots() {
            crate::scenarios::race_for_slots::<$server>().await;
        }

        #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
        async fn a_paused_server_fences_every_node_until_it_answers_again() {
            crate::scenarios::server_pause_fences_everyone::<$server>().await;
        }

        #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
        async fn a_cut_node_fences_itself_before_its_slot_is_taken() {
            crate::scenarios::partition_fences_the_cut_node::<$server>().await;
        }

        #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
        async fn a_deleted_slot_key_is_noticed() {
            crate::scenarios::a_deleted_slot_key_is_noticed::<$server>().await;
        }

        #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
        async fn a_crashed_node_slot_is_taken_over_above_its_mark() {
            crate::scenarios::crash_takeover_respects_the_mark::<$server>().await;
        }

        #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
        async fn reservations_raise_the_shared_mark_with_compare_and_set() {
            crate::scenarios::reserve_rules::<$server>().await;
        }

        #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
        async fn a_slot_key_recreated_by_a_waiting_node_stops_the_old_holder() {
            crate::scenarios::a_slot_key_recreated_by_a_waiting_node_stops_the_old_holder::<$server>().await;
        }

        #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
        async fn a_mark_write_that_finds_the_key_gone_ends_the_claim_at_once() {
            crate::scenarios::a_mark_write_that_finds_the_key_gone_ends_the_claim_at_once::<$server>().await;
        }

        #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
        async fn several_keys_are_created_together_or_not_at_all() {
            crate::scenarios::several_keys_are_created_together_or_not_at_all::<$server>().await;
        }

        #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
        async fn a_node_holds_a_block_of_two_then_four_slots() {
            crate::scenarios::a_node_holds_a_block_of_slots::<$server>().await;
        }

        #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
        async fn a_fleet_keeps_the_layout_it_started_with() {
            crate::scenarios::a_fleet_keeps_the_layout_it_started_with::<$server>().await;
        }
    };
}

mod node;
mod scenarios;

mod etcd;
mod etcd_auth;
mod etcd_tls;
mod postgres;
mod zookeeper;
mod zookeeper_auth;
mod zookeeper_tls;
