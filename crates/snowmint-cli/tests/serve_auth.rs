//! Bearer tokens on the real `snowmint serve` (`--auth-token-file`,
//! `--auth-scope`): a missing, malformed or wrong token is refused (HTTP
//! 401 with `WWW-Authenticate: Bearer`, gRPC `UNAUTHENTICATED`) and
//! counted by reason, a right one is served; `/healthz`, `/readyz` and gRPC
//! health stay open whatever the scope; the file is read again when it
//! changes, and a bad one keeps the tokens in force; a bad file at start
//! exits with code 2; no token shows in the log, `/v1/node` or `/metrics`.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::time::Duration;

use snowmint_client::proto::id_service_client::IdServiceClient;
use snowmint_client::proto::{DecodeRequest, GetNodeRequest, NextIdsRequest, StreamIdsRequest};
use snowmint_test_support::binary::{Service, run_to_end};
use snowmint_test_support::http::Response;
use snowmint_test_support::temp::temp_dir;
use snowmint_test_support::wait::wait_until;
use tonic::Code;
use tonic::transport::{Channel, Endpoint};
use tonic_health::pb::HealthCheckRequest;
use tonic_health::pb::health_client::HealthClient;

/// The `snowmint` binary under test.
const SNOWMINT: &str = env!("CARGO_BIN_EXE_snowmint");
const LIMIT: Duration = Duration::from_secs(60);

/// Two tokens of the file, and one that is not in it (as long, of the
/// same characters, so only its value tells it apart).
const FIRST: &str = "ops-token-Kq3vX9pL2mN7wR4t";
const SECOND: &str = "batch+job/token_8Yh2Jd5sGf==";
const WRONG: &str = "ops-token-Kq3vX9pL2mN7wR4u";

/// The token file: comments, blank lines, spaces around a token.
fn token_file(dir: &Path) -> PathBuf {
    let path = dir.join("tokens");
    std::fs::write(
        &path,
        format!("# the operators\n{FIRST}\n\n  # batch jobs\n   {SECOND}  \n"),
    )
    .unwrap();
    path
}

fn start(home: &Path, tokens: &Path, more: &[&str]) -> Service {
    let mut args = vec![
        "--datacenter",
        "0",
        "--machine",
        "0",
        "--grpc-listen",
        "127.0.0.1:0",
        "--log",
        "debug",
        "--auth-token-file",
        tokens.to_str().unwrap(),
    ];
    args.extend_from_slice(more);
    Service::start(SNOWMINT, home, &args, &[])
}

/// `GET target` with an `Authorization` header per item of `authorization`.
fn get(service: &Service, target: &str, authorization: &[&str]) -> Response {
    let headers: Vec<(&str, &str)> = authorization
        .iter()
        .map(|value| ("Authorization", *value))
        .collect();
    service.connect().get_with(target, &headers).unwrap()
}

fn bearer(token: &str) -> String {
    format!("Bearer {token}")
}

/// The refusal of a missing (`None`), malformed or unknown token: 401, the
/// challenge, the API's error object.
fn assert_refused(response: &Response, target: &str, error: Option<&str>) {
    assert_eq!(response.status, 401, "{target}: {}", response.body);
    let challenge = response
        .header("www-authenticate")
        .unwrap_or_else(|| panic!("{target}: no WWW-Authenticate"));
    assert!(challenge.starts_with("Bearer "), "{target}: {challenge}");
    match error {
        Some(code) => assert!(
            challenge.contains(&format!("error=\"{code}\"")),
            "{target}: {challenge}"
        ),
        None => assert!(!challenge.contains("error="), "{target}: {challenge}"),
    }
    let body: serde_json::Value = serde_json::from_str(&response.body).unwrap();
    assert_eq!(body["error"]["code"], "unauthenticated", "{target}");
}

/// The value of `series` in the node's Prometheus text (0 when absent),
/// read with `authorization` headers.
fn metric(service: &Service, series: &str, authorization: &[&str]) -> f64 {
    let response = get(service, "/metrics", authorization);
    assert_eq!(response.status, 200, "{}", response.body);
    response
        .body
        .lines()
        .find_map(|line| line.strip_prefix(series)?.strip_prefix(' '))
        .map_or(0.0, |value| value.trim().parse().unwrap())
}

fn refused(api: &str, reason: &str) -> String {
    format!("snowmint_auth_refused_total{{api=\"{api}\",reason=\"{reason}\"}}")
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap()
}

async fn channel(address: SocketAddr) -> Channel {
    Endpoint::from_shared(format!("http://{address}"))
        .unwrap()
        .connect_timeout(LIMIT)
        .connect()
        .await
        .unwrap()
}

/// `message` with an `authorization` metadata entry per item.
fn request<T>(message: T, authorization: &[&str]) -> tonic::Request<T> {
    let mut request = tonic::Request::new(message);
    for value in authorization {
        request
            .metadata_mut()
            .append("authorization", value.parse().unwrap());
    }
    request
}

/// The code each issuing gRPC method answers with `authorization`.
async fn issuing_codes(channel: &Channel, authorization: &[&str]) -> Vec<(&'static str, Code)> {
    let mut ids = IdServiceClient::new(channel.clone());
    let code = |result: Result<(), tonic::Status>| result.err().map_or(Code::Ok, |s| s.code());
    let next = ids
        .next_ids(request(NextIdsRequest { count: 3 }, authorization))
        .await
        .map(|batch| assert_eq!(batch.get_ref().ids.len(), 3));
    let stream = match ids
        .stream_ids(request(
            StreamIdsRequest { batch: 4, total: 8 },
            authorization,
        ))
        .await
    {
        Ok(response) => {
            let mut stream = response.into_inner();
            let mut seen = 0;
            while let Some(batch) = stream.message().await.unwrap() {
                seen += batch.ids.len();
            }
            assert_eq!(seen, 8);
            Ok(())
        }
        Err(status) => Err(status),
    };
    let node = ids
        .get_node(request(GetNodeRequest {}, authorization))
        .await
        .map(|_| ());
    vec![
        ("NextIds", code(next)),
        ("StreamIds", code(stream)),
        ("GetNode", code(node)),
    ]
}

/// With scope `issue` (the default): the issuing endpoints want a token
/// the file holds, on both APIs; a missing, malformed or wrong one is
/// refused and counted by reason; every other endpoint stays open; the
/// tokens show nowhere, and the OpenAPI document declares the scheme.
#[test]
fn tokens_guard_the_issuing_endpoints_of_both_apis() {
    let home = temp_dir("auth-issue");
    let tokens = token_file(home.path());
    let service = start(home.path(), &tokens, &[]);
    let issuing = ["/v1/id", "/v1/ids?count=3", "/v1/node"];
    for target in issuing {
        assert_refused(&get(&service, target, &[]), target, None);
        assert_refused(
            &get(&service, target, &[&bearer(WRONG)]),
            target,
            Some("invalid_token"),
        );
        for malformed in [
            "Basic b3BzOnB3",
            "Bearer",
            FIRST,
            &format!("Bearer {FIRST} extra"),
        ] {
            assert_refused(
                &get(&service, target, &[malformed]),
                target,
                Some("invalid_request"),
            );
        }
        // Two headers, even both right, are not one token.
        assert_refused(
            &get(&service, target, &[&bearer(FIRST), &bearer(FIRST)]),
            target,
            Some("invalid_request"),
        );
        for token in [FIRST, SECOND] {
            let response = get(&service, target, &[&bearer(token)]);
            assert_eq!(response.status, 200, "{target}: {}", response.body);
        }
        // The scheme in any case.
        let response = get(&service, target, &[&format!("bearer {SECOND}")]);
        assert_eq!(response.status, 200, "{target}: {}", response.body);
    }
    for open in [
        "/healthz",
        "/readyz",
        "/v1/layout",
        "/v1/ids/1724551110457221119",
        "/metrics",
        "/openapi.json",
        "/",
    ] {
        let response = get(&service, open, &[]);
        assert_eq!(response.status, 200, "{open}: {}", response.body);
    }
    assert_eq!(metric(&service, &refused("http", "missing"), &[]), 3.0);
    assert_eq!(metric(&service, &refused("http", "unknown"), &[]), 3.0);
    assert_eq!(metric(&service, &refused("http", "malformed"), &[]), 15.0);

    let grpc = service.grpc.unwrap();
    runtime().block_on(async {
        let channel = channel(grpc).await;
        let wrong = bearer(WRONG);
        for (authorization, what) in [
            (vec![], "no token"),
            (vec![wrong.as_str()], "a wrong token"),
            (vec!["Basic b3BzOnB3"], "a malformed header"),
        ] {
            for (method, code) in issuing_codes(&channel, &authorization).await {
                assert_eq!(code, Code::Unauthenticated, "{method} with {what}");
            }
        }
        let right = bearer(SECOND);
        for (method, code) in issuing_codes(&channel, &[&right]).await {
            assert_eq!(code, Code::Ok, "{method} with the right token");
        }
        // The calculator and health stay open.
        IdServiceClient::new(channel.clone())
            .decode(DecodeRequest {
                id: "1724551110457221119".into(),
                ..Default::default()
            })
            .await
            .unwrap();
        HealthClient::new(channel.clone())
            .check(HealthCheckRequest {
                service: String::new(),
            })
            .await
            .unwrap();
        // The message says what to send, never a token.
        let status = IdServiceClient::new(channel)
            .next_ids(request(NextIdsRequest { count: 1 }, &[&wrong]))
            .await
            .unwrap_err();
        assert_eq!(
            status.message(),
            "the bearer token is not one this node accepts"
        );
    });
    assert_eq!(metric(&service, &refused("grpc", "missing"), &[]), 3.0);
    assert_eq!(metric(&service, &refused("grpc", "unknown"), &[]), 4.0);
    assert_eq!(metric(&service, &refused("grpc", "malformed"), &[]), 3.0);

    let document = get(&service, "/openapi.json", &[]);
    let document: serde_json::Value = serde_json::from_str(&document.body).unwrap();
    assert_eq!(
        document["components"]["securitySchemes"]["bearerAuth"]["scheme"],
        "bearer"
    );
    for path in ["/v1/id", "/v1/ids", "/v1/node"] {
        assert_eq!(
            document["paths"][path]["get"]["security"],
            serde_json::json!([{ "bearerAuth": [] }]),
            "{path}"
        );
    }
    assert!(document["paths"]["/v1/layout"]["get"]["security"].is_null());

    let node = get(&service, "/v1/node", &[&bearer(FIRST)]).body;
    let metrics = get(&service, "/metrics", &[]).body;
    let log = service.log();
    for (name, text) in [("/v1/node", &node), ("/metrics", &metrics), ("log", &log)] {
        for token in [FIRST, SECOND, WRONG] {
            assert!(!text.contains(token), "{name} shows a token:\n{text}");
        }
    }
    // The log says what was refused (debug), and why.
    assert!(log.contains("refused: bearer token"), "{log}");
}

/// With scope `all`, every endpoint but `/healthz`, `/readyz` and gRPC
/// health wants the token, the calculator's among them.
#[test]
fn scope_all_guards_every_endpoint_but_health() {
    let home = temp_dir("auth-all");
    let tokens = token_file(home.path());
    let service = start(home.path(), &tokens, &["--auth-scope", "all"]);
    for target in [
        "/v1/id",
        "/v1/layout",
        "/v1/ids/1724551110457221119",
        "/v1/encode?timestamp=2024-01-01T00:00:00Z&datacenter=1&machine=2&sequence=3",
        "/metrics",
        "/openapi.json",
        "/",
    ] {
        assert_refused(&get(&service, target, &[]), target, None);
        let response = get(&service, target, &[&bearer(FIRST)]);
        assert_eq!(response.status, 200, "{target}: {}", response.body);
    }
    for open in ["/healthz", "/readyz"] {
        let response = get(&service, open, &[]);
        assert_eq!(response.status, 200, "{open}: {}", response.body);
    }
    let grpc = service.grpc.unwrap();
    runtime().block_on(async {
        let channel = channel(grpc).await;
        let decode = |authorization: Vec<String>| {
            let channel = channel.clone();
            async move {
                let authorization: Vec<&str> = authorization.iter().map(String::as_str).collect();
                IdServiceClient::new(channel)
                    .decode(request(
                        DecodeRequest {
                            id: "1724551110457221119".into(),
                            ..Default::default()
                        },
                        &authorization,
                    ))
                    .await
                    .map(|_| ())
            }
        };
        assert_eq!(
            decode(vec![]).await.unwrap_err().code(),
            Code::Unauthenticated
        );
        decode(vec![bearer(FIRST)]).await.unwrap();
        HealthClient::new(channel)
            .check(HealthCheckRequest {
                service: "snowmint.v1.IdService".into(),
            })
            .await
            .unwrap();
    });
    let document: serde_json::Value =
        serde_json::from_str(&get(&service, "/openapi.json", &[&bearer(FIRST)]).body).unwrap();
    assert_eq!(
        document["paths"]["/v1/layout"]["get"]["security"],
        serde_json::json!([{ "bearerAuth": [] }])
    );
    assert!(document["paths"]["/healthz"]["get"]["security"].is_null());
}

/// The Rust client sends its token on every call; a client without one,
/// or with a wrong one, gets a clear error at once that quotes no token.
#[test]
fn the_rust_client_sends_its_token() {
    let home = temp_dir("auth-client");
    let tokens = token_file(home.path());
    let service = start(home.path(), &tokens, &[]);
    let endpoint = format!("http://{}", service.grpc.unwrap());
    let client_token = home.path().join("client-token");
    std::fs::write(&client_token, format!("# mine\n{SECOND}\n")).unwrap();
    runtime().block_on(async {
        let build = |token: Option<&str>| {
            let mut builder = snowmint_client::Client::builder().endpoints([endpoint.clone()]);
            if let Some(token) = token {
                builder = builder.token(token);
            }
            builder.build()
        };
        let client = build(Some(FIRST)).await.unwrap();
        assert_eq!(client.next_ids(5).await.unwrap().len(), 5);
        assert!(!format!("{client:?}").contains(FIRST));
        let from_file = snowmint_client::Client::builder()
            .endpoints([endpoint.clone()])
            .token_file(&client_token)
            .build()
            .await
            .unwrap();
        assert!(from_file.next_id().await.is_ok());
        for (token, why) in [
            (None, "this endpoint needs a bearer token"),
            (Some(WRONG), "the bearer token is not one this node accepts"),
        ] {
            let error = build(token).await.unwrap().next_id().await.unwrap_err();
            assert!(
                matches!(&error, snowmint_client::Error::Unauthenticated { message, .. } if message.starts_with(why)),
                "{error:?}"
            );
            let shown = format!("{error} {error:?}");
            assert!(!shown.contains(WRONG), "{shown}");
        }
    });
}

/// The file is read again when it changes (replaced by a rename, as
/// Kubernetes does with secrets): the new token is served, the old one is
/// refused; a bad file then keeps the tokens in force, logged and counted.
#[test]
fn the_token_file_is_read_again_when_it_changes() {
    let home = temp_dir("auth-reload");
    let tokens = token_file(home.path());
    let service = start(home.path(), &tokens, &[]);
    let status = |token: &str| get(&service, "/v1/id", &[&bearer(token)]).status;
    assert_eq!(status(FIRST), 200);
    assert_eq!(status(WRONG), 401);

    let next = home.path().join("tokens.next");
    std::fs::write(&next, format!("{WRONG}\n")).unwrap();
    std::fs::rename(&next, &tokens).unwrap();
    wait_until("the new token file to be read", LIMIT, || {
        (status(WRONG) == 200).then_some(())
    });
    assert_eq!(status(FIRST), 401);
    assert_eq!(status(SECOND), 401);
    let reloads = |result: &str| {
        metric(
            &service,
            &format!("snowmint_reloads_total{{file=\"tokens\",result=\"{result}\"}}"),
            &[],
        )
    };
    assert_eq!(reloads("ok"), 1.0);

    // A line that is not a token: refused, the tokens in force stay.
    std::fs::write(&tokens, format!("{FIRST}\nnot a token at all\n")).unwrap();
    wait_until("the bad token file to be refused", LIMIT, || {
        (reloads("failed") >= 1.0).then_some(())
    });
    assert_eq!(status(WRONG), 200);
    assert_eq!(status(FIRST), 401);
    let log = service.log();
    assert!(
        log.contains(&format!(
            "token file {}: line 2 is not a token",
            tokens.display()
        )) && log.contains("the tokens in force stay"),
        "{log}"
    );
    assert!(!log.contains(FIRST) && !log.contains(WRONG), "{log}");
}

/// Emptying the file revokes every token: the node keeps running, every
/// guarded request is refused, `/readyz` answers 503 `tokens_revoked` and
/// the log says why; a token written back is served again; deleting the
/// file revokes too; a last line with no newline (a writer half-way) is
/// not a token, so a prefix of a new token is never let in.
#[test]
fn emptying_or_deleting_the_token_file_revokes_every_token() {
    let home = temp_dir("auth-revoke");
    let tokens = token_file(home.path());
    let service = start(home.path(), &tokens, &[]);
    let status = |token: &str| get(&service, "/v1/id", &[&bearer(token)]).status;
    assert_eq!(status(FIRST), 200);

    std::fs::write(&tokens, "").unwrap();
    wait_until("the emptied token file to be read", LIMIT, || {
        (status(FIRST) == 401).then_some(())
    });
    assert_eq!(status(SECOND), 401);
    let ready = get(&service, "/readyz", &[]);
    assert_eq!(ready.status, 503, "{}", ready.body);
    assert!(ready.body.contains("\"tokens_revoked\""), "{}", ready.body);
    assert!(ready.body.contains("holds no token"), "{}", ready.body);
    assert!(
        service.log().contains("every token is revoked"),
        "{}",
        service.log()
    );
    assert_eq!(
        get(&service, "/healthz", &[]).status,
        200,
        "the node stopped"
    );

    // The writer stalls 19 characters into a new token.
    std::fs::write(&tokens, &FIRST[..19]).unwrap();
    wait_until("the half-written file to be read", LIMIT, || {
        get(&service, "/readyz", &[])
            .body
            .contains("taken for half-written and ignored")
            .then_some(())
    });
    assert_eq!(status(&FIRST[..19]), 401);
    std::fs::write(&tokens, format!("{FIRST}\n")).unwrap();
    wait_until("the token to be served again", LIMIT, || {
        (status(FIRST) == 200).then_some(())
    });
    assert_eq!(get(&service, "/readyz", &[]).status, 200);

    std::fs::remove_file(&tokens).unwrap();
    wait_until("the deleted token file to revoke", LIMIT, || {
        (status(FIRST) == 401).then_some(())
    });
    let ready = get(&service, "/readyz", &[]);
    assert!(ready.body.contains("cannot be read"), "{}", ready.body);
    let log = service.log();
    assert!(!log.contains(FIRST) && !log.contains(SECOND), "{log}");
}

/// A token file that cannot be used stops the start with exit code 2,
/// naming the file (and the line) and quoting no token; so do a scope that
/// does not exist and a scope without a file.
#[test]
fn a_bad_token_file_at_start_exits_2_naming_it() {
    let home = temp_dir("auth-bad");
    let dir = home.path();
    let write = |name: &str, text: &str| {
        let path = dir.join(name);
        std::fs::write(&path, text).unwrap();
        path
    };
    let short = write("short", &format!("{FIRST}\nshort-Secret\n"));
    let empty = write("empty", "# no token yet\n\n");
    let spaced = write("spaced", "Secret token with spaces\n");
    let missing = dir.join("missing");
    let good = token_file(dir);
    let show = |path: &Path| path.display().to_string();
    let cases: Vec<(Vec<String>, String)> = vec![
        (
            vec!["--auth-token-file".into(), show(&short)],
            format!("token file {}: line 2 is not a token", short.display()),
        ),
        (
            vec!["--auth-token-file".into(), show(&empty)],
            format!("token file {}: holds no token", empty.display()),
        ),
        (
            vec!["--auth-token-file".into(), show(&spaced)],
            format!("token file {}: line 1 is not a token", spaced.display()),
        ),
        (
            vec!["--auth-token-file".into(), show(&missing)],
            format!("token file {}: cannot be read", missing.display()),
        ),
        (
            vec![
                "--auth-token-file".into(),
                show(&good),
                "--auth-scope".into(),
                "everything".into(),
            ],
            "unknown auth scope \"everything\" (expected issue or all)".into(),
        ),
        (
            vec!["--auth-scope".into(), "all".into()],
            "only applies with --auth-token-file".into(),
        ),
    ];
    for (args, expected) in cases {
        let args: Vec<&str> = ["--datacenter", "0", "--machine", "0"]
            .into_iter()
            .chain(args.iter().map(String::as_str))
            .collect();
        let (status, stdout, stderr) = run_to_end(SNOWMINT, dir, &args, &[]);
        assert_eq!(status.code(), Some(2), "{args:?}: {stderr}");
        assert!(
            stderr.contains(&expected),
            "{args:?}: expected {expected:?} in:\n{stderr}"
        );
        assert!(
            !stderr.contains("Secret") && !stderr.contains(FIRST),
            "{stderr}"
        );
        assert!(!stdout.contains("listening"), "{stdout}");
    }
}

/// The settings read from the environment and the TOML file as from the
/// flags.
#[test]
fn the_token_settings_come_from_the_environment_and_the_file_too() {
    let home = temp_dir("auth-ways");
    let tokens = token_file(home.path());
    let by_env = Service::start(
        SNOWMINT,
        home.path(),
        &["--datacenter", "0", "--machine", "0"],
        &[
            ("SNOWMINT_AUTH_TOKEN_FILE", tokens.to_str().unwrap()),
            ("SNOWMINT_AUTH_SCOPE", "all"),
        ],
    );
    assert_refused(&get(&by_env, "/v1/layout", &[]), "/v1/layout", None);
    assert_eq!(get(&by_env, "/v1/layout", &[&bearer(FIRST)]).status, 200);
    drop(by_env);

    let config = home.path().join("snowmint.toml");
    std::fs::write(
        &config,
        format!(
            "auth_token_file = {:?}\nauth_scope = \"issue\"\nstate_dir = {:?}\ndatacenter = 0\nmachine = 0\n",
            tokens.display().to_string(),
            home.path().join("state-toml").display().to_string()
        ),
    )
    .unwrap();
    let by_file = Service::start(
        SNOWMINT,
        home.path(),
        &["--config", config.to_str().unwrap()],
        &[],
    );
    assert_refused(&get(&by_file, "/v1/id", &[]), "/v1/id", None);
    assert_eq!(get(&by_file, "/v1/layout", &[]).status, 200);
    assert_eq!(get(&by_file, "/v1/id", &[&bearer(SECOND)]).status, 200);
}
