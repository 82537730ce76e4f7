//! The fleet claim engine as the service runs it, and the scenarios that
//! every coordination server must pass.
//!
//! - `node`: an in-process node that issues IDs only under a valid claim.
//! - `scenarios`: claims, races, pauses, partitions, crashes, marks, slot
//!   keys recreated by hand and the fleet's layout,
//!   written once and run against every [`Cluster`](crate::servers::Cluster)
//!   by [`scenario_tests!`](crate::scenario_tests).

pub mod node;
pub mod scenarios;

/// Declares every shared scenario as a test against one
/// [`Cluster`](crate::servers::Cluster): `scenario_tests!(EtcdCluster);`
/// in a test file that has Tokio's `macros` and `rt-multi-thread`.
#[macro_export]
macro_rules! scenario_tests {
    ($cluster:ty) => {
        #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
        async fn claims_a_free_slot_keeps_it_and_releases_it() {
            $crate::fleet::scenarios::claim_keep_release::<$cluster>().await;
        }

        #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
        async fn forty_nodes_race_for_thirty_two_slots() {
            $crate::fleet::scenarios::race_for_slots::<$cluster>().await;
        }

        #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
        async fn a_paused_server_fences_every_node_until_it_answers_again() {
            $crate::fleet::scenarios::server_pause_fences_everyone::<$cluster>().await;
        }

        #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
        async fn a_cut_node_fences_itself_before_its_slot_is_taken() {
            $crate::fleet::scenarios::partition_fences_the_cut_node::<$cluster>().await;
        }

        #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
        async fn a_deleted_slot_key_is_noticed() {
            $crate::fleet::scenarios::a_deleted_slot_key_is_noticed::<$cluster>().await;
        }

        #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
        async fn a_crashed_node_slot_is_taken_over_above_its_mark() {
            $crate::fleet::scenarios::crash_takeover_respects_the_mark::<$cluster>().await;
        }

        #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
        async fn reservations_raise_the_shared_mark_with_compare_and_set() {
            $crate::fleet::scenarios::reserve_rules::<$cluster>().await;
        }

        #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
        async fn a_slot_key_recreated_by_a_waiting_node_stops_the_old_holder() {
            $crate::fleet::scenarios::a_slot_key_recreated_by_a_waiting_node_stops_the_old_holder::<$cluster>().await;
        }

        #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
        async fn a_mark_write_that_finds_the_key_gone_ends_the_claim_at_once() {
            $crate::fleet::scenarios::a_mark_write_that_finds_the_key_gone_ends_the_claim_at_once::<$cluster>().await;
        }

        #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
        async fn a_fleet_keeps_the_layout_it_started_with() {
            $crate::fleet::scenarios::a_fleet_keeps_the_layout_it_started_with::<$cluster>().await;
        }
    };
}
