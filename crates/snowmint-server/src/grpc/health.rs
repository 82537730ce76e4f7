//! `grpc.health.v1.Health`: whether this node may issue IDs.
//!
//! - `snowmint.v1.IdService`: `SERVING` exactly when `/readyz` is 200 (the
//!   node holds a claim in force, its clock is within the policy's bound,
//!   its high-water mark can be written); `NOT_SERVING` otherwise.
//! - The empty name (the server as a whole): `SERVING` while the process
//!   answers, as `/healthz`.
//! - Any other name: `NOT_FOUND`.
//!
//! `Watch` sends the status at once and then each change. One task per
//! server follows readiness for all watches (whenever the node's claim
//! changes, and ten times a second for what else can change it: the clock,
//! the disk), and only while someone watches; each watch waits on the
//! channel it publishes to, so a watch costs nothing between changes
//! however many there are.

use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use tokio::sync::{mpsc, watch};
use tokio_stream::wrappers::ReceiverStream;
use tonic::{Request, Response, Status};
use tonic_health::pb::health_check_response::ServingStatus;
use tonic_health::pb::health_server::Health;
use tonic_health::pb::{HealthCheckRequest, HealthCheckResponse};

use super::{END_WAIT, Stopping, shutting_down, stopped};
use crate::state::AppState;

/// The service name health checks ask about.
pub const SERVICE_NAME: &str = "snowmint.v1.IdService";

/// How often readiness is looked at between claim changes while someone
/// watches (the clock and the disk can change it without a claim change).
const WATCH_EVERY: Duration = Duration::from_millis(100);

/// The health service of a node.
#[derive(Debug, Clone)]
pub struct HealthApi {
    state: AppState,
    /// Ends the watches at shutdown.
    stopping: Stopping,
    /// Readiness as the watches see it.
    feed: Arc<Feed>,
}

impl HealthApi {
    /// The health service over `state`; its watches end when `stopping`
    /// turns true.
    pub fn new(state: AppState, stopping: Stopping) -> HealthApi {
        HealthApi {
            state,
            stopping,
            feed: Arc::new(Feed {
                status: watch::Sender::new(ServingStatus::Unknown),
                following: Mutex::new(false),
            }),
        }
    }
}

/// The node's readiness, published to every watch by one task that runs
/// while anyone watches.
#[derive(Debug)]
struct Feed {
    status: watch::Sender<ServingStatus>,
    /// Whether the task runs; taken with the subscription, so that a
    /// subscriber never misses a task that is just ending.
    following: Mutex<bool>,
}

impl Feed {
    /// A receiver of readiness, starting the task if none runs.
    async fn subscribe(self: &Arc<Feed>, state: &AppState) -> watch::Receiver<ServingStatus> {
        // Subscribed under the lock: a task that is about to end for lack
        // of receivers either sees this one or has already said it ended.
        let (receiver, start) = {
            let mut following = self
                .following
                .lock()
                .unwrap_or_else(PoisonError::into_inner);
            (
                self.status.subscribe(),
                !std::mem::replace(&mut *following, true),
            )
        };
        if start {
            // The first watcher gets the status now, not a tick later.
            self.status
                .send_replace(status_of(state, Subject::Ids).await);
            tokio::spawn(Arc::clone(self).follow(state.clone()));
        }
        receiver
    }

    /// Publishes readiness on every claim change and every
    /// [`WATCH_EVERY`], until nobody watches.
    async fn follow(self: Arc<Feed>, state: AppState) {
        let mut claims = state.issuer().source().state();
        let mut claims_open = true;
        loop {
            tokio::select! {
                () = tokio::time::sleep(WATCH_EVERY) => {}
                changed = claims.changed(), if claims_open => claims_open = changed.is_ok(),
            }
            {
                let mut following = self
                    .following
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner);
                if self.status.receiver_count() == 0 {
                    *following = false;
                    return;
                }
            }
            let now = status_of(&state, Subject::Ids).await;
            self.status
                .send_if_modified(|status| std::mem::replace(status, now) != now);
        }
    }
}

/// Which service a request asks about.
#[derive(Debug, Clone, Copy)]
enum Subject {
    Server,
    Ids,
}

fn subject(request: &HealthCheckRequest) -> Result<Subject, Status> {
    match request.service.as_str() {
        "" => Ok(Subject::Server),
        SERVICE_NAME => Ok(Subject::Ids),
        other => Err(Status::not_found(format!(
            "no service {:?} here (this server has {SERVICE_NAME:?}, and \"\" for the server itself)",
            snowmint::value::echo(other)
        ))),
    }
}

async fn status_of(state: &AppState, subject: Subject) -> ServingStatus {
    match subject {
        Subject::Server => ServingStatus::Serving,
        Subject::Ids => match state.issuer().readiness().await {
            Ok(()) => ServingStatus::Serving,
            Err(_) => ServingStatus::NotServing,
        },
    }
}

fn response(status: ServingStatus) -> HealthCheckResponse {
    HealthCheckResponse {
        status: status.into(),
    }
}

#[tonic::async_trait]
impl Health for HealthApi {
    async fn check(
        &self,
        request: Request<HealthCheckRequest>,
    ) -> Result<Response<HealthCheckResponse>, Status> {
        let subject = subject(request.get_ref())?;
        Ok(Response::new(response(
            status_of(&self.state, subject).await,
        )))
    }

    type WatchStream = ReceiverStream<Result<HealthCheckResponse, Status>>;

    async fn watch(
        &self,
        request: Request<HealthCheckRequest>,
    ) -> Result<Response<Self::WatchStream>, Status> {
        let subject = subject(request.get_ref())?;
        let (sender, receiver) = mpsc::channel(1);
        let mut stopping = self.stopping.clone();
        let mut status = match subject {
            Subject::Ids => Some(self.feed.subscribe(&self.state).await),
            Subject::Server => None,
        };
        tokio::spawn(async move {
            let mut last = None;
            loop {
                let now = status
                    .as_mut()
                    .map_or(ServingStatus::Serving, |s| *s.borrow_and_update());
                if last != Some(now) {
                    if sender.send(Ok(response(now))).await.is_err() {
                        return;
                    }
                    last = Some(now);
                }
                let changed = async {
                    match status.as_mut() {
                        Some(status) => status.changed().await.is_ok(),
                        // The server's own status never changes.
                        None => std::future::pending().await,
                    }
                };
                tokio::select! {
                    () = sender.closed() => return,
                    () = stopped(&mut stopping) => {
                        let _ = tokio::time::timeout(END_WAIT, sender.send(Err(shutting_down()))).await;
                        return;
                    }
                    open = changed => if !open { return },
                }
            }
        });
        Ok(Response::new(ReceiverStream::new(receiver)))
    }
}
