//! New IDs: `/v1/id` and `/v1/ids?count=N`.
//!
//! This is the hot path: bodies are written by hand (an ID is digits, so
//! nothing needs escaping) rather than through a JSON serializer.

use std::fmt::Write;

use axum::extract::State;
use axum::http::HeaderValue;
use axum::http::header::CONTENT_TYPE;
use axum::response::{IntoResponse, Response};
use snowmint::SnowflakeId;

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
    let mut body = String::with_capacity(32);
    if text {
        let _ = write!(body, "{id}");
        Ok(([(CONTENT_TYPE, TEXT)], body).into_response())
    } else {
        let _ = write!(body, "{{\"id\":\"{id}\"}}");
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
    let mut body = String::with_capacity(16 + ids.len() * 22);
    if text {
        for id in &ids {
            let _ = writeln!(body, "{id}");
        }
        Ok(([(CONTENT_TYPE, TEXT)], body).into_response())
    } else {
        body.push_str("{\"ids\":[");
        write_quoted(&mut body, &ids);
        body.push_str("]}");
        Ok(([(CONTENT_TYPE, JSON)], body).into_response())
    }
}

fn write_quoted(body: &mut String, ids: &[SnowflakeId]) {
    for (i, id) in ids.iter().enumerate() {
        if i > 0 {
            body.push(',');
        }
        let _ = write!(body, "\"{id}\"");
    }
}

fn refused(state: &AppState, refusal: Refusal) -> ApiError {
    state.metrics().refused(&refusal);
    refusal.into()
}
