//! `snowmint serve --coordinator postgres://...`: the real binary against a
//! real PostgreSQL 15 server (Debian's postgresql-15), started by each test
//! on a free loopback port.

use std::time::Duration;

use snowmint_test_support::binary::Service;
use snowmint_test_support::servers::CoordinatorServer;
use snowmint_test_support::servers::postgres::{ADMIN_USER, PostgresServer};
use snowmint_test_support::temp::temp_dir;
use snowmint_test_support::wait::eventually;

every_fleet_scenario!(PostgresServer);

/// `/v1/node` of `service` once its claim engine is in `state`.
async fn node_in_state(service: &Service, state: &str) -> serde_json::Value {
    eventually(
        &format!("the claim state {state:?}"),
        Duration::from_secs(60),
        || async {
            let node = service.json("/v1/node");
            (node["coordinator"]["state"] == state).then_some(node)
        },
    )
    .await
}

/// A password in the URL, in `PGPASSWORD`, or a wrong one: it never shows
/// on `/v1/node`, `/metrics`, `/readyz` or in the log, which show `***`
/// where the URL had one; a node whose password is refused stays not
/// ready and says why.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_password_comes_from_the_url_or_pgpassword_and_never_shows() {
    let server = PostgresServer::start().await;
    let secret = server.password();
    let home = temp_dir("pg-password");
    let start = |name: &str, url: &str, env: &[(&str, &str)]| {
        let state_dir = home.path().join(format!("state-{name}"));
        Service::start(
            crate::SNOWMINT,
            home.path(),
            &[
                "--coordinator",
                url,
                "--fleet",
                "secret",
                "--claim-ttl",
                "2s",
                "--state-dir",
                state_dir.to_str().unwrap(),
            ],
            env,
        )
    };
    let in_url = start("in-url", &server.url(), &[]);
    let bare = server.login_url(ADMIN_USER, "", "postgres");
    let from_env = start("from-env", &bare, &[("PGPASSWORD", secret)]);
    let wrong_url = server.login_url(ADMIN_USER, "not-the-password", "postgres");
    let wrong = start("wrong", &wrong_url, &[]);

    let node = node_in_state(&in_url, "held").await;
    assert_eq!(
        node["coordinator"]["url"],
        server.login_url(ADMIN_USER, "***", "postgres").as_str()
    );
    let node = node_in_state(&from_env, "held").await;
    assert_eq!(node["coordinator"]["url"], bare.as_str());

    let refused = eventually(
        "the wrong password to be refused",
        Duration::from_secs(60),
        || async {
            let ready = wrong.connect().get("/readyz").unwrap();
            (ready.status == 503 && ready.body.contains("password authentication failed"))
                .then_some(ready.body)
        },
    )
    .await;
    assert!(
        refused.contains(&format!(
            "password authentication failed for user \\\"{ADMIN_USER}\\\""
        )),
        "{refused}"
    );
    assert_eq!(wrong.connect().get("/v1/id").unwrap().status, 503);

    for service in [&in_url, &from_env, &wrong] {
        let mut shown = vec![service.log()];
        for target in ["/v1/node", "/metrics", "/readyz"] {
            shown.push(service.connect().get(target).unwrap().body);
        }
        for text in shown {
            assert!(!text.contains(secret), "the password shows in {text}");
            assert!(
                !text.contains("not-the-password"),
                "the password shows in {text}"
            );
        }
    }
    for service in [in_url, from_env, wrong] {
        service.terminate();
    }
}
