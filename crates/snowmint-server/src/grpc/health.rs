//! `grpc.health.v1.Health`: whether this node may issue IDs.
//!
//! - `snowmint.v1.IdService`: `SERVING` exactly when `/readyz` is 200 (the
//!   node holds a claim in force, its clock is within the policy's bound,
//!   its high-water mark can be written); `NOT_SERVING` otherwise.
//! - The empty name (the server as a whole): `SERVING` while the process
//!   answers, as `/healthz`.
//! - Any other name: `NOT_FOUND`.
//!
//! `Watch` sends the status at once and then each change, checking ten
//! times a second and whenever the node's claim changes.

use std::time::Duration;

use tokio::sync::mpsc;
use tokio_stream::wrappers::ReceiverStream;
use tonic::{Request, Response, Status};
use tonic_health::pb::health_check_response::ServingStatus;
use tonic_health::pb::health_server::Health;
use tonic_health::pb::{HealthCheckRequest, HealthCheckResponse};

use super::{END_WAIT, Stopping, shutting_down, stopped};
use crate::state::AppState;

/// The service name health checks ask about.
pub const SERVICE_NAME: &str = "snowmint.v1.IdService";

/// How often `Watch` looks at readiness between claim changes (the clock
/// and the disk can change it without a claim change).
const WATCH_EVERY: Duration = Duration::from_millis(100);

/// The health service of a node.
#[derive(Debug, Clone)]
pub struct HealthApi {
    state: AppState,
    /// Ends the watches at shutdown.
    stopping: Stopping,
}

impl HealthApi {
    /// The health service over `state`; its watches end when `stopping`
    /// turns true.
    pub fn new(state: AppState, stopping: Stopping) -> HealthApi {
        HealthApi { state, stopping }
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
        let state = self.state.clone();
        let mut stopping = self.stopping.clone();
        tokio::spawn(async move {
            let mut claims = state.issuer().source().state();
            let mut last = None;
            loop {
                let now = status_of(&state, subject).await;
                if last != Some(now) {
                    if sender.send(Ok(response(now))).await.is_err() {
                        return;
                    }
                    last = Some(now);
                }
                tokio::select! {
                    () = sender.closed() => return,
                    () = stopped(&mut stopping) => {
                        let _ = tokio::time::timeout(END_WAIT, sender.send(Err(shutting_down()))).await;
                        return;
                    }
                    () = tokio::time::sleep(WATCH_EVERY) => {}
                    changed = claims.changed() => {
                        if changed.is_err() {
                            // The source is gone: only the poll is left.
                            tokio::time::sleep(WATCH_EVERY).await;
                        }
                    }
                }
            }
        });
        Ok(Response::new(ReceiverStream::new(receiver)))
    }
}
