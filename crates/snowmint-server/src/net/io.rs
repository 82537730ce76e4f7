//! A socket with a write deadline: a write that cannot go out for the
//! request timeout fails, which ends the connection.
//!
//! A client that sends requests and never reads the answers fills the
//! socket's buffers; from then on every write waits. Without a deadline
//! the connection (its descriptor, its buffers, its requests' state) is
//! held for as long as the client likes. The deadline runs only while a
//! write is blocked and restarts with any progress, so a slow but reading
//! client is not cut off.

use std::io;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::task::{Context, Poll, ready};
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::time::{Instant, Sleep};

/// `inner` with a deadline on each blocked write.
#[derive(Debug)]
pub(crate) struct Deadlined<T> {
    inner: T,
    limit: Duration,
    /// Armed while a write waits.
    blocked: Option<Pin<Box<Sleep>>>,
    /// Set when the deadline ended the connection, for the metrics.
    expired: Arc<AtomicBool>,
}

impl<T> Deadlined<T> {
    /// `inner`, whose writes may wait at most `limit`; `expired` is set
    /// when one waited longer.
    pub(crate) fn new(inner: T, limit: Duration, expired: Arc<AtomicBool>) -> Deadlined<T> {
        Deadlined {
            inner,
            limit,
            blocked: None,
            expired,
        }
    }

    /// After a write: progress clears the deadline; waiting arms it (or
    /// fails, once it has passed).
    fn check<R>(&mut self, cx: &mut Context<'_>, poll: Poll<io::Result<R>>) -> Poll<io::Result<R>> {
        if poll.is_ready() {
            self.blocked = None;
            return poll;
        }
        let limit = self.limit;
        let sleep = self
            .blocked
            .get_or_insert_with(|| Box::pin(tokio::time::sleep_until(Instant::now() + limit)));
        ready!(sleep.as_mut().poll(cx));
        self.expired.store(true, Ordering::Relaxed);
        Poll::Ready(Err(io::Error::new(
            io::ErrorKind::TimedOut,
            format!(
                "the client left a response unread for {} ms",
                limit.as_millis()
            ),
        )))
    }
}

impl<T: AsyncRead + Unpin> AsyncRead for Deadlined<T> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_read(cx, buf)
    }
}

impl<T: AsyncWrite + Unpin> AsyncWrite for Deadlined<T> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        let poll = Pin::new(&mut self.inner).poll_write(cx, buf);
        self.check(cx, poll)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        let poll = Pin::new(&mut self.inner).poll_write_vectored(cx, bufs);
        self.check(cx, poll)
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let poll = Pin::new(&mut self.inner).poll_flush(cx);
        self.check(cx, poll)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let poll = Pin::new(&mut self.inner).poll_shutdown(cx);
        self.check(cx, poll)
    }
}
