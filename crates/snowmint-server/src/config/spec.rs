//! What a setting is, apart from how it is read: a [`Spec`] holds its
//! names, its help, its [`DefaultValue`] and its [`Range`], built by the
//! `const` calls the `settings!` list is written in (see `setting.rs`).

use std::fmt;
use std::ops::RangeInclusive;
use std::time::Duration;

/// What a setting is, apart from how it is read: its names, help, default
/// and range (see the module docs).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Spec {
    /// The key in the TOML file, such as `clock_max`; the flag and the
    /// environment variable are made from it.
    pub key: &'static str,
    /// How the value is given on the command line.
    pub form: Form,
    /// The help text: one sentence, without the default or the range.
    pub help: &'static str,
    /// What applies when no place gives a value.
    pub default: DefaultValue,
    /// The values accepted, when there is more to say than the help does.
    pub range: Option<Range>,
    /// A flag of every command (`--layout`) rather than of `serve` alone.
    pub global: bool,
    /// Whether the TOML file may give it (`config` names the file itself).
    pub in_file: bool,
    /// Whether it is a flag of the command line (a password is not: the
    /// command line is every local user's to read).
    pub flag: bool,
    /// Left out of `--help`, the guide's table and the list of known keys: a knob
    /// for tests and operations.
    pub hidden: bool,
}

/// How a setting's value is given on the command line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Form {
    /// `--flag VALUE`, the value named as here in `--help`.
    Value(&'static str),
    /// `--flag VALUE` where VALUE may be a negative number: `-1` is read
    /// as the value, not as a flag, so that its range is reported.
    Number(&'static str),
    /// `--flag` alone means `true`; the environment and the file give
    /// `true` or `false`.
    Switch,
}

impl Form {
    /// The name of the value in `--help` (`ADDR`); none for a switch.
    pub const fn value_name(self) -> Option<&'static str> {
        match self {
            Form::Value(name) | Form::Number(name) => Some(name),
            Form::Switch => None,
        }
    }
}

/// What applies when no place gives a setting a value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DefaultValue {
    /// This text, read by the setting's parser as if it had been given.
    Value(&'static str),
    /// No value; the text says what that means, for people (`off`).
    Unset(&'static str),
}

impl DefaultValue {
    /// The default for people: the value, or what having none means.
    pub const fn text(self) -> &'static str {
        match self {
            DefaultValue::Value(text) | DefaultValue::Unset(text) => text,
        }
    }
}

/// The values a setting accepts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Range {
    /// Durations in `min..=max`.
    Durations {
        /// The shortest.
        min: Duration,
        /// The longest.
        max: Duration,
    },
    /// Whole numbers in `min..=max`.
    Integers {
        /// The smallest.
        min: i64,
        /// The largest.
        max: i64,
    },
    /// Said in words: the range depends on another setting, or is a set
    /// of names or characters, checked by the value's own parser.
    Described(&'static str),
}

impl fmt::Display for Range {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Range::Durations { min, max } => write!(
                f,
                "{}..={}",
                snowmint::value::format_duration(min),
                snowmint::value::format_duration(max)
            ),
            Range::Integers { min, max } => write!(f, "{min}..={max}"),
            Range::Described(text) => f.write_str(text),
        }
    }
}

impl Spec {
    /// A setting given as `--flag VALUE`, `VALUE` named `value_name` in help.
    pub const fn value(key: &'static str, value_name: &'static str) -> Spec {
        Spec::new(key, Form::Value(value_name))
    }

    /// A setting whose value may be a negative number (see [`Form::Number`]).
    pub const fn number(key: &'static str, value_name: &'static str) -> Spec {
        Spec::new(key, Form::Number(value_name))
    }

    /// A setting given as `--flag` alone (see [`Form::Switch`]).
    pub const fn switch(key: &'static str) -> Spec {
        Spec::new(key, Form::Switch)
    }

    const fn new(key: &'static str, form: Form) -> Spec {
        Spec {
            key,
            form,
            help: "",
            default: DefaultValue::Unset("none"),
            range: None,
            global: false,
            in_file: true,
            flag: true,
            hidden: false,
        }
    }

    /// With this help text.
    pub const fn help(self, help: &'static str) -> Spec {
        Spec { help, ..self }
    }

    /// With this default, read by the setting's parser when nothing gives
    /// a value.
    pub const fn default(self, value: &'static str) -> Spec {
        Spec {
            default: DefaultValue::Value(value),
            ..self
        }
    }

    /// With no default; `meaning` says what having none means.
    pub const fn unset(self, meaning: &'static str) -> Spec {
        Spec {
            default: DefaultValue::Unset(meaning),
            ..self
        }
    }

    /// Accepting durations in `min..=max`.
    pub const fn durations(self, min: Duration, max: Duration) -> Spec {
        Spec {
            range: Some(Range::Durations { min, max }),
            ..self
        }
    }

    /// Accepting whole numbers in `min..=max`.
    pub const fn integers(self, min: i64, max: i64) -> Spec {
        Spec {
            range: Some(Range::Integers { min, max }),
            ..self
        }
    }

    /// Accepting what `text` says.
    pub const fn described(self, text: &'static str) -> Spec {
        Spec {
            range: Some(Range::Described(text)),
            ..self
        }
    }

    /// A flag of every command, not of `serve` alone.
    pub const fn global(self) -> Spec {
        Spec {
            global: true,
            ..self
        }
    }

    /// Not a key of the TOML file.
    pub const fn not_in_file(self) -> Spec {
        Spec {
            in_file: false,
            ..self
        }
    }

    /// Given by its environment variable alone: not a flag, not a key of
    /// the TOML file.
    pub const fn env_only(self) -> Spec {
        Spec {
            in_file: false,
            flag: false,
            ..self
        }
    }

    /// Left out of what people are shown.
    pub const fn hidden(self) -> Spec {
        Spec {
            hidden: true,
            ..self
        }
    }

    /// The declared range of a duration setting.
    pub fn duration_range(&self) -> Option<RangeInclusive<Duration>> {
        match self.range {
            Some(Range::Durations { min, max }) => Some(min..=max),
            _ => None,
        }
    }

    /// The declared range of an integer setting.
    pub fn integer_range(&self) -> Option<RangeInclusive<i64>> {
        match self.range {
            Some(Range::Integers { min, max }) => Some(min..=max),
            _ => None,
        }
    }
}
