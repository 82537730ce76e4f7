//! Shared pieces of the service's tests: temporary state directories, a
//! node built on a real state file, and request helpers.

#![allow(dead_code)] // Each test file uses its own part of this module.

use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::body::Body;
use axum::http::{HeaderMap, Request, StatusCode};
use serde_json::Value;
use snowmint::{Clock, ClockPolicy, Layout, Node, SystemClock};
use snowmint_fleet::{SlotSource, StaticSource};
use snowmint_server::{AppState, Issuer, IssuerOptions, app};
use tower::ServiceExt;

pub mod http;
pub mod schema;
mod temp;

pub use temp::TempDir;

/// The node every test runs as, unless it says otherwise.
pub const NODE: Node = Node {
    datacenter: 3,
    machine: 7,
};

/// A service for tests: the router, its state, the static source it
/// follows and its state directory.
pub struct TestNode {
    pub app: Router,
    pub state: AppState,
    pub source: Arc<StaticSource>,
    pub dir: TempDir,
}

pub struct Options {
    pub clock: Arc<dyn Clock>,
    pub policy: ClockPolicy,
    pub timeout: Duration,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            clock: Arc::new(SystemClock),
            policy: ClockPolicy::Refuse,
            timeout: Duration::from_secs(10),
        }
    }
}

pub async fn node() -> TestNode {
    node_with(Options::default()).await
}

pub async fn node_with(options: Options) -> TestNode {
    let dir = TempDir::new("node");
    let source = Arc::new(StaticSource::new(Layout::TWITTER, NODE).unwrap());
    let issuer = Issuer::start(
        Arc::clone(&source) as Arc<dyn SlotSource>,
        IssuerOptions {
            layout: Layout::TWITTER,
            clock_policy: options.policy,
            clock: options.clock,
            state_dir: dir.path().to_owned(),
            mark_step: Duration::from_secs(1),
        },
    )
    .await
    .unwrap();
    let state = AppState::with_request_timeout(issuer, options.timeout);
    TestNode {
        app: app(state.clone()),
        state,
        source,
        dir,
    }
}

/// An answer, read whole.
pub struct Answer {
    pub status: StatusCode,
    pub headers: HeaderMap,
    pub body: String,
}

impl Answer {
    pub fn json(&self) -> Value {
        serde_json::from_str(&self.body).unwrap_or_else(|e| panic!("not JSON ({e}): {}", self.body))
    }

    pub fn content_type(&self) -> &str {
        self.headers
            .get("content-type")
            .map(|v| v.to_str().unwrap())
            .unwrap_or("")
    }

    /// Asserts the API's error shape and returns (code, field, message).
    pub fn error(&self, status: StatusCode) -> (String, Option<String>, String) {
        assert_eq!(self.status, status, "{}", self.body);
        assert_eq!(self.content_type(), "application/json");
        let json = self.json();
        let object = json.as_object().expect("an object");
        assert_eq!(object.len(), 1, "only `error`: {json}");
        let error = &json["error"];
        let keys: Vec<_> = error.as_object().unwrap().keys().cloned().collect();
        for key in &keys {
            assert!(
                http::ERROR_KEYS.contains(&key.as_str()),
                "unexpected key {key}: {json}"
            );
        }
        (
            error["code"].as_str().unwrap().to_owned(),
            error["field"].as_str().map(str::to_owned),
            error["message"].as_str().unwrap().to_owned(),
        )
    }
}

pub async fn send(app: &Router, request: Request<Body>) -> Answer {
    let response = app.clone().oneshot(request).await.unwrap();
    let status = response.status();
    let headers = response.headers().clone();
    let bytes = axum::body::to_bytes(response.into_body(), 16 << 20)
        .await
        .unwrap();
    Answer {
        status,
        headers,
        body: String::from_utf8(bytes.to_vec()).unwrap(),
    }
}

pub async fn get(app: &Router, uri: &str) -> Answer {
    send(app, Request::get(uri).body(Body::empty()).unwrap()).await
}

pub async fn get_with(app: &Router, uri: &str, header: (&str, &str)) -> Answer {
    send(
        app,
        Request::get(uri)
            .header(header.0, header.1)
            .body(Body::empty())
            .unwrap(),
    )
    .await
}
