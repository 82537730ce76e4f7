//! The HTTP API: the route table, the fallbacks and the layers every
//! request goes through.
//!
//! The routes fall in three groups. Issuing (`/v1/id`, `/v1/ids`, and
//! Leaf's `/api/snowflake/get/{key}`) draws from the node's issuer and is
//! what bearer tokens guard first. The calculator (`/v1/ids/{id}`,
//! `/v1/encode`, `/v1/range`, `/v1/layout`, Leaf's decode) answers for any
//! layout and touches no state, as does `/v1/inspect`, which reads the IDs out of
//! any text. The node's own questions (`/v1/node`,
//! `/v1/whois/{id}`, `/healthz`, `/readyz`, `/metrics`, `/openapi.json`)
//! describe it. Every handler reads its query parameters and headers with
//! the parsers the configuration uses, so an unknown, repeated or bad
//! parameter is refused with the message a flag would get.

use std::sync::Arc;
use std::time::Instant;

use axum::Router;
use axum::error_handling::HandleErrorLayer;
use axum::extract::Request;
use axum::http::header::{ALLOW, CONTENT_LENGTH};
use axum::http::{HeaderValue, Method, StatusCode, Uri};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::{MethodRouter, get};
use tower::ServiceBuilder;
use tower::timeout::TimeoutLayer;

use crate::error::ApiError;
use crate::state::AppState;

mod authorize;
pub(crate) mod calc;
pub(crate) mod inspect;
pub(crate) mod issue;
pub(crate) mod leaf;
pub(crate) mod params;
pub(crate) mod status;
pub(crate) mod whois;

/// The longest request target accepted (path and query).
pub const MAX_URI_BYTES: usize = 8 * 1024;
/// The largest request body accepted, but by `POST /v1/inspect`
/// (`inspect::MAX_BODY_BYTES`), the one endpoint that reads one.
pub const MAX_BODY_BYTES: u64 = 64 * 1024;

/// Every route: path and handlers. `app` registers exactly these, and the
/// OpenAPI document describes exactly these (a test checks it).
pub fn routes() -> Vec<(&'static str, MethodRouter<AppState>)> {
    vec![
        ("/v1/id", issuing(get(issue::next_id))),
        ("/v1/ids", issuing(get(issue::next_ids))),
        ("/v1/ids/{id}", get(calc::decode)),
        ("/v1/encode", get(calc::encode)),
        ("/v1/range", get(calc::range)),
        ("/v1/layout", get(calc::layout)),
        (inspect::PATH, get(inspect::get).post(inspect::post)),
        ("/v1/node", get(status::node)),
        ("/v1/whois/{id}", get(whois::whois)),
        ("/healthz", get(status::healthz)),
        ("/readyz", get(status::readyz)),
        ("/metrics", get(status::metrics)),
        ("/openapi.json", get(status::openapi)),
        ("/api/snowflake/get/{key}", issuing(get(leaf::next_id))),
        ("/api/snowflake/decode", get(leaf::decode)),
    ]
}

/// A route that issues IDs: `HEAD` on it is refused rather than served
/// as a `GET` whose body is dropped, which would throw away every ID it
/// drew (4096 of them for `HEAD /v1/ids?count=4096`).
fn issuing(route: MethodRouter<AppState>) -> MethodRouter<AppState> {
    route.head(head_issues_nothing)
}

/// 405 to `HEAD` on a route that issues; nothing is drawn.
async fn head_issues_nothing(uri: Uri) -> Response {
    let mut response = ApiError::status(
        StatusCode::METHOD_NOT_ALLOWED,
        "method_not_allowed",
        format!(
            "HEAD is not answered on {}: it would issue IDs only to throw them away; use GET",
            snowmint::value::echo(uri.path())
        ),
    )
    .into_response();
    response
        .headers_mut()
        .insert(ALLOW, HeaderValue::from_static("GET"));
    response
}

/// The service as a [`Router`]: every route, the calculator page's files
/// ([`crate::page`]), bearer tokens on the routes they guard (401), JSON
/// 404 and 405 answers, the request timeout (answered with 503) and the
/// size limits (413, 414).
///
/// # Examples
///
/// A request answered without a socket, as tests do:
///
/// ```
/// # #[tokio::main]
/// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
/// use snowmint_fleet::IssuerBuilder;
/// use snowmint_server::{AppState, app};
/// use tower::ServiceExt;
///
/// let dir = tempfile::tempdir()?;
/// let issuer = IssuerBuilder::new().node(3, 7).state_dir(dir.path()).start_issuer().await?;
/// let request = http::Request::get("/v1/ids?count=3").body(axum::body::Body::empty())?;
/// let answer = app(AppState::new(issuer)).oneshot(request).await?;
/// assert_eq!(answer.status(), 200);
/// let body = axum::body::to_bytes(answer.into_body(), 1 << 16).await?;
/// let ids: serde_json::Value = serde_json::from_slice(&body)?;
/// assert_eq!(ids["ids"].as_array().map(Vec::len), Some(3));
/// # Ok(())
/// # }
/// ```
pub fn app(state: AppState) -> Router {
    let timeout = state.request_timeout();
    let router = routes()
        .into_iter()
        .fold(Router::new(), |router, (path, route)| {
            router.route(path, route)
        });
    let mut router = router.merge(crate::page::router());
    // Only on a node with tokens (whether it has any is fixed at start;
    // the file is re-read, not added).
    if let Some(auth) = state.auth() {
        router = router.route_layer(authorize::AuthorizeLayer::new(
            Arc::clone(auth),
            state.metrics().clone(),
        ));
    }
    router
        .fallback(not_found)
        .method_not_allowed_fallback(method_not_allowed)
        .layer(
            ServiceBuilder::new()
                .layer(HandleErrorLayer::new(
                    move |_: tower::BoxError| async move {
                        ApiError::unavailable(
                            "timeout",
                            format!(
                                "the request took longer than the {} ms this service allows",
                                timeout.as_millis()
                            ),
                            std::time::Duration::from_secs(1),
                        )
                    },
                ))
                .layer(TimeoutLayer::new(timeout)),
        )
        .layer(middleware::from_fn(guard))
        .with_state(state)
}

/// Size limits, and a debug log line per request.
async fn guard(request: Request, next: Next) -> Response {
    let target_len = request
        .uri()
        .path_and_query()
        .map_or(0, |target| target.as_str().len());
    if target_len > MAX_URI_BYTES {
        return ApiError::status(
            StatusCode::URI_TOO_LONG,
            "uri_too_long",
            format!("the request target is longer than {MAX_URI_BYTES} bytes"),
        )
        .into_response();
    }
    let declared = request
        .headers()
        .get(CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok());
    // The one route that reads a body takes a longer one.
    let max_body = if request.uri().path() == inspect::PATH {
        inspect::MAX_BODY_BYTES
    } else {
        MAX_BODY_BYTES
    };
    if declared.is_some_and(|n| n > max_body) {
        return ApiError::status(
            StatusCode::PAYLOAD_TOO_LARGE,
            "payload_too_large",
            format!("the request body is larger than {max_body} bytes"),
        )
        .into_response();
    }
    if !tracing::enabled!(tracing::Level::DEBUG) {
        return next.run(request).await;
    }
    let started = Instant::now();
    let (method, uri) = (request.method().clone(), request.uri().clone());
    let response = next.run(request).await;
    tracing::debug!(
        %method,
        %uri,
        status = response.status().as_u16(),
        micros = started.elapsed().as_micros() as u64,
        "request"
    );
    response
}

async fn not_found(uri: Uri) -> ApiError {
    ApiError::status(
        StatusCode::NOT_FOUND,
        "not_found",
        format!(
            "no such endpoint: {} (see /openapi.json)",
            snowmint::value::echo(uri.path())
        ),
    )
}

async fn method_not_allowed(method: Method, uri: Uri) -> ApiError {
    ApiError::status(
        StatusCode::METHOD_NOT_ALLOWED,
        "method_not_allowed",
        format!(
            "{method} is not allowed on {} (this API answers GET and HEAD, and POST on {})",
            snowmint::value::echo(uri.path()),
            inspect::PATH
        ),
    )
}
