//! The settings of `snowmint serve`, each declared once, and where a value
//! came from.
//!
//! One entry of the `settings!` list below is everything there is to know
//! about a setting outside the code that reads it: its file key (from which
//! the flag `--clock-max` and the environment variable `SNOWMINT_CLOCK_MAX`
//! are derived), the name of its value in `--help`, its help text, its
//! default and its range. The `snowmint` binary builds its `serve` flags
//! and their help from these entries, [`Layer`](super::Layer) reads the
//! environment and the file by them, and [`Config::resolve`](super::Config::resolve)
//! applies the declared default and range; so what `--help` and the service guide
//! say is what the code does (`crates/snowmint-cli/tests/settings.rs`
//! checks the help and the guide's table against these entries).
//!
//! # Adding a setting
//!
//! 1. Add an entry to the list below: the variant, with a doc line, and its
//!    [`Spec`] (`Spec::value("max_connections", "N")` or
//!    `Spec::switch(...)`, then `.help(...)`, `.default(...)` or
//!    `.unset(...)`, and `.durations(...)`/`.integers(...)`/
//!    `.described(...)` for its range). Nothing else lists the settings.
//! 2. Read it in `resolve.rs` with `Lookup::get` (or `Lookup::duration`,
//!    which applies the declared range) and keep the value in a
//!    [`Config`](super::Config) field. A declared default is read by the
//!    same parser as a given value, so there is no second default in code.
//! 3. Add its row to the table in docs/service.md ("Configuration"):
//!    `cargo test -p snowmint-cli --test settings` prints the table these
//!    entries make when the guide's differs.

use std::fmt;
use std::path::PathBuf;
use std::time::Duration;

use snowmint_fleet::{MAX_HISTORY_AGE, MAX_HISTORY_KEEP, MAX_TTL, MIN_TTL};

pub use super::spec::{DefaultValue, Form, Range, Spec};

/// Every duration setting is at most a day: far beyond any timeout or bound
/// here.
const DAY: Duration = Duration::from_secs(86_400);

/// The shift of the clock is at most a year either way: plenty for any test
/// or correction.
const YEAR_MS: i64 = 366 * 86_400_000;

/// Declares the settings: the [`Setting`] enum, [`Setting::ALL`] in the
/// order `--help` shows them, and [`Setting::spec`].
macro_rules! settings {
    ($($(#[$doc:meta])* $name:ident = $spec:expr;)*) => {
        /// One configurable setting of `snowmint serve`; [`Setting::spec`]
        /// says everything about it but how it is read.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
        #[non_exhaustive]
        pub enum Setting {
            $($(#[$doc])* $name,)*
        }

        impl Setting {
            /// Every setting, in the order `--help` shows them.
            pub const ALL: &'static [Setting] = &[$(Setting::$name),*];

            /// The setting's declaration.
            pub const fn spec(self) -> Spec {
                match self {
                    $(Setting::$name => $spec,)*
                }
            }
        }
    };
}

settings! {
    /// Address to listen on.
    Listen = Spec::value("listen", "ADDR")
        .help(
            "Address to listen on, IP:PORT or localhost:PORT; port 0 picks a free one; \
             0.0.0.0:PORT listens on every interface (in a container)",
        )
        .default("127.0.0.1:8080");
    /// Address to serve gRPC on (off when not set).
    GrpcListen = Spec::value("grpc_listen", "ADDR")
        .help(
            "Also serve the gRPC API (snowmint.v1.IdService, health, reflection) on this \
             address, IP:PORT; port 0 picks a free one",
        )
        .unset("off");
    /// Address to serve the memcached text protocol on (off when not set).
    MemcachedListen = Spec::value("memcached_listen", "ADDR")
        .help(
            "Also serve IDs in memcached's text protocol on this address, IP:PORT: get KEY \
             answers a new ID, whatever the key",
        )
        .unset("off");
    /// How long a memcached connection may stay silent.
    MemcachedIdleTimeout = Spec::value("memcached_idle_timeout", "DURATION")
        .help("Close a memcached connection that sends no whole request for this long")
        .default("10m")
        // memcached clients keep pooled connections open between bursts;
        // the bound is for connections abandoned or never used.
        .durations(Duration::from_millis(100), DAY);
    /// Serve memcached beside tokens or TLS, though it has neither.
    MemcachedUnauthenticated = Spec::switch("memcached_unauthenticated")
        .help(
            "Serve memcached's protocol on a node with tokens or TLS although it carries \
             neither (anyone who reaches the address gets IDs); not needed on loopback",
        )
        .default("off");
    /// Datacenter id of the node.
    Datacenter = Spec::number("datacenter", "N")
        .help(
            "This node's datacenter id, a fixed node's with --machine (the one left out is 0). \
             A node is given its identity here, by --machine-from-hostname or by --coordinator; \
             given none, it does not start",
        )
        .default("0")
        .described("the layout's: 0..=31 in twitter");
    /// Machine id of the node.
    Machine = Spec::number("machine", "N")
        .help("This node's machine id, a fixed node's with --datacenter (see --datacenter)")
        .default("0")
        .described("the layout's: 0..=31 in twitter");
    /// How many slots the node holds.
    SlotsPerNode = Spec::number("slots_per_node", "K")
        .help(
            "How many slots this node holds, a power of two: K times one slot's IDs per tick, \
             every ID still stamped with the clock's own time. A fixed node holds its own slot \
             and the K - 1 after it; a coordinated one claims an aligned block of K together. \
             Costs K slots of the layout's",
        )
        .default("1")
        .integers(1, 1 << 30);
    /// Take the slot from the hostname's ordinal.
    MachineFromHostname = Spec::switch("machine_from_hostname")
        .help(
            "Take the slot from the hostname's ordinal (ids-12 -> slot 12 -> datacenter 0, \
             machine 12)",
        )
        .default("off");
    /// Hostname to read the ordinal from.
    Hostname = Spec::value("hostname", "NAME")
        .help("The hostname to read the ordinal from, instead of this machine's")
        .unset("this machine's");
    /// Directory of the state file.
    StateDir = Spec::value("state_dir", "DIR")
        .help("Directory of the high-water mark file")
        .unset("$XDG_STATE_HOME/snowmint, else ~/.local/state/snowmint, else ./snowmint-state");
    /// The TOML file the other settings may come from.
    ConfigFile = Spec::value("config", "FILE")
        .help("TOML file with any of these settings")
        .unset("none")
        .not_in_file();
    /// ID layout.
    Layout = Spec::value("layout", "LAYOUT")
        .help(
            "The ID layout: twitter, discord, or widths T/D/M/S, each optionally with @EPOCH \
             (Unix milliseconds or RFC 3339)",
        )
        .default("twitter")
        .global();
    /// Epoch on top of the layout.
    Epoch = Spec::number("epoch", "EPOCH")
        .help("A custom epoch on top of the layout: Unix milliseconds or RFC 3339")
        .unset("the layout's")
        .global();
    /// Clock-regression policy.
    ClockPolicy = Spec::value("clock_policy", "POLICY")
        .help(
            "When the clock goes back: refuse (503 until it catches up), wait (up to \
             --clock-max, then refuse) or borrow (issue ahead of the clock, up to --clock-max)",
        )
        .default("refuse");
    /// Bound of the wait and borrow policies.
    ClockMax = Spec::value("clock_max", "DURATION")
        .help("The bound of the wait and borrow policies")
        .default("2s")
        .durations(Duration::ZERO, DAY);
    /// Longest gap to the high-water mark waited out at start.
    MarkWaitMax = Spec::value("mark_wait_max", "DURATION")
        .help(
            "Longest gap between the recorded high-water mark and the clock that is waited out \
             at start; a larger one refuses to start",
        )
        .default("2s")
        .durations(Duration::ZERO, DAY);
    /// How far ahead the mark is reserved.
    MarkStep = Spec::value("mark_step", "DURATION")
        .help(
            "How far ahead of the clock the high-water mark is reserved (one disk write per \
             step; at most --mark-wait-max)",
        )
        .default("1s")
        // Each step is a disk write.
        .durations(Duration::from_millis(10), DAY);
    /// Longest time a request may take.
    RequestTimeout = Spec::value("request_timeout", "DURATION")
        .help(
            "Longest time a request may take; also the longest a connection may take to send \
             its first request (TLS handshake included) or a request head, sit idle, leave an \
             answer unread, or leave an HTTP/2 ping unanswered",
        )
        .default("10s")
        .durations(Duration::from_millis(1), DAY);
    /// Client connections open at once, every listener's together.
    MaxConnections = Spec::number("max_connections", "N")
        .help(
            "Client connections open at once, every listener's together; never more than the \
             descriptor limit minus 32 kept for the state files and the coordinator. At the cap, \
             new connections wait in the kernel's queue",
        )
        .default("1024")
        .integers(1, 1 << 20);
    /// Calls in flight on one HTTP/2 connection.
    MaxStreams = Spec::number("max_streams", "N")
        .help("Calls in flight on one HTTP/2 connection (gRPC, and HTTP/2 over TLS)")
        .default("100")
        .integers(1, 1 << 16);
    /// gRPC calls in flight in the node.
    MaxCalls = Spec::number("max_calls", "N")
        .help(
            "gRPC calls in flight in the whole node, streams included; one more is refused with \
             UNAVAILABLE (snowmint-code overloaded) so that the client asks another node",
        )
        .default("1024")
        .integers(1, 1 << 20);
    /// How long a client connection may live.
    MaxConnectionAge = Spec::value("max_connection_age", "DURATION")
        .help("How long a client connection may live before it is asked to close (HTTP/2 GOAWAY)")
        .default("1h")
        .durations(Duration::from_secs(1), DAY);
    /// The TLS certificate chain (PEM).
    TlsCert = Spec::value("tls_cert", "FILE")
        .help(
            "Serve HTTP and gRPC over TLS with this certificate chain (PEM: the node's \
             certificate, then intermediates); needs --tls-key. Both files are read again when \
             they change, and on SIGHUP",
        )
        .unset("off: cleartext");
    /// The TLS private key (PEM).
    TlsKey = Spec::value("tls_key", "FILE")
        .help("The private key of --tls-cert (PEM: PKCS#8, RSA or EC)")
        .unset("none");
    /// The CAs client certificates must be signed by (mTLS).
    TlsClientCa = Spec::value("tls_client_ca", "FILE")
        .help(
            "Require client certificates signed by a CA of this PEM file (mTLS), on both \
             listeners; needs --tls-cert",
        )
        .unset("none");
    /// The file of bearer tokens.
    AuthTokenFile = Spec::value("auth_token_file", "FILE")
        .help(
            "Require Authorization: Bearer TOKEN, a token of this file: one per line, at least 16 \
             characters of A-Z a-z 0-9 - . _ ~ + / (then any =), # starts a comment. Read again \
             when it changes, and on SIGHUP",
        )
        .unset("off: no token needed");
    /// Which endpoints need a token.
    AuthScope = Spec::value("auth_scope", "SCOPE")
        .help(
            "Which endpoints need a token: issue (/v1/id, /v1/ids, /v1/node and gRPC NextIds, \
             StreamIds, GetNode) or all (every endpoint but /healthz, /readyz and gRPC health); \
             needs --auth-token-file",
        )
        .default("issue")
        .described("issue or all");
    /// Coordination service URL.
    Coordinator = Spec::value("coordinator", "URL")
        .help(
            "Claim a slot from etcd://HOST:PORT,..., zk://HOST:PORT,.../CHROOT (the chroot is \
             optional) or postgres://USER@HOST:PORT/DB (port optional). etcd and ZooKeeper take \
             a user too, etcd://USER@HOST:PORT. Give a password through \
             SNOWMINT_COORDINATOR_PASSWORD or --coordinator-password-file, not in a URL on the \
             command line, which every local user can read",
        )
        .unset("none");
    /// Fleet name under the coordinator.
    Fleet = Spec::value("fleet", "NAME")
        .help("Fleet name under the coordinator")
        .default("default")
        .described("1 to 64 of A-Z a-z 0-9 - _ .");
    /// Slots the node may claim.
    Slots = Spec::value("slots", "A-B")
        .help("Slots this node may claim, A-B")
        .unset("all")
        .described("the layout's: 0-1023 in twitter");
    /// Lifetime of a coordinated claim.
    ClaimTtl = Spec::value("claim_ttl", "DURATION")
        .help(
            "Lifetime of a coordinated claim without renewal: the etcd lease TTL, the ZooKeeper \
             session timeout or the PostgreSQL row's lease",
        )
        .default("10s")
        .durations(MIN_TTL, MAX_TTL);
    /// The CA file TLS to etcd or ZooKeeper is checked against (TLS is on
    /// when it is given).
    CoordinatorCa = Spec::value("coordinator_ca", "FILE")
        .help(
            "Speak TLS to etcd or ZooKeeper, checking the servers' certificates against the \
             authorities in this PEM file",
        )
        .unset("none: no TLS");
    /// The node's certificate for mutual TLS to the coordinator.
    CoordinatorCert = Spec::value("coordinator_cert", "FILE")
        .help(
            "The certificate (PEM) to present for mutual TLS to etcd or ZooKeeper; needs \
             --coordinator-key and --coordinator-ca. The files are read again for each new \
             connection",
        )
        .unset("none");
    /// The private key of that certificate.
    CoordinatorKey = Spec::value("coordinator_key", "FILE")
        .help("The private key (PEM) of --coordinator-cert")
        .unset("none");
    /// A file holding the password of the coordinator URL's user.
    CoordinatorPasswordFile = Spec::value("coordinator_password_file", "FILE")
        .help(
            "A file holding the password of the coordinator URL's user (etcd, ZooKeeper digest \
             or PostgreSQL), mode 0600 or less; or give the password in \
             SNOWMINT_COORDINATOR_PASSWORD",
        )
        .unset("none");
    /// The password of the coordinator URL's user (environment only: a
    /// flag would show it in process lists, and the file is not checked
    /// for who may read it as a password file is).
    CoordinatorPassword = Spec::value("coordinator_password", "PASSWORD")
        .help("The password of the coordinator URL's user")
        .unset("none (environment only: see Security)")
        .env_only();
    /// Let anyone read the znodes a ZooKeeper fleet with credentials
    /// creates.
    CoordinatorWorldRead = Spec::switch("coordinator_world_read")
        .help(
            "With a ZooKeeper user, let anyone read (never write) the znodes the fleet creates, \
             so that clients without credentials can find the nodes",
        )
        .default("off");
    /// Largest skew allowed between this node's clock and the fleet's.
    MaxClockSkew = Spec::value("max_clock_skew", "DURATION")
        .help(
            "Largest offset allowed between this node's clock and the clocks of up to 5 slot \
             holders and the coordinator's (PostgreSQL, ZooKeeper); beyond it, or with a clock \
             that runs slow against theirs (below 0.95 of their rate), the node claims no slot, \
             or gives its slot up, until its clock is back in range; off turns both checks off",
        )
        .default("1s")
        .described("10ms..=1h, or off");
    /// How often a coordinated node checks its clock.
    ClockCheckEvery = Spec::value("clock_check_every", "DURATION")
        .help("How often a node holding a slot checks its clock (it also checks before each claim)")
        .default("30s")
        .durations(Duration::from_secs(1), DAY);
    /// Records of the claim history kept per slot.
    ClaimHistoryKeep = Spec::number("claim_history_keep", "N")
        .help(
            "Records of the claim history (who held a slot when; see snowmint whois) kept per \
             slot; 0 writes none",
        )
        .default("16")
        .integers(0, MAX_HISTORY_KEEP as i64);
    /// How long an ended claim's record is kept.
    ClaimHistoryMaxAge = Spec::value("claim_history_max_age", "DURATION")
        .help("How long the record of an ended claim is kept (720h: 30 days)")
        .default("720h")
        .durations(Duration::from_secs(3600), MAX_HISTORY_AGE);
    /// Shift of this node's clock (tests, operations).
    ClockOffsetMs = Spec::number("clock_offset_ms", "MS")
        .help("Test and operations knob: shift this node's clock by this many milliseconds")
        .default("0")
        .integers(-YEAR_MS, YEAR_MS)
        .hidden();
    /// What the binary logs.
    Log = Spec::value("log", "FILTER")
        .help("Log filter, such as info or debug (debug logs every request)")
        .default("info");
}

impl Setting {
    /// The key in the TOML file, such as `clock_max`.
    pub const fn key(self) -> &'static str {
        self.spec().key
    }

    /// The command-line flag's long name, such as `clock-max`.
    pub fn long(self) -> String {
        self.key().replace('_', "-")
    }

    /// The command-line flag, such as `--clock-max`.
    pub fn flag(self) -> String {
        format!("--{}", self.long())
    }

    /// The environment variable, such as `SNOWMINT_CLOCK_MAX`.
    pub fn env(self) -> String {
        format!("SNOWMINT_{}", self.key().to_ascii_uppercase())
    }

    /// The help of the setting's flag, with where else it may come from, its
    /// default and its range: `The bound of the wait and borrow policies
    /// [env: SNOWMINT_CLOCK_MAX] [default: 2s] [range: 0..=24h]`.
    pub fn help_line(self) -> String {
        let spec = self.spec();
        let mut line = format!(
            "{} [env: {}] [default: {}]",
            spec.help,
            self.env(),
            spec.default.text()
        );
        if let Some(range) = spec.range {
            line.push_str(&format!(" [range: {range}]"));
        }
        line
    }

    /// Whether the setting is left out of the lists shown to people (a
    /// knob for tests and operations).
    pub fn is_hidden(self) -> bool {
        self.spec().hidden
    }

    /// The setting a TOML file key names, if any.
    pub(crate) fn from_file_key(key: &str) -> Option<Setting> {
        Setting::ALL
            .iter()
            .copied()
            .find(|s| s.spec().in_file && s.key() == key)
    }

    /// The keys a TOML file may hold, for messages.
    pub(crate) fn file_keys() -> impl Iterator<Item = &'static str> {
        Setting::ALL
            .iter()
            .filter(|s| s.spec().in_file && !s.is_hidden())
            .map(|s| s.key())
    }
}

/// Where a value came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Origin {
    /// A command-line flag.
    Flag,
    /// An environment variable.
    Env,
    /// The TOML file at this path.
    File(PathBuf),
    /// Nothing set it.
    Default,
}

/// A setting's origin, written for messages: `--datacenter`,
/// `SNOWMINT_DATACENTER`, `datacenter in /etc/snowmint.toml`, `default`.
pub(crate) struct Named<'a>(pub Setting, pub &'a Origin);

impl fmt::Display for Named<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.1 {
            Origin::Flag => f.write_str(&self.0.flag()),
            Origin::Env => f.write_str(&self.0.env()),
            Origin::File(path) => write!(f, "{} in {}", self.0.key(), path.display()),
            Origin::Default => f.write_str("default"),
        }
    }
}
