//! `snowmint serve` as its users run it: the real binary on loopback ports,
//! with a private HOME and state directory. One test binary, so that the
//! suites link once.
//!
//! The suites: settings from flags, environment and file, and the starts
//! that must fail with the reason said; bad and hostile clients; one
//! holder per node, the high-water mark, restarts and a clock set back;
//! and the Rust client against the binary's gRPC API (discovery from a
//! coordinator, failover).

mod clock_back;
mod config;
mod errors;
mod grpc_discovery;
mod grpc_failover;
mod hostile;
mod lock;
mod mark;
mod restart;

/// The identity of a test's node when the test is about something else:
/// datacenter 0, machine 0, given (a node told none does not start).
const ZERO: [&str; 4] = ["--datacenter", "0", "--machine", "0"];

/// `count` IDs from `service` (`/v1/ids?count=N`), as numbers.
fn ids(service: &snowmint_test_support::binary::Service, count: usize) -> Vec<u64> {
    let body = service.json(&format!("/v1/ids?count={count}"));
    body["ids"]
        .as_array()
        .unwrap()
        .iter()
        .map(|id| id.as_str().unwrap().parse().unwrap())
        .collect()
}
