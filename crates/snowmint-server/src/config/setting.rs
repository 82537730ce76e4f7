//! The settings, their names in each place (flag, environment variable,
//! file key), and where a value came from.

use std::fmt;
use std::path::PathBuf;

/// One configurable setting.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[non_exhaustive]
pub enum Setting {
    /// Address to listen on.
    Listen,
    /// Address to serve gRPC on (off when not set).
    GrpcListen,
    /// Datacenter id of the node.
    Datacenter,
    /// Machine id of the node.
    Machine,
    /// Take the slot from the hostname's ordinal.
    MachineFromHostname,
    /// Hostname to read the ordinal from.
    Hostname,
    /// Directory of the state file.
    StateDir,
    /// ID layout.
    Layout,
    /// Epoch on top of the layout.
    Epoch,
    /// Clock-regression policy.
    ClockPolicy,
    /// Bound of the wait and borrow policies.
    ClockMax,
    /// Longest gap to the high-water mark waited out at start.
    MarkWaitMax,
    /// How far ahead the mark is reserved.
    MarkStep,
    /// Longest time a request may take.
    RequestTimeout,
    /// Shift of this node's clock (tests, operations).
    ClockOffsetMs,
    /// Coordination service URL.
    Coordinator,
    /// Fleet name under the coordinator.
    Fleet,
    /// Slots the node may claim.
    Slots,
    /// Lifetime of a coordinated claim.
    ClaimTtl,
    /// Client connections open at once, HTTP and gRPC together.
    MaxConnections,
    /// Calls in flight on one HTTP/2 connection.
    MaxStreams,
    /// gRPC calls in flight in the node.
    MaxCalls,
    /// How long a client connection may live.
    MaxConnectionAge,
    /// The TLS certificate chain (PEM).
    TlsCert,
    /// The TLS private key (PEM).
    TlsKey,
    /// The CAs client certificates must be signed by (mTLS).
    TlsClientCa,
    /// The file of bearer tokens.
    AuthTokenFile,
    /// Which endpoints need a token.
    AuthScope,
}

impl Setting {
    /// Every setting.
    pub const ALL: [Setting; 28] = [
        Setting::Listen,
        Setting::GrpcListen,
        Setting::Datacenter,
        Setting::Machine,
        Setting::MachineFromHostname,
        Setting::Hostname,
        Setting::StateDir,
        Setting::Layout,
        Setting::Epoch,
        Setting::ClockPolicy,
        Setting::ClockMax,
        Setting::MarkWaitMax,
        Setting::MarkStep,
        Setting::RequestTimeout,
        Setting::ClockOffsetMs,
        Setting::Coordinator,
        Setting::Fleet,
        Setting::Slots,
        Setting::ClaimTtl,
        Setting::MaxConnections,
        Setting::MaxStreams,
        Setting::MaxCalls,
        Setting::MaxConnectionAge,
        Setting::TlsCert,
        Setting::TlsKey,
        Setting::TlsClientCa,
        Setting::AuthTokenFile,
        Setting::AuthScope,
    ];

    /// The key in the TOML file, such as `clock_max`.
    pub const fn key(self) -> &'static str {
        match self {
            Setting::Listen => "listen",
            Setting::GrpcListen => "grpc_listen",
            Setting::Datacenter => "datacenter",
            Setting::Machine => "machine",
            Setting::MachineFromHostname => "machine_from_hostname",
            Setting::Hostname => "hostname",
            Setting::StateDir => "state_dir",
            Setting::Layout => "layout",
            Setting::Epoch => "epoch",
            Setting::ClockPolicy => "clock_policy",
            Setting::ClockMax => "clock_max",
            Setting::MarkWaitMax => "mark_wait_max",
            Setting::MarkStep => "mark_step",
            Setting::RequestTimeout => "request_timeout",
            Setting::ClockOffsetMs => "clock_offset_ms",
            Setting::Coordinator => "coordinator",
            Setting::Fleet => "fleet",
            Setting::Slots => "slots",
            Setting::ClaimTtl => "claim_ttl",
            Setting::MaxConnections => "max_connections",
            Setting::MaxStreams => "max_streams",
            Setting::MaxCalls => "max_calls",
            Setting::MaxConnectionAge => "max_connection_age",
            Setting::TlsCert => "tls_cert",
            Setting::TlsKey => "tls_key",
            Setting::TlsClientCa => "tls_client_ca",
            Setting::AuthTokenFile => "auth_token_file",
            Setting::AuthScope => "auth_scope",
        }
    }

    /// The command-line flag, such as `--clock-max`.
    pub fn flag(self) -> String {
        format!("--{}", self.key().replace('_', "-"))
    }

    /// The environment variable, such as `SNOWMINT_CLOCK_MAX`.
    pub fn env(self) -> String {
        format!("SNOWMINT_{}", self.key().to_ascii_uppercase())
    }

    /// Whether the setting is left out of the lists shown to people (a
    /// knob for tests and operations).
    pub(crate) fn is_hidden(self) -> bool {
        self == Setting::ClockOffsetMs
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
