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
//! - Clock: etcd has none a client can read, so the clock check uses the
//!   peers' alone.
//!
//! With TLS ([`CoordinatorTls`], read anew for each session so that
//! rotated files are picked up) the endpoints are spoken to over
//! `https://`; with [`Credentials`] the session logs in (etcd's
//! `Authenticate`) before its first request and sends the token with every
//! request after (etcd's simple and JWT tokens are good on every member);
//! a token etcd no longer takes (it expired: `--auth-token-ttl`) is
//! renewed and the request sent again. A refusal names what the user lacks
//! ([`Need`]): the role a node needs is readwrite on the fleet's prefix,
//! `/snowmint/<fleet>/`.
//!
//! The wire protocol is etcd's v3 gRPC API, spoken through tonic with the
//! code generated from `proto/etcd.proto` (the few messages and calls used
//! here) and checked in as `etcd/api.rs`: building needs no `protoc`.
//!
//! A session talks to one member at a time ([`Members`]): a request that
//! cannot reach its member, or that the engine stops waiting for, moves the
//! session on to the next one. A lease belongs to the cluster, not to the
//! member it was granted through, so the claim survives the move. (etcd's
//! client would balance requests over every endpoint instead, and keeps
//! sending some to a member that accepts connections but answers nothing,
//! such as a stopped process.) Every request also requires a leader, so
//! that a member cut off from its quorum refuses at once instead of
//! waiting. That client (members, login, attempts, etcd's answers sorted
//! and put in words) is `etcd/client.rs`; this file is the backend's rules.

use std::collections::hash_map::RandomState;
use std::hash::{BuildHasher, Hasher};
use std::sync::Arc;
use std::sync::atomic::AtomicUsize;
use std::time::Duration;

use tokio::sync::{Mutex, mpsc};
use tokio_stream::wrappers::ReceiverStream;
use tonic::transport::{Certificate, ClientTlsConfig, Endpoint, Identity};

use crate::coordinator::{
    Backend, BackendError, CoordinatorTls, CoordinatorUrl, Credentials, GuardedWrite, Login,
    Opened, Versioned,
};

/// etcd's messages and calls as this backend speaks them: the code
/// generated from `proto/etcd.proto`, checked in (`tests/generated.rs`
/// checks that it matches, and rewrites it with `SNOWMINT_REGENERATE=1`).
/// Public for the tests' own etcd client only, not a stable API.
#[doc(hidden)]
#[rustfmt::skip]
#[allow(missing_docs, clippy::all, clippy::pedantic)]
pub mod api;
mod client;

use client::{
    Attempt, LoginState, Members, Need, Token, absent, equal, get, moves_on, prefix_end, put,
    read_keys, request, token_refused,
};

use api::compare::{CompareTarget, TargetUnion};
use api::lease_client::LeaseClient;
use api::request_op::Request as Op;
use api::{
    LeaseGrantRequest, LeaseKeepAliveRequest, LeaseKeepAliveResponse, LeaseRevokeRequest,
    RangeRequest, RequestOp, TxnRequest,
};

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

/// A lease and the clients of the members it is kept through.
pub struct EtcdSession {
    members: Members,
    lease: i64,
    /// The keep-alive stream, opened on first use on the member then in
    /// use (whose index it keeps). Taken out while in use, so that a
    /// cancelled keep-alive drops its stream: a late answer to an abandoned
    /// request must never pass for the answer to a newer one.
    keeper: Mutex<Option<Keeper>>,
}

/// A lease's keep-alive stream on one member: requests go in through
/// `sender`, answers come out of `answers`.
struct Keeper {
    at: usize,
    sender: mpsc::Sender<LeaseKeepAliveRequest>,
    answers: tonic::Streaming<LeaseKeepAliveResponse>,
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
        let mut scheme = "http";
        let mut tls_files = None;
        let mut tls_config = None;
        if let Some(tls) = &self.context.tls {
            // Read for each session: a certificate rotated on disk is used
            // from the next session on.
            let files = tls.load().map_err(BackendError::unavailable)?;
            let mut config =
                ClientTlsConfig::new().ca_certificate(Certificate::from_pem(&files.ca_pem));
            if let Some((cert, key)) = &files.identity {
                config = config.identity(Identity::from_pem(cert, key.expose()));
            }
            tls_files = Some(files);
            tls_config = Some(config);
            scheme = "https";
        }
        // HTTP/2 pings find a dead connection within a third of the TTL, so
        // that the channel reconnects instead of waiting on it.
        let mut channels = Vec::with_capacity(self.endpoints.len());
        for host in &self.endpoints {
            let unusable = |error| {
                BackendError::unavailable(format!("{host} is not a usable address"))
                    .with_source(error)
            };
            let mut endpoint = Endpoint::from_shared(format!("{scheme}://{host}"))
                .map_err(unusable)?
                .connect_timeout(ttl / 3)
                .http2_keep_alive_interval(ttl / 3)
                .keep_alive_timeout(ttl / 3)
                .keep_alive_while_idle(true);
            if let Some(config) = &tls_config {
                endpoint = endpoint.tls_config(config.clone()).map_err(unusable)?;
            }
            // Connecting is lazy: nothing is sent before the first request.
            channels.push(endpoint.connect_lazy());
        }
        let members = Members {
            channels,
            current: self.current.clone(),
            context: self.context.clone(),
            login: Mutex::new(match self.context.credentials {
                Some(_) => LoginState::Out,
                None => LoginState::Unneeded,
            }),
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
            let grant = members.call(Need::Lease, |channel, token| async move {
                let grant = LeaseGrantRequest {
                    ttl: seconds,
                    id: 0,
                };
                let granted = LeaseClient::new(channel)
                    .lease_grant(request(grant, token))
                    .await?;
                Ok(granted.into_inner())
            });
            match tokio::time::timeout(share, grant).await {
                Ok(Ok(granted)) if granted.error.is_empty() => {
                    return Ok(Opened {
                        id: format!("{:x}", granted.id),
                        ttl: Duration::from_secs(granted.ttl.max(0).unsigned_abs()),
                        session: EtcdSession {
                            members,
                            lease: granted.id,
                            keeper: Mutex::new(None),
                        },
                    });
                }
                Ok(Ok(refused)) => return Err(BackendError::unavailable(refused.error)),
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
        let range = RangeRequest {
            key: prefix.as_bytes().to_vec(),
            range_end: prefix_end(prefix.as_bytes()),
            keys_only: true,
        };
        let listed = session.members.range(Need::Read(&prefix), range).await?;
        Ok(listed
            .kvs
            .iter()
            .filter_map(|kv| {
                let key = std::str::from_utf8(&kv.key).ok()?;
                key.strip_prefix(&prefix).map(str::to_owned)
            })
            .collect())
    }

    async fn create_if_absent(
        &self,
        session: &EtcdSession,
        paths: &[String],
        value: &[u8],
    ) -> Result<bool, BackendError> {
        // One transaction: every key absent, then every key put under the
        // session's lease; a node's several slots are won together or not
        // at all.
        let Some(first) = paths.first() else {
            return Ok(true);
        };
        let txn = TxnRequest {
            compare: paths.iter().map(|path| absent(path)).collect(),
            success: paths
                .iter()
                .map(|path| put(path, value, session.lease))
                .collect(),
            failure: Vec::new(),
        };
        let done = session.members.txn(Need::ReadWrite(first), txn).await?;
        Ok(done.succeeded)
    }

    async fn create_record(
        &self,
        session: &EtcdSession,
        path: &str,
        value: &[u8],
    ) -> Result<Option<Vec<u8>>, BackendError> {
        let txn = TxnRequest {
            compare: vec![absent(path)],
            success: vec![put(path, value, 0)],
            failure: vec![RequestOp {
                request: Some(Op::RequestRange(get(path))),
            }],
        };
        let done = session.members.txn(Need::ReadWrite(path), txn).await?;
        if done.succeeded {
            return Ok(None);
        }
        // The failed compare found the key, so the read in the same
        // transaction does too.
        Ok(Some(
            read_keys(&done)
                .next()
                .map(|kv| kv.value.clone())
                .unwrap_or_default(),
        ))
    }

    async fn keep_alive(
        &self,
        session: &EtcdSession,
        held: &[String],
    ) -> Result<Duration, BackendError> {
        let mut attempt = Attempt::new(&session.members);
        let renewed = renew_lease(session, &attempt).await;
        attempt.finished = !moves_on(&renewed);
        drop(attempt);
        let ttl = renewed?;
        for key in held {
            // The lease alone does not prove the key: an operator may have
            // deleted it, and someone else may hold it now.
            let found = session.members.range(Need::Read(key), get(key)).await?;
            if !found.kvs.iter().any(|kv| kv.lease == session.lease) {
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
        let found = session.members.range(Need::Read(path), get(path)).await?;
        Ok(found.kvs.into_iter().next().map(|kv| Versioned {
            value: kv.value,
            version: kv.mod_revision,
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
            Some(revision) => equal(path, CompareTarget::Mod, TargetUnion::ModRevision(revision)),
            None => absent(path),
        };
        let txn = TxnRequest {
            compare: vec![
                equal(
                    guard,
                    CompareTarget::Lease,
                    TargetUnion::Lease(session.lease),
                ),
                unchanged,
            ],
            success: vec![put(path, value, 0)],
            failure: vec![RequestOp {
                request: Some(Op::RequestRange(get(guard))),
            }],
        };
        let done = session.members.txn(Need::ReadWrite(path), txn).await?;
        if done.succeeded {
            let revision = done.header.map_or(0, |header| header.revision);
            return Ok(GuardedWrite::Written { version: revision });
        }
        let guard_held = read_keys(&done).any(|kv| kv.lease == session.lease);
        Ok(if guard_held {
            GuardedWrite::Conflict
        } else {
            GuardedWrite::GuardLost
        })
    }

    async fn clock(
        &self,
        _session: &EtcdSession,
        _path: &str,
    ) -> Result<Option<i64>, BackendError> {
        // etcd stamps nothing with a wall-clock time a client can read:
        // revisions and lease TTLs count, they do not tell the time.
        Ok(None)
    }

    async fn release(&self, session: &EtcdSession, _held: &[String]) -> Result<(), BackendError> {
        let lease = session.lease;
        match session
            .members
            .call(Need::Lease, |channel, token| async move {
                LeaseClient::new(channel)
                    .lease_revoke(request(LeaseRevokeRequest { id: lease }, token))
                    .await
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
/// answer: the lease's TTL. A stream whose token etcd no longer takes is
/// opened anew after a new login, once.
async fn renew_lease(
    session: &EtcdSession,
    attempt: &Attempt<'_>,
) -> Result<Duration, BackendError> {
    let members = &session.members;
    let mut token = members.token(attempt, None).await?;
    let mut renewed = false;
    loop {
        match keep_alive_once(session, attempt, token.clone()).await {
            Ok(done) => return done,
            Err(status) if !renewed && token.is_some() && token_refused(&status) => {
                renewed = true;
                token = members.token(attempt, token).await?;
            }
            Err(status) => return Err(members.classify(status, Need::Lease)),
        }
    }
}

/// One keep-alive of [`renew_lease`], a new stream sending `token`; an
/// error of etcd's as its status, to be classified by the caller.
async fn keep_alive_once(
    session: &EtcdSession,
    attempt: &Attempt<'_>,
    token: Option<Token>,
) -> Result<Result<Duration, BackendError>, tonic::Status> {
    let closed = || {
        Ok(Err(BackendError::unavailable(
            "the keep-alive stream closed",
        )))
    };
    let taken = session.keeper.lock().await.take();
    let ask = LeaseKeepAliveRequest { id: session.lease };
    let mut keeper = match taken {
        Some(keeper) if keeper.at == attempt.at => {
            if keeper.sender.send(ask).await.is_err() {
                return closed();
            }
            keeper
        }
        // None yet, or one on a member the session has moved away from:
        // a new stream, its first request queued before the call (etcd
        // answers the call once it has one).
        _ => {
            let (sender, requests) = mpsc::channel(1);
            if sender.send(ask).await.is_err() {
                return closed();
            }
            let answers = LeaseClient::new(attempt.channel())
                .lease_keep_alive(request(ReceiverStream::new(requests), token))
                .await?
                .into_inner();
            Keeper {
                at: attempt.at,
                sender,
                answers,
            }
        }
    };
    let Some(answer) = keeper.answers.message().await? else {
        return closed();
    };
    if answer.ttl <= 0 {
        return Ok(Err(BackendError::lost(format!(
            "lease {:x} expired",
            session.lease
        ))));
    }
    *session.keeper.lock().await = Some(keeper);
    Ok(Ok(Duration::from_secs(answer.ttl.unsigned_abs())))
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
