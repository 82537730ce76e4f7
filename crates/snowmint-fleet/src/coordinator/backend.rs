//! The primitive operations a coordination service must offer.
//!
//! The claim engine ([`Coordinator`](crate::Coordinator)) decides everything:
//! which slot to try, when to renew, when to fence, how to raise the
//! high-water mark. A backend only turns each primitive into the service's
//! own calls, so etcd and ZooKeeper share every rule and differ only in how
//! a "session" is kept (a lease, a ZooKeeper session).

use std::future::Future;
use std::time::Duration;

/// Why a backend operation failed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BackendError {
    /// The session is gone (lease expired or revoked, ZooKeeper session
    /// expired): everything it held is lost for good.
    Lost(String),
    /// The coordinator did not answer or refused for now; the session may
    /// still be alive.
    Unavailable(String),
}

impl std::fmt::Display for BackendError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            BackendError::Lost(message) => write!(f, "session lost: {message}"),
            BackendError::Unavailable(message) => f.write_str(message),
        }
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
    /// The value changed since it was read: read it again.
    Conflict,
    /// The guard key is no longer held by this session: nothing was written.
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

    /// The service's name: `etcd`, `zookeeper`.
    const KIND: &'static str;
    /// What the service calls a session: `lease`, `session`.
    const SESSION_NAME: &'static str;

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

    /// Creates `path` with `value`, tied to the session (deleted when the
    /// session ends), only if `path` does not exist. `Ok(false)`: it exists.
    fn create_if_absent(
        &self,
        session: &Self::Session,
        path: &str,
        value: &[u8],
    ) -> impl Future<Output = Result<bool, BackendError>> + Send;

    /// Tells the service the session is alive and returns the TTL now in
    /// force, as the service answered it: the engine counts that TTL from
    /// the moment it made the call. With `held`, also checks that this
    /// session still holds that key (`Lost` if not).
    fn keep_alive(
        &self,
        session: &Self::Session,
        held: Option<&str>,
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

    /// Ends the session so that what it holds frees at once; `held` is the
    /// key it holds, if any.
    fn release(
        &self,
        session: &Self::Session,
        held: Option<&str>,
    ) -> impl Future<Output = Result<(), BackendError>> + Send;
}
