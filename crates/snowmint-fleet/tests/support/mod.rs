//! Test support: real coordination servers on free loopback ports, a TCP
//! proxy that can cut one node off, and in-process nodes that issue IDs the
//! way the service does.
//!
//! Shared by `tests/etcd.rs`, `tests/zookeeper.rs` and `benches/fleet.rs`;
//! each uses only part of it.
#![allow(dead_code)]

pub mod cluster;
#[cfg(feature = "etcd")]
pub mod etcd;
pub mod node;
pub mod proxy;
pub mod scenarios;
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
        assert!(started.elapsed() < limit, "gave up after {limit:?} waiting for: {what}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}
