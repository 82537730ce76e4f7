//! The node's listeners: one [`Listener`] variant per protocol, saying
//! which settings configure it, what guards its clients, and what serves
//! its connections.
//!
//! Every listener is accepted by the one front end, `net::Front`: the
//! connection cap (under the descriptor limit, one budget for all
//! listeners), accept backpressure, TLS where the protocol carries it,
//! the deadlines (TLS handshake, first request, idle, write) and the
//! metrics are the same for every protocol. What a protocol brings is how
//! it speaks on one connection: an HTTP service (`net::Http`: axum's
//! routes, tonic's), or requests and answers of its own over the byte
//! stream (`net::ByteStream`).
//!
//! # Adding a protocol
//!
//! 1. Its module, which serves one connection: memcached's is
//!    `memcached/`, a `ByteStream` that reads request lines and writes
//!    answers, marking each request in flight on its `Session` and
//!    stopping when the session asks it to close.
//! 2. A variant of [`Listener`], with its facts in each `match` below
//!    (the compiler finds them all): its name, its settings, what guards
//!    it, and what serves it.
//! 3. Its settings in `config/setting.rs`: the address (unset: off) and,
//!    for a protocol whose clients keep pooled connections, an idle
//!    timeout; a protocol that carries no credential also gets a switch
//!    to serve it open beside tokens or TLS.
//!
//! The configuration, `serve --check`, the start's log and stdout,
//! `/v1/node`, the cap and the metrics take it from there.

use std::net::SocketAddr;
use std::time::Duration;

use tokio::net::TcpListener;

use crate::config::Setting;
use crate::grpc::Stopping;
use crate::net::{Front, Http, Stream};
use crate::state::AppState;

/// A listener of the node: which protocol it speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Listener {
    /// The HTTP API, Leaf's API included (`--listen`).
    Http,
    /// The gRPC API (`--grpc-listen`).
    Grpc,
    /// memcached's text protocol (`--memcached-listen`).
    Memcached,
}

/// What guards a listener's clients on a node with bearer tokens or TLS.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Guard {
    /// Bearer tokens on the routes of the node's scope, and TLS; over
    /// TLS, ALPN offers these protocols.
    TokensAndTls {
        /// The ALPN protocol names, most preferred first.
        alpn: &'static [&'static [u8]],
    },
    /// Neither: the protocol carries no credential and no TLS. Beside
    /// tokens or TLS it is served only on loopback, or when `open` (a
    /// switch) says so, and `--check`, the log and `/v1/node` say it is
    /// open.
    Nothing {
        /// The switch that serves it open.
        open: Setting,
    },
}

impl Listener {
    /// Every listener, in the order they are shown.
    pub const ALL: [Listener; 3] = [Listener::Http, Listener::Grpc, Listener::Memcached];

    /// How many there are.
    pub const COUNT: usize = Listener::ALL.len();

    /// The name in metric labels (`listener`, `api`) and in `/v1/node`.
    pub const fn name(self) -> &'static str {
        match self {
            Listener::Http => "http",
            Listener::Grpc => "grpc",
            Listener::Memcached => "memcached",
        }
    }

    /// The name for people: `HTTP`, `gRPC`.
    pub const fn title(self) -> &'static str {
        match self {
            Listener::Http => "HTTP",
            Listener::Grpc => "gRPC",
            Listener::Memcached => "memcached",
        }
    }

    /// The setting of its address (HTTP's has a default; the others are
    /// off when unset).
    pub const fn address_setting(self) -> Setting {
        match self {
            Listener::Http => Setting::Listen,
            Listener::Grpc => Setting::GrpcListen,
            Listener::Memcached => Setting::MemcachedListen,
        }
    }

    /// The setting of how long its connections may idle between requests;
    /// `None`: the request timeout.
    pub const fn idle_setting(self) -> Option<Setting> {
        match self {
            Listener::Http | Listener::Grpc => None,
            // memcached clients keep pooled connections open between bursts.
            Listener::Memcached => Some(Setting::MemcachedIdleTimeout),
        }
    }

    /// What guards its clients.
    pub const fn guard(self) -> Guard {
        match self {
            Listener::Http => Guard::TokensAndTls {
                alpn: &[b"h2", b"http/1.1"],
            },
            Listener::Grpc => Guard::TokensAndTls { alpn: &[b"h2"] },
            Listener::Memcached => Guard::Nothing {
                open: Setting::MemcachedUnauthenticated,
            },
        }
    }

    /// Whether it carries bearer tokens and TLS.
    pub const fn is_guarded(self) -> bool {
        matches!(self.guard(), Guard::TokensAndTls { .. })
    }

    /// The scheme of its address in `listening on` lines and `--check`,
    /// with TLS on or off: `https://`, `http://`, or none for a protocol
    /// that is not HTTP's.
    pub const fn scheme(self, tls: bool) -> &'static str {
        match (self, tls) {
            (Listener::Memcached, _) => "",
            (_, true) => "https://",
            (_, false) => "http://",
        }
    }

    /// Serves `state` on `listener` through `front` until `stopping`
    /// turns true, then returns once its connections have closed.
    pub(crate) async fn serve(
        self,
        front: Front,
        listener: TcpListener,
        state: AppState,
        idle: Duration,
        stopping: Stopping,
    ) {
        match self {
            Listener::Http => {
                let service = Http::one(crate::app(state));
                front.serve(listener, self, idle, service).await;
            }
            Listener::Grpc => {
                let service = Http::two(crate::grpc::service(state, stopping));
                front.serve(listener, self, idle, service).await;
            }
            Listener::Memcached => {
                let service = Stream(crate::memcached::Memcached::new(state));
                front.serve(listener, self, idle, service).await;
            }
        }
    }
}

/// Where the node's listeners are, and how long each lets a connection
/// idle: what their settings say ([`Listener::address_setting`] and the
/// others). HTTP always listens.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Listeners {
    /// By `Listener as usize`; HTTP's is always set.
    address: [Option<SocketAddr>; Listener::COUNT],
    /// By `Listener as usize`; `None`: the request timeout.
    idle: [Option<Duration>; Listener::COUNT],
    /// By `Listener as usize`: served open beside tokens or TLS, as the
    /// listener's [`Guard::Nothing`] switch said.
    open: [bool; Listener::COUNT],
}

impl Listeners {
    /// HTTP on `http`, nothing else.
    pub fn new(http: SocketAddr) -> Listeners {
        let mut address = [None; Listener::COUNT];
        address[Listener::Http as usize] = Some(http);
        Listeners {
            address,
            idle: [None; Listener::COUNT],
            open: [false; Listener::COUNT],
        }
    }

    /// Where `listener` listens, when it is on.
    pub fn address(&self, listener: Listener) -> Option<SocketAddr> {
        self.address[listener as usize]
    }

    /// Where HTTP listens.
    pub fn http(&self) -> SocketAddr {
        self.address(Listener::Http)
            .expect("HTTP always listens: Listeners::new sets it and nothing unsets it")
    }

    /// The listeners that are on, with their addresses, in
    /// [`Listener::ALL`]'s order.
    pub fn on(&self) -> impl Iterator<Item = (Listener, SocketAddr)> + '_ {
        Listener::ALL
            .into_iter()
            .filter_map(|listener| Some((listener, self.address(listener)?)))
    }

    /// Turns `listener` on at `address` (or moves it there).
    pub fn set(&mut self, listener: Listener, address: SocketAddr) -> &mut Listeners {
        self.address[listener as usize] = Some(address);
        self
    }

    /// Turns `listener` off (HTTP stays on).
    pub fn unset(&mut self, listener: Listener) -> &mut Listeners {
        if listener != Listener::Http {
            self.address[listener as usize] = None;
        }
        self
    }

    /// How long a connection of `listener` may idle between requests,
    /// when it is not the request timeout.
    pub fn idle_timeout(&self, listener: Listener) -> Option<Duration> {
        self.idle[listener as usize]
    }

    /// Sets how long a connection of `listener` may idle.
    pub fn set_idle_timeout(&mut self, listener: Listener, idle: Duration) -> &mut Listeners {
        self.idle[listener as usize] = Some(idle);
        self
    }

    /// Whether `listener`, whose protocol carries no credential, is served
    /// open beside tokens or TLS because its switch said so.
    pub fn served_open(&self, listener: Listener) -> bool {
        self.open[listener as usize]
    }

    /// Records that `listener` is served open by its switch.
    pub(crate) fn set_served_open(&mut self, listener: Listener, open: bool) {
        self.open[listener as usize] = open;
    }
}
