//! Hostile clients for the resource tests: they do to a real `snowmint
//! serve` what an attacker on the same network would, so that a test can
//! check the node stays up, bounded and fair.
//!
//! - [`Horde`]: many connections of one kind, each reopened by a thread of
//!   its own as soon as the node closes it, until the horde is dropped.
//! - [`Attack`]: what each connection does: send nothing
//!   ([`Attack::Silent`]) or half a request ([`Attack::Stall`]), pipeline HTTP requests and never read the
//!   answers ([`Attack::Pipeline`]), send any other protocol's requests
//!   the same way ([`Attack::Repeat`]), or open many gRPC `StreamIds` calls
//!   on one HTTP/2 connection with a huge flow-control window and never
//!   read them ([`Attack::UnreadStreams`]).
//! - [`rss_kib`], [`limit_descriptors`], [`open_descriptors`]: what the
//!   process under attack costs, and its descriptor limit (`prlimit`).
//!
//! The HTTP/2 frames are written by hand (a handful of frame types, HPACK
//! literals without Huffman coding), so that the attacker holds nothing
//! itself: it never reads its socket, which is the point.

use std::io::{ErrorKind, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::thread::JoinHandle;
use std::time::Duration;

/// What each connection of a [`Horde`] does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Attack {
    /// Connects and sends nothing.
    Silent,
    /// Sends these bytes once, then nothing: a request left unfinished
    /// ([`HALF_CLIENT_HELLO`], say).
    Stall(&'static [u8]),
    /// Sends `GET` requests for this target back to back, as fast as the
    /// socket takes them, and never reads an answer.
    Pipeline(&'static str),
    /// Sends these bytes (requests of any protocol) over and over, as fast as the socket takes them, and
    /// never reads an answer.
    Repeat(&'static str),
    /// Opens `streams` gRPC `StreamIds` calls (batch 4096, until
    /// cancelled) on one HTTP/2 connection, announcing the largest window
    /// HTTP/2 allows, and never reads the socket.
    UnreadStreams {
        /// Calls opened on the connection.
        streams: u32,
    },
}

/// Many connections of one [`Attack`], kept open: each one the node
/// closes is opened again (after a short pause), until the horde is
/// dropped or [`Horde::stop`]ped.
pub struct Horde {
    stop: Arc<AtomicBool>,
    reopened: Arc<AtomicU64>,
    threads: Vec<JoinHandle<()>>,
}

impl Horde {
    /// Starts `connections` connections to `address`, each doing `attack`.
    pub fn start(address: SocketAddr, attack: Attack, connections: usize) -> Horde {
        let stop = Arc::new(AtomicBool::new(false));
        let reopened = Arc::new(AtomicU64::new(0));
        let threads = (0..connections)
            .map(|_| {
                let (stop, reopened) = (Arc::clone(&stop), Arc::clone(&reopened));
                std::thread::Builder::new()
                    .stack_size(64 * 1024)
                    .spawn(move || {
                        let mut first = true;
                        while !stop.load(Ordering::Relaxed) {
                            if !first {
                                reopened.fetch_add(1, Ordering::Relaxed);
                            }
                            first = false;
                            run(address, attack, &stop);
                            // Refused, or closed by the node: again, soon.
                            std::thread::sleep(Duration::from_millis(20));
                        }
                    })
                    .expect("starting an attacker thread")
            })
            .collect();
        Horde {
            stop,
            reopened,
            threads,
        }
    }

    /// How many times a connection had to be opened again because the
    /// node closed it (or refused it).
    pub fn reopened(&self) -> u64 {
        self.reopened.load(Ordering::Relaxed)
    }

    /// Stops every connection; returns [`Horde::reopened`].
    pub fn stop(mut self) -> u64 {
        self.halt();
        self.reopened()
    }

    fn halt(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        for thread in self.threads.drain(..) {
            let _ = thread.join();
        }
    }
}

impl Drop for Horde {
    fn drop(&mut self) {
        self.halt();
    }
}

/// The first bytes of a TLS ClientHello: the record header (handshake,
/// TLS 1.0 on the wire, 512 bytes to come), the handshake header
/// (ClientHello, 508 bytes) and its version (TLS 1.2). A server waits for
/// the rest.
pub const HALF_CLIENT_HELLO: &[u8] = &[
    0x16, 0x03, 0x01, 0x02, 0x00, 0x01, 0x00, 0x01, 0xfc, 0x03, 0x03,
];

/// One connection of an attack, until the node closes it or `stop`.
fn run(address: SocketAddr, attack: Attack, stop: &AtomicBool) {
    let Ok(mut stream) = TcpStream::connect_timeout(&address, Duration::from_secs(5)) else {
        return;
    };
    if let Attack::Stall(bytes) = attack
        && stream.write_all(bytes).is_err()
    {
        return;
    }
    if let Attack::UnreadStreams { streams } = attack
        && stream.write_all(&unread_streams(streams)).is_err()
    {
        return;
    }
    if stream.set_nonblocking(true).is_err() {
        return;
    }
    let requests = match attack {
        Attack::Pipeline(target) => {
            format!("GET {target} HTTP/1.1\r\nHost: attacker\r\n\r\n").repeat(64)
        }
        Attack::Repeat(bytes) => bytes.to_owned(),
        _ => String::new(),
    };
    let requests = requests.as_bytes();
    // A PRIORITY frame: HTTP/2 allows it on any stream at any time, and
    // nothing answers it; writing it only finds out whether the node has
    // closed the connection (the second write after a close fails).
    let mut probe = Vec::new();
    frame(&mut probe, 0x2, 0, 1, &[0, 0, 0, 0, 15]);
    let mut sink = [0u8; 16 * 1024];
    let mut sent = 0;
    while !stop.load(Ordering::Relaxed) {
        let gone = match attack {
            // Silent (or stalled): never writes (again); reads (and
            // drops) what the node sends, so that its end of the stream
            // is seen.
            Attack::Silent | Attack::Stall(_) => match stream.read(&mut sink) {
                Ok(0) => true,
                Ok(_) => false,
                Err(e) => e.kind() != ErrorKind::WouldBlock,
            },
            // Requests back to back, split wherever the socket splits
            // them, never a byte of an answer read.
            Attack::Pipeline(_) | Attack::Repeat(_) => loop {
                match stream.write(&requests[sent..]) {
                    Ok(n) => sent = (sent + n) % requests.len(),
                    Err(e) if e.kind() == ErrorKind::WouldBlock => break false,
                    Err(_) => break true,
                }
            },
            Attack::UnreadStreams { .. } => match stream.write(&probe) {
                Ok(_) => false,
                Err(e) => e.kind() != ErrorKind::WouldBlock,
            },
        };
        if gone {
            return;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// The bytes of an HTTP/2 connection that opens `streams` `StreamIds`
/// calls and lets the node send as much as HTTP/2 allows: the connection
/// preface with the largest window, then HEADERS and DATA per call.
pub fn unread_streams(streams: u32) -> Vec<u8> {
    let mut out = h2_preface();
    // StreamIdsRequest { batch: 4096 }.
    for n in 0..streams {
        out.extend(grpc_call(
            2 * n + 1,
            "/snowmint.v1.IdService/StreamIds",
            &[0x08, 0x80, 0x20],
        ));
    }
    out
}

/// The start of an HTTP/2 connection that lets the server send as much as
/// HTTP/2 allows: the preface, SETTINGS (no push, the largest initial
/// window), and a WINDOW_UPDATE that opens the connection's window as far.
pub fn h2_preface() -> Vec<u8> {
    const MAX_WINDOW: u32 = (1 << 31) - 1;
    let mut out = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".to_vec();
    let mut settings = Vec::new();
    settings.extend_from_slice(&2u16.to_be_bytes());
    settings.extend_from_slice(&0u32.to_be_bytes());
    settings.extend_from_slice(&4u16.to_be_bytes());
    settings.extend_from_slice(&MAX_WINDOW.to_be_bytes());
    frame(&mut out, 0x4, 0, 0, &settings);
    frame(&mut out, 0x8, 0, 0, &(MAX_WINDOW - 65_535).to_be_bytes());
    out
}

/// The frames of one gRPC call on `stream` (odd): HEADERS, then DATA
/// with `message` (an encoded protobuf message) in a gRPC message frame,
/// ending the request.
pub fn grpc_call(stream: u32, path: &str, message: &[u8]) -> Vec<u8> {
    let mut data = vec![0u8];
    data.extend_from_slice(&(message.len() as u32).to_be_bytes());
    data.extend_from_slice(message);
    let mut out = Vec::new();
    // END_HEADERS on HEADERS, END_STREAM on DATA.
    frame(&mut out, 0x1, 0x4, stream, &grpc_headers(path));
    frame(&mut out, 0x0, 0x1, stream, &data);
    out
}

/// The HPACK block of a gRPC call to `path`: literal fields without
/// indexing, no Huffman coding.
pub fn grpc_headers(path: &str) -> Vec<u8> {
    let mut block = Vec::new();
    for (name, value) in [
        (":method", "POST"),
        (":scheme", "http"),
        (":path", path),
        (":authority", "attacker"),
        ("content-type", "application/grpc"),
        ("te", "trailers"),
    ] {
        block.push(0x00);
        hpack_string(&mut block, name);
        hpack_string(&mut block, value);
    }
    block
}

fn hpack_string(out: &mut Vec<u8>, text: &str) {
    assert!(text.len() < 127, "a short HPACK string");
    out.push(text.len() as u8);
    out.extend_from_slice(text.as_bytes());
}

/// Appends one HTTP/2 frame.
pub fn frame(out: &mut Vec<u8>, kind: u8, flags: u8, stream: u32, payload: &[u8]) {
    let length = payload.len() as u32;
    out.extend_from_slice(&length.to_be_bytes()[1..]);
    out.push(kind);
    out.push(flags);
    out.extend_from_slice(&stream.to_be_bytes());
    out.extend_from_slice(payload);
}

/// The resident set size of process `pid`, in KiB (`VmRSS` of
/// `/proc/PID/status`).
pub fn rss_kib(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status"))
        .unwrap_or_else(|e| panic!("cannot read /proc/{pid}/status: {e}"));
    status
        .lines()
        .find_map(|line| line.strip_prefix("VmRSS:"))
        .and_then(|rest| rest.trim().strip_suffix("kB"))
        .and_then(|kib| kib.trim().parse().ok())
        .unwrap_or_else(|| panic!("no VmRSS in /proc/{pid}/status"))
}

/// How many descriptors process `pid` has open.
pub fn open_descriptors(pid: u32) -> usize {
    std::fs::read_dir(format!("/proc/{pid}/fd"))
        .map(|entries| entries.count())
        .unwrap_or(0)
}

/// Lowers (or raises) the descriptor limit of the running process `pid`
/// to `limit`, soft and hard, with `prlimit` (util-linux).
pub fn limit_descriptors(pid: u32, limit: u64) {
    let status = std::process::Command::new("prlimit")
        .arg(format!("--nofile={limit}:{limit}"))
        .arg(format!("--pid={pid}"))
        .status()
        .expect("prlimit is missing: apt-get install util-linux");
    assert!(
        status.success(),
        "prlimit --nofile={limit} --pid={pid} failed"
    );
}

/// Sends `GET target` on a new connection and reads the answer's status
/// and body, giving up after `limit` (connecting included): `None` when
/// there was no answer in time, the connection was refused or closed.
pub fn try_get(address: SocketAddr, target: &str, limit: Duration) -> Option<(u16, String)> {
    let deadline = std::time::Instant::now() + limit;
    let mut stream = TcpStream::connect_timeout(&address, limit).ok()?;
    stream.set_nodelay(true).ok()?;
    write!(
        stream,
        "GET {target} HTTP/1.1\r\nHost: test\r\nConnection: close\r\n\r\n"
    )
    .ok()?;
    let mut received = Vec::new();
    let mut buffer = [0u8; 4096];
    loop {
        let left = deadline.saturating_duration_since(std::time::Instant::now());
        if left.is_zero() {
            return None;
        }
        stream.set_read_timeout(Some(left)).ok()?;
        match stream.read(&mut buffer) {
            Ok(0) => break,
            Ok(n) => received.extend_from_slice(&buffer[..n]),
            Err(_) => return None,
        }
    }
    let text = String::from_utf8_lossy(&received);
    let (head, body) = text.split_once("\r\n\r\n")?;
    let status = head.split(' ').nth(1)?.parse().ok()?;
    Some((status, body.to_owned()))
}
