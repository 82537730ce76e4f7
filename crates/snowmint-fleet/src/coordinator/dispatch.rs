//! The one place a [`CoordinatorUrl`] becomes its backend: built with the
//! access settings (TLS, credentials) and handed to what the caller does
//! with it ([`UseBackend`]): start the claim engine ([`connect`]), read
//! the slot keys ([`read_holders`]), judge an ID ([`whois`]). A URL whose
//! backend this build leaves out (cargo features `etcd`, `zookeeper`,
//! `postgres`) is refused here, the same for every caller; a new backend
//! is one arm of [`with_backend`].
//!
//! [`connect`]: super::connect
//! [`read_holders`]: super::read_holders
//! [`whois`]: super::whois

#[cfg(feature = "postgres")]
use super::PostgresUrl;
use super::{Backend, ConfigError, CoordinatorAccess, CoordinatorUrl};
use crate::FleetError;

/// What a caller does with the backend of a URL, whichever it is. A trait
/// and not a closure, since its one method is generic over the backend
/// ([`Backend`] cannot be a trait object). What it does asynchronously it
/// returns as a future ([`BoxFuture`](crate::BoxFuture)) that owns the
/// backend.
pub(super) trait UseBackend {
    /// What the caller gets.
    type Output;

    /// Does the caller's work with `backend`.
    // Never called in a build without backends: what the callers do with
    // a backend is then dead, but is still compiled and checked.
    #[cfg_attr(
        not(any(feature = "etcd", feature = "zookeeper", feature = "postgres")),
        allow(dead_code)
    )]
    fn with<B: Backend>(self, backend: B) -> Self::Output;
}

/// Builds the backend for `url`, reached as `access` says, and hands it to
/// `user`.
///
/// # Errors
///
/// [`FleetError::Coordinator`] when this build lacks the backend, or the
/// access settings do not fit the URL ([`CoordinatorAccess::check`]).
#[cfg_attr(
    not(any(feature = "etcd", feature = "zookeeper", feature = "postgres")),
    allow(unused_variables)
)]
pub(super) fn with_backend<U: UseBackend>(
    url: &CoordinatorUrl,
    access: &CoordinatorAccess,
    user: U,
) -> Result<U::Output, FleetError> {
    match url {
        #[cfg(feature = "etcd")]
        CoordinatorUrl::Etcd { endpoints, .. } => {
            Ok(user.with(etcd_backend(url, endpoints, access)?))
        }
        #[cfg(feature = "zookeeper")]
        CoordinatorUrl::ZooKeeper { hosts, chroot, .. } => {
            Ok(user.with(zookeeper_backend(url, hosts, chroot, access)?))
        }
        #[cfg(feature = "postgres")]
        CoordinatorUrl::Postgres(target) => Ok(user.with(postgres_backend(url, target, access)?)),
        #[allow(unreachable_patterns)] // with every backend built in, no URL lacks support
        other => Err(unsupported(other)),
    }
}

/// The error for a coordinator whose backend this build leaves out.
fn unsupported(url: &CoordinatorUrl) -> FleetError {
    FleetError::Coordinator {
        coordinator: url.to_string(),
        message: format!(
            "this build has no {kind} support (build with the cargo feature `{kind}`)",
            kind = url.kind()
        ),
    }
}

/// The error for access settings that do not fit `url`.
#[cfg_attr(
    not(any(feature = "etcd", feature = "zookeeper", feature = "postgres")),
    allow(dead_code)
)]
fn unfit(url: &CoordinatorUrl, error: ConfigError) -> FleetError {
    FleetError::Coordinator {
        coordinator: url.to_string(),
        message: error.to_string(),
    }
}

/// The etcd backend for `url`, with TLS and credentials as `access` says.
#[cfg(feature = "etcd")]
fn etcd_backend(
    url: &CoordinatorUrl,
    endpoints: &[String],
    access: &CoordinatorAccess,
) -> Result<crate::etcd::EtcdBackend, FleetError> {
    access.check(url).map_err(|error| unfit(url, error))?;
    let mut backend = crate::etcd::EtcdBackend::new(endpoints.to_vec());
    if let Some(tls) = access.tls() {
        backend = backend.with_tls(tls.clone());
    }
    if let Some(credentials) = access.credentials(url).map_err(|error| unfit(url, error))? {
        backend = backend.with_credentials(credentials);
    }
    Ok(backend)
}

/// The ZooKeeper backend for `url`, with TLS, credentials and ACLs as
/// `access` says.
#[cfg(feature = "zookeeper")]
fn zookeeper_backend(
    url: &CoordinatorUrl,
    hosts: &[String],
    chroot: &Option<String>,
    access: &CoordinatorAccess,
) -> Result<crate::zookeeper::ZooKeeperBackend, FleetError> {
    access.check(url).map_err(|error| unfit(url, error))?;
    let mut backend = crate::zookeeper::ZooKeeperBackend::new(hosts.to_vec(), chroot.clone());
    if let Some(tls) = access.tls() {
        backend = backend.with_tls(tls.clone());
    }
    if let Some(credentials) = access.credentials(url).map_err(|error| unfit(url, error))? {
        backend = backend.with_credentials(credentials, access.world_read());
    }
    Ok(backend)
}

/// The PostgreSQL backend for `url`, with the password given apart from
/// the URL, if any.
#[cfg(feature = "postgres")]
fn postgres_backend(
    url: &CoordinatorUrl,
    target: &PostgresUrl,
    access: &CoordinatorAccess,
) -> Result<crate::postgres::PostgresBackend, FleetError> {
    access.check(url).map_err(|error| unfit(url, error))?;
    let mut backend = crate::postgres::PostgresBackend::new(target.clone());
    if let Some(password) = access.password() {
        backend = backend.with_password(password.clone());
    }
    Ok(backend)
}
