//! The name of a fleet: [`FleetName`].

use std::fmt;
use std::str::FromStr;

use super::config::{ConfigError, MAX_FLEET_NAME};

/// The name of a fleet: nodes of one fleet share its slots, and its keys
/// live under `/snowmint/<fleet>/`.
///
/// 1 to [`MAX_FLEET_NAME`] letters, digits, `-`, `_` and `.`, other than
/// `.` and `..` (which would name the wrong directory of keys). Case
/// matters: `ids` and `IDS` are two fleets.
///
/// # Examples
///
/// ```
/// use snowmint_fleet::FleetName;
///
/// let name: FleetName = "ids-eu.1".parse()?;
/// assert_eq!(name.as_str(), "ids-eu.1");
/// assert_eq!(
///     "a/b".parse::<FleetName>().unwrap_err().to_string(),
///     "fleet name \"a/b\" is invalid: '/' is not allowed (expected 1 to 64 letters, digits, '-', '_' or '.', not \".\" or \"..\")"
/// );
/// assert!("x".repeat(65).parse::<FleetName>().is_err());
/// # Ok::<(), snowmint_fleet::ConfigError>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct FleetName(String);

impl FleetName {
    /// The name.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The name, owned.
    pub fn into_string(self) -> String {
        self.0
    }
}

impl FromStr for FleetName {
    type Err = ConfigError;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let invalid = |reason: String| ConfigError::Fleet {
            value: snowmint::value::echo(text),
            reason: format!(
                "{reason} (expected 1 to {MAX_FLEET_NAME} letters, digits, '-', '_' or '.', not \".\" or \"..\")"
            ),
        };
        if text.is_empty() {
            return Err(invalid("it is empty".into()));
        }
        if text == "." || text == ".." {
            return Err(invalid(format!("{text:?} names no fleet")));
        }
        if let Some(bad) = text
            .chars()
            .find(|&c| !(c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.')))
        {
            return Err(invalid(format!("{bad:?} is not allowed")));
        }
        // Only ASCII is left: bytes are characters.
        if text.len() > MAX_FLEET_NAME {
            return Err(invalid(format!("it is {} characters long", text.len())));
        }
        Ok(FleetName(text.to_owned()))
    }
}

impl fmt::Display for FleetName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use snowmint::Layout;

    use super::*;
    use crate::{CoordinatorConfig, SlotRange};
    #[test]
    fn fleet_names() {
        let longest = "f".repeat(MAX_FLEET_NAME);
        assert_eq!(longest.parse::<FleetName>().unwrap().as_str(), longest);
        for (bad, says) in [
            ("", "it is empty"),
            (".", "\".\" names no fleet"),
            ("..", "\"..\" names no fleet"),
            ("a b", "' ' is not allowed"),
            ("é", "'é' is not allowed"),
        ] {
            let err = bad.parse::<FleetName>().unwrap_err().to_string();
            assert!(
                err.starts_with(&format!(
                    "fleet name {bad:?} is invalid: {says} (expected 1 to 64"
                )),
                "{err}"
            );
        }
        let long = "f".repeat(MAX_FLEET_NAME + 1);
        let err = long.parse::<FleetName>().unwrap_err().to_string();
        assert!(err.contains("it is 65 characters long"), "{err}");
        assert!(
            err.contains(&format!("{}...", "f".repeat(40))),
            "the value is cut: {err}"
        );
        // The claim engine's settings take the same names.
        let slots = SlotRange::all(Layout::TWITTER);
        let ttl = Duration::from_secs(10);
        let err =
            CoordinatorConfig::new(&long, slots, ttl, String::new(), Layout::TWITTER).unwrap_err();
        assert_eq!(err, long.parse::<FleetName>().unwrap_err());
    }
}
