//! The HTTP API's own reading of requests: any path, query string and
//! `Accept` header sent through the service's real router. Whatever comes
//! in, the answer is never a 5xx (except a documented 503 from the issuing
//! endpoints), every error carries the JSON error shape, and every success
//! is the JSON (or text) it promises; never a panic.

use std::sync::LazyLock;

use arbitrary::{Arbitrary, Unstructured};
use axum::Router;
use axum::body::Body;
use axum::http::{HeaderValue, Request, StatusCode};
use serde_json::Value;
use snowmint_server::config::{Config, Layer, Setting};
use tower::ServiceExt;

/// One service for the whole run: building a node per input would measure
/// the state file, not the parsing.
struct Service {
    runtime: tokio::runtime::Runtime,
    app: Router,
}

static SERVICE: LazyLock<Service> = LazyLock::new(|| {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a runtime");
    let mut flags = Layer::flags();
    flags.set(
        Setting::StateDir,
        state_dir().to_string_lossy().into_owned(),
    );
    flags.set(Setting::Datacenter, "3");
    flags.set(Setting::Machine, "7");
    let config = Config::resolve(&[flags], |_| None).expect("a valid configuration");
    let state = runtime.block_on(crate::node_state(&config));
    Service {
        runtime,
        app: snowmint_server::app(state),
    }
});

/// The state directory of this process's node, under the system's
/// temporary directory: whoever ends the process removes it (the replay
/// test does; a fuzzing run leaves it, with what it found).
pub fn state_dir() -> std::path::PathBuf {
    std::env::temp_dir().join(format!("snowmint-fuzz-http-{}", std::process::id()))
}

/// Paths the input picks from: every route (the `{id}` one gets a segment
/// of the input), and one that does not exist.
const PATHS: &[&str] = &[
    "/v1/id",
    "/v1/ids",
    "/v1/ids/",
    "/v1/encode",
    "/v1/range",
    "/v1/layout",
    "/v1/node",
    "/healthz",
    "/readyz",
    "/metrics",
    "/openapi.json",
    "/v1/nothing",
];

/// Bytes as a query string: kept as they are where a URI allows them,
/// percent-encoded otherwise, so that invalid UTF-8 and stray `%` reach the
/// service's own parsing rather than stopping in the URI parser.
fn escape(bytes: &[u8], out: &mut String) {
    for &b in bytes {
        if b.is_ascii_alphanumeric() || b"-._~!$'()*+,;=:@/?&%".contains(&b) {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
}

/// Reads `data` as libfuzzer-sys reads the target's typed input, and
/// [`check`]s it; bytes that make no such input are skipped, as libFuzzer
/// skips them.
pub fn run(data: &[u8]) {
    if let Ok(input) = <(u8, &[u8], &[u8], &[u8])>::arbitrary_take_rest(Unstructured::new(data)) {
        check(input);
    }
}

/// The check of one input; panics when a property does not hold.
pub fn check(input: (u8, &[u8], &[u8], &[u8])) {
    let (pick, accept, segment, query) = input;
    let path = PATHS[pick as usize % PATHS.len()];
    let mut target = path.to_owned();
    if path == "/v1/ids/" {
        escape(segment, &mut target);
        if target.len() == path.len() {
            target.push('0');
        }
    }
    if !query.is_empty() {
        target.push('?');
        escape(query, &mut target);
    }
    let mut request = Request::get(&target);
    // Any Accept header a client could send (bytes a header may not hold
    // never get past the HTTP layer).
    if let Ok(accept) = HeaderValue::from_bytes(accept) {
        request = request.header("accept", accept);
    }
    let Ok(request) = request.body(Body::empty()) else {
        // Not a URI at all: the HTTP layer refuses it before the router.
        return;
    };
    let service = &*SERVICE;
    let (status, content_type, body) = service.runtime.block_on(async {
        let response = service
            .app
            .clone()
            .oneshot(request)
            .await
            .expect("infallible");
        let status = response.status();
        let content_type = response
            .headers()
            .get("content-type")
            .and_then(|v| v.to_str().ok())
            .unwrap_or("")
            .to_owned();
        let body = axum::body::to_bytes(response.into_body(), 1 << 20)
            .await
            .expect("a body within 1 MiB");
        (status, content_type, body)
    });
    let issuing = path == "/v1/id" || path == "/v1/ids";
    assert!(
        status.as_u16() < 500 || (status == StatusCode::SERVICE_UNAVAILABLE && issuing),
        "{target}: {status} {}",
        String::from_utf8_lossy(&body)
    );
    if status.is_success() {
        if content_type == "application/json" {
            let json: Value = serde_json::from_slice(&body).expect("JSON");
            if let Some(ids) = json.get("ids").and_then(Value::as_array) {
                let ids: Vec<u64> = ids
                    .iter()
                    .map(|id| id.as_str().unwrap().parse().unwrap())
                    .collect();
                assert!(
                    ids.windows(2).all(|w| w[0] < w[1]),
                    "{target}: not increasing"
                );
            }
        } else {
            assert!(
                content_type.starts_with("text/plain"),
                "{target}: {content_type}"
            );
            std::str::from_utf8(&body).expect("UTF-8 text");
        }
        return;
    }
    assert_eq!(content_type, "application/json", "{target}: {status}");
    let json: Value = serde_json::from_slice(&body).expect("an error body is JSON");
    let error = json["error"].as_object().expect("{\"error\":{...}}");
    assert_eq!(json.as_object().unwrap().len(), 1, "{target}: {json}");
    assert!(
        error["code"].is_string() && error["message"].is_string(),
        "{json}"
    );
    let message = error["message"].as_str().unwrap();
    // Messages quote a snippet of the input, not all of it.
    assert!(
        message.len() < 1000,
        "{target}: a {} byte message",
        message.len()
    );
    for (key, value) in error {
        match key.as_str() {
            "code" | "message" => {}
            // The facts of an out-of-range value, as strings (IDs exceed
            // JavaScript's safe integers).
            "field" | "value" | "min" | "max" => assert!(value.is_string(), "{json}"),
            "retry_after_s" => assert!(value.as_u64().is_some_and(|s| s >= 1), "{json}"),
            other => panic!("{target}: unexpected key {other} in {json}"),
        }
    }
}
