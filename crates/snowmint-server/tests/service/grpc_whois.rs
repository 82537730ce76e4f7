//! The gRPC `Whois` of a node that keeps no claim history (its identity is
//! given, not claimed): `NOT_FOUND` with `snowmint-code: no_coordinator`,
//! as HTTP's 404; a bad ID is `INVALID_ARGUMENT` naming the field, as
//! HTTP's 400. (Nodes of a coordinated fleet answer with the history:
//! crates/snowmint-cli/tests/whois.rs.)

use std::sync::Arc;
use std::time::Duration;

use snowmint::{Node, SystemClock};
use snowmint_client::proto::WhoisRequest;
use snowmint_client::proto::id_service_client::IdServiceClient;
use snowmint_test_support::in_process::grpc::GrpcNode;
use snowmint_test_support::wait::within;
use tonic::Code;
use tonic::transport::Channel;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_node_without_history_says_where_to_ask() {
    let node = GrpcNode::start(Node::from_slot(34), Arc::new(SystemClock)).await;
    let channel = within(
        "a gRPC connection",
        Duration::from_secs(60),
        Channel::from_shared(node.endpoint()).unwrap().connect(),
    )
    .await
    .unwrap();
    let mut client = IdServiceClient::new(channel);
    let ask = |id: &str| WhoisRequest {
        id: id.to_owned(),
        encoding: String::new(),
    };
    let status = client.whois(ask("1724551110457221119")).await.unwrap_err();
    assert_eq!(status.code(), Code::NotFound, "{status:?}");
    assert_eq!(
        status.metadata().get("snowmint-code").unwrap(),
        "no_coordinator"
    );
    assert!(
        status.message().contains("keeps no claim history"),
        "{status:?}"
    );

    let status = client.whois(ask("-1")).await.unwrap_err();
    assert_eq!(status.code(), Code::InvalidArgument, "{status:?}");
    assert_eq!(status.metadata().get("snowmint-field").unwrap(), "id");
    assert!(status.message().contains("out of range"), "{status:?}");
}
