//! A TCP proxy the test controls, to partition one node from the
//! coordinator.
//!
//! A cut behaves like a network partition, not like a closed socket:
//! connections stay open, bytes stop flowing (the kernel buffers what the
//! sender writes), new connections are accepted but not forwarded. A heal
//! lets everything flow again, like TCP retransmitting after the network
//! comes back.

use std::net::SocketAddr;
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
    open: watch::Sender<bool>,
    tasks: Arc<Mutex<Vec<JoinHandle<()>>>>,
}

impl Proxy {
    /// Starts forwarding a fresh loopback port to `upstream`.
    pub async fn start(upstream: SocketAddr) -> Proxy {
        let listener = TcpListener::bind("127.0.0.1:0")
            .await
            .expect("cannot bind the proxy");
        let addr = listener.local_addr().unwrap();
        let (open, _) = watch::channel(true);
        let tasks = Arc::new(Mutex::new(Vec::new()));
        let accept = {
            let open = open.clone();
            let tasks = tasks.clone();
            tokio::spawn(async move {
                while let Ok((client, _)) = listener.accept().await {
                    let connection = tokio::spawn(forward(client, upstream, open.subscribe()));
                    tasks.lock().unwrap().push(connection);
                }
            })
        };
        tasks.lock().unwrap().push(accept);
        Proxy { addr, open, tasks }
    }

    /// Where clients connect.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// Stops every byte in both directions, keeping the connections.
    pub fn cut(&self) {
        self.open.send_replace(false);
    }

    /// Lets bytes flow again.
    pub fn heal(&self) {
        self.open.send_replace(true);
    }
}

impl Drop for Proxy {
    fn drop(&mut self) {
        for task in self.tasks.lock().unwrap().drain(..) {
            task.abort();
        }
    }
}

async fn forward(client: TcpStream, upstream: SocketAddr, mut open: watch::Receiver<bool>) {
    if open.wait_for(|open| *open).await.is_err() {
        return;
    }
    let Ok(server) = TcpStream::connect(upstream).await else {
        return;
    };
    let (client_read, client_write) = client.into_split();
    let (server_read, server_write) = server.into_split();
    // When either direction ends, the task ends and both sockets close.
    tokio::select! {
        _ = pump(client_read, server_write, open.clone()) => {}
        _ = pump(server_read, client_write, open) => {}
    }
}

async fn pump(mut from: OwnedReadHalf, mut to: OwnedWriteHalf, mut open: watch::Receiver<bool>) {
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
    }
}
