//! `snowmint whois`: which process of a fleet issued an ID, read from the
//! fleet's claim history on its coordinator.
//!
//! The coordinator is reached as the fleet's nodes reach it: the flags of
//! the settings a node is given for it (`--coordinator`, `--fleet`, the
//! coordinator's TLS files and password), made from their declarations
//! and read, with the same environment variables, by the configuration's
//! own parsers and checks (`snowmint_server::config::FleetAccess`), so
//! that a mistake reads as it does at a node's start.
//!
//! Exit codes: 0 when one claim covered the ID, 3 when none did, 4 when
//! the records that could say were pruned, 5 when two or more did (which
//! must never happen, and is also said on standard error); 2 for bad
//! input (settings that cannot be used among it), 1 when the coordinator
//! cannot be read (or refuses the TLS files or the login).

use std::fmt::Write as _;
use std::io::Write;
use std::process::ExitCode;

use anyhow::Context;
use clap::{ArgMatches, Args, FromArgMatches};
use snowmint::{Encoding, SnowflakeId, format_time};
use snowmint_fleet::{Whois, WhoisAnswer};
use snowmint_server::body::{ClaimRecordBody, WhoisBody};
use snowmint_server::config::{FleetAccess, Layer, Setting};

use crate::Global;
use crate::failure::Failure;
use crate::settings;
use crate::values::{EncodingParser, Format};

/// Exit code: no claim covered the ID.
const NOT_COVERED: u8 = 3;
/// Exit code: the records that could say were pruned.
const PRUNED: u8 = 4;
/// Exit code: two or more claims covered the ID.
const CONFLICT: u8 = 5;

/// Arguments of `snowmint whois`.
#[derive(Debug, Args)]
#[command(after_help = "\
Every claim of a coordinated fleet leaves a record in the coordinator
(snowmint serve --claim-history-keep): the holder's host, pid, addresses
and version, and when the claim started and ended. whois reads the ID in
the fleet's layout and names the claim whose slot and time cover it, for
example:

  snowmint whois 1724551110457221119 --coordinator etcd://10.0.0.5:2379 \\
      --fleet ids

The answer is one of: covered (exit 0), not covered: no node of the fleet
issued it (exit 3), pruned: the records that could say are gone (exit 4),
or conflict: two claims covered it, which must never happen (exit 5).
A node answers the same at GET /v1/whois/{id}.

A secured coordinator takes the settings the fleet's nodes are given, as
flags or as the same environment variables; say, etcd over mutual TLS,
with a user whose password is in the environment:

  export SNOWMINT_COORDINATOR_PASSWORD='...'
  snowmint whois 1724551110457221119 --fleet ids \\
      --coordinator etcd://ids@10.0.0.5:2379 \\
      --coordinator-ca /etc/snowmint/etcd-ca.pem \\
      --coordinator-cert /etc/snowmint/node.pem \\
      --coordinator-key /etc/snowmint/node-key.pem

whois only reads: an etcd user whose role may read /snowmint/FLEET/ is
enough. On ZooKeeper it needs the fleet's user and password, unless the
nodes run with --coordinator-world-read. A password is never shown; one
written into the URL on the command line is readable by every local user,
and draws a warning.")]
pub struct WhoisArgs {
    /// The ID to look up.
    #[arg(value_name = "ID", allow_negative_numbers = true)]
    id: String,
    /// The encoding the ID is written in.
    #[arg(long, value_name = "ENCODING", default_value = "decimal", value_parser = EncodingParser)]
    input: Encoding,
    /// Text for people, or JSON (the body of GET /v1/whois/{id}).
    #[arg(long, value_enum, default_value_t)]
    format: Format,
    #[command(flatten)]
    coordinator: CoordinatorFlags<true>,
    /// `--layout` and `--epoch`.
    #[command(flatten)]
    pub global: Global,
}

/// The fleet's coordinator and how to reach it: the flags of
/// [`FleetAccess::SETTINGS`], as typed (the configuration reads them, and
/// the environment); `--coordinator` required when `REQUIRED` (`whois`),
/// optional otherwise (`audit`).
#[derive(Debug)]
pub struct CoordinatorFlags<const REQUIRED: bool> {
    /// The flags typed.
    pub flags: Layer,
    /// Whether a coordinator was given, by flag or by environment.
    pub given: bool,
}

/// What `--coordinator` says in `whois --help`: the setting's own help is
/// a node's (it claims a slot there).
const COORDINATOR_HELP: &str = "The fleet's coordinator: etcd://HOST:PORT,..., \
     zk://HOST:PORT,.../CHROOT or postgres://USER@HOST:PORT/DB; a user, if it wants one, \
     in the URL (etcd://USER@HOST:PORT), and the password apart from it \
     [env: SNOWMINT_COORDINATOR]";

/// The flags of the settings that are flags (a password is given by the
/// environment or a file only).
fn flag_settings() -> impl Iterator<Item = Setting> {
    FleetAccess::SETTINGS
        .iter()
        .copied()
        .filter(|setting| setting.spec().flag)
}

impl<const REQUIRED: bool> Args for CoordinatorFlags<REQUIRED> {
    fn augment_args(command: clap::Command) -> clap::Command {
        command.args(flag_settings().map(|setting| {
            let flag = settings::flag(setting).help_heading("Coordinator");
            match setting {
                // Required, from the command line or the environment (clap
                // looks only to see that one gives it; the configuration
                // reads it, and says which did).
                Setting::Coordinator => flag
                    .help(COORDINATOR_HELP)
                    .env(setting.env())
                    .hide_env(true)
                    .required(REQUIRED),
                _ => flag,
            }
        }))
    }

    fn augment_args_for_update(command: clap::Command) -> clap::Command {
        CoordinatorFlags::<REQUIRED>::augment_args(command)
    }
}

impl<const REQUIRED: bool> FromArgMatches for CoordinatorFlags<REQUIRED> {
    fn from_arg_matches(matches: &ArgMatches) -> Result<CoordinatorFlags<REQUIRED>, clap::Error> {
        Ok(CoordinatorFlags {
            flags: settings::typed(matches, flag_settings()),
            given: matches.contains_id(Setting::Coordinator.key()),
        })
    }

    fn update_from_arg_matches(&mut self, matches: &ArgMatches) -> Result<(), clap::Error> {
        *self = CoordinatorFlags::<REQUIRED>::from_arg_matches(matches)?;
        Ok(())
    }
}

/// Runs `snowmint whois`.
pub fn run(args: WhoisArgs, global: &Global) -> anyhow::Result<ExitCode> {
    let id = SnowflakeId::parse(args.input, &args.id).map_err(Failure::from)?;
    let fleet = FleetAccess::load(args.coordinator.flags).map_err(Failure::bad_input)?;
    if let Some(warning) = fleet.password_on_command_line() {
        eprintln!("warning: {warning}");
    }
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("starting the async runtime")?;
    let whois = runtime.block_on(snowmint_fleet::whois_with(
        &fleet.url,
        &fleet.access,
        &fleet.fleet,
        id,
    ))?;
    fleet_layout_only(global, &fleet, &whois.layout, "whois")?;
    let text = match args.format {
        Format::Text => as_text(&whois),
        Format::Json => format!("{}\n", serde_json::to_string(&WhoisBody::new(&whois))?),
    };
    let mut out = std::io::stdout().lock();
    out.write_all(text.as_bytes())?;
    out.flush()?;
    Ok(match whois.answer {
        WhoisAnswer::Covered => ExitCode::SUCCESS,
        WhoisAnswer::NotCovered => ExitCode::from(NOT_COVERED),
        WhoisAnswer::Pruned => ExitCode::from(PRUNED),
        _ => {
            eprintln!("error: {}", whois.message());
            ExitCode::from(CONFLICT)
        }
    })
}

/// IDs are read in the fleet's layout: a layout typed on the command line
/// that is not the fleet's is a mistake worth saying (`command` reads in
/// the fleet's).
pub fn fleet_layout_only(
    global: &Global,
    fleet: &FleetAccess,
    layout: &snowmint::Layout,
    command: &str,
) -> Result<(), Failure> {
    if global.layout_flag().is_some() || global.epoch_flag().is_some() {
        let asked = global.layout()?;
        if asked.spec() != layout.spec() {
            return Err(Failure::bad_input(format!(
                "fleet {} issues IDs in layout {}, not {}; {command} reads IDs in the fleet's layout (leave --layout out)",
                fleet.fleet,
                layout.spec(),
                asked.spec()
            )));
        }
    }
    Ok(())
}

fn as_text(whois: &Whois) -> String {
    let body = WhoisBody::new(whois);
    let mut text = String::new();
    // Writing to a String cannot fail.
    let _ = writeln!(text, "id          {}", body.id);
    let _ = writeln!(text, "time        {}", body.time);
    let _ = writeln!(text, "fleet       {} (layout {})", body.fleet, body.layout);
    let _ = writeln!(
        text,
        "slot        {} (datacenter {}, machine {})",
        body.slot, body.datacenter, body.machine
    );
    let _ = writeln!(text, "answer      {}", body.answer);
    let _ = writeln!(text, "            {}", body.message);
    for claim in &body.claims {
        text.push('\n');
        claim_text(&mut text, claim);
    }
    text
}

fn claim_text(text: &mut String, claim: &ClaimRecordBody) {
    let _ = writeln!(text, "generation  {}", claim.generation);
    match (&claim.host, claim.pid, &claim.listen) {
        (Some(host), Some(pid), Some(listen)) => {
            let _ = writeln!(text, "holder      {host}, pid {pid}");
            let _ = writeln!(text, "http        {listen}");
            if let Some(grpc) = &claim.grpc {
                let _ = writeln!(text, "grpc        {grpc}");
            }
        }
        _ => {
            let _ = writeln!(text, "holder      {:?}", claim.holder);
        }
    }
    let _ = writeln!(text, "version     {}", claim.version);
    let _ = writeln!(text, "session     {}", claim.session);
    let _ = writeln!(text, "started     {}", claim.start);
    match (&claim.end, claim.ended) {
        (Some(end), Some(how)) => {
            let last = claim.last_ms.map_or_else(
                || "it issued none".to_owned(),
                |ms| format!("its IDs up to {}", format_time(ms)),
            );
            let _ = writeln!(text, "ended       {end} ({how}); {last}");
        }
        _ => {
            let _ = writeln!(
                text,
                "ended       not yet (held, or lost and not taken over)"
            );
        }
    }
}
