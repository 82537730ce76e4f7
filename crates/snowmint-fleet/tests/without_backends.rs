//! A coordinator URL given to a build that leaves its backend out (cargo
//! features `etcd`, `zookeeper`, `postgres`): the node is not started, and
//! the error names the coordinator and the feature to build with, without
//! the URL's password. Nothing listens at these URLs: the error comes
//! before any connection.
//!
//! Each test exists only in builds without its backend;
//! `cargo test -p snowmint-fleet --no-default-features --test without_backends`
//! (scripts/test) runs all three.

use snowmint::Layout;
use snowmint_fleet::{CoordinatorConfig, CoordinatorUrl, FleetName, SlotRange};

/// None of `connect`, `read_holders` and `whois` starts anything for
/// `url`; each fails with `expected`, and the text never holds `secret`.
// With every backend built in, no test calls it.
#[cfg_attr(
    all(feature = "etcd", feature = "zookeeper", feature = "postgres"),
    allow(dead_code)
)]
async fn refused(url: &str, expected: &str, secret: &str) {
    let url: CoordinatorUrl = url.parse().unwrap();
    let config = CoordinatorConfig::new(
        "fleet",
        SlotRange::new(0, 3).unwrap(),
        std::time::Duration::from_secs(10),
        "node-a".into(),
        Layout::TWITTER,
    )
    .unwrap();
    let started = snowmint_fleet::connect(&url, config);
    let error = started.err().expect("a node started without its backend");
    assert_eq!(error.to_string(), expected);

    let fleet: FleetName = "fleet".parse().unwrap();
    let read = snowmint_fleet::read_holders(&url, &fleet).await;
    let error = read.expect_err("slot keys read without the backend");
    assert_eq!(error.to_string(), expected);

    let id = snowmint::SnowflakeId::from_u64(1 << 40);
    let judged = snowmint_fleet::whois(&url, &fleet, id).await;
    let error = judged.expect_err("an ID judged without the backend");
    assert_eq!(error.to_string(), expected);
    if !secret.is_empty() {
        assert!(!expected.contains(secret), "{expected}");
        assert!(!format!("{error:?}").contains(secret), "{error:?}");
    }
}

#[cfg(not(feature = "etcd"))]
#[tokio::test]
async fn an_etcd_url_needs_the_etcd_feature() {
    refused(
        "etcd://127.0.0.1:2379,127.0.0.1:2380",
        "coordinator etcd://127.0.0.1:2379,127.0.0.1:2380: this build has no etcd support \
         (build with the cargo feature `etcd`)",
        "",
    )
    .await;
}

#[cfg(not(feature = "zookeeper"))]
#[tokio::test]
async fn a_zookeeper_url_needs_the_zookeeper_feature() {
    refused(
        "zk://127.0.0.1:2181/apps/ids",
        "coordinator zk://127.0.0.1:2181/apps/ids: this build has no zookeeper support \
         (build with the cargo feature `zookeeper`)",
        "",
    )
    .await;
}

#[cfg(not(feature = "postgres"))]
#[tokio::test]
async fn a_postgres_url_needs_the_postgres_feature_and_hides_its_password() {
    refused(
        "postgres://ids:s3cret-pw@127.0.0.1:5432/ids",
        "coordinator postgres://ids:***@127.0.0.1:5432/ids: this build has no postgres support \
         (build with the cargo feature `postgres`)",
        "s3cret-pw",
    )
    .await;
}
