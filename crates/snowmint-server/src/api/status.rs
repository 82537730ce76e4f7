//! The node and the service: `/v1/node`, `/healthz`, `/readyz`,
//! `/metrics`, `/openapi.json`.

use axum::Json;
use axum::extract::State;
use axum::http::HeaderValue;
use axum::http::header::CONTENT_TYPE;
use axum::response::{IntoResponse, Response};

use super::params::Params;
use crate::body::{NodeDescription, Status, StatusWord};
use crate::error::ApiError;
use crate::openapi::{BadRequest, Document, Unavailable, UriTooLong};
use crate::state::AppState;

/// This node
///
/// The node's identity and claim, layout, clock policy and high-water
/// mark, and its listeners: what guards each, and which issue IDs to a
/// client that shows no credential. Takes no parameters.
#[utoipa::path(
    get,
    path = "/v1/node",
    operation_id = "describeNode",
    tag = "service",
    responses(
        (status = 200, description = "The node.", body = NodeDescription),
        (status = 400, response = BadRequest),
        (status = 414, response = UriTooLong),
    ),
)]
pub async fn node(
    State(state): State<AppState>,
    params: Params,
) -> Result<Json<NodeDescription>, ApiError> {
    params.allow(&[])?;
    Ok(Json(NodeDescription::new(&state)))
}

/// Liveness
///
/// 200 while the process answers.
#[utoipa::path(
    get,
    path = "/healthz",
    operation_id = "healthz",
    tag = "service",
    responses(
        (status = 200, description = "Alive.", body = Status),
        (status = 414, response = UriTooLong),
    ),
)]
pub async fn healthz() -> Json<Status> {
    Json(Status {
        status: StatusWord::Ok,
    })
}

/// Readiness
///
/// 200 while an ID request would be answered; 503 otherwise, with the
/// refusal it would get (no claim, clock behind or out of range, the
/// high-water mark not writable, every bearer token revoked).
#[utoipa::path(
    get,
    path = "/readyz",
    operation_id = "readyz",
    tag = "service",
    responses(
        (status = 200, description = "Ready.", body = Status),
        (status = 414, response = UriTooLong),
        (status = 503, response = Unavailable),
    ),
)]
pub async fn readyz(State(state): State<AppState>) -> Result<Json<Status>, ApiError> {
    if let Some(reason) = state.auth().and_then(|auth| auth.tokens().revoked()) {
        // A node whose every token is revoked serves nobody an ID: a load
        // balancer should send clients elsewhere.
        return Err(ApiError::unavailable(
            "tokens_revoked",
            format!(
                "every bearer token is revoked ({reason}); guarded endpoints refuse every request until the file holds a token"
            ),
            std::time::Duration::from_secs(1),
        ));
    }
    state.issuer().readiness().await?;
    Ok(Json(Status {
        status: StatusWord::Ready,
    }))
}

/// Prometheus metrics
///
/// IDs issued, batch sizes, sequence-exhaustion waits, clock regressions,
/// refusals by reason, node state, high-water mark; for a node with a
/// coordinator, the claim state, time to deadline and claim changes.
#[utoipa::path(
    get,
    path = "/metrics",
    operation_id = "metrics",
    tag = "service",
    responses(
        (status = 200, description = "Prometheus text exposition format 0.0.4.", body = String, content_type = "text/plain"),
        (status = 414, response = UriTooLong),
    ),
)]
pub async fn metrics(State(state): State<AppState>) -> Response {
    let text = state.metrics().render(state.issuer());
    (
        [(
            CONTENT_TYPE,
            HeaderValue::from_static("text/plain; version=0.0.4; charset=utf-8"),
        )],
        text,
    )
        .into_response()
}

/// This document
///
/// The API described as OpenAPI 3.
#[utoipa::path(
    get,
    path = "/openapi.json",
    operation_id = "openapi",
    tag = "service",
    responses(
        (status = 200, description = "The OpenAPI document.", body = inline(Document)),
        (status = 414, response = UriTooLong),
    ),
)]
pub async fn openapi(State(state): State<AppState>) -> Response {
    let scope = state.auth().map(|auth| auth.scope());
    (
        [(CONTENT_TYPE, HeaderValue::from_static("application/json"))],
        crate::openapi::document_text_for(scope),
    )
        .into_response()
}
