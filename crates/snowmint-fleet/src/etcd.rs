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
//! waiting.

use std::collections::hash_map::RandomState;
use std::future::Future;
use std::hash::{BuildHasher, Hasher};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use tokio::sync::{Mutex, mpsc};
use tokio_stream::wrappers::ReceiverStream;
use tonic::metadata::{AsciiMetadataValue, MetadataValue};
use tonic::transport::{Certificate, Channel, ClientTlsConfig, Endpoint, Identity};

use crate::coordinator::{
    Backend, BackendError, CoordinatorTls, CoordinatorUrl, Credentials, GuardedWrite, Login,
    Opened, Versioned,
};
use crate::reason::{io_cause, tls_cause};

/// etcd's messages and calls as this backend speaks them: the code
/// generated from `proto/etcd.proto`, checked in (`tests/generated.rs`
/// checks that it matches, and rewrites it with `SNOWMINT_REGENERATE=1`).
/// Public for the tests' own etcd client only, not a stable API.
#[doc(hidden)]
#[rustfmt::skip]
#[allow(missing_docs, clippy::all, clippy::pedantic)]
pub mod api;

use api::auth_client::AuthClient;
use api::compare::{CompareResult, CompareTarget, TargetUnion};
use api::kv_client::KvClient;
use api::lease_client::LeaseClient;
use api::request_op::Request as Op;
use api::response_op::Response as OpResponse;
use api::{
    AuthenticateRequest, Compare, KeyValue, LeaseGrantRequest, LeaseKeepAliveRequest,
    LeaseKeepAliveResponse, LeaseRevokeRequest, PutRequest, RangeRequest, RangeResponse, RequestOp,
    TxnRequest, TxnResponse,
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

/// A login's token, sent as the `token` metadata of every request.
type Token = AsciiMetadataValue;

/// Where the session stands with etcd's authentication.
#[derive(Clone)]
enum LoginState {
    /// No login yet (or the last token was refused).
    Out,
    /// Logged in: this token goes with every request.
    In(Token),
    /// No login needed: no credentials, or etcd's authentication is off.
    Unneeded,
}

/// A connection per member, and which one is in use.
struct Members {
    channels: Vec<Channel>,
    current: Arc<AtomicUsize>,
    context: Context,
    /// The session's login, shared by its requests on every member.
    login: Mutex<LoginState>,
    /// The fleet's prefix, `/snowmint/<fleet>/`, for messages.
    prefix: Option<String>,
    /// The endpoints, and the TLS files the channels were made with: a
    /// failed connection is explained by a handshake of our own.
    endpoints: Vec<String>,
    tls_files: Option<crate::TlsFiles>,
}

impl Members {
    /// Runs `request` on the member in use, with the session's token
    /// (logging in first if need be; once more if etcd no longer takes the
    /// token). If it cannot reach the member, or is dropped before it ends
    /// (the engine's time limit), the session moves on to the next member,
    /// unless another request moved it already.
    async fn call<T, F>(
        &self,
        need: Need<'_>,
        request: impl Fn(Channel, Option<Token>) -> F,
    ) -> Result<T, BackendError>
    where
        F: Future<Output = Result<T, tonic::Status>>,
    {
        let mut attempt = Attempt::new(self);
        let result = async {
            let mut token = self.token(&attempt, None).await?;
            let mut renewed = false;
            loop {
                match request(attempt.channel(), token.clone()).await {
                    Err(status) if !renewed && token.is_some() && token_refused(&status) => {
                        renewed = true;
                        token = self.token(&attempt, token).await?;
                    }
                    done => return done.map_err(|status| self.classify(status, need)),
                }
            }
        }
        .await;
        let result = match result {
            Err(error) => Err(self.explain(attempt.at, error).await),
            ok => ok,
        };
        attempt.finished = !moves_on(&result);
        result
    }

    /// A read on the member in use.
    async fn range(
        &self,
        need: Need<'_>,
        range: RangeRequest,
    ) -> Result<RangeResponse, BackendError> {
        self.call(need, |channel, token| {
            let message = request(range.clone(), token);
            async move {
                KvClient::new(channel)
                    .range(message)
                    .await
                    .map(tonic::Response::into_inner)
            }
        })
        .await
    }

    /// A transaction on the member in use.
    async fn txn(&self, need: Need<'_>, txn: TxnRequest) -> Result<TxnResponse, BackendError> {
        self.call(need, |channel, token| {
            let message = request(txn.clone(), token);
            async move {
                KvClient::new(channel)
                    .txn(message)
                    .await
                    .map(tonic::Response::into_inner)
            }
        })
        .await
    }

    fn at(&self) -> usize {
        self.current.load(Ordering::Acquire)
    }

    /// The token to send, logging in through the attempt's member when
    /// there is none yet, or when `refused` is the one in use (unless
    /// another request has renewed it meanwhile). `None`: no login needed.
    async fn token(
        &self,
        attempt: &Attempt<'_>,
        refused: Option<Token>,
    ) -> Result<Option<Token>, BackendError> {
        let Some(credentials) = &self.context.credentials else {
            return Ok(None);
        };
        let mut login = self.login.lock().await;
        match (&*login, &refused) {
            (LoginState::Unneeded, _) => return Ok(None),
            (LoginState::In(token), None) => return Ok(Some(token.clone())),
            (LoginState::In(token), Some(refused)) if token != refused => {
                return Ok(Some(token.clone()));
            }
            _ => {}
        }
        let ask = AuthenticateRequest {
            name: credentials.user.clone(),
            password: credentials.password.expose().to_owned(),
        };
        let answer = AuthClient::new(attempt.channel())
            .authenticate(request(ask, None))
            .await;
        *login = match answer {
            Ok(answer) => {
                let token = MetadataValue::try_from(answer.into_inner().token).map_err(|_| {
                    BackendError::unavailable("etcd's login token is not printable ASCII")
                })?;
                LoginState::In(token)
            }
            Err(status)
                if status.code() == tonic::Code::FailedPrecondition
                    && status.message().contains("authentication is not enabled") =>
            {
                tracing::warn!(
                    user = %credentials.user,
                    "etcd's authentication is off: the node goes on without logging in"
                );
                LoginState::Unneeded
            }
            Err(status) => {
                *login = LoginState::Out;
                return Err(self.classify(status, Need::Lease));
            }
        };
        Ok(match &*login {
            LoginState::In(token) => Some(token.clone()),
            _ => None,
        })
    }

    /// A connection failure whose cause tonic did not keep. Over TLS (a
    /// refused client certificate is an alert read after the handshake,
    /// which reaches us as a broken pipe or a closed stream as often as
    /// not), one handshake of our own with the same files says whether
    /// TLS failed, and why. In cleartext, a connection the server closed
    /// at once is what a server that speaks only TLS does: one handshake
    /// of ours says whether it does.
    async fn explain(&self, at: usize, error: BackendError) -> BackendError {
        let BackendError::Unreachable { reason, .. } = &error else {
            return error;
        };
        let host = &self.endpoints[at % self.endpoints.len()];
        let (Some(files), Some(tls)) = (&self.tls_files, &self.context.tls) else {
            let closed = ["broken pipe", "reset", "closed"]
                .iter()
                .any(|words| reason.contains(words));
            if closed && crate::tls_probe::speaks_tls(host).await {
                return BackendError::unreachable(
                    "the server speaks TLS, and this connection to it is cleartext: give the CA \
                     that signed its certificate (TLS to the coordinator is on when a CA is given)",
                )
                .with_source(error);
            }
            return error;
        };
        if reason.starts_with("TLS handshake failed") {
            return error;
        }
        match crate::tls_probe::tls_failure(host, files).await {
            Some(failure) => match tls_cause(&failure, tls) {
                Some(words) => BackendError::unreachable(words).with_source(error),
                None => error,
            },
            None => error,
        }
    }

    /// [`classify`], with etcd's refusals put in words that say who was
    /// refused what.
    fn classify(&self, status: tonic::Status, need: Need<'_>) -> BackendError {
        match self.refusal(&status, need) {
            Some(reason) => BackendError::unavailable(reason).with_source(status),
            None => classify(status, &self.context),
        }
    }

    /// What an authentication or permission error from etcd means here.
    fn refusal(&self, status: &tonic::Status, need: Need<'_>) -> Option<String> {
        let message = status.message();
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
        if status.code() != tonic::Code::PermissionDenied {
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

/// Whether etcd refused the token itself (it expired, or the member's
/// authentication store moved on since the login): a new login, and the
/// request again, will do.
fn token_refused(status: &tonic::Status) -> bool {
    status.code() == tonic::Code::Unauthenticated
        || status.message().contains("invalid auth token")
        || status.message().contains("revision of auth store is old")
}

/// A request for etcd, which a member cut off from its quorum refuses at
/// once (instead of waiting): etcd's `hasleader` metadata; with the login's
/// token, if any.
fn request<T>(message: T, token: Option<Token>) -> tonic::Request<T> {
    let mut request = tonic::Request::new(message);
    let metadata = request.metadata_mut();
    metadata.insert("hasleader", MetadataValue::from_static("true"));
    if let Some(token) = token {
        metadata.insert("token", token);
    }
    request
}

/// The range of every key that starts with `prefix`: up to, not
/// including, the prefix with its last byte raised (bytes 0xff carried).
fn prefix_end(prefix: &[u8]) -> Vec<u8> {
    let mut end = prefix.to_vec();
    while let Some(last) = end.pop() {
        if last < 0xff {
            end.push(last + 1);
            return end;
        }
    }
    // All 0xff (or empty): to the end of the key space.
    vec![0]
}

/// A read of `key` alone.
fn get(key: &str) -> RangeRequest {
    RangeRequest {
        key: key.as_bytes().to_vec(),
        ..RangeRequest::default()
    }
}

/// A put of `value` at `key`, attached to `lease` (0: none).
fn put(key: &str, value: &[u8], lease: i64) -> RequestOp {
    RequestOp {
        request: Some(Op::RequestPut(PutRequest {
            key: key.as_bytes().to_vec(),
            value: value.to_vec(),
            lease,
        })),
    }
}

/// A compare of `key`'s `target` with `value`, for equality.
fn equal(key: &str, target: CompareTarget, value: TargetUnion) -> Compare {
    Compare {
        result: CompareResult::Equal.into(),
        target: target.into(),
        key: key.as_bytes().to_vec(),
        target_union: Some(value),
    }
}

/// "`key` does not exist": its create revision is 0.
fn absent(key: &str) -> Compare {
    equal(key, CompareTarget::Create, TargetUnion::CreateRevision(0))
}

/// The keys read by a transaction's range operations.
fn read_keys(done: &TxnResponse) -> impl Iterator<Item = &KeyValue> {
    done.responses
        .iter()
        .filter_map(|response| match &response.response {
            Some(OpResponse::ResponseRange(range)) => Some(range.kvs.iter()),
            _ => None,
        })
        .flatten()
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

    fn channel(&self) -> Channel {
        self.members.channels[self.at % self.members.channels.len()].clone()
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
    keeper: Mutex<Option<Keeper>>,
}

/// A lease's keep-alive stream on one member: requests go in through
/// `sender`, answers come out of `answers`.
struct Keeper {
    at: usize,
    sender: mpsc::Sender<LeaseKeepAliveRequest>,
    answers: tonic::Streaming<LeaseKeepAliveResponse>,
}

/// gRPC's NOT_FOUND status code, which etcd answers for a lease that
/// expired or was revoked.
const GRPC_NOT_FOUND: i32 = 5;

/// Sorts an error of a call into what the engine must know (is the lease
/// gone? was the server reached?) and a few plain words for the message (a
/// failed TLS handshake in words that name the file to look at); the
/// status itself stays behind as the source, for the log.
fn classify(status: tonic::Status, context: &Context) -> BackendError {
    // A failed connection, in the system's words ("connection refused"),
    // else in the words of the deepest error tonic kept beneath the status
    // (down to the operating system's error).
    let failed_connection = std::error::Error::source(&status).map(|cause| {
        let tls = context.tls.as_ref().and_then(|tls| tls_cause(cause, tls));
        tls.or_else(|| io_cause(cause)).unwrap_or_else(|| {
            let mut deepest = cause;
            while let Some(next) = deepest.source() {
                deepest = next;
            }
            deepest.to_string()
        })
    });
    let error = match failed_connection {
        _ if i32::from(status.code()) == GRPC_NOT_FOUND => BackendError::lost(status.message()),
        Some(reason) => BackendError::unreachable(reason),
        None if !status.message().is_empty() => BackendError::unavailable(status.message()),
        None => BackendError::unavailable(status.code().description().to_lowercase()),
    };
    error.with_source(status)
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
        path: &str,
        value: &[u8],
    ) -> Result<bool, BackendError> {
        let txn = TxnRequest {
            compare: vec![absent(path)],
            success: vec![put(path, value, session.lease)],
            failure: Vec::new(),
        };
        let done = session.members.txn(Need::ReadWrite(path), txn).await?;
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

    async fn release(
        &self,
        session: &EtcdSession,
        _held: Option<&str>,
    ) -> Result<(), BackendError> {
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
