//! IDs over memcached's text protocol (`--memcached-listen`), for
//! applications that already speak it to an ID service (katsubushi's
//! protocol): `get <key>` answers a new ID as the key's value, whatever
//! the key; `gets k1 k2 ...` one ID per key, in increasing order.
//!
//! Every ID comes from the node's [`Issuer`](snowmint_fleet::Issuer)
//! through the same [`AppState`] as HTTP and gRPC, so fencing, the
//! high-water mark and refusals are the ones of docs/ARCHITECTURE.md §3,
//! and the IDs count in the same metrics. A refusal is
//! `SERVER_ERROR <reason>`; the connection stays open, as memcached's does.
//!
//! It is a `ByteStream` under the node's one front end, as a listener
//! like any other (`crate::listener`): the connection cap and the
//! descriptor reserve, accept backpressure, the first request's deadline,
//! its own idle timeout (`--memcached-idle-timeout`: clients keep pooled
//! connections between bursts), the write deadline and the metrics are
//! the front end's. What is its own is bounded too: a request line is at
//! most [`MAX_LINE`] bytes (a longer one is answered
//! `CLIENT_ERROR line too long` and the connection closed, as memcached
//! closes it), and answers to pipelined requests are written together
//! once no whole request is left to read, at most one request line's
//! worth of `get`s (about 140 KiB) at a time.
//!
//! [`serve_stream`] serves one connection; reading a request line and
//! writing the answers is the protocol's own part.

use std::io;

use tokio::io::{
    AsyncBufRead, AsyncBufReadExt, AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt, BufReader,
};

use crate::net::{ByteStream, Session};
use crate::state::AppState;
use protocol::Request;

pub(crate) mod protocol;

pub use protocol::MAX_LINE;

/// memcached's text protocol over the node's issuer.
#[derive(Debug, Clone)]
pub(crate) struct Memcached {
    state: AppState,
}

impl Memcached {
    pub(crate) fn new(state: AppState) -> Memcached {
        Memcached { state }
    }
}

/// How reading a request line ended.
enum Line {
    /// A whole line is in the buffer, without its ending.
    Complete,
    /// The client closed its side (a partial line is dropped).
    Closed,
    /// The line passed [`MAX_LINE`].
    TooLong,
}

/// Serves memcached's text protocol on one connection, `stream`, until
/// the client quits or hangs up; every ID from `state`'s issuer, as on a
/// listener of `--memcached-listen` (where the front end adds the
/// deadlines). For fuzzing the protocol without sockets.
pub async fn serve_stream(
    stream: impl AsyncRead + AsyncWrite + Unpin + Send + 'static,
    state: AppState,
) -> io::Result<()> {
    Memcached::new(state)
        .serve(stream, Session::detached())
        .await
}

impl ByteStream for Memcached {
    async fn serve<IO>(self, stream: IO, session: Session) -> io::Result<()>
    where
        IO: AsyncRead + AsyncWrite + Unpin + Send + 'static,
    {
        let (read, mut write) = tokio::io::split(stream);
        let mut reader = BufReader::with_capacity(protocol::MAX_LINE, read);
        let mut line = Vec::with_capacity(256);
        let mut out = Vec::with_capacity(4096);
        let mut ids = Vec::new();
        // Held from the first request of a batch until its answers are
        // written: the connection is busy, not idle, meanwhile.
        let mut in_flight = None;
        loop {
            // Pipelined requests are answered in one write; the answers go
            // out as soon as no whole request is waiting to be read.
            if !out.is_empty() && !reader.buffer().contains(&b'\n') {
                write.write_all(&out).await?;
                out.clear();
            }
            if out.is_empty() {
                in_flight = None;
            }
            line.clear();
            let read = tokio::select! {
                biased;
                () = session.closing() => break,
                read = read_line(&mut reader, &mut line) => read?,
            };
            match read {
                Line::Complete => {}
                Line::Closed => break,
                Line::TooLong => {
                    protocol::push_client_error(&mut out, "line too long");
                    break;
                }
            }
            if in_flight.is_none() {
                in_flight = session.request();
            }
            match protocol::parse(&line) {
                Request::Get { keys, cas } => {
                    self.issue(&keys, cas, &mut ids, &mut out).await;
                }
                Request::Version => protocol::push_version(&mut out),
                Request::Quit => break,
                Request::Unserved {
                    command,
                    data,
                    reply,
                } => {
                    if let Some(bytes) = data {
                        // The block and its line ending; a client that
                        // stops sending it is idle like any other.
                        let block = bytes.saturating_add(2);
                        let discarded = tokio::select! {
                            biased;
                            () = session.closing() => break,
                            discarded = discard(&mut reader, block) => discarded?,
                        };
                        if !discarded {
                            break;
                        }
                    }
                    if reply {
                        protocol::push_client_error(&mut out, &protocol::unserved_message(command));
                    }
                }
                Request::Malformed(message) => protocol::push_client_error(&mut out, message),
                Request::Unknown => protocol::push_error(&mut out),
            }
        }
        if !out.is_empty() {
            write.write_all(&out).await?;
        }
        drop(in_flight);
        write.shutdown().await
    }
}

impl Memcached {
    /// Answers a `get`/`gets`: one new ID per key, all or none.
    async fn issue(
        &self,
        keys: &[&[u8]],
        cas: bool,
        ids: &mut Vec<snowmint::SnowflakeId>,
        out: &mut Vec<u8>,
    ) {
        let state = &self.state;
        ids.clear();
        let issued = tokio::time::timeout(state.request_timeout(), async {
            if keys.len() == 1 {
                state.issuer().next_id().await.map(|id| ids.push(id))
            } else {
                state.issuer().next_ids(keys.len(), ids).await
            }
        })
        .await;
        match issued {
            Ok(Ok(())) => {
                state.metrics().issued(keys.len() as u64);
                if keys.len() > 1 {
                    state.metrics().batch(keys.len());
                }
                for (key, id) in keys.iter().zip(ids.iter()) {
                    protocol::push_value(out, key, id.as_u64(), cas);
                }
                protocol::push_end(out);
            }
            Ok(Err(refusal)) => {
                tracing::debug!(code = refusal.code(), %refusal, "refused (memcached)");
                state.metrics().refused(&refusal);
                protocol::push_server_error(out, &refusal.to_string());
            }
            Err(_) => protocol::push_server_error(
                out,
                &format!(
                    "the request took longer than the {} ms this service allows",
                    state.request_timeout().as_millis()
                ),
            ),
        }
    }
}

/// Reads one line into `line` (without `\n` and a `\r` before it), never
/// holding more than [`MAX_LINE`] bytes of it.
async fn read_line(
    reader: &mut (impl AsyncBufRead + Unpin),
    line: &mut Vec<u8>,
) -> io::Result<Line> {
    loop {
        let available = reader.fill_buf().await?;
        if available.is_empty() {
            return Ok(Line::Closed);
        }
        let (taken, complete) = match available.iter().position(|&b| b == b'\n') {
            Some(at) => (at, true),
            None => (available.len(), false),
        };
        if line.len() + taken > protocol::MAX_LINE {
            return Ok(Line::TooLong);
        }
        line.extend_from_slice(&available[..taken]);
        reader.consume(taken + usize::from(complete));
        if complete {
            if line.last() == Some(&b'\r') {
                line.pop();
            }
            return Ok(Line::Complete);
        }
    }
}

/// Reads and drops `count` bytes; `false` if the client closed first.
async fn discard(reader: &mut (impl AsyncBufRead + Unpin), count: u64) -> io::Result<bool> {
    let copied = tokio::io::copy(&mut reader.take(count), &mut tokio::io::sink()).await?;
    Ok(copied == count)
}
