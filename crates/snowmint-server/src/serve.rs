//! Running the service: from a [`Config`] to a node that answers, and back
//! down again.
//!
//! 1. [`start`]: the state directory, the slot source, the issuer, and the
//!    high-water mark rule (a mark slightly ahead of the clock is waited
//!    out; one too far ahead refuses to start, naming both times). A
//!    coordinated node (etcd, ZooKeeper) starts fenced and claims its slot
//!    in the background: it answers at once, with 503 until it holds one.
//! 2. [`run`]: serve until `shutdown` resolves, let in-flight requests
//!    finish, then release the claim. [`run_with_grpc`] serves the gRPC
//!    API on a second listener as well, from the same state, and
//!    [`run_front_ends`] memcached's text protocol too.
//!
//! [`serve`] does both, with the log lines an operator expects.

use std::future::Future;
use std::io::Write;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use snowmint::{Clock, OffsetClock, SystemClock};
use snowmint_fleet::{FleetError, Holder, IssuerBuilder, SlotSource, system_hostname};
use tokio::net::TcpListener;

use crate::auth::{Auth, TokenFileError, Tokens};
use crate::config::{Config, Identity, Origin, Setting};
use crate::net::{Listener, Tls, TlsError};
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
}

/// The slot source a configuration asks for (the fleet's one mapping,
/// [`Identity::slot_source`]). A coordinated one starts claiming at once,
/// in the background, and names `config.listen` as the holder's address,
/// with `config.grpc_listen` as its gRPC address (so give them the bound
/// addresses, not port 0).
pub fn slot_source(config: &Config) -> Result<Arc<dyn SlotSource>, ServeError> {
    let holder = holder(config.listen, config.grpc_listen).to_string();
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

/// The warning for memcached served beside tokens or TLS: its protocol
/// carries neither, so it issues to whoever reaches it (the configuration
/// allows that only on loopback or with `--memcached-unauthenticated`).
pub fn memcached_open(config: &Config) -> Option<String> {
    let address = config.memcached_listen?;
    if config.auth.is_none() && config.tls.is_none() {
        return None;
    }
    let why = if address.ip().is_loopback() {
        "reachable from this host only (loopback)"
    } else {
        "served open by --memcached-unauthenticated"
    };
    Some(format!(
        "memcached on {address} issues IDs with no token and in cleartext (its protocol carries neither), \
         unlike the node's other front ends: {why}"
    ))
}

/// Who this process is, as written into the slot key it claims: an
/// operator reading the coordinator can find the process from it.
fn holder(listen: SocketAddr, grpc: Option<SocketAddr>) -> Holder {
    Holder {
        // A node without a readable hostname still claims; the pid and the
        // address tell it apart.
        host: system_hostname().unwrap_or_else(|_| "unknown".to_owned()),
        pid: std::process::id(),
        listen: listen.to_string(),
        grpc: grpc.map(|address| address.to_string()),
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
/// clock, or refuses one too far ahead. The fleet's [`IssuerBuilder`]
/// does the issuer's part, as for every program that mints IDs.
pub async fn start(config: &Config) -> Result<AppState, ServeError> {
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
        .holder(holder(config.listen, config.grpc_listen).to_string())
        .start_issuer()
        .await
        .map_err(|error| naming_the_setting(config, error))?;
    Ok(AppState::secured(issuer, config.limits, tls, auth))
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

/// Serves `state` on `listener` until `shutdown` resolves; then stops
/// accepting, lets requests in flight finish (each within the request
/// timeout) and releases the node's claim.
///
/// Every connection is held to the limits of `state` (`net/`):
/// a first request and each request head within the request timeout, no
/// idling or unread answers longer than that, a cap on connections that
/// keeps descriptors for the state files, so that slow, silent or
/// greedy clients cannot hold connections (and descriptors) forever.
pub async fn run(
    listener: TcpListener,
    state: AppState,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> Result<(), ServeError> {
    run_with_grpc(listener, None, state, shutdown).await
}

/// [`run`], also serving the gRPC API ([`crate::grpc`]) on `grpc` when
/// given: both stop accepting when `shutdown` resolves, and the claim is
/// released once both have finished their calls in flight.
pub async fn run_with_grpc(
    listener: TcpListener,
    grpc: Option<TcpListener>,
    state: AppState,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> Result<(), ServeError> {
    let front_ends = FrontEnds {
        grpc,
        ..FrontEnds::http(listener)
    };
    run_front_ends(front_ends, state, shutdown).await
}

/// The listeners of a node's front ends, bound: HTTP always; gRPC and
/// memcached's text protocol when configured.
#[derive(Debug)]
pub struct FrontEnds {
    /// The HTTP API.
    pub http: TcpListener,
    /// The gRPC API ([`crate::grpc`]).
    pub grpc: Option<TcpListener>,
    /// memcached's text protocol.
    pub memcached: Option<TcpListener>,
    /// How long a memcached connection may stay silent.
    pub memcached_idle_timeout: Duration,
}

impl FrontEnds {
    /// HTTP alone.
    pub fn http(listener: TcpListener) -> FrontEnds {
        FrontEnds {
            http: listener,
            grpc: None,
            memcached: None,
            memcached_idle_timeout: Duration::from_secs(600),
        }
    }
}

/// [`run`] over every front end of `front_ends`: all stop accepting when
/// `shutdown` resolves, and the claim is released once all have finished
/// their requests in flight, so that no front end issues after it.
pub async fn run_front_ends(
    front_ends: FrontEnds,
    state: AppState,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> Result<(), ServeError> {
    let FrontEnds {
        http: listener,
        grpc,
        memcached,
        memcached_idle_timeout,
    } = front_ends;
    // One shutdown, told to each front end: each stops accepting, asks
    // its connections to close, ends its streams, and closes what is
    // still open a request timeout later.
    let (stop, stopping_rx) = tokio::sync::watch::channel(false);
    tokio::spawn(async move {
        shutdown.await;
        let _ = stop.send(true);
    });
    let stopping = {
        let stopping_rx = stopping_rx.clone();
        move || {
            let mut stopped = stopping_rx.clone();
            async move {
                // An error means the sender is gone, which it is only
                // after sending.
                let _ = stopped.wait_for(|stop| *stop).await;
            }
        }
    };
    let memcached_task = memcached.map(|listener| {
        let (state, stopping) = (state.clone(), stopping());
        tokio::spawn(crate::memcached::serve(
            listener,
            state,
            memcached_idle_timeout,
            stopping,
        ))
    });
    let front = crate::net::Front::new(
        state.limits(),
        state.tls().cloned(),
        1 + usize::from(grpc.is_some()),
        state.metrics().clone(),
        stopping_rx.clone(),
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
    let http = front.serve(listener, Listener::Http, crate::app(state.clone()));
    match grpc {
        Some(grpc) => {
            let grpc = crate::grpc::serve_on(&front, grpc, state.clone(), stopping_rx);
            tokio::join!(http, grpc);
        }
        None => http.await,
    }
    if let Some(task) = memcached_task {
        // It waits for its own connections, within the request timeout.
        let _ = task.await;
    }
    upkeep.abort();
    reloading.abort();
    state.issuer().release().await;
    tracing::info!(
        source = state.issuer().source().kind(),
        "stopped; the node's claim is released"
    );
    Ok(())
}

/// Runs `snowmint serve` on an already bound `listener`: logs where and as
/// whom it starts (its first log line), binds `config.grpc_listen` and
/// `config.memcached_listen` if set, starts the node, prints
/// `gRPC listening on http://ADDR` (with gRPC),
/// `memcached listening on ADDR` (with memcached) and then
/// `listening on http://ADDR` to stdout once it answers (`https://` with
/// TLS), and runs until `shutdown`.
pub async fn serve(
    config: Config,
    listener: TcpListener,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> Result<(), ServeError> {
    let address = listener.local_addr().map_err(|source| ServeError::Io {
        context: "reading the listening address".to_owned(),
        source,
    })?;
    tracing::info!("{}", startup_line(&config, address));
    if let Some(warning) = password_on_command_line(&config) {
        tracing::warn!("{warning}");
    }
    if let Some(warning) = memcached_open(&config) {
        tracing::warn!("{warning}");
    }
    let grpc = match config.grpc_listen {
        Some(grpc_address) => {
            let bound = TcpListener::bind(grpc_address)
                .await
                .map_err(|source| ServeError::Io {
                    context: format!("cannot listen for gRPC on {grpc_address}"),
                    source,
                })?;
            let local = bound.local_addr().map_err(|source| ServeError::Io {
                context: "reading the gRPC listening address".to_owned(),
                source,
            })?;
            Some((bound, local))
        }
        None => None,
    };
    let memcached = match config.memcached_listen {
        Some(memcached_address) => {
            let bound = TcpListener::bind(memcached_address)
                .await
                .map_err(|source| ServeError::Io {
                    context: format!("cannot listen for memcached on {memcached_address}"),
                    source,
                })?;
            let local = bound.local_addr().map_err(|source| ServeError::Io {
                context: "reading the memcached listening address".to_owned(),
                source,
            })?;
            Some((bound, local))
        }
        None => None,
    };
    // With port 0 the addresses are known only now; the holder written into
    // a claimed slot key must name the ones clients reach.
    let config = Config {
        listen: address,
        grpc_listen: grpc.as_ref().map(|(_, local)| *local),
        ..config
    };
    let state = start(&config).await?;
    // Tests and scripts read the ports from here; a closed stdout is no
    // reason to stop serving.
    let scheme = if state.tls().is_some() {
        "https"
    } else {
        "http"
    };
    if let Some((_, grpc_address)) = &grpc {
        tracing::info!("gRPC listening on {scheme}://{grpc_address}");
        let _ = writeln!(
            std::io::stdout(),
            "gRPC listening on {scheme}://{grpc_address}"
        );
    }
    if let Some((_, memcached_address)) = &memcached {
        tracing::info!("memcached listening on {memcached_address}");
        let _ = writeln!(
            std::io::stdout(),
            "memcached listening on {memcached_address}"
        );
    }
    tracing::info!("listening on {scheme}://{address}");
    let _ = writeln!(std::io::stdout(), "listening on {scheme}://{address}");
    let _ = std::io::stdout().flush();
    let front_ends = FrontEnds {
        http: listener,
        grpc: grpc.map(|(bound, _)| bound),
        memcached: memcached.map(|(bound, _)| bound),
        memcached_idle_timeout: config.memcached_idle_timeout,
    };
    run_front_ends(front_ends, state, shutdown).await
}

/// The first log line: address, identity, state directory, layout and
/// clock policy, each with where its value came from.
pub fn startup_line(config: &Config, address: SocketAddr) -> String {
    let identity = match &config.identity {
        Identity::Static(node) => format!(
            "as datacenter {} {} machine {} {}",
            node.datacenter,
            config.origin_note(Setting::Datacenter),
            node.machine,
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
