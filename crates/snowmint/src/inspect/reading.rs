//! What a token may be: its readings, each with a family, a time, the
//! family's fields and why it ranks where it does.

use std::borrow::Cow;
use std::fmt;
use std::ops::Range;

use super::time::Time;

/// How much a reading is to be believed, best first: the order readings
/// are ranked in.
///
/// # Examples
///
/// ```
/// use snowmint::inspect::Plausibility;
///
/// assert!(Plausibility::Pinned < Plausibility::Plausible);
/// assert!(Plausibility::Plausible < Plausibility::Implausible);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Plausibility {
    /// Where the token was found names the family: the host of a link
    /// (x.com, discord.com), Discord's markup. It ranks first even when its
    /// time is odd, and its `why` says so.
    Pinned,
    /// Nothing speaks against it: its time falls between when the family
    /// began and now (or it has no time, as a random UUID).
    Plausible,
    /// Its time falls before the family existed or in the future.
    Implausible,
}

impl Plausibility {
    /// The name used in JSON and tables: `pinned`, `plausible`,
    /// `implausible`.
    pub const fn name(self) -> &'static str {
        match self {
            Plausibility::Pinned => "pinned",
            Plausibility::Plausible => "plausible",
            Plausibility::Implausible => "implausible",
        }
    }
}

impl fmt::Display for Plausibility {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The value of a named field.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum FieldValue {
    /// A small whole number (a worker, a sequence, a counter), written as
    /// a JSON number: always below 2^53, so that JavaScript reads it
    /// exactly.
    Number(u64),
    /// Anything else: an ID in decimal, random bits in hex, a name.
    Text(String),
}

impl fmt::Display for FieldValue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FieldValue::Number(n) => write!(f, "{n}"),
            FieldValue::Text(text) => f.write_str(text),
        }
    }
}

/// A named field of a reading, named as the family names it (Discord's
/// `worker`, a UUID's `clock_seq`, a ULID's `randomness`).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Field {
    /// The family's name for it.
    pub name: Cow<'static, str>,
    /// Its value.
    pub value: FieldValue,
}

impl Field {
    /// A numeric field. Values at or above 2^53 are written as decimal text,
    /// so that no reader rounds them.
    pub fn number(name: impl Into<Cow<'static, str>>, value: u64) -> Field {
        let value = if value < 1 << 53 {
            FieldValue::Number(value)
        } else {
            FieldValue::Text(value.to_string())
        };
        Field {
            name: name.into(),
            value,
        }
    }

    /// A text field.
    pub fn text(name: impl Into<Cow<'static, str>>, value: impl Into<String>) -> Field {
        Field {
            name: name.into(),
            value: FieldValue::Text(value.into()),
        }
    }
}

/// One way to read a token: as an ID of one family.
///
/// # Examples
///
/// ```
/// use snowmint::inspect::{Inspector, Plausibility};
///
/// let inspector = Inspector::new(1_750_000_000_000);
/// let token = inspector.inspect("01ARZ3NDEKTSV4RRFFQ69G5FAV").next().unwrap();
/// let reading = &token.candidates()[0];
/// assert_eq!(reading.family(), "ulid");
/// assert_eq!(reading.time().unwrap().to_string(), "2016-07-30T23:54:10.259Z");
/// assert_eq!(reading.plausibility(), Plausibility::Plausible);
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reading {
    pub(crate) family: Cow<'static, str>,
    pub(crate) time: Option<Time>,
    pub(crate) fields: Vec<Field>,
    pub(crate) plausibility: Plausibility,
    pub(crate) why: String,
}

impl Reading {
    /// The family's name: a layout preset (`twitter`, `discord`...) or a
    /// string family (`ulid`, `uuid`, `objectid`, `ksuid`, `tid`,
    /// `misskey-aid`, `misskey-aidx`, `tsid`), or `discord-timestamp` for
    /// Discord's `<t:…>` markup, which is a time and not an ID.
    pub fn family(&self) -> &str {
        &self.family
    }

    /// When the ID was made, at the family's precision; `None` for IDs
    /// that hold no time (a random UUID).
    pub fn time(&self) -> Option<Time> {
        self.time
    }

    /// The family's fields, in the family's order.
    pub fn fields(&self) -> &[Field] {
        &self.fields
    }

    /// A field by name.
    pub fn field(&self, name: &str) -> Option<&FieldValue> {
        self.fields
            .iter()
            .find(|field| field.name == name)
            .map(|field| &field.value)
    }

    /// How much to believe it; readings are ranked by it.
    pub fn plausibility(&self) -> Plausibility {
        self.plausibility
    }

    /// Why it ranks where it does, for people: what pinned the family, or
    /// where its time falls against the family's life and now.
    pub fn why(&self) -> &str {
        &self.why
    }
}

/// An ID-like token found in a text, with its readings, most plausible
/// first.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Token {
    pub(crate) input: String,
    pub(crate) span: Range<usize>,
    pub(crate) context: Option<&'static str>,
    pub(crate) candidates: Vec<Reading>,
}

impl Token {
    /// The token's text as it appears in the input (`1234…`, a ULID,
    /// `<t:1462015105:R>`).
    pub fn input(&self) -> &str {
        &self.input
    }

    /// Where it is in the input, in bytes.
    pub fn span(&self) -> Range<usize> {
        self.span.clone()
    }

    /// Where it was found, when that says what it is: `message in a
    /// Discord link`, `user mention`, `post in a Bluesky link`.
    pub fn context(&self) -> Option<&'static str> {
        self.context
    }

    /// Its readings, most plausible first (see [`Plausibility`]); among
    /// equals, in the catalog's order for integers.
    pub fn candidates(&self) -> &[Reading] {
        &self.candidates
    }

    /// The first reading, if any.
    pub fn best(&self) -> Option<&Reading> {
        self.candidates.first()
    }

    /// Keeps the `count` most plausible readings and drops the rest (an
    /// answer about many tokens that needs only the best of each).
    ///
    /// # Examples
    ///
    /// ```
    /// use snowmint::inspect::Inspector;
    ///
    /// let mut token = Inspector::new(1_750_000_000_000).inspect("1724551110457221119").next().unwrap();
    /// assert!(token.candidates().len() > 1);
    /// token.keep_best(1);
    /// assert_eq!(token.candidates().len(), 1);
    /// assert_eq!(token.best().unwrap().family(), "twitter");
    /// ```
    pub fn keep_best(&mut self, count: usize) {
        self.candidates.truncate(count);
    }
}

#[cfg(feature = "serde")]
mod serde_impl {
    use serde::ser::{Serialize, SerializeMap, Serializer};

    use super::{FieldValue, Reading, Token};

    /// `{"family", "time", <fields>..., "plausibility", "why"}`: the fields
    /// sit beside the family's name and time, named as the family names
    /// them (a field never takes one of the four fixed keys).
    impl Serialize for Reading {
        fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
            let mut map = serializer.serialize_map(Some(self.fields.len() + 4))?;
            map.serialize_entry("family", &self.family)?;
            map.serialize_entry("time", &self.time)?;
            for field in &self.fields {
                match &field.value {
                    FieldValue::Number(n) => map.serialize_entry(&field.name, n)?,
                    FieldValue::Text(text) => map.serialize_entry(&field.name, text)?,
                }
            }
            map.serialize_entry("plausibility", self.plausibility.name())?;
            map.serialize_entry("why", &self.why)?;
            map.end()
        }
    }

    /// `{"input", "context", "start", "end", "candidates"}`.
    impl Serialize for Token {
        fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
            let mut map = serializer.serialize_map(Some(5))?;
            map.serialize_entry("input", &self.input)?;
            map.serialize_entry("context", &self.context)?;
            map.serialize_entry("start", &self.span.start)?;
            map.serialize_entry("end", &self.span.end)?;
            map.serialize_entry("candidates", &self.candidates)?;
            map.end()
        }
    }
}
