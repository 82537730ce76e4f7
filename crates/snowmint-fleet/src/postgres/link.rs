//! The node's one connection to the database, made again with backoff
//! when it breaks.
//!
//! - A call that the engine stops waiting for (its time limit) drops the
//!   connection: the server may be stopped, or the network cut, and
//!   every later request on that connection would queue behind the
//!   unanswered one.
//! - After a failed attempt to connect, the next one waits: from 100 ms,
//!   doubling up to a quarter of the TTL. A call meanwhile fails at once
//!   with the last attempt's reason.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use tokio::sync::Mutex;
use tokio::task::AbortHandle;
use tokio_postgres::Client;

use super::password::password_for;
use super::schema::{Statements, prepare};
use super::{classify, tls};
use crate::coordinator::{BackendError, PostgresUrl, Secret, SslMode};

/// The first pause after a failed attempt to connect.
const FIRST_PAUSE: Duration = Duration::from_millis(100);

/// An open connection with its prepared statements.
pub(super) struct Conn {
    pub(super) client: Client,
    pub(super) statements: Statements,
    /// The task that drives the connection; ended with it.
    task: AbortHandle,
    /// Set when a call on it was abandoned or broke: the next call
    /// connects anew.
    broken: AtomicBool,
}

impl Drop for Conn {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// The connection, or when the next attempt may be made and why the last
/// one failed.
#[derive(Default)]
struct State {
    conn: Option<Arc<Conn>>,
    /// No attempt before this, after a failure.
    retry_at: Option<Instant>,
    /// Why the last attempt failed.
    last_failure: Option<BackendError>,
    pause: Duration,
}

/// The node's connection.
pub(super) struct Link {
    url: PostgresUrl,
    /// The password given apart from the URL, if any.
    password: Option<Secret>,
    state: Mutex<State>,
}

impl Link {
    pub(super) fn new(url: PostgresUrl, password: Option<Secret>) -> Link {
        Link {
            url,
            password,
            state: Mutex::new(State::default()),
        }
    }

    pub(super) fn url(&self) -> &PostgresUrl {
        &self.url
    }

    /// The open connection, connecting first if there is none; an attempt
    /// may take half of `ttl`, a pause between attempts a quarter.
    pub(super) async fn conn(&self, ttl: Duration) -> Result<Arc<Conn>, BackendError> {
        let mut state = self.state.lock().await;
        if let Some(conn) = &state.conn {
            if !conn.client.is_closed() && !conn.broken.load(Ordering::Acquire) {
                return Ok(conn.clone());
            }
            state.conn = None;
        }
        if let (Some(at), Some(failure)) = (state.retry_at, &state.last_failure)
            && Instant::now() < at
        {
            return Err(again(failure));
        }
        let limit = ttl / 2;
        let attempt = tokio::time::timeout(limit, self.connect()).await;
        let result = attempt.unwrap_or_else(|_| {
            Err(BackendError::unreachable(format!(
                "no connection within {} ms",
                limit.as_millis()
            )))
        });
        match result {
            Ok(conn) => {
                let conn = Arc::new(conn);
                *state = State {
                    conn: Some(conn.clone()),
                    ..State::default()
                };
                Ok(conn)
            }
            Err(error) => {
                state.pause = (state.pause * 2).clamp(FIRST_PAUSE, (ttl / 4).max(FIRST_PAUSE));
                state.retry_at = Some(Instant::now() + state.pause);
                state.last_failure = Some(again(&error));
                Err(error)
            }
        }
    }

    /// Marks `conn` as not to be used again, so that the next call
    /// connects anew.
    pub(super) fn discard(&self, conn: &Conn) {
        // Release: pairs with the Acquire load in `conn`.
        conn.broken.store(true, Ordering::Release);
    }

    /// Tries each host in turn; the first that lets the role in wins.
    async fn connect(&self) -> Result<Conn, BackendError> {
        let (client, task) = open(&self.url, self.password.as_ref()).await?;
        match prepare(&client, self.url.schema()).await {
            Ok(statements) => Ok(Conn {
                client,
                statements,
                task,
                broken: AtomicBool::new(false),
            }),
            Err(error) => {
                task.abort();
                Err(error)
            }
        }
    }
}

/// A connection to the first host of `url` that lets its role in (TLS as
/// its `sslmode` says; `password`, else the URL's or the passfile's),
/// driven by a task of its own, which ends when the client is dropped.
pub(super) async fn open(
    url: &PostgresUrl,
    password: Option<&Secret>,
) -> Result<(Client, AbortHandle), BackendError> {
    let tls = tls::connector(url)?;
    let mut last = None;
    for (host, port) in url.hosts() {
        let mut config = tokio_postgres::Config::new();
        config
            .user(url.user())
            .dbname(url.dbname())
            .host(host)
            .port(*port)
            .application_name(url.application_name())
            .ssl_mode(match url.ssl_mode() {
                SslMode::Disable => tokio_postgres::config::SslMode::Disable,
                SslMode::Prefer => tokio_postgres::config::SslMode::Prefer,
                SslMode::Require | SslMode::VerifyCa | SslMode::VerifyFull => {
                    tokio_postgres::config::SslMode::Require
                }
            })
            // A peer that vanished without a word is noticed.
            .keepalives(true)
            .keepalives_idle(Duration::from_secs(10));
        let password =
            password_for(url, password, host, *port).map_err(BackendError::unavailable)?;
        if let Some(password) = password {
            config.password(password);
        }
        match config.connect(tls.clone()).await {
            Ok((client, connection)) => {
                let task = tokio::spawn(async move {
                    if let Err(error) = connection.await {
                        tracing::debug!(%error, "the connection to the coordinator ended");
                    }
                })
                .abort_handle();
                return Ok((client, task));
            }
            Err(error) => last = Some(classify(error)),
        }
    }
    Err(last.unwrap_or_else(|| BackendError::unreachable("the URL names no host")))
}

/// The same failure again, without the client's error (which stays in
/// the log of the attempt that met it).
fn again(failure: &BackendError) -> BackendError {
    let reason = failure.reason().to_owned();
    match failure {
        BackendError::Lost { .. } => BackendError::lost(reason),
        BackendError::Unreachable { .. } => BackendError::unreachable(reason),
        _ => BackendError::unavailable(reason),
    }
}
