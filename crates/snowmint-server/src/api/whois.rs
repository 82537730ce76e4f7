//! `GET /v1/whois/{id}`: which claim of this node's fleet covered the
//! ID's slot at its millisecond, read from the fleet's claim history.
//!
//! What look-ups may cost the coordinator is bounded per node, however
//! many clients ask ([`Lookups`]):
//!
//! - the last answer read for each slot is kept, and decides every ID of
//!   that slot at or below the mark it read (`Whois::for_id`): those are
//!   answered without the coordinator;
//! - the others read it (two requests each: the slot's mark, then its
//!   history) at most [`RATE`] times a second, with bursts of [`RATE`],
//!   and at most [`MAX_LOOKUPS`] at once; beyond that a client is told
//!   `busy` (429, `Retry-After`). A node that claims no slot from a
//!   coordinator reads nothing, so its answers are not counted.
//!
//! So a flood of look-ups costs the coordinator at most `2 * RATE`
//! requests a second from each node (plus one burst), and a repeated one
//! nothing.

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use axum::Json;
use axum::extract::State;
use axum::http::StatusCode;
use snowmint::{Encoding, SnowflakeId};
use snowmint_fleet::Whois;
use tokio::sync::Semaphore;
use tokio::time::Instant;

use super::params::{IdSegment, Params};
use crate::body::WhoisBody;
use crate::error::ApiError;
use crate::openapi::{
    BadRequest, EncodingParam, NotFound, TooManyRequests, Unavailable, UriTooLong,
};
use crate::state::AppState;

/// Look-ups that may read the coordinator at once.
pub(crate) const MAX_LOOKUPS: usize = 4;

/// Look-ups that may read the coordinator per second, per node (and the
/// burst allowed after a quiet spell).
pub(crate) const RATE: u32 = 10;

/// Slots whose last answer is kept; past it, the oldest is dropped. Each
/// holds the slot's history (`--claim-history-keep` records, 16 by
/// default).
const CACHED_SLOTS: usize = 1024;

/// What whois look-ups may cost the coordinator (see the module docs).
#[derive(Debug)]
pub(crate) struct Lookups {
    running: Arc<Semaphore>,
    bucket: Mutex<Bucket>,
    cache: Mutex<Cache>,
}

/// A token bucket of [`RATE`] look-ups a second.
#[derive(Debug)]
struct Bucket {
    tokens: f64,
    at: Instant,
}

/// The last answer read per slot.
#[derive(Debug, Default)]
struct Cache {
    by_slot: HashMap<u64, Arc<Whois>>,
    /// Slots by when their answer was first kept, oldest first.
    order: VecDeque<u64>,
}

impl Default for Lookups {
    fn default() -> Lookups {
        Lookups {
            running: Arc::new(Semaphore::new(MAX_LOOKUPS)),
            bucket: Mutex::new(Bucket {
                tokens: f64::from(RATE),
                at: Instant::now(),
            }),
            cache: Mutex::new(Cache::default()),
        }
    }
}

impl Lookups {
    /// The answer for `id` from a kept one, when it decides it.
    fn cached(&self, slot: u64, id: SnowflakeId) -> Option<Whois> {
        let cache = self.cache.lock().unwrap_or_else(PoisonError::into_inner);
        cache.by_slot.get(&slot)?.for_id(id)
    }

    /// Keeps `whois` as its slot's last answer.
    fn keep(&self, whois: Whois) {
        let mut cache = self.cache.lock().unwrap_or_else(PoisonError::into_inner);
        let slot = whois.slot;
        if cache.by_slot.insert(slot, Arc::new(whois)).is_none() {
            cache.order.push_back(slot);
            if cache.order.len() > CACHED_SLOTS
                && let Some(oldest) = cache.order.pop_front()
            {
                cache.by_slot.remove(&oldest);
            }
        }
    }

    /// A look-up's turn at the coordinator now, or how long until one.
    fn take_turn(&self) -> Result<(), Duration> {
        let mut bucket = self.bucket.lock().unwrap_or_else(PoisonError::into_inner);
        let now = Instant::now();
        let rate = f64::from(RATE);
        let refilled = bucket.tokens + now.duration_since(bucket.at).as_secs_f64() * rate;
        bucket.tokens = refilled.min(rate);
        bucket.at = now;
        if bucket.tokens >= 1.0 {
            bucket.tokens -= 1.0;
            Ok(())
        } else {
            Err(Duration::from_secs_f64((1.0 - bucket.tokens) / rate))
        }
    }
}

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
        (status = 429, response = TooManyRequests),
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
    let lookups = state.whois_lookups();
    let issuer = state.issuer();
    let layout = issuer.layout();
    let slot = layout.slot_of(layout.node_of(id));
    if let Ok(slot) = slot
        && let Some(whois) = lookups.cached(slot, id)
    {
        return Ok(WhoisBody::new(&whois));
    }
    let busy = |why: String, retry: Duration| {
        ApiError::too_many("busy", format!("{why}; ask again shortly"), retry)
    };
    // A node with no coordinator has no history to read: its answer costs
    // nothing, and needs no turn.
    let coordinated = !matches!(issuer.source().kind(), "static" | "hostname");
    if !coordinated {
        return Err(no_coordinator());
    }
    if let Err(wait) = lookups.take_turn() {
        return Err(busy(
            format!(
                "this node reads the claim history at most {RATE} times a second, and did already"
            ),
            wait.max(Duration::from_secs(1)),
        ));
    }
    let Ok(permit) = Arc::clone(&lookups.running).try_acquire_owned() else {
        return Err(busy(
            format!("{MAX_LOOKUPS} whois look-ups are running on this node already"),
            Duration::from_secs(1),
        ));
    };
    // On a task of its own, holding the permit: a client that goes away
    // neither cancels a coordinator request half-way (which could cost the
    // claim engine its connection) nor frees the permit before the
    // look-up ends (each is bounded by the engine's own time limit).
    let source = Arc::clone(issuer.source());
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
        None => Err(no_coordinator()),
        Some(Err(error)) => Err(ApiError::unavailable(
            "coordinator_unavailable",
            error.to_string(),
            Duration::from_secs(1),
        )),
        Some(Ok(whois)) => {
            let body = WhoisBody::new(&whois);
            lookups.keep(whois);
            Ok(body)
        }
    }
}

/// The answer of a node that claims no slot from a coordinator.
fn no_coordinator() -> ApiError {
    ApiError::status(
        StatusCode::NOT_FOUND,
        "no_coordinator",
        "this node does not claim its slot from a coordinator, so it keeps no claim history; ask a node of the fleet, or run snowmint whois ID --coordinator URL --fleet NAME",
    )
}
