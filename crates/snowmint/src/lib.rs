//! Snowflake IDs of every family: exact encoding and decoding, and a
//! lock-free generator.
//!
//! A Snowflake ID is a 64-bit integer made of fields: a time, the identity
//! of the node that made it, a per-node sequence. Families lay them out
//! differently; a [`Layout`] says how. Twitter's, the default, keeps the
//! sign bit of an `i64` clear and has four fields, from the most
//! significant bit down:
//!
//! | field | bits | shift | range |
//! |---|---|---|---|
//! | time | 41 | 22 | milliseconds since the epoch 1288834974657 (2010-11-04T01:42:54.657Z), up to 2080-07-10T17:30:30.208Z |
//! | datacenter | 5 | 17 | 0..=31 |
//! | machine | 5 | 12 | 0..=31 |
//! | sequence | 12 | 0 | 0..=4095 |
//!
//! So `id = (unix_ms - epoch) << 22 | datacenter << 17 | machine << 12 | sequence`,
//! and one node can make 4096 IDs per millisecond.
//!
//! ```
//! use snowmint::{Layout, SnowflakeId};
//!
//! let id = Layout::TWITTER.encode(
//!     1_700_000_000_000,
//!     &[("datacenter", 7), ("machine", 13), ("sequence", 4095)],
//! )?;
//! assert_eq!(id.to_string(), "1724551110457221119");
//!
//! let parts = Layout::TWITTER.decode("1724551110457221119".parse::<SnowflakeId>()?)?;
//! assert_eq!(parts.get("machine"), Some(13));
//! assert_eq!(parts.time().to_string(), "2023-11-14T22:13:20.000Z");
//!
//! // Other families by name: Sonyflake counts 10 ms units, its machine id
//! // at the bottom; Discord's IDs use all 64 bits.
//! let parts = Layout::SONYFLAKE.decode(SnowflakeId::from_u64(0x45eec4a4600041b))?;
//! assert_eq!((parts.time().to_string(), parts.get("machine")), ("2020-08-12T17:35:29.98Z".to_owned(), Some(1051)));
//! assert!(Layout::DISCORD.decode(SnowflakeId::from_u64(1 << 63)).is_ok());
//! # Ok::<(), snowmint::Error>(())
//! ```
//!
//! # How it fits together
//!
//! A [`SnowflakeId`] is the value: any 64-bit number, written in decimal
//! (and as a string by serde), and in hex, Crockford base32 or base58 with
//! an [`Encoding`]. A [`Layout`] says which bits mean what: named
//! [`Field`]s, each with a [`Role`] (time, node, sequence or opaque), a
//! time [`Unit`] from 1 µs to 1 s, and an epoch. It encodes [`Parts`] into
//! an ID, decodes an ID into them, and turns a time window into the range
//! of IDs made in it. [`Layout::presets`] names the families (Twitter, the
//! default, Discord, Instagram, Mastodon, Sonyflake, Baidu, Hazelcast,
//! TSID, CosId...), and the layout text describes any other; a [`Node`] is
//! the slot a generating node holds, made of the layout's node fields.
//!
//! A [`Generator`] makes IDs for one node in any layout that can mint,
//! with time from a [`Clock`] ([`SystemClock`], or [`ManualClock`] in
//! tests), over a state word it owns or, with
//! [`GeneratorBuilder::build_on`], one the caller owns (memory shared
//! between processes, as the PostgreSQL extension does).
//!
//! Every value from outside has one reading, shared by command-line flags,
//! environment variables, configuration files and HTTP parameters: times
//! and epochs ([`parse_time`], [`parse_time_us`], [`parse_instant`],
//! [`parse_instant_us`], [`parse_epoch`], and [`format_time`] and
//! [`format_time_us`] back), whole numbers in a range and durations (the
//! [`value`] module), and each type's own `FromStr` (`Layout`, `Unit`,
//! `Encoding`, `SnowflakeId`, [`ClockPolicy::from_name`]); a family's
//! field is read by [`Layout::parse_field`], and fields by name by
//! [`Layout::parse_named`]. Every failure is an [`Error`] whose message
//! names the field, the value and the valid range; [`Error::kind`] classes
//! it into an [`ErrorKind`], the one classification every front end maps
//! (to an HTTP status, a SQLSTATE, an exit code...), and [`Error::value`],
//! [`Error::min`], [`Error::max`] and [`Limit`] give the facts behind the
//! message.
//!
//! [`decimal_prefixes`] gives the shortest set of decimal prefixes of an
//! ID range, for searching text. [`inspect`] reads IDs out of any text (links, mentions, every family of
//! ID, numbers in any encoding), each reading ranked by how plausible it
//! is.
//!
//! # Generating
//!
//! ```
//! use snowmint::{Generator, Layout};
//!
//! let node = Layout::TWITTER.node(&[1, 2])?;
//! let generator = Generator::new(Layout::TWITTER, node)?;
//! let id = generator.next_id()?;
//! assert_eq!(Layout::TWITTER.node_of(id), node);
//! # Ok::<(), snowmint::Error>(())
//! ```
//!
//! The generator's rules:
//!
//! - IDs are strictly increasing, across all threads sharing the generator.
//! - The sequence restarts at 0 in each new tick (a millisecond for
//!   Twitter) and counts up to its largest value; when it runs out, the
//!   call waits for the next tick.
//! - If the clock goes back, it refuses by default (an error of kind
//!   [`ErrorKind::ClockBehind`]) until the clock catches up;
//!   [`ClockPolicy`] has the opt-in alternatives.
//! - It never issues a timestamp past the layout's last instant.
//!
//! Uniqueness *between* nodes is the deployer's part: every node that
//! generates at the same time needs its own node (slot).
//!
//! # Features
//!
//! - `serde`: `Serialize`/`Deserialize` for [`SnowflakeId`] (as a decimal
//!   string; reads strings or numbers) and [`Encoding`].

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
pub use error::{Error, InvalidIdKind, Regression};
pub use generator::{ClockPolicy, Generator, GeneratorBuilder, GeneratorStats, IdRun, OwnWord};
pub use id::SnowflakeId;
pub use kind::{ErrorKind, Limit};
pub use layout::{
    DISCORD_EPOCH_MS, Field, Layout, MAX_FIELDS, MAX_NAME_LEN, Node, Parts, Preset, Role,
    TWITTER_EPOCH_MS, Unit,
};
pub use prefixes::{DecimalPrefix, decimal_prefixes};
pub use time::{
    Rfc3339, format_time, format_time_us, parse_epoch, parse_instant, parse_instant_us, parse_time,
    parse_time_us,
};

// The examples of the crate's README are compiled and run as doctests.
#[doc = include_str!("../README.md")]
#[cfg(doctest)]
pub struct ReadmeDoctests;

// So are the Rust examples of the repository's README.
#[doc = include_str!("../../../README.md")]
#[cfg(doctest)]
pub struct RepositoryReadmeDoctests;
