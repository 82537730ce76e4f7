//! Reading values from the command line with the core's parsers: numbers,
//! instants, layouts and ID encodings.
//!
//! Numbers such as `--datacenter` are taken as text and read here rather
//! than by clap, because the valid range depends on `--layout`; every
//! value is read by the same function that reads it in the service's
//! settings and HTTP parameters, so that a mistake is explained the same
//! way wherever it is made: `datacenter -1 is out of range (0..=31)`.

use std::ffi::OsStr;

use clap::ValueEnum;
use clap::builder::{PossibleValue, TypedValueParser};
use clap::parser::ValueSource;
use snowmint::{Encoding, Layout, SystemClock};

use crate::failure::Failure;

/// Human-readable or machine-readable output of a single result.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, ValueEnum)]
pub enum Format {
    /// Aligned lines for people.
    #[default]
    Text,
    /// One JSON object; IDs as strings.
    Json,
}

/// Reads `--input`/`--output ENCODING` with [`Encoding`]'s own parser
/// (any case, `dec` for decimal), listing the encodings in `--help` and in
/// shell completions.
#[derive(Debug, Clone, Copy)]
pub struct EncodingParser;

impl TypedValueParser for EncodingParser {
    type Value = Encoding;

    fn parse_ref(
        &self,
        cmd: &clap::Command,
        arg: Option<&clap::Arg>,
        value: &OsStr,
    ) -> Result<Encoding, clap::Error> {
        let parse = |text: &str| text.parse::<Encoding>();
        parse.parse_ref(cmd, arg, value)
    }

    fn possible_values(&self) -> Option<Box<dyn Iterator<Item = PossibleValue> + '_>> {
        let help = |encoding: Encoding| match encoding {
            Encoding::Decimal => "Base 10 (the canonical form)",
            Encoding::Hex => "Base 16, 16 digits",
            Encoding::Base32 => "Crockford's base 32, 13 digits",
            _ => "Base 58, Bitcoin alphabet",
        };
        Some(Box::new(Encoding::ALL.into_iter().map(move |encoding| {
            PossibleValue::new(encoding.name()).help(help(encoding))
        })))
    }
}

/// The layout named by `--layout` and `--epoch` (or `SNOWMINT_LAYOUT` and
/// `SNOWMINT_EPOCH`; a message then says so). An empty variable counts as
/// unset, as it does for `snowmint serve`.
pub fn layout(
    layout: (&str, Option<ValueSource>),
    epoch: (Option<&str>, Option<ValueSource>),
) -> Result<Layout, Failure> {
    let from_env = |source: Option<ValueSource>| source == Some(ValueSource::EnvVariable);
    let from = |source: Option<ValueSource>, env: &str, error: snowmint::Error| {
        let bad = Failure::from(error);
        if from_env(source) {
            bad.with_origin(env)
        } else {
            bad
        }
    };
    let parsed = if layout.0.is_empty() && from_env(layout.1) {
        Layout::default()
    } else {
        layout
            .0
            .parse::<Layout>()
            .map_err(|e| from(layout.1, "SNOWMINT_LAYOUT", e))?
    };
    let epoch_text = epoch
        .0
        .filter(|text| !(text.is_empty() && from_env(epoch.1)));
    match epoch_text {
        Some(text) => snowmint::parse_epoch(text)
            .and_then(|ms| parsed.with_epoch(ms))
            .map_err(|e| from(epoch.1, "SNOWMINT_EPOCH", e)),
        None => Ok(parsed),
    }
}

/// Reads an instant: `now`, Unix milliseconds, or an RFC 3339 time.
pub fn instant(name: &'static str, text: &str) -> Result<i64, Failure> {
    Ok(snowmint::parse_instant(name, text, &SystemClock)?)
}

/// Reads an instant to the microsecond: `now`, Unix milliseconds, or an
/// RFC 3339 time with up to 6 fractional digits.
pub fn instant_us(name: &'static str, text: &str) -> Result<i64, Failure> {
    Ok(snowmint::parse_instant_us(name, text, &SystemClock)?)
}

/// Splits `NAME=VALUE` (of the option `option`).
pub fn name_value(option: &str, text: &str) -> Result<(String, String), Failure> {
    match text.split_once('=') {
        Some((name, value)) if !name.is_empty() => Ok((name.to_owned(), value.to_owned())),
        _ => Err(Failure::bad_input(format!(
            "--{option} {:?} is not NAME=VALUE (such as worker=1)",
            snowmint::value::echo(text)
        ))),
    }
}

/// The values given by name on a command line: the Twitter-era flags
/// (`--datacenter`, `--machine`, `--sequence`) that were given, then each
/// `--field NAME=VALUE`, as (name, text) pairs for [`named_values`].
pub fn given_fields(
    legacy: &[(&str, &Option<String>)],
    fields: &[String],
) -> Result<Vec<(String, String)>, Failure> {
    let mut given: Vec<(String, String)> = legacy
        .iter()
        .filter_map(|(name, text)| Some(((*name).to_owned(), text.as_ref()?.clone())))
        .collect();
    for text in fields {
        given.push(name_value("field", text)?);
    }
    Ok(given)
}

/// Reads values given by name (a field's own name, or `datacenter`,
/// `machine`, `sequence`: see `Layout::parse_named`) in their ranges.
pub fn named_values(
    layout: &Layout,
    given: &[(String, String)],
) -> Result<Vec<(String, u64)>, Failure> {
    given
        .iter()
        .map(|(name, text)| Ok((name.clone(), layout.parse_named(name, text)?)))
        .collect()
}

/// The `(name, value)` pairs the core takes.
pub fn as_pairs(named: &[(String, u64)]) -> Vec<(&str, u64)> {
    named
        .iter()
        .map(|(name, value)| (name.as_str(), *value))
        .collect()
}

/// Reads a count of things: a whole number up to `max` (0 makes nothing).
pub fn count(name: &'static str, text: &str, max: u64) -> Result<u64, Failure> {
    Ok(snowmint::value::parse_bounded(name, text, 0..=max)?)
}

/// Reads a whole number in `range`.
pub fn bounded(
    name: &'static str,
    text: &str,
    range: std::ops::RangeInclusive<u64>,
) -> Result<u64, Failure> {
    Ok(snowmint::value::parse_bounded(name, text, range)?)
}

/// Reads an amount of memory: a whole number of bytes, or of `KiB`,
/// `MiB` or `GiB` (`64MiB`), in `range` (bytes).
pub fn size(
    name: &'static str,
    text: &str,
    range: std::ops::RangeInclusive<u64>,
) -> Result<u64, Failure> {
    let shown = |bytes: u64| {
        for (unit, scale) in [("GiB", 1u64 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)] {
            if bytes >= scale && bytes.is_multiple_of(scale) {
                return format!("{}{unit}", bytes / scale);
            }
        }
        format!("{bytes}B")
    };
    let expected = format!(
        "expected a number of bytes, KiB, MiB or GiB, such as 64MiB, in {}..={}",
        shown(*range.start()),
        shown(*range.end())
    );
    let split = text
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(text.len());
    let (number, unit) = text.split_at(split);
    let scale = match unit {
        "" | "B" => Some(1u64),
        "KiB" => Some(1 << 10),
        "MiB" => Some(1 << 20),
        "GiB" => Some(1 << 30),
        _ => None,
    };
    let bytes = scale
        .filter(|_| !number.is_empty())
        .and_then(|scale| number.parse::<u64>().ok()?.checked_mul(scale));
    match bytes {
        None => Err(Failure::bad_input(format!(
            "{name} {text:?} is not an amount of memory ({expected})"
        ))),
        Some(bytes) if !range.contains(&bytes) => Err(Failure::bad_input(format!(
            "{name} {text} is out of range ({}..={})",
            shown(*range.start()),
            shown(*range.end())
        ))),
        Some(bytes) => Ok(bytes),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_name_the_range() {
        let layout = Layout::TWITTER;
        let message = |text: &str| {
            named_values(&layout, &[("datacenter".to_owned(), text.to_owned())])
                .unwrap_err()
                .to_string()
        };
        assert_eq!(message("-1"), "datacenter -1 is out of range (0..=31)");
        assert_eq!(
            message("18446744073709551616"),
            "datacenter 18446744073709551616 is out of range (0..=31)"
        );
        assert_eq!(
            message("x1"),
            "datacenter \"x1\" is not a number (expected an integer in 0..=31)"
        );
        assert_eq!(
            message("+4"),
            "datacenter \"+4\" is not a number (expected an integer in 0..=31)"
        );
    }

    #[test]
    fn sizes_have_units_and_bounds() {
        let range = (1 << 20)..=(64u64 << 30);
        assert_eq!(
            size("memory limit", "64MiB", range.clone()).unwrap(),
            64 << 20
        );
        assert_eq!(
            size("memory limit", "1GiB", range.clone()).unwrap(),
            1 << 30
        );
        assert_eq!(
            size("memory limit", "2097152", range.clone()).unwrap(),
            2 << 20
        );
        assert_eq!(
            size("memory limit", "12KiB", range.clone())
                .unwrap_err()
                .to_string(),
            "memory limit 12KiB is out of range (1MiB..=64GiB)"
        );
        assert_eq!(
            size("memory limit", "64MB", range.clone())
                .unwrap_err()
                .to_string(),
            "memory limit \"64MB\" is not an amount of memory (expected a number of bytes, KiB, MiB or GiB, such as 64MiB, in 1MiB..=64GiB)"
        );
        assert!(size("memory limit", "MiB", range.clone()).is_err());
        assert!(size("memory limit", "99999999999GiB", range).is_err());
    }

    #[test]
    fn counts_are_bounded() {
        assert_eq!(count("count", "10", 10).unwrap(), 10);
        assert_eq!(
            count("count", "11", 10).unwrap_err().to_string(),
            "count 11 is out of range (0..=10)"
        );
    }

    #[test]
    fn layouts_from_the_environment_say_so() {
        let env = Some(ValueSource::EnvVariable);
        let flag = Some(ValueSource::CommandLine);
        let err = layout(("twiter", env), (None, None)).unwrap_err();
        assert!(
            err.to_string().ends_with(" (from SNOWMINT_LAYOUT)"),
            "{err}"
        );
        let err = layout(("twiter", flag), (None, None)).unwrap_err();
        assert!(
            err.to_string().starts_with("unknown layout \"twiter\""),
            "{err}"
        );
        assert!(!err.to_string().contains("(from"), "{err}");
        let err = layout(("twitter", None), (Some("soon"), env)).unwrap_err();
        assert!(err.to_string().ends_with(" (from SNOWMINT_EPOCH)"), "{err}");
        assert_eq!(
            layout(("twitter", None), (Some("2015-01-01T00:00:00Z"), flag))
                .unwrap()
                .epoch_ms(),
            snowmint::DISCORD_EPOCH_MS
        );
        // Empty variables count as unset; an empty flag is a value.
        assert_eq!(layout(("", env), (Some(""), env)).unwrap(), Layout::TWITTER);
        assert!(layout(("", flag), (None, None)).is_err());
        assert!(layout(("twitter", None), (Some(""), flag)).is_err());
    }
}
