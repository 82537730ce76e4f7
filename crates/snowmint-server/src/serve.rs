//! Running the service: from a [`Config`] to a node that answers, and back
//! down again, in one entry, [`serve`]:
//!
//! 1. every listener the configuration sets is bound (port 0 picks a free
//!    one; the bound addresses are what the node writes into a claimed
//!    slot key);
//! 2. the node starts: TLS and tokens (their files read first), the state
//!    directory, the slot source, the issuer, and the high-water mark rule
//!    (a mark slightly ahead of the clock is waited out; one too far
//!    ahead refuses to start, naming both times). A coordinated node
//!    starts fenced and claims its slot in the background: it answers at
//!    once, with 503 until it holds one;
//! 3. [`Serving`]: every listener is served through the one front end
//!    until `shutdown` resolves; then none accepts, requests in flight
//!    finish, and the claim is released.
//!
//! It prints nothing: the binary prints the bound addresses
//! ([`Serving::listeners`]). [`AppState::serve`] is step 3 alone, for a
//! state built another way (tests, with a slot source and a clock of
//! their own).

use std::future::Future;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use snowmint::{Clock, OffsetClock, SystemClock};
use snowmint_fleet::{FleetError, Holder, IssuerBuilder, NodeState, SlotSource, system_hostname};
use tokio::net::TcpListener;

use crate::auth::{Auth, TokenFileError, Tokens};
use crate::config::{Config, ConfigError, Identity, Origin, Setting};
use crate::listener::{Guard, Listener, Listeners};
use crate::net::{Tls, TlsError};
use crate::state::AppState;

/// Why the service could not start or stopped with an error.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ServeError {
    /// Node identity or durability.
    #[error(transparent)]
    Fleet(#[from] FleetError),
    /// A refusal to start that a setting would change: the refusal's
    /// message, then the setting to change, named where it was given.
    #[error("{error}, or raise {setting} above the gap")]
    Refused {
        /// The refusal (boxed: the variant would make every result large).
        error: Box<FleetError>,
        /// The setting, as given: `--mark-wait-max (2s by default)`,
        /// `SNOWMINT_MARK_WAIT_MAX (now 5s)`.
        setting: String,
    },
    /// A configuration a node cannot start with (no identity set): bad
    /// input, exit code 2 for the command line.
    #[error(transparent)]
    Config(#[from] ConfigError),
    /// A TLS file that cannot be used (bad input: exit code 2 for the
    /// command line).
    #[error(transparent)]
    Tls(#[from] TlsError),
    /// A token file that cannot be used (bad input, as TLS files).
    #[error(transparent)]
    Tokens(#[from] TokenFileError),
    /// Sockets, files. The message is the context alone: the I/O error is
    /// the source, which error reports print after it.
    #[error("{context}")]
    Io {
        /// What was being done.
        context: String,
        /// The underlying error.
        source: std::io::Error,
    },
    /// The node's task ended before its shutdown (it panicked).
    #[error("the node stopped: {reason}")]
    Stopped {
        /// What ended it.
        reason: String,
    },
}

/// The slot source a configuration asks for (the fleet's one mapping,
/// [`Identity::slot_source`]). A coordinated one starts claiming at once,
/// in the background, and names the HTTP listener's address as the
/// holder's, with the gRPC listener's as its gRPC address (so give them
/// the bound addresses, not port 0).
pub fn slot_source(config: &Config) -> Result<Arc<dyn SlotSource>, ServeError> {
    let holder = holder(&config.listeners).to_string();
    Ok(node_source(config, clock(config)).slot_source(
        config.layout,
        &config.state_dir,
        Some(holder),
    )?)
}

/// The node's source with the node's clock: a coordinated node writes its
/// claim history on it and checks it against its peers' (which it reads
/// over HTTP, see [`crate::peer_clock`]).
fn node_source(config: &Config, clock: Arc<dyn Clock>) -> Identity {
    match &config.identity {
        Identity::Coordinator {
            url,
            config: claims,
        } => {
            let check = claims.clock_check();
            Identity::Coordinator {
                url: url.clone(),
                config: claims
                    .clone()
                    .with_clock(clock)
                    .with_clock_check(check, Some(Arc::new(crate::peer_clock::HttpPeerClock))),
            }
        }
        other => other.clone(),
    }
}

/// The warning for a coordinator URL with a password given as a flag:
/// every local user can read a process's command line
/// (`/proc/PID/cmdline`, `ps`).
pub fn password_on_command_line(config: &Config) -> Option<String> {
    let Identity::Coordinator { url, .. } = &config.identity else {
        return None;
    };
    (url.has_password() && *config.origin(Setting::Coordinator) == crate::config::Origin::Flag)
        .then(|| crate::config::password_warning(url))
}

/// The warnings for listeners served open beside tokens or TLS: their
/// protocol carries neither, so they issue to whoever reaches them (the
/// configuration allows that only on loopback or with the listener's
/// switch).
pub fn open_listeners(config: &Config) -> Vec<String> {
    if config.auth.is_none() && config.tls.is_none() {
        return Vec::new();
    }
    config
        .listeners
        .on()
        .filter_map(|(listener, address)| {
            let Guard::Nothing { open } = listener.guard() else {
                return None;
            };
            let why = if config.listeners.served_open(listener) {
                format!("served open by {}", open.flag())
            } else {
                "reachable from this host only (loopback)".to_owned()
            };
            Some(format!(
                "{} on {address} issues IDs with no token and in cleartext (its protocol carries neither), \
                 unlike the node's other front ends: {why}",
                listener.title()
            ))
        })
        .collect()
}

/// Who this process is, as written into the slot key it claims: an
/// operator reading the coordinator can find the process from it.
fn holder(listeners: &Listeners) -> Holder {
    Holder {
        // A node without a readable hostname still claims; the pid and the
        // address tell it apart.
        host: system_hostname().unwrap_or_else(|_| "unknown".to_owned()),
        pid: std::process::id(),
        listen: listeners.http().to_string(),
        grpc: listeners
            .address(Listener::Grpc)
            .map(|address| address.to_string()),
        started_ms: SystemClock.now_ms(),
    }
}

/// The clock a configuration asks for: the system clock, shifted by
/// `clock_offset_ms`.
pub fn clock(config: &Config) -> Arc<dyn Clock> {
    Arc::new(OffsetClock::new(SystemClock, config.clock_offset_ms))
}

/// Sets the node up: TLS and tokens (their files read first, so that a
/// bad one stops the start before anything else), state directory, slot
/// source, issuer; then waits out a high-water mark slightly ahead of the
/// clock, or refuses one too far ahead. A configuration with no identity
/// is refused first ([`Config::require_identity`]). The fleet's [`IssuerBuilder`]
/// does the issuer's part, as for every program that mints IDs.
async fn start(config: &Config) -> Result<AppState, ServeError> {
    config.require_identity()?;
    let tls = config.tls.clone().map(Tls::load).transpose()?;
    let auth = match &config.auth {
        Some((file, scope)) => Some(Auth::new(Tokens::load(file)?, *scope)),
        None => None,
    };
    let clock = clock(config);
    let issuer = IssuerBuilder::new()
        .source(node_source(config, Arc::clone(&clock)))
        .state_dir(config.state_dir.clone())
        .layout(config.layout)
        .clock_policy(config.clock_policy)
        .shared_clock(clock)
        .mark_step(config.mark_step)
        .mark_wait_max(config.mark_wait_max)
        .holder(holder(&config.listeners).to_string())
        .start_issuer()
        .await
        .map_err(|error| naming_the_setting(config, error))?;
    Ok(AppState::serving(
        issuer,
        config.limits,
        tls,
        auth,
        Some(config.listeners.clone()),
    ))
}

/// A start-up error, with the setting that would change it named when
/// there is one: `mark_wait_max` for a mark too far ahead.
pub(crate) fn naming_the_setting(config: &Config, error: FleetError) -> ServeError {
    if !matches!(error, FleetError::MarkAhead { .. }) {
        return error.into();
    }
    let setting = Setting::MarkWaitMax;
    let value = snowmint::value::format_duration(config.mark_wait_max);
    let setting = match config.origin(setting) {
        Origin::Default => format!("{} ({value} by default)", setting.flag()),
        Origin::Flag => format!("{} (now {value})", setting.flag()),
        Origin::Env => format!("{} (now {value})", setting.env()),
        Origin::File(path) => format!("{} in {} (now {value})", setting.key(), path.display()),
    };
    ServeError::Refused {
        error: Box::new(error),
        setting,
    }
}

/// A node that answers: where its listeners are, and its end.
#[derive(Debug)]
pub struct Serving {
    listeners: Listeners,
    tls: bool,
    task: tokio::task::JoinHandle<()>,
}

impl Serving {
    /// Where each listener listens, bound (port 0 resolved).
    pub fn listeners(&self) -> &Listeners {
        &self.listeners
    }

    /// Whether the listeners that carry TLS speak it (`https://`).
    pub fn tls(&self) -> bool {
        self.tls
    }

    /// Waits until the node has stopped: `shutdown` resolved, every
    /// listener's requests in flight finished (each within the request
    /// timeout), and the claim released.
    ///
    /// # Errors
    ///
    /// [`ServeError::Stopped`] when the node's task ended otherwise (it
    /// panicked).
    pub async fn stopped(self) -> Result<(), ServeError> {
        self.task.await.map_err(|error| ServeError::Stopped {
            reason: error.to_string(),
        })
    }
}

/// Runs a node from `config` until `shutdown` resolves: binds every
/// listener the configuration sets, starts the node, and returns once it
/// answers (see the module docs). It prints nothing; it logs where and as
/// whom it starts (its first log line), the warnings a configuration
/// deserves (a password on the command line, a listener open without a
/// credential), and where each listener listens.
///
/// # Errors
///
/// An address that cannot be bound ([`ServeError::Io`], naming the
/// listener and the address), a TLS or token file that cannot be used,
/// and whatever stops the node's start ([`ServeError::Fleet`],
/// [`ServeError::Refused`]); a configuration with no identity
/// ([`ServeError::Config`]).
///
/// # Examples
///
/// ```
/// # #[tokio::main]
/// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
/// use snowmint_server::config::{Config, Layer, Setting};
/// use tokio::io::{AsyncReadExt, AsyncWriteExt};
///
/// let dir = tempfile::tempdir()?;
/// let mut flags = Layer::flags();
/// flags
///     .set(Setting::Datacenter, "3")
///     .set(Setting::Machine, "7")
///     .set(Setting::Listen, "127.0.0.1:0")
///     .set(Setting::StateDir, dir.path().display().to_string());
/// let config = Config::load_with(flags, |_| None)?;
/// let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
/// let node = snowmint_server::serve(config, async {
///     let _ = stopped.await;
/// })
/// .await?;
///
/// let address = node.listeners().http();
/// let mut connection = tokio::net::TcpStream::connect(address).await?;
/// connection
///     .write_all(b"GET /v1/id HTTP/1.1\r\nHost: ids\r\nConnection: close\r\n\r\n")
///     .await?;
/// let mut answer = String::new();
/// connection.read_to_string(&mut answer).await?;
/// assert!(answer.starts_with("HTTP/1.1 200 OK"), "{answer}");
///
/// stop.send(()).unwrap(); // requests in flight finish, the node's lock is let go
/// node.stopped().await?;
/// # Ok(())
/// # }
/// ```
pub async fn serve(
    config: Config,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> Result<Serving, ServeError> {
    // Bound first, so that a port in use stops the start before anything
    // is claimed; with port 0 the addresses are known only now, and the
    // holder written into a claimed slot key must name the ones clients
    // reach.
    let mut listeners = config.listeners.clone();
    let mut bound = Vec::new();
    for (kind, wanted) in config.listeners.on() {
        let listener = TcpListener::bind(wanted)
            .await
            .map_err(|source| ServeError::Io {
                context: format!("cannot listen for {} on {wanted}", kind.title()),
                source,
            })?;
        let address = listener.local_addr().map_err(|source| ServeError::Io {
            context: format!("reading the {} listening address", kind.title()),
            source,
        })?;
        listeners.set(kind, address);
        bound.push((kind, listener));
    }
    let config = Config {
        listeners,
        ..config
    };
    tracing::info!("{}", startup_line(&config, config.listeners.http()));
    if let Some(warning) = password_on_command_line(&config) {
        tracing::warn!("{warning}");
    }
    for warning in open_listeners(&config) {
        tracing::warn!("{warning}");
    }
    let state = start(&config).await?;
    let tls = state.tls().is_some();
    for (kind, address) in config.listeners.on() {
        tracing::info!(
            "{} listening on {}{address}",
            kind.title(),
            kind.scheme(tls)
        );
    }
    Ok(state.serve(bound, shutdown))
}

impl AppState {
    /// Serves this state on `listeners` (bound) through the one front end
    /// until `shutdown` resolves; then every listener stops accepting,
    /// lets requests in flight finish (each within the request timeout),
    /// and the node's claim is released, so that no front end issues after
    /// it. Each listener's connections idle at most its idle timeout (of
    /// the state's [`Listeners`], when it has them) or the request timeout.
    ///
    /// [`serve`] does this once it has started the node from a
    /// configuration; call it directly for a state built another way.
    pub fn serve(
        self,
        listeners: Vec<(Listener, TcpListener)>,
        shutdown: impl Future<Output = ()> + Send + 'static,
    ) -> Serving {
        let mut bound = self
            .listeners()
            .cloned()
            .unwrap_or_else(|| Listeners::new(std::net::SocketAddr::from(([127, 0, 0, 1], 0))));
        for (kind, listener) in &listeners {
            if let Ok(address) = listener.local_addr() {
                bound.set(*kind, address);
            }
        }
        let tls = self.tls().is_some();
        let idle: Vec<Duration> = listeners
            .iter()
            .map(|(kind, _)| {
                self.listeners()
                    .and_then(|configured| configured.idle_timeout(*kind))
                    .unwrap_or(self.request_timeout())
            })
            .collect();
        let task = tokio::spawn(run(
            self,
            listeners.into_iter().zip(idle).collect(),
            shutdown,
        ));
        Serving {
            listeners: bound,
            tls,
            task,
        }
    }
}

/// Serves `state` on each listener, with its idle timeout, until
/// `shutdown` resolves; then releases the claim once every listener has
/// finished its requests in flight.
async fn run(
    state: AppState,
    listeners: Vec<((Listener, TcpListener), Duration)>,
    shutdown: impl Future<Output = ()> + Send + 'static,
) {
    // One shutdown, told to each front end: each stops accepting, asks
    // its connections to close, ends its streams, and closes what is
    // still open a request timeout later.
    let (stop, stopping) = tokio::sync::watch::channel(false);
    tokio::spawn(async move {
        shutdown.await;
        let _ = stop.send(true);
    });
    let front = crate::net::Front::new(
        state.limits(),
        state.tls().cloned(),
        listeners.len(),
        state.metrics().clone(),
        stopping.clone(),
    );
    // The TLS and token files, read again when they change or on SIGHUP.
    let reloading = tokio::spawn(crate::reload::follow(
        state.tls().cloned(),
        state.auth().cloned(),
        state.metrics().clone(),
    ));
    // Histogram samples pile up between scrapes; drain them now and then.
    let metrics = state.metrics().clone();
    let upkeep = tokio::spawn(async move {
        let mut every = tokio::time::interval(Duration::from_secs(5));
        loop {
            every.tick().await;
            metrics.run_upkeep();
        }
    });
    let mut serving = tokio::task::JoinSet::new();
    for ((kind, listener), idle) in listeners {
        serving.spawn(kind.serve(
            front.clone(),
            listener,
            state.clone(),
            idle,
            stopping.clone(),
        ));
    }
    // Each waits for its own connections, within the request timeout.
    while serving.join_next().await.is_some() {}
    upkeep.abort();
    reloading.abort();
    let source = state.issuer().source();
    let held = match &*source.state().borrow() {
        NodeState::Active(claim) => Some(claim.slot),
        NodeState::Fenced { .. } => None,
    };
    let coordinated = !matches!(source.kind(), "static" | "hostname");
    state.issuer().release().await;
    let stopped = match (coordinated, held) {
        (true, Some(slot)) => format!("stopped; its claim on slot {slot} is released"),
        (true, None) => "stopped; it held no claim, so none is released".to_owned(),
        (false, _) => "stopped; the node's lock is released".to_owned(),
    };
    tracing::info!(source = source.kind(), "{stopped}");
}

/// The first log line: address, identity, state directory, layout and
/// clock policy, each with where its value came from.
pub fn startup_line(config: &Config, address: SocketAddr) -> String {
    let identity = match &config.identity {
        Identity::Static(node) => format!(
            "as datacenter {} {} machine {} {}",
            config.layout.pair_of(*node).0,
            config.origin_note(Setting::Datacenter),
            config.layout.pair_of(*node).1,
            config.origin_note(Setting::Machine)
        ),
        Identity::StaticSlots { node, slots } => format!(
            "as {slots} slots from datacenter {} {} machine {} {}",
            config.layout.pair_of(*node).0,
            config.origin_note(Setting::Datacenter),
            config.layout.pair_of(*node).1,
            config.origin_note(Setting::Machine)
        ),
        Identity::Hostname(Some(name)) => format!("with the slot of hostname {name:?}"),
        Identity::Hostname(None) => "with the slot of this machine's hostname".to_owned(),
        Identity::Coordinator {
            url,
            config: claims,
        } => format!(
            "with a slot of {}..={} claimed from {url} (fleet {})",
            claims.slots().first(),
            claims.slots().last(),
            claims.fleet()
        ),
    };
    let policy = match config.clock_policy.bound() {
        Some(bound) => format!("{} {} ms", config.clock_policy.name(), bound.as_millis()),
        None => config.clock_policy.name().to_owned(),
    };
    let offset = match config.clock_offset_ms {
        0 => String::new(),
        ms => format!(", clock shifted by {ms} ms"),
    };
    // File names only: the files are secrets, their names are not.
    let tls = match &config.tls {
        Some(files) => format!(
            ", TLS with {}{}",
            files.cert.display(),
            match &files.client_ca {
                Some(ca) => format!(" and client certificates of {}", ca.display()),
                None => String::new(),
            }
        ),
        None => String::new(),
    };
    let auth = match &config.auth {
        Some((file, scope)) => format!(", bearer tokens of {} for scope {scope}", file.display()),
        None => String::new(),
    };
    format!(
        "snowmint serve {} starting on {address} {identity}, state directory {} {}, layout {}, clock policy {policy}{offset}{tls}{auth}",
        env!("CARGO_PKG_VERSION"),
        config.state_dir.display(),
        config.origin_note(Setting::StateDir),
        config.layout,
    )
}

/// Resolves on Ctrl-C or SIGTERM.
pub async fn shutdown_signal() {
    let ctrl_c = async {
        if tokio::signal::ctrl_c().await.is_err() {
            std::future::pending::<()>().await;
        }
    };
    #[cfg(unix)]
    let terminate = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut signal) => {
                signal.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    #[cfg(not(unix))]
    let terminate = std::future::pending::<()>();
    tokio::select! {
        () = ctrl_c => tracing::info!("Ctrl-C received"),
        () = terminate => tracing::info!("SIGTERM received"),
    }
}
