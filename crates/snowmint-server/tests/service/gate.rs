//! The gate on the HTTP API: with bearer tokens in scope `issue`, every
//! route that issues IDs is refused without a token and documented as
//! guarded, found by walking the router (not from a list), and `HEAD` on
//! a route draws no ID.

use axum::Router;
use axum::body::Body;
use axum::http::{Request, StatusCode};
use snowmint_server::auth::{Auth, AuthScope, Tokens};
use snowmint_server::{AppState, Limits, app, routes};
use snowmint_test_support::in_process::{get_with, node, send};

const TOKEN: &str = "gate-token-0123456789abcdef";

/// A node of the fixture's issuer behind tokens of `scope`.
async fn secured(scope: AuthScope) -> (Router, snowmint_test_support::in_process::TestNode) {
    let plain = node().await;
    let file = plain.dir.path().join("tokens");
    std::fs::write(&file, format!("{TOKEN}\n")).unwrap();
    let auth = Auth::new(Tokens::load(&file).unwrap(), scope);
    let state = AppState::secured(
        plain.state.issuer().clone(),
        Limits::default(),
        None,
        Some(auth),
    );
    (app(state), plain)
}

/// IDs issued so far, from the node's own `/metrics`.
async fn issued(app: &Router) -> u64 {
    let answer = get_with(
        app,
        "/metrics",
        ("authorization", &format!("Bearer {TOKEN}")),
    )
    .await;
    assert_eq!(answer.status, StatusCode::OK, "{}", answer.body);
    answer
        .body
        .lines()
        .find_map(|line| line.strip_prefix("snowmint_ids_issued_total "))
        .map_or(0, |value| value.trim().parse::<f64>().unwrap() as u64)
}

/// A request target for `route`: each `{parameter}` filled with a value
/// the route reads.
fn target(route: &str, query: &str) -> String {
    let path = route
        .replace("{id}", "1724551110457221119")
        .replace("{key}", "order");
    format!("{path}{query}")
}

async fn request(app: &Router, method: &str, target: &str, token: bool) -> StatusCode {
    let mut request = Request::builder().method(method).uri(target);
    if token {
        request = request.header("authorization", format!("Bearer {TOKEN}"));
    }
    send(app, request.body(Body::empty()).unwrap()).await.status
}

/// Every route of the router that issues an ID when asked with a token
/// is refused without one (drawing nothing), carries `bearerAuth` in the
/// OpenAPI document of scope `issue`, and draws nothing for `HEAD`.
#[tokio::test]
async fn every_issuing_route_is_guarded_and_documented() {
    let (app, _node) = secured(AuthScope::Issue).await;
    let document = snowmint_server::openapi::document_for(Some(AuthScope::Issue));
    let mut issuing = Vec::new();
    for (route, _) in routes() {
        for query in ["", "?count=2"] {
            let target = target(route, query);
            let before = issued(&app).await;
            request(&app, "GET", &target, true).await;
            if issued(&app).await == before {
                continue;
            }
            issuing.push(route);
            let before = issued(&app).await;
            assert_eq!(
                request(&app, "GET", &target, false).await,
                StatusCode::UNAUTHORIZED,
                "GET {target} without a token"
            );
            assert_eq!(
                request(&app, "HEAD", &target, true).await,
                StatusCode::METHOD_NOT_ALLOWED,
                "HEAD {target}"
            );
            assert_eq!(issued(&app).await, before, "{target} drew IDs");
            let operation = &document["paths"][route]["get"];
            assert!(
                operation.is_object(),
                "{route} issues but is not documented"
            );
            assert_eq!(
                operation["security"][0]["bearerAuth"],
                serde_json::json!([]),
                "{route} issues but is documented as open"
            );
            assert!(operation["responses"]["401"].is_object(), "{route}");
            break;
        }
    }
    // The walk found the routes that issue (so the loop above checked
    // something): HTTP's own and Leaf's.
    for route in ["/v1/id", "/v1/ids", "/api/snowflake/get/{key}"] {
        assert!(
            issuing.contains(&route),
            "{route} not found issuing: {issuing:?}"
        );
    }
}

/// `HEAD` on an issuing route of a node without tokens draws nothing
/// either; `HEAD` elsewhere is still served.
#[tokio::test]
async fn head_draws_no_id() {
    let node = node().await;
    let count = |app: &Router| {
        let app = app.clone();
        async move {
            let answer = get_with(&app, "/metrics", ("accept", "text/plain")).await;
            answer
                .body
                .lines()
                .find_map(|line| line.strip_prefix("snowmint_ids_issued_total "))
                .map_or(0.0, |value| value.trim().parse::<f64>().unwrap())
        }
    };
    let start = count(&node.app).await;
    let answer = send(
        &node.app,
        Request::head("/v1/ids?count=4096")
            .body(Body::empty())
            .unwrap(),
    )
    .await;
    assert_eq!(answer.status, StatusCode::METHOD_NOT_ALLOWED);
    assert_eq!(answer.headers["allow"], "GET");
    assert_eq!(count(&node.app).await, start);
    let answer = send(
        &node.app,
        Request::head("/v1/layout").body(Body::empty()).unwrap(),
    )
    .await;
    assert_eq!(answer.status, StatusCode::OK);
}

/// whois names any fleet node's host, pid, addresses and lease: guarded
/// in scope `issue`, as `/v1/node` is.
#[tokio::test]
async fn whois_needs_a_token() {
    let (app, _node) = secured(AuthScope::Issue).await;
    let target = "/v1/whois/1724551110457221119";
    assert_eq!(
        request(&app, "GET", target, false).await,
        StatusCode::UNAUTHORIZED
    );
    // With one, the node answers what it knows (no coordinator here).
    assert_eq!(
        request(&app, "GET", target, true).await,
        StatusCode::NOT_FOUND
    );
}
