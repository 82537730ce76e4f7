//! The fleet claim engine against a real etcd server (Debian's
//! etcd-server), started by each test on free loopback ports.

mod support;

use support::cluster::Cluster;
use support::etcd::EtcdCluster;
use support::scenarios;

support::scenario_tests!(EtcdCluster);

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn connect_reads_an_etcd_url() {
    let cluster = EtcdCluster::start().await;
    let url = format!("etcd://{}", cluster.client_addr());
    scenarios::connect_from_url(&cluster, &url, "etcd", "lease").await;
}
