//! The places settings are given in, each read into a [`Layer`] of text:
//! command-line flags, `SNOWMINT_*` environment variables, a TOML file.
//!
//! A layer only collects text; [`Config::resolve`](super::Config::resolve)
//! reads every value, whichever layer it came from, with the same parser.

use std::collections::BTreeMap;
use std::fmt;
use std::path::Path;

use snowmint_fleet::{HIDDEN, mask_user_part};

use super::ConfigError;
use super::setting::{Origin, Setting};

/// The settings given in one place, as text.
///
/// # Examples
///
/// ```
/// use snowmint_server::config::{Config, Layer, Setting};
///
/// let mut flags = Layer::flags();
/// flags.set(Setting::Machine, "5");
/// let env = Layer::from_env(|name| (name == "SNOWMINT_MACHINE").then(|| "4".to_owned()));
/// let config = Config::resolve(&[flags, env], |_| None)?;
/// assert_eq!(config.node(), Some(snowmint::Node::from_slot(5)));
/// # Ok::<(), snowmint_server::config::ConfigError>(())
/// ```
#[derive(Clone)]
pub struct Layer {
    pub(super) origin: Origin,
    pub(super) values: BTreeMap<Setting, String>,
}

/// Shows the values as given, but for a password: the environment's is
/// `***`, and a coordinator URL's user part too, since either may end up
/// in a debug log or a panic message.
impl fmt::Debug for Layer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let shown: BTreeMap<Setting, String> = self
            .values
            .iter()
            .map(|(&setting, text)| {
                let text = match setting {
                    Setting::CoordinatorPassword => HIDDEN.to_owned(),
                    Setting::Coordinator => mask_user_part(text),
                    _ => text.clone(),
                };
                (setting, text)
            })
            .collect();
        f.debug_struct("Layer")
            .field("origin", &self.origin)
            .field("values", &shown)
            .finish()
    }
}

impl Layer {
    /// An empty layer of command-line flags.
    pub fn flags() -> Layer {
        Layer {
            origin: Origin::Flag,
            values: BTreeMap::new(),
        }
    }

    /// Sets a value.
    pub fn set(&mut self, setting: Setting, value: impl Into<String>) -> &mut Layer {
        self.values.insert(setting, value.into());
        self
    }

    /// The `SNOWMINT_*` variables that `lookup` knows (pass
    /// `|name| std::env::var(name).ok()` for the process environment).
    /// Empty values count as unset.
    pub fn from_env(lookup: impl Fn(&str) -> Option<String>) -> Layer {
        let values = Setting::ALL
            .iter()
            .filter_map(|&setting| {
                lookup(&setting.env())
                    .filter(|v| !v.is_empty())
                    .map(|v| (setting, v))
            })
            .collect();
        Layer {
            origin: Origin::Env,
            values,
        }
    }

    /// Reads a TOML file of `key = value` lines (see the module docs).
    pub fn from_file(path: &Path) -> Result<Layer, ConfigError> {
        let text = std::fs::read_to_string(path).map_err(|error| ConfigError::File {
            path: path.to_owned(),
            message: error.to_string(),
        })?;
        Layer::from_toml(path, &text)
    }

    /// Reads TOML text as if from the file `path`. Strings, integers and
    /// booleans are taken as the text a flag would give (`3`, `true`).
    ///
    /// # Errors
    ///
    /// Text that is not TOML, a key that names no setting, a value of
    /// another type: each with the line and column, never the line.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::path::Path;
    /// use snowmint_server::config::Layer;
    ///
    /// let path = Path::new("/etc/snowmint/snowmint.toml");
    /// assert!(Layer::from_toml(path, "datacenter = 3\nclock_policy = \"wait\"\n").is_ok());
    /// let error = Layer::from_toml(path, "datacentre = 3\n").unwrap_err();
    /// assert!(error.to_string().starts_with("config file /etc/snowmint/snowmint.toml: "), "{error}");
    /// assert!(error.to_string().contains("datacentre"), "{error}");
    /// ```
    pub fn from_toml(path: &Path, text: &str) -> Result<Layer, ConfigError> {
        let file_error = |message: String| ConfigError::File {
            path: path.to_owned(),
            message,
        };
        let table: toml::Table =
            toml::from_str(text).map_err(|e| file_error(toml_error(&e, text)))?;
        let mut values = BTreeMap::new();
        for (key, value) in table {
            let setting = Setting::from_file_key(&key).ok_or_else(|| {
                let known: Vec<_> = Setting::file_keys().collect();
                let password = match key == Setting::CoordinatorPassword.key() {
                    true => {
                        "; a password cannot be written here (name a file only its owner may read with coordinator_password_file)"
                    }
                    false => "",
                };
                file_error(format!(
                    "unknown key {:?} (known keys: {}){password}",
                    snowmint::value::echo(&key),
                    known.join(", ")
                ))
            })?;
            let text = match value {
                toml::Value::String(s) => s,
                toml::Value::Integer(i) => i.to_string(),
                toml::Value::Boolean(b) => b.to_string(),
                other => {
                    return Err(file_error(format!(
                        "{key} must be a string, an integer or a boolean, not {}",
                        other.type_str()
                    )));
                }
            };
            values.insert(setting, text);
        }
        Ok(Layer {
            origin: Origin::File(path.to_owned()),
            values,
        })
    }
}

/// What is wrong with a TOML text, said without quoting it: TOML's own
/// message shows the line it stopped at, and that line may hold a
/// password (a coordinator URL's). Line and column say where to look.
fn toml_error(error: &toml::de::Error, text: &str) -> String {
    let message = error.message().trim_end();
    match error.span() {
        Some(span) => {
            let before = text.get(..span.start).unwrap_or(text);
            let line = before.matches('\n').count() + 1;
            let column = before.rsplit('\n').next().unwrap_or("").chars().count() + 1;
            format!("not valid TOML at line {line}, column {column}: {message}")
        }
        None => format!("not valid TOML: {message}"),
    }
}
