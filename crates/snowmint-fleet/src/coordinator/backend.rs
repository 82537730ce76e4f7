//! The primitive operations a coordination service must offer.
//!
//! The claim engine ([`Coordinator`](crate::Coordinator)) decides everything:
//! which slot to try, when to renew, when to fence, how to raise the
//! high-water mark. A backend only turns each primitive into the service's
//! own calls, so etcd, ZooKeeper and PostgreSQL share every rule and differ
//! only in how a "session" is kept (an etcd lease, a ZooKeeper session, a
//! PostgreSQL row that names the session and expires on the database's
//! clock).

use std::future::Future;
use std::time::Duration;

/// The error a client library gave, kept for the log.
pub type Cause = Box<dyn std::error::Error + Send + Sync + 'static>;

/// Why a backend operation failed.
///
/// The message is a short phrase in plain words, written by the backend
/// ("connection refused", "lease 694d expired"); the claim engine puts it
/// into a sentence that names the coordinator. The client library's own
/// error, with every detail, is the [`source`](std::error::Error::source),
/// for the log: it is never part of the message, so that no printer of the
/// error chain repeats it.
///
/// # Examples
///
/// ```
/// use std::error::Error;
/// use snowmint_fleet::BackendError;
///
/// let refused = std::io::Error::from(std::io::ErrorKind::ConnectionRefused);
/// let err = BackendError::unreachable("connection refused").with_source(refused);
/// assert_eq!(err.to_string(), "connection refused");
/// assert!(err.source().is_some());
/// assert!(!err.is_lost());
/// ```
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum BackendError {
    /// The session is gone (lease expired or revoked, ZooKeeper session
    /// expired): everything it held is lost for good.
    #[error("{reason}")]
    Lost {
        /// What happened, in a few plain words.
        reason: String,
        /// The client library's error, if there was one.
        #[source]
        source: Option<Cause>,
    },
    /// No connection to the coordinator could be made or kept (refused,
    /// timed out, no server answered); the session may still be alive.
    #[error("{reason}")]
    Unreachable {
        /// What happened, in a few plain words.
        reason: String,
        /// The client library's error, if there was one.
        #[source]
        source: Option<Cause>,
    },
    /// The coordinator answered but refused or failed the request for now;
    /// the session may still be alive.
    #[error("{reason}")]
    Unavailable {
        /// What happened, in a few plain words.
        reason: String,
        /// The client library's error, if there was one.
        #[source]
        source: Option<Cause>,
    },
}

impl BackendError {
    /// The session is gone, for `reason`.
    pub fn lost(reason: impl Into<String>) -> BackendError {
        BackendError::Lost {
            reason: reason.into(),
            source: None,
        }
    }

    /// The coordinator cannot be reached, for `reason`.
    pub fn unreachable(reason: impl Into<String>) -> BackendError {
        BackendError::Unreachable {
            reason: reason.into(),
            source: None,
        }
    }

    /// The coordinator refused or failed the request, for `reason`.
    pub fn unavailable(reason: impl Into<String>) -> BackendError {
        BackendError::Unavailable {
            reason: reason.into(),
            source: None,
        }
    }

    /// The same error, with the client library's error behind it.
    pub fn with_source(mut self, cause: impl Into<Cause>) -> BackendError {
        let (BackendError::Lost { source, .. }
        | BackendError::Unreachable { source, .. }
        | BackendError::Unavailable { source, .. }) = &mut self;
        *source = Some(cause.into());
        self
    }

    /// Whether the session is gone for good.
    pub fn is_lost(&self) -> bool {
        matches!(self, BackendError::Lost { .. })
    }

    /// The plain-words phrase, as in the message.
    pub fn reason(&self) -> &str {
        let (BackendError::Lost { reason, .. }
        | BackendError::Unreachable { reason, .. }
        | BackendError::Unavailable { reason, .. }) = self;
        reason
    }
}

/// A session just opened.
#[derive(Debug)]
pub struct Opened<S> {
    /// The backend's handle.
    pub session: S,
    /// How long the session outlives the last word from this node, as
    /// granted by the service (it may round the requested TTL up).
    pub ttl: Duration,
    /// The lease or session id, for logs and `/v1/node`.
    pub id: String,
}

/// A value read with the version a compare-and-set must name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Versioned {
    /// The stored bytes.
    pub value: Vec<u8>,
    /// etcd's mod_revision, ZooKeeper's data version.
    pub version: i64,
}

/// What a guarded compare-and-set did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GuardedWrite {
    /// Written; the value now has this version.
    Written {
        /// The new version.
        version: i64,
    },
    /// The value changed since it was read, and the guard key is still
    /// held by this session (checked after the failed write): read it
    /// again.
    Conflict,
    /// The guard key is no longer held by this session (gone, or another
    /// session's): nothing was written.
    GuardLost,
}

/// The operations the claim engine needs from a coordination service.
///
/// Paths are absolute, `/`-separated; the engine builds them. Every call may
/// be cancelled (the engine wraps each in a timeout), so an implementation
/// must not leave a half-done exchange behind for the next call to read.
pub trait Backend: Send + Sync + 'static {
    /// A live lease or session, dropped when no longer needed.
    type Session: Send + Sync + 'static;

    /// The service's name: `etcd`, `zookeeper`, `postgres`.
    const KIND: &'static str;
    /// What the service calls a session: `lease`, `session`.
    const SESSION_NAME: &'static str;
    /// Whether [`write_guarded`](Backend::write_guarded) proves, in the
    /// same atomic step, that this session *owns* the guard key (etcd
    /// compares the key's lease), and not only that the key exists
    /// (ZooKeeper's multi-op can check no more). When it does not, a new
    /// holder writes the slot's mark back before it uses the slot, so that
    /// the old holder's next mark write conflicts instead of passing a
    /// guard that the new holder's key also satisfies.
    const GUARD_PROVES_OWNER: bool;

    /// The coordinator's URL, for messages.
    fn url(&self) -> String;

    /// Opens a session that lives `ttl` past the last keep-alive, and makes
    /// sure the directories `dirs` exist (where the service has them).
    fn open_session(
        &self,
        ttl: Duration,
        dirs: &[String],
    ) -> impl Future<Output = Result<Opened<Self::Session>, BackendError>> + Send;

    /// The names of the entries directly under `dir`.
    fn list(
        &self,
        session: &Self::Session,
        dir: &str,
    ) -> impl Future<Output = Result<Vec<String>, BackendError>> + Send;

    /// Creates every key of `paths` with `value`, tied to the session
    /// (deleted when the session ends), in one atomic step and only if none
    /// of them exists: all are created or none. `Ok(false)`: one exists.
    /// (A node that holds several slots claims their keys together; one
    /// slot is a single key.)
    fn create_if_absent(
        &self,
        session: &Self::Session,
        paths: &[String],
        value: &[u8],
    ) -> impl Future<Output = Result<bool, BackendError>> + Send;

    /// Creates `path` with `value`, not tied to any session (it outlives
    /// them all), only if `path` does not exist. `Ok(None)`: created;
    /// `Ok(Some(value))`: it exists and holds `value`.
    fn create_record(
        &self,
        session: &Self::Session,
        path: &str,
        value: &[u8],
    ) -> impl Future<Output = Result<Option<Vec<u8>>, BackendError>> + Send;

    /// Tells the service the session is alive and returns the TTL now in
    /// force, as the service answered it: the engine counts that TTL from
    /// the moment it made the call. Also checks that this session still
    /// holds every key of `held` (`Lost` if one is not; empty while no
    /// claim is held). The answer must come
    /// from the service's current state (a server cut off from the rest
    /// must not confirm a session that the others have expired).
    fn keep_alive(
        &self,
        session: &Self::Session,
        held: &[String],
    ) -> impl Future<Output = Result<Duration, BackendError>> + Send;

    /// Reads `path` (not tied to any session), seeing every write that
    /// completed before the call.
    fn read(
        &self,
        session: &Self::Session,
        path: &str,
    ) -> impl Future<Output = Result<Option<Versioned>, BackendError>> + Send;

    /// Writes `value` to `path` (not tied to the session, so it outlives
    /// it) in one atomic step, only if `path` is still at `expected`
    /// (`None`: absent) and this session still holds the key `guard`.
    fn write_guarded(
        &self,
        session: &Self::Session,
        guard: &str,
        path: &str,
        value: &[u8],
        expected: Option<i64>,
    ) -> impl Future<Output = Result<GuardedWrite, BackendError>> + Send;

    /// The coordinator's own clock, Unix ms, as it reads it while serving
    /// this call: PostgreSQL's `clock_timestamp()`, or the modification
    /// time a ZooKeeper leader stamps on a write of `path` (created if
    /// absent, not tied to the session). `None` for a service that keeps
    /// no clock a client can read (etcd). The engine times the call and
    /// counts the answer as read halfway through it.
    fn clock(
        &self,
        session: &Self::Session,
        path: &str,
    ) -> impl Future<Output = Result<Option<i64>, BackendError>> + Send;

    /// Ends the session so that what it holds frees at once; `held` are
    /// the keys it holds (none, one, or a node's several slots).
    fn release(
        &self,
        session: &Self::Session,
        held: &[String],
    ) -> impl Future<Output = Result<(), BackendError>> + Send;
}
