//! A TCP proxy the test controls, to partition one node from the
//! coordinator (or from one member of it).
//!
//! A cut behaves like a network partition, not like a closed socket:
//! connections stay open, bytes stop flowing (the kernel buffers what the
//! sender writes), new connections are accepted but not forwarded. A heal
//! lets everything flow again, like TCP retransmitting after the network
//! comes back.
//!
//! The proxy counts what goes through it ([`Proxy::connections`],
//! [`Proxy::bytes`]), so that a test can tell which member of a replicated
//! server a node's client is using.

use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::tcp::{OwnedReadHalf, OwnedWriteHalf};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::watch;
use tokio::task::JoinHandle;

/// A proxy from a loopback port to `upstream`; everything stops when
/// dropped.
pub struct Proxy {
    addr: SocketAddr,
    upstream: SocketAddr,
    open: watch::Sender<bool>,
    tasks: Arc<Mutex<Vec<JoinHandle<()>>>>,
    traffic: Arc<Traffic>,
}

/// What went through a proxy.
#[derive(Debug, Default)]
struct Traffic {
    /// Connections forwarded to the upstream and still open.
    connections: AtomicUsize,
    /// Bytes forwarded, both directions, since the start.
    bytes: AtomicU64,
}

impl Proxy {
    /// Starts forwarding a fresh loopback port to `upstream`.
    pub async fn start(upstream: SocketAddr) -> Proxy {
        let listener = TcpListener::bind("127.0.0.1:0")
            .await
            .expect("cannot bind the proxy");
        let addr = listener.local_addr().unwrap();
        let (open, _) = watch::channel(true);
        let tasks: Arc<Mutex<Vec<JoinHandle<()>>>> = Arc::default();
        let traffic = Arc::new(Traffic::default());
        let accept = {
            let open = open.clone();
            let tasks = tasks.clone();
            let traffic = traffic.clone();
            tokio::spawn(async move {
                while let Ok((client, _)) = listener.accept().await {
                    let forwarding = forward(client, upstream, open.subscribe(), traffic.clone());
                    let connection = tokio::spawn(forwarding);
                    let mut tasks = tasks.lock().unwrap();
                    tasks.retain(|task| !task.is_finished());
                    tasks.push(connection);
                }
            })
        };
        tasks.lock().unwrap().push(accept);
        Proxy {
            addr,
            upstream,
            open,
            tasks,
            traffic,
        }
    }

    /// Where clients connect.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// Where it forwards to.
    pub fn upstream(&self) -> SocketAddr {
        self.upstream
    }

    /// Stops every byte in both directions, keeping the connections.
    pub fn cut(&self) {
        self.open.send_replace(false);
    }

    /// Lets bytes flow again.
    pub fn heal(&self) {
        self.open.send_replace(true);
    }

    /// Whether it is cut now.
    pub fn is_cut(&self) -> bool {
        !*self.open.borrow()
    }

    /// How many connections it forwards to the upstream now.
    pub fn connections(&self) -> usize {
        self.traffic.connections.load(Ordering::Relaxed)
    }

    /// How many bytes it has forwarded, both directions, since it started.
    pub fn bytes(&self) -> u64 {
        self.traffic.bytes.load(Ordering::Relaxed)
    }
}

impl Drop for Proxy {
    fn drop(&mut self) {
        for task in self.tasks.lock().unwrap().drain(..) {
            task.abort();
        }
    }
}

/// Counts a forwarded connection for as long as it lives (also when its
/// task is aborted).
struct Counted(Arc<Traffic>);

impl Counted {
    fn new(traffic: Arc<Traffic>) -> Counted {
        traffic.connections.fetch_add(1, Ordering::Relaxed);
        Counted(traffic)
    }
}

impl Drop for Counted {
    fn drop(&mut self) {
        self.0.connections.fetch_sub(1, Ordering::Relaxed);
    }
}

async fn forward(
    client: TcpStream,
    upstream: SocketAddr,
    mut open: watch::Receiver<bool>,
    traffic: Arc<Traffic>,
) {
    if open.wait_for(|open| *open).await.is_err() {
        return;
    }
    let Ok(server) = TcpStream::connect(upstream).await else {
        return;
    };
    let _counted = Counted::new(traffic.clone());
    let (client_read, client_write) = client.into_split();
    let (server_read, server_write) = server.into_split();
    // When either direction ends, the task ends and both sockets close.
    tokio::select! {
        _ = pump(client_read, server_write, open.clone(), &traffic) => {}
        _ = pump(server_read, client_write, open, &traffic) => {}
    }
}

async fn pump(
    mut from: OwnedReadHalf,
    mut to: OwnedWriteHalf,
    mut open: watch::Receiver<bool>,
    traffic: &Traffic,
) {
    let mut buffer = vec![0; 16 * 1024];
    loop {
        let read = match from.read(&mut buffer).await {
            Ok(0) | Err(_) => return,
            Ok(read) => read,
        };
        // Bytes read while cut are held, not dropped, until the heal.
        if open.wait_for(|open| *open).await.is_err() {
            return;
        }
        if to.write_all(&buffer[..read]).await.is_err() {
            return;
        }
        traffic.bytes.fetch_add(read as u64, Ordering::Relaxed);
    }
}
