//! Benchmarks of snowmint's generator against the Snowflake crates people
//! already use, measured in one run by one harness.
//!
//! The `generator` binary drives everything and prints the markdown that
//! BENCHMARKS.md quotes:
//!
//! - [`sustained`]: IDs per second over a few seconds of the real clock, for
//!   1 thread and for 2 threads sharing one generator, with every ID kept and
//!   checked for duplicates and per-thread order afterwards;
//! - [`burst`]: the cost of one call inside a burst right after the clock
//!   ticks, next to the cost of one read of the system clock, and snowmint's
//!   batch call against single calls;
//! - [`contenders`]: the adapters that make each crate look the same to the
//!   harness, with the facts the table reports about them.
//!
//! - [`latency`]: the fixed-rate load loop of the `latency` binary, which
//!   measures each request from when it was due, so a stall counts in full.
//!
//! Benchmarks only: nothing here is run by the tests but the load loop's
//! own arithmetic.

pub mod burst;
pub mod contenders;
pub mod latency;
pub mod report;
pub mod sustained;
