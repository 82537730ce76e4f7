//! `GET /v1/whois/{id}`: which claim of this node's fleet covered the
//! ID's slot at its millisecond, read from the fleet's claim history.

use std::sync::Arc;
use std::time::Duration;

use axum::Json;
use axum::extract::State;
use axum::http::StatusCode;
use snowmint::{Encoding, SnowflakeId};

use super::params::{IdSegment, Params};
use crate::body::WhoisBody;
use crate::error::ApiError;
use crate::openapi::{BadRequest, EncodingParam, NotFound, Unavailable, UriTooLong};
use crate::state::AppState;

/// Look-ups that may run at once: each reads the coordinator, so that a
/// flood of them costs the coordinator a bounded load.
pub(crate) const MAX_LOOKUPS: usize = 4;

/// Who issued an ID
///
/// Which claim of this node's fleet covered the ID's slot at the
/// millisecond it carries, read from the fleet's claim history on the
/// coordinator: the holder (host, pid, addresses, version), the claim's
/// generation, start and end. The answer is `covered`, `not_covered`,
/// `conflict` (two claims covered it, which must never happen) or
/// `pruned`. The ID is read in the node's layout (the fleet's). Only a
/// node that claims its slot from a coordinator keeps a history (404
/// `no_coordinator` otherwise).
#[utoipa::path(
    get,
    path = "/v1/whois/{id}",
    operation_id = "whois",
    tag = "service",
    params(
        ("id" = String, Path, description = "The ID: decimal by default, or in `encoding`.", example = "1724551110457221119"),
        ("encoding" = inline(Option<EncodingParam>), Query, description = "How `id` is written."),
    ),
    responses(
        (status = 200, description = "What the claim history says of the ID.", body = WhoisBody),
        (status = 400, response = BadRequest),
        (status = 404, response = NotFound),
        (status = 414, response = UriTooLong),
        (status = 503, response = Unavailable),
    ),
)]
pub async fn whois(
    State(state): State<AppState>,
    IdSegment(text): IdSegment,
    params: Params,
) -> Result<Json<WhoisBody>, ApiError> {
    params.allow(&["encoding"])?;
    let encoding = match params.get("encoding")? {
        Some(name) => name
            .parse::<Encoding>()
            .map_err(|e| ApiError::from_core("encoding", e))?,
        None => Encoding::Decimal,
    };
    let id = SnowflakeId::parse(encoding, &text).map_err(|e| ApiError::from_core("id", e))?;
    look_up(&state, id).await.map(Json)
}

/// The claim history's answer for `id`, as HTTP's `/v1/whois/{id}` and
/// gRPC's `Whois` give it (each reads its own typed input first).
pub(crate) async fn look_up(state: &AppState, id: SnowflakeId) -> Result<WhoisBody, ApiError> {
    let Ok(permit) = Arc::clone(state.whois_permits()).try_acquire_owned() else {
        return Err(ApiError::unavailable(
            "busy",
            format!(
                "{MAX_LOOKUPS} whois look-ups are running on this node already; ask again shortly"
            ),
            Duration::from_secs(1),
        ));
    };
    // On a task of its own, holding the permit: a client that goes away
    // neither cancels a coordinator request half-way (which could cost the
    // claim engine its connection) nor frees the permit before the
    // look-up ends (each is bounded by the engine's own time limit).
    let source = Arc::clone(state.issuer().source());
    let looked_up = tokio::spawn(async move {
        let answer = source.whois(id).await;
        drop(permit);
        answer
    })
    .await;
    let looked_up = looked_up.map_err(|error| {
        ApiError::unavailable(
            "coordinator_unavailable",
            format!("the look-up stopped: {error}"),
            Duration::from_secs(1),
        )
    })?;
    match looked_up {
        None => Err(ApiError::status(
            StatusCode::NOT_FOUND,
            "no_coordinator",
            "this node does not claim its slot from a coordinator, so it keeps no claim history; ask a node of the fleet, or run snowmint whois ID --coordinator URL --fleet NAME",
        )),
        Some(Err(error)) => Err(ApiError::unavailable(
            "coordinator_unavailable",
            error.to_string(),
            Duration::from_secs(1),
        )),
        Some(Ok(whois)) => Ok(WhoisBody::new(&whois)),
    }
}
