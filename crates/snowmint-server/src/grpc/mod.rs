//! The gRPC API (`--grpc-listen`): `snowmint.v1.IdService`, the standard
//! health service and server reflection, served with tonic beside HTTP.
//!
//! Everything here is a second front end over the same [`AppState`] as the
//! HTTP handlers: IDs come from the same [`Issuer`](crate::Issuer) calls
//! (fencing, high-water mark, refusals), count in the same metrics, and the
//! calculator calls run the HTTP handlers themselves, with the request's
//! fields given as the parameters a query would carry, so that values are
//! read by the same parsers and rejected with the same messages.
//!
//! - `ids.rs`: [`IdApi`], the `IdService` methods.
//! - `health.rs`: `grpc.health.v1.Health`, `SERVING` only while the node
//!   may issue.
//! - `status.rs`: errors as gRPC statuses (`INVALID_ARGUMENT`,
//!   `UNAVAILABLE` with `retry-after-ms`).
//!
//! The contract is `proto/snowmint/v1/snowmint.proto`, compiled by
//! `build.rs` and carried in the binary for reflection.

use std::future::Future;

use tokio::net::TcpListener;
use tokio_stream::wrappers::TcpListenerStream;
use tonic::service::Routes;

use crate::state::AppState;

mod health;
mod ids;
mod status;

pub use health::{HealthApi, SERVICE_NAME};
pub use ids::IdApi;
pub use status::{CODE_KEY, FIELD_KEY, RETRY_AFTER_KEY};

/// The types and service trait generated from `snowmint.proto`.
pub mod pb {
    #![allow(missing_docs, clippy::all)]
    tonic::include_proto!("snowmint.v1");

    /// The encoded descriptor of `snowmint.proto`, for reflection.
    pub const FILE_DESCRIPTOR_SET: &[u8] =
        tonic::include_file_descriptor_set!("snowmint_descriptor");
}

/// Every gRPC service of a node over `state`: `snowmint.v1.IdService`,
/// `grpc.health.v1.Health`, and reflection (`v1` and `v1alpha`) describing
/// all three.
pub fn routes(state: AppState) -> Routes {
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
    Routes::new(pb::id_service_server::IdServiceServer::new(IdApi::new(
        state.clone(),
    )))
    .add_service(tonic_health::pb::health_server::HealthServer::new(
        HealthApi::new(state),
    ))
    .add_service(v1)
    .add_service(v1alpha)
}

/// Serves [`routes`] on `listener` until `shutdown` resolves, then lets
/// calls in flight finish (a stream ends when its client cancels it or the
/// process stops).
pub async fn serve(
    listener: TcpListener,
    state: AppState,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> Result<(), tonic::transport::Error> {
    let timeout = state.request_timeout();
    tonic::transport::Server::builder()
        // A unary call is answered within the request timeout, as HTTP's;
        // a stream's batches are not bound by it.
        .timeout(timeout)
        .add_routes(routes(state))
        .serve_with_incoming_shutdown(TcpListenerStream::new(listener), shutdown)
        .await
}
