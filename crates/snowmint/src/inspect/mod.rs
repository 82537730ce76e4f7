//! Reads IDs out of any text: links, mentions, and every family of ID,
//! each reading ranked by how plausible it is.
//!
//! People paste a post's link, a Discord message link or mention, a ULID
//! from a log line, a MongoDB ObjectId, a bare number: [`Inspector`] finds
//! every ID-like token in the text and says what each may be, most
//! plausible first, and why.
//!
//! ```
//! use snowmint::inspect::{Inspector, Plausibility};
//!
//! // The caller says when "now" is: the core reads no clock.
//! let inspector = Inspector::new(1_750_000_000_000);
//! let text = "see <@175928847299117063> and 01ARZ3NDEKTSV4RRFFQ69G5FAV";
//! let tokens: Vec<_> = inspector.inspect(text).collect();
//!
//! let mention = &tokens[0];
//! assert_eq!(mention.context(), Some("user mention"));
//! let best = mention.best().unwrap();
//! assert_eq!((best.family(), best.plausibility()), ("discord", Plausibility::Pinned));
//! assert_eq!(best.time().unwrap().to_string(), "2016-04-30T11:18:25.796Z");
//!
//! assert_eq!(tokens[1].best().unwrap().family(), "ulid");
//! ```
//!
//! # How it works
//!
//! - The tokenizer ([`scan`], `scan.rs`, with `url.rs` and `markup.rs`)
//!   finds tokens in one pass over the bytes, and says what each token's
//!   text may be ([`Shape`]): an integer (decimal, hex, base32, base58, an
//!   Instagram shortcode), or one of the string families, and which family
//!   the place it was found in pins.
//! - The string families (`strings/`: [`Ulid`], [`Uuid`], [`ObjectId`],
//!   [`Ksuid`], [`Tid`], [`MisskeyAid`], [`MisskeyAidx`], [`Tsid`]) read
//!   their text exactly and give its time and fields.
//! - The integer families come from a [`Catalog`] (`catalog.rs`): a name
//!   and a layout each, the core's presets by default.
//! - The ranking (`rank.rs`) turns each shape into readings ([`Reading`]):
//!   pinned first, then plausible, then implausible (a time before the
//!   family began, or in the future), each with its `why`.
//! - Times ([`Time`], `time.rs`) are exact, at each family's precision.
//!
//! # Bounds
//!
//! The work is linear in the text and the memory held at once is bounded
//! by the longest link read ([`MAX_URL`]), whatever the text: tokens are
//! handed out one at a time by [`Inspector::inspect`]. A front end that
//! answers with every token at once (HTTP, gRPC, SQL, Python) takes a
//! text of at most [`MAX_TEXT`] bytes and at most [`MAX_TOKENS`] tokens
//! through [`Inspector::inspect_all`], which says which bound was passed.

mod catalog;
mod markup;
mod rank;
mod reading;
mod scan;
mod strings;
mod time;
mod url;

pub use catalog::{Catalog, SnowflakeFamily};
pub use markup::TIMESTAMP_STYLES;
pub use rank::{FUTURE_SLACK_MS, TWITTER_FIRST_SNOWFLAKE};
pub use reading::{Field, FieldValue, Plausibility, Reading, Token};
pub use scan::{Found, MAX_URL, MIN_DIGITS, Scanner, Shape, Written, classify, scan};
pub use strings::{
    Ksuid, MisskeyAid, MisskeyAidx, ObjectId, ParseError, Problem, Tid, Tsid, Ulid, Uuid,
    UuidVariant,
};
pub use time::{MICROSECOND, MILLISECOND, NANOSECOND, SECOND, Time};

use crate::error::{Error, Label, Repr};

/// The longest text [`Inspector::inspect_all`] reads, in bytes (1 MiB):
/// ten thousand pasted lines and more.
pub const MAX_TEXT: usize = 1 << 20;

/// The most tokens [`Inspector::inspect_all`] returns for one text: the
/// calculator page's batch of 10,000 IDs.
pub const MAX_TOKENS: usize = 10_000;

/// Finds and reads the IDs of texts, against a catalog of integer
/// families and a "now".
///
/// # Examples
///
/// ```
/// use snowmint::inspect::{Inspector, Plausibility};
///
/// let inspector = Inspector::new(1_750_000_000_000); // 2025-06-15
/// // A bare Discord ID from 2016 reads as a Twitter ID from 2012, after
/// // Twitter's Snowflake began: both readings stay plausible, Twitter's
/// // first, as the default family (the other presets follow).
/// let token = inspector.inspect("175928847299117063").next().unwrap();
/// let families: Vec<_> = token.candidates().iter().map(|r| r.family()).collect();
/// assert_eq!(families[..2], ["twitter", "discord"]);
/// assert!(token.candidates()[..2].iter().all(|r| r.plausibility() == Plausibility::Plausible));
/// ```
#[derive(Debug, Clone)]
pub struct Inspector {
    catalog: Catalog,
    /// When "now" is, in Unix milliseconds: a time later than this (and a
    /// day's slack) is implausible.
    now_ms: i64,
    /// "now" as RFC 3339, as the explanations of times in the future write
    /// it.
    now_text: String,
}

impl Inspector {
    /// An inspector over the core's presets, for a "now" in Unix
    /// milliseconds.
    pub fn new(now_ms: i64) -> Inspector {
        Inspector::with_catalog(Catalog::presets(), now_ms)
    }

    /// An inspector over `catalog`'s integer families.
    pub fn with_catalog(catalog: Catalog, now_ms: i64) -> Inspector {
        Inspector {
            catalog,
            now_ms,
            now_text: crate::time::format_time(now_ms).to_string(),
        }
    }

    /// The integer families it reads numbers as.
    pub fn catalog(&self) -> &Catalog {
        &self.catalog
    }

    /// Its "now", in Unix milliseconds.
    pub fn now_ms(&self) -> i64 {
        self.now_ms
    }

    /// The tokens of `text`, each with its readings, in the order they
    /// appear. Any bytes are accepted (invalid UTF-8 is read around).
    pub fn inspect<'a, T: AsRef<[u8]> + ?Sized>(
        &'a self,
        text: &'a T,
    ) -> impl Iterator<Item = Token> + 'a {
        self.inspect_best(text, usize::MAX)
    }

    /// The tokens of `text`, each with its `count` most plausible
    /// readings: what [`Inspector::inspect`] and then [`Token::keep_best`]
    /// give, but the readings left out are only ranked, never written out
    /// ([`Inspector::read_best`]).
    ///
    /// # Examples
    ///
    /// ```
    /// use snowmint::inspect::Inspector;
    ///
    /// let inspector = Inspector::new(1_750_000_000_000);
    /// let token = inspector.inspect_best("1724551110457221119", 1).next().unwrap();
    /// assert_eq!(token.candidates().len(), 1);
    /// assert_eq!(token.best().unwrap().family(), "twitter");
    /// ```
    pub fn inspect_best<'a, T: AsRef<[u8]> + ?Sized>(
        &'a self,
        text: &'a T,
        count: usize,
    ) -> impl Iterator<Item = Token> + 'a {
        scan(text.as_ref()).map(move |found| self.read_best(&found, count))
    }

    /// Every token of `text`, for a front end that answers with all of them
    /// at once.
    ///
    /// # Errors
    ///
    /// A text longer than [`MAX_TEXT`] bytes, or with more than
    /// [`MAX_TOKENS`] tokens, is refused with an error that names the
    /// bound (the length counted in bytes) ([`ErrorKind::OutOfRange`](crate::ErrorKind::OutOfRange)).
    ///
    /// # Examples
    ///
    /// ```
    /// use snowmint::inspect::{Inspector, MAX_TOKENS};
    ///
    /// let inspector = Inspector::new(1_750_000_000_000);
    /// assert_eq!(inspector.inspect_all("<@175928847299117063>")?.len(), 1);
    ///
    /// let many = "1724551110457221119\n".repeat(MAX_TOKENS + 1);
    /// let error = inspector.inspect_all(&many).unwrap_err();
    /// assert_eq!(error.to_string(), "token count 10001+ is out of range (0..=10000)");
    /// let long = " ".repeat(2 << 20);
    /// assert_eq!(
    ///     inspector.inspect_all(&long).unwrap_err().to_string(),
    ///     "text length 2097152 is out of range (0..=1048576)"
    /// );
    /// # Ok::<(), snowmint::Error>(())
    /// ```
    pub fn inspect_all<T: AsRef<[u8]> + ?Sized>(&self, text: &T) -> Result<Vec<Token>, Error> {
        let text = text.as_ref();
        if text.len() > MAX_TEXT {
            return Err(out_of_range(
                "text length",
                text.len().to_string(),
                MAX_TEXT,
            ));
        }
        let mut tokens = Vec::new();
        for token in self.inspect(text) {
            if tokens.len() == MAX_TOKENS {
                // Counted no further: at least one more than the bound.
                let count = format!("{}+", MAX_TOKENS + 1);
                return Err(out_of_range("token count", count, MAX_TOKENS));
            }
            tokens.push(token);
        }
        Ok(tokens)
    }
}

/// The error for a text past one of the bounds.
fn out_of_range(name: &'static str, input: String, max: usize) -> Error {
    Repr::NumberOutOfRange {
        name: Label::Static(name),
        input,
        min: 0,
        max: max as i128,
    }
    .into()
}
