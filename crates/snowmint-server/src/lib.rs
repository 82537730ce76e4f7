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
//! let node = snowmint_server::serve(config, snowmint_server::shutdown_signal()).await?;
//! println!("listening on http://{}", node.listeners().http());
//! node.stopped().await?;
//! # Ok(())
//! # }
//! ```
//!
//! For tests, [`app`] gives the service as a `Router` to call without a
//! socket (and [`grpc::routes`] the gRPC services), over state built from
//! any [`SlotSource`](snowmint_fleet::SlotSource) and
//! [`Clock`](snowmint::Clock); [`AppState::serve`] serves such a state on
//! sockets as [`serve`] does.
//!
//! # How it fits together
//!
//! A node is a front end over the fleet's [`Issuer`] (re-exported here
//! with [`Refusal`] and [`NodeReport`]): the issuer follows the node's
//! claim and hands an ID out only while the claim is in force and the
//! high-water mark covers it. Everything in this crate is about reaching
//! it, and about answering the questions around it.
//!
//! [`config::Config`] is where a node starts: every setting is declared
//! once and read from flags, the environment and a TOML file by the one
//! parser of its kind. [`serve`] is the one entry that turns a
//! configuration into a running node ([`Serving`]: a slot source, its
//! issuer, every listener bound) and brings it down again: requests in
//! flight finish, then the claim is released; it prints nothing.
//! [`check`] goes as far as a start can without binding, claiming or
//! writing (`snowmint serve --check`).
//!
//! Every protocol the node speaks is a [`Listener`]: its settings, what
//! guards it and what serves it. Connections come in through [`Limits`],
//! which accepts on every listener under one connection cap (below the
//! descriptor limit) and holds each client to the same deadlines, and
//! through [`Tls`] when the listener has a certificate. Then each
//! protocol is one front end over the same [`AppState`]: the HTTP routes
//! of [`app`] and [`routes`] (with Leaf's API among them), the gRPC API of
//! [`grpc`], and memcached's text protocol. Bearer tokens ([`auth`])
//! guard what issues, on every listener alike; the TLS and token files
//! are read again when they change. The calculator's inputs (the layout,
//! the instants, encodings, ID text) are read by one module for HTTP and
//! gRPC alike, so a value means the same and is refused with the same
//! message through either.
//!
//! What comes back is typed: every JSON answer is a type of [`body`], from
//! which [`openapi`] also generates the OpenAPI document, and every error
//! is an [`ApiError`]. [`Metrics`] counts what happened for `/metrics`,
//! registered family by family; [`peer_clock`] lets the claim engine read
//! other nodes' clocks over HTTP; the calculator page at `/` is built into
//! the binary.
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
mod listener;
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
pub use listener::{Guard, Listener, Listeners};
pub use metrics::Metrics;
pub use net::{Limit, Limits, Tls, TlsError, TlsFiles};
pub use serve::{ServeError, Serving, clock, serve, shutdown_signal, slot_source, startup_line};
pub use snowmint_fleet::{Issuer, IssuerOptions, NodeReport, Refusal};
pub use state::AppState;
