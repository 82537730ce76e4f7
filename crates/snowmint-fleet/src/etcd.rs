//! The etcd backend: a session is a lease, a claimed slot a key attached
//! to it.
//!
//! - Claim: a transaction that puts the key, attached to the lease, only if
//!   its create_revision is 0 (absent).
//! - Keep-alive: one message on the lease keep-alive stream (an answer with
//!   TTL 0 means the lease is gone), then a read of the slot key to check
//!   that it is still attached to the lease.
//! - High-water mark: a transaction comparing the mark's mod_revision and
//!   that the slot key is still attached to this lease; on failure it
//!   reads the slot key, so that the answer says whether the key is still
//!   ours (a conflict) or not (the guard is lost). The lease compare proves
//!   ownership, so a new holder need not write the mark back.
//! - Records (the fleet's layout): a transaction that puts the key only if
//!   absent, and otherwise reads it, in one round trip.
//! - Release: revoking the lease deletes the key with it.
//!
//! With TLS ([`CoordinatorTls`], read anew for each session so that
//! rotated files are picked up) the endpoints are spoken to over
//! `https://`; with [`Credentials`] each member's client logs in before its
//! first request (etcd's simple and JWT tokens are good on every member,
//! and are renewed when they expire). A refusal names what the user lacks
//! ([`Need`]): the role a node needs is readwrite on the fleet's prefix,
//! `/snowmint/<fleet>/`.
//!
//! A session talks to one member at a time ([`Members`]): a request that
//! cannot reach its member, or that the engine stops waiting for, moves the
//! session on to the next one. A lease belongs to the cluster, not to the
//! member it was granted through, so the claim survives the move. (etcd's
//! client would balance requests over every endpoint instead, and keeps
//! sending some to a member that accepts connections but answers nothing,
//! such as a stopped process.) Every request also requires a leader, so
//! that a member cut off from its quorum refuses at once instead of
//! waiting.

use std::collections::hash_map::RandomState;
use std::future::Future;
use std::hash::{BuildHasher, Hasher};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use etcd_client::{
    Client, Compare, CompareOp, ConnectOptions, GetOptions, LeaseKeepAliveStream, LeaseKeeper,
    PutOptions, Txn, TxnOp, TxnOpResponse,
};
use tokio::sync::Mutex;

use crate::coordinator::{
    Backend, BackendError, CoordinatorTls, CoordinatorUrl, Credentials, GuardedWrite, Login,
    Opened, Versioned,
};
use crate::reason::{io_cause, tls_cause};

/// Claims slots through an etcd cluster (`etcd://HOST:PORT[,HOST:PORT...]`).
#[derive(Debug, Clone)]
pub struct EtcdBackend {
    endpoints: Vec<String>,
    /// The member in use, as a count whose remainder by the number of
    /// endpoints is the index, shared with the sessions: a new session
    /// starts on the member the last one had moved to.
    current: Arc<AtomicUsize>,
    /// Who the node is and how it checks the servers.
    context: Context,
}

/// What requests are made with, and failures explained with.
#[derive(Debug, Clone, Default)]
struct Context {
    /// TLS, when a CA is given.
    tls: Option<CoordinatorTls>,
    /// The etcd user to log in as.
    credentials: Option<Credentials>,
}

impl EtcdBackend {
    /// A backend for the etcd client endpoints `HOST:PORT`. It starts on a
    /// member drawn at random, so that a fleet spreads over the cluster.
    pub fn new(endpoints: Vec<String>) -> EtcdBackend {
        // std's hasher is seeded at random for each process.
        let start = RandomState::new().build_hasher().finish();
        EtcdBackend {
            endpoints,
            current: Arc::new(AtomicUsize::new(start as usize)),
            context: Context::default(),
        }
    }

    /// The same backend, speaking TLS to the endpoints (`https://`),
    /// checked against `tls`'s CA and presenting its certificate if it has
    /// one. The files are read for each new session.
    pub fn with_tls(mut self, tls: CoordinatorTls) -> EtcdBackend {
        self.context.tls = Some(tls);
        self
    }

    /// The same backend, logging in as `credentials` (etcd's RBAC): the
    /// user's role needs readwrite on the fleet's prefix
    /// `/snowmint/<fleet>/`, and nothing else.
    pub fn with_credentials(mut self, credentials: Credentials) -> EtcdBackend {
        self.context.credentials = Some(credentials);
        self
    }
}

/// What a request needs the user to be allowed, for the message when etcd
/// refuses it.
#[derive(Debug, Clone, Copy)]
enum Need<'a> {
    /// Read the key, or the keys under the prefix.
    Read(&'a str),
    /// Read and write the key (a transaction that compares and puts).
    ReadWrite(&'a str),
    /// Grant, keep or revoke the lease (revoking deletes the keys attached
    /// to it, which takes write on them).
    Lease,
}

/// A client per member, and which one is in use.
struct Members {
    clients: Vec<Client>,
    current: Arc<AtomicUsize>,
    context: Context,
    /// Per member, whether its client has logged in (with credentials).
    logged_in: Vec<tokio::sync::OnceCell<()>>,
    /// The fleet's prefix, `/snowmint/<fleet>/`, for messages.
    prefix: Option<String>,
    /// The endpoints, and the TLS files the clients were made with: a
    /// failed connection is explained by a handshake of our own.
    endpoints: Vec<String>,
    tls_files: Option<crate::TlsFiles>,
}

impl Members {
    /// Runs `request` on the member in use, logging in there first if need
    /// be. If it cannot reach the member, or is dropped before it ends (the
    /// engine's time limit), the session moves on to the next member,
    /// unless another request moved it already.
    async fn call<T, F>(
        &self,
        need: Need<'_>,
        request: impl FnOnce(Client) -> F,
    ) -> Result<T, BackendError>
    where
        F: Future<Output = Result<T, etcd_client::Error>>,
    {
        let mut attempt = Attempt::new(self);
        let result = async {
            self.log_in(attempt.at).await?;
            request(attempt.client())
                .await
                .map_err(|error| self.classify(error, need))
        }
        .await;
        let result = match result {
            Err(error) => Err(self.explain(attempt.at, error).await),
            ok => ok,
        };
        attempt.finished = !moves_on(&result);
        result
    }

    /// A connection failure over TLS whose cause tonic did not keep (a
    /// refused client certificate is an alert read after the handshake,
    /// which reaches us as a broken pipe or a closed stream as often as
    /// not): one handshake of our own with the same files says whether
    /// TLS failed, and why.
    async fn explain(&self, at: usize, error: BackendError) -> BackendError {
        let (BackendError::Unreachable { reason, .. }, Some(files), Some(tls)) =
            (&error, &self.tls_files, &self.context.tls)
        else {
            return error;
        };
        if reason.starts_with("TLS handshake failed") {
            return error;
        }
        let host = &self.endpoints[at % self.endpoints.len()];
        match crate::tls_probe::tls_failure(host, files).await {
            Some(failure) => match tls_cause(&failure, tls) {
                Some(words) => BackendError::unreachable(words).with_source(error),
                None => error,
            },
            None => error,
        }
    }

    fn at(&self) -> usize {
        self.current.load(Ordering::Acquire)
    }

    /// Logs the client of the member at `at` in, once, if the node has
    /// credentials.
    async fn log_in(&self, at: usize) -> Result<(), BackendError> {
        let Some(credentials) = &self.context.credentials else {
            return Ok(());
        };
        let index = at % self.clients.len();
        self.logged_in[index]
            .get_or_try_init(|| async {
                // A clone shares the client's token and credentials.
                let mut client = self.clients[index].clone();
                let user = Some((
                    credentials.user.clone(),
                    credentials.password.expose().to_owned(),
                ));
                match client.update_user(user).await {
                    Ok(()) => Ok(()),
                    Err(etcd_client::Error::GRpcStatus(status))
                        if i32::from(status.code()) == GRPC_FAILED_PRECONDITION
                            && status.message().contains("authentication is not enabled") =>
                    {
                        tracing::warn!(
                            user = %credentials.user,
                            "etcd's authentication is off: the node goes on without logging in"
                        );
                        Ok(())
                    }
                    Err(error) => Err(self.classify(error, Need::Lease)),
                }
            })
            .await
            .map(drop)
    }

    /// [`classify`], with etcd's refusals put in words that say who was
    /// refused what.
    fn classify(&self, error: etcd_client::Error, need: Need<'_>) -> BackendError {
        let refusal = match &error {
            etcd_client::Error::GRpcStatus(status) => {
                self.refusal(i32::from(status.code()), status.message(), need)
            }
            _ => None,
        };
        match refusal {
            Some(reason) => BackendError::unavailable(reason).with_source(error),
            None => classify(error, &self.context),
        }
    }

    /// What an authentication or permission error from etcd means here.
    fn refusal(&self, code: i32, message: &str, need: Need<'_>) -> Option<String> {
        let who = match &self.context.credentials {
            Some(credentials) => format!("user {:?}", credentials.user),
            None => "this node (which gives no user)".to_owned(),
        };
        let prefix = self.prefix.as_deref().unwrap_or("/snowmint/<fleet>/");
        if message.contains("authentication failed") {
            return Some(format!(
                "{who} cannot log in: etcd says the user name or password is wrong"
            ));
        }
        if message.contains("user name is empty") {
            return Some(format!(
                "etcd's authentication is on, and this node gives no user: write one into the URL (etcd://USER@HOST:PORT) and give its password, for a user whose role has readwrite on the prefix {prefix}"
            ));
        }
        if code != GRPC_PERMISSION_DENIED {
            return None;
        }
        let what = match need {
            Need::Read(key) => format!("may not read {key}"),
            Need::ReadWrite(key) => format!("may not read and write {key}"),
            Need::Lease => {
                "may not revoke its lease (that takes write on the keys attached to it)".to_owned()
            }
        };
        Some(format!(
            "{who} {what} (etcd: permission denied); grant its role readwrite on the prefix {prefix}"
        ))
    }
}

/// Whether `result` says that the member could not be reached or could not
/// serve (no leader, for one), so that the next request should try another.
fn moves_on<T>(result: &Result<T, BackendError>) -> bool {
    matches!(
        result,
        Err(BackendError::Unreachable { .. } | BackendError::Unavailable { .. })
    )
}

/// One request on one member; moves the session on when dropped
/// unfinished.
struct Attempt<'a> {
    members: &'a Members,
    at: usize,
    finished: bool,
}

impl<'a> Attempt<'a> {
    fn new(members: &'a Members) -> Attempt<'a> {
        Attempt {
            members,
            at: members.at(),
            finished: false,
        }
    }

    fn client(&self) -> Client {
        self.members.clients[self.at % self.members.clients.len()].clone()
    }
}

impl Drop for Attempt<'_> {
    fn drop(&mut self) {
        if !self.finished {
            let _ = self.members.current.compare_exchange(
                self.at,
                self.at.wrapping_add(1),
                Ordering::AcqRel,
                Ordering::Acquire,
            );
        }
    }
}

/// A lease and the clients of the members it is kept through.
pub struct EtcdSession {
    members: Members,
    lease: i64,
    /// The keep-alive stream, opened on first use on the member then in
    /// use (whose index it keeps). Taken out while in use, so that a
    /// cancelled keep-alive drops its stream: a late answer to an abandoned
    /// request must never pass for the answer to a newer one.
    keeper: Mutex<Option<(usize, LeaseKeeper, LeaseKeepAliveStream)>>,
}

/// gRPC's NOT_FOUND status code, which etcd answers for a lease that
/// expired or was revoked.
const GRPC_NOT_FOUND: i32 = 5;
/// gRPC's PERMISSION_DENIED: the user's role lacks a right.
const GRPC_PERMISSION_DENIED: i32 = 7;
/// gRPC's FAILED_PRECONDITION: among others, a login while etcd's
/// authentication is off.
const GRPC_FAILED_PRECONDITION: i32 = 9;

/// Sorts an etcd client error into what the engine must know (is the
/// lease gone? was the server reached?) and a few plain words for the
/// message (a failed TLS handshake in words that name the file to look
/// at); the error itself stays behind as the source, for the log.
fn classify(err: etcd_client::Error, context: &Context) -> BackendError {
    use etcd_client::Error as E;
    // What lies beneath: tonic keeps the transport failure (down to the
    // operating system's error) as the source of a status or a transport
    // error; etcd_client::Error itself has no source.
    let beneath: Option<&(dyn std::error::Error + 'static)> = match &err {
        E::GRpcStatus(status) => std::error::Error::source(status),
        E::TransportError(transport) => Some(transport),
        E::IoError(io) => Some(io),
        _ => None,
    };
    // A failed connection, in the system's words ("connection refused"),
    // else in the words of the deepest error tonic kept.
    let failed_connection = beneath.map(|cause| {
        let tls = context.tls.as_ref().and_then(|tls| tls_cause(cause, tls));
        tls.or_else(|| io_cause(cause)).unwrap_or_else(|| {
            let mut deepest = cause;
            while let Some(next) = deepest.source() {
                deepest = next;
            }
            deepest.to_string()
        })
    });
    let error = match (&err, failed_connection) {
        (E::GRpcStatus(status), _) if i32::from(status.code()) == GRPC_NOT_FOUND => {
            BackendError::lost(status.message())
        }
        (_, Some(reason)) => BackendError::unreachable(reason),
        (E::GRpcStatus(status), None) if !status.message().is_empty() => {
            BackendError::unavailable(status.message())
        }
        (E::GRpcStatus(status), None) => {
            BackendError::unavailable(status.code().description().to_lowercase())
        }
        (other, None) => BackendError::unavailable(other.to_string()),
    };
    error.with_source(err)
}

impl Backend for EtcdBackend {
    type Session = EtcdSession;

    const KIND: &'static str = "etcd";
    const SESSION_NAME: &'static str = "lease";
    const GUARD_PROVES_OWNER: bool = true;

    fn url(&self) -> String {
        CoordinatorUrl::Etcd {
            endpoints: self.endpoints.clone(),
            login: self.context.credentials.as_ref().map(|credentials| Login {
                user: credentials.user.clone(),
                password: Some(credentials.password.clone()),
            }),
        }
        .to_string()
    }

    async fn open_session(
        &self,
        ttl: Duration,
        dirs: &[String],
    ) -> Result<Opened<EtcdSession>, BackendError> {
        // HTTP/2 pings find a dead connection within a third of the TTL, so
        // that the client reconnects instead of waiting on it. The token
        // of a login expires (etcd's --auth-token-ttl): it is renewed and
        // the request sent again.
        let mut options = ConnectOptions::new()
            .with_connect_timeout(ttl / 3)
            .with_keep_alive(ttl / 3, ttl / 3)
            .with_keep_alive_while_idle(true)
            .with_require_leader(true)
            .with_auto_token_refresh(true);
        let mut scheme = "http";
        let mut tls_files = None;
        if let Some(tls) = &self.context.tls {
            // Read for each session: a certificate rotated on disk is used
            // from the next session on.
            let files = tls.load().map_err(BackendError::unavailable)?;
            tls_files = Some(files.clone());
            let mut config = etcd_client::TlsOptions::new()
                .ca_certificate(etcd_client::Certificate::from_pem(&files.ca_pem));
            if let Some((cert, key)) = &files.identity {
                config = config.identity(etcd_client::Identity::from_pem(cert, key.expose()));
            }
            options = options.with_tls(config);
            scheme = "https";
        }
        let mut clients = Vec::with_capacity(self.endpoints.len());
        for host in &self.endpoints {
            // Connecting is lazy: nothing is sent before the first request
            // (a login is sent before a member's first request).
            let client = Client::connect([format!("{scheme}://{host}")], Some(options.clone()))
                .await
                .map_err(|error| classify(error, &self.context))?;
            clients.push(client);
        }
        let members = Members {
            logged_in: clients
                .iter()
                .map(|_| tokio::sync::OnceCell::new())
                .collect(),
            clients,
            current: self.current.clone(),
            context: self.context.clone(),
            prefix: dirs.first().map(|dir| fleet_prefix(dir)),
            endpoints: self.endpoints.clone(),
            tls_files,
        };
        // Leases count whole seconds: round up so the TTL is never shorter
        // than asked.
        let seconds = ttl.as_secs() + u64::from(ttl.subsec_nanos() > 0);
        let seconds = seconds.try_into().unwrap_or(i64::MAX);
        // Each member in turn, each for its share of the TTL (the engine
        // gives opening a session one TTL), until one grants the lease.
        let share = ttl / u32::try_from(self.endpoints.len() + 1).unwrap_or(u32::MAX);
        let mut last = None;
        for _ in 0..self.endpoints.len() {
            let grant = members.call(Need::Lease, |mut client| async move {
                client.lease_grant(seconds, None).await
            });
            match tokio::time::timeout(share, grant).await {
                Ok(Ok(granted)) => {
                    return Ok(Opened {
                        id: format!("{:x}", granted.id()),
                        ttl: Duration::from_secs(granted.ttl().max(0).unsigned_abs()),
                        session: EtcdSession {
                            members,
                            lease: granted.id(),
                            keeper: Mutex::new(None),
                        },
                    });
                }
                Ok(Err(
                    error @ (BackendError::Unreachable { .. } | BackendError::Unavailable { .. }),
                )) => last = Some(error),
                Ok(Err(error)) => return Err(error),
                Err(_) => {
                    last = Some(BackendError::unavailable(format!(
                        "no answer within {} ms",
                        share.as_millis()
                    )));
                }
            }
        }
        Err(last.unwrap_or_else(|| BackendError::unavailable("no endpoint")))
    }

    async fn list(&self, session: &EtcdSession, dir: &str) -> Result<Vec<String>, BackendError> {
        let prefix = format!("{dir}/");
        let options = GetOptions::new().with_prefix().with_keys_only();
        let listed = session
            .members
            .call(Need::Read(&prefix), |mut client| {
                let prefix = prefix.clone();
                async move { client.get(prefix, Some(options)).await }
            })
            .await?;
        Ok(listed
            .kvs()
            .iter()
            .filter_map(|kv| kv.key_str().ok()?.strip_prefix(&prefix).map(str::to_owned))
            .collect())
    }

    async fn create_if_absent(
        &self,
        session: &EtcdSession,
        path: &str,
        value: &[u8],
    ) -> Result<bool, BackendError> {
        let txn = Txn::new()
            .when([Compare::create_revision(path, CompareOp::Equal, 0)])
            .and_then([TxnOp::put(
                path,
                value,
                Some(PutOptions::new().with_lease(session.lease)),
            )]);
        let done = session
            .members
            .call(Need::ReadWrite(path), |mut client| async move {
                client.txn(txn).await
            })
            .await?;
        Ok(done.succeeded())
    }

    async fn create_record(
        &self,
        session: &EtcdSession,
        path: &str,
        value: &[u8],
    ) -> Result<Option<Vec<u8>>, BackendError> {
        let txn = Txn::new()
            .when([Compare::create_revision(path, CompareOp::Equal, 0)])
            .and_then([TxnOp::put(path, value, None)])
            .or_else([TxnOp::get(path, None)]);
        let done = session
            .members
            .call(Need::ReadWrite(path), |mut client| async move {
                client.txn(txn).await
            })
            .await?;
        if done.succeeded() {
            return Ok(None);
        }
        let found = done
            .op_responses()
            .into_iter()
            .find_map(|response| match response {
                TxnOpResponse::Get(got) => got.kvs().first().map(|kv| kv.value().to_vec()),
                _ => None,
            });
        // The failed compare found the key, so the read in the same
        // transaction does too.
        Ok(Some(found.unwrap_or_default()))
    }

    async fn keep_alive(
        &self,
        session: &EtcdSession,
        held: Option<&str>,
    ) -> Result<Duration, BackendError> {
        let mut attempt = Attempt::new(&session.members);
        let renewed = renew_lease(session, &attempt).await;
        attempt.finished = !moves_on(&renewed);
        drop(attempt);
        let ttl = renewed?;
        if let Some(key) = held {
            // The lease alone does not prove the key: an operator may have
            // deleted it, and someone else may hold it now.
            let found = session
                .members
                .call(Need::Read(key), |mut client| async move {
                    client.get(key, None).await
                })
                .await?;
            if !found.kvs().iter().any(|kv| kv.lease() == session.lease) {
                return Err(BackendError::lost(format!(
                    "key {key} is no longer attached to lease {:x}",
                    session.lease
                )));
            }
        }
        Ok(ttl)
    }

    async fn read(
        &self,
        session: &EtcdSession,
        path: &str,
    ) -> Result<Option<Versioned>, BackendError> {
        let found = session
            .members
            .call(Need::Read(path), |mut client| async move {
                client.get(path, None).await
            })
            .await?;
        Ok(found.kvs().first().map(|kv| Versioned {
            value: kv.value().to_vec(),
            version: kv.mod_revision(),
        }))
    }

    async fn write_guarded(
        &self,
        session: &EtcdSession,
        guard: &str,
        path: &str,
        value: &[u8],
        expected: Option<i64>,
    ) -> Result<GuardedWrite, BackendError> {
        let unchanged = match expected {
            Some(revision) => Compare::mod_revision(path, CompareOp::Equal, revision),
            None => Compare::create_revision(path, CompareOp::Equal, 0),
        };
        let txn = Txn::new()
            .when([
                Compare::lease(guard, CompareOp::Equal, session.lease),
                unchanged,
            ])
            .and_then([TxnOp::put(path, value, None)])
            .or_else([TxnOp::get(guard, None)]);
        let done = session
            .members
            .call(Need::ReadWrite(path), |mut client| async move {
                client.txn(txn).await
            })
            .await?;
        if done.succeeded() {
            let revision = done.header().map_or(0, |header| header.revision());
            return Ok(GuardedWrite::Written { version: revision });
        }
        let guard_held = done
            .op_responses()
            .into_iter()
            .any(|response| match response {
                TxnOpResponse::Get(got) => got.kvs().iter().any(|kv| kv.lease() == session.lease),
                _ => false,
            });
        Ok(if guard_held {
            GuardedWrite::Conflict
        } else {
            GuardedWrite::GuardLost
        })
    }

    async fn release(
        &self,
        session: &EtcdSession,
        _held: Option<&str>,
    ) -> Result<(), BackendError> {
        let lease = session.lease;
        match session
            .members
            .call(Need::Lease, |mut client| async move {
                client.lease_revoke(lease).await
            })
            .await
        {
            Ok(_) | Err(BackendError::Lost { .. }) => Ok(()),
            Err(err) => Err(err),
        }
    }
}

/// Sends one keep-alive for the session's lease on the attempt's member,
/// on the stream already open there or a new one, and waits for its
/// answer: the lease's TTL.
async fn renew_lease(
    session: &EtcdSession,
    attempt: &Attempt<'_>,
) -> Result<Duration, BackendError> {
    session.members.log_in(attempt.at).await?;
    let taken = session.keeper.lock().await.take();
    let (mut keeper, mut stream) = match taken {
        Some((at, keeper, stream)) if at == attempt.at => (keeper, stream),
        // None yet, or one on a member the session has moved away from.
        _ => attempt
            .client()
            .lease_keep_alive(session.lease)
            .await
            .map_err(|error| session.members.classify(error, Need::Lease))?,
    };
    let classify = |error| session.members.classify(error, Need::Lease);
    keeper.keep_alive().await.map_err(classify)?;
    let answer = stream
        .message()
        .await
        .map_err(classify)?
        .ok_or_else(|| BackendError::unavailable("the keep-alive stream closed"))?;
    if answer.ttl() <= 0 {
        return Err(BackendError::lost(format!(
            "lease {:x} expired",
            session.lease
        )));
    }
    *session.keeper.lock().await = Some((attempt.at, keeper, stream));
    Ok(Duration::from_secs(answer.ttl().unsigned_abs()))
}

/// The fleet's prefix, `/snowmint/<fleet>/`, of one of its directories.
fn fleet_prefix(dir: &str) -> String {
    let parts: Vec<&str> = dir.split('/').take(3).collect();
    format!("{}/", parts.join("/"))
}

#[cfg(test)]
mod tests {
    use std::error::Error;

    use super::*;
    use crate::testing::closed_port;

    /// A closed port: the message is the system's words, and tonic's error
    /// stays behind as the source, for the log.
    #[tokio::test]
    async fn a_refused_connection_reads_as_the_systems_words() {
        let backend = EtcdBackend::new(vec![format!("127.0.0.1:{}", closed_port())]);
        let Err(error) = backend.open_session(Duration::from_secs(2), &[]).await else {
            panic!("a session was opened through a closed port");
        };
        assert!(
            matches!(error, BackendError::Unreachable { .. }),
            "{error:?}"
        );
        assert_eq!(error.to_string(), "connection refused");
        let details = error.source().expect("the client's error is kept");
        assert!(
            format!("{details:?}").contains("ConnectionRefused"),
            "{details:?}"
        );
    }

    #[test]
    fn the_fleet_prefix_is_the_first_two_components() {
        assert_eq!(fleet_prefix("/snowmint/ids/slots"), "/snowmint/ids/");
        assert_eq!(fleet_prefix("/snowmint/ids"), "/snowmint/ids/");
    }
}
