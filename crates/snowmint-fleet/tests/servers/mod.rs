//! Real coordination servers for tests: etcd and ZooKeeper started on free
//! loopback ports and killed on drop, and a TCP proxy that can cut a node
//! off like a partition.
//!
//! Shared by the fleet crate's tests and bench (through `support`) and by
//! the `snowmint` binary's fleet tests, which include this directory with
//! `#[path]`; each uses only part of it. `etcd` and `zookeeper` need the
//! including crate's features of the same names.
#![allow(dead_code)]

pub mod cluster;
#[cfg(feature = "etcd")]
pub mod etcd;
pub mod proxy;
#[cfg(feature = "zookeeper")]
pub mod zookeeper;

use std::future::Future;
use std::time::{Duration, Instant};

/// Polls `check` until it gives a value; panics with `what` after `limit`.
///
/// The limit is a liveness bound (something that should take a second must
/// not hang the suite), not a timing assertion: it is many times what the
/// step needs.
pub async fn eventually<T, F, Fut>(what: &str, limit: Duration, mut check: F) -> T
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Option<T>>,
{
    let started = Instant::now();
    loop {
        if let Some(value) = check().await {
            return value;
        }
        assert!(
            started.elapsed() < limit,
            "gave up after {limit:?} waiting for: {what}"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}
