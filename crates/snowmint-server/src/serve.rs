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
//!    API on a second listener as well, from the same state.
//!
//! [`serve`] does both, with the log lines an operator expects.

use std::future::Future;
use std::io::Write;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use snowmint::{Clock, OffsetClock, SystemClock};
use snowmint_fleet::{FleetError, Holder, SlotSource, StaticSource, system_hostname};
use tokio::net::TcpListener;

use crate::auth::{Auth, TokenFileError, Tokens};
use crate::config::{Config, Identity, Setting};
use crate::net::{Listener, Tls, TlsError};
use crate::state::AppState;
use snowmint_fleet::{Issuer, IssuerOptions};

/// Why the service could not start or stopped with an error.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ServeError {
    /// Node identity or durability.
    #[error(transparent)]
    Fleet(#[from] FleetError),
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

/// The slot source a configuration asks for. A coordinated one starts
/// claiming at once, in the background, and names `config.listen` as the
/// holder's address, with `config.grpc_listen` as its gRPC address (so
/// give them the bound addresses, not port 0).
pub fn slot_source(config: &Config) -> Result<Arc<dyn SlotSource>, ServeError> {
    match &config.identity {
        Identity::Static(node) => Ok(Arc::new(StaticSource::new(config.layout, *node)?)),
        Identity::Hostname(name) => {
            let hostname = match name {
                Some(name) => name.clone(),
                None => system_hostname()?,
            };
            Ok(Arc::new(StaticSource::from_hostname(
                config.layout,
                &hostname,
            )?))
        }
        Identity::Coordinator {
            url,
            config: claims,
        } => {
            let claims = claims
                .clone()
                .with_holder(holder(config.listen, config.grpc_listen).to_string())
                // A restarted node tries the slot it held first, so that it
                // tends to get it back.
                .with_preferred_slot(snowmint_fleet::last_written_slot(
                    &config.state_dir,
                    config.layout,
                ));
            Ok(snowmint_fleet::connect(url, claims)?)
        }
    }
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
/// clock, or refuses one too far ahead.
pub async fn start(config: &Config) -> Result<AppState, ServeError> {
    let tls = config.tls.clone().map(Tls::load).transpose()?;
    let auth = match &config.auth {
        Some((file, scope)) => Some(Auth::new(Tokens::load(file)?, *scope)),
        None => None,
    };
    snowmint_fleet::create_state_dir(&config.state_dir)?;
    let source = slot_source(config)?;
    let clock = clock(config);
    let options = IssuerOptions {
        layout: config.layout,
        clock_policy: config.clock_policy,
        clock: Arc::clone(&clock),
        state_dir: config.state_dir.clone(),
        mark_step: config.mark_step,
    };
    let issuer = Issuer::start(source, options).await?;
    issuer.wait_out_mark(config.mark_wait_max).await?;
    Ok(AppState::secured(issuer, config.limits, tls, auth))
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
    // One shutdown, told to each front end: each stops accepting, asks
    // its connections to close, ends its streams, and closes what is
    // still open a request timeout later.
    let (stop, stopping_rx) = tokio::sync::watch::channel(false);
    tokio::spawn(async move {
        shutdown.await;
        let _ = stop.send(true);
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
/// whom it starts (its first log line), binds `config.grpc_listen` if set,
/// starts the node, prints `gRPC listening on http://ADDR` (with gRPC) and
/// then `listening on http://ADDR` to stdout once it answers (`https://`
/// with TLS), and runs until `shutdown`.
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
    tracing::info!("listening on {scheme}://{address}");
    let _ = writeln!(std::io::stdout(), "listening on {scheme}://{address}");
    let _ = std::io::stdout().flush();
    run_with_grpc(listener, grpc.map(|(bound, _)| bound), state, shutdown).await
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
