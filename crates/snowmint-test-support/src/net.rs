//! Loopback ports for the servers a test starts.

use std::net::{TcpListener, TcpStream};
use std::time::Duration;

use crate::wait::wait_until;

/// A free TCP port on 127.0.0.1 (free when asked; the server binds it
/// right after).
pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|listener| listener.local_addr())
        .expect("cannot bind a loopback port")
        .port()
}

/// Waits until something accepts connections on 127.0.0.1:`port`; `name`
/// names it in the failure, after `limit`.
pub fn wait_for_port(name: &str, port: u16, limit: Duration) {
    wait_until(&format!("{name} to listen on port {port}"), limit, || {
        TcpStream::connect(("127.0.0.1", port)).ok().map(drop)
    });
}
