//! The limits every connection is held to, and their names in metrics.

use std::time::Duration;

/// Descriptors kept free for everything that is not a client connection:
/// the state and lock files (the mark is written to a new file and
/// renamed), the coordinator's connections, the runtime's own, logs.
pub const DESCRIPTOR_RESERVE: u64 = 32;

/// The most an HTTP/2 stream buffers for sending beyond what its client
/// has read (hyper's default is 400 KiB): two batches of 4096 IDs, so a
/// stream that is read keeps its pace, and one that is not holds little.
pub const H2_SEND_BUFFER: usize = 64 * 1024;

/// The longest a TLS handshake may take, when the request timeout is
/// longer: a client's handshake takes a round trip or two, and one that
/// has sent half a ClientHello holds a connection for nothing.
pub const TLS_HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(5);

/// The largest gRPC request message read: every request of this API is a
/// few bytes but `Inspect`'s, whose text may have up to
/// [`snowmint::inspect::MAX_TEXT`] bytes (a longer text within this is
/// refused by the core, naming the bound; past it, by tonic).
pub const MAX_GRPC_REQUEST: usize = snowmint::inspect::MAX_TEXT + 64 * 1024;

/// What a node's front end allows each client. Every deadline is the
/// request timeout, so that one setting says how long anything may stall.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Open client connections, every listener's together; fewer when the
    /// descriptor limit minus `DESCRIPTOR_RESERVE` is lower.
    pub max_connections: u64,
    /// Calls (HTTP/2 streams) in flight on one HTTP/2 connection.
    pub max_streams: u32,
    /// gRPC calls in flight in the whole node, streams included, beyond
    /// each connection's first (which is always let in, so that a new
    /// client is served however many calls others hold).
    pub max_calls: u64,
    /// How long a connection may live: then it is asked to close (HTTP/2
    /// GOAWAY, HTTP/1.1 after the request in flight), and closed a request
    /// timeout later.
    pub max_connection_age: Duration,
    /// The longest a request may take; also the longest a connection may
    /// take to finish its TLS handshake (at most 5 s)
    /// and send a first request, stay idle, leave a response unread, or
    /// leave a keep-alive ping unanswered.
    pub request_timeout: Duration,
}

impl Limits {
    /// The defaults, with `request_timeout`.
    pub const fn new(request_timeout: Duration) -> Limits {
        Limits {
            max_connections: 1024,
            max_streams: 100,
            max_calls: 1024,
            max_connection_age: Duration::from_secs(3600),
            request_timeout,
        }
    }
}

impl Default for Limits {
    fn default() -> Self {
        Limits::new(Duration::from_secs(10))
    }
}

/// A limit that was reached, as counted in
/// `snowmint_limit_reached_total{limit}`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Limit {
    /// The connection cap: accepting paused until a connection closes.
    Connections,
    /// The connection cap: a connection closed to make room for a new one.
    Evicted,
    /// The node's gRPC calls in flight: a call refused with `UNAVAILABLE`.
    Calls,
    /// A connection reached its streams in flight (HTTP/2 refuses more).
    Streams,
    /// No first request within the request timeout.
    FirstRequestTimeout,
    /// No TLS handshake within the request timeout, or
    /// 5 s if that is shorter.
    TlsHandshakeTimeout,
    /// An HTTP/1.1 request head not read within the request timeout.
    HeaderTimeout,
    /// A response left unread (the socket would not take it) for the
    /// request timeout.
    WriteTimeout,
    /// No request for the request timeout.
    IdleTimeout,
    /// An HTTP/2 keep-alive ping not answered within the request timeout.
    KeepaliveTimeout,
    /// A connection older than the maximum age.
    MaxConnectionAge,
}

impl Limit {
    /// Every limit.
    pub const ALL: [Limit; 11] = [
        Limit::Connections,
        Limit::Evicted,
        Limit::Calls,
        Limit::Streams,
        Limit::FirstRequestTimeout,
        Limit::TlsHandshakeTimeout,
        Limit::HeaderTimeout,
        Limit::WriteTimeout,
        Limit::IdleTimeout,
        Limit::KeepaliveTimeout,
        Limit::MaxConnectionAge,
    ];

    /// The label value.
    pub const fn name(self) -> &'static str {
        match self {
            Limit::Connections => "connections",
            Limit::Evicted => "evicted",
            Limit::Calls => "calls",
            Limit::Streams => "streams",
            Limit::FirstRequestTimeout => "first_request_timeout",
            Limit::TlsHandshakeTimeout => "tls_handshake_timeout",
            Limit::HeaderTimeout => "header_timeout",
            Limit::WriteTimeout => "write_timeout",
            Limit::IdleTimeout => "idle_timeout",
            Limit::KeepaliveTimeout => "keepalive_timeout",
            Limit::MaxConnectionAge => "max_connection_age",
        }
    }
}
