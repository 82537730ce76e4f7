//! The gRPC API (`--grpc-listen`): `snowmint.v1.IdService`, the standard
//! health service and server reflection, served with tonic beside HTTP.
//!
//! Everything here is a second front end over the same [`AppState`] as the
//! HTTP handlers: IDs come from the same [`Issuer`](crate::Issuer) calls
//! (fencing, high-water mark, refusals), count in the same metrics, and the
//! calculator methods hand their fields to the same input reader as the
//! HTTP handlers, so that values are read by the same parsers and rejected
//! with the same messages.
//!
//! [`IdApi`] answers the `IdService` methods. Before any of them runs, a
//! guard holds the call to the node's cap on calls in flight and to its
//! deadline, and refuses a request that cannot be decoded with
//! `INVALID_ARGUMENT`. Errors become statuses in one place: bad input
//! `INVALID_ARGUMENT`, a refusal `UNAVAILABLE` with `retry-after-ms`.
//! `grpc.health.v1.Health` reports `SERVING` only while the node may
//! issue.
//!
//! The contract is `proto/snowmint/v1/snowmint.proto`; the code generated
//! from it is checked in (`generated/`, verified by a test), with its
//! descriptor, which the binary carries for reflection.

use tokio::sync::watch;
use tonic::service::Routes;

use crate::state::AppState;

mod guard;
mod health;
mod ids;
mod status;

pub use health::{HealthApi, SERVICE_NAME};
pub use ids::IdApi;
pub use status::{CODE_KEY, FIELD_KEY, RETRY_AFTER_KEY};

use status::shutting_down;

/// The types and service trait generated from `snowmint.proto`, checked
/// in (`generated/`), so that building needs no `protoc`;
/// `tests/generated.rs` checks that they match the `.proto`.
pub mod pb {
    #![allow(missing_docs, clippy::all)]
    include!("generated/snowmint.v1.rs");

    /// The encoded descriptor of `snowmint.proto`, for reflection.
    pub const FILE_DESCRIPTOR_SET: &[u8] = include_bytes!("generated/snowmint_descriptor.bin");
}

/// Every gRPC service of a node over `state`: `snowmint.v1.IdService`,
/// `grpc.health.v1.Health`, and reflection (`v1` and `v1alpha`) describing
/// all three.
///
/// Streams (`StreamIds`, health `Watch`) end, with `UNAVAILABLE`, once
/// `stopping` turns true; a stream whose sender is gone ends as well.
pub fn routes(state: AppState, stopping: Stopping) -> Routes {
    // Each version's builder adds its own descriptor; the other one's is
    // added by hand, so that both list all four services.
    let reflection = |other_version: &'static [u8]| {
        tonic_reflection::server::Builder::configure()
            .register_encoded_file_descriptor_set(pb::FILE_DESCRIPTOR_SET)
            .register_encoded_file_descriptor_set(tonic_health::pb::FILE_DESCRIPTOR_SET)
            .register_encoded_file_descriptor_set(other_version)
    };
    // A builder that cannot read its own descriptors is a build defect,
    // caught by every test that starts a gRPC server.
    let v1 = reflection(tonic_reflection::pb::v1alpha::FILE_DESCRIPTOR_SET)
        .build_v1()
        .expect("the embedded descriptor sets are valid");
    let v1alpha = reflection(tonic_reflection::pb::v1::FILE_DESCRIPTOR_SET)
        .build_v1alpha()
        .expect("the embedded descriptor sets are valid");
    let limit = crate::net::limits::MAX_GRPC_REQUEST;
    Routes::new(
        pb::id_service_server::IdServiceServer::new(IdApi::new(state.clone(), stopping.clone()))
            .max_decoding_message_size(limit),
    )
    .add_service(
        tonic_health::pb::health_server::HealthServer::new(HealthApi::new(state, stopping))
            .max_decoding_message_size(limit),
    )
    .add_service(v1)
    .add_service(v1alpha)
}

/// How long a stream that is shutting down waits for room in its queue
/// for the `UNAVAILABLE` status that ends it (its reader may be a few
/// batches behind).
pub(crate) const END_WAIT: std::time::Duration = std::time::Duration::from_secs(1);

/// Whether the server is shutting down: streams watch it and end.
pub type Stopping = watch::Receiver<bool>;

/// Waits until `stopping` turns true (or its sender is gone).
pub(crate) async fn stopped(stopping: &mut Stopping) {
    // An error means the sender is gone: nobody can tell the stream to go
    // on either, so it ends too.
    let _ = stopping.wait_for(|stop| *stop).await;
}

/// What a gRPC listener serves: [`routes`] behind the guard every call
/// passes (tokens, the node's cap on calls in flight, the deadline).
pub(crate) fn service(state: AppState, stopping: Stopping) -> guard::Guard<Routes> {
    let limits = state.limits();
    let metrics = state.metrics().clone();
    let auth = state.auth().cloned();
    guard::Guard::new(
        routes(state, stopping),
        auth,
        limits.max_calls,
        // A unary call is answered within the request timeout, as HTTP's;
        // a stream's batches are not bound by it.
        limits.request_timeout,
        metrics,
    )
}
