//! Where the coordination service is: [`CoordinatorUrl`], read from
//! `etcd://...`, `zk://...` and `postgres://...` URLs, with the user to
//! log in as.
//!
//! A URL that cannot be read is echoed in the error with its whole user
//! part (everything between `://` and the last `@`) masked, and the reason
//! is found on that masked text: a password with a raw `/`, `?` or `@`
//! makes the rest of the URL read differently, so no part of what stood
//! before the last `@` may ever reach a message.

mod postgres;

use std::fmt;
use std::str::FromStr;

use super::config::ConfigError;
use super::secret::{HIDDEN, Secret, mask_user_part};
pub use postgres::{PostgresUrl, SslMode};

/// Why a URL whose only fault lies in its user part cannot be read (said
/// without quoting it).
const USER_PART_UNREADABLE: &str = "its user part (before the last \"@\") cannot be read: \
     write it as USER:PASSWORD, with any \"/\", \"?\", \"#\", \"@\", \":\" or \"%\" in them \
     percent-encoded (%2F, %3F, %23, %40, %3A, %25)";

/// The user an etcd or ZooKeeper URL names (`etcd://USER[:PASSWORD]@...`):
/// an etcd user (RBAC), or a ZooKeeper `digest` identity.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Login {
    /// The user name, percent-decoded.
    pub user: String,
    /// The password, if the URL holds one (else it comes from elsewhere;
    /// see [`CoordinatorAccess`](crate::CoordinatorAccess)).
    pub password: Option<Secret>,
}

/// Where the coordination service is.
///
/// - `etcd://[USER[:PASSWORD]@]HOST:PORT[,HOST:PORT...]`
/// - `zk://[USER[:PASSWORD]@]HOST:PORT[,HOST:PORT...][/CHROOT]`
/// - `postgres://USER[:PASSWORD]@HOST[:PORT][,HOST[:PORT]...]/DB[?PARAMS]`
///   (or `postgresql://`), libpq's form; see [`PostgresUrl`].
///
/// The scheme is read in any case. The user and password are
/// percent-decoded (`%40` for `@`). Shown everywhere with the password as
/// `***`; an error about a URL that cannot be read shows its user part as
/// `***` altogether.
///
/// # Examples
///
/// ```
/// use snowmint_fleet::CoordinatorUrl;
///
/// let url: CoordinatorUrl = "zk://10.0.0.1:2181,10.0.0.2:2181/apps".parse()?;
/// assert_eq!(
///     url,
///     CoordinatorUrl::ZooKeeper {
///         hosts: vec!["10.0.0.1:2181".into(), "10.0.0.2:2181".into()],
///         chroot: Some("/apps".into()),
///         login: None,
///     }
/// );
/// assert_eq!(url.to_string(), "zk://10.0.0.1:2181,10.0.0.2:2181/apps");
///
/// let url: CoordinatorUrl = "etcd://ids:s3cret@10.0.0.1:2379".parse()?;
/// assert_eq!(url.to_string(), "etcd://ids:***@10.0.0.1:2379");
///
/// let err = "etcd://localhost:99999".parse::<CoordinatorUrl>().unwrap_err();
/// assert!(err.to_string().contains("port 99999 is out of range (1..=65535)"));
/// let err = "etcd://ids:s3cret@localhost:99999".parse::<CoordinatorUrl>().unwrap_err();
/// assert!(err.to_string().starts_with(r#"coordinator URL "etcd://***@localhost:99999" is invalid"#));
/// # Ok::<(), snowmint_fleet::ConfigError>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CoordinatorUrl {
    /// An etcd cluster, reached through any of its client endpoints.
    Etcd {
        /// `HOST:PORT` of each endpoint.
        endpoints: Vec<String>,
        /// The etcd user to log in as, when etcd's authentication is on.
        login: Option<Login>,
    },
    /// A ZooKeeper ensemble, with an optional root for every path.
    ZooKeeper {
        /// `HOST:PORT` of each server.
        hosts: Vec<String>,
        /// A path every znode of snowmint lives under, such as `/apps`.
        chroot: Option<String>,
        /// The `digest` identity to authenticate as; the znodes snowmint
        /// creates then belong to it alone.
        login: Option<Login>,
    },
    /// A PostgreSQL database, whose tables hold the fleet's slots (boxed:
    /// it is far larger than the other forms).
    Postgres(Box<PostgresUrl>),
}

impl CoordinatorUrl {
    /// The scheme's service name: `etcd`, `zookeeper` or `postgres`.
    pub fn kind(&self) -> &'static str {
        match self {
            CoordinatorUrl::Etcd { .. } => "etcd",
            CoordinatorUrl::ZooKeeper { .. } => "zookeeper",
            CoordinatorUrl::Postgres(_) => "postgres",
        }
    }

    /// The user and password the URL itself holds, if any.
    pub fn login(&self) -> Option<Login> {
        match self {
            CoordinatorUrl::Etcd { login, .. } | CoordinatorUrl::ZooKeeper { login, .. } => {
                login.clone()
            }
            CoordinatorUrl::Postgres(url) => Some(Login {
                user: url.user().to_owned(),
                password: url.password().map(Secret::new),
            }),
        }
    }

    /// Whether the URL holds a password (which, given on a command line,
    /// every local user can read).
    pub fn has_password(&self) -> bool {
        self.login().is_some_and(|login| login.password.is_some())
    }
}

impl FromStr for CoordinatorUrl {
    type Err = ConfigError;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        parse(text).map_err(|reason| {
            let masked = mask_user_part(text);
            let reason = if masked == text {
                reason
            } else {
                // The reason is found again on the masked text, so that it
                // quotes nothing of the user part.
                match parse(&masked) {
                    Err(reason) => reason,
                    Ok(_) => USER_PART_UNREADABLE.to_owned(),
                }
            };
            ConfigError::Url {
                value: snowmint::value::echo(&masked),
                reason,
            }
        })
    }
}

/// Reads `text`; the reason of an error may quote any part of it.
fn parse(text: &str) -> Result<CoordinatorUrl, String> {
    let (scheme, rest) = text
        .split_once("://")
        .ok_or_else(|| "it has no scheme".to_owned())?;
    let scheme = scheme.to_ascii_lowercase();
    if matches!(scheme.as_str(), "postgres" | "postgresql") {
        return PostgresUrl::parse(rest).map(|url| CoordinatorUrl::Postgres(Box::new(url)));
    }
    let (authority, path) = match rest.find('/') {
        Some(at) => (&rest[..at], Some(&rest[at..])),
        None => (rest, None),
    };
    let (login, hostlist) = match authority.rsplit_once('@') {
        Some((userinfo, hostlist)) => (Some(parse_login(userinfo)?), hostlist),
        None => (None, authority),
    };
    let hosts = hostlist
        .split(',')
        .map(|host| check_host_port(host).map(str::to_owned))
        .collect::<Result<Vec<_>, _>>()?;
    match scheme.as_str() {
        "etcd" => match path {
            None | Some("/") => Ok(CoordinatorUrl::Etcd {
                endpoints: hosts,
                login,
            }),
            Some(path) => Err(format!("etcd URLs take no path, found {path:?}")),
        },
        "zk" | "zookeeper" => {
            if let Some(login) = &login
                && login.user.contains(':')
            {
                return Err(
                    "a ZooKeeper user name cannot contain \":\" (digest identities are USER:PASSWORD)"
                        .into(),
                );
            }
            let chroot = match path {
                None | Some("/") => None,
                Some(path) => Some(check_chroot(path)?.to_owned()),
            };
            Ok(CoordinatorUrl::ZooKeeper {
                hosts,
                chroot,
                login,
            })
        }
        other => Err(format!("scheme {other:?} is not etcd, zk or postgres")),
    }
}

/// `USER[:PASSWORD]`, percent-decoded.
fn parse_login(userinfo: &str) -> Result<Login, String> {
    let (user, password) = match userinfo.split_once(':') {
        Some((user, password)) => (user, Some(postgres::decode("password", password)?)),
        None => (userinfo, None),
    };
    let user = postgres::decode("user", user)?;
    if user.is_empty() {
        return Err("the user name is empty".into());
    }
    if password.as_deref() == Some("") {
        return Err("the password is empty (leave out the \":\" to give it elsewhere)".into());
    }
    Ok(Login {
        user,
        password: password.map(Secret::new),
    })
}

/// `USER:***@` or `USER@`, as shown.
fn write_login(f: &mut fmt::Formatter<'_>, login: Option<&Login>) -> fmt::Result {
    match login {
        Some(Login {
            user,
            password: Some(_),
        }) => write!(f, "{}:{HIDDEN}@", postgres::encode(user)),
        Some(Login {
            user,
            password: None,
        }) => write!(f, "{}@", postgres::encode(user)),
        None => Ok(()),
    }
}

impl fmt::Display for CoordinatorUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CoordinatorUrl::Etcd { endpoints, login } => {
                f.write_str("etcd://")?;
                write_login(f, login.as_ref())?;
                f.write_str(&endpoints.join(","))
            }
            CoordinatorUrl::ZooKeeper {
                hosts,
                chroot,
                login,
            } => {
                f.write_str("zk://")?;
                write_login(f, login.as_ref())?;
                write!(f, "{}{}", hosts.join(","), chroot.as_deref().unwrap_or(""))
            }
            CoordinatorUrl::Postgres(url) => url.fmt(f),
        }
    }
}

fn check_host_port(text: &str) -> Result<&str, String> {
    let (host, port) = text
        .rsplit_once(':')
        .ok_or_else(|| format!("endpoint {text:?} has no port (expected HOST:PORT)"))?;
    let bracketed = host.starts_with('[') && host.ends_with(']');
    if host.is_empty() || (host.contains(':') && !bracketed) {
        return Err(format!(
            "endpoint {text:?} has no valid host (expected HOST:PORT)"
        ));
    }
    snowmint::value::parse_bounded("port", port, 1..=65535)
        .map(|_| text)
        .map_err(|error| error.to_string())
}

fn check_chroot(path: &str) -> Result<&str, String> {
    let path = path.strip_suffix('/').unwrap_or(path);
    if path
        .split('/')
        .skip(1)
        .any(|part| part.is_empty() || part == "." || part == "..")
    {
        return Err(format!(
            "chroot {path:?} has an empty, \".\" or \"..\" component"
        ));
    }
    Ok(path)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::coordinator::config::URL_FORMS;
    #[test]
    fn etcd_urls() {
        let url: CoordinatorUrl = "etcd://127.0.0.1:2379,[::1]:2380".parse().unwrap();
        assert_eq!(
            url,
            CoordinatorUrl::Etcd {
                endpoints: vec!["127.0.0.1:2379".into(), "[::1]:2380".into()],
                login: None,
            }
        );
        assert_eq!(url.to_string(), "etcd://127.0.0.1:2379,[::1]:2380");
    }

    #[test]
    fn bad_urls_say_what_is_wrong() {
        for (text, says) in [
            ("127.0.0.1:2379", "it has no scheme"),
            (
                "http://127.0.0.1:2379",
                "scheme \"http\" is not etcd, zk or postgres",
            ),
            ("etcd://127.0.0.1", "endpoint \"127.0.0.1\" has no port"),
            ("etcd://:2379", "endpoint \":2379\" has no valid host"),
            ("etcd://a:0", "port 0 is out of range (1..=65535)"),
            (
                "etcd://a:+1",
                "port \"+1\" is not a number (expected an integer in 1..=65535)",
            ),
            ("etcd://a:1,", "endpoint \"\" has no port"),
            ("etcd://a:1/x", "etcd URLs take no path"),
            ("zk://a:1//x", "chroot \"//x\" has an empty"),
            (
                "postgres://ids@db:0/app",
                "port 0 is out of range (1..=65535)",
            ),
        ] {
            let err = text.parse::<CoordinatorUrl>().unwrap_err().to_string();
            // A user part is never echoed, not even a user name alone.
            let shown = text.replace("ids@", "***@");
            assert!(
                err.starts_with(&format!("coordinator URL {shown:?} is invalid: ")),
                "{err}"
            );
            assert!(err.contains(says), "{text}: {err}");
            assert!(err.ends_with(&format!("(expected {URL_FORMS})")), "{err}");
        }
    }

    #[test]
    fn zookeeper_chroot_is_optional() {
        let url: CoordinatorUrl = "zk://a:2181/".parse().unwrap();
        assert_eq!(
            url,
            CoordinatorUrl::ZooKeeper {
                hosts: vec!["a:2181".into()],
                chroot: None,
                login: None,
            }
        );
        let url: CoordinatorUrl = "zk://a:2181/x/y/".parse().unwrap();
        assert_eq!(url.to_string(), "zk://a:2181/x/y");
    }
}

#[cfg(test)]
mod postgres_tests {
    use super::*;

    #[test]
    fn postgres_urls_hide_their_password_in_errors_too() {
        let url: CoordinatorUrl = "postgresql://ids:s3cret@db/app".parse().unwrap();
        assert_eq!(url.kind(), "postgres");
        assert_eq!(url.to_string(), "postgres://ids:***@db:5432/app");
        assert!(!format!("{url:?}").contains("s3cret"));
        let err = "postgres://ids:s3cret@db:99999/app"
            .parse::<CoordinatorUrl>()
            .unwrap_err()
            .to_string();
        assert!(
            err.starts_with(
                "coordinator URL \"postgres://***@db:99999/app\" is invalid: port 99999"
            ),
            "{err}"
        );
        assert!(!err.contains("s3cret"), "{err}");
    }
}

#[cfg(test)]
mod login_tests {
    use super::*;

    #[test]
    fn etcd_and_zookeeper_urls_name_a_user() {
        let url: CoordinatorUrl = "ETCD://ids:p%40ss%2Fw@a:1,b:2".parse().unwrap();
        let CoordinatorUrl::Etcd { endpoints, login } = &url else {
            panic!("{url:?}");
        };
        assert_eq!(endpoints, &["a:1", "b:2"]);
        let login = login.as_ref().unwrap();
        assert_eq!(login.user, "ids");
        assert_eq!(login.password.as_ref().unwrap().expose(), "p@ss/w");
        assert_eq!(url.to_string(), "etcd://ids:***@a:1,b:2");
        assert!(url.has_password());
        assert!(!format!("{url:?}").contains("p@ss"));
        // A raw "@" or "?" in a password is read up to the last "@".
        let url: CoordinatorUrl = "zk://ids:p@s?s@a:1/apps".parse().unwrap();
        assert_eq!(url.login().unwrap().password.unwrap().expose(), "p@s?s");
        assert_eq!(url.to_string(), "zk://ids:***@a:1/apps");
        let url: CoordinatorUrl = "zk://ids@a:1".parse().unwrap();
        assert_eq!(url.to_string(), "zk://ids@a:1");
        assert!(!url.has_password());
    }

    /// Every malformed form of a URL with a password: the error never
    /// shows the password, nor any part of what stood before the last "@".
    #[test]
    fn errors_never_show_the_user_part() {
        for (text, shown, says) in [
            (
                "etcd://alice7:PW@",
                "etcd://***@",
                "endpoint \"\" has no port",
            ),
            (
                "etcd://alice7:PW@host",
                "etcd://***@host",
                "endpoint \"host\" has no port",
            ),
            (
                "etcd://alice7:PW@h:99999",
                "etcd://***@h:99999",
                "port 99999 is out of range",
            ),
            (
                "zk://alice7:PW@h:1//x",
                "zk://***@h:1//x",
                "chroot \"//x\" has an empty",
            ),
            (
                "POSTGRES://ids:PW@db:0/app",
                "POSTGRES://***@db:0/app",
                "port 0 is out of range",
            ),
            (
                "http://alice7:PW@h:1",
                "http://***@h:1",
                "scheme \"http\" is not etcd",
            ),
            ("alice7:PW@h:1", "***@h:1", "it has no scheme"),
            ("etcd://alice7:P/W@h:1", "etcd://***@h:1", "its user part"),
            ("etcd://alice7:P%zW@h:1", "etcd://***@h:1", "its user part"),
            ("zk://al:ice:P/W@h:1/x", "zk://***@h:1/x", "its user part"),
            ("zk://a%3Ab:PW@h:1", "zk://***@h:1", "its user part"),
            ("etcd://:PW@h:1", "etcd://***@h:1", "its user part"),
            (
                "postgres://ids:P/W@db/app",
                "postgres://***@db/app",
                "its user part",
            ),
            (
                "postgresql://ids:P?W@db/app",
                "postgresql://***@db/app",
                "its user part",
            ),
        ] {
            let err = text.parse::<CoordinatorUrl>().unwrap_err().to_string();
            assert!(
                err.starts_with(&format!("coordinator URL {shown:?} is invalid: ")),
                "{text}: {err}"
            );
            assert!(err.contains(says), "{text}: {err}");
            for secret in ["PW", "P/W", "P?W", "P%zW", "alice7", "al:ice", "a%3Ab"] {
                assert!(!err.contains(secret), "{text}: {secret:?} shows in {err}");
            }
        }
    }
}
