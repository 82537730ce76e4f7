//! `snowmint serve`: the HTTP ID service (and its gRPC API, with
//! `--grpc-listen`).
//!
//! Parses flags, sets up logging and the runtime, and hands over to
//! `snowmint_server::serve`. Every setting can also come from the
//! environment (`SNOWMINT_<NAME>`) or a TOML file (`--config`); flags win
//! over the environment, which wins over the file.

use std::io::IsTerminal;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use clap::Args;
use snowmint_fleet::{FleetError, MarkFile, NodeLock};
use snowmint_server::ServeError;
use snowmint_server::config::{Config, Identity, Layer, Setting};
use tracing_subscriber::EnvFilter;

use crate::Global;
use crate::failure::BadInput;

/// Arguments of `snowmint serve`.
#[derive(Debug, Args)]
pub struct ServeArgs {
    // Boxed: the settings are many, and the other commands' arguments are
    // small; an unboxed field would make every `Command` this large.
    #[command(flatten)]
    settings: Box<ServeSettings>,
}

/// The settings of `snowmint serve` given as flags.
///
/// Each value may also come from the environment variable named in its
/// help, or from the same key in snake_case in the `--config` file; it is
/// read by the same parser wherever it comes from. Durations are a number
/// and a unit (500ms, 2s, 1.5s, 1m, 1h), at most 24h.
#[derive(Debug, Args)]
struct ServeSettings {
    /// Address to listen on, IP:PORT; port 0 picks a free one
    /// [env: SNOWMINT_LISTEN] [default: 127.0.0.1:8080].
    #[arg(long, value_name = "ADDR")]
    listen: Option<String>,
    /// Also serve the gRPC API (snowmint.v1.IdService, health, reflection)
    /// on this address, IP:PORT; port 0 picks a free one
    /// [env: SNOWMINT_GRPC_LISTEN] [default: off].
    #[arg(long, value_name = "ADDR")]
    grpc_listen: Option<String>,
    /// This node's datacenter id [env: SNOWMINT_DATACENTER] [default: 0].
    #[arg(long, value_name = "N", allow_hyphen_values = true)]
    datacenter: Option<String>,
    /// This node's machine id [env: SNOWMINT_MACHINE] [default: 0].
    #[arg(long, value_name = "N", allow_hyphen_values = true)]
    machine: Option<String>,
    /// Take the slot from the hostname's ordinal (ids-12 -> slot 12 ->
    /// datacenter 0, machine 12) [env: SNOWMINT_MACHINE_FROM_HOSTNAME].
    #[arg(long)]
    machine_from_hostname: bool,
    /// The hostname to read the ordinal from, instead of this machine's
    /// [env: SNOWMINT_HOSTNAME].
    #[arg(long, value_name = "NAME")]
    hostname: Option<String>,
    /// Directory of the high-water mark file [env: SNOWMINT_STATE_DIR]
    /// [default: $XDG_STATE_HOME/snowmint, else ~/.local/state/snowmint,
    /// else ./snowmint-state].
    #[arg(long, value_name = "DIR")]
    state_dir: Option<String>,
    /// TOML file with any of these settings [env: SNOWMINT_CONFIG].
    #[arg(long, value_name = "FILE")]
    config: Option<PathBuf>,
    /// When the clock goes back: refuse (503 until it catches up), wait (up
    /// to --clock-max, then refuse) or borrow (issue ahead of the clock, up
    /// to --clock-max) [env: SNOWMINT_CLOCK_POLICY] [default: refuse].
    #[arg(long, value_name = "POLICY")]
    clock_policy: Option<String>,
    /// The bound of the wait and borrow policies [env: SNOWMINT_CLOCK_MAX]
    /// [default: 2s].
    #[arg(long, value_name = "DURATION")]
    clock_max: Option<String>,
    /// Longest gap between the recorded high-water mark and the clock that
    /// is waited out at start; a larger one refuses to start
    /// [env: SNOWMINT_MARK_WAIT_MAX] [default: 2s].
    #[arg(long, value_name = "DURATION")]
    mark_wait_max: Option<String>,
    /// How far ahead of the clock the high-water mark is reserved (one disk
    /// write per step; at least 10ms) [env: SNOWMINT_MARK_STEP]
    /// [default: 1s].
    #[arg(long, value_name = "DURATION")]
    mark_step: Option<String>,
    /// Longest time a request may take; also the longest a connection may
    /// take to send its first request (TLS handshake included) or a request
    /// head, sit idle, leave an answer unread, or leave an HTTP/2 ping
    /// unanswered [env: SNOWMINT_REQUEST_TIMEOUT] [default: 10s].
    #[arg(long, value_name = "DURATION")]
    request_timeout: Option<String>,
    /// Client connections open at once, HTTP and gRPC together; never
    /// more than the descriptor limit minus 32 kept for the state files
    /// and the coordinator. At the cap, new connections wait in the
    /// kernel's queue [env: SNOWMINT_MAX_CONNECTIONS] [default: 1024].
    #[arg(long, value_name = "N")]
    max_connections: Option<String>,
    /// Calls in flight on one HTTP/2 connection (gRPC, and HTTP/2 over
    /// TLS) [env: SNOWMINT_MAX_STREAMS] [default: 100].
    #[arg(long, value_name = "N")]
    max_streams: Option<String>,
    /// gRPC calls in flight in the whole node, streams included; one more
    /// is refused with UNAVAILABLE (snowmint-code overloaded) so that the
    /// client asks another node [env: SNOWMINT_MAX_CALLS] [default: 1024].
    #[arg(long, value_name = "N")]
    max_calls: Option<String>,
    /// How long a client connection may live before it is asked to close
    /// (HTTP/2 GOAWAY), 1s to 24h [env: SNOWMINT_MAX_CONNECTION_AGE]
    /// [default: 1h].
    #[arg(long, value_name = "DURATION")]
    max_connection_age: Option<String>,
    /// Serve HTTP and gRPC over TLS with this certificate chain (PEM: the
    /// node's certificate, then intermediates); needs --tls-key. Both
    /// files are read again when they change, and on SIGHUP
    /// [env: SNOWMINT_TLS_CERT] [default: off].
    #[arg(long, value_name = "FILE")]
    tls_cert: Option<String>,
    /// The private key of --tls-cert (PEM: PKCS#8, RSA or EC)
    /// [env: SNOWMINT_TLS_KEY].
    #[arg(long, value_name = "FILE")]
    tls_key: Option<String>,
    /// Require client certificates signed by a CA of this PEM file (mTLS),
    /// on both listeners; needs --tls-cert [env: SNOWMINT_TLS_CLIENT_CA].
    #[arg(long, value_name = "FILE")]
    tls_client_ca: Option<String>,
    /// Require Authorization: Bearer TOKEN, a token of this file: one per
    /// line, at least 16 characters of A-Z a-z 0-9 - . _ ~ + / (then any
    /// =), # starts a comment. Read again when it changes, and on SIGHUP
    /// [env: SNOWMINT_AUTH_TOKEN_FILE] [default: off].
    #[arg(long, value_name = "FILE")]
    auth_token_file: Option<String>,
    /// Which endpoints need a token: issue (/v1/id, /v1/ids, /v1/node and
    /// gRPC NextIds, StreamIds, GetNode) or all (every endpoint but
    /// /healthz, /readyz and gRPC health) [env: SNOWMINT_AUTH_SCOPE]
    /// [default: issue].
    #[arg(long, value_name = "SCOPE")]
    auth_scope: Option<String>,
    /// Claim a slot from etcd://HOST:PORT,..., zk://HOST:PORT,.../CHROOT
    /// (the chroot is optional) or postgres://USER:PASSWORD@HOST:PORT/DB
    /// (password and port optional) [env: SNOWMINT_COORDINATOR].
    #[arg(long, value_name = "URL")]
    coordinator: Option<String>,
    /// Fleet name under the coordinator: 1 to 64 of A-Z a-z 0-9 - _ .
    /// [env: SNOWMINT_FLEET] [default: default].
    #[arg(long, value_name = "NAME")]
    fleet: Option<String>,
    /// Slots this node may claim, A-B [env: SNOWMINT_SLOTS] [default: all].
    #[arg(long, value_name = "A-B")]
    slots: Option<String>,
    /// Lifetime of a coordinated claim without renewal, 1s to 1h: the etcd
    /// lease TTL or ZooKeeper session timeout [env: SNOWMINT_CLAIM_TTL]
    /// [default: 10s].
    #[arg(long, value_name = "DURATION")]
    claim_ttl: Option<String>,
    /// Test and operations knob: shift this node's clock by this many
    /// milliseconds [env: SNOWMINT_CLOCK_OFFSET_MS].
    #[arg(long, value_name = "MS", allow_hyphen_values = true, hide = true)]
    clock_offset_ms: Option<String>,
    /// Log filter, such as info or debug (debug logs every request)
    /// [env: SNOWMINT_LOG] [default: info].
    #[arg(long, value_name = "FILTER")]
    log: Option<String>,
}

/// Runs `snowmint serve`. A setting that cannot be used is bad input
/// (exit code 2), as a bad value of any other command is.
pub fn run(args: ServeArgs, global: &Global) -> anyhow::Result<ExitCode> {
    let args = *args.settings;
    init_logging(args.log.as_deref())?;
    let config_file = args.config.clone();
    let config = Config::load(flags(args, global), config_file).map_err(BadInput::new)?;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("starting the async runtime")?;
    runtime.block_on(async {
        let listener = match tokio::net::TcpListener::bind(config.listen).await {
            Ok(listener) => listener,
            Err(error) => {
                // A second process on the node most often asks for the
                // same port too: the node in use is the reason to give.
                if error.kind() == std::io::ErrorKind::AddrInUse
                    && let Some(locked) = node_in_use(&config)
                {
                    return Err(ServeError::from(locked).into());
                }
                return Err(anyhow::Error::new(error)
                    .context(format!("cannot listen on {}", config.listen)));
            }
        };
        match snowmint_server::serve(config, listener, snowmint_server::shutdown_signal()).await {
            // A TLS or token file that cannot be used is a setting that
            // cannot be used: bad input, as a bad value is.
            Err(error @ (ServeError::Tls(_) | ServeError::Tokens(_))) => {
                Err(BadInput::new(error).into())
            }
            other => other.map_err(anyhow::Error::from),
        }
    })?;
    Ok(ExitCode::SUCCESS)
}

/// For a fixed identity, the error that another process holds the node's
/// lock in the state directory, if one does (see `snowmint_fleet::NodeLock`).
fn node_in_use(config: &Config) -> Option<FleetError> {
    let Identity::Static(node) = config.identity else {
        return None;
    };
    let mark = MarkFile::for_node(&config.state_dir, node);
    match NodeLock::acquire(&mark) {
        Err(error @ FleetError::NodeLocked { .. }) => Some(error),
        // Free (the lock goes again at once), or not to be had for some
        // other reason, which serving would report.
        Ok(_) | Err(_) => None,
    }
}

/// The settings given as flags.
fn flags(args: ServeSettings, global: &Global) -> Layer {
    let mut layer = Layer::flags();
    let given = [
        (Setting::Listen, args.listen),
        (Setting::GrpcListen, args.grpc_listen),
        (Setting::Datacenter, args.datacenter),
        (Setting::Machine, args.machine),
        (
            Setting::MachineFromHostname,
            args.machine_from_hostname.then(|| "true".to_owned()),
        ),
        (Setting::Hostname, args.hostname),
        (Setting::StateDir, args.state_dir),
        (Setting::ClockPolicy, args.clock_policy),
        (Setting::ClockMax, args.clock_max),
        (Setting::MarkWaitMax, args.mark_wait_max),
        (Setting::MarkStep, args.mark_step),
        (Setting::RequestTimeout, args.request_timeout),
        (Setting::MaxConnections, args.max_connections),
        (Setting::MaxStreams, args.max_streams),
        (Setting::MaxCalls, args.max_calls),
        (Setting::MaxConnectionAge, args.max_connection_age),
        (Setting::TlsCert, args.tls_cert),
        (Setting::TlsKey, args.tls_key),
        (Setting::TlsClientCa, args.tls_client_ca),
        (Setting::AuthTokenFile, args.auth_token_file),
        (Setting::AuthScope, args.auth_scope),
        (Setting::Coordinator, args.coordinator),
        (Setting::Fleet, args.fleet),
        (Setting::Slots, args.slots),
        (Setting::ClaimTtl, args.claim_ttl),
        (Setting::ClockOffsetMs, args.clock_offset_ms),
    ];
    for (setting, value) in given {
        if let Some(value) = value {
            layer.set(setting, value);
        }
    }
    // `--layout` and `--epoch` belong to every command; only values typed on
    // the command line count as flags here, so that the config file's
    // layout is not hidden by the global default (and the environment is
    // read, in its place in the order, by the configuration itself).
    if let Some(layout) = global.layout_flag() {
        layer.set(Setting::Layout, layout);
    }
    if let Some(epoch) = global.epoch_flag() {
        layer.set(Setting::Epoch, epoch);
    }
    layer
}

fn init_logging(flag: Option<&str>) -> anyhow::Result<()> {
    let directives = flag
        .map(str::to_owned)
        .or_else(|| std::env::var("SNOWMINT_LOG").ok().filter(|v| !v.is_empty()))
        .unwrap_or_else(|| "info".to_owned());
    let filter = EnvFilter::try_new(&directives)
        .with_context(|| format!("log filter {directives:?} is not valid (try info or debug)"))?;
    tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(std::io::stderr().is_terminal())
        .init();
    Ok(())
}
