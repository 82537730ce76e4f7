//! How a node gets into a secured etcd or ZooKeeper: TLS
//! ([`CoordinatorTls`]: the authority that signed the servers'
//! certificates, and the node's own certificate for mutual TLS), a user
//! and password ([`Credentials`]), and [`CoordinatorAccess`], which carries
//! them from the settings to the backend.
//!
//! The TLS files are read again for every new session, so that
//! certificates rotated on disk (as cert-manager does) are used from the
//! next connection on; each reading checks them ([`CoordinatorTls::load`])
//! and says what is wrong in a sentence that names the file, never what a
//! key holds.

use std::path::{Path, PathBuf};

use super::config::ConfigError;
use super::secret::Secret;
use super::url::CoordinatorUrl;

/// TLS to etcd or ZooKeeper: on whenever a CA is given; mutual when the
/// node's certificate and key are given too.
///
/// # Examples
///
/// ```
/// use snowmint_fleet::CoordinatorTls;
///
/// let tls = CoordinatorTls::new("/etc/snowmint/etcd-ca.pem")
///     .with_identity("/etc/snowmint/node.pem", "/etc/snowmint/node-key.pem");
/// assert_eq!(tls.cert().unwrap().to_str(), Some("/etc/snowmint/node.pem"));
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CoordinatorTls {
    pub(super) ca: PathBuf,
    pub(super) identity: Option<(PathBuf, PathBuf)>,
}

impl CoordinatorTls {
    /// TLS checked against the authorities in the PEM file `ca`.
    pub fn new(ca: impl Into<PathBuf>) -> CoordinatorTls {
        CoordinatorTls {
            ca: ca.into(),
            identity: None,
        }
    }

    /// The same, presenting the certificate (chain) in the PEM file `cert`
    /// with the private key in the PEM file `key`: mutual TLS.
    pub fn with_identity(self, cert: impl Into<PathBuf>, key: impl Into<PathBuf>) -> Self {
        CoordinatorTls {
            identity: Some((cert.into(), key.into())),
            ..self
        }
    }

    /// The CA file.
    pub fn ca(&self) -> &Path {
        &self.ca
    }

    /// The node's certificate file, for mutual TLS.
    pub fn cert(&self) -> Option<&Path> {
        self.identity.as_ref().map(|(cert, _)| cert.as_path())
    }

    /// The node's private key file, for mutual TLS.
    pub fn key(&self) -> Option<&Path> {
        self.identity.as_ref().map(|(_, key)| key.as_path())
    }
}

/// A user and password to log in with: an etcd user (RBAC), or a
/// ZooKeeper `digest` identity. Its `Debug` shows the password as `***`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Credentials {
    /// The user name.
    pub user: String,
    /// The password.
    pub password: Secret,
}

/// How a node gets into a secured coordinator, besides what its URL says:
/// TLS, the password when the URL names a user without one, and whether
/// ZooKeeper's world may read snowmint's znodes.
///
/// # Examples
///
/// ```
/// use snowmint_fleet::{CoordinatorAccess, CoordinatorUrl, Secret};
///
/// let url: CoordinatorUrl = "etcd://ids@10.0.0.1:2379".parse()?;
/// let access = CoordinatorAccess::default().with_password(Secret::new("s3cret"));
/// let credentials = access.credentials(&url)?.unwrap();
/// assert_eq!((credentials.user.as_str(), credentials.password.expose()), ("ids", "s3cret"));
///
/// // A password in the URL and another beside it: one too many.
/// let url: CoordinatorUrl = "etcd://ids:other@10.0.0.1:2379".parse()?;
/// assert!(access.check(&url).unwrap_err().to_string().contains("given twice"));
/// # Ok::<(), snowmint_fleet::ConfigError>(())
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CoordinatorAccess {
    tls: Option<CoordinatorTls>,
    password: Option<Secret>,
    world_read: bool,
}

impl CoordinatorAccess {
    /// The same, with TLS to etcd or ZooKeeper.
    pub fn with_tls(self, tls: CoordinatorTls) -> Self {
        CoordinatorAccess {
            tls: Some(tls),
            ..self
        }
    }

    /// The same, with the password of the user the URL names (when the URL
    /// holds none): from a file or the environment, so that it is not on
    /// a command line.
    pub fn with_password(self, password: Secret) -> Self {
        CoordinatorAccess {
            password: Some(password),
            ..self
        }
    }

    /// The same, letting anyone read (not write) the znodes snowmint
    /// creates on ZooKeeper with credentials, so that clients without
    /// them can find the nodes. Off by default.
    pub fn with_world_read(self, world_read: bool) -> Self {
        CoordinatorAccess { world_read, ..self }
    }

    /// TLS to etcd or ZooKeeper, if set.
    pub fn tls(&self) -> Option<&CoordinatorTls> {
        self.tls.as_ref()
    }

    /// The password given apart from the URL, if any.
    pub fn password(&self) -> Option<&Secret> {
        self.password.as_ref()
    }

    /// Whether anyone may read the znodes snowmint creates with
    /// credentials.
    pub fn world_read(&self) -> bool {
        self.world_read
    }

    /// The user and password to log in to etcd or ZooKeeper at `url` with:
    /// the URL's user, with the URL's password or the one given here.
    /// `None` for a URL that names no user, and for PostgreSQL (whose
    /// backend looks the password up itself).
    ///
    /// # Errors
    ///
    /// [`ConfigError::Access`] for a password given twice, a password with
    /// no user to go with it, or a user with no password.
    pub fn credentials(&self, url: &CoordinatorUrl) -> Result<Option<Credentials>, ConfigError> {
        let login = url.login();
        if let (Some(login), Some(_)) = (&login, &self.password)
            && login.password.is_some()
        {
            return Err(ConfigError::Access(
                "the coordinator password is given twice, in the URL and apart from it; give it once (best apart from the URL, which shows in process lists)".into(),
            ));
        }
        if matches!(url, CoordinatorUrl::Postgres(_)) {
            return Ok(None);
        }
        match login {
            None if self.password.is_some() => Err(ConfigError::Access(format!(
                "a coordinator password is given, but the URL names no user to log in as; write the user into it: {}://USER@HOST:PORT",
                scheme(url)
            ))),
            None => Ok(None),
            Some(login) => match login.password.or_else(|| self.password.clone()) {
                Some(password) => Ok(Some(Credentials {
                    user: login.user,
                    password,
                })),
                None => Err(ConfigError::Access(format!(
                    "the coordinator URL names the user {:?} but no password; give the password apart from the URL (a password file, or the environment)",
                    login.user
                ))),
            },
        }
    }

    /// Checks that these settings can be used with `url`: the credentials
    /// as [`credentials`](Self::credentials) says; TLS files only for
    /// etcd and ZooKeeper (PostgreSQL takes `sslmode` and `sslrootcert` in
    /// its URL); world read only for ZooKeeper with credentials.
    ///
    /// # Errors
    ///
    /// [`ConfigError::Access`], saying which setting does not fit.
    pub fn check(&self, url: &CoordinatorUrl) -> Result<(), ConfigError> {
        let credentials = self.credentials(url)?;
        if self.tls.is_some() && matches!(url, CoordinatorUrl::Postgres(_)) {
            return Err(ConfigError::Access(
                "a postgres:// coordinator takes its TLS settings in its URL (sslmode=verify-full&sslrootcert=FILE), not as a coordinator CA, certificate or key".into(),
            ));
        }
        if self.world_read {
            if !matches!(url, CoordinatorUrl::ZooKeeper { .. }) {
                return Err(ConfigError::Access(format!(
                    "world read applies to ZooKeeper's znodes only, not to {}",
                    url.kind()
                )));
            }
            if credentials.is_none() {
                return Err(ConfigError::Access(
                    "world read applies only with a ZooKeeper user and password (without them every znode is open to all)".into(),
                ));
            }
        }
        Ok(())
    }
}

fn scheme(url: &CoordinatorUrl) -> &'static str {
    match url {
        CoordinatorUrl::Etcd { .. } => "etcd",
        CoordinatorUrl::ZooKeeper { .. } => "zk",
        CoordinatorUrl::Postgres(_) => "postgres",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn url(text: &str) -> CoordinatorUrl {
        text.parse().unwrap()
    }

    #[test]
    fn credentials_come_from_the_url_or_beside_it() {
        let none = CoordinatorAccess::default();
        let beside = CoordinatorAccess::default().with_password(Secret::new("pw"));
        assert_eq!(none.credentials(&url("etcd://a:1")).unwrap(), None);
        let both = none.credentials(&url("zk://u:p@a:1")).unwrap().unwrap();
        assert_eq!((both.user.as_str(), both.password.expose()), ("u", "p"));
        let apart = beside.credentials(&url("zk://u@a:1")).unwrap().unwrap();
        assert_eq!(apart.password.expose(), "pw");
        for (access, text, says) in [
            (&beside, "etcd://u:p@a:1", "given twice"),
            (&beside, "postgres://u:p@db/app", "given twice"),
            (&beside, "etcd://a:1", "etcd://USER@HOST:PORT"),
            (&beside, "zk://a:1", "zk://USER@HOST:PORT"),
            (
                &none,
                "etcd://u@a:1",
                "names the user \"u\" but no password",
            ),
        ] {
            let err = access.check(&url(text)).unwrap_err().to_string();
            assert!(err.contains(says), "{text}: {err}");
            assert!(!err.contains("pw") && !err.contains(":p@"), "{err}");
        }
        // PostgreSQL looks its password up itself (PGPASSWORD, ~/.pgpass).
        assert_eq!(none.credentials(&url("postgres://u@db/app")).unwrap(), None);
    }

    #[test]
    fn settings_that_do_not_fit_the_coordinator_are_refused() {
        let tls = CoordinatorAccess::default().with_tls(CoordinatorTls::new("/ca.pem"));
        assert!(tls.check(&url("etcd://a:1")).is_ok());
        let err = tls.check(&url("postgres://u@db/app")).unwrap_err();
        assert!(err.to_string().contains("sslrootcert"), "{err}");
        let world = CoordinatorAccess::default().with_world_read(true);
        assert!(world.check(&url("zk://u:p@a:1")).is_ok());
        let err = world.check(&url("zk://a:1")).unwrap_err();
        assert!(err.to_string().contains("open to all"), "{err}");
        let err = world.check(&url("etcd://u:p@a:1")).unwrap_err();
        assert!(err.to_string().contains("ZooKeeper's znodes only"), "{err}");
    }
}
