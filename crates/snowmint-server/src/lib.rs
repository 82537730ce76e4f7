//! The snowmint HTTP ID service: the logic behind `snowmint serve`.
//!
//! A fleet of applications calls it for Twitter-style Snowflake IDs, over
//! HTTP/JSON and, with `--grpc-listen`, over gRPC ([`grpc`]); it also
//! explains IDs (decode, encode, time windows, layouts). The contract is in
//! docs/service.md and docs/fleet.md and its invariants in
//! docs/ARCHITECTURE.md §3; `/openapi.json` describes every endpoint.
//!
//! ```no_run
//! use snowmint_server::config::{Config, Layer};
//!
//! # async fn example() -> Result<(), Box<dyn std::error::Error>> {
//! let config = Config::load(Layer::flags())?;
//! let listener = tokio::net::TcpListener::bind(config.listen).await?;
//! snowmint_server::serve(config, listener, snowmint_server::shutdown_signal()).await?;
//! # Ok(())
//! # }
//! ```
//!
//! For tests, [`app`] gives the service as a `Router` to call without a
//! socket, over state built from any [`SlotSource`](snowmint_fleet::SlotSource)
//! and [`Clock`](snowmint::Clock).
//!
//! # Layout
//!
//! - `config/`: [`config::Config`], settings from flags > environment >
//!   TOML file > defaults, each read by the one parser of its kind of value
//!   (`snowmint`'s and `snowmint_fleet`'s).
//! - `serve.rs`: [`start`], [`run`], [`run_with_grpc`], [`serve`]: from a
//!   configuration to a running node and back down (graceful shutdown,
//!   claim release).
//! - `check.rs`: [`check`], what a configuration would make a node do
//!   (`snowmint serve --check`), found without binding or claiming.
//! - `net/`: [`Limits`]: accepting connections on both listeners and
//!   holding each client to limits (a connection cap under the descriptor
//!   limit, deadlines on first requests, request heads, idling, unread
//!   answers and pings, a maximum age, streams and calls in flight).
//! - The [`Issuer`] (re-exported from `snowmint_fleet`), which follows
//!   the node's claim and issues IDs only when they are fenced and covered
//!   by the high-water mark; [`Refusal`] when it may not; [`NodeReport`].
//!   The service is a front end over it.
//! - `net/tls.rs`: [`Tls`], rustls on both listeners; `auth/`: [`auth`],
//!   bearer tokens; `reload.rs`: both files read again when they change
//!   or on SIGHUP.
//! - `state.rs`: [`AppState`], what handlers share.
//! - `api/`: [`app`] and [`routes`], the handlers, and reading their
//!   parameters with the same parsers as the configuration's
//!   (`api/params.rs`).
//! - `inputs.rs`: the calculator's inputs (layout, defaulting to the
//!   node's; instants; encodings; ID text), read alike for HTTP and gRPC.
//! - `body/`: [`body`], the types every JSON answer is serialized from
//!   (also `snowmint layout --format json`).
//! - `grpc/`: [`grpc`], the gRPC API (`--grpc-listen`): `snowmint.v1.IdService`,
//!   health and reflection, over the same state as the HTTP API.
//! - `memcached/`: memcached's text protocol (`--memcached-listen`):
//!   `get`/`gets` answer new IDs from the same issuer.
//! - `error.rs`: [`ApiError`], the one error answer.
//! - `metrics.rs`: [`Metrics`], Prometheus counters and gauges.
//! - `peer_clock.rs`: [`peer_clock`], reading another node's clock over
//!   HTTP for the claim engine's clock check.
//! - `openapi.rs`: [`openapi`], the OpenAPI 3.1 document, generated from
//!   the handlers and the body types.
//! - `page.rs` and `assets/`: the calculator page at `/`, built into the
//!   binary.
//!
//! # Guarantees
//!
//! - No ID is handed out unless the node holds a claim that is not past its
//!   deadline, and the ID's timestamp is covered by a high-water mark that
//!   is on disk (and recorded by the slot source).
//! - Bad input is answered with a 4xx naming the parameter and its range;
//!   refusals are 503 with `Retry-After`; no input makes a handler panic.

mod api;
pub mod auth;
pub mod body;
mod check;
pub mod config;
mod error;
pub mod grpc;
mod inputs;
pub mod memcached;
mod metrics;
mod net;
pub mod openapi;
pub mod page;
pub mod peer_clock;
mod reload;
mod serve;
mod state;

pub use api::{MAX_BODY_BYTES, MAX_URI_BYTES, app, routes};
pub use check::{Plan, check, check_with_clock, probe};
pub use error::ApiError;
pub use metrics::Metrics;
pub use net::{Limit, Limits, Listener, Tls, TlsError, TlsFiles};
pub use serve::{
    FrontEnds, ServeError, clock, run, run_front_ends, run_with_grpc, serve, shutdown_signal,
    slot_source, start, startup_line,
};
pub use snowmint_fleet::{Issuer, IssuerOptions, NodeReport, Refusal};
pub use state::AppState;
