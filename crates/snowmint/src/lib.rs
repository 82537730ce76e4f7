//! Twitter-style Snowflake IDs: exact encoding and decoding, and a lock-free
//! generator.
//!
//! A Snowflake ID is a 63-bit integer (the sign bit of an `i64` stays 0)
//! made of four fields, from the most significant bit down:
//!
//! | field | bits | shift | range |
//! |---|---|---|---|
//! | timestamp | 41 | 22 | milliseconds since the epoch 1288834974657 (2010-11-04T01:42:54.657Z), up to 2080-07-10T17:30:30.208Z |
//! | datacenter | 5 | 17 | 0..=31 |
//! | machine | 5 | 12 | 0..=31 |
//! | sequence | 12 | 0 | 0..=4095 |
//!
//! So `id = (unix_ms - epoch) << 22 | datacenter << 17 | machine << 12 | sequence`,
//! and one node can make 4096 IDs per millisecond.
//!
//! ```
//! use snowmint::{Layout, Parts, SnowflakeId};
//!
//! let id = Layout::TWITTER.encode(Parts {
//!     timestamp_ms: 1_700_000_000_000,
//!     datacenter: 7,
//!     machine: 13,
//!     sequence: 4095,
//! })?;
//! assert_eq!(id.to_string(), "1724551110457221119");
//!
//! let parts = Layout::TWITTER.decode("1724551110457221119".parse::<SnowflakeId>()?);
//! assert_eq!(parts.machine, 13);
//! assert_eq!(snowmint::format_time(parts.timestamp_ms).to_string(), "2023-11-14T22:13:20.000Z");
//! # Ok::<(), snowmint::Error>(())
//! ```
//!
//! # Layout of the crate
//!
//! - [`SnowflakeId`] (`id.rs`): the 63-bit value, checked conversions,
//!   decimal `Display`/`FromStr`, serde as a string.
//! - [`Layout`], [`Parts`], [`Node`] (`layout.rs`): which bits mean what;
//!   `encode`, `decode`, the ID range of a time window. Presets
//!   [`Layout::TWITTER`] (the default) and [`Layout::DISCORD`], or any epoch and
//!   widths that add up to 63.
//! - [`decimal_prefixes`] (`prefixes.rs`): the shortest set of decimal
//!   prefixes of an ID range, for searching text.
//! - [`Encoding`] (`encoding.rs`): hex, Crockford base32 and base58 text
//!   besides decimal.
//! - [`parse_time`], [`parse_instant`], [`parse_epoch`], [`format_time`]
//!   (`time.rs`): Unix milliseconds and RFC 3339.
//! - [`value`] (`value.rs`): the one reading of whole numbers in a range
//!   and of durations ([`value::parse_bounded`], [`value::parse_duration`],
//!   [`value::format_duration`]), shared by command-line flags, environment
//!   variables, configuration files and HTTP parameters, and how messages
//!   quote input ([`value::echo`]). The other kinds of value are read by
//!   their own types:
//!   `Layout::from_str`, [`Layout::parse_field`], `Encoding::from_str`,
//!   [`ClockPolicy::from_name`], `SnowflakeId::from_str`.
//! - [`Clock`] (`clock.rs`): where time comes from; [`SystemClock`], and
//!   [`ManualClock`] for tests.
//! - [`Generator`] (`generator.rs`): makes IDs for one node, over a state
//!   word it owns or, with [`GeneratorBuilder::build_on`], one the caller
//!   owns (memory shared between processes, as the PostgreSQL extension
//!   does).
//! - [`Error`] (`error.rs`): every failure, with a message that names the
//!   field, the value and the valid range.
//! - [`inspect`] (`inspect/`): reads IDs out of any text (links,
//!   mentions, every family of ID, numbers in any encoding), each reading
//!   ranked by how plausible it is.
//! - [`ErrorKind`] (`kind.rs`): the one classification of errors that
//!   every front end maps (to an HTTP status, a SQLSTATE, an exit code...),
//!   and the facts behind a message ([`Error::value`], [`Error::min`],
//!   [`Error::max`], [`Limit`]).
//!
//! # Generating
//!
//! ```
//! use snowmint::{Generator, Layout, Node};
//!
//! let generator = Generator::new(Layout::TWITTER, Node { datacenter: 1, machine: 2 })?;
//! let id = generator.next_id()?;
//! assert_eq!(Layout::TWITTER.node_of(id), Node { datacenter: 1, machine: 2 });
//! # Ok::<(), snowmint::Error>(())
//! ```
//!
//! The generator's rules:
//!
//! - IDs are strictly increasing, across all threads sharing the generator.
//! - The sequence restarts at 0 in each new millisecond and counts up to
//!   4095; when it runs out, the call waits for the next millisecond.
//! - If the clock goes back, it refuses by default ([`Error::ClockBehind`])
//!   until the clock catches up; [`ClockPolicy`] has the opt-in alternatives.
//! - It never issues a timestamp past the layout's last instant.
//!
//! Uniqueness *between* nodes is the deployer's part: every node that
//! generates at the same time needs its own (datacenter, machine) pair.
//!
//! # Features
//!
//! - `serde`: `Serialize`/`Deserialize` for [`SnowflakeId`] (as a decimal
//!   string; reads strings or numbers), [`Parts`], [`Node`] and
//!   [`Encoding`].

#![deny(missing_docs)]

mod clock;
mod encoding;
mod error;
mod generator;
mod id;
pub mod inspect;
mod kind;
mod layout;
mod prefixes;
mod time;
pub mod value;

pub use clock::{Clock, ManualClock, OffsetClock, SystemClock};
pub use encoding::{Encoded, Encoding, push_decimal};
pub use error::{Error, Field, InvalidIdKind};
pub use generator::{ClockPolicy, Generator, GeneratorBuilder, GeneratorStats, IdRun, OwnWord};
pub use id::SnowflakeId;
pub use kind::{ErrorKind, Limit};
pub use layout::{DISCORD_EPOCH_MS, Layout, Node, Parts, TWITTER_EPOCH_MS};
pub use prefixes::{DecimalPrefix, decimal_prefixes};
pub use time::{Rfc3339, format_time, parse_epoch, parse_instant, parse_time};

// The examples of the crate's README are compiled and run as doctests.
#[doc = include_str!("../README.md")]
#[cfg(doctest)]
pub struct ReadmeDoctests;

// So are the Rust examples of the repository's README.
#[doc = include_str!("../../../README.md")]
#[cfg(doctest)]
pub struct RepositoryReadmeDoctests;
