//! New IDs: the bodies of `/v1/id` and `/v1/ids`.
//!
//! This is the hot path. Each body is a serde type (which is what the
//! document describes), and each also writes itself into bytes directly,
//! with the core's two-digits-at-a-time writer ([`push_decimal`]): an ID is
//! digits, so nothing needs escaping, and a batch of 4096 IDs spends most
//! of its time turning numbers into text. Tests check that the bytes are
//! exactly serde's.

use axum::http::HeaderValue;
use axum::http::header::CONTENT_TYPE;
use axum::response::{IntoResponse, Response};
use serde::Serialize;
use snowmint::{SnowflakeId, push_decimal};
use utoipa::openapi::RefOr;
use utoipa::openapi::schema::{ArrayBuilder, ObjectBuilder, Schema, Type};
use utoipa::{PartialSchema, ToSchema};

use super::decimal_id;
use snowmint_fleet::MAX_BATCH;

const JSON: HeaderValue = HeaderValue::from_static("application/json");
const TEXT: HeaderValue = HeaderValue::from_static("text/plain; charset=utf-8");

/// One new ID (`GET /v1/id`): `{"id":"..."}`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(as = Id)]
pub struct NewId {
    /// The ID.
    #[schema(schema_with = decimal_id)]
    pub id: SnowflakeId,
}

impl NewId {
    /// The body as JSON, as serde would write it.
    pub fn to_json(&self) -> Vec<u8> {
        let mut body = Vec::with_capacity(32);
        body.extend_from_slice(b"{\"id\":\"");
        push_decimal(&mut body, self.id.as_u64());
        body.extend_from_slice(b"\"}");
        body
    }
}

impl IntoResponse for NewId {
    fn into_response(self) -> Response {
        ([(CONTENT_TYPE, JSON)], self.to_json()).into_response()
    }
}

/// New IDs in increasing order (`GET /v1/ids`): `{"ids":["...",...]}`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(as = Ids)]
pub struct NewIds<'a> {
    /// The IDs, strictly increasing.
    #[schema(schema_with = batch)]
    pub ids: &'a [SnowflakeId],
}

/// The schema of a batch: 1 to `MAX_BATCH` decimal IDs.
fn batch() -> ArrayBuilder {
    ArrayBuilder::new()
        .items(decimal_id())
        .min_items(Some(1))
        .max_items(Some(MAX_BATCH as usize))
}

impl NewIds<'_> {
    /// The body as JSON, as serde would write it.
    pub fn to_json(&self) -> Vec<u8> {
        // 19 digits at most, plus quotes and a comma.
        let mut body = Vec::with_capacity(16 + self.ids.len() * 22);
        body.extend_from_slice(b"{\"ids\":[");
        for (i, id) in self.ids.iter().enumerate() {
            if i > 0 {
                body.push(b',');
            }
            body.push(b'"');
            push_decimal(&mut body, id.as_u64());
            body.push(b'"');
        }
        body.extend_from_slice(b"]}");
        body
    }
}

impl IntoResponse for NewIds<'_> {
    fn into_response(self) -> Response {
        ([(CONTENT_TYPE, JSON)], self.to_json()).into_response()
    }
}

/// One new ID as `text/plain` (`GET /v1/id` with `Accept: text/plain`):
/// the bare decimal number.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IdText(pub SnowflakeId);

impl IdText {
    /// The body.
    pub fn to_text(&self) -> Vec<u8> {
        let mut body = Vec::with_capacity(20);
        push_decimal(&mut body, self.0.as_u64());
        body
    }
}

impl IntoResponse for IdText {
    fn into_response(self) -> Response {
        ([(CONTENT_TYPE, TEXT)], self.to_text()).into_response()
    }
}

impl PartialSchema for IdText {
    fn schema() -> RefOr<Schema> {
        decimal_id().description(Some("The ID in decimal.")).into()
    }
}

impl ToSchema for IdText {}

/// New IDs as `text/plain` (`GET /v1/ids` with `Accept: text/plain`): one
/// decimal ID per line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IdsText<'a>(pub &'a [SnowflakeId]);

impl IdsText<'_> {
    /// The body.
    pub fn to_text(&self) -> Vec<u8> {
        let mut body = Vec::with_capacity(self.0.len() * 20);
        for id in self.0 {
            push_decimal(&mut body, id.as_u64());
            body.push(b'\n');
        }
        body
    }
}

impl IntoResponse for IdsText<'_> {
    fn into_response(self) -> Response {
        ([(CONTENT_TYPE, TEXT)], self.to_text()).into_response()
    }
}

impl PartialSchema for IdsText<'_> {
    fn schema() -> RefOr<Schema> {
        ObjectBuilder::new()
            .schema_type(Type::String)
            .description(Some("One decimal ID per line."))
            .pattern(Some("^([0-9]{1,20}\\n)+$"))
            .into()
    }
}

impl ToSchema for IdsText<'_> {}

#[cfg(test)]
mod tests {
    use super::*;

    /// Numbers around every power of ten, and a spread of others.
    fn samples() -> Vec<u64> {
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
        samples
    }

    #[test]
    fn bodies_are_written_as_serde_writes_them() {
        let ids: Vec<SnowflakeId> = samples().into_iter().map(SnowflakeId::from_u64).collect();
        for id in &ids {
            let new = NewId { id: *id };
            assert_eq!(new.to_json(), serde_json::to_vec(&new).unwrap());
            assert_eq!(IdText(*id).to_text(), id.to_string().into_bytes());
        }
        for batch in [&ids[..0], &ids[..1], &ids[..]] {
            let new = NewIds { ids: batch };
            assert_eq!(new.to_json(), serde_json::to_vec(&new).unwrap());
            let lines: String = batch.iter().map(|id| format!("{id}\n")).collect();
            assert_eq!(IdsText(batch).to_text(), lines.into_bytes());
        }
    }
}
