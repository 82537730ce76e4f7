//! The fleet claim engine against a real etcd server (Debian's
//! etcd-server), started by each test on free loopback ports.

mod support;

use support::cluster::Cluster;
use support::etcd::EtcdCluster;
use support::scenarios;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn claims_the_lowest_free_slot_keeps_it_and_releases_it() {
    scenarios::claim_keep_release::<EtcdCluster>().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn forty_nodes_race_for_thirty_two_slots() {
    scenarios::race_for_slots::<EtcdCluster>().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_paused_server_fences_every_node_until_it_answers_again() {
    scenarios::server_pause_fences_everyone::<EtcdCluster>().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cut_node_fences_itself_before_its_slot_is_taken() {
    scenarios::partition_fences_the_cut_node::<EtcdCluster>().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_crashed_node_slot_is_taken_over_above_its_mark() {
    scenarios::crash_takeover_respects_the_mark::<EtcdCluster>().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reservations_raise_the_shared_mark_with_compare_and_set() {
    scenarios::reserve_rules::<EtcdCluster>().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn connect_reads_an_etcd_url() {
    let cluster = EtcdCluster::start().await;
    let url = format!("etcd://{}", cluster.client_addr());
    scenarios::connect_from_url(&cluster, &url, "etcd", "lease").await;
}
