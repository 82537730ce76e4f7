//! The fleet claim engine against a real etcd server (Debian's
//! etcd-server), started by each test on free loopback ports.

use snowmint_test_support::net::free_port;
use snowmint_test_support::servers::CoordinatorServer;
use snowmint_test_support::servers::etcd::EtcdServer;

every_scenario!(EtcdServer);

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn connect_reads_an_etcd_url() {
    let server = EtcdServer::start().await;
    let url = format!("etcd://{}", server.client_addr());
    crate::scenarios::connect_from_url(&server, &url, "etcd", "lease").await;
}

/// A closed port: the node is fenced with a sentence that names the
/// coordinator and the system's words, and says that it retries.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unreachable_coordinator_is_one_sentence() {
    let port = free_port();
    let url = format!("etcd://127.0.0.1:{port}");
    let expected = format!("cannot reach the coordinator {url} (connection refused); retrying");
    crate::scenarios::unreachable_coordinator(&url, &expected).await;
}
