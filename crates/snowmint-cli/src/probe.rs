//! `snowmint probe`: asks a running `snowmint serve` whether it is ready,
//! for health checks where no HTTP client is at hand (a container image
//! with nothing but the binary).
//!
//! Exit code 0 when the answer is 200, 1 otherwise (not ready, not
//! answering), with the answer or the reason on stderr; 2 for a target or
//! setting that cannot be read. Without a URL it asks the address
//! `snowmint serve` would listen on, read from the same settings
//! (`SNOWMINT_LISTEN`, `--config`), so that a container's health check
//! follows its configuration.
//!
//! With `--wait DURATION` it asks again until the answer is 200 or the
//! time is up: what a script that starts a node waits with before it asks
//! for IDs (a node listens at once, and is ready once it holds its slot).

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use clap::Args;
use snowmint_server::config::{Config, Layer, Setting};

use crate::failure::Failure;

/// The longest answer read: `/readyz` and `/healthz` answer a line of JSON.
const MAX_ANSWER: u64 = 64 * 1024;

/// The longest `--wait`.
const MAX_WAIT: Duration = Duration::from_secs(3600);

/// How long `--wait` pauses between two questions.
const PAUSE: Duration = Duration::from_millis(100);

/// Arguments of `snowmint probe`.
#[derive(Debug, Args)]
#[command(after_help = "\
Examples:
  $ snowmint probe http://127.0.0.1:1/readyz
  ? 1
  error: cannot reach 127.0.0.1:1: Connection refused (os error 111)

  $ snowmint probe ftp://127.0.0.1/readyz
  ? 2
  error: probe URL \"ftp://127.0.0.1/readyz\" is not http://IP:PORT/PATH
  ...

  $ snowmint probe --wait 1s http://127.0.0.1:1
  ? 1
  error: not ready after 1s: cannot reach 127.0.0.1:1: Connection refused [..]

In a script, after starting a node (it is ready once it may issue IDs, a
fleet node once it holds its slot):
  snowmint probe --wait 30s http://127.0.0.1:8081/readyz && curl ...

In a container whose node is set up by SNOWMINT_* variables:
  HEALTHCHECK CMD [\"snowmint\", \"probe\"]

asks http://ADDR/readyz, ADDR being SNOWMINT_LISTEN (0.0.0.0 asked on
127.0.0.1). /readyz answers 200 exactly while the node may issue IDs.")]
pub struct ProbeArgs {
    /// What to ask: a path on the configured listen address (default
    /// /readyz), or a whole URL http://IP:PORT/PATH.
    #[arg(value_name = "PATH|URL", default_value = "/readyz")]
    target: String,
    /// Give up on one question after this many seconds.
    #[arg(long, value_name = "SECONDS", default_value_t = 3)]
    timeout: u64,
    /// Ask again until the answer is 200, for at most this long (500ms,
    /// 30s, 2m; up to 1h); exit code 1 if it never is.
    #[arg(long, value_name = "DURATION", value_parser = parse_wait)]
    wait: Option<Duration>,
    /// TOML file of `snowmint serve`'s settings, to read `listen` from
    /// [env: SNOWMINT_CONFIG].
    #[arg(long, value_name = "FILE")]
    config: Option<PathBuf>,
}

/// `--wait`'s duration, read as every duration is.
fn parse_wait(text: &str) -> Result<Duration, String> {
    snowmint::value::parse_duration("wait", text, Duration::ZERO..=MAX_WAIT)
        .map_err(|error| error.to_string())
}

/// Runs `snowmint probe`.
pub fn run(args: ProbeArgs) -> anyhow::Result<ExitCode> {
    let (address, path) = target(&args)?;
    let timeout = Duration::from_secs(args.timeout.max(1));
    let Some(wait) = args.wait else {
        return ask(address, &path, timeout);
    };
    let deadline = Instant::now() + wait;
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        match ask(address, &path, timeout.min(left.max(PAUSE))) {
            Ok(code) => return Ok(code),
            Err(error) if left.is_zero() => {
                return Err(error.context(format!(
                    "not ready after {}",
                    snowmint::value::format_duration(wait)
                )));
            }
            Err(_) => std::thread::sleep(PAUSE.min(left)),
        }
    }
}

/// Asks `path` on `address` once: success when the answer is 200.
fn ask(address: SocketAddr, path: &str, timeout: Duration) -> anyhow::Result<ExitCode> {
    let mut stream = TcpStream::connect_timeout(&address, timeout)
        .with_context(|| format!("cannot reach {address}"))?;
    stream.set_read_timeout(Some(timeout))?;
    stream.set_write_timeout(Some(timeout))?;
    write!(
        stream,
        "GET {path} HTTP/1.1\r\nHost: {address}\r\nConnection: close\r\nUser-Agent: snowmint-probe\r\n\r\n"
    )
    .with_context(|| format!("cannot ask {address}"))?;
    let mut answer = Vec::new();
    stream
        .take(MAX_ANSWER)
        .read_to_end(&mut answer)
        .with_context(|| format!("no answer from {address}"))?;
    let answer = String::from_utf8_lossy(&answer);
    let (head, body) = answer.split_once("\r\n\r\n").unwrap_or((&answer, ""));
    let status = head.lines().next().unwrap_or_default();
    if status.split(' ').nth(1) == Some("200") {
        println!("{}", body.trim_end());
        return Ok(ExitCode::SUCCESS);
    }
    if status.is_empty() {
        bail!("{address} closed the connection without answering");
    }
    bail!("http://{address}{path}: {status}: {}", body.trim_end())
}

/// The address and path to ask.
fn target(args: &ProbeArgs) -> anyhow::Result<(SocketAddr, String)> {
    if args.target.starts_with('/') {
        let mut flags = Layer::flags();
        if let Some(file) = &args.config {
            flags.set(Setting::ConfigFile, file.display().to_string());
        }
        let config = Config::load(flags).map_err(Failure::bad_input)?;
        let mut address = config.listeners.http();
        // A node listening everywhere is reached on loopback.
        if address.ip().is_unspecified() {
            address.set_ip(if address.is_ipv4() {
                std::net::Ipv4Addr::LOCALHOST.into()
            } else {
                std::net::Ipv6Addr::LOCALHOST.into()
            });
        }
        return Ok((address, args.target.clone()));
    }
    let bad = || {
        Failure::bad_input(format!(
            "probe URL {:?} is not http://IP:PORT/PATH",
            snowmint::value::echo(&args.target)
        ))
    };
    let rest = args.target.strip_prefix("http://").ok_or_else(bad)?;
    let (authority, path) = match rest.find('/') {
        Some(at) => (&rest[..at], &rest[at..]),
        None => (rest, "/readyz"),
    };
    let address = match authority.parse::<SocketAddr>() {
        Ok(address) => address,
        Err(_) => {
            let (host, port) = authority.rsplit_once(':').ok_or_else(bad)?;
            let port = port.parse::<u16>().map_err(|_| bad())?;
            if !host.eq_ignore_ascii_case("localhost") {
                return Err(bad().into());
            }
            SocketAddr::from(([127, 0, 0, 1], port))
        }
    };
    if path
        .bytes()
        .any(|b| b.is_ascii_whitespace() || b.is_ascii_control())
    {
        return Err(bad().into());
    }
    Ok((address, path.to_owned()))
}
