//! The lead of issue 36: how far the timestamp of an ID runs ahead of the
//! node's clock when it is issued, in `/v1/node` (`lead_ms`) and `/metrics`
//! (`snowmint_id_lead_ms`, `snowmint_id_lead_max_ms`) and gRPC `GetNode`
//! (`lead_ms`, asked over a real socket of the same node). Zero under full
//! load with `refuse` and `wait`; under `borrow`, after the clock steps
//! back, above zero, never past `--clock-max` (an ID that would need more
//! is refused), and back to zero once the clock catches up. The three
//! always agree.

use std::sync::Arc;
use std::time::{Duration, Instant};

use axum::http::StatusCode;
use snowmint::{ClockPolicy, ManualClock};
use snowmint_client::proto::GetNodeRequest;
use snowmint_client::proto::id_service_client::IdServiceClient;
use snowmint_server::Listener;
use snowmint_test_support::in_process::{Options, TestNode, get, node_with};
use tonic::transport::Channel;

const TWITTER_EPOCH: i64 = 1_288_834_974_657;
const T: i64 = 1_700_000_000_000;

/// The Unix ms of a Twitter-layout ID, by the formula in README.md.
fn timestamp_ms(id: &serde_json::Value) -> i64 {
    let id: u64 = id.as_str().expect("a string").parse().expect("an ID");
    (id >> 22) as i64 + TWITTER_EPOCH
}

fn metric(text: &str, name: &str) -> f64 {
    text.lines()
        .find_map(|line| {
            let (key, value) = line.rsplit_once(' ')?;
            (key == name).then(|| value.parse().unwrap())
        })
        .unwrap_or_else(|| panic!("no metric {name} in:\n{text}"))
}

/// A client of a gRPC listener on a free loopback port that serves `node`
/// (the same state as its HTTP routes); the listener lives as long as the
/// test's runtime.
async fn grpc(node: &TestNode) -> IdServiceClient<Channel> {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    let _serving = node.state.clone().serve(
        vec![(Listener::Grpc, listener)],
        std::future::pending::<()>(),
    );
    let channel = Channel::from_shared(format!("http://{address}"))
        .unwrap()
        .connect()
        .await
        .expect("a connection to the node's gRPC listener");
    IdServiceClient::new(channel)
}

/// The lead as `/v1/node` gives it, as `/metrics` does and as gRPC
/// `GetNode` does: (current, max) from each.
async fn leads(node: &TestNode, grpc: &mut IdServiceClient<Channel>) -> [(f64, f64); 3] {
    let json = get(&node.app, "/v1/node").await.json();
    let lead = &json["lead_ms"];
    let from_node = (
        lead["current"].as_f64().expect("lead_ms.current"),
        lead["max"].as_f64().expect("lead_ms.max"),
    );
    let text = get(&node.app, "/metrics").await.body;
    let from_metrics = (
        metric(&text, "snowmint_id_lead_ms"),
        metric(&text, "snowmint_id_lead_max_ms"),
    );
    let described = grpc
        .get_node(GetNodeRequest {})
        .await
        .expect("GetNode answers")
        .into_inner();
    let lead = described.lead_ms.expect("GetNode carries lead_ms");
    [from_node, from_metrics, (lead.current, lead.max)]
}

/// `refuse` and `wait` never issue ahead of the clock: a node driven past
/// its ceiling (4 threads taking whole milliseconds' worth at once, until
/// the sequence has run out and been waited for many times) shows a lead
/// of 0, now and at most.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn the_lead_stays_zero_under_full_load_with_refuse_and_wait() {
    for policy in [
        ClockPolicy::Refuse,
        ClockPolicy::Wait {
            max: Duration::from_secs(2),
        },
    ] {
        let node = node_with(Options {
            policy,
            ..Options::default()
        })
        .await;
        let mut grpc = grpc(&node).await;
        assert_eq!(leads(&node, &mut grpc).await, [(0.0, 0.0); 3]);
        let started = Instant::now();
        let mut rounds = 0;
        loop {
            let tasks: Vec<_> = (0..4)
                .map(|_| {
                    let issuer = node.state.issuer().clone();
                    tokio::spawn(async move {
                        let mut ids = Vec::new();
                        for _ in 0..25 {
                            ids.clear();
                            issuer.next_ids(4096, &mut ids).await.expect("IDs");
                        }
                    })
                })
                .collect();
            for task in tasks {
                task.await.unwrap();
            }
            rounds += 1;
            // A lead the generator took shows in the maximum even after
            // the clock moved past it.
            assert_eq!(
                leads(&node, &mut grpc).await,
                [(0.0, 0.0); 3],
                "{policy:?}, round {rounds}"
            );
            let text = get(&node.app, "/metrics").await.body;
            let waits = metric(&text, "snowmint_sequence_exhaustion_waits_total");
            // 100 batches of a whole millisecond's worth: the sequence ran
            // out and was waited for; keep going until it did many times.
            if waits >= 50.0 && rounds >= 2 {
                break;
            }
            assert!(
                started.elapsed() < Duration::from_secs(120),
                "{policy:?}: only {waits} exhaustion waits after {rounds} rounds"
            );
        }
        let ids = node.state.issuer().stats();
        assert_eq!(ids.max_lead, Duration::ZERO);
        assert_eq!(ids.clock_regressions, 0, "{policy:?}");
    }
}

/// `borrow` with `--clock-max 50ms`: after the clock steps back 10 ms the
/// node keeps issuing at the last millisecond, 10 ms ahead; pushed on
/// (whole milliseconds' worth at a time) its IDs run further ahead, one
/// millisecond per 4,096, until the 50 ms bound, where it refuses with
/// `clock_behind` rather than go further. The maximum stays at 50 ms; the
/// lead now falls as the clock moves on, and is 0 once it is past the last
/// millisecond used.
#[tokio::test]
async fn borrowing_makes_a_lead_bounded_by_the_setting_that_falls_back_to_zero() {
    let clock = ManualClock::new(T);
    let node = node_with(Options {
        clock: Arc::new(clock.clone()),
        policy: ClockPolicy::Borrow {
            max_ahead: Duration::from_millis(50),
        },
        ..Options::default()
    })
    .await;
    let mut grpc = grpc(&node).await;
    let first = get(&node.app, "/v1/id").await.json();
    assert_eq!(timestamp_ms(&first["id"]), T);
    assert_eq!(leads(&node, &mut grpc).await, [(0.0, 0.0); 3]);

    // The clock steps back 10 ms: the next ID borrows the last millisecond.
    clock.set(T - 10);
    let borrowed = get(&node.app, "/v1/id").await.json();
    assert_eq!(timestamp_ms(&borrowed["id"]), T);
    assert_eq!(leads(&node, &mut grpc).await, [(10.0, 10.0); 3]);

    // Whole milliseconds' worth: each batch runs into the next millisecond
    // ahead, until a batch would need more than 50 ms of lead.
    let mut last_ts = T;
    let refused = loop {
        let answer = get(&node.app, "/v1/ids?count=4096").await;
        if answer.status != StatusCode::OK {
            break answer;
        }
        let ids = answer.json()["ids"].as_array().unwrap().clone();
        last_ts = timestamp_ms(ids.last().unwrap());
        assert!(
            last_ts - (T - 10) <= 50,
            "an ID at {last_ts}, {} ms ahead of the clock",
            last_ts - (T - 10)
        );
    };
    let (code, _, message) = refused.error(StatusCode::SERVICE_UNAVAILABLE);
    assert_eq!(code, "clock_behind", "{message}");
    assert_eq!(
        last_ts,
        T - 10 + 50,
        "the IDs went as far as the bound allows"
    );
    assert_eq!(leads(&node, &mut grpc).await, [(50.0, 50.0); 3]);
    let node_json = get(&node.app, "/v1/node").await.json();
    assert_eq!(node_json["clock_max_ms"], 50);

    // The clock moves on: the lead now falls with it, the maximum stays.
    clock.set(T + 20);
    assert_eq!(leads(&node, &mut grpc).await, [(20.0, 50.0); 3]);
    // Past the last millisecond used: IDs are at the clock again.
    clock.set(T + 45);
    let caught_up = get(&node.app, "/v1/id").await.json();
    assert_eq!(timestamp_ms(&caught_up["id"]), T + 45);
    assert_eq!(leads(&node, &mut grpc).await, [(0.0, 50.0); 3]);
}
