//! The layout as text: the one reader ([`FromStr`]) and the one writer
//! ([`Layout::spec`], [`Display`](fmt::Display)).
//!
//! ```text
//! LAYOUT = BASE [ "@" EPOCH ] [ "," UNIT ]
//! BASE   = PRESET                          twitter, discord, sonyflake, ...
//!        | T "/" D "/" M "/" S             Twitter's 63-bit shape: time/datacenter/machine/sequence widths
//!        | FIELD { "/" FIELD }             most significant first
//! FIELD  = NAME ":" WIDTH [ ":" ROLE ]     ROLE = time | node | sequence | opaque
//! EPOCH  = Unix milliseconds | RFC 3339    default: the preset's, else Twitter's
//! UNIT   = N "us" | N "ms" | N "s"         1us..=1s; default: the preset's, else 1ms
//! ```
//!
//! A field named `time` is the time field, `sequence` the sequence field,
//! and `datacenter`, `machine` and `node` are node fields; any other name
//! says its role (`worker:5:node`).

use std::fmt;
use std::str::FromStr;

use super::{Layout, Role, TWITTER_EPOCH_MS, Unit, invalid};
use crate::error::{Error, Repr};
use crate::value::echo;

/// The role a field's name gives it when the text says none.
fn role_of_name(name: &str) -> Option<Role> {
    match name {
        "time" => Some(Role::Time),
        "sequence" => Some(Role::Sequence),
        "datacenter" | "machine" | "node" => Some(Role::Node),
        _ => None,
    }
}

fn role_named(text: &str) -> Option<Role> {
    match text {
        "time" => Some(Role::Time),
        "node" => Some(Role::Node),
        "sequence" | "seq" => Some(Role::Sequence),
        "opaque" => Some(Role::Opaque),
        _ => None,
    }
}

/// The error for a name that is neither a preset nor a layout text.
pub(super) fn unknown(name: &str) -> Error {
    Repr::UnknownLayout { name: echo(name) }.into()
}

impl Layout {
    /// The layout spelled out, one text for each layout however it was
    /// written: `T/D/M/S@EPOCH` for Twitter's shape (63 bits of time,
    /// datacenter, machine and sequence, in milliseconds), otherwise each
    /// field as `name:width`, with its role where the name does not say
    /// it, then `@EPOCH` (Unix milliseconds) and `,UNIT` unless the unit is
    /// 1 ms. [`Display`](fmt::Display) writes a preset's name instead.
    ///
    /// # Examples
    ///
    /// ```
    /// use snowmint::Layout;
    ///
    /// assert_eq!(Layout::TWITTER.spec(), "41/5/5/12@1288834974657");
    /// assert_eq!(Layout::SONYFLAKE.spec(), "time:39/sequence:8/machine:16@1409529600000,10ms");
    /// assert_eq!(
    ///     Layout::DISCORD.spec(),
    ///     "time:42/worker:5:node/process:5:node/increment:12:sequence@1420070400000"
    /// );
    /// let spelled: Layout = "41/5/5/12@2010-11-04T01:42:54.657Z".parse()?;
    /// assert_eq!(spelled.spec(), Layout::TWITTER.spec());
    /// # Ok::<(), snowmint::Error>(())
    /// ```
    pub fn spec(&self) -> String {
        let fields = self.fields();
        let twitter_shape = self.bits == 63
            && self.unit == Unit::MILLISECOND
            && fields.len() == 4
            && fields
                .iter()
                .zip(["time", "datacenter", "machine", "sequence"])
                .all(|(field, name)| {
                    field.name() == name && role_of_name(name) == Some(field.role)
                });
        let mut text = if twitter_shape {
            let widths: Vec<String> = fields.iter().map(|f| f.width.to_string()).collect();
            widths.join("/")
        } else {
            let written: Vec<String> = fields
                .iter()
                .map(|field| {
                    if role_of_name(field.name()) == Some(field.role) {
                        format!("{}:{}", field.name, field.width)
                    } else {
                        format!("{}:{}:{}", field.name, field.width, field.role)
                    }
                })
                .collect();
            written.join("/")
        };
        text.push_str(&format!("@{}", self.epoch_ms));
        if self.unit != Unit::MILLISECOND {
            text.push_str(&format!(",{}", self.unit));
        }
        text
    }
}

/// Writes the preset name when the layout is a preset, else its
/// [`spec`](Layout::spec), which [`FromStr`] reads back.
impl fmt::Display for Layout {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.name() {
            Some(name) => f.write_str(name),
            None => f.write_str(&self.spec()),
        }
    }
}

/// Reads a layout: a preset name (any case), Twitter-shaped widths
/// `T/D/M/S`, or named fields `name:width[:role]/...`, most significant
/// first; any of them optionally followed by `@EPOCH` (Unix milliseconds
/// or RFC 3339, read by [`parse_epoch`](crate::parse_epoch)) and `,UNIT`
/// (`1us` to `1s`). Without them a preset keeps its own epoch and unit;
/// widths and fields take Twitter's epoch and milliseconds.
///
/// # Examples
///
/// ```
/// use snowmint::{Layout, Unit};
///
/// assert_eq!("twitter".parse::<Layout>()?, Layout::TWITTER);
/// assert_eq!("twitter@2015-01-01T00:00:00Z".parse::<Layout>()?.epoch_ms(), 1420070400000);
/// let custom: Layout = "42/0/10/11@1600000000000".parse()?;
/// assert_eq!(custom.to_string(), "42/0/10/11@1600000000000");
///
/// // Sonyflake, spelled out: 10 ms units, the machine id at the bottom.
/// let sonyflake: Layout = "time:39/sequence:8/machine:16@2014-09-01T00:00:00Z,10ms".parse()?;
/// assert_eq!(sonyflake, Layout::SONYFLAKE);
/// // A preset with another unit.
/// assert_eq!("sonyflake-v2,1ms".parse::<Layout>()?.unit(), Unit::MILLISECOND);
/// // Roles for names that do not say theirs.
/// let discord: Layout =
///     "time:42/worker:5:node/process:5:node/increment:12:sequence@1420070400000".parse()?;
/// assert_eq!(discord, Layout::DISCORD);
///
/// assert_eq!(
///     "time:41/worker:10/sequence:12".parse::<Layout>().unwrap_err().to_string(),
///     "invalid layout: field \"worker\" needs a role (such as worker:10:node; roles: time, node, sequence, opaque)"
/// );
/// assert_eq!(
///     "twitter@soon".parse::<Layout>().unwrap_err().to_string(),
///     "invalid layout: epoch \"soon\" is not valid: the year needs 4 digits \
///      (expected Unix milliseconds such as 1700000000000, or RFC 3339 such as 2023-11-14T22:13:20.000Z)"
/// );
/// # Ok::<(), snowmint::Error>(())
/// ```
impl FromStr for Layout {
    type Err = Error;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let (head, unit) = match s.split_once(',') {
            Some((head, unit)) => (head, Some(unit.parse::<Unit>()?)),
            None => (s, None),
        };
        let (base, epoch) = match head.split_once('@') {
            Some((base, epoch)) => {
                // Said as a fault of the layout, so that a layout's errors
                // all read (and are classed) alike.
                let epoch =
                    crate::time::parse_epoch(epoch).map_err(|error| invalid(error.to_string()))?;
                (base, Some(epoch))
            }
            None => (head, None),
        };
        let layout = if base.contains(':') {
            fields(base, epoch.unwrap_or(TWITTER_EPOCH_MS), unit)?
        } else if base.contains('/') {
            widths(base).ok_or_else(|| unknown(s)).and_then(|widths| {
                Layout::twitter_shape(epoch.unwrap_or(TWITTER_EPOCH_MS), widths)
            })?
        } else {
            let preset = Layout::preset(base).map_err(|_| unknown(s))?;
            match epoch {
                Some(epoch) => preset.with_epoch(epoch)?,
                None => preset,
            }
        };
        match unit {
            Some(unit) if unit != layout.unit() => layout.with_unit(unit),
            _ => Ok(layout),
        }
    }
}

/// `T/D/M/S`: four small decimal widths.
fn widths(base: &str) -> Option<[u8; 4]> {
    let mut widths = [0u8; 4];
    let mut parts = base.split('/');
    for width in &mut widths {
        *width = parts.next().and_then(small_decimal)?;
    }
    parts.next().is_none().then_some(widths)
}

/// Named fields, `name:width[:role]/...`.
fn fields(base: &str, epoch_ms: i64, unit: Option<Unit>) -> Result<Layout, Error> {
    let mut specs = Vec::new();
    for item in base.split('/') {
        let mut parts = item.split(':');
        let (name, width) = (parts.next().unwrap_or_default(), parts.next());
        let role = parts.next();
        let Some(width) = width.filter(|_| parts.next().is_none()) else {
            return Err(invalid(format!(
                "field {:?} is not name:width or name:width:role (such as machine:10 or worker:5:node)",
                echo(item)
            )));
        };
        let width = small_decimal(width).ok_or_else(|| {
            invalid(format!(
                "field {} width {:?} is out of range (0..=64)",
                echo(name),
                echo(width)
            ))
        })?;
        if super::Name::new(name).is_none() {
            return Err(invalid(format!(
                "field name {:?} is not valid (expected 1 to {} of a-z, 0-9 and _, starting with a letter)",
                echo(name),
                super::MAX_NAME_LEN
            )));
        }
        let role = match role {
            Some(text) => role_named(text).ok_or_else(|| {
                invalid(format!(
                    "field {} role {:?} is not a role (expected time, node, sequence or opaque)",
                    echo(name),
                    echo(text)
                ))
            })?,
            None => role_of_name(name).ok_or_else(|| {
                invalid(format!(
                    "field {:?} needs a role (such as {}:{width}:node; roles: time, node, sequence, opaque)",
                    echo(name),
                    echo(name)
                ))
            })?,
        };
        specs.push((name, role, width));
    }
    Layout::from_fields(epoch_ms, unit.unwrap_or(Unit::MILLISECOND), &specs)
}

/// Digits only, at most 3 of them, as a byte.
fn small_decimal(text: &str) -> Option<u8> {
    if text.is_empty() || text.len() > 3 || !text.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    text.parse().ok()
}
