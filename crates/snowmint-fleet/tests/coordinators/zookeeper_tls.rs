//! The fleet claim engine against a real ZooKeeper (Debian's 3.8, Netty)
//! that serves TLS on its secure client port and requires a client
//! certificate: a node claims over mutual TLS, and a wrong CA or a
//! missing client certificate fence it with a sentence that says what is
//! wrong.

use crate::scenarios::refusals::{claims, refusal};
use snowmint_fleet::{CoordinatorTls, ZooKeeperBackend};
use snowmint_test_support::servers::CoordinatorServer;
use snowmint_test_support::servers::zookeeper_secure::ZooKeeperTlsServer;
use snowmint_test_support::tls::TestCa;

fn backend(cluster: &ZooKeeperTlsServer, tls: CoordinatorTls) -> ZooKeeperBackend {
    ZooKeeperBackend::new(vec![cluster.client_addr().to_string()], None).with_tls(tls)
}

/// A node with the CA and its certificate claims over TLS, and its slot
/// shows to a client on the plain port.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_node_claims_over_mutual_tls() {
    let cluster = ZooKeeperTlsServer::start().await;
    let node = crate::node::TestNode::start(
        "tls-node",
        backend(&cluster, cluster.node_tls()),
        "tls",
        "0-3",
        crate::scenarios::TTL,
    );
    let slot = node.wait_active(1).await.slot;
    node.wait_issued(0, 10).await;
    assert_eq!(
        cluster
            .slot_holders("tls")
            .await
            .get(&slot)
            .map(String::as_str),
        Some("tls-node")
    );
    node.release().await;
}

/// A CA that did not sign the server's certificate, and no client
/// certificate where one is required: each said in words.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_wrong_ca_or_a_missing_certificate_is_named() {
    let cluster = ZooKeeperTlsServer::start().await;
    let other = TestCa::new("other-ca");
    let tls =
        CoordinatorTls::new(other.ca_file()).with_identity(&cluster.node.cert, &cluster.node.key);
    let reason = refusal(backend(&cluster, tls), "wrong-ca").await;
    let expected = format!(
        "TLS handshake failed: the server's certificate is not signed by an authority in the CA file {}",
        other.ca_file().display()
    );
    assert!(reason.contains(&expected), "{reason}");

    let reason = refusal(
        backend(&cluster, CoordinatorTls::new(cluster.ca.ca_file())),
        "no-cert",
    )
    .await;
    assert!(
        reason.contains("TLS handshake failed: the server"),
        "{reason}"
    );
    assert!(reason.contains("client certificate"), "{reason}");
    claims(backend(&cluster, cluster.node_tls()), "right").await;
}
