//! Where a server runs: on the test's loopback, or on a host of a
//! partition [`Network`](crate::partition::Network).

use std::net::{IpAddr, Ipv4Addr};

use crate::partition::Host;

/// Where a server runs.
///
/// - `Loopback`: in the test's own namespace, on free `127.0.0.1` ports
///   (what every test had before hosts).
/// - `Host`: in a host's network namespace, on the service's usual ports
///   at the host's address (a namespace has every port to itself); the
///   test reads it through a forward of its own, which no cut reaches,
///   and nodes on other hosts reach it across the switch.
#[derive(Clone, Debug, Default)]
pub enum Site {
    /// The test's loopback.
    #[default]
    Loopback,
    /// A host of a partition network.
    Host(Host),
}

impl Site {
    /// The address the server binds at this site.
    pub fn ip(&self) -> IpAddr {
        match self {
            Site::Loopback => IpAddr::V4(Ipv4Addr::LOCALHOST),
            Site::Host(host) => IpAddr::V4(host.ip()),
        }
    }

    /// `port` at this site, or, on loopback, `free` (a free loopback
    /// port, since the test's namespace is shared).
    pub fn port(&self, port: u16, free: impl FnOnce() -> u16) -> u16 {
        match self {
            Site::Loopback => free(),
            Site::Host(_) => port,
        }
    }
}
