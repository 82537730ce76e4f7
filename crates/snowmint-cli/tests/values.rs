//! One table of bad and good values, each fed through every way into
//! snowmint that takes it: the calculator commands of the real binary
//! (flags, and `SNOWMINT_LAYOUT`/`SNOWMINT_EPOCH`), `snowmint serve`'s
//! flags, `SNOWMINT_*` environment and TOML file, the HTTP API of a running
//! service, and the libraries (`snowmint`, `snowmint_fleet`).
//!
//! A bad value must be refused everywhere with the same message, beyond a
//! prefix or suffix that says where it came from (`error: `,
//! `(from --datacenter)`, `(from SNOWMINT_DATACENTER)`,
//! `(from datacenter in FILE)`); the message must name what the table says
//! it names (the value, its range or forms). A good value must be accepted
//! everywhere.

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use snowmint::{ClockPolicy, Encoding, Layout, SystemClock};
use snowmint_fleet::{CoordinatorConfig, CoordinatorUrl, FleetName, SlotRange};
use snowmint_test_support::binary::Service;
use snowmint_test_support::temp::{TempDir, temp_dir};
use snowmint_test_support::wait::Deadline;

/// The `snowmint` binary under test.
const SNOWMINT: &str = env!("CARGO_BIN_EXE_snowmint");

/// How long `snowmint serve` may take to start listening (a safety net
/// against hangs, not a timing assertion).
const START_LIMIT: Duration = Duration::from_secs(60);

/// A coordinator nothing listens on: settings are checked before it is
/// reached, and a node that cannot reach it still starts (fenced).
const NOWHERE: &str = "--coordinator=etcd://127.0.0.1:1";

const FLEET_64: &str = "ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff";
const FLEET_65: &str = "fffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff";

/// A way into snowmint that takes a value; `{}` marks where it goes.
#[derive(Clone, Copy)]
enum Way {
    /// A calculator command of the binary, with these arguments.
    Cli(&'static [&'static str]),
    /// A calculator command, the value in this environment variable.
    CliEnv(&'static str, &'static [&'static str]),
    /// `snowmint serve --FLAG=VALUE`.
    ServeFlag(&'static str),
    /// `snowmint serve` with `VAR=VALUE`.
    ServeEnv(&'static str),
    /// `snowmint serve --config FILE`, the file saying `KEY = "VALUE"`.
    ServeFile(&'static str),
    /// `GET` this target of a running service (the value percent-encoded).
    Http(&'static str),
    /// A library call; `Err` carries the error's message.
    Api(&'static str, fn(&str) -> Result<(), String>),
}

impl Way {
    fn describe(self) -> String {
        match self {
            Way::Cli(args) => format!("snowmint {}", args.join(" ")),
            Way::CliEnv(var, args) => format!("{var}={{}} snowmint {}", args.join(" ")),
            Way::ServeFlag(flag) => format!("snowmint serve {flag}={{}}"),
            Way::ServeEnv(var) => format!("{var}={{}} snowmint serve"),
            Way::ServeFile(key) => format!("snowmint serve --config FILE with {key} = {{}}"),
            Way::Http(target) => format!("GET {target}"),
            Way::Api(name, _) => name.to_owned(),
        }
    }
}

/// One kind of value and its cases.
struct Value {
    /// What the value is called; every message about it names it.
    name: &'static str,
    ways: Vec<Way>,
    /// Flags `snowmint serve` needs besides the value.
    serve_with: &'static [&'static str],
    /// Bad values, each with what its message must contain.
    bad: Vec<(&'static str, Vec<&'static str>)>,
    /// Good values.
    good: Vec<&'static str>,
}

fn api<T, E: std::fmt::Display>(result: Result<T, E>) -> Result<(), String> {
    result.map(drop).map_err(|e| e.to_string())
}

const DAY: Duration = Duration::from_secs(86_400);

/// The table.
fn table() -> Vec<Value> {
    use Way::*;
    let numbers = |name: &'static str, range: &'static str| {
        vec![
            ("32", vec!["32", range]),
            ("-1", vec!["-1", range]),
            ("x", vec!["\"x\"", range]),
            ("+1", vec!["\"+1\"", range]),
            (" 1", vec!["\" 1\"", range]),
            ("", vec!["\"\"", range]),
            (
                "99999999999999999999999",
                vec!["99999999999999999999999", range],
            ),
        ]
        .into_iter()
        .map(|(v, mut says)| {
            says.push(name);
            (v, says)
        })
        .collect::<Vec<_>>()
    };
    vec![
        Value {
            name: "datacenter",
            ways: vec![
                Cli(&[
                    "encode",
                    "--timestamp=1700000000000",
                    "--datacenter={}",
                    "--machine=0",
                    "--sequence=0",
                ]),
                Cli(&["generate", "--datacenter={}", "--machine=0"]),
                ServeFlag("--datacenter"),
                ServeEnv("SNOWMINT_DATACENTER"),
                ServeFile("datacenter"),
                Http("/v1/encode?timestamp=1700000000000&datacenter={}&machine=0&sequence=0"),
                Api("Layout::parse_field", |v| {
                    api(Layout::TWITTER.parse_field("datacenter", v))
                }),
            ],
            serve_with: &[],
            bad: numbers("datacenter", "0..=31"),
            good: vec!["0", "31", "007"],
        },
        Value {
            name: "machine",
            ways: vec![
                Cli(&[
                    "encode",
                    "--timestamp=1700000000000",
                    "--datacenter=0",
                    "--machine={}",
                    "--sequence=0",
                ]),
                Cli(&["generate", "--datacenter=0", "--machine={}"]),
                ServeFlag("--machine"),
                ServeEnv("SNOWMINT_MACHINE"),
                ServeFile("machine"),
                Http("/v1/encode?timestamp=1700000000000&datacenter=0&machine={}&sequence=0"),
                Api("Layout::parse_field", |v| {
                    api(Layout::TWITTER.parse_field("machine", v))
                }),
            ],
            serve_with: &[],
            bad: numbers("machine", "0..=31"),
            good: vec!["0", "31"],
        },
        Value {
            name: "sequence",
            ways: vec![
                Cli(&[
                    "encode",
                    "--timestamp=1700000000000",
                    "--datacenter=0",
                    "--machine=0",
                    "--sequence={}",
                ]),
                Http("/v1/encode?timestamp=1700000000000&datacenter=0&machine=0&sequence={}"),
                Api("Layout::parse_field", |v| {
                    api(Layout::TWITTER.parse_field("sequence", v))
                }),
            ],
            serve_with: &[],
            bad: vec![
                ("4096", vec!["sequence 4096", "0..=4095"]),
                ("x", vec!["sequence \"x\"", "0..=4095"]),
                ("-7", vec!["sequence -7", "0..=4095"]),
            ],
            good: vec!["0", "4095"],
        },
        Value {
            name: "count",
            ways: vec![
                Http("/v1/ids?count={}"),
                Api("parse_bounded", |v| {
                    api(snowmint::value::parse_bounded("count", v, 1..=4096))
                }),
            ],
            serve_with: &[],
            bad: vec![
                ("0", vec!["count 0", "1..=4096"]),
                ("4097", vec!["count 4097", "1..=4096"]),
                ("many", vec!["count \"many\"", "1..=4096"]),
                (" 5", vec!["count \" 5\"", "1..=4096"]),
            ],
            good: vec!["1", "4096"],
        },
        Value {
            name: "count",
            ways: vec![
                Cli(&["generate", "--datacenter=0", "--machine=0", "--count={}"]),
                Api("parse_bounded", |v| {
                    api(snowmint::value::parse_bounded("count", v, 0..=u64::MAX))
                }),
            ],
            serve_with: &[],
            bad: vec![
                ("-1", vec!["count -1", "0..=18446744073709551615"]),
                ("many", vec!["count \"many\"", "0..=18446744073709551615"]),
            ],
            good: vec!["0", "3"],
        },
        Value {
            name: "layout",
            ways: vec![
                Cli(&["layout", "--layout={}"]),
                Cli(&["decode", "--layout={}", "1"]),
                CliEnv("SNOWMINT_LAYOUT", &["layout"]),
                ServeFlag("--layout"),
                ServeEnv("SNOWMINT_LAYOUT"),
                ServeFile("layout"),
                Http("/v1/layout?layout={}"),
                Api("Layout::from_str", |v| api(v.parse::<Layout>())),
            ],
            serve_with: &[],
            bad: vec![
                (
                    "snowflake9000",
                    vec!["\"snowflake9000\"", "twitter", "discord"],
                ),
                ("41/5/5/13", vec!["layout", "41+5+5+13", "63"]),
                ("twitter@soon", vec!["layout", "epoch \"soon\"", "RFC 3339"]),
                ("42/0/10/11@-5", vec!["layout", "epoch -5", "1970"]),
                (" twitter", vec!["layout", "\" twitter\""]),
            ],
            good: vec![
                "discord",
                "DISCORD",
                "42/0/10/11@2024-01-01T00:00:00Z",
                "41/5/5/12@0",
            ],
        },
        Value {
            name: "epoch",
            ways: vec![
                Cli(&["layout", "--epoch={}"]),
                Cli(&["decode", "--epoch={}", "1"]),
                CliEnv("SNOWMINT_EPOCH", &["layout"]),
                ServeFlag("--epoch"),
                ServeEnv("SNOWMINT_EPOCH"),
                ServeFile("epoch"),
                Http("/v1/layout?epoch={}"),
                Api("parse_epoch", |v| {
                    api(snowmint::parse_epoch(v).and_then(|ms| Layout::TWITTER.with_epoch(ms)))
                }),
            ],
            serve_with: &[],
            bad: vec![
                ("soon", vec!["\"soon\"", "Unix milliseconds", "RFC 3339"]),
                ("-5", vec!["-5", "1970"]),
                (
                    "2023-02-29T00:00:00Z",
                    vec!["\"2023-02-29T00:00:00Z\"", "day"],
                ),
                ("now", vec!["\"now\""]),
            ],
            good: vec!["2015-01-01T00:00:00Z", "1420070400000", "0"],
        },
        Value {
            name: "timestamp",
            ways: vec![
                Cli(&[
                    "encode",
                    "--timestamp={}",
                    "--datacenter=0",
                    "--machine=0",
                    "--sequence=0",
                ]),
                Http("/v1/encode?timestamp={}&datacenter=0&machine=0&sequence=0"),
                Api("parse_instant", |v| {
                    let ms = snowmint::parse_instant("timestamp", v, &SystemClock);
                    api(ms.and_then(|ms| Layout::TWITTER.timestamp_offset(ms)))
                }),
            ],
            serve_with: &[],
            bad: vec![
                ("yesterday", vec!["\"yesterday\"", "now", "RFC 3339"]),
                ("2023-02-29T00:00:00Z", vec!["\"2023-02-29T00:00:00Z\""]),
                ("0", vec!["0", "1288834974657..=3487858230208"]),
                ("1700000000000.5", vec!["\"1700000000000.5\""]),
                (" 1700000000000", vec!["\" 1700000000000\""]),
            ],
            good: vec!["now", "NOW", "1700000000000", "2023-11-14T23:13:20.5+01:00"],
        },
        Value {
            name: "from",
            ways: vec![
                Cli(&["range", "--from={}", "--to=2080-01-01T00:00:00Z"]),
                Http("/v1/range?from={}&to=2080-01-01T00:00:00Z"),
                Api("parse_instant", |v| {
                    api(snowmint::parse_instant("from", v, &SystemClock))
                }),
            ],
            serve_with: &[],
            bad: vec![
                ("soon", vec!["\"soon\"", "now", "RFC 3339"]),
                ("2023-11-14", vec!["\"2023-11-14\""]),
            ],
            good: vec!["now", "2024-01-01T00:00:00Z", "1700000000000"],
        },
        Value {
            name: "to",
            ways: vec![
                Cli(&["range", "--from=1700000000000", "--to={}"]),
                Http("/v1/range?from=1700000000000&to={}"),
                Api("parse_instant", |v| {
                    api(snowmint::parse_instant("to", v, &SystemClock))
                }),
            ],
            serve_with: &[],
            bad: vec![("later", vec!["\"later\"", "now", "RFC 3339"])],
            good: vec!["now", "1700000000999"],
        },
        Value {
            name: "ID",
            ways: vec![
                Cli(&["decode", "--", "{}"]),
                Http("/v1/ids/{}"),
                Api("Layout::parse_id", |v| {
                    api(Layout::TWITTER.parse_id(Encoding::Decimal, v))
                }),
            ],
            serve_with: &[],
            bad: vec![
                ("-1", vec!["-1", "0..=9223372036854775807"]),
                ("12a4", vec!["\"12a4\"", "'a'", "0..=9223372036854775807"]),
                (
                    "9223372036854775808",
                    vec!["9223372036854775808", "0..=9223372036854775807"],
                ),
                (" 1", vec!["\" 1\""]),
            ],
            good: vec!["1724551110457221119", "0"],
        },
        Value {
            name: "encoding",
            ways: vec![
                Cli(&["decode", "--input={}", "1"]),
                Cli(&["decode", "--output={}", "1"]),
                Cli(&[
                    "encode",
                    "--timestamp=now",
                    "--datacenter=0",
                    "--machine=0",
                    "--sequence=0",
                    "--output={}",
                ]),
                Cli(&["generate", "--datacenter=0", "--machine=0", "--output={}"]),
                Cli(&["range", "--from=now", "--to=now", "--output={}"]),
                Http("/v1/ids/1?encoding={}"),
                Api("Encoding::from_str", |v| api(v.parse::<Encoding>())),
            ],
            serve_with: &[],
            bad: vec![
                (
                    "base64",
                    vec!["\"base64\"", "decimal, hex, base32 or base58"],
                ),
                (" hex", vec!["\" hex\"", "decimal, hex, base32 or base58"]),
            ],
            good: vec!["HEX", "dec", "Base32", "base58", "decimal"],
        },
        Value {
            name: "clock policy",
            ways: vec![
                ServeFlag("--clock-policy"),
                ServeEnv("SNOWMINT_CLOCK_POLICY"),
                ServeFile("clock_policy"),
                Api("ClockPolicy::from_name", |v| {
                    api(ClockPolicy::from_name(v, Duration::from_secs(2)))
                }),
            ],
            serve_with: &[],
            bad: vec![
                ("sometimes", vec!["\"sometimes\"", "refuse, wait or borrow"]),
                (" wait", vec!["\" wait\"", "refuse, wait or borrow"]),
                ("", vec!["\"\"", "refuse, wait or borrow"]),
            ],
            good: vec!["wait", "BORROW", "Refuse"],
        },
        Value {
            name: "clock_max",
            ways: vec![
                ServeFlag("--clock-max"),
                ServeEnv("SNOWMINT_CLOCK_MAX"),
                ServeFile("clock_max"),
                Api("parse_duration", |v| {
                    api(snowmint::value::parse_duration(
                        "clock_max",
                        v,
                        Duration::ZERO..=DAY,
                    ))
                }),
            ],
            serve_with: &[],
            bad: vec![
                ("2", vec!["\"2\"", "500ms, 2s, 1.5s, 1m, 1h"]),
                ("25h", vec!["25h", "0..=24h"]),
                ("1 s", vec!["\"1 s\""]),
                ("-1s", vec!["\"-1s\""]),
            ],
            good: vec!["1.5s", "250ms", "0", "1m"],
        },
        Value {
            name: "mark_step",
            ways: vec![
                ServeFlag("--mark-step"),
                ServeEnv("SNOWMINT_MARK_STEP"),
                ServeFile("mark_step"),
                Api("parse_duration", |v| {
                    api(snowmint::value::parse_duration(
                        "mark_step",
                        v,
                        Duration::from_millis(10)..=DAY,
                    ))
                }),
            ],
            serve_with: &[],
            bad: vec![("5ms", vec!["5ms", "10ms..=24h"]), ("1x", vec!["\"1x\""])],
            good: vec!["10ms", "1s"],
        },
        Value {
            name: "mark_wait_max",
            ways: vec![
                ServeFlag("--mark-wait-max"),
                ServeEnv("SNOWMINT_MARK_WAIT_MAX"),
                ServeFile("mark_wait_max"),
                Api("parse_duration", |v| {
                    api(snowmint::value::parse_duration(
                        "mark_wait_max",
                        v,
                        Duration::ZERO..=DAY,
                    ))
                }),
            ],
            serve_with: &[],
            bad: vec![
                ("forever", vec!["\"forever\""]),
                ("48h", vec!["48h", "0..=24h"]),
            ],
            good: vec!["5s", "1h"],
        },
        Value {
            name: "request_timeout",
            ways: vec![
                ServeFlag("--request-timeout"),
                ServeEnv("SNOWMINT_REQUEST_TIMEOUT"),
                ServeFile("request_timeout"),
                Api("parse_duration", |v| {
                    api(snowmint::value::parse_duration(
                        "request_timeout",
                        v,
                        Duration::from_millis(1)..=DAY,
                    ))
                }),
            ],
            serve_with: &[],
            bad: vec![("0", vec!["0", "1ms..=24h"]), ("10", vec!["\"10\""])],
            good: vec!["30s", "1.5s"],
        },
        Value {
            name: "max_connections",
            ways: vec![
                ServeFlag("--max-connections"),
                ServeEnv("SNOWMINT_MAX_CONNECTIONS"),
                ServeFile("max_connections"),
                Api("parse_bounded", |v| {
                    api(snowmint::value::parse_bounded(
                        "max_connections",
                        v,
                        1..=1 << 20,
                    ))
                }),
            ],
            serve_with: &[],
            bad: vec![("0", vec!["0", "1..=1048576"]), ("many", vec!["\"many\""])],
            good: vec!["64", "100000"],
        },
        Value {
            name: "max_streams",
            ways: vec![
                ServeFlag("--max-streams"),
                ServeEnv("SNOWMINT_MAX_STREAMS"),
                ServeFile("max_streams"),
                Api("parse_bounded", |v| {
                    api(snowmint::value::parse_bounded(
                        "max_streams",
                        v,
                        1..=1 << 16,
                    ))
                }),
            ],
            serve_with: &[],
            bad: vec![("65537", vec!["65537", "1..=65536"])],
            good: vec!["1", "1000"],
        },
        Value {
            name: "max_calls",
            ways: vec![
                ServeFlag("--max-calls"),
                ServeEnv("SNOWMINT_MAX_CALLS"),
                ServeFile("max_calls"),
                Api("parse_bounded", |v| {
                    api(snowmint::value::parse_bounded("max_calls", v, 1..=1 << 20))
                }),
            ],
            serve_with: &[],
            bad: vec![("-1", vec!["-1", "1..=1048576"])],
            good: vec!["256"],
        },
        Value {
            name: "max_connection_age",
            ways: vec![
                ServeFlag("--max-connection-age"),
                ServeEnv("SNOWMINT_MAX_CONNECTION_AGE"),
                ServeFile("max_connection_age"),
                Api("parse_duration", |v| {
                    api(snowmint::value::parse_duration(
                        "max_connection_age",
                        v,
                        Duration::from_secs(1)..=DAY,
                    ))
                }),
            ],
            serve_with: &[],
            bad: vec![("500ms", vec!["500ms", "1s..=24h"])],
            good: vec!["30m", "24h"],
        },
        Value {
            name: "slots",
            ways: vec![
                ServeFlag("--slots"),
                ServeEnv("SNOWMINT_SLOTS"),
                ServeFile("slots"),
                Api("SlotRange::from_str", |v| {
                    api(v
                        .parse::<SlotRange>()
                        .and_then(|s| s.check(Layout::TWITTER)))
                }),
            ],
            serve_with: &[NOWHERE],
            bad: vec![
                ("9-3", vec!["\"9-3\"", "after"]),
                ("a-3", vec!["\"a-3\"", "\"a\""]),
                ("0-1024", vec!["\"0-1024\"", "1024", "0..=1023"]),
                (" 1-3", vec!["\" 1-3\""]),
                ("+1-3", vec!["\"+1-3\""]),
                ("1-", vec!["\"1-\""]),
            ],
            good: vec!["0-1023", "7", "3-9"],
        },
        Value {
            name: "fleet name",
            ways: vec![
                ServeFlag("--fleet"),
                ServeEnv("SNOWMINT_FLEET"),
                ServeFile("fleet"),
                Api("FleetName::from_str", |v| api(v.parse::<FleetName>())),
                Api("CoordinatorConfig::new", |v| {
                    let slots = SlotRange::all(Layout::TWITTER);
                    let ttl = Duration::from_secs(10);
                    api(CoordinatorConfig::new(
                        v,
                        slots,
                        ttl,
                        String::new(),
                        Layout::TWITTER,
                    ))
                }),
            ],
            serve_with: &[NOWHERE],
            bad: vec![
                ("a/b", vec!["\"a/b\"", "'/'", "1 to 64"]),
                ("..", vec!["\"..\"", "1 to 64"]),
                ("", vec!["\"\"", "1 to 64"]),
                ("ids ", vec!["\"ids \"", "' '"]),
                (
                    FLEET_65,
                    vec![
                        "ffffffffffffffffffffffffffffffffffffffff...",
                        "65",
                        "1 to 64",
                    ],
                ),
            ],
            good: vec!["ids", "ids-eu.1", "IDS_2", FLEET_64],
        },
        Value {
            name: "coordinator URL",
            ways: vec![
                ServeFlag("--coordinator"),
                ServeEnv("SNOWMINT_COORDINATOR"),
                ServeFile("coordinator"),
                Api("CoordinatorUrl::from_str", |v| {
                    api(v.parse::<CoordinatorUrl>())
                }),
            ],
            serve_with: &[],
            bad: vec![
                (
                    "etcd://127.0.0.1",
                    vec!["\"etcd://127.0.0.1\"", "no port", "HOST:PORT"],
                ),
                ("http://x:1", vec!["\"http://x:1\"", "\"http\""]),
                (
                    "etcd://a:+1",
                    vec!["\"etcd://a:+1\"", "\"+1\"", "1..=65535"],
                ),
                ("zk://a:1//x", vec!["\"zk://a:1//x\"", "chroot"]),
                (" etcd://a:1", vec!["\" etcd://a:1\""]),
            ],
            good: vec!["etcd://127.0.0.1:1", "zk://127.0.0.1:1/app"],
        },
        Value {
            name: "claim_ttl",
            ways: vec![
                ServeFlag("--claim-ttl"),
                ServeEnv("SNOWMINT_CLAIM_TTL"),
                ServeFile("claim_ttl"),
                Api("parse_claim_ttl", |v| {
                    api(snowmint_fleet::parse_claim_ttl(v))
                }),
            ],
            serve_with: &[NOWHERE],
            bad: vec![
                ("500ms", vec!["500ms", "1s..=1h"]),
                ("2h", vec!["2h", "1s..=1h"]),
                ("10", vec!["\"10\""]),
            ],
            good: vec!["1s", "1h", "30s"],
        },
        Value {
            name: "max clock skew",
            ways: vec![
                ServeFlag("--max-clock-skew"),
                ServeEnv("SNOWMINT_MAX_CLOCK_SKEW"),
                ServeFile("max_clock_skew"),
                Api("parse_max_clock_skew", |v| {
                    api(snowmint_fleet::parse_max_clock_skew(v))
                }),
            ],
            serve_with: &[NOWHERE],
            bad: vec![
                ("5ms", vec!["5ms", "10ms..=1h"]),
                ("2h", vec!["2h", "10ms..=1h"]),
                ("Off", vec!["\"Off\""]),
                ("1", vec!["\"1\""]),
            ],
            good: vec!["off", "10ms", "1s", "1h"],
        },
        Value {
            name: "clock check interval",
            ways: vec![
                ServeFlag("--clock-check-every"),
                ServeEnv("SNOWMINT_CLOCK_CHECK_EVERY"),
                ServeFile("clock_check_every"),
                Api("parse_clock_check_every", |v| {
                    api(snowmint_fleet::parse_clock_check_every(v))
                }),
            ],
            serve_with: &[NOWHERE],
            bad: vec![
                ("500ms", vec!["500ms", "1s..=24h"]),
                ("25h", vec!["25h", "1s..=24h"]),
                ("often", vec!["\"often\""]),
            ],
            good: vec!["1s", "30s", "24h"],
        },
        Value {
            name: "claim history keep",
            ways: vec![
                ServeFlag("--claim-history-keep"),
                ServeEnv("SNOWMINT_CLAIM_HISTORY_KEEP"),
                ServeFile("claim_history_keep"),
                Api("parse_history_keep", |v| {
                    api(snowmint_fleet::parse_history_keep(v))
                }),
            ],
            serve_with: &[NOWHERE],
            bad: vec![
                ("1001", vec!["1001", "0..=1000"]),
                ("-1", vec!["-1", "0..=1000"]),
                ("many", vec!["\"many\"", "0..=1000"]),
            ],
            good: vec!["0", "16", "1000"],
        },
        Value {
            name: "claim history max age",
            ways: vec![
                ServeFlag("--claim-history-max-age"),
                ServeEnv("SNOWMINT_CLAIM_HISTORY_MAX_AGE"),
                ServeFile("claim_history_max_age"),
                Api("parse_history_max_age", |v| {
                    api(snowmint_fleet::parse_history_max_age(v))
                }),
            ],
            serve_with: &[NOWHERE],
            bad: vec![
                ("30m", vec!["30m", "1h..=8784h"]),
                ("9000h", vec!["9000h", "1h..=8784h"]),
                ("30d", vec!["\"30d\""]),
            ],
            good: vec!["1h", "720h", "8784h"],
        },
        Value {
            name: "listen",
            ways: vec![
                ServeFlag("--listen"),
                ServeEnv("SNOWMINT_LISTEN"),
                ServeFile("listen"),
            ],
            serve_with: &[],
            bad: vec![
                ("localhost", vec!["\"localhost\"", "IP:PORT"]),
                ("127.0.0.1:99999", vec!["\"127.0.0.1:99999\"", "IP:PORT"]),
                (
                    "ids.internal:8080",
                    vec!["\"ids.internal:8080\"", "IP:PORT", "not looked up"],
                ),
            ],
            good: vec!["127.0.0.1:0", "localhost:0"],
        },
        Value {
            name: "memcached_listen",
            ways: vec![
                ServeFlag("--memcached-listen"),
                ServeEnv("SNOWMINT_MEMCACHED_LISTEN"),
                ServeFile("memcached_listen"),
            ],
            serve_with: &[],
            bad: vec![
                ("11211", vec!["\"11211\"", "IP:PORT"]),
                ("127.0.0.1:99999", vec!["\"127.0.0.1:99999\"", "IP:PORT"]),
            ],
            good: vec!["127.0.0.1:0", "localhost:0"],
        },
        Value {
            name: "grpc_listen",
            ways: vec![
                ServeFlag("--grpc-listen"),
                ServeEnv("SNOWMINT_GRPC_LISTEN"),
                ServeFile("grpc_listen"),
            ],
            serve_with: &[],
            bad: vec![
                ("localhost", vec!["\"localhost\"", "IP:PORT"]),
                ("127.0.0.1:99999", vec!["\"127.0.0.1:99999\"", "IP:PORT"]),
            ],
            good: vec!["127.0.0.1:0"],
        },
        Value {
            name: "machine_from_hostname",
            ways: vec![
                ServeEnv("SNOWMINT_MACHINE_FROM_HOSTNAME"),
                ServeFile("machine_from_hostname"),
            ],
            serve_with: &[],
            bad: vec![("maybe", vec!["\"maybe\"", "true or false"])],
            good: vec!["false", "NO", "0"],
        },
        Value {
            name: "clock_offset_ms",
            ways: vec![
                ServeFlag("--clock-offset-ms"),
                ServeEnv("SNOWMINT_CLOCK_OFFSET_MS"),
                ServeFile("clock_offset_ms"),
                Api("parse_bounded_signed", |v| {
                    const YEAR_MS: i64 = 366 * 86_400_000;
                    api(snowmint::value::parse_bounded_signed(
                        "clock_offset_ms",
                        v,
                        -YEAR_MS..=YEAR_MS,
                    ))
                }),
            ],
            serve_with: &[],
            bad: vec![
                ("x", vec!["\"x\"", "-31622400000..=31622400000"]),
                (
                    "99999999999",
                    vec!["99999999999", "-31622400000..=31622400000"],
                ),
            ],
            good: vec!["-1000", "0"],
        },
    ]
}

/// The value named `name` (the first, when several share it).
fn value(name: &str, index: usize) -> Value {
    table()
        .into_iter()
        .filter(|v| v.name == name)
        .nth(index)
        .unwrap_or_else(|| panic!("no value {name} #{index} in the table"))
}

/// The process environment without SNOWMINT_* variables; HOME is `home`.
fn clean(command: &mut Command, home: &TempDir) {
    for (name, _) in std::env::vars() {
        if name.starts_with("SNOWMINT_") || name == "XDG_STATE_HOME" {
            command.env_remove(name);
        }
    }
    command.env("HOME", home.path());
}

fn fill(args: &[&str], value: &str) -> Vec<String> {
    args.iter().map(|a| a.replace("{}", value)).collect()
}

/// Percent-encodes everything but unreserved characters.
fn percent(value: &str) -> String {
    value
        .bytes()
        .map(|b| {
            if b.is_ascii_alphanumeric() || b"-._~".contains(&b) {
                (b as char).to_string()
            } else {
                format!("%{b:02X}")
            }
        })
        .collect()
}

/// `key = "value"` in TOML.
fn toml_line(key: &str, value: &str) -> String {
    let escaped = value.replace('\\', "\\\\").replace('"', "\\\"");
    format!("{key} = \"{escaped}\"\n")
}

/// How one way answered a value.
enum Answer {
    /// Accepted.
    Accepted,
    /// Refused with this message, its where-prefix and -suffix removed.
    Refused(String),
}

/// How a run ended that did not go on serving.
struct Ended {
    code: Option<i32>,
    stdout: String,
    stderr: String,
}

impl From<std::process::Output> for Ended {
    fn from(output: std::process::Output) -> Ended {
        Ended {
            code: output.status.code(),
            stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
        }
    }
}

/// The first line of stderr that is an error, `error: ` removed, and the
/// rest of the run checked as a refusal of bad input.
fn refusal(ended: &Ended, what: &str) -> String {
    assert_eq!(
        ended.code,
        Some(2),
        "{what}: the exit code of bad input is 2; stderr: {}",
        ended.stderr
    );
    assert!(
        ended.stdout.is_empty(),
        "{what}: stdout of a refused value: {}",
        ended.stdout
    );
    let line = ended
        .stderr
        .lines()
        .find_map(|l| l.strip_prefix("error: "))
        .unwrap_or_else(|| panic!("{what}: no error line in {}", ended.stderr));
    // clap's own wording around a value parser's message.
    match line.strip_prefix("invalid value '") {
        Some(rest) => rest
            .split_once("': ")
            .map_or(line, |(_, message)| message)
            .to_owned(),
        None => line.to_owned(),
    }
}

fn strip_suffix(message: String, suffix: &str, what: &str) -> String {
    message
        .strip_suffix(suffix)
        .unwrap_or_else(|| panic!("{what}: {message:?} does not end with {suffix:?}"))
        .to_owned()
}

/// A running `snowmint serve`, killed on drop.
struct Running(Child);

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Starts `snowmint serve ARGS` and waits until it listens, or until it
/// ends without listening.
fn serve(home: &TempDir, args: &[String], env: &[(&str, &str)]) -> Result<Running, Ended> {
    let stderr = home.path().join("serve-stderr.log");
    let mut command = Command::new(env!("CARGO_BIN_EXE_snowmint"));
    command.arg("serve").args(args);
    clean(&mut command, home);
    command
        .envs(env.iter().copied())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(std::fs::File::create(&stderr).unwrap());
    let mut child = Running(command.spawn().expect("running the snowmint binary"));
    let stdout = child.0.stdout.take().unwrap();
    let (sender, receiver) = mpsc::channel();
    let reader = std::thread::spawn(move || {
        let mut seen = String::new();
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            if line.starts_with("listening on http://") {
                let _ = sender.send(());
            }
            seen.push_str(&line);
            seen.push('\n');
        }
        seen
    });
    let log = || std::fs::read_to_string(&stderr).unwrap_or_default();
    let deadline = Deadline::after(START_LIMIT, "snowmint serve to listen or end");
    loop {
        if receiver.recv_timeout(Duration::from_millis(20)).is_ok() {
            return Ok(child);
        }
        if let Some(status) = child.0.try_wait().unwrap() {
            return Err(Ended {
                code: status.code(),
                stdout: reader.join().unwrap(),
                stderr: log(),
            });
        }
        deadline.check_with(log);
    }
}

/// Feeds `value` through `way`.
fn feed(way: Way, case: &Value, value: &str, home: &TempDir, http: &Service) -> Answer {
    let what = format!("{} with {value:?}", way.describe());
    let mut serve_args: Vec<String> = case.serve_with.iter().map(|s| (*s).to_owned()).collect();
    if case.name != "listen" {
        serve_args.push("--listen=127.0.0.1:0".to_owned());
    }
    // A node must be told its identity: a fixed one, but for the values
    // that are (part of) an identity themselves.
    if !case.serve_with.contains(&NOWHERE) && case.name != "coordinator URL" {
        for (setting, flag) in [("datacenter", "--datacenter=0"), ("machine", "--machine=0")] {
            if case.name != setting {
                serve_args.push(flag.to_owned());
            }
        }
    }
    let serve_answer =
        |args: Vec<String>, env: &[(&str, &str)], suffix: String| match serve(home, &args, env) {
            // Kept running only until dropped: it took the value.
            Ok(_running) => Answer::Accepted,
            Err(ended) => Answer::Refused(strip_suffix(refusal(&ended, &what), &suffix, &what)),
        };
    match way {
        Way::Cli(args) | Way::CliEnv(_, args) => {
            let mut command = Command::new(env!("CARGO_BIN_EXE_snowmint"));
            clean(&mut command, home);
            command.stdin(Stdio::null());
            if let Way::CliEnv(var, _) = way {
                command.args(args).env(var, value);
            } else {
                command.args(fill(args, value));
            }
            let ended = Ended::from(command.output().unwrap());
            if ended.code == Some(0) {
                return Answer::Accepted;
            }
            let message = refusal(&ended, &what);
            match way {
                Way::CliEnv(var, _) => {
                    Answer::Refused(strip_suffix(message, &format!(" (from {var})"), &what))
                }
                _ => Answer::Refused(message),
            }
        }
        Way::ServeFlag(flag) => {
            // A flag given twice is clap's error, not the value's.
            serve_args.retain(|a| !a.starts_with(&format!("{flag}=")));
            serve_args.push(format!("{flag}={value}"));
            serve_answer(serve_args, &[], format!(" (from {flag})"))
        }
        Way::ServeEnv(var) => serve_answer(serve_args, &[(var, value)], format!(" (from {var})")),
        Way::ServeFile(key) => {
            let file = home.path().join("snowmint.toml");
            std::fs::write(&file, toml_line(key, value)).unwrap();
            serve_args.push(format!("--config={}", file.display()));
            serve_answer(
                serve_args,
                &[],
                format!(" (from {key} in {})", file.display()),
            )
        }
        Way::Http(target) => {
            let target = target.replace("{}", &percent(value));
            let response = http.connect().get(&target).unwrap();
            if response.status == 200 {
                return Answer::Accepted;
            }
            assert_eq!(response.status, 400, "{what}: {}", response.body);
            let body: serde_json::Value = serde_json::from_str(&response.body).unwrap();
            Answer::Refused(body["error"]["message"].as_str().unwrap().to_owned())
        }
        Way::Api(_, call) => match call(value) {
            Ok(()) => Answer::Accepted,
            Err(message) => Answer::Refused(message),
        },
    }
}

/// The message without the hint a way adds after it for ID text that is
/// valid in another encoding (`; it reads as hex: --input hex` on the
/// command line, `...: encoding=hex` over HTTP, none in the library):
/// how to say the encoding differs by place, the message before it may not.
fn without_hint(message: String) -> String {
    match message.find("; it reads as ") {
        Some(at) => message[..at].to_owned(),
        None => message,
    }
}

/// Feeds every bad and good value of the table's `name` (#`index`) through
/// every way that takes it.
fn check(name: &str, index: usize) {
    let case = value(name, index);
    let home = temp_dir("values");
    let http_home = temp_dir("values-http");
    let http = Service::start(
        SNOWMINT,
        http_home.path(),
        &["--datacenter", "0", "--machine", "0"],
        &[],
    );
    for (bad, says) in &case.bad {
        let mut seen: Vec<(String, String)> = Vec::new();
        for &way in &case.ways {
            // An empty environment variable counts as unset.
            if bad.is_empty() && matches!(way, Way::ServeEnv(_) | Way::CliEnv(..)) {
                continue;
            }
            let what = way.describe();
            match feed(way, &case, bad, &home, &http) {
                Answer::Accepted => panic!("{what} accepted the bad {} {bad:?}", case.name),
                Answer::Refused(message) => seen.push((what, without_hint(message))),
            }
        }
        let (first_way, first) = &seen[0];
        for (way, message) in &seen {
            assert_eq!(
                message, first,
                "the bad {} {bad:?} is explained differently by {way} and by {first_way}",
                case.name
            );
        }
        for word in says.iter().chain([&case.name]) {
            assert!(
                first.contains(word),
                "the message about the bad {} {bad:?} does not name {word:?}: {first}",
                case.name
            );
        }
    }
    for good in &case.good {
        for &way in &case.ways {
            if let Answer::Refused(message) = feed(way, &case, good, &home, &http) {
                panic!(
                    "{} refused the good {} {good:?}: {message}",
                    way.describe(),
                    case.name
                );
            }
        }
    }
}

#[test]
fn datacenter() {
    check("datacenter", 0);
}

#[test]
fn machine() {
    check("machine", 0);
}

#[test]
fn sequence() {
    check("sequence", 0);
}

#[test]
fn count_of_a_batch() {
    check("count", 0);
}

#[test]
fn count_of_a_stream() {
    check("count", 1);
}

#[test]
fn layout() {
    check("layout", 0);
}

#[test]
fn epoch() {
    check("epoch", 0);
}

#[test]
fn times() {
    check("timestamp", 0);
    check("from", 0);
    check("to", 0);
}

#[test]
fn ids() {
    check("ID", 0);
}

#[test]
fn encoding() {
    check("encoding", 0);
}

#[test]
fn clock_policy() {
    check("clock policy", 0);
}

#[test]
fn durations() {
    check("clock_max", 0);
    check("mark_step", 0);
    check("mark_wait_max", 0);
    check("request_timeout", 0);
}

#[test]
fn limits() {
    check("max_connections", 0);
    check("max_streams", 0);
    check("max_calls", 0);
    check("max_connection_age", 0);
}

#[test]
fn slots() {
    check("slots", 0);
}

#[test]
fn fleet_name() {
    check("fleet name", 0);
}

#[test]
fn coordinator_url() {
    check("coordinator URL", 0);
}

#[test]
fn claim_ttl() {
    check("claim_ttl", 0);
}

#[test]
fn clock_check_and_history_settings() {
    check("max clock skew", 0);
    check("clock check interval", 0);
    check("claim history keep", 0);
    check("claim history max age", 0);
}

#[test]
fn listen_address() {
    check("listen", 0);
    check("grpc_listen", 0);
    check("memcached_listen", 0);
}

#[test]
fn other_service_settings() {
    check("machine_from_hostname", 0);
    check("clock_offset_ms", 0);
}

/// Every row of the table is checked by one of the tests above.
#[test]
fn every_value_is_checked() {
    let checked = [
        "datacenter",
        "machine",
        "sequence",
        "count",
        "layout",
        "epoch",
        "timestamp",
        "from",
        "to",
        "ID",
        "encoding",
        "clock policy",
        "clock_max",
        "mark_step",
        "mark_wait_max",
        "request_timeout",
        "max_connections",
        "max_streams",
        "max_calls",
        "max_connection_age",
        "slots",
        "fleet name",
        "coordinator URL",
        "claim_ttl",
        "max clock skew",
        "clock check interval",
        "claim history keep",
        "claim history max age",
        "listen",
        "grpc_listen",
        "memcached_listen",
        "machine_from_hostname",
        "clock_offset_ms",
    ];
    for case in table() {
        assert!(
            checked.contains(&case.name),
            "{} is never checked",
            case.name
        );
    }
}

/// A layout or an epoch given in any of its forms, anywhere, reads as the
/// same layout: 2024-01-01T00:00:00Z is 1704067200000 ms, Discord's epoch
/// (2015-01-01T00:00:00Z) is 1420070400000 ms.
#[test]
fn layouts_and_epochs_read_the_same_everywhere() {
    let home = temp_dir("values-layout");
    let layout_json = |args: &[&str]| {
        let mut command = Command::new(env!("CARGO_BIN_EXE_snowmint"));
        clean(&mut command, &home);
        let output = command
            .args(args)
            .args(["--format", "json"])
            .output()
            .unwrap();
        assert!(output.status.success(), "{args:?}: {output:?}");
        serde_json::from_slice::<serde_json::Value>(&output.stdout).unwrap()
    };
    for (args, query, epoch_ms) in [
        (
            ["--layout", "42/0/10/11@2024-01-01T00:00:00Z"],
            "layout=42/0/10/11@2024-01-01T00:00:00Z",
            1_704_067_200_000_u64,
        ),
        (
            ["--epoch", "2015-01-01T00:00:00Z"],
            "epoch=2015-01-01T00:00:00Z",
            1_420_070_400_000,
        ),
    ] {
        let cli = layout_json(&["layout", args[0], args[1]]);
        assert_eq!(cli["epoch_ms"], epoch_ms, "{args:?}");

        let node: Vec<&str> = ["--datacenter", "0", "--machine", "0"]
            .into_iter()
            .chain(args.iter().copied())
            .collect();
        let service = Service::start(SNOWMINT, home.path(), &node, &[]);
        let node = service.json("/v1/node");
        assert_eq!(node["epoch_ms"], epoch_ms, "serve {args:?}");
        assert_eq!(node["layout"], cli["layout"], "serve {args:?}");
        let http = service.json(&format!("/v1/layout?{query}"));
        assert_eq!(http["epoch_ms"], epoch_ms, "{query}");
        assert_eq!(http["layout"], cli["layout"], "{query}");
    }
}

/// An empty `SNOWMINT_*` variable counts as unset, for the calculator
/// commands as for `snowmint serve`.
#[test]
fn empty_variables_count_as_unset_everywhere() {
    let home = temp_dir("values-empty");
    let empty = [("SNOWMINT_LAYOUT", ""), ("SNOWMINT_EPOCH", "")];
    let mut command = Command::new(env!("CARGO_BIN_EXE_snowmint"));
    clean(&mut command, &home);
    let output = command
        .args(["layout", "--format", "json"])
        .envs(empty)
        .output()
        .unwrap();
    assert!(output.status.success(), "{output:?}");
    let cli: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(cli["layout"], "twitter");

    let mut env = empty.to_vec();
    env.push(("SNOWMINT_DATACENTER", ""));
    // The machine given, so that the node has an identity; the empty
    // datacenter is unset, so 0.
    let service = Service::start(SNOWMINT, home.path(), &["--machine", "0"], &env);
    let node = service.json("/v1/node");
    assert_eq!(node["layout"], "twitter");
    assert_eq!(node["datacenter"], 0);
}
