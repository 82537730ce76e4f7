//! Real partitions: `snowmint serve` nodes, their clients and the
//! coordinator's members, each in a network namespace of its own
//! (`snowmint_test_support::partition`), on etcd, ZooKeeper and
//! PostgreSQL; every ID each client received is checked, with the process
//! that served it, against the fleet's claim history
//! (`snowmint_test_support::history`).
//!
//! The scenarios: (a) a node cut off from the coordinator while its
//! clients still reach it, and the same with nodes of two slots; (b) the same with the node's clock running
//! slow (libfaketime, rates 0.5 and 0.2), which it must notice, and, with
//! the clock check off, what the mark alone keeps; (c) cuts one way; (d) a
//! node partitioned with a minority member (the leader) of a 3- or
//! 5-member coordinator, healed mid-claim; (e) a nemesis doing all of them
//! at random, with clock jumps and restarts, from a seed printed for
//! replay. The coordinators run on the network's hosts, and so do the
//! nodes and their clients, whose every answer is recorded.
//!
//! Needs root (network namespaces), iproute2 and nftables; a missing one
//! fails with how to get it. Run one coordinator's with
//! `cargo test -p snowmint-cli --test partitions etcd::`.
//!
//! The benchmark of (a)'s gap (BENCHMARKS.md): `SNOWMINT_PARTITION_GAP_RUNS=20`
//! runs (a) twenty times and prints the minimum, median and maximum.

use std::time::Duration;

/// The `snowmint` executable cargo built for these tests.
const SNOWMINT: &str = env!("CARGO_BIN_EXE_snowmint");

/// A liveness bound for each wait (not a timing assertion: many times
/// what the step needs).
const LIMIT: Duration = Duration::from_secs(60);

mod coordinator;
mod fleet;
mod nemesis;
mod scenarios;

/// Declares scenarios (a) to (c) against the coordinator `$placed`, and
/// (d) with each of `$members` members.
macro_rules! every_partition_scenario {
    ($placed:ty, [$($members:tt),*]) => {
        #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
        async fn a_node_cut_off_from_the_coordinator_stops_before_the_next_holder_starts() {
            crate::scenarios::gap_runs::<$placed>(crate::SNOWMINT).await;
        }

        #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
        async fn a_a_node_of_two_slots_cut_off_stops_on_both_before_the_next_holder_starts() {
            crate::scenarios::isolated_node_of_two_slots::<$placed>(crate::SNOWMINT).await;
        }

        #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
        async fn b_a_clock_at_half_speed_fences_its_node() {
            crate::scenarios::slow_clock_fences_itself::<$placed>(crate::SNOWMINT, 0.5).await;
        }

        #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
        async fn b_a_clock_at_a_fifth_of_the_speed_fences_its_node() {
            crate::scenarios::slow_clock_fences_itself::<$placed>(crate::SNOWMINT, 0.2).await;
        }

        #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
        async fn b_with_the_clock_check_off_the_mark_keeps_a_slow_nodes_ids_unique() {
            crate::scenarios::slow_clock_unchecked_keeps_ids_unique::<$placed>(crate::SNOWMINT)
                .await;
        }

        #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
        async fn c_a_node_that_cannot_send_to_the_coordinator_stops() {
            crate::scenarios::cut_one_way::<$placed>(
                crate::SNOWMINT,
                crate::scenarios::OneWay::NodeCannotSend,
            )
            .await;
        }

        #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
        async fn c_a_node_that_cannot_hear_the_coordinator_stops() {
            crate::scenarios::cut_one_way::<$placed>(
                crate::SNOWMINT,
                crate::scenarios::OneWay::NodeCannotReceive,
            )
            .await;
        }

        #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
        async fn e_random_partitions_clock_jumps_and_restarts_issue_no_id_twice() {
            let members = [$($members),*][0];
            let test = concat!(module_path!(), "::e_random_partitions_clock_jumps_and_restarts_issue_no_id_twice");
            let test = test.split_once("::").map_or(test, |(_, rest)| rest);
            crate::nemesis::random_faults::<$placed>(crate::SNOWMINT, members, test).await;
        }

        mod d_a_minority_partition_healed_mid_claim {
            $(
                paste_members!($placed, $members);
            )*
        }
    };
}

/// One (d) test for `$members` members.
macro_rules! paste_members {
    ($placed:ty, 1) => {
        #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
        async fn on_one_server() {
            crate::scenarios::minority_partition_heals_mid_claim::<$placed>(crate::SNOWMINT, 1)
                .await;
        }
    };
    ($placed:ty, 3) => {
        #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
        async fn of_3_members() {
            crate::scenarios::minority_partition_heals_mid_claim::<$placed>(crate::SNOWMINT, 3)
                .await;
        }
    };
    ($placed:ty, 5) => {
        #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
        async fn of_5_members() {
            crate::scenarios::minority_partition_heals_mid_claim::<$placed>(crate::SNOWMINT, 5)
                .await;
        }
    };
}

mod etcd {
    every_partition_scenario!(crate::coordinator::Etcd, [3, 5]);
}

mod zookeeper {
    every_partition_scenario!(crate::coordinator::ZooKeeper, [3, 5]);
}

mod postgres {
    every_partition_scenario!(crate::coordinator::Postgres, [1]);
}
