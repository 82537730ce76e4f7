//! etcd's gRPC client, as a session speaks it: a connection per member
//! and which one is in use ([`Members`]), the login and its token, each
//! call's attempt on one member and the move to the next, and etcd's
//! answers sorted into what the engine must know ([`classify`]) and put
//! in words (what the user lacks, [`Need`]). The backend's rules are in
//! `etcd.rs`.

use std::future::Future;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use tokio::sync::Mutex;
use tonic::metadata::{AsciiMetadataValue, MetadataValue};
use tonic::transport::Channel;

use crate::coordinator::BackendError;
use crate::reason::{io_cause, tls_cause};

use super::Context;
use super::api::auth_client::AuthClient;
use super::api::compare::{CompareResult, CompareTarget, TargetUnion};
use super::api::kv_client::KvClient;
use super::api::request_op::Request as Op;
use super::api::response_op::Response as OpResponse;
use super::api::{
    AuthenticateRequest, Compare, KeyValue, PutRequest, RangeRequest, RangeResponse, RequestOp,
    TxnRequest, TxnResponse,
};

/// What a request needs the user to be allowed, for the message when etcd
/// refuses it.
#[derive(Debug, Clone, Copy)]
pub(super) enum Need<'a> {
    /// Read the key, or the keys under the prefix.
    Read(&'a str),
    /// Read and write the key (a transaction that compares and puts).
    ReadWrite(&'a str),
    /// Grant, keep or revoke the lease (revoking deletes the keys attached
    /// to it, which takes write on them).
    Lease,
}

/// A login's token, sent as the `token` metadata of every request.
pub(super) type Token = AsciiMetadataValue;

/// Where the session stands with etcd's authentication.
#[derive(Clone)]
pub(super) enum LoginState {
    /// No login yet (or the last token was refused).
    Out,
    /// Logged in: this token goes with every request.
    In(Token),
    /// No login needed: no credentials, or etcd's authentication is off.
    Unneeded,
}

/// A connection per member, and which one is in use.
pub(super) struct Members {
    pub(super) channels: Vec<Channel>,
    pub(super) current: Arc<AtomicUsize>,
    pub(super) context: Context,
    /// The session's login, shared by its requests on every member.
    pub(super) login: Mutex<LoginState>,
    /// The fleet's prefix, `/snowmint/<fleet>/`, for messages.
    pub(super) prefix: Option<String>,
    /// The endpoints, and the TLS files the channels were made with: a
    /// failed connection is explained by a handshake of our own.
    pub(super) endpoints: Vec<String>,
    pub(super) tls_files: Option<crate::TlsFiles>,
}

impl Members {
    /// Runs `request` on the member in use, with the session's token
    /// (logging in first if need be; once more if etcd no longer takes the
    /// token). If it cannot reach the member, or is dropped before it ends
    /// (the engine's time limit), the session moves on to the next member,
    /// unless another request moved it already.
    pub(super) async fn call<T, F>(
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
    pub(super) async fn range(
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
    pub(super) async fn txn(
        &self,
        need: Need<'_>,
        txn: TxnRequest,
    ) -> Result<TxnResponse, BackendError> {
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

    pub(super) fn at(&self) -> usize {
        self.current.load(Ordering::Acquire)
    }

    /// The token to send, logging in through the attempt's member when
    /// there is none yet, or when `refused` is the one in use (unless
    /// another request has renewed it meanwhile). `None`: no login needed.
    pub(super) async fn token(
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
    pub(super) async fn explain(&self, at: usize, error: BackendError) -> BackendError {
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
    pub(super) fn classify(&self, status: tonic::Status, need: Need<'_>) -> BackendError {
        match self.refusal(&status, need) {
            Some(reason) => BackendError::unavailable(reason).with_source(status),
            None => classify(status, &self.context),
        }
    }

    /// What an authentication or permission error from etcd means here.
    pub(super) fn refusal(&self, status: &tonic::Status, need: Need<'_>) -> Option<String> {
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
pub(super) fn token_refused(status: &tonic::Status) -> bool {
    status.code() == tonic::Code::Unauthenticated
        || status.message().contains("invalid auth token")
        || status.message().contains("revision of auth store is old")
}

/// A request for etcd, which a member cut off from its quorum refuses at
/// once (instead of waiting): etcd's `hasleader` metadata; with the login's
/// token, if any.
pub(super) fn request<T>(message: T, token: Option<Token>) -> tonic::Request<T> {
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
pub(super) fn prefix_end(prefix: &[u8]) -> Vec<u8> {
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
pub(super) fn get(key: &str) -> RangeRequest {
    RangeRequest {
        key: key.as_bytes().to_vec(),
        ..RangeRequest::default()
    }
}

/// A put of `value` at `key`, attached to `lease` (0: none).
pub(super) fn put(key: &str, value: &[u8], lease: i64) -> RequestOp {
    RequestOp {
        request: Some(Op::RequestPut(PutRequest {
            key: key.as_bytes().to_vec(),
            value: value.to_vec(),
            lease,
        })),
    }
}

/// A compare of `key`'s `target` with `value`, for equality.
pub(super) fn equal(key: &str, target: CompareTarget, value: TargetUnion) -> Compare {
    Compare {
        result: CompareResult::Equal.into(),
        target: target.into(),
        key: key.as_bytes().to_vec(),
        target_union: Some(value),
    }
}

/// "`key` does not exist": its create revision is 0.
pub(super) fn absent(key: &str) -> Compare {
    equal(key, CompareTarget::Create, TargetUnion::CreateRevision(0))
}

/// The keys read by a transaction's range operations.
pub(super) fn read_keys(done: &TxnResponse) -> impl Iterator<Item = &KeyValue> {
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
pub(super) fn moves_on<T>(result: &Result<T, BackendError>) -> bool {
    matches!(
        result,
        Err(BackendError::Unreachable { .. } | BackendError::Unavailable { .. })
    )
}

/// One request on one member; moves the session on when dropped
/// unfinished.
pub(super) struct Attempt<'a> {
    pub(super) members: &'a Members,
    pub(super) at: usize,
    pub(super) finished: bool,
}

impl<'a> Attempt<'a> {
    pub(super) fn new(members: &'a Members) -> Attempt<'a> {
        Attempt {
            members,
            at: members.at(),
            finished: false,
        }
    }

    pub(super) fn channel(&self) -> Channel {
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

/// gRPC's NOT_FOUND status code, which etcd answers for a lease that
/// expired or was revoked.
pub(super) const GRPC_NOT_FOUND: i32 = 5;

/// Sorts an error of a call into what the engine must know (is the lease
/// gone? was the server reached?) and a few plain words for the message (a
/// failed TLS handshake in words that name the file to look at); the
/// status itself stays behind as the source, for the log.
pub(super) fn classify(status: tonic::Status, context: &Context) -> BackendError {
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
