//! gRPC `Inspect` over a real socket: the known-answer vectors
//! (vectors/vectors.json) read through it as through `GET /v1/inspect`,
//! and its bounds refused with INVALID_ARGUMENT naming them.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;
use snowmint::{Node, SystemClock};
use snowmint_client::proto::id_service_client::IdServiceClient;
use snowmint_client::proto::reading_field::Value as FieldValue;
use snowmint_client::proto::{InspectRequest, LayoutChoice, Plausibility, Reading};
use snowmint_test_support::in_process::grpc::GrpcNode;
use snowmint_test_support::wait::within;
use tonic::Code;
use tonic::transport::Channel;

const NOW: &str = "2025-06-15T15:06:40Z";

async fn client() -> (GrpcNode, IdServiceClient<Channel>) {
    let node = GrpcNode::start(Node::from_slot(34), Arc::new(SystemClock)).await;
    let channel = within(
        "a gRPC connection",
        Duration::from_secs(60),
        Channel::from_shared(node.endpoint()).unwrap().connect(),
    )
    .await
    .unwrap();
    // 10,000 tokens' readings are more than tonic's default 4 MiB.
    let client = IdServiceClient::new(channel).max_decoding_message_size(64 << 20);
    (node, client)
}

fn vectors() -> Value {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../vectors/vectors.json");
    let file: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    assert_eq!(file["version"], 1);
    file
}

fn request(text: &str) -> InspectRequest {
    InspectRequest {
        text: text.as_bytes().to_vec(),
        now: NOW.to_owned(),
        layout: None,
    }
}

/// A reading's field as the vectors write it.
fn field(reading: &Reading, name: &str) -> Option<Value> {
    let field = reading.fields.iter().find(|f| f.name == name)?;
    Some(match field.value.as_ref()? {
        FieldValue::Number(n) => Value::from(*n),
        FieldValue::Text(text) => Value::from(text.as_str()),
    })
}

#[tokio::test]
async fn every_vector_and_text_through_inspect() {
    let (_node, mut client) = client().await;
    let file = vectors();
    let list = file["vectors"].as_array().unwrap();
    let text: String = list
        .iter()
        .map(|v| format!("{}\n", v["input"].as_str().unwrap()))
        .collect();
    let answer = client.inspect(request(&text)).await.unwrap().into_inner();
    assert_eq!(answer.now, "2025-06-15T15:06:40.000Z");
    assert_eq!(answer.tokens.len(), list.len());
    for (token, vector) in answer.tokens.iter().zip(list) {
        assert_eq!(token.input, vector["input"].as_str().unwrap());
        let reading = token
            .candidates
            .iter()
            .find(|r| r.family == vector["family"].as_str().unwrap())
            .unwrap_or_else(|| panic!("no {} reading: {token:?}", vector["family"]));
        assert_eq!(
            reading.time.as_deref(),
            vector["time"].as_str(),
            "{token:?}"
        );
        for (name, value) in vector["fields"].as_object().unwrap() {
            assert_eq!(
                field(reading, name).as_ref(),
                Some(value),
                "{name} of {token:?}"
            );
        }
    }
    for entry in file["texts"].as_array().unwrap() {
        let text = entry["text"].as_str().unwrap();
        let answer = client.inspect(request(text)).await.unwrap().into_inner();
        let expected = entry["tokens"].as_array().unwrap();
        assert_eq!(answer.tokens.len(), expected.len(), "{text}");
        for (token, expected) in answer.tokens.iter().zip(expected) {
            let best = &token.candidates[0];
            assert_eq!(token.input, expected["input"].as_str().unwrap());
            assert_eq!(best.family, expected["family"].as_str().unwrap(), "{text}");
            assert_eq!(best.time.as_deref(), expected["time"].as_str(), "{text}");
        }
    }
}

/// The ranking as HTTP gives it: pinned, plausible, implausible; a
/// layout read alone; the microseconds beside the text.
#[tokio::test]
async fn readings_are_ranked_and_carry_their_time() {
    let (_node, mut client) = client().await;
    let answer = client
        .inspect(request("<@175928847299117063> 1724551110457221119"))
        .await
        .unwrap()
        .into_inner();
    let mention = &answer.tokens[0];
    assert_eq!(mention.context.as_deref(), Some("user mention"));
    assert_eq!(mention.candidates[0].plausibility(), Plausibility::Pinned);
    assert_eq!(mention.candidates[0].unix_us, Some(1_462_015_105_796_000));
    let bare: Vec<_> = answer.tokens[1]
        .candidates
        .iter()
        .map(|r| (r.family.as_str(), r.plausibility()))
        .collect();
    // Every preset's reading: Twitter's first (plausible), Discord's in
    // the future and among the implausible, which come after the rest.
    assert_eq!(bare[0], ("twitter", Plausibility::Plausible), "{bare:?}");
    assert!(
        bare.contains(&("discord", Plausibility::Implausible)),
        "{bare:?}"
    );
    assert!(
        bare.is_sorted_by_key(|(_, plausibility)| *plausibility == Plausibility::Implausible),
        "{bare:?}"
    );
    assert!(bare.len() >= 10, "{bare:?}");

    let mut alone = request("175928847299117063");
    alone.layout = Some(LayoutChoice {
        layout: "discord".to_owned(),
        epoch: String::new(),
    });
    let answer = client.inspect(alone).await.unwrap().into_inner();
    let families: Vec<_> = answer.tokens[0]
        .candidates
        .iter()
        .map(|r| r.family.as_str())
        .collect();
    assert_eq!(families, ["discord"]);

    // Bytes that are not UTF-8 are read around.
    let mut bytes = request("");
    bytes.text = b"\xff 1724551110457221119 \xfe".to_vec();
    assert_eq!(
        client
            .inspect(bytes)
            .await
            .unwrap()
            .into_inner()
            .tokens
            .len(),
        1
    );
}

#[tokio::test]
async fn bounds_are_invalid_argument_by_name() {
    let (_node, mut client) = client().await;
    let status = client
        .inspect(request(&" ".repeat((1 << 20) + 1)))
        .await
        .unwrap_err();
    assert_eq!(status.code(), Code::InvalidArgument);
    assert_eq!(
        status.message(),
        "text length 1048577 is out of range (0..=1048576)"
    );
    let status = client
        .inspect(request(&"1724551110457221119\n".repeat(10_001)))
        .await
        .unwrap_err();
    assert_eq!(
        (status.code(), status.message()),
        (
            Code::InvalidArgument,
            "token count 10001+ is out of range (0..=10000)"
        )
    );
    let mut bad_now = request("1724551110457221119");
    bad_now.now = "soon".to_owned();
    let status = client.inspect(bad_now).await.unwrap_err();
    assert_eq!(status.code(), Code::InvalidArgument);
    assert!(
        status.message().starts_with("now \"soon\" is not valid"),
        "{}",
        status.message()
    );
    // 10,000 tokens: answered.
    let batch = "1724551110457221119\n".repeat(10_000);
    assert_eq!(
        client
            .inspect(request(&batch))
            .await
            .unwrap()
            .into_inner()
            .tokens
            .len(),
        10_000
    );
}
