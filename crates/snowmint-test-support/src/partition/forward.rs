//! A loopback port of the test's own that forwards into a host: how the
//! test reads the servers it put on hosts, with the clients it already
//! has, through no link a cut can reach.

use std::io::{Read, Write};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;

use super::Host;

/// A forward from `127.0.0.1:PORT` (in the test's namespace) to an
/// address, each connection made from inside a host. Stops, closing every
/// connection, when dropped.
pub struct Forward {
    addr: SocketAddr,
    stop: Arc<AtomicBool>,
    /// Both ends of every connection forwarded, to close on drop.
    open: Arc<Mutex<Vec<TcpStream>>>,
    accept: Option<JoinHandle<()>>,
}

impl Forward {
    /// Forwards a fresh loopback port to `upstream`, connecting from
    /// `host`.
    pub(super) fn start(host: Host, upstream: SocketAddr) -> Forward {
        let listener = TcpListener::bind("127.0.0.1:0").expect("cannot bind a loopback port");
        let addr = listener
            .local_addr()
            .expect("a bound listener has an address");
        let stop = Arc::new(AtomicBool::new(false));
        let open: Arc<Mutex<Vec<TcpStream>>> = Arc::default();
        let accept = {
            let (stop, open) = (Arc::clone(&stop), Arc::clone(&open));
            std::thread::spawn(move || {
                for client in listener.incoming() {
                    if stop.load(Ordering::Relaxed) {
                        return;
                    }
                    let Ok(client) = client else { continue };
                    let (host, open) = (host.clone(), Arc::clone(&open));
                    std::thread::spawn(move || forward(client, &host, upstream, &open));
                }
            })
        };
        Forward {
            addr,
            stop,
            open,
            accept: Some(accept),
        }
    }

    /// Where the test connects.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }
}

/// Forwards `client` to `upstream`, connected from inside `host` by this
/// thread, until either side closes.
fn forward(client: TcpStream, host: &Host, upstream: SocketAddr, open: &Mutex<Vec<TcpStream>>) {
    // This thread is the connection's own: it may enter the host.
    let server = match host.enter().and_then(|()| TcpStream::connect(upstream)) {
        Ok(server) => server,
        Err(_) => return,
    };
    let _ = client.set_nodelay(true);
    let _ = server.set_nodelay(true);
    let (Ok(client_back), Ok(server_back)) = (client.try_clone(), server.try_clone()) else {
        return;
    };
    {
        let mut open = open.lock().unwrap_or_else(|e| e.into_inner());
        open.retain(|stream| stream.peer_addr().is_ok());
        for stream in [&client, &server] {
            if let Ok(stream) = stream.try_clone() {
                open.push(stream);
            }
        }
    }
    let upward = std::thread::spawn(move || pump(client, server));
    pump(server_back, client_back);
    let _ = upward.join();
}

/// Copies `from` to `to` until `from` ends, then closes both.
fn pump(mut from: TcpStream, mut to: TcpStream) {
    let mut buffer = [0u8; 16 * 1024];
    loop {
        match from.read(&mut buffer) {
            Ok(0) | Err(_) => break,
            Ok(read) => {
                if to.write_all(&buffer[..read]).is_err() {
                    break;
                }
            }
        }
    }
    let _ = from.shutdown(Shutdown::Both);
    let _ = to.shutdown(Shutdown::Both);
}

impl Drop for Forward {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        // Wakes the accept loop, which sees the flag.
        let _ = TcpStream::connect(self.addr);
        for stream in self
            .open
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .drain(..)
        {
            let _ = stream.shutdown(Shutdown::Both);
        }
        if let Some(accept) = self.accept.take() {
            let _ = accept.join();
        }
    }
}
