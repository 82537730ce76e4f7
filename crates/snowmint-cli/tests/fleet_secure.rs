//! `snowmint serve` against secured coordinators, the real binary against
//! real servers: etcd over mutual TLS (nodes claim and serve with a client
//! certificate; a wrong CA, no certificate or an expired one each leave a
//! running node that is not ready, and says why), etcd with RBAC (a user
//! whose role covers only the fleet's prefix serves; a wrong password is
//! refused in words), ZooKeeper with digest authentication. In every case
//! the password appears nowhere: not in the log at level trace, not in
//! `/v1/node`, `/metrics` or `/readyz`.

use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::time::Duration;

use snowmint_test_support::binary::Service;
use snowmint_test_support::servers::CoordinatorServer;
use snowmint_test_support::servers::etcd::{EtcdServer, Permission};
use snowmint_test_support::servers::etcd_tls::EtcdTlsServer;
use snowmint_test_support::servers::zookeeper_secure::{
    FLEET_PASSWORD, FLEET_USER, ZooKeeperDigestServer,
};
use snowmint_test_support::temp::{TempDir, temp_dir};
use snowmint_test_support::tls::TestCa;
use snowmint_test_support::wait::wait_until;

const BINARY: &str = env!("CARGO_BIN_EXE_snowmint");
const LIMIT: Duration = Duration::from_secs(60);
const ROOT_PASSWORD: &str = "Root-Pw-0451";
const IDS_PASSWORD: &str = "Ids-Pw-7713";
const WRONG_PASSWORD: &str = "Wrong-Pw-2290";

/// A node of `fleet` on `url`, with `args` and `env` added.
fn node(home: &TempDir, url: &str, fleet: &str, args: &[&str], env: &[(&str, &str)]) -> Service {
    let state = home
        .path()
        .join(format!("state-{fleet}-{}", args.len() + env.len()));
    let mut all = vec![
        "--coordinator",
        url,
        "--fleet",
        fleet,
        "--claim-ttl",
        "2s",
        "--state-dir",
        state.to_str().unwrap(),
        // Every line any crate logs, to look for the password in.
        "--log",
        "trace",
    ];
    all.extend_from_slice(args);
    Service::start(BINARY, home.path(), &all, env)
}

/// `/readyz` once it answers `status`: its body.
fn ready(service: &Service, status: u16) -> String {
    wait_until(&format!("/readyz to answer {status}"), LIMIT, || {
        let response = service.connect().get("/readyz").ok()?;
        (response.status == status).then_some(response.body)
    })
}

/// `/readyz`'s reason once it is 503 for a reason that contains `part`.
fn not_ready_for(service: &Service, part: &str) -> String {
    let body = wait_until(&format!("/readyz to say {part:?}"), LIMIT, || {
        let response = service.connect().get("/readyz").ok()?;
        (response.status == 503 && response.body.contains(part)).then_some(response.body)
    });
    // Not ready is not dead: the process answers, and keeps trying.
    assert_eq!(service.connect().get("/healthz").unwrap().status, 200);
    std::thread::sleep(Duration::from_secs(3));
    assert_eq!(service.connect().get("/healthz").unwrap().status, 200);
    assert_eq!(service.connect().get("/readyz").unwrap().status, 503);
    body
}

/// Fails if `secret` shows in the log, `/v1/node`, `/metrics` or
/// `/readyz` of `service`.
fn assert_never_shown(service: &Service, secret: &str) {
    for (what, text) in [
        ("the log", service.log()),
        ("/v1/node", service.connect().get("/v1/node").unwrap().body),
        ("/metrics", service.connect().get("/metrics").unwrap().body),
        ("/readyz", service.connect().get("/readyz").unwrap().body),
    ] {
        assert!(
            !text.contains(secret),
            "the password shows in {what}:\n{text}"
        );
    }
}

fn password_file(dir: &Path, name: &str, password: &str) -> String {
    let path = dir.join(name);
    std::fs::write(&path, format!("{password}\n")).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).unwrap();
    path.display().to_string()
}

fn path(path: &Path) -> &str {
    path.to_str().unwrap()
}

/// Nodes claim and serve over mutual TLS, given the files by flags or by
/// the environment; SIGTERM frees the slot.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn etcd_over_mutual_tls_nodes_claim_and_serve() {
    let cluster = EtcdTlsServer::start().await;
    let home = temp_dir("etcd-tls");
    let url = format!("etcd://{}", cluster.client_addr());
    let (ca, cert, key) = (
        path(cluster.ca.ca_file()),
        path(&cluster.node.cert),
        path(&cluster.node.key),
    );
    let by_flags = node(
        &home,
        &url,
        "tls",
        &[
            "--coordinator-ca",
            ca,
            "--coordinator-cert",
            cert,
            "--coordinator-key",
            key,
        ],
        &[],
    );
    let by_env = node(
        &home,
        &url,
        "tls",
        &[],
        &[
            ("SNOWMINT_COORDINATOR_CA", ca),
            ("SNOWMINT_COORDINATOR_CERT", cert),
            ("SNOWMINT_COORDINATOR_KEY", key),
        ],
    );
    for service in [&by_flags, &by_env] {
        ready(service, 200);
        let id = service.json("/v1/id");
        assert!(id["id"].as_str().is_some(), "{id}");
        let node = service.json("/v1/node");
        assert_eq!(node["coordinator"]["state"], "held", "{node}");
        assert_eq!(node["coordinator"]["url"], url.as_str());
    }
    let held = cluster.slot_holders("tls").await;
    assert_eq!(held.len(), 2, "{held:?}");
    let (status, _) = by_flags.terminate();
    assert!(status.success(), "{status}");
    assert_eq!(cluster.slot_holders("tls").await.len(), 1);
}

/// A wrong CA, no client certificate, an expired one: a running node that
/// is not ready, whose reason says which, and that keeps answering.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn etcd_over_mutual_tls_refusals_leave_a_node_not_ready() {
    let cluster = EtcdTlsServer::start().await;
    let home = temp_dir("etcd-tls-refused");
    let url = format!("etcd://{}", cluster.client_addr());
    let other = TestCa::new("other-ca");
    let expired = cluster.ca.expired_client("old-node");
    let (ca, cert, key) = (
        path(cluster.ca.ca_file()),
        path(&cluster.node.cert),
        path(&cluster.node.key),
    );
    let cases: [(&str, Vec<&str>, String); 3] = [
        (
            "wrong-ca",
            vec![
                "--coordinator-ca",
                path(other.ca_file()),
                "--coordinator-cert",
                cert,
                "--coordinator-key",
                key,
            ],
            format!(
                "the server's certificate is not signed by an authority in the CA file {}",
                other.ca_file().display()
            ),
        ),
        (
            "no-cert",
            vec!["--coordinator-ca", ca],
            "none is configured".to_owned(),
        ),
        (
            "expired",
            vec![
                "--coordinator-ca",
                ca,
                "--coordinator-cert",
                path(&expired.cert),
                "--coordinator-key",
                path(&expired.key),
            ],
            format!(
                "the coordinator client certificate {} expired at",
                expired.cert.display()
            ),
        ),
    ];
    for (fleet, args, says) in cases {
        let service = node(&home, &url, fleet, &args, &[]);
        let body = not_ready_for(&service, &says);
        println!("{fleet}: {body}");
        assert_eq!(service.connect().get("/v1/id").unwrap().status, 503);
    }
}

/// etcd with RBAC: a user whose role has readwrite on the fleet's prefix
/// only serves, its password from the environment; a wrong one (from a
/// password file) is refused in words; a password written into the URL on
/// the command line draws a warning. No password shows anywhere.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn etcd_with_auth_never_shows_the_password() {
    let cluster = EtcdServer::start().await;
    cluster
        .enable_auth(
            ROOT_PASSWORD,
            &[(
                "ids",
                IDS_PASSWORD,
                Some(Permission::read_write("/snowmint/ids/").with_prefix()),
            )],
        )
        .await;
    let home = temp_dir("etcd-auth");
    let url = format!("etcd://ids@{}", cluster.client_addr());

    let right = node(
        &home,
        &url,
        "ids",
        &[],
        &[("SNOWMINT_COORDINATOR_PASSWORD", IDS_PASSWORD)],
    );
    ready(&right, 200);
    assert_eq!(right.connect().get("/v1/id").unwrap().status, 200);
    let shown = right.json("/v1/node");
    assert_eq!(
        shown["coordinator"]["url"],
        format!("etcd://ids:***@{}", cluster.client_addr())
    );
    assert_never_shown(&right, IDS_PASSWORD);

    let wrong = password_file(home.path(), "wrong", WRONG_PASSWORD);
    let refused = node(
        &home,
        &url,
        "ids",
        &["--coordinator-password-file", &wrong],
        &[],
    );
    let body = not_ready_for(&refused, "cannot log in");
    assert!(
        body.contains(
            "user \\\"ids\\\" cannot log in: etcd says the user name or password is wrong"
        ),
        "{body}"
    );
    assert_never_shown(&refused, WRONG_PASSWORD);
    assert_never_shown(&refused, IDS_PASSWORD);

    let in_url = format!("etcd://ids:{IDS_PASSWORD}@{}", cluster.client_addr());
    let careless = node(&home, &in_url, "ids", &[], &[]);
    ready(&careless, 200);
    assert!(
        careless
            .log()
            .contains("the --coordinator URL holds a password, which every local user can read"),
        "{}",
        careless.log()
    );
    assert_never_shown(&careless, IDS_PASSWORD);
}

/// ZooKeeper with digest authentication: the node serves as the fleet's
/// identity, and the password shows nowhere.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn zookeeper_with_digest_auth_serves_and_never_shows_the_password() {
    let cluster = ZooKeeperDigestServer::start().await;
    let home = temp_dir("zk-digest");
    let url = format!("zk://{FLEET_USER}@{}", cluster.client_addr());
    let file = password_file(home.path(), "fleet", FLEET_PASSWORD);
    let service = node(
        &home,
        &url,
        "zk",
        &["--coordinator-password-file", &file],
        &[],
    );
    ready(&service, 200);
    assert_eq!(service.connect().get("/v1/id").unwrap().status, 200);
    let shown = service.json("/v1/node");
    assert_eq!(
        shown["coordinator"]["url"],
        format!("zk://{FLEET_USER}:***@{}", cluster.client_addr())
    );
    assert_never_shown(&service, FLEET_PASSWORD);
    assert_eq!(cluster.slot_holders("zk").await.len(), 1);
}
