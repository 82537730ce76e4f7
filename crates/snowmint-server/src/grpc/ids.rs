//! `snowmint.v1.IdService`: new IDs (`NextIds`, `StreamIds`) and the
//! calculator (`Decode`, `Encode`, `Range`, `GetLayout`, `GetNode`,
//! `Inspect`).
//!
//! The calculator methods call the core with the request's typed fields,
//! reading what arrives as text (times, layouts, encodings, ID text) with
//! the same readers as the HTTP API (`inputs.rs`), so that their answers
//! and messages are HTTP's. An empty string is a field not given, as
//! proto3 cannot tell them apart.

use snowmint::SnowflakeId;
use snowmint_fleet::MAX_BATCH;
use tokio::sync::mpsc;
use tokio_stream::wrappers::ReceiverStream;
use tonic::{Request, Response, Status};

use super::pb::id_service_server::IdService;
use super::status::{api_error, bounded, from_core, refused, rejected};
use super::{END_WAIT, Stopping, pb, shutting_down, stopped};
use crate::body::{
    ClaimRecordBody, DecodedId, FencingState, IdRange, LayoutDescription, NodeDescription,
    WhoisBody,
};
use crate::inputs::{self, Rejection, refused as core_refused};
use crate::state::AppState;

/// Batches a stream may have made but its client not yet taken, on top of
/// what HTTP/2 flow control lets through: a slow reader holds the server
/// at this, not at whatever it could make meanwhile.
const STREAM_QUEUE: usize = 2;

/// The `IdService` of a node.
#[derive(Debug, Clone)]
pub struct IdApi {
    state: AppState,
    /// Ends the streams at shutdown.
    stopping: Stopping,
}

impl IdApi {
    /// The service over `state`, the same the HTTP API uses; its streams
    /// end when `stopping` turns true.
    pub fn new(state: AppState, stopping: Stopping) -> IdApi {
        IdApi { state, stopping }
    }
}

/// `count` new IDs, counted in the metrics, or the refusal as a status.
async fn issue(state: &AppState, count: usize) -> Result<pb::IdBatch, Status> {
    let mut ids = Vec::with_capacity(count);
    let turn = state.batch_turn(count).await;
    state
        .issuer()
        .next_ids(count, &mut ids)
        .await
        .map_err(|refusal| refused(state, refusal))?;
    drop(turn);
    state.metrics().issued(count as u64);
    Ok(pb::IdBatch {
        ids: ids.into_iter().map(SnowflakeId::as_u64).collect(),
    })
}

/// A string field, as given: `None` when empty.
fn given(text: &str) -> Option<&str> {
    (!text.is_empty()).then_some(text)
}

/// The layout a request asks for: the node's, unless its
/// [`pb::LayoutChoice`] names another.
fn layout_of(
    state: &AppState,
    choice: Option<&pb::LayoutChoice>,
) -> Result<snowmint::Layout, Status> {
    let (layout, epoch) = choice.map_or((None, None), |c| (given(&c.layout), given(&c.epoch)));
    inputs::layout(state.issuer().layout(), layout, epoch).map_err(rejected)
}

#[tonic::async_trait]
impl IdService for IdApi {
    async fn next_ids(
        &self,
        request: Request<pb::NextIdsRequest>,
    ) -> Result<Response<pb::IdBatch>, Status> {
        self.state.metrics().grpc_call("NextIds");
        let count = bounded("count", request.get_ref().count, MAX_BATCH)? as usize;
        let batch = issue(&self.state, count).await?;
        self.state.metrics().batch(count);
        Ok(Response::new(batch))
    }

    type StreamIdsStream = ReceiverStream<Result<pb::IdBatch, Status>>;

    async fn stream_ids(
        &self,
        request: Request<pb::StreamIdsRequest>,
    ) -> Result<Response<Self::StreamIdsStream>, Status> {
        self.state.metrics().grpc_call("StreamIds");
        let pb::StreamIdsRequest { batch, total } = request.into_inner();
        let batch = bounded("batch", batch, MAX_BATCH)?;
        // `None`: until the client cancels.
        let mut left = (total > 0).then_some(total);
        let size = move |left: Option<u64>| left.map_or(batch, |left| left.min(batch)) as usize;
        // The first batch is made here, so that a node that refuses says so
        // in the call's status, with its retry delay, not in a stream.
        let first = issue(&self.state, size(left)).await?;
        left = left.map(|n| n - first.ids.len() as u64);
        let (sender, receiver) = mpsc::channel(STREAM_QUEUE);
        let state = self.state.clone();
        let mut stopping = self.stopping.clone();
        tokio::spawn(async move {
            if sender.send(Ok(first)).await.is_err() {
                return;
            }
            while left != Some(0) {
                // Room first, then IDs: an ID is made only when it can be
                // queued, so none waits in the queue longer than a batch
                // ahead of its reader, and a gone reader costs none.
                let permit = tokio::select! {
                    permit = sender.reserve() => match permit {
                        Ok(permit) => permit,
                        Err(_) => return,
                    },
                    () = stopped(&mut stopping) => {
                        // After what is queued, when the reader takes it
                        // within END_WAIT; a reader that does not read gets
                        // the end of the stream when its connection closes.
                        let _ = tokio::time::timeout(END_WAIT, sender.send(Err(shutting_down()))).await;
                        return;
                    }
                };
                match issue(&state, size(left)).await {
                    Ok(next) => {
                        left = left.map(|n| n - next.ids.len() as u64);
                        permit.send(Ok(next));
                    }
                    Err(status) => {
                        permit.send(Err(status));
                        return;
                    }
                }
            }
        });
        Ok(Response::new(ReceiverStream::new(receiver)))
    }

    async fn decode(
        &self,
        request: Request<pb::DecodeRequest>,
    ) -> Result<Response<pb::DecodedId>, Status> {
        self.state.metrics().grpc_call("Decode");
        let request = request.into_inner();
        let layout = layout_of(&self.state, request.layout.as_ref())?;
        let decoded = inputs::encoding(given(&request.encoding))
            .and_then(|encoding| inputs::id(&layout, &request.id, encoding))
            .map_err(rejected)?;
        let decoded = DecodedId::new(&layout, decoded)
            .map_err(core_refused("id"))
            .map_err(rejected)?;
        Ok(Response::new(decoded_id(decoded)))
    }

    async fn encode(
        &self,
        request: Request<pb::EncodeRequest>,
    ) -> Result<Response<pb::DecodedId>, Status> {
        self.state.metrics().grpc_call("Encode");
        let request = request.into_inner();
        let layout = layout_of(&self.state, request.layout.as_ref())?;
        let clock = self.state.issuer().clock().as_ref();
        let id = inputs::instant("timestamp", given(&request.timestamp), &layout, clock)
            .and_then(|timestamp_ms| {
                // The family's names, and each Twitter-era number that is
                // not 0 (proto3 cannot tell 0 from not given; a field not
                // given is 0 anyway). The encoding checks them, with errors
                // that name the field (`worker 32 is out of range
                // (0..=31)`).
                let mut given: Vec<(&str, u64)> = request
                    .fields
                    .iter()
                    .map(|(name, value)| (name.as_str(), *value))
                    .collect();
                for (name, value) in [
                    ("datacenter", request.datacenter),
                    ("machine", request.machine),
                    ("sequence", request.sequence),
                ] {
                    if value != 0 {
                        given.push((name, value));
                    }
                }
                layout
                    .encode_named(timestamp_ms.saturating_mul(1000), &given)
                    .map_err(core_refused("parts"))
            })
            .map_err(rejected)?;
        let decoded = DecodedId::new(&layout, id)
            .map_err(core_refused("parts"))
            .map_err(rejected)?;
        Ok(Response::new(decoded_id(decoded)))
    }

    async fn range(
        &self,
        request: Request<pb::RangeRequest>,
    ) -> Result<Response<pb::IdRange>, Status> {
        self.state.metrics().grpc_call("Range");
        let request = request.into_inner();
        let layout = layout_of(&self.state, request.layout.as_ref())?;
        let clock = self.state.issuer().clock().as_ref();
        let window = || -> Result<_, Rejection> {
            let from_ms = inputs::instant("from", given(&request.from), &layout, clock)?;
            let to_ms = inputs::instant("to", given(&request.to), &layout, clock)?;
            let ids = layout
                .id_range(from_ms, to_ms)
                .map_err(core_refused("from"))?;
            Ok(IdRange::new(&layout, from_ms, to_ms, ids))
        };
        Ok(Response::new(id_range(window().map_err(rejected)?)))
    }

    async fn get_layout(
        &self,
        request: Request<pb::GetLayoutRequest>,
    ) -> Result<Response<pb::LayoutDescription>, Status> {
        self.state.metrics().grpc_call("GetLayout");
        let layout = layout_of(&self.state, request.get_ref().layout.as_ref())?;
        let now_ms = self.state.issuer().clock().now_ms();
        Ok(Response::new(layout_description(LayoutDescription::new(
            &layout, now_ms,
        ))))
    }

    async fn get_node(
        &self,
        _request: Request<pb::GetNodeRequest>,
    ) -> Result<Response<pb::NodeDescription>, Status> {
        self.state.metrics().grpc_call("GetNode");
        let node = NodeDescription::new(&self.state);
        Ok(Response::new(node_description(node)))
    }

    async fn whois(
        &self,
        request: Request<pb::WhoisRequest>,
    ) -> Result<Response<pb::WhoisAnswer>, Status> {
        self.state.metrics().grpc_call("Whois");
        let request = request.into_inner();
        let encoding = match request.encoding.as_str() {
            "" => snowmint::Encoding::Decimal,
            name => name
                .parse::<snowmint::Encoding>()
                .map_err(|error| from_core("encoding", error))?,
        };
        let id = snowmint::SnowflakeId::parse(encoding, &request.id)
            .map_err(|error| from_core("id", error))?;
        let answer = crate::api::whois::look_up(&self.state, id)
            .await
            .map_err(api_error)?;
        Ok(Response::new(whois_answer(answer)))
    }

    async fn inspect(
        &self,
        request: Request<pb::InspectRequest>,
    ) -> Result<Response<pb::Inspection>, Status> {
        self.state.metrics().grpc_call("Inspect");
        let request = request.into_inner();
        let (layout, epoch) = request
            .layout
            .as_ref()
            .map_or((None, None), |c| (given(&c.layout), given(&c.epoch)));
        let inspection = inputs::inspect(
            &request.text,
            self.state.issuer().layout(),
            layout,
            epoch,
            given(&request.now),
            self.state.issuer().clock().as_ref(),
        )
        .map_err(rejected)?;
        Ok(Response::new(pb::Inspection {
            now: snowmint::format_time(inspection.now_ms).to_string(),
            tokens: inspection.tokens.iter().map(inspected_token).collect(),
        }))
    }
}

fn inspected_token(token: &snowmint::inspect::Token) -> pb::InspectedToken {
    use snowmint::inspect::{FieldValue, Plausibility};

    let reading = |r: &snowmint::inspect::Reading| pb::Reading {
        family: r.family().to_owned(),
        time: r.time().map(|t| t.to_string()),
        unix_us: r.time().map(|t| t.unix_us()),
        fields: r
            .fields()
            .iter()
            .map(|field| pb::ReadingField {
                name: field.name.to_string(),
                value: Some(match &field.value {
                    FieldValue::Number(n) => pb::reading_field::Value::Number(*n),
                    FieldValue::Text(text) => pb::reading_field::Value::Text(text.clone()),
                }),
            })
            .collect(),
        plausibility: match r.plausibility() {
            Plausibility::Pinned => pb::Plausibility::Pinned,
            Plausibility::Plausible => pb::Plausibility::Plausible,
            Plausibility::Implausible => pb::Plausibility::Implausible,
        }
        .into(),
        why: r.why().to_owned(),
    };
    let span = token.span();
    pb::InspectedToken {
        input: token.input().to_owned(),
        context: token.context().map(str::to_owned),
        start: span.start as u64,
        end: span.end as u64,
        candidates: token.candidates().iter().map(reading).collect(),
    }
}

fn whois_answer(w: WhoisBody) -> pb::WhoisAnswer {
    pb::WhoisAnswer {
        id: w.id.as_u64(),
        timestamp_ms: w.timestamp_ms,
        time: w.time,
        fleet: w.fleet,
        layout: w.layout,
        slot: w.slot,
        datacenter: w.datacenter,
        machine: w.machine,
        answer: w.answer.to_owned(),
        message: w.message,
        claims: w.claims.into_iter().map(claim_record).collect(),
        records_kept: w.records_kept,
        oldest_kept_generation: w.oldest_kept_generation,
        mark_ms: w.mark_ms,
    }
}

fn claim_record(c: ClaimRecordBody) -> pb::ClaimRecord {
    pb::ClaimRecord {
        generation: c.generation,
        holder: c.holder,
        host: c.host,
        pid: c.pid,
        listen: c.listen,
        grpc: c.grpc,
        version: c.version,
        session: c.session,
        start_ms: c.start_ms,
        start: c.start,
        floor_ms: c.floor_ms,
        end_ms: c.end_ms,
        end: c.end,
        last_ms: c.last_ms,
        ended: c.ended.map(str::to_owned),
    }
}

fn decoded_id(d: DecodedId) -> pb::DecodedId {
    pb::DecodedId {
        id: d.id.as_u64(),
        timestamp_ms: d.timestamp_ms,
        time: d.time,
        datacenter: d.datacenter,
        machine: d.machine,
        sequence: d.sequence,
        layout: d.layout,
        epoch_ms: d.epoch_ms,
        hex: d.encodings.hex,
        base32: d.encodings.base32,
        base58: d.encodings.base58,
        fields: d.fields.0.into_iter().collect(),
        unit: d.unit,
    }
}

fn id_range(r: IdRange) -> pb::IdRange {
    pb::IdRange {
        from_ms: r.from_ms,
        from: r.from,
        to_ms: r.to_ms,
        to: r.to,
        min: r.min.as_u64(),
        max: r.max.as_u64(),
        layout: r.layout,
        epoch_ms: r.epoch_ms,
    }
}

fn layout_description(l: LayoutDescription) -> pb::LayoutDescription {
    pb::LayoutDescription {
        layout: l.layout,
        spec: l.spec,
        epoch_ms: l.epoch_ms,
        epoch: l.epoch,
        timestamp_bits: l.timestamp_bits.into(),
        datacenter_bits: l.datacenter_bits.into(),
        machine_bits: l.machine_bits.into(),
        sequence_bits: l.sequence_bits.into(),
        timestamp_shift: l.timestamp_shift.into(),
        datacenter_shift: l.datacenter_shift.into(),
        machine_shift: l.machine_shift.into(),
        max_datacenter: l.max_datacenter,
        max_machine: l.max_machine,
        max_sequence: l.max_sequence,
        ids_per_ms: l.ids_per_ms,
        node_count: l.node_count,
        last_instant_ms: l.last_instant_ms,
        last_instant: l.last_instant,
        years_left: l.years_left,
        fields: l
            .fields
            .into_iter()
            .map(|f| pb::LayoutField {
                name: f.name.to_owned(),
                bits: f.bits.into(),
                shift: f.shift.into(),
                max: f.max,
                role: f.role,
            })
            .collect(),
        family: l.family,
        unit: l.unit,
        unit_us: l.unit_us,
        bits: l.bits.into(),
        max_id: l.max_id.as_u64(),
        js_safe: l.js_safe,
        ids_per_second: l.ids_per_second,
        mintable: l.mintable,
    }
}

fn node_description(n: NodeDescription) -> pb::NodeDescription {
    pb::NodeDescription {
        state: match n.state {
            FencingState::Active => "active",
            FencingState::Fenced => "fenced",
        }
        .to_owned(),
        ready: n.ready,
        reason: n.reason,
        source: n.source.to_owned(),
        slot: n.slot,
        datacenter: n.datacenter,
        machine: n.machine,
        generation: n.generation,
        claim_valid_for_ms: n.claim_valid_for_ms,
        claim_floor_ms: n.claim_floor_ms,
        claim_details: n.claim_details.unwrap_or_default().into_iter().collect(),
        layout: n.layout,
        spec: n.spec,
        epoch_ms: n.epoch_ms,
        clock_policy: n.clock_policy.to_owned(),
        clock_max_ms: n.clock_max_ms,
        clock_ms: n.clock_ms,
        high_water_mark_ms: n.high_water_mark_ms,
        high_water_mark: n.high_water_mark,
        last_timestamp_ms: n.last_timestamp_ms,
        state_file: n.state_file,
        lead_ms: Some(pb::Lead {
            current: n.lead_ms.current,
            max: n.lead_ms.max,
        }),
        coordinator: n.coordinator.map(|c| pb::Coordinator {
            url: c.url,
            fleet: c.fleet,
            slots: c.slots,
            state: c.state.to_owned(),
            slot: c.slot,
            session_kind: c.session_kind.to_owned(),
            session_id: c.session_id,
            ttl_ms: c.ttl_ms,
            time_to_deadline_ms: c.time_to_deadline_ms,
            claims_acquired: c.claims_acquired,
            claims_lost: c.claims_lost,
            holder: c.holder,
            passed_over: c
                .passed_over
                .into_iter()
                .map(|p| pb::PassedOver {
                    slot: p.slot,
                    reason: p.reason,
                    for_ms: p.for_ms,
                })
                .collect(),
            clock_check: c.clock_check.map(|k| pb::ClockCheck {
                max_skew_ms: k.max_skew_ms,
                offset_ms: k.offset_ms,
                error_ms: k.error_ms,
                skewed: k.skewed,
                checked_ms_ago: k.checked_ms_ago,
                readings: k.readings,
                unanswered: k.unanswered,
                summary: k.summary,
            }),
        }),
    }
}
