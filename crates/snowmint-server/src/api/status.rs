//! The node and the service: `/v1/node`, `/healthz`, `/readyz`,
//! `/metrics`, `/openapi.json`.

use std::time::Instant;

use axum::Json;
use axum::extract::State;
use axum::http::HeaderValue;
use axum::http::header::CONTENT_TYPE;
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};
use snowmint::format_time;
use snowmint_fleet::CoordinatorStatus;

use super::calc::{layout_name, spec};
use super::params::Params;
use crate::error::ApiError;
use crate::state::AppState;

/// `GET /v1/node`: who this node is and whether it may issue.
pub async fn node(State(state): State<AppState>, params: Params) -> Result<Json<Value>, ApiError> {
    params.allow(&[])?;
    let issuer = state.issuer();
    let report = issuer.report();
    let layout = issuer.layout();
    let policy = issuer.clock_policy();
    let claim = report.claim.as_ref();
    let time = |ms: Option<i64>| ms.map(|ms| format_time(ms).to_string());
    Ok(Json(json!({
        "state": if claim.is_some() { "active" } else { "fenced" },
        "ready": report.readiness.is_ok(),
        "reason": report.fenced_reason.clone().or_else(|| report.readiness.as_ref().err().map(ToString::to_string)),
        "source": report.source,
        "slot": claim.map(|c| c.slot),
        "datacenter": claim.map(|c| c.node.datacenter),
        "machine": claim.map(|c| c.node.machine),
        "generation": claim.map(|c| c.generation),
        "claim_valid_for_ms": report.valid_for.map(|d| d.as_millis() as u64),
        "claim_floor_ms": claim.and_then(|c| c.floor_ms),
        "claim_details": claim.map(|c| &c.details),
        "layout": layout_name(&layout),
        "spec": spec(&layout),
        "epoch_ms": layout.epoch_ms(),
        "clock_policy": policy.name(),
        "clock_max_ms": policy.bound().map(|d| d.as_millis() as u64),
        "clock_ms": issuer.clock().now_ms(),
        "high_water_mark_ms": report.high_water_mark_ms,
        "high_water_mark": time(report.high_water_mark_ms),
        "last_timestamp_ms": report.last_timestamp_ms,
        "state_file": report.state_file.as_ref().map(|p| p.display().to_string()),
        "coordinator": report.coordinator.as_ref().map(coordinator),
    })))
}

/// The claim engine's side of `/v1/node`: where it claims, what it holds,
/// and how often its claim changed.
fn coordinator(status: &CoordinatorStatus) -> Value {
    let now = Instant::now();
    json!({
        "url": status.url,
        "fleet": status.fleet,
        "slots": status.slots.to_string(),
        "state": status.state.name(),
        "slot": status.slot,
        "session_kind": status.session_kind,
        "session_id": status.session_id,
        "ttl_ms": status.ttl.as_millis() as u64,
        "time_to_deadline_ms": status.time_to_deadline(now).map(|left| left.as_millis() as u64),
        "claims_acquired": status.claims,
        "claims_lost": status.losses,
        "holder": status.holder,
    })
}

/// `GET /healthz`: the process is up and answering.
pub async fn healthz() -> Response {
    (
        [(CONTENT_TYPE, HeaderValue::from_static("application/json"))],
        "{\"status\":\"ok\"}",
    )
        .into_response()
}

/// `GET /readyz`: 200 while the node may issue IDs, else 503 saying why.
pub async fn readyz(State(state): State<AppState>) -> Result<Response, ApiError> {
    state.issuer().readiness()?;
    Ok((
        [(CONTENT_TYPE, HeaderValue::from_static("application/json"))],
        "{\"status\":\"ready\"}",
    )
        .into_response())
}

/// `GET /metrics`: Prometheus text format.
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

/// `GET /openapi.json`: the API described as OpenAPI 3.
pub async fn openapi() -> Response {
    (
        [(CONTENT_TYPE, HeaderValue::from_static("application/json"))],
        crate::openapi::document_text(),
    )
        .into_response()
}
