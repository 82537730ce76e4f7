//! `snowmint serve`: the HTTP ID service (and its gRPC API, with
//! `--grpc-listen`).
//!
//! Parses flags, sets up logging and the runtime, and hands over to
//! `snowmint_server::serve`. Every setting can also come from the
//! environment (`SNOWMINT_<NAME>`) or a TOML file (`--config`); flags win
//! over the environment, which wins over the file.

use std::io::{IsTerminal, Write};
use std::process::ExitCode;

use anyhow::Context;
use clap::{Arg, ArgAction, ArgMatches, Args, FromArgMatches};
use snowmint_fleet::{FleetError, MarkFile, NodeLock};
use snowmint_server::config::{Config, Layer, Setting};
use snowmint_server::{Listener, ServeError};
use tracing_subscriber::EnvFilter;

use crate::Global;
use crate::failure::Failure;
use crate::settings;

/// Arguments of `snowmint serve`: one flag per [`Setting`] of the
/// service, made from its declaration (see `snowmint_server::config`'s
/// `setting.rs`), so that its name, value, help, default and range are
/// written once.
#[derive(Debug)]
pub struct ServeArgs {
    /// The settings given on the command line, as text: the configuration
    /// reads them as it reads the environment and the file.
    flags: Layer,
    /// `--check`: say what the node would do, and exit.
    check: bool,
    /// `--offline`, with `--check`: try neither the lock, the ports nor
    /// the coordinator.
    offline: bool,
    /// `--layout` and `--epoch`.
    pub global: Global,
}

/// The flag that checks the settings instead of serving (not a setting:
/// it comes from the command line only).
const CHECK: &str = "check";
/// The flag that keeps `--check` off the host's lock and ports and the
/// network.
const OFFLINE: &str = "offline";

/// What `snowmint serve --help` says under the flags.
const AFTER_HELP: &str = "\
Examples:
  $ snowmint serve --check --offline --datacenter 3 --machine 7
  identity     static: slot 103 (datacenter 3 (from --datacenter), [..])
  layout       twitter 41/5/5/12@1288834974657
  state dir    [..]
  coordinator  none
  listen       http://127.0.0.1:8080
  grpc         off
  memcached    off
  tls          off: every listener is cleartext
  tokens       off: no endpoint needs a token
  open         issuing with no credential: HTTP 127.0.0.1:8080
  clock        clock_policy refuse, mark_step 1s, mark_wait_max 2s
  requests     request_timeout 10s
  note: listen 127.0.0.1:8080 is loopback: only this host (or container) [..]
  ok: this configuration starts, as far as can be told offline [..]

  $ SNOWMINT_HOSTNAME=ids-12 snowmint serve --check --offline \\
      --machine-from-hostname --listen 0.0.0.0:8080 | head -1
  identity     hostname: slot 12 (datacenter 0, machine 12) of \"ids-12\" [..]

  $ snowmint serve --check --coordinator etcd://10.0.0.1:2379 --machine 7
  ? 2
  error: --coordinator conflicts with --machine: a node takes its identity [..]
  ...

Start a node (Ctrl-C or SIGTERM stops it and releases its claim):
  snowmint serve --datacenter 3 --machine 7 --state-dir ~/.local/state/ids
  snowmint serve --machine-from-hostname --listen 0.0.0.0:8080
  snowmint serve --coordinator etcd://10.0.0.1:2379 --fleet ids \\
      --memcached-listen 0.0.0.0:11211

--check reads every setting, the TLS files and the token file as a start \
does and says what the node would do: each listener with its scheme, what \
guards it, and every one that issues IDs with no credential. Then it tries, \
claiming nothing, what a start would run into: another process holding the \
node's lock, a port in use (each address is bound and let go), and a \
coordinator that does not answer or refuses the node's login (a read-only \
session). Exit code 0; 2 with the message a start would stop with for a \
setting or file that cannot be used; 1 for the lock, a port or the \
coordinator. --check --offline leaves the lock, the ports and the network \
alone.

Each setting may also come from its environment variable or from its file \
key (the flag's name in snake_case) in the --config file; flags win over \
the environment, which wins over the file. Every value is read by the same \
parser wherever it comes from. Durations are a number and a unit (500ms, 2s, \
1.5s, 1m, 1h).";

impl Args for ServeArgs {
    fn augment_args(command: clap::Command) -> clap::Command {
        let own = Setting::ALL.iter().filter(|s| is_flag(s));
        let check = Arg::new(CHECK).long(CHECK).action(ArgAction::SetTrue).help(
            "Say what the node would do with these settings and try its lock, ports and \
             coordinator login, then exit without claiming a slot or writing a file",
        );
        let offline = Arg::new(OFFLINE)
            .long(OFFLINE)
            .action(ArgAction::SetTrue)
            .requires(CHECK)
            .help(
                "With --check: leave the node's lock, the ports and the coordinator untried \
                 (no network)",
            );
        Global::augment_args(command)
            .arg(check)
            .arg(offline)
            .args(own.map(|&setting| settings::flag(setting)))
            .after_help(AFTER_HELP)
    }

    fn augment_args_for_update(command: clap::Command) -> clap::Command {
        ServeArgs::augment_args(command)
    }
}

impl FromArgMatches for ServeArgs {
    fn from_arg_matches(matches: &ArgMatches) -> Result<ServeArgs, clap::Error> {
        let own = Setting::ALL.iter().copied().filter(is_flag);
        Ok(ServeArgs {
            flags: settings::typed(matches, own),
            check: matches.get_flag(CHECK),
            offline: matches.get_flag(OFFLINE),
            global: Global::from_arg_matches(matches)?,
        })
    }

    fn update_from_arg_matches(&mut self, matches: &ArgMatches) -> Result<(), clap::Error> {
        *self = ServeArgs::from_arg_matches(matches)?;
        Ok(())
    }
}

/// Whether `setting` is a flag of `serve` (the global ones belong to every
/// command; a password is given by the environment or a file only).
fn is_flag(setting: &Setting) -> bool {
    let spec = setting.spec();
    !spec.global && spec.flag
}

/// Runs `snowmint serve`. A setting that cannot be used is bad input
/// (exit code 2), as a bad value of any other command is. With `--check`,
/// so is anything else a start would stop at before it binds (a hostname
/// without an ordinal, a mark far ahead of the clock): the message is the
/// start's, and nothing is bound, claimed or written.
pub fn run(args: ServeArgs, global: &Global) -> anyhow::Result<ExitCode> {
    let (check, offline) = (args.check, args.offline);
    let config = Config::load(flags(args, global)).map_err(Failure::bad_input)?;
    // A node told no identity is refused by its start and by its check
    // alike, before either looks at anything else.
    config.require_identity().map_err(Failure::bad_input)?;
    if check {
        let mut plan = snowmint_server::check(&config).map_err(Failure::bad_input)?;
        if !offline {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .context("starting the async runtime")?;
            // What the host and the network say is no bad input: exit 1.
            runtime.block_on(snowmint_server::probe(&config, &mut plan))?;
        }
        let mut out = std::io::stdout().lock();
        write!(out, "{plan}")?;
        out.flush()?;
        return Ok(ExitCode::SUCCESS);
    }
    init_logging(&config.log)?;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("starting the async runtime")?;
    runtime.block_on(async {
        let locked = || node_in_use(&config);
        let serving = match snowmint_server::serve(
            config.clone(),
            snowmint_server::shutdown_signal(),
        )
        .await
        {
            Ok(serving) => serving,
            // A second process on the node most often asks for the same
            // port too: the node in use is the reason to give.
            Err(ServeError::Io { source, .. })
                if source.kind() == std::io::ErrorKind::AddrInUse
                    && let Some(locked) = locked() =>
            {
                return Err(ServeError::from(locked).into());
            }
            // A TLS or token file that cannot be used is a setting that
            // cannot be used: bad input, as a bad value is.
            Err(error @ (ServeError::Config(_) | ServeError::Tls(_) | ServeError::Tokens(_))) => {
                return Err(Failure::bad_input(error).into());
            }
            Err(error) => return Err(anyhow::Error::from(error)),
        };
        print_listening(&serving);
        serving.stopped().await.map_err(anyhow::Error::from)
    })?;
    Ok(ExitCode::SUCCESS)
}

/// Where the node listens, on stdout, once it answers: `gRPC listening on
/// http://ADDR` and the like for each listener but HTTP, then `listening
/// on http://ADDR` (`https://` with TLS), the line scripts and tests wait
/// for. A closed stdout is no reason to stop serving.
fn print_listening(serving: &snowmint_server::Serving) {
    let mut out = std::io::stdout().lock();
    let tls = serving.tls();
    for (kind, address) in serving.listeners().on() {
        if kind != Listener::Http {
            let _ = writeln!(
                out,
                "{} listening on {}{address}",
                kind.title(),
                kind.scheme(tls)
            );
        }
    }
    let http = serving.listeners().http();
    let _ = writeln!(out, "listening on {}{http}", Listener::Http.scheme(tls));
    let _ = out.flush();
}

/// For a fixed identity, the error that another process holds the node's
/// lock in the state directory, if one does (see `snowmint_fleet::NodeLock`).
fn node_in_use(config: &Config) -> Option<FleetError> {
    // Every slot of a fixed block: the first one held by another process.
    config.fixed_nodes().into_iter().find_map(|node| {
        let mark = MarkFile::for_node(&config.state_dir, config.layout, node);
        match NodeLock::acquire(&mark) {
            Err(error @ FleetError::NodeLocked { .. }) => Some(error),
            // Free (the lock goes again at once), or not to be had for some
            // other reason, which serving would report.
            Ok(_) | Err(_) => None,
        }
    })
}

/// The settings given as flags: `serve`'s own and the global ones.
fn flags(args: ServeArgs, global: &Global) -> Layer {
    let mut layer = args.flags;
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

fn init_logging(directives: &str) -> anyhow::Result<()> {
    let filter = EnvFilter::try_new(directives)
        .with_context(|| format!("log filter {directives:?} is not valid (try info or debug)"))?;
    tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(std::io::stderr().is_terminal())
        .init();
    Ok(())
}
