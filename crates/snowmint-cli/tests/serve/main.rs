//! `snowmint serve` as its users run it: the real binary on loopback ports,
//! with a private HOME and state directory. One test binary, so that the
//! suites link once.
//!
//! - `config.rs`, `errors.rs`: settings from flags, environment and file;
//!   starts that must fail, and how they say why.
//! - `hostile.rs`: bad and hostile clients.
//! - `lock.rs`, `mark.rs`, `restart.rs`, `clock_back.rs`: one holder per
//!   node, the high-water mark, restarts, a clock set back.
//! - `grpc_discovery.rs`, `grpc_failover.rs`: the Rust client against the
//!   binary's gRPC API: discovery from a coordinator, failover.

mod clock_back;
mod config;
mod errors;
mod grpc_discovery;
mod grpc_failover;
mod hostile;
mod lock;
mod mark;
mod restart;
