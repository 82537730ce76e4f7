//! The randomized fault test on a 3-member etcd cluster: five real
//! `snowmint serve` nodes, clients pulling IDs from all of them, one random
//! fault every 1 to 3 s for 60 s (`SNOWMINT_CHAOS_SECONDS`), then a check
//! that no ID was issued twice and every slot's later holder stayed above
//! the earlier one. The seed is printed, and settable
//! (`SNOWMINT_CHAOS_SEED`). What is checked, and why, is in
//! `snowmint_test_support::chaos`.

use snowmint_test_support::servers::replicated::etcd::ReplicatedEtcd;

/// Random faults on nodes, links, clocks and members issue no ID twice,
/// and never one below a slot's earlier holder.
#[test]
fn random_faults_on_etcd_issue_no_id_twice() {
    snowmint_test_support::chaos::run::<ReplicatedEtcd>(
        env!("CARGO_BIN_EXE_snowmint"),
        "chaos_etcd",
    );
}
