//! The backend registry: the one place a [`CoordinatorUrl`] becomes its
//! backend, built with the access settings (TLS, credentials), and the
//! entry points that do something with it: start the claim engine
//! ([`connect`]), read the slot keys ([`read_holders`]), judge an ID
//! ([`whois`]), read a fleet's whole history ([`read_fleet_history`]). A URL whose backend this build leaves out (cargo features
//! `etcd`, `zookeeper`, `postgres`) is refused here, the same for every
//! caller; a new backend is one arm of [`with_backend`].
//!
//! It stands above both the claim engine (`coordinator/`, which knows
//! backends only through the [`Backend`] trait) and the backends
//! (`etcd.rs`, `zookeeper.rs`, `postgres.rs`, which implement it), so
//! that neither imports the other.

use std::collections::BTreeMap;
use std::sync::Arc;

use snowmint::SnowflakeId;

#[cfg(feature = "postgres")]
use crate::coordinator::PostgresUrl;
use crate::coordinator::{
    Backend, ConfigError, Coordinator, CoordinatorAccess, CoordinatorConfig, CoordinatorUrl,
    FleetHistory, FleetName, Holder, Whois, read_fleet_history_on, read_holders_on, whois_on,
};
use crate::{BoxFuture, FleetError, SlotSource};

/// Starts a claim engine for `url`, returned as the [`SlotSource`] the
/// service reads, reaching the coordinator as [`CoordinatorConfig::access`]
/// says (TLS, credentials).
///
/// Returns at once: the node starts fenced ("starting") and the claim is
/// made in the background; watch [`SlotSource::state`]. Must be called
/// inside a Tokio runtime.
///
/// Most programs want an [`EmbeddedIssuer`](crate::EmbeddedIssuer), which
/// runs this for them with the node's lock and mark; this is the engine
/// alone.
///
/// # Examples
///
/// ```no_run
/// # #[tokio::main]
/// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
/// use snowmint::Layout;
/// use snowmint_fleet::{CoordinatorConfig, NodeState, SlotRange, connect};
/// use std::time::Duration;
///
/// let slots = SlotRange::all(Layout::TWITTER);
/// let config =
///     CoordinatorConfig::new("ids", slots, Duration::from_secs(10), "web-1".into(), Layout::TWITTER)?;
/// let engine = connect(&"etcd://10.0.0.9:2379".parse()?, config)?;
/// let mut state = engine.state();
/// while !matches!(*state.borrow_and_update(), NodeState::Active(_)) {
///     state.changed().await?;
/// }
/// engine.release().await;
/// # Ok(())
/// # }
/// ```
///
/// # Errors
///
/// [`FleetError::Coordinator`] when this build lacks the backend (cargo
/// features `etcd`, `zookeeper`, `postgres`), the access settings do not
/// fit the URL ([`CoordinatorAccess::check`]), or there is no Tokio
/// runtime.
pub fn connect(
    url: &CoordinatorUrl,
    config: CoordinatorConfig,
) -> Result<Arc<dyn SlotSource>, FleetError> {
    /// Starts the engine on whichever backend the URL names.
    struct Start(CoordinatorConfig);

    impl UseBackend for Start {
        type Output = Result<Arc<dyn SlotSource>, FleetError>;

        fn with<B: Backend>(self, backend: B) -> Self::Output {
            Ok(Arc::new(Coordinator::start(backend, self.0)?))
        }
    }

    let access = config.access().clone();
    with_backend(url, &access, Start(config))?
}

/// The holders of `fleet`'s slots on the coordinator at `url`, by slot, as
/// they are now: one short session that lists the slot keys, reads each and
/// ends. Keys whose value is not a holder this version can read are left
/// out, and so are keys that vanish between the listing and the reading.
/// For a secured coordinator, see [`read_holders_with`].
///
/// # Examples
///
/// ```no_run
/// # #[tokio::main]
/// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
/// use snowmint_fleet::{CoordinatorUrl, FleetName, read_holders};
///
/// let url: CoordinatorUrl = "etcd://10.0.0.9:2379".parse()?;
/// let fleet: FleetName = "ids".parse()?;
/// for (slot, holder) in read_holders(&url, &fleet).await? {
///     println!("slot {slot}: {} pid {}, gRPC {:?}", holder.host, holder.pid, holder.grpc);
/// }
/// # Ok(())
/// # }
/// ```
///
/// # Errors
///
/// [`FleetError::Coordinator`] when the coordinator cannot be reached or
/// answers with an error, or this build lacks its backend (cargo features
/// `etcd`, `zookeeper`, `postgres`).
pub async fn read_holders(
    url: &CoordinatorUrl,
    fleet: &FleetName,
) -> Result<BTreeMap<u64, Holder>, FleetError> {
    read_holders_with(url, &CoordinatorAccess::default(), fleet).await
}

/// [`read_holders`] from a secured coordinator: TLS and credentials as
/// `access` says (the same a node of the fleet is given). On ZooKeeper,
/// a reader needs the fleet's credentials unless its nodes grant world
/// read.
///
/// # Errors
///
/// As [`read_holders`]; also access settings that do not fit the URL
/// ([`CoordinatorAccess::check`]).
pub async fn read_holders_with(
    url: &CoordinatorUrl,
    access: &CoordinatorAccess,
    fleet: &FleetName,
) -> Result<BTreeMap<u64, Holder>, FleetError> {
    with_backend(url, access, ReadHolders(fleet))?.await
}

/// Reads the slot keys of a fleet with whichever backend the URL names.
struct ReadHolders<'a>(&'a FleetName);

impl<'a> UseBackend for ReadHolders<'a> {
    type Output = BoxFuture<'a, Result<BTreeMap<u64, Holder>, FleetError>>;

    fn with<B: Backend>(self, backend: B) -> Self::Output {
        Box::pin(async move { read_holders_on(&backend, self.0).await })
    }
}

/// Which claim of `fleet` covered the slot of `id` at its millisecond,
/// read from the coordinator at `url` in one short session of its own
/// (the fleet's layout, the slot's history and mark). The ID is read in
/// the fleet's recorded layout.
///
/// # Examples
///
/// ```no_run
/// # #[tokio::main]
/// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
/// use snowmint::SnowflakeId;
/// use snowmint_fleet::{CoordinatorUrl, WhoisAnswer, whois};
///
/// let url: CoordinatorUrl = "etcd://10.0.0.9:2379".parse()?;
/// let id: SnowflakeId = "2127421958475116544".parse()?;
/// let found = whois(&url, &"ids".parse()?, id).await?;
/// match found.answer {
///     WhoisAnswer::Covered => println!("{}", found.message()),
///     other => eprintln!("{}: {}", other.name(), found.message()),
/// }
/// # Ok(())
/// # }
/// ```
///
/// # Errors
///
/// [`FleetError::Coordinator`] when the coordinator cannot be reached or
/// answers with an error, when no node ever claimed in the fleet (it has
/// no layout record), or when this build lacks the backend.
pub async fn whois(
    url: &CoordinatorUrl,
    fleet: &FleetName,
    id: SnowflakeId,
) -> Result<Whois, FleetError> {
    whois_with(url, &CoordinatorAccess::default(), fleet, id).await
}

/// [`whois`] on a secured coordinator: TLS and credentials as `access`
/// says (the same a node of the fleet is given).
///
/// # Errors
///
/// As [`whois`]; also access settings that do not fit the URL
/// ([`CoordinatorAccess::check`]).
pub async fn whois_with(
    url: &CoordinatorUrl,
    access: &CoordinatorAccess,
    fleet: &FleetName,
    id: SnowflakeId,
) -> Result<Whois, FleetError> {
    with_backend(url, access, WhoisOn { fleet, id })?.await
}

/// Judges an ID with whichever backend the URL names.
struct WhoisOn<'a> {
    fleet: &'a FleetName,
    id: SnowflakeId,
}

impl<'a> UseBackend for WhoisOn<'a> {
    type Output = BoxFuture<'a, Result<Whois, FleetError>>;

    fn with<B: Backend>(self, backend: B) -> Self::Output {
        Box::pin(async move { whois_on(&backend, self.fleet, self.id).await })
    }
}

/// Reads the whole claim history of `fleet` from the coordinator at
/// `url`, reached as `access` says, in one short session of its own:
/// what `snowmint audit` judges a column of IDs against.
///
/// # Errors
///
/// [`FleetError::Coordinator`] when the coordinator cannot be reached or
/// answers with an error, when no node ever claimed in the fleet (it has
/// no layout record), or when this build lacks the backend.
pub async fn read_fleet_history(
    url: &CoordinatorUrl,
    access: &CoordinatorAccess,
    fleet: &FleetName,
) -> Result<FleetHistory, FleetError> {
    with_backend(url, access, ReadHistory { fleet })?.await
}

/// Reads a fleet's history with whichever backend the URL names.
struct ReadHistory<'a> {
    fleet: &'a FleetName,
}

impl<'a> UseBackend for ReadHistory<'a> {
    type Output = BoxFuture<'a, Result<FleetHistory, FleetError>>;

    fn with<B: Backend>(self, backend: B) -> Self::Output {
        Box::pin(async move { read_fleet_history_on(&backend, self.fleet).await })
    }
}

/// What a caller does with the backend of a URL, whichever it is. A trait
/// and not a closure, since its one method is generic over the backend
/// ([`Backend`] cannot be a trait object). What it does asynchronously it
/// returns as a future ([`BoxFuture`](crate::BoxFuture)) that owns the
/// backend.
pub(crate) trait UseBackend {
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
pub(crate) fn with_backend<U: UseBackend>(
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
