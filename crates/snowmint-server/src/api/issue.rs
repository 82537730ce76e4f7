//! New IDs: `/v1/id` and `/v1/ids?count=N`.
//!
//! This is the hot path: bodies are written by hand (an ID is digits, so
//! nothing needs escaping) rather than through a JSON serializer, with the
//! core's two-digits-at-a-time writer ([`snowmint::push_decimal`]) because a
//! batch of 4096 IDs spends most of its time turning numbers into text.

use axum::extract::State;
use axum::http::HeaderValue;
use axum::http::header::CONTENT_TYPE;
use axum::response::{IntoResponse, Response};
use snowmint::{SnowflakeId, push_decimal};

use super::params::{Params, WantsText};
use crate::error::ApiError;
use crate::issuer::Refusal;
use crate::state::AppState;

/// The largest `count` of `/v1/ids`: one millisecond's worth of IDs.
pub const MAX_BATCH: u64 = 4096;

const JSON: HeaderValue = HeaderValue::from_static("application/json");
const TEXT: HeaderValue = HeaderValue::from_static("text/plain; charset=utf-8");

/// `GET /v1/id`: `{"id":"..."}`, or the bare number for `Accept: text/plain`.
pub async fn next_id(
    State(state): State<AppState>,
    WantsText(text): WantsText,
    params: Params,
) -> Result<Response, ApiError> {
    params.allow(&[])?;
    let id = state
        .issuer()
        .next_id()
        .await
        .map_err(|refusal| refused(&state, refusal))?;
    state.metrics().issued(1);
    let mut body = Vec::with_capacity(32);
    if text {
        push_decimal(&mut body, id.as_u64());
        Ok(([(CONTENT_TYPE, TEXT)], body).into_response())
    } else {
        body.extend_from_slice(b"{\"id\":\"");
        push_decimal(&mut body, id.as_u64());
        body.extend_from_slice(b"\"}");
        Ok(([(CONTENT_TYPE, JSON)], body).into_response())
    }
}

/// `GET /v1/ids?count=N`: `{"ids":["...",...]}` with N in 1..=4096, or one
/// ID per line for `Accept: text/plain`.
pub async fn next_ids(
    State(state): State<AppState>,
    WantsText(text): WantsText,
    params: Params,
) -> Result<Response, ApiError> {
    let count = params.allow(&["count"])?.bounded("count", 1, MAX_BATCH)? as usize;
    let mut ids = Vec::with_capacity(count);
    state
        .issuer()
        .next_ids(count, &mut ids)
        .await
        .map_err(|refusal| refused(&state, refusal))?;
    state.metrics().issued(count as u64);
    state.metrics().batch(count);
    // 19 digits at most, plus quotes and a comma.
    let mut body = Vec::with_capacity(16 + ids.len() * 22);
    if text {
        for id in &ids {
            push_decimal(&mut body, id.as_u64());
            body.push(b'\n');
        }
        Ok(([(CONTENT_TYPE, TEXT)], body).into_response())
    } else {
        body.extend_from_slice(b"{\"ids\":[");
        write_quoted(&mut body, &ids);
        body.extend_from_slice(b"]}");
        Ok(([(CONTENT_TYPE, JSON)], body).into_response())
    }
}

fn write_quoted(body: &mut Vec<u8>, ids: &[SnowflakeId]) {
    for (i, id) in ids.iter().enumerate() {
        if i > 0 {
            body.push(b',');
        }
        body.push(b'"');
        push_decimal(body, id.as_u64());
        body.push(b'"');
    }
}

fn refused(state: &AppState, refusal: Refusal) -> ApiError {
    // Per request at debug: the issuer logs each episode (regression,
    // fencing, unwritable mark) once at warn or error.
    tracing::debug!(code = refusal.code(), %refusal, "refused");
    state.metrics().refused(&refusal);
    refusal.into()
}
