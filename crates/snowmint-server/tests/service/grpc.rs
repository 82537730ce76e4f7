//! The gRPC API over a real socket, with tonic clients: every RPC and its
//! answers, every error code, health following readiness, reflection in
//! both versions, a stream of a million IDs, and a stream that waits for a
//! reader that does not read.

use std::sync::Arc;
use std::time::Duration;

use prost::Message;
use snowmint::{Clock, ManualClock, Node, SystemClock};
use snowmint_client::proto::id_service_client::IdServiceClient;
use snowmint_client::proto::{
    DecodeRequest, EncodeRequest, GetLayoutRequest, GetNodeRequest, LayoutChoice, NextIdsRequest,
    RangeRequest, StreamIdsRequest,
};
use snowmint_test_support::in_process::grpc::GrpcNode;
use snowmint_test_support::wait::{eventually, within};
use tokio_stream::StreamExt;
use tonic::transport::Channel;
use tonic::{Code, Status};
use tonic_health::pb::HealthCheckRequest;
use tonic_health::pb::health_check_response::ServingStatus;
use tonic_health::pb::health_client::HealthClient;

/// The node the tests run as.
const NODE: Node = Node::from_slot(103);
/// A fixed instant: 2023-11-14T22:13:20.000Z.
const T: i64 = 1_700_000_000_000;
const LIMIT: Duration = Duration::from_secs(60);

/// A connection to `node`.
async fn channel(node: &GrpcNode) -> Channel {
    within(
        "a gRPC connection",
        LIMIT,
        Channel::from_shared(node.endpoint()).unwrap().connect(),
    )
    .await
    .unwrap()
}

async fn id_client(node: &GrpcNode) -> IdServiceClient<Channel> {
    IdServiceClient::new(channel(node).await)
}

async fn health_client(node: &GrpcNode) -> HealthClient<Channel> {
    HealthClient::new(channel(node).await)
}

async fn start(clock: Arc<dyn Clock>) -> GrpcNode {
    GrpcNode::start(NODE, clock).await
}

/// The fields of a Twitter-layout ID by the formula of README.md:
/// (Unix ms, datacenter, machine, sequence).
fn fields(id: u64) -> (i64, u64, u64, u64) {
    (
        (id >> 22) as i64 + 1_288_834_974_657,
        (id >> 17) & 31,
        (id >> 12) & 31,
        id & 4095,
    )
}

fn metadata<'a>(status: &'a Status, key: &str) -> &'a str {
    status
        .metadata()
        .get(key)
        .unwrap_or_else(|| panic!("no {key} in {status:?}"))
        .to_str()
        .unwrap()
}

/// Asserts INVALID_ARGUMENT with exactly `message`, about `field`.
fn assert_invalid(result: Result<impl std::fmt::Debug, Status>, field: &str, message: &str) {
    let status = result.expect_err("bad input must be refused");
    assert_eq!(status.code(), Code::InvalidArgument, "{status:?}");
    assert_eq!(status.message(), message);
    assert_eq!(metadata(&status, "snowmint-field"), field);
}

fn layout(name: &str, epoch: &str) -> Option<LayoutChoice> {
    Some(LayoutChoice {
        layout: name.to_owned(),
        epoch: epoch.to_owned(),
    })
}

/// NextIds gives `count` increasing IDs of this node, counted in the same
/// metrics as HTTP's, and names count's range when it is out of it.
#[tokio::test]
async fn next_ids_issues_and_counts() {
    let node = start(Arc::new(SystemClock)).await;
    let mut ids = id_client(&node).await;
    let before = SystemClock.now_ms();
    let batch = ids
        .next_ids(NextIdsRequest { count: 4096 })
        .await
        .unwrap()
        .into_inner()
        .ids;
    let after = SystemClock.now_ms();
    assert_eq!(batch.len(), 4096);
    assert!(batch.windows(2).all(|w| w[0] < w[1]));
    for &id in &batch {
        let (ms, datacenter, machine, _) = fields(id);
        assert_eq!((datacenter, machine), (3, 7));
        assert!(
            (before..=after + 1000).contains(&ms),
            "{ms} not near {before}"
        );
    }
    let one = ids.next_ids(NextIdsRequest { count: 1 }).await.unwrap();
    assert_eq!(one.get_ref().ids.len(), 1);
    assert!(one.get_ref().ids[0] > batch[4095]);
    assert_eq!(node.metric("snowmint_ids_issued_total"), 4097.0);
    assert_eq!(
        node.metric("snowmint_grpc_requests_total{method=\"NextIds\"}"),
        2.0
    );
    for count in [0, 4097, u32::MAX] {
        assert_invalid(
            ids.next_ids(NextIdsRequest { count }).await,
            "count",
            &format!("count {count} is out of range (1..=4096)"),
        );
    }
    assert_eq!(node.metric("snowmint_ids_issued_total"), 4097.0);
}

/// Every family through gRPC: Discord's IDs above 2^63 with its field
/// names, encoding by those names, the layout's roles and unit, and an
/// error naming the family's field.
#[tokio::test]
async fn calculator_reads_every_family() {
    let node = start(Arc::new(SystemClock)).await;
    let mut ids = id_client(&node).await;
    let decoded = ids
        .decode(DecodeRequest {
            id: "18446744073709551615".into(),
            layout: layout("discord", ""),
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner();
    assert_eq!(decoded.id, u64::MAX);
    assert_eq!(decoded.timestamp_ms, 1_420_070_400_000 + (1 << 42) - 1);
    let fields: std::collections::BTreeMap<&str, u64> = decoded
        .fields
        .iter()
        .map(|(name, value)| (name.as_str(), *value))
        .collect();
    assert_eq!(
        fields,
        [("increment", 4095), ("process", 31), ("worker", 31)].into()
    );
    assert_eq!(decoded.unit, "1ms");

    // discord.com/developers/docs/reference#snowflakes.
    let encoded = ids
        .encode(EncodeRequest {
            timestamp: "1462015105796".into(),
            layout: layout("discord", ""),
            fields: [("worker".to_owned(), 1), ("increment".to_owned(), 7)].into(),
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner();
    assert_eq!(encoded.id, 175928847299117063);
    assert_invalid(
        ids.encode(EncodeRequest {
            timestamp: "1462015105796".into(),
            layout: layout("discord", ""),
            fields: [("worker".to_owned(), 32)].into(),
            ..Default::default()
        })
        .await,
        "worker",
        "worker 32 is out of range (0..=31)",
    );

    let sonyflake = ids
        .get_layout(GetLayoutRequest {
            layout: layout("sonyflake", ""),
        })
        .await
        .unwrap()
        .into_inner();
    assert_eq!(sonyflake.unit, "10ms");
    assert_eq!(sonyflake.unit_us, 10_000);
    assert_eq!(
        sonyflake.family.as_deref(),
        Some("Sonyflake (sony/sonyflake v1)")
    );
    let roles: Vec<(&str, &str)> = sonyflake
        .fields
        .iter()
        .map(|f| (f.name.as_str(), f.role.as_str()))
        .collect();
    assert_eq!(
        roles,
        [
            ("timestamp", "time"),
            ("sequence", "sequence"),
            ("machine", "node")
        ]
    );
    assert!(sonyflake.mintable);
    let safe = ids
        .get_layout(GetLayoutRequest {
            layout: layout("cosid-safe-js", ""),
        })
        .await
        .unwrap()
        .into_inner();
    assert!(safe.js_safe);
    assert_eq!(safe.max_id, (1 << 53) - 1);
}

/// The calculator mirrors HTTP: the worked example of DESIGN.md both ways,
/// a time window, layouts, the node; bad values name field, value, range.
#[tokio::test]
async fn calculator_calls_answer_and_refuse_like_http() {
    let node = start(Arc::new(SystemClock)).await;
    let mut ids = id_client(&node).await;

    let decoded = ids
        .decode(DecodeRequest {
            id: "1724551110457221119".into(),
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner();
    assert_eq!(decoded.id, 1724551110457221119);
    assert_eq!(decoded.timestamp_ms, 1_700_000_000_000);
    assert_eq!(decoded.time, "2023-11-14T22:13:20.000Z");
    assert_eq!(
        (decoded.datacenter, decoded.machine, decoded.sequence),
        (7, 13, 4095)
    );
    assert_eq!(decoded.layout, "twitter");
    assert_eq!(decoded.hex, format!("{:016x}", 1724551110457221119u64));

    let by_hex = ids
        .decode(DecodeRequest {
            id: format!("{:x}", 1724551110457221119u64),
            encoding: "hex".into(),
            layout: None,
        })
        .await
        .unwrap();
    assert_eq!(by_hex.get_ref().id, 1724551110457221119);

    let encoded = ids
        .encode(EncodeRequest {
            timestamp: "2023-11-14T22:13:20.000Z".into(),
            datacenter: 7,
            machine: 13,
            sequence: 4095,
            layout: None,
            fields: Default::default(),
        })
        .await
        .unwrap();
    assert_eq!(encoded.get_ref().id, 1724551110457221119);

    // Discord's layout: same widths, epoch 1420070400000.
    let discord = ids
        .encode(EncodeRequest {
            timestamp: "1420070400001".into(),
            layout: layout("discord", ""),
            ..Default::default()
        })
        .await
        .unwrap();
    assert_eq!(discord.get_ref().id, 1 << 22);
    assert_eq!(discord.get_ref().epoch_ms, 1_420_070_400_000);

    let range = ids
        .range(RangeRequest {
            from: "1700000000000".into(),
            to: "1700000000000".into(),
            layout: None,
        })
        .await
        .unwrap()
        .into_inner();
    let offset = (1_700_000_000_000u64 - 1_288_834_974_657) << 22;
    assert_eq!((range.min, range.max), (offset, offset | ((1 << 22) - 1)));

    let twitter = ids
        .get_layout(GetLayoutRequest { layout: None })
        .await
        .unwrap()
        .into_inner();
    assert_eq!(twitter.spec, "41/5/5/12@1288834974657");
    assert_eq!(twitter.last_instant_ms, 1_288_834_974_657 + (1 << 41) - 1);
    assert_eq!(twitter.node_count, 1024);
    let names: Vec<_> = twitter.fields.iter().map(|f| f.name.as_str()).collect();
    assert_eq!(names, ["timestamp", "datacenter", "machine", "sequence"]);
    let custom = ids
        .get_layout(GetLayoutRequest {
            layout: layout("41/4/6/12@0", ""),
        })
        .await
        .unwrap();
    assert_eq!(custom.get_ref().max_machine, 63);

    let me = ids.get_node(GetNodeRequest {}).await.unwrap().into_inner();
    assert_eq!(me.state, "active");
    assert!(me.ready);
    assert_eq!(
        (me.slot, me.datacenter, me.machine),
        (Some(103), Some(3), Some(7))
    );
    assert_eq!(me.spec, "41/5/5/12@1288834974657");
    assert_eq!(me.clock_policy, "refuse");
    assert_eq!(me.coordinator, None);

    assert_invalid(
        ids.encode(EncodeRequest {
            timestamp: "now".into(),
            datacenter: 32,
            ..Default::default()
        })
        .await,
        "datacenter",
        "datacenter 32 is out of range (0..=31)",
    );
    assert_invalid(
        ids.encode(EncodeRequest {
            timestamp: "now".into(),
            sequence: 4096,
            ..Default::default()
        })
        .await,
        "sequence",
        "sequence 4096 is out of range (0..=4095)",
    );
    let missing = ids.encode(EncodeRequest::default()).await.unwrap_err();
    assert_eq!(missing.code(), Code::InvalidArgument);
    assert!(missing.message().contains("timestamp"), "{missing:?}");
    for bad in ["-1", "9223372036854775808", "abc", ""] {
        let status = ids
            .decode(DecodeRequest {
                id: bad.into(),
                ..Default::default()
            })
            .await
            .unwrap_err();
        assert_eq!(status.code(), Code::InvalidArgument, "{bad}: {status:?}");
        assert_eq!(metadata(&status, "snowmint-field"), "id");
        if !bad.is_empty() {
            assert!(status.message().contains(bad), "{bad}: {status:?}");
        }
    }
    let window = ids
        .range(RangeRequest {
            from: "1700000000001".into(),
            to: "1700000000000".into(),
            layout: None,
        })
        .await
        .unwrap_err();
    assert_eq!(window.code(), Code::InvalidArgument);
    assert_eq!(metadata(&window, "snowmint-code"), "empty_window");
    let unknown = ids
        .get_layout(GetLayoutRequest {
            layout: layout("snowflake9000", ""),
        })
        .await
        .unwrap_err();
    assert_eq!(unknown.code(), Code::InvalidArgument);
    assert!(unknown.message().contains("snowflake9000"), "{unknown:?}");
    let epoch = ids
        .get_layout(GetLayoutRequest {
            layout: layout("", "yesterday"),
        })
        .await
        .unwrap_err();
    assert_eq!(epoch.code(), Code::InvalidArgument);
    assert_eq!(metadata(&epoch, "snowmint-field"), "epoch");
    for method in ["Decode", "Encode", "Range", "GetLayout", "GetNode"] {
        assert!(
            node.metric(&format!(
                "snowmint_grpc_requests_total{{method=\"{method}\"}}"
            )) >= 1.0,
            "{method} not counted"
        );
    }
}

/// A fenced node and a node whose clock is behind refuse with
/// UNAVAILABLE, the reason and the retry delay, and count the refusal; the
/// health service follows, and comes back with the claim.
#[tokio::test]
async fn refusals_are_unavailable_and_health_follows_readiness() {
    let clock = ManualClock::new(T);
    let node = start(Arc::new(clock.clone())).await;
    let mut ids = id_client(&node).await;
    let mut health = health_client(&node).await;
    let check = |service: &str| HealthCheckRequest {
        service: service.to_owned(),
    };
    let ids_service = "snowmint.v1.IdService";
    let status_of = |answer: tonic::Response<tonic_health::pb::HealthCheckResponse>| {
        ServingStatus::try_from(answer.into_inner().status).unwrap()
    };
    assert_eq!(
        status_of(health.check(check(ids_service)).await.unwrap()),
        ServingStatus::Serving
    );
    let mut watch = health.watch(check(ids_service)).await.unwrap().into_inner();
    assert_eq!(next_status(&mut watch).await, ServingStatus::Serving);
    ids.next_ids(NextIdsRequest { count: 1 }).await.unwrap();

    // Fenced.
    node.source.fence("the claim was lost");
    let refused = ids.next_ids(NextIdsRequest { count: 1 }).await.unwrap_err();
    assert_eq!(refused.code(), Code::Unavailable, "{refused:?}");
    assert!(
        refused.message().contains("the claim was lost"),
        "{refused:?}"
    );
    assert_eq!(metadata(&refused, "snowmint-code"), "no_claim");
    assert_eq!(metadata(&refused, "retry-after-ms"), "1000");
    let stream = ids
        .stream_ids(StreamIdsRequest { batch: 8, total: 0 })
        .await
        .unwrap_err();
    assert_eq!(stream.code(), Code::Unavailable);
    assert_eq!(
        status_of(health.check(check(ids_service)).await.unwrap()),
        ServingStatus::NotServing
    );
    assert_eq!(next_status(&mut watch).await, ServingStatus::NotServing);
    // The server itself is alive.
    assert_eq!(
        status_of(health.check(check("")).await.unwrap()),
        ServingStatus::Serving
    );
    let node_view = ids.get_node(GetNodeRequest {}).await.unwrap().into_inner();
    assert_eq!(node_view.state, "fenced");
    assert_eq!(node_view.reason.as_deref(), Some("the claim was lost"));

    // Claimed again: serving again, by itself.
    node.source.hold(2);
    assert_eq!(next_status(&mut watch).await, ServingStatus::Serving);
    let id = ids.next_ids(NextIdsRequest { count: 1 }).await.unwrap();
    assert_eq!(fields(id.get_ref().ids[0]).0, T);

    // The clock 500 ms behind the last ID: refused until it catches up.
    clock.set(T - 500);
    let behind = ids.next_ids(NextIdsRequest { count: 1 }).await.unwrap_err();
    assert_eq!(behind.code(), Code::Unavailable, "{behind:?}");
    assert_eq!(metadata(&behind, "snowmint-code"), "clock_behind");
    let retry_ms: u64 = metadata(&behind, "retry-after-ms").parse().unwrap();
    assert!(
        (500..=1000).contains(&retry_ms),
        "retry after {retry_ms} ms"
    );
    assert_eq!(next_status(&mut watch).await, ServingStatus::NotServing);
    clock.set(T + 1);
    assert_eq!(next_status(&mut watch).await, ServingStatus::Serving);
    ids.next_ids(NextIdsRequest { count: 1 }).await.unwrap();

    assert_eq!(
        node.metric("snowmint_requests_refused_total{reason=\"no_claim\"}"),
        2.0
    );
    assert_eq!(
        node.metric("snowmint_requests_refused_total{reason=\"clock_behind\"}"),
        1.0
    );
    let unknown = health
        .check(check("snowmint.v2.Nothing"))
        .await
        .unwrap_err();
    assert_eq!(unknown.code(), Code::NotFound);
}

/// The next status a health watch sends.
async fn next_status(
    watch: &mut tonic::Streaming<tonic_health::pb::HealthCheckResponse>,
) -> ServingStatus {
    let answer = within("a health change", LIMIT, watch.next())
        .await
        .expect("the watch ended")
        .unwrap();
    ServingStatus::try_from(answer.status).unwrap()
}

/// Reflection lists the services and serves snowmint.proto, in v1 and in
/// v1alpha (what grpcurl uses to call the API without the file).
#[tokio::test]
async fn reflection_describes_the_api_in_both_versions() {
    use tonic_reflection::pb::{v1, v1alpha};
    let node = start(Arc::new(SystemClock)).await;

    let mut client =
        v1::server_reflection_client::ServerReflectionClient::new(channel(&node).await);
    let requests = [
        v1::server_reflection_request::MessageRequest::ListServices(String::new()),
        v1::server_reflection_request::MessageRequest::FileContainingSymbol(
            "snowmint.v1.IdService".into(),
        ),
    ]
    .map(|message| v1::ServerReflectionRequest {
        host: String::new(),
        message_request: Some(message),
    });
    let mut answers = client
        .server_reflection_info(tokio_stream::iter(requests))
        .await
        .unwrap()
        .into_inner();
    let Some(v1::server_reflection_response::MessageResponse::ListServicesResponse(list)) =
        answers.next().await.unwrap().unwrap().message_response
    else {
        panic!("not a service list");
    };
    let mut names: Vec<_> = list.service.into_iter().map(|s| s.name).collect();
    names.sort();
    assert_eq!(
        names,
        [
            "grpc.health.v1.Health",
            "grpc.reflection.v1.ServerReflection",
            "grpc.reflection.v1alpha.ServerReflection",
            "snowmint.v1.IdService",
        ]
    );
    let Some(v1::server_reflection_response::MessageResponse::FileDescriptorResponse(files)) =
        answers.next().await.unwrap().unwrap().message_response
    else {
        panic!("not a file descriptor");
    };
    let file =
        prost_types::FileDescriptorProto::decode(&files.file_descriptor_proto[0][..]).unwrap();
    assert_eq!(file.name(), "snowmint/v1/snowmint.proto");
    let service = &file.service[0];
    let methods: Vec<_> = service.method.iter().map(|m| m.name()).collect();
    assert_eq!(
        methods,
        [
            "NextIds",
            "StreamIds",
            "Decode",
            "Encode",
            "Range",
            "GetLayout",
            "GetNode",
            "Whois",
            "Inspect"
        ]
    );
    assert!(service.method[1].server_streaming());
    let ids_field = file
        .message_type
        .iter()
        .find(|m| m.name() == "IdBatch")
        .unwrap()
        .field[0]
        .clone();
    assert_eq!(
        ids_field.r#type(),
        prost_types::field_descriptor_proto::Type::Fixed64
    );

    let mut alpha =
        v1alpha::server_reflection_client::ServerReflectionClient::new(channel(&node).await);
    let request = v1alpha::ServerReflectionRequest {
        host: String::new(),
        message_request: Some(
            v1alpha::server_reflection_request::MessageRequest::FileContainingSymbol(
                "snowmint.v1.IdService.NextIds".into(),
            ),
        ),
    };
    let mut answers = alpha
        .server_reflection_info(tokio_stream::iter([request]))
        .await
        .unwrap()
        .into_inner();
    let Some(v1alpha::server_reflection_response::MessageResponse::FileDescriptorResponse(files)) =
        answers.next().await.unwrap().unwrap().message_response
    else {
        panic!("not a file descriptor");
    };
    let file =
        prost_types::FileDescriptorProto::decode(&files.file_descriptor_proto[0][..]).unwrap();
    assert_eq!(file.package(), "snowmint.v1");
}

/// A million streamed IDs: all distinct, strictly increasing, of this
/// node; then a stream of a set total ends after exactly that many.
#[tokio::test]
async fn a_stream_of_a_million_ids() {
    let node = start(Arc::new(SystemClock)).await;
    let mut ids = id_client(&node).await;
    let mut stream = ids
        .stream_ids(StreamIdsRequest {
            batch: 4096,
            total: 1_000_000,
        })
        .await
        .unwrap()
        .into_inner();
    let mut last = 0u64;
    let mut seen = 0u64;
    let mut batches = 0;
    while let Some(batch) = within("the next batch", LIMIT, stream.next()).await {
        let batch = batch.unwrap();
        assert!(batch.ids.len() <= 4096);
        for id in batch.ids {
            assert!(id > last, "{id} after {last}");
            let (_, datacenter, machine, _) = fields(id);
            assert_eq!((datacenter, machine), (3, 7), "{id}");
            last = id;
            seen += 1;
        }
        batches += 1;
    }
    assert_eq!(seen, 1_000_000);
    // 244 full batches and one of 576.
    assert_eq!(batches, 245);
    assert_eq!(node.metric("snowmint_ids_issued_total"), 1_000_000.0);

    let invalid = ids
        .stream_ids(StreamIdsRequest { batch: 0, total: 1 })
        .await
        .unwrap_err();
    assert_eq!(invalid.code(), Code::InvalidArgument);
    assert_eq!(invalid.message(), "batch 0 is out of range (1..=4096)");
}

/// A reader that stops reading stops the stream: the server makes no more
/// IDs than flow control and its small queue hold, and goes on when the
/// reader does.
#[tokio::test]
async fn a_slow_reader_is_not_buffered_without_bound() {
    let node = start(Arc::new(SystemClock)).await;
    let mut ids = id_client(&node).await;
    let mut stream = ids
        .stream_ids(StreamIdsRequest {
            batch: 4096,
            total: 0,
        })
        .await
        .unwrap()
        .into_inner();
    let first = stream.next().await.unwrap().unwrap();
    // Not reading now. Unbounded, the server would issue millions of IDs
    // a second for as long as the test lasts.
    let held = eventually(
        "the server to stop issuing for a reader that does not read",
        LIMIT,
        || async {
            let before = node.metric("snowmint_ids_issued_total");
            tokio::time::sleep(Duration::from_millis(300)).await;
            let after = node.metric("snowmint_ids_issued_total");
            (before == after).then_some(after)
        },
    )
    .await;
    // What HTTP/2's windows (a few MB) and the queue of two batches hold:
    // well under a million IDs of 8 bytes.
    assert!(
        held < 1_000_000.0,
        "{held} IDs made for a reader that stopped"
    );
    let mut last = *first.ids.last().unwrap();
    for _ in 0..300 {
        let batch = within("the next batch", LIMIT, stream.next())
            .await
            .unwrap()
            .unwrap();
        assert!(batch.ids[0] > last);
        last = *batch.ids.last().unwrap();
    }
    assert!(node.metric("snowmint_ids_issued_total") > held);
}

/// At shutdown the server ends its open streams (IDs and health watches)
/// with UNAVAILABLE and stops, instead of waiting for streams that have
/// no end.
#[tokio::test]
async fn shutdown_ends_open_streams() {
    let node = start(Arc::new(SystemClock)).await;
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let server = node.state.clone().serve(
        vec![(snowmint_server::Listener::Grpc, listener)],
        async move {
            let _ = stopped.await;
        },
    );
    let channel = within(
        "a gRPC connection",
        LIMIT,
        Channel::from_shared(format!("http://{address}"))
            .unwrap()
            .connect(),
    )
    .await
    .unwrap();
    let mut ids = IdServiceClient::new(channel.clone())
        .stream_ids(StreamIdsRequest {
            batch: 16,
            total: 0,
        })
        .await
        .unwrap()
        .into_inner();
    let mut watch = HealthClient::new(channel)
        .watch(HealthCheckRequest {
            service: "snowmint.v1.IdService".into(),
        })
        .await
        .unwrap()
        .into_inner();
    assert_eq!(next_status(&mut watch).await, ServingStatus::Serving);
    ids.next().await.unwrap().unwrap();
    stop.send(()).unwrap();
    let ended = loop {
        match within("the stream to end", LIMIT, ids.next()).await {
            Some(Ok(_)) => continue,
            Some(Err(status)) => break status,
            None => panic!("the stream ended without a status"),
        }
    };
    assert_eq!(ended.code(), Code::Unavailable, "{ended:?}");
    assert_eq!(metadata(&ended, "snowmint-code"), "shutting_down");
    let watch_end = within("the watch to end", LIMIT, watch.next()).await;
    assert!(
        matches!(&watch_end, Some(Err(status)) if status.code() == Code::Unavailable),
        "{watch_end:?}"
    );
    within("the server to stop", LIMIT, server.stopped())
        .await
        .unwrap();
}
