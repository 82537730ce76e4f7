//! A Rust client for snowmint's gRPC API (`snowmint serve --grpc-listen`).
//!
//! It asks a fleet of nodes for IDs and hides three things applications
//! otherwise write themselves:
//!
//! - **Prefetch with bounded staleness.** IDs come from a local buffer
//!   refilled in the background before it runs dry (a current batch and a
//!   spare, a double buffer), so most calls cost no round trip. No ID
//!   handed out is older than `max_age` (default 100 ms): its timestamp,
//!   read with the fleet's layout, is compared with this machine's clock
//!   when it is handed out, and older IDs are dropped, never reused. A
//!   caller that needs fresh IDs sets `max_age` to zero and gets a round
//!   trip per call. (Clocks of client and nodes are assumed close, as NTP
//!   keeps them; a node whose clock runs behind this machine's by more than
//!   `max_age` has all its IDs dropped.)
//! - **Failover.** A node that errors, refuses (fenced, clock behind: gRPC
//!   `UNAVAILABLE`, whose `retry-after-ms` is honoured) or does not answer
//!   within the per-call timeout is skipped with backoff, and the call goes
//!   to the next node. A caller that finds the buffer empty while a refill
//!   waits on a node asks another node itself after a quarter of the
//!   per-call timeout, so a node that stops answering costs the application
//!   that much, not a whole timeout. The application sees an error only
//!   when no node can serve within the call's deadline.
//! - **Discovery.** Instead of a list of endpoints, the client can read the
//!   nodes' gRPC addresses from the fleet's slot keys on the coordinator
//!   (etcd, ZooKeeper or PostgreSQL), and follows them as nodes come and go.
//! - **Security.** TLS to the nodes with the fleet's CA
//!   ([`ClientBuilder::tls_ca`]), a client certificate for nodes that
//!   require one ([`ClientBuilder::tls_identity`]), and a bearer token
//!   ([`ClientBuilder::token`]); keys and tokens are never shown.
//!
//! IDs are unique across nodes, because each node holds its own slot, and
//! strictly increasing from any one node. **Order across nodes is not
//! promised**: an ID from one node may be smaller than an ID handed out
//! earlier from another, so do not use the client's IDs to order events
//! across nodes more finely than their timestamps.
//!
//! ```no_run
//! use std::time::Duration;
//! use snowmint_client::Client;
//!
//! # async fn example() -> Result<(), snowmint_client::Error> {
//! let client = Client::builder()
//!     .endpoints(["http://10.0.0.1:9090", "http://10.0.0.2:9090"])
//!     .max_age(Duration::from_millis(100))
//!     .build()
//!     .await?;
//! let id = client.next_id().await?;
//! let batch = client.next_ids(100).await?;
//! println!("{id} and {} more; {:?}", batch.len(), client.stats());
//! # Ok(())
//! # }
//! ```
//!
//! # How it fits together
//!
//! A [`ClientBuilder`] takes the nodes (a list of endpoints, or a fleet to
//! discover on its coordinator) and the settings (`max_age`, the batch
//! size, the per-call timeout, the call's deadline, the backoff) and
//! builds a [`Client`]. The client owns the buffer and the staleness
//! rule; behind it, a node set picks nodes round robin and keeps the
//! ones that failed in backoff, and discovery, when asked for, keeps that
//! set in step with the fleet's slot keys. TLS and the bearer token are
//! set once on the builder and apply to every node, discovered ones
//! included. [`BlockingClient`] wraps a client for code that is not
//! async, and [`Stats`] counts what the client did. [`proto`] has the
//! messages and the raw tonic stub of `snowmint.v1.IdService`, for calls
//! the client does not wrap (`StreamIds`, the calculator).

mod blocking;
mod builder;
mod client;
mod discovery;
mod error;
mod nodes;
mod secure;
mod stats;

pub use blocking::BlockingClient;
pub use builder::{ClientBuilder, MAX_BATCH};
pub use client::Client;
pub use error::Error;
/// How discovery reaches a secured coordinator
/// ([`ClientBuilder::coordinator_access`]).
pub use snowmint_fleet::{CoordinatorAccess, CoordinatorTls, Secret};
pub use stats::Stats;

// The examples of the crate's README are compiled as doctests.
#[doc = include_str!("../README.md")]
#[cfg(doctest)]
pub struct ReadmeDoctests;

/// The types and the tonic client generated from
/// `proto/snowmint/v1/snowmint.proto` (see that file for the contract),
/// checked in (`generated/`) so that building needs no `protoc`; the
/// server's `tests/generated.rs` checks that they match the `.proto`.
pub mod proto {
    #![allow(missing_docs, clippy::all)]
    include!("generated/snowmint.v1.rs");
}
