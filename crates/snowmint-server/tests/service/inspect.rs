//! `/v1/inspect`, GET and POST, through the router: the known-answer
//! vectors (vectors/vectors.json) read through it, its parameters, and
//! texts past its bounds refused with a 4xx that names the bound.

use std::path::Path;

use axum::body::Body;
use axum::http::{Request, StatusCode};
use serde_json::Value;
use snowmint_test_support::in_process::{get, node, send};

/// "Now" for every call: 2025-06-15T15:06:40Z.
const NOW: &str = "1750000000000";

fn vectors() -> Value {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../vectors/vectors.json");
    let file: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    assert_eq!(file["version"], 1);
    file
}

/// `text` for a query string.
fn escaped(text: &str) -> String {
    text.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' => {
                (b as char).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect()
}

fn post(text: &str, query: &str, content_type: &str) -> Request<Body> {
    Request::post(format!("/v1/inspect?{query}"))
        .header("content-type", content_type)
        .body(Body::from(text.to_owned()))
        .unwrap()
}

/// Every vector in one POST, a line each: each line's token has the
/// vector's family among its readings, at its time, with its fields.
#[tokio::test]
async fn every_vector_through_post() {
    let node = node().await;
    let file = vectors();
    let list = file["vectors"].as_array().unwrap();
    let text: String = list
        .iter()
        .map(|v| format!("{}\n", v["input"].as_str().unwrap()))
        .collect();
    let answer = send(&node.app, post(&text, &format!("now={NOW}"), "text/plain")).await;
    assert_eq!(answer.status, StatusCode::OK, "{}", answer.body);
    let json = answer.json();
    assert_eq!(json["now"], "2025-06-15T15:06:40.000Z");
    let tokens = json["tokens"].as_array().unwrap();
    assert_eq!(tokens.len(), list.len());
    for (token, vector) in tokens.iter().zip(list) {
        assert_eq!(token["input"], vector["input"]);
        let reading = token["candidates"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["family"] == vector["family"])
            .unwrap_or_else(|| panic!("no {} reading: {token}", vector["family"]));
        assert_eq!(reading["time"], vector["time"], "{token}");
        for (name, value) in vector["fields"].as_object().unwrap() {
            assert_eq!(&reading[name], value, "{name} of {token}");
        }
    }
}

/// Every text of the vectors through GET: its tokens, each with its top
/// reading.
#[tokio::test]
async fn every_text_through_get() {
    let node = node().await;
    for entry in vectors()["texts"].as_array().unwrap() {
        let text = entry["text"].as_str().unwrap();
        let answer = get(
            &node.app,
            &format!("/v1/inspect?now={NOW}&text={}", escaped(text)),
        )
        .await;
        assert_eq!(answer.status, StatusCode::OK, "{text}: {}", answer.body);
        let tokens = answer.json()["tokens"].clone();
        let expected = entry["tokens"].as_array().unwrap();
        assert_eq!(
            tokens.as_array().unwrap().len(),
            expected.len(),
            "{text}: {tokens}"
        );
        for (token, expected) in tokens.as_array().unwrap().iter().zip(expected) {
            assert_eq!(token["input"], expected["input"]);
            assert_eq!(
                token["candidates"][0]["family"], expected["family"],
                "{text}"
            );
            assert_eq!(token["candidates"][0]["time"], expected["time"], "{text}");
        }
    }
}

/// A JSON body is read as its `text`; `layout=` reads integers as that
/// layout alone; unknown parameters and bodies that are not the object
/// are refused by name.
#[tokio::test]
async fn json_bodies_layouts_and_bad_requests() {
    let node = node().await;
    let body = r#"{"text": "see 175928847299117063"}"#;
    let answer = send(
        &node.app,
        post(body, "layout=discord", "application/json; charset=utf-8"),
    )
    .await;
    assert_eq!(answer.status, StatusCode::OK, "{}", answer.body);
    let candidates = answer.json()["tokens"][0]["candidates"].clone();
    assert_eq!(candidates.as_array().unwrap().len(), 1);
    assert_eq!(candidates[0]["family"], "discord");
    assert_eq!(candidates[0]["time"], "2016-04-30T11:18:25.796Z");

    let answer = send(&node.app, post("{\"txt\": 1}", "", "application/json")).await;
    let (code, field, message) = answer.error(StatusCode::BAD_REQUEST);
    assert_eq!(
        (code.as_str(), field.as_deref()),
        ("invalid_body", Some("text"))
    );
    assert!(message.contains("unknown field `txt`"), "{message}");

    // An empty body is a request with nothing to read (schemathesis sent one).
    let answer = send(&node.app, post("", "", "text/plain")).await;
    let (code, field, message) = answer.error(StatusCode::BAD_REQUEST);
    assert_eq!(
        (code.as_str(), field.as_deref()),
        ("missing_body", Some("text"))
    );
    assert!(message.contains("GET /v1/inspect?text="), "{message}");

    let answer = get(&node.app, "/v1/inspect?txt=1").await;
    let (code, field, _) = answer.error(StatusCode::BAD_REQUEST);
    assert_eq!(
        (code.as_str(), field.as_deref()),
        ("unknown_parameter", Some("txt"))
    );
    let answer = get(&node.app, "/v1/inspect").await;
    let (code, field, _) = answer.error(StatusCode::BAD_REQUEST);
    assert_eq!(
        (code.as_str(), field.as_deref()),
        ("missing_parameter", Some("text"))
    );
    let answer = get(&node.app, "/v1/inspect?text=1724551110457221119&now=soon").await;
    let (code, field, _) = answer.error(StatusCode::BAD_REQUEST);
    assert_eq!(
        (code.as_str(), field.as_deref()),
        ("invalid_parameter", Some("now"))
    );
}

/// `top=N` keeps each token's N most plausible readings, in order; out of
/// 1..=64 it is refused by name, with the range, as the document says.
#[tokio::test]
async fn top_keeps_the_most_plausible_readings() {
    let node = node().await;
    let text = escaped("<@175928847299117063> 1724551110457221119");
    let all = get(&node.app, &format!("/v1/inspect?now={NOW}&text={text}")).await;
    assert_eq!(all.status, StatusCode::OK, "{}", all.body);
    let all = all.json();
    let bare = all["tokens"][1]["candidates"].as_array().unwrap().clone();
    assert!(bare.len() > 2, "{bare:?}");
    for top in [1usize, 2] {
        let answer = send(
            &node.app,
            post(
                "<@175928847299117063> 1724551110457221119",
                &format!("now={NOW}&top={top}"),
                "text/plain",
            ),
        )
        .await;
        assert_eq!(answer.status, StatusCode::OK, "{}", answer.body);
        let json = answer.json();
        assert_eq!(json["tokens"][0]["candidates"].as_array().unwrap().len(), 1);
        assert_eq!(
            json["tokens"][1]["candidates"].as_array().unwrap()[..],
            bare[..top]
        );
    }
    for bad in ["0", "65", "one"] {
        let answer = get(&node.app, &format!("/v1/inspect?text=1&top={bad}")).await;
        let (code, field, message) = answer.error(StatusCode::BAD_REQUEST);
        assert_eq!(field.as_deref(), Some("top"), "{code} {message}");
        assert!(message.contains("1..=64"), "{message}");
    }
    let document = get(&node.app, "/openapi.json").await.json();
    let top = document["paths"]["/v1/inspect"]["get"]["parameters"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["name"] == "top")
        .expect("top is documented")
        .clone();
    assert_eq!(
        (
            top["schema"]["minimum"].as_u64(),
            top["schema"]["maximum"].as_u64()
        ),
        (Some(1), Some(64))
    );
}

/// The bounds: a text over 1 MiB and over 10,000 tokens are 400s naming
/// the bound; a body over 2 MiB is a 413, declared or not.
#[tokio::test]
async fn texts_past_the_bounds_are_refused_by_name() {
    let node = node().await;
    let long = " ".repeat((1 << 20) + 1);
    let answer = send(&node.app, post(&long, "", "text/plain")).await;
    let (code, field, message) = answer.error(StatusCode::BAD_REQUEST);
    assert_eq!(
        (code.as_str(), field.as_deref()),
        ("out_of_range", Some("text"))
    );
    assert_eq!(message, "text length 1048577 is out of range (0..=1048576)");
    assert_eq!(answer.json()["error"]["max"], "1048576");

    let many = "1724551110457221119\n".repeat(10_001);
    let answer = send(&node.app, post(&many, "", "text/plain")).await;
    let (code, _, message) = answer.error(StatusCode::BAD_REQUEST);
    assert_eq!(
        (code.as_str(), message.as_str()),
        (
            "out_of_range",
            "token count 10001+ is out of range (0..=10000)"
        )
    );

    // The body's length declared, and not (a stream of chunks).
    let huge = "x".repeat((2 << 20) + 1);
    let answer = send(&node.app, post(&huge, "", "text/plain")).await;
    answer.error(StatusCode::PAYLOAD_TOO_LARGE);
    let chunks = futures_like_stream(huge);
    let request = Request::post("/v1/inspect").body(chunks).unwrap();
    let answer = send(&node.app, request).await;
    let (code, _, message) = answer.error(StatusCode::PAYLOAD_TOO_LARGE);
    assert_eq!(code, "payload_too_large");
    assert!(
        message.contains("send at most 1048576 bytes of text"),
        "{message}"
    );
}

/// A body without a declared length: the text in 64 KiB chunks.
fn futures_like_stream(text: String) -> Body {
    let chunks: Vec<Result<Vec<u8>, std::io::Error>> = text
        .into_bytes()
        .chunks(64 << 10)
        .map(|chunk| Ok(chunk.to_vec()))
        .collect();
    Body::from_stream(tokio_stream::iter(chunks))
}

/// 10,000 IDs in one POST: every one answered, in order.
#[tokio::test]
async fn a_batch_of_ten_thousand() {
    let node = node().await;
    let text: String = (0..10_000u64)
        .map(|i| format!("{}\n", 1_724_551_110_457_221_119 + (i << 22)))
        .collect();
    let answer = send(&node.app, post(&text, &format!("now={NOW}"), "text/plain")).await;
    assert_eq!(answer.status, StatusCode::OK);
    let json = answer.json();
    let tokens = json["tokens"].as_array().unwrap();
    assert_eq!(tokens.len(), 10_000);
    assert_eq!(
        tokens[9_999]["candidates"][0]["time"],
        "2023-11-14T22:13:29.999Z"
    );
}
