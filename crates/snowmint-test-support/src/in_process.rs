//! The service in-process, for tests that need no socket: a node built on
//! a real state file in a temporary directory, and requests sent straight
//! to its router.
//!
//! - [`grpc`]: the gRPC API in-process, on a loopback socket.

pub mod grpc;

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

use crate::http;
use crate::temp::{TempDir, temp_dir};

/// The node every test runs as, unless it says otherwise.
pub const NODE: Node = Node::from_slot(103);

/// A service for tests: the router, its state, the static source it
/// follows and its state directory.
pub struct TestNode {
    /// The router, as `snowmint serve` runs it.
    pub app: Router,
    /// The state behind the router.
    pub state: AppState,
    /// The slot source the issuer follows; tests change its state.
    pub source: Arc<StaticSource>,
    /// The state directory (the high-water mark file lives here).
    pub dir: TempDir,
}

/// How [`node_with`] sets the service up.
pub struct Options {
    /// The clock the issuer reads.
    pub clock: Arc<dyn Clock>,
    /// What the issuer does when the clock is behind.
    pub policy: ClockPolicy,
    /// The request timeout.
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

/// A node with the default [`Options`]: the system clock, the `refuse`
/// policy, a 10 s request timeout.
pub async fn node() -> TestNode {
    node_with(Options::default()).await
}

/// A node as [`NODE`] of the Twitter layout, set up by `options`.
pub async fn node_with(options: Options) -> TestNode {
    let dir = temp_dir("node");
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
    /// The status code.
    pub status: StatusCode,
    /// The headers.
    pub headers: HeaderMap,
    /// The body, which must be UTF-8.
    pub body: String,
}

impl Answer {
    /// The body as JSON; panics, showing it, if it is not JSON.
    pub fn json(&self) -> Value {
        serde_json::from_str(&self.body).unwrap_or_else(|e| panic!("not JSON ({e}): {}", self.body))
    }

    /// The `Content-Type` header, or "" without one.
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

/// Sends `request` to `app` and reads the whole answer.
pub async fn send(app: &Router, request: Request<Body>) -> Answer {
    let response = app.clone().oneshot(request).await.unwrap();
    let status = response.status();
    let headers = response.headers().clone();
    // Up to 64 MiB: /v1/inspect's answer to 10,000 tokens, each read as
    // every family, is about 20 MiB.
    let bytes = axum::body::to_bytes(response.into_body(), 64 << 20)
        .await
        .unwrap();
    Answer {
        status,
        headers,
        body: String::from_utf8(bytes.to_vec()).unwrap(),
    }
}

/// `GET uri` on `app`.
pub async fn get(app: &Router, uri: &str) -> Answer {
    send(app, Request::get(uri).body(Body::empty()).unwrap()).await
}

/// `GET uri` on `app` with one extra header (name, value).
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
