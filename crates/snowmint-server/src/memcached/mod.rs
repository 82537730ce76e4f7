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
//! What a connection may cost is bounded: a request line is at most
//! [`MAX_LINE`] bytes (a longer one is answered
//! `CLIENT_ERROR line too long` and the connection closed, as memcached
//! closes it), a connection that sends no whole request for the idle
//! timeout is closed, and answers to pipelined requests are written
//! together once no whole request is left to read.
//!
//! This module accepts connections, serves each ([`serve_stream`]) and
//! shuts them down with the node; reading a request line and writing the
//! answers is the protocol's own part.

use std::future::Future;
use std::io;
use std::time::Duration;

use tokio::io::{
    AsyncBufRead, AsyncBufReadExt, AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt, BufReader,
};
use tokio::net::TcpListener;
use tokio::sync::watch;
use tokio::task::JoinSet;

use crate::state::AppState;
use protocol::Request;

pub(crate) mod protocol;

pub use protocol::MAX_LINE;

/// Serves memcached's text protocol on `listener` until `shutdown`
/// resolves; then stops accepting, lets each connection finish the request
/// it is answering, and returns once every connection has closed (or after
/// the request timeout, closing what is left).
pub(crate) async fn serve(
    listener: TcpListener,
    state: AppState,
    idle_timeout: Duration,
    shutdown: impl Future<Output = ()>,
) {
    let (stop, stopped) = watch::channel(false);
    let mut connections = JoinSet::new();
    let mut shutdown = std::pin::pin!(shutdown);
    // Whether accepting has been failing, so that an episode is logged once.
    let mut failing = false;
    loop {
        // Finished connections are reaped as new ones come, so that the
        // set holds only live ones.
        while connections.try_join_next().is_some() {}
        let stream = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok((stream, _)) => stream,
                Err(error) => {
                    failing = pause_after(&error, failing).await;
                    continue;
                }
            },
            () = &mut shutdown => break,
        };
        if std::mem::take(&mut failing) {
            tracing::info!("memcached: accepting connections again");
        }
        let connection = Connection {
            state: state.clone(),
            idle_timeout,
            stopped: stopped.clone(),
        };
        connections.spawn(async move {
            // Answers are small and written once per batch of requests.
            let served = match stream.set_nodelay(true) {
                Ok(()) => connection.serve(stream).await,
                Err(error) => Err(error),
            };
            if let Err(error) = served {
                // The client hung up or the network failed: there is
                // nobody to tell.
                tracing::trace!(%error, "memcached connection ended");
            }
        });
    }
    drop(listener);
    let _ = stop.send(true);
    let grace = state.request_timeout();
    if tokio::time::timeout(grace, async {
        while connections.join_next().await.is_some() {}
    })
    .await
    .is_err()
    {
        tracing::warn!("memcached connections still open after the request timeout; closing them");
        connections.abort_all();
    }
}

/// What one connection needs.
struct Connection {
    state: AppState,
    idle_timeout: Duration,
    /// Turns true at shutdown.
    stopped: watch::Receiver<bool>,
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
/// the client quits or hangs up, or sends no whole request for
/// `idle_timeout`; every ID from `state`'s issuer, as on a listener of
/// `--memcached-listen`. For connections accepted elsewhere, and for
/// fuzzing the protocol without sockets.
pub async fn serve_stream(
    stream: impl AsyncRead + AsyncWrite + Send,
    state: AppState,
    idle_timeout: Duration,
) -> io::Result<()> {
    // Never stopped: the caller owns the connection's lifetime.
    let (_stop, stopped) = watch::channel(false);
    Connection {
        state,
        idle_timeout,
        stopped,
    }
    .serve(stream)
    .await
}

impl Connection {
    async fn serve(mut self, stream: impl AsyncRead + AsyncWrite + Send) -> io::Result<()> {
        let (read, write) = tokio::io::split(stream);
        let mut write = std::pin::pin!(write);
        let mut reader = BufReader::with_capacity(protocol::MAX_LINE, read);
        let mut line = Vec::with_capacity(256);
        let mut out = Vec::with_capacity(4096);
        let mut ids = Vec::new();
        loop {
            // Pipelined requests are answered in one write; the answers go
            // out as soon as no whole request is waiting to be read.
            if !out.is_empty() && !reader.buffer().contains(&b'\n') {
                write.write_all(&out).await?;
                out.clear();
            }
            line.clear();
            let read = tokio::select! {
                biased;
                _ = self.stopped.wait_for(|stop| *stop) => break,
                read = tokio::time::timeout(self.idle_timeout, read_line(&mut reader, &mut line)) => read,
            };
            match read {
                // Silent for the idle timeout: closed without a word, as
                // memcached closes idle connections.
                Err(_) => break,
                Ok(result) => match result? {
                    Line::Complete => {}
                    Line::Closed => break,
                    Line::TooLong => {
                        protocol::push_client_error(&mut out, "line too long");
                        break;
                    }
                },
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
                        match tokio::time::timeout(self.idle_timeout, discard(&mut reader, block))
                            .await
                        {
                            Ok(Ok(true)) => {}
                            Ok(Ok(false)) | Err(_) => break,
                            Ok(Err(error)) => return Err(error),
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
        write.shutdown().await
    }

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

/// After a failed accept: nothing for errors of the one connection (it is
/// gone), a pause for errors of the process, such as running out of file
/// descriptors, which only closing connections can cure. Returns whether
/// accepting is failing; logs when it starts to.
async fn pause_after(error: &io::Error, failing: bool) -> bool {
    use io::ErrorKind::{ConnectionAborted, ConnectionRefused, ConnectionReset};
    if matches!(
        error.kind(),
        ConnectionAborted | ConnectionRefused | ConnectionReset
    ) {
        return failing;
    }
    if !failing {
        tracing::warn!(%error, "memcached: cannot accept connections; trying again every 100 ms");
    }
    tokio::time::sleep(Duration::from_millis(100)).await;
    true
}
