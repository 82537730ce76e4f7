//! The fleet claim engine against a real etcd that speaks only TLS and
//! requires client certificates (`--cert-file`, `--key-file`,
//! `--trusted-ca-file`, `--client-cert-auth`), with certificates made by
//! the test: every scenario passes over mutual TLS, and a wrong CA, a
//! missing, foreign or expired client certificate each fence the node
//! with a sentence that says what is wrong, while it keeps trying.

use crate::scenarios::refusals::{claims, refusal};
use snowmint_fleet::{CoordinatorTls, EtcdBackend};
use snowmint_test_support::servers::CoordinatorServer;
use snowmint_test_support::servers::etcd_tls::EtcdTlsServer;
use snowmint_test_support::tls::TestCa;

every_scenario!(EtcdTlsServer);

fn backend(cluster: &EtcdTlsServer, tls: CoordinatorTls) -> EtcdBackend {
    EtcdBackend::new(vec![cluster.client_addr().to_string()]).with_tls(tls)
}

/// A CA that did not sign the server's certificate: the node says so and
/// names the file; a node with the right CA on the same etcd claims.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_wrong_ca_is_named() {
    let cluster = EtcdTlsServer::start().await;
    let other = TestCa::new("other-ca");
    let tls =
        CoordinatorTls::new(other.ca_file()).with_identity(&cluster.node.cert, &cluster.node.key);
    let reason = refusal(backend(&cluster, tls), "wrong-ca").await;
    let expected = format!(
        "TLS handshake failed: the server's certificate is not signed by an authority in the CA file {}",
        other.ca_file().display()
    );
    assert!(reason.contains(&expected), "{reason}");
    assert!(
        reason.starts_with("cannot reach the coordinator etcd://127.0.0.1:"),
        "{reason}"
    );
    claims(backend(&cluster, cluster.node_tls()), "wrong-ca").await;
}

/// TLS without a client certificate, to an etcd that requires one.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_missing_client_certificate_is_named() {
    let cluster = EtcdTlsServer::start().await;
    let tls = CoordinatorTls::new(cluster.ca.ca_file());
    let reason = refusal(backend(&cluster, tls), "no-cert").await;
    assert!(
        reason.contains("TLS handshake failed: the server"),
        "{reason}"
    );
    assert!(reason.contains("client certificate"), "{reason}");
    assert!(reason.contains("none is configured"), "{reason}");
}

/// A client certificate from an authority etcd does not trust.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_foreign_client_certificate_is_named() {
    let cluster = EtcdTlsServer::start().await;
    let other = TestCa::new("other-ca");
    let foreign = other.client("stranger");
    let tls = CoordinatorTls::new(cluster.ca.ca_file()).with_identity(&foreign.cert, &foreign.key);
    let reason = refusal(backend(&cluster, tls), "foreign").await;
    let expected = format!(
        "TLS handshake failed: the server refused the client certificate {}",
        foreign.cert.display()
    );
    assert!(reason.contains(&expected), "{reason}");
}

/// An expired client certificate is refused before it is sent, with its
/// dates; a key that is not the certificate's, too.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_expired_client_certificate_is_named() {
    let cluster = EtcdTlsServer::start().await;
    let expired = cluster.ca.expired_client("old-node");
    let tls = CoordinatorTls::new(cluster.ca.ca_file()).with_identity(&expired.cert, &expired.key);
    let reason = refusal(backend(&cluster, tls), "expired").await;
    let expected = format!(
        "the coordinator client certificate {} expired at ",
        expired.cert.display()
    );
    assert!(reason.contains(&expected), "{reason}");
    assert!(reason.contains("renew it"), "{reason}");

    let tls =
        CoordinatorTls::new(cluster.ca.ca_file()).with_identity(&cluster.node.cert, &expired.key);
    let reason = refusal(backend(&cluster, tls), "mismatch").await;
    let expected = format!(
        "the coordinator client key {} does not belong to the certificate {}",
        expired.key.display(),
        cluster.node.cert.display()
    );
    assert!(reason.contains(&expected), "{reason}");
}

/// A plain `etcd://` URL with the CA given: the node speaks TLS.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn connect_speaks_tls_when_a_ca_is_given() {
    use snowmint_fleet::{CoordinatorAccess, CoordinatorConfig, SlotRange, connect};
    let cluster = EtcdTlsServer::start().await;
    let url = format!("etcd://{}", cluster.client_addr()).parse().unwrap();
    let config = CoordinatorConfig::new(
        "via-url",
        SlotRange::new(0, 0).unwrap(),
        crate::scenarios::TTL,
        "via-url".into(),
        snowmint::Layout::TWITTER,
    )
    .unwrap()
    .with_access(CoordinatorAccess::default().with_tls(cluster.node_tls()));
    let source = connect(&url, config).unwrap();
    let mut states = source.state();
    snowmint_test_support::wait::eventually(
        "a claim over TLS",
        std::time::Duration::from_secs(60),
        || {
            let claim = states
                .borrow_and_update()
                .claim_at(std::time::Instant::now())
                .cloned();
            async move { claim }
        },
    )
    .await;
    assert_eq!(cluster.slot_holders("via-url").await.len(), 1);
    source.release().await;
}
