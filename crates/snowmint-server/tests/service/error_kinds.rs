//! Every kind of core error (`snowmint::ErrorKind::ALL`, the one table of
//! kinds) through both front ends of one node: the HTTP answer (status,
//! `error.code`, `Retry-After`) and the gRPC status of a real socket (code,
//! `snowmint-code`, `retry-after-ms`), each as this test expects for the
//! kind, and the gRPC message word for word the HTTP message. The command
//! line, PostgreSQL and Python walk the same table in their own tests.

use std::sync::Arc;

use axum::http::StatusCode;
use axum::response::IntoResponse;
use snowmint::{Clock, ErrorKind, Generator, Layout, ManualClock, Node};
use snowmint_client::proto::id_service_client::IdServiceClient;
use snowmint_client::proto::{
    DecodeRequest, EncodeRequest, GetLayoutRequest, LayoutChoice, NextIdsRequest, RangeRequest,
};
use snowmint_server::{ApiError, app};
use snowmint_test_support::in_process::get;
use snowmint_test_support::in_process::grpc::GrpcNode;
use snowmint_test_support::wait::within;
use tonic::transport::Channel;
use tonic::{Code, Status};

const T: i64 = 1_700_000_000_000;

/// A request that meets a kind, asked of both front ends.
enum Ask {
    /// `GET` this target; the same question as the gRPC call.
    Both(&'static str, Call),
    /// Issue one ID after the node's clock went back a second.
    IssueWithTheClockBack,
}

/// The gRPC twin of an HTTP request.
enum Call {
    Encode(EncodeRequest),
    Decode(DecodeRequest),
    Range(RangeRequest),
    GetLayout(GetLayoutRequest),
}

/// What a kind must come to: the HTTP status and code, the gRPC code.
struct Expected {
    status: StatusCode,
    code: &'static str,
    grpc: Code,
}

/// How each kind is met, and what it must come to. A new kind fails to
/// compile here until it has a case.
fn case(kind: ErrorKind) -> (Option<Ask>, Expected) {
    let bad_input = |code| Expected {
        status: StatusCode::BAD_REQUEST,
        code,
        grpc: Code::InvalidArgument,
    };
    match kind {
        ErrorKind::OutOfRange => (
            Some(Ask::Both(
                "/v1/encode?timestamp=1700000000000&datacenter=32&machine=0&sequence=0",
                Call::Encode(EncodeRequest {
                    timestamp: "1700000000000".into(),
                    datacenter: 32,
                    ..Default::default()
                }),
            )),
            bad_input("out_of_range"),
        ),
        ErrorKind::InvalidText => (
            Some(Ask::Both(
                "/v1/range?from=noon&to=1700000000000",
                Call::Range(RangeRequest {
                    from: "noon".into(),
                    to: "1700000000000".into(),
                    layout: None,
                }),
            )),
            bad_input("invalid_parameter"),
        ),
        ErrorKind::UnknownName => (
            Some(Ask::Both(
                "/v1/ids/1?encoding=b64",
                Call::Decode(DecodeRequest {
                    id: "1".into(),
                    encoding: "b64".into(),
                    layout: None,
                }),
            )),
            bad_input("invalid_parameter"),
        ),
        // Discord's worker named twice: by its name and as datacenter.
        ErrorKind::InvalidFields => (
            Some(Ask::Both(
                "/v1/encode?layout=discord&timestamp=1700000000000&worker=1&datacenter=1&process=0&increment=0",
                Call::Encode(EncodeRequest {
                    timestamp: "1700000000000".into(),
                    datacenter: 1,
                    fields: [("worker".to_owned(), 1)].into(),
                    layout: Some(LayoutChoice {
                        layout: "discord".into(),
                        epoch: String::new(),
                    }),
                    ..Default::default()
                }),
            )),
            bad_input("invalid_fields"),
        ),
        ErrorKind::InvalidLayout => (
            Some(Ask::Both(
                "/v1/layout?layout=41/5/5/13",
                Call::GetLayout(GetLayoutRequest {
                    layout: Some(LayoutChoice {
                        layout: "41/5/5/13".into(),
                        epoch: String::new(),
                    }),
                }),
            )),
            bad_input("invalid_layout"),
        ),
        ErrorKind::EmptyWindow => (
            Some(Ask::Both(
                "/v1/range?from=1700000000001&to=1700000000000",
                Call::Range(RangeRequest {
                    from: "1700000000001".into(),
                    to: "1700000000000".into(),
                    layout: None,
                }),
            )),
            bad_input("empty_window"),
        ),
        ErrorKind::ClockBehind => (
            Some(Ask::IssueWithTheClockBack),
            Expected {
                status: StatusCode::SERVICE_UNAVAILABLE,
                code: "clock_behind",
                grpc: Code::Unavailable,
            },
        ),
        // The issuer waits for the next millisecond: no request meets it.
        ErrorKind::SequenceExhausted => (
            None,
            Expected {
                status: StatusCode::SERVICE_UNAVAILABLE,
                code: "sequence_exhausted",
                grpc: Code::Unavailable,
            },
        ),
    }
}

async fn client(node: &GrpcNode) -> IdServiceClient<Channel> {
    let channel = within(
        "a gRPC connection",
        std::time::Duration::from_secs(60),
        Channel::from_shared(node.endpoint()).unwrap().connect(),
    )
    .await
    .unwrap();
    IdServiceClient::new(channel)
}

async fn call(client: &mut IdServiceClient<Channel>, call: Call) -> Status {
    let result = match call {
        Call::Encode(request) => client.encode(request).await.map(drop),
        Call::Decode(request) => client.decode(request).await.map(drop),
        Call::Range(request) => client.range(request).await.map(drop),
        Call::GetLayout(request) => client.get_layout(request).await.map(drop),
    };
    result.expect_err("the call must fail")
}

fn metadata<'a>(status: &'a Status, key: &str) -> &'a str {
    status
        .metadata()
        .get(key)
        .unwrap_or_else(|| panic!("no {key} in {status:?}"))
        .to_str()
        .unwrap()
}

/// Each kind a request can meet comes to its status and code on both
/// front ends, with the same message.
#[tokio::test]
async fn every_kind_through_http_and_grpc() {
    let clock = ManualClock::new(T);
    let node = GrpcNode::start(
        Node::from_slot(103),
        Arc::new(clock.clone()) as Arc<dyn Clock>,
    )
    .await;
    let http = app(node.state.clone());
    let mut grpc = client(&node).await;
    let mut reached = 0;
    for &kind in ErrorKind::ALL {
        let (ask, expected) = case(kind);
        let (answer, status) = match ask {
            Some(Ask::Both(target, request)) => {
                (get(&http, target).await, call(&mut grpc, request).await)
            }
            Some(Ask::IssueWithTheClockBack) => {
                clock.set(T);
                get(&http, "/v1/id").await;
                clock.set(T - 1000);
                let answer = get(&http, "/v1/id").await;
                let status = grpc
                    .next_ids(NextIdsRequest { count: 1 })
                    .await
                    .expect_err("refused");
                clock.set(T + 1000);
                (answer, status)
            }
            None => continue,
        };
        let (code, _, message) = answer.error(expected.status);
        assert_eq!(code, expected.code, "{kind:?}: {}", answer.body);
        assert_eq!(status.code(), expected.grpc, "{kind:?}: {status:?}");
        assert_eq!(
            metadata(&status, "snowmint-code"),
            expected.code,
            "{kind:?}"
        );
        assert_eq!(status.message(), message, "{kind:?}: gRPC and HTTP differ");
        if expected.status == StatusCode::SERVICE_UNAVAILABLE {
            assert!(answer.headers.contains_key("retry-after"), "{kind:?}");
            let retry: u64 = metadata(&status, "retry-after-ms").parse().unwrap();
            assert!(retry >= 1, "{kind:?}: {retry}");
        }
        reached += 1;
    }
    assert_eq!(reached, ErrorKind::ALL.len() - 1);
}

/// Sequence exhaustion, which no request meets (the issuer waits for the
/// next millisecond), still has its answer: a real such error comes to
/// the 503 the table expects, with `Retry-After`.
#[tokio::test]
async fn sequence_exhaustion_would_be_a_503() {
    let generator = Generator::new(Layout::TWITTER, Node::default()).unwrap();
    let error = (0..=4096)
        .try_for_each(|_| generator.next_id_at(T).map(drop))
        .unwrap_err();
    assert_eq!(error.kind(), ErrorKind::SequenceExhausted);
    let expected = case(ErrorKind::SequenceExhausted).1;
    let response = ApiError::from_core("count", error).into_response();
    assert_eq!(response.status(), expected.status);
    assert_eq!(response.headers()["retry-after"], "1");
    let body = axum::body::to_bytes(response.into_body(), 1 << 16)
        .await
        .unwrap();
    let json: serde_json::Value = serde_json::from_slice(&body).unwrap();
    assert_eq!(json["error"]["code"], expected.code);
}
