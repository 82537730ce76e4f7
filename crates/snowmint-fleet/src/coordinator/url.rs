//! Where the coordination service is: [`CoordinatorUrl`], read from
//! `etcd://...`, `zk://...` and `postgres://...` URLs.

mod postgres;

use std::fmt;
use std::str::FromStr;

use super::config::ConfigError;
pub use postgres::{PostgresUrl, SslMode};

/// Where the coordination service is.
///
/// - `etcd://HOST:PORT[,HOST:PORT...]`
/// - `zk://HOST:PORT[,HOST:PORT...][/CHROOT]`
/// - `postgres://USER[:PASSWORD]@HOST[:PORT][,HOST[:PORT]...]/DB[?PARAMS]`
///   (or `postgresql://`), libpq's form; see [`PostgresUrl`]. Shown
///   everywhere with the password as `***`.
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
///     }
/// );
/// assert_eq!(url.to_string(), "zk://10.0.0.1:2181,10.0.0.2:2181/apps");
///
/// let err = "etcd://localhost:99999".parse::<CoordinatorUrl>().unwrap_err();
/// assert!(err.to_string().contains("port 99999 is out of range (1..=65535)"));
/// # Ok::<(), snowmint_fleet::ConfigError>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CoordinatorUrl {
    /// An etcd cluster, reached through any of its client endpoints.
    Etcd {
        /// `HOST:PORT` of each endpoint.
        endpoints: Vec<String>,
    },
    /// A ZooKeeper ensemble, with an optional root for every path.
    ZooKeeper {
        /// `HOST:PORT` of each server.
        hosts: Vec<String>,
        /// A path every znode of snowmint lives under, such as `/apps`.
        chroot: Option<String>,
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
}

impl FromStr for CoordinatorUrl {
    type Err = ConfigError;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let invalid = |reason: String| ConfigError::Url {
            value: snowmint::value::echo(&postgres::hide_password(text)),
            reason,
        };
        let (scheme, rest) = text
            .split_once("://")
            .ok_or_else(|| invalid("it has no scheme".into()))?;
        if matches!(scheme, "postgres" | "postgresql") {
            return PostgresUrl::parse(rest)
                .map(|url| CoordinatorUrl::Postgres(Box::new(url)))
                .map_err(invalid);
        }
        let (authority, path) = match rest.find('/') {
            Some(at) => (&rest[..at], Some(&rest[at..])),
            None => (rest, None),
        };
        let hosts = authority
            .split(',')
            .map(|host| check_host_port(host).map(str::to_owned))
            .collect::<Result<Vec<_>, _>>()
            .map_err(invalid)?;
        match scheme {
            "etcd" => match path {
                None | Some("/") => Ok(CoordinatorUrl::Etcd { endpoints: hosts }),
                Some(path) => Err(invalid(format!("etcd URLs take no path, found {path:?}"))),
            },
            "zk" | "zookeeper" => {
                let chroot = match path {
                    None | Some("/") => None,
                    Some(path) => Some(check_chroot(path).map_err(invalid)?.to_owned()),
                };
                Ok(CoordinatorUrl::ZooKeeper { hosts, chroot })
            }
            other => Err(invalid(format!(
                "scheme {other:?} is not etcd, zk or postgres"
            ))),
        }
    }
}

impl fmt::Display for CoordinatorUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CoordinatorUrl::Etcd { endpoints } => write!(f, "etcd://{}", endpoints.join(",")),
            CoordinatorUrl::ZooKeeper { hosts, chroot } => {
                write!(
                    f,
                    "zk://{}{}",
                    hosts.join(","),
                    chroot.as_deref().unwrap_or("")
                )
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
                endpoints: vec!["127.0.0.1:2379".into(), "[::1]:2380".into()]
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
            assert!(
                err.starts_with(&format!("coordinator URL {text:?} is invalid: ")),
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
                chroot: None
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
                "coordinator URL \"postgres://ids:***@db:99999/app\" is invalid: port 99999"
            ),
            "{err}"
        );
        assert!(!err.contains("s3cret"), "{err}");
    }
}
