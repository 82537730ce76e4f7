//! `snowmint.v1.IdService`: new IDs (`NextIds`, `StreamIds`) and the
//! calculator (`Decode`, `Encode`, `Range`, `GetLayout`, `GetNode`).

use std::sync::Arc;

use axum::extract::State;
use snowmint::SnowflakeId;
use tokio::sync::mpsc;
use tokio_stream::wrappers::ReceiverStream;
use tonic::{Request, Response, Status};

use super::pb::id_service_server::IdService;
use super::status::{bounded, invalid, refused};
use super::{Stopping, pb, shutting_down, stopped};
use crate::api::MAX_BATCH;
use crate::api::calc;
use crate::api::params::{IdSegment, Params};
use crate::body::{DecodedId, FencingState, IdRange, LayoutDescription, NodeDescription};
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

/// The parameters a query with these pairs would carry (empty values are
/// left out, as not given), read with the node's clock.
fn params(state: &AppState, pairs: &[(&str, &str)]) -> Params {
    let pairs = pairs
        .iter()
        .filter(|(_, value)| !value.is_empty())
        .map(|(name, value)| ((*name).to_owned(), (*value).to_owned()))
        .collect();
    Params::from_pairs(pairs, Arc::clone(state.issuer().clock()))
}

/// The `layout` and `epoch` pairs of a [`pb::LayoutChoice`].
fn layout_pairs(choice: Option<&pb::LayoutChoice>) -> [(&'static str, &str); 2] {
    let (layout, epoch) = choice.map_or(("", ""), |c| (c.layout.as_str(), c.epoch.as_str()));
    [("layout", layout), ("epoch", epoch)]
}

#[tonic::async_trait]
impl IdService for IdApi {
    async fn next_ids(
        &self,
        request: Request<pb::NextIdsRequest>,
    ) -> Result<Response<pb::IdBatch>, Status> {
        self.state.metrics().grpc_call("NextIds");
        let count = bounded("count", request.get_ref().count.into(), 1, MAX_BATCH)? as usize;
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
        let batch = bounded("batch", batch.into(), 1, MAX_BATCH)?;
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
                        // The status waits for room behind the batches
                        // queued already (a reader that keeps reading
                        // finds the queue full), but no longer than a
                        // request may take: a reader that does not read
                        // gets the end of the stream when its connection
                        // closes.
                        let grace = state.request_timeout();
                        let _ = tokio::time::timeout(grace, sender.send(Err(shutting_down()))).await;
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
        let [layout, epoch] = layout_pairs(request.layout.as_ref());
        let params = params(
            &self.state,
            &[("encoding", &request.encoding), layout, epoch],
        );
        let decoded = calc::decode(IdSegment(request.id), params)
            .await
            .map_err(invalid)?;
        Ok(Response::new(decoded_id(decoded.0)))
    }

    async fn encode(
        &self,
        request: Request<pb::EncodeRequest>,
    ) -> Result<Response<pb::DecodedId>, Status> {
        self.state.metrics().grpc_call("Encode");
        let request = request.into_inner();
        let [layout, epoch] = layout_pairs(request.layout.as_ref());
        let (datacenter, machine, sequence) = (
            request.datacenter.to_string(),
            request.machine.to_string(),
            request.sequence.to_string(),
        );
        let params = params(
            &self.state,
            &[
                ("timestamp", &request.timestamp),
                ("datacenter", &datacenter),
                ("machine", &machine),
                ("sequence", &sequence),
                layout,
                epoch,
            ],
        );
        let encoded = calc::encode(params).await.map_err(invalid)?;
        Ok(Response::new(decoded_id(encoded.0)))
    }

    async fn range(
        &self,
        request: Request<pb::RangeRequest>,
    ) -> Result<Response<pb::IdRange>, Status> {
        self.state.metrics().grpc_call("Range");
        let request = request.into_inner();
        let [layout, epoch] = layout_pairs(request.layout.as_ref());
        let params = params(
            &self.state,
            &[("from", &request.from), ("to", &request.to), layout, epoch],
        );
        let range = calc::range(params).await.map_err(invalid)?;
        Ok(Response::new(id_range(range.0)))
    }

    async fn get_layout(
        &self,
        request: Request<pb::GetLayoutRequest>,
    ) -> Result<Response<pb::LayoutDescription>, Status> {
        self.state.metrics().grpc_call("GetLayout");
        let request = request.into_inner();
        let pairs = layout_pairs(request.layout.as_ref());
        let params = params(&self.state, &pairs);
        let layout = calc::layout(State(self.state.clone()), params)
            .await
            .map_err(invalid)?;
        Ok(Response::new(layout_description(layout.0)))
    }

    async fn get_node(
        &self,
        _request: Request<pb::GetNodeRequest>,
    ) -> Result<Response<pb::NodeDescription>, Status> {
        self.state.metrics().grpc_call("GetNode");
        let node = NodeDescription::new(self.state.issuer());
        Ok(Response::new(node_description(node)))
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
            })
            .collect(),
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
        }),
    }
}
