//! New IDs: `/v1/id` and `/v1/ids?count=N`.
//!
//! This is the hot path: bodies are written by hand (an ID is digits, so
//! nothing needs escaping) rather than through a JSON serializer, with a
//! digit writer of its own because a batch of 4096 IDs spends most of its
//! time turning numbers into text.

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

/// "00" to "99", for writing two digits at a time.
const DIGIT_PAIRS: &[u8; 200] = b"\
    0001020304050607080910111213141516171819\
    2021222324252627282930313233343536373839\
    4041424344454647484950515253545556575859\
    6061626364656667686970717273747576777879\
    8081828384858687888990919293949596979899";

/// Appends `n` in decimal.
#[inline]
fn push_decimal(out: &mut Vec<u8>, mut n: u64) {
    let mut digits = [0u8; 20];
    let mut at = digits.len();
    while n >= 100 {
        let pair = (n % 100) as usize * 2;
        n /= 100;
        at -= 2;
        digits[at..at + 2].copy_from_slice(&DIGIT_PAIRS[pair..pair + 2]);
    }
    if n >= 10 {
        let pair = n as usize * 2;
        at -= 2;
        digits[at..at + 2].copy_from_slice(&DIGIT_PAIRS[pair..pair + 2]);
    } else {
        at -= 1;
        digits[at] = b'0' + n as u8;
    }
    out.extend_from_slice(&digits[at..]);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decimal_digits_match_the_standard_formatting() {
        let mut samples = vec![
            0,
            1,
            9,
            10,
            99,
            100,
            101,
            999,
            1000,
            u64::MAX,
            (1 << 63) - 1,
        ];
        // Every power of ten and its neighbours, and a spread of others.
        let mut p = 1u64;
        while let Some(next) = p.checked_mul(10) {
            samples.extend([p - 1, p, p + 1]);
            p = next;
        }
        let mut x = 0x9E37_79B9_7F4A_7C15u64;
        for _ in 0..10_000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            samples.push(x >> (x % 64));
        }
        for n in samples {
            let mut out = Vec::new();
            push_decimal(&mut out, n);
            assert_eq!(String::from_utf8(out).unwrap(), n.to_string());
        }
    }
}
