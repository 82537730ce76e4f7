//! `/openapi.json` parses, describes exactly the router's routes, and what
//! the service answers matches what it describes.

use std::collections::BTreeSet;

use axum::http::StatusCode;
use serde_json::Value;
use snowmint_test_support::in_process::{Answer, get, get_with, node};
use snowmint_test_support::schema::{check, resolve};

fn document() -> Value {
    snowmint_server::openapi::document()
}

fn operation<'a>(document: &'a Value, path: &str) -> &'a Value {
    &document["paths"][path]["get"]
}

/// Checks an answer against the operation's response for its status.
fn conforms(document: &Value, path: &str, answer: &Answer) {
    let status = answer.status.as_u16().to_string();
    let response = resolve(document, &operation(document, path)["responses"][&status]);
    assert!(
        response.is_object(),
        "{path}: status {status} is not documented ({})",
        answer.body
    );
    let media = answer.content_type().split(';').next().unwrap().to_owned();
    let schema = &response["content"][&media]["schema"];
    assert!(
        schema.is_object(),
        "{path} {status}: {media} is not documented"
    );
    if media == "application/json" {
        check(
            document,
            schema,
            &answer.json(),
            &format!("{path} {status}"),
        );
    }
    if status == "503" {
        assert!(response["headers"]["Retry-After"].is_object());
    }
}

/// The document is OpenAPI 3 and lists every route of the router, and only
/// those.
#[test]
fn lists_every_route() {
    let document = document();
    assert!(document["openapi"].as_str().unwrap().starts_with("3."));
    assert!(document["info"]["title"].is_string());
    let documented: BTreeSet<&str> = document["paths"]
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    let routed: BTreeSet<&str> = snowmint_server::routes().iter().map(|(p, _)| *p).collect();
    assert_eq!(documented, routed);
}

/// Every `$ref` resolves, every operation documents a 200 with a schema,
/// and every error response uses the one error shape.
#[test]
fn every_operation_is_complete() {
    let document = document();
    for (path, item) in document["paths"].as_object().unwrap() {
        let operation = &item["get"];
        assert!(operation["operationId"].is_string(), "{path}");
        assert!(operation["summary"].is_string(), "{path}");
        for parameter in operation["parameters"].as_array().unwrap() {
            let parameter = resolve(&document, parameter);
            assert!(
                parameter["name"].is_string() && parameter["schema"].is_object(),
                "{path}"
            );
            if parameter["in"] == "path" {
                assert!(path.contains(&format!("{{{}}}", parameter["name"].as_str().unwrap())));
            }
        }
        let responses = operation["responses"].as_object().unwrap();
        assert!(responses.contains_key("200"), "{path}");
        for (status, response) in responses {
            let response = resolve(&document, response);
            assert!(response["description"].is_string(), "{path} {status}");
            let content = response["content"].as_object().unwrap();
            for (media, body) in content {
                let schema = resolve(&document, &body["schema"]);
                assert!(schema.is_object(), "{path} {status} {media}");
                if status != "200" {
                    assert_eq!(body["schema"]["$ref"], "#/components/schemas/Error");
                }
            }
        }
    }
}

/// What the service answers, on every route, matches the document: 200s
/// for example requests, and the errors the document lists.
#[tokio::test]
async fn answers_match_the_document() {
    let document = document();
    let node = node().await;
    let app = &node.app;
    let examples = [
        ("/v1/id", "/v1/id"),
        ("/v1/ids", "/v1/ids?count=3"),
        (
            "/v1/ids/{id}",
            "/v1/ids/1724551110457221119?layout=twitter&epoch=1288834974657",
        ),
        (
            "/v1/encode",
            "/v1/encode?timestamp=1700000000000&datacenter=1&machine=2&sequence=3",
        ),
        ("/v1/range", "/v1/range?from=1700000000000&to=1700000001000"),
        ("/v1/layout", "/v1/layout?layout=discord"),
        (
            "/v1/inspect",
            "/v1/inspect?now=1750000000000&text=%3C%40175928847299117063%3E%20550e8400-e29b-41d4-a716-446655440000",
        ),
        ("/v1/node", "/v1/node"),
        ("/healthz", "/healthz"),
        ("/readyz", "/readyz"),
        ("/metrics", "/metrics"),
        ("/openapi.json", "/openapi.json"),
        ("/api/snowflake/get/{key}", "/api/snowflake/get/order"),
        (
            "/api/snowflake/decode",
            "/api/snowflake/decode?id=17eed6190fcedfff&encoding=hex",
        ),
    ];
    // A node given its identity keeps no claim history: its whois
    // answer is the documented 404 (the 200 is checked against a fleet's
    // nodes, in crates/snowmint-cli/tests/whois.rs).
    let without_history = [("/v1/whois/{id}", "/v1/whois/1724551110457221119")];
    assert_eq!(
        examples.len() + without_history.len(),
        snowmint_server::routes().len()
    );
    for (path, uri) in examples {
        let answer = get(app, uri).await;
        assert_eq!(answer.status, StatusCode::OK, "{uri}: {}", answer.body);
        conforms(&document, path, &answer);
    }
    for (path, uri) in without_history {
        let answer = get(app, uri).await;
        assert_eq!(
            answer.status,
            StatusCode::NOT_FOUND,
            "{uri}: {}",
            answer.body
        );
        conforms(&document, path, &answer);
    }
    for (path, uri) in [("/v1/id", "/v1/id"), ("/v1/ids", "/v1/ids?count=2")] {
        let answer = get_with(app, uri, ("accept", "text/plain")).await;
        conforms(&document, path, &answer);
    }
    for (path, uri) in [
        ("/v1/id", "/v1/id?x=1"),
        ("/v1/ids", "/v1/ids?count=0"),
        ("/v1/ids/{id}", "/v1/ids/x"),
        ("/v1/encode", "/v1/encode?timestamp=1"),
        ("/v1/range", "/v1/range?from=2&to=1"),
        ("/v1/layout", "/v1/layout?epoch=x"),
        ("/v1/inspect", "/v1/inspect?x=1"),
        ("/v1/node", "/v1/node?x=1"),
        ("/v1/whois/{id}", "/v1/whois/x"),
        (
            "/api/snowflake/decode",
            "/api/snowflake/decode?id=17eed6190fcedfff",
        ),
        ("/api/snowflake/decode", "/api/snowflake/decode"),
    ] {
        let answer = get(app, uri).await;
        assert_eq!(answer.status, StatusCode::BAD_REQUEST, "{uri}");
        conforms(&document, path, &answer);
    }
    let long = format!("/v1/layout?layout={}", "x".repeat(9000));
    conforms(&document, "/v1/layout", &get(app, &long).await);
    let served: Value = get(app, "/openapi.json").await.json();
    assert_eq!(served["info"]["version"], env!("CARGO_PKG_VERSION"));

    // Refusals, as documented.
    use snowmint_fleet::SlotSource;
    node.source.release().await;
    for (path, uri) in [
        ("/v1/id", "/v1/id"),
        ("/v1/ids", "/v1/ids?count=2"),
        ("/readyz", "/readyz"),
        ("/api/snowflake/get/{key}", "/api/snowflake/get/order"),
    ] {
        let answer = get(app, uri).await;
        assert_eq!(answer.status, StatusCode::SERVICE_UNAVAILABLE, "{uri}");
        conforms(&document, path, &answer);
    }
    let fenced = get(app, "/v1/node").await;
    conforms(&document, "/v1/node", &fenced);
}

/// Every query parameter the document lists is one the endpoint knows.
#[tokio::test]
async fn documented_parameters_are_accepted() {
    let document = document();
    let node = node().await;
    for (path, item) in document["paths"].as_object().unwrap() {
        let concrete = path.replace("{id}", "12");
        for parameter in item["get"]["parameters"].as_array().unwrap() {
            let parameter = resolve(&document, parameter);
            if parameter["in"] != "query" {
                continue;
            }
            let name = parameter["name"].as_str().unwrap();
            let example = match &parameter["schema"]["example"] {
                Value::String(s) => s.clone(),
                Value::Null => "1".to_owned(),
                other => other.to_string(),
            };
            let answer = get(&node.app, &format!("{concrete}?{name}={example}")).await;
            if answer.status != StatusCode::OK {
                let (code, ..) = answer.error(answer.status);
                assert_ne!(code, "unknown_parameter", "{path} does not know {name}");
            }
        }
    }
}
