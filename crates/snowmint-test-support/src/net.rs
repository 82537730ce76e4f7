//! Loopback ports for the servers a test starts.

use std::net::{TcpListener, TcpStream};
use std::time::Duration;

use crate::wait::wait_until;

/// A free TCP port on 127.0.0.1 (free when asked; the server binds it
/// right after).
///
/// Taken below Linux's ephemeral range (32768-60999 by default), which the
/// kernel hands to every outgoing connection: a port picked there can be
/// taken by some test's client socket between the asking and the server's
/// bind (seen as etcd's "bind: address already in use" under load). Each
/// port is handed out once per process, and the processes of one run start
/// at different places of the range.
pub fn free_port() -> u16 {
    use std::sync::atomic::{AtomicU32, Ordering};
    const LOW: u32 = 12_000;
    const SPAN: u32 = 20_000;
    static NEXT: AtomicU32 = AtomicU32::new(u32::MAX);
    let _ = NEXT.compare_exchange(
        u32::MAX,
        std::process::id().wrapping_mul(7_919) % SPAN,
        Ordering::Relaxed,
        Ordering::Relaxed,
    );
    for _ in 0..SPAN {
        let port = (LOW + NEXT.fetch_add(1, Ordering::Relaxed) % SPAN) as u16;
        if TcpListener::bind(("127.0.0.1", port)).is_ok() {
            return port;
        }
    }
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
