//! Reading values from the command line: numbers, instants, layouts and ID
//! encodings.
//!
//! Numbers such as `--datacenter` are taken as text and read here rather
//! than by clap, because the valid range depends on `--layout` and the
//! message has to name it: `datacenter -1 is out of range (0..=31)`.

use clap::ValueEnum;
use snowmint::{Clock, Encoding, Field, Layout, SystemClock};

use crate::failure::BadInput;

/// An ID's text encoding, as a command-line choice.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, ValueEnum)]
pub enum IdEncoding {
    /// Base 10 (the canonical form).
    #[default]
    Decimal,
    /// Base 16, 16 digits.
    Hex,
    /// Crockford's base 32, 13 digits.
    Base32,
    /// Base 58, Bitcoin alphabet.
    Base58,
}

impl From<IdEncoding> for Encoding {
    fn from(choice: IdEncoding) -> Encoding {
        match choice {
            IdEncoding::Decimal => Encoding::Decimal,
            IdEncoding::Hex => Encoding::Hex,
            IdEncoding::Base32 => Encoding::Base32,
            IdEncoding::Base58 => Encoding::Base58,
        }
    }
}

/// Human-readable or machine-readable output of a single result.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, ValueEnum)]
pub enum Format {
    /// Aligned lines for people.
    #[default]
    Text,
    /// One JSON object; IDs as strings.
    Json,
}

/// Checks a `--layout` value early, so that a typo is a usage error.
pub fn layout_name(text: &str) -> Result<String, snowmint::Error> {
    text.parse::<Layout>().map(|_| text.to_owned())
}

/// Reads an `--epoch`: Unix milliseconds or an RFC 3339 time.
pub fn epoch_ms(text: &str) -> Result<i64, snowmint::Error> {
    snowmint::parse_time(text)
}

/// Reads an instant: `now`, Unix milliseconds, or an RFC 3339 time.
pub fn instant(name: &str, text: &str) -> Result<i64, BadInput> {
    if text.eq_ignore_ascii_case("now") {
        return Ok(SystemClock.now_ms());
    }
    snowmint::parse_time(text).map_err(|error| BadInput::new(format!("--{name}: {error}")))
}

/// Reads the value of an ID field (datacenter, machine, sequence).
///
/// Any `u64` is returned as it is, for the core to check against the layout
/// with its own message; what is not a `u64` is rejected here, naming the
/// layout's range.
pub fn field_value(layout: &Layout, field: Field, text: &str) -> Result<u64, BadInput> {
    whole_number(field.name(), text, layout.max(field))
}

/// Reads a count of things: any whole number up to `max`.
pub fn count(name: &str, text: &str, max: u64) -> Result<u64, BadInput> {
    let value = whole_number(name, text, max)?;
    if value > max {
        return Err(out_of_range(name, text, max));
    }
    Ok(value)
}

/// A `u64`, or an error that names `name`, the text and `0..=max`.
fn whole_number(name: &str, text: &str, max: u64) -> Result<u64, BadInput> {
    let digits = text.strip_prefix(['-', '+']).unwrap_or(text);
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return Err(BadInput::new(format!(
            "{name} {text:?} is not a whole number (0..={max})"
        )));
    }
    match text.strip_prefix('+').unwrap_or(text).parse::<u64>() {
        Ok(value) => Ok(value),
        // Digits with a minus sign, or more than 64 bits of them.
        Err(_) => Err(out_of_range(name, text, max)),
    }
}

fn out_of_range(name: &str, text: &str, max: u64) -> BadInput {
    BadInput::new(format!("{name} {text} is out of range (0..={max})"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_that_are_not_u64_name_the_range() {
        let layout = Layout::TWITTER;
        let message = |text| {
            field_value(&layout, Field::Datacenter, text)
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
            "datacenter \"x1\" is not a whole number (0..=31)"
        );
        assert_eq!(
            message(""),
            "datacenter \"\" is not a whole number (0..=31)"
        );
        assert_eq!(field_value(&layout, Field::Machine, "+40").unwrap(), 40);
    }

    #[test]
    fn counts_are_bounded() {
        assert_eq!(count("count", "10", 10).unwrap(), 10);
        assert_eq!(
            count("count", "11", 10).unwrap_err().to_string(),
            "count 11 is out of range (0..=10)"
        );
    }
}
