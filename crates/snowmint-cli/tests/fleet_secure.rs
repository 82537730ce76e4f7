//! `snowmint serve` against secured coordinators, the real binary against
//! real servers: etcd over mutual TLS (nodes claim and serve with a client
//! certificate; a wrong CA, no certificate or an expired one each leave a
//! running node that is not ready, and says why), etcd with RBAC (a user
//! whose role covers only the fleet's prefix serves; a wrong password is
//! refused in words), ZooKeeper with digest authentication. In every case
//! the password appears nowhere: not in the log at level trace, not in
//! `/v1/node`, `/metrics` or `/readyz`.
//!
//! `snowmint whois` reaches the same servers with the nodes' settings: it
//! names the node that issued an ID over mutual TLS, over mutual TLS with
//! a user (its password from a file or the environment, or a read-only
//! user's), and on ZooKeeper with the fleet's credentials; without the CA
//! or the certificate, with a wrong password, a password file others may
//! read or no credentials, it fails with an exit code and a message that
//! says what is wrong, and never shows a password.

use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::Command;
use std::time::Duration;

use serde_json::Value;

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
const READER_PASSWORD: &str = "Reader-Pw-3386";

/// The etcd user `ids`, whose role may read and write the fleet's prefix
/// and nothing else: the minimal role of docs/security.md ("etcd: users and roles").
fn ids_user() -> (&'static str, &'static str, Option<Permission>) {
    (
        "ids",
        IDS_PASSWORD,
        Some(Permission::read_write("/snowmint/ids/").with_prefix()),
    )
}

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

/// What a run of `snowmint whois` ended with.
struct Answer {
    code: i32,
    stdout: String,
    stderr: String,
}

impl Answer {
    /// The JSON answer of a run that named a holder.
    fn covered(&self) -> Value {
        assert_eq!(self.code, 0, "{}{}", self.stdout, self.stderr);
        let answer: Value = serde_json::from_str(&self.stdout).unwrap();
        assert_eq!(answer["answer"], "covered", "{answer}");
        answer
    }

    /// Fails if any of `secrets` shows in what the run printed.
    fn shows_none_of(&self, secrets: &[&str]) {
        for secret in secrets {
            assert!(
                !self.stdout.contains(secret) && !self.stderr.contains(secret),
                "whois shows the password {secret}:\n{}{}",
                self.stdout,
                self.stderr
            );
        }
    }
}

/// `snowmint whois ID --format json --coordinator URL --fleet FLEET` with
/// `args` and `env` added, and none of this process's `SNOWMINT_*`
/// variables.
fn whois(url: &str, fleet: &str, id: &str, args: &[&str], env: &[(&str, &str)]) -> Answer {
    let mut command = Command::new(BINARY);
    command
        .args(["whois", id, "--format", "json", "--coordinator", url])
        .args(["--fleet", fleet])
        .args(args);
    for (name, _) in std::env::vars() {
        if name.starts_with("SNOWMINT_") {
            command.env_remove(name);
        }
    }
    let output = command.envs(env.iter().copied()).output().unwrap();
    Answer {
        code: output.status.code().unwrap(),
        stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
    }
}

/// A new ID from `service`.
fn an_id(service: &Service) -> String {
    service.json("/v1/id")["id"].as_str().unwrap().to_owned()
}

/// Fails unless `answer` names the claim of the process `pid`.
fn names(answer: &Value, pid: u32) {
    let holders: Vec<&Value> = answer["claims"]
        .as_array()
        .unwrap()
        .iter()
        .map(|claim| &claim["pid"])
        .collect();
    assert_eq!(holders, [&Value::from(pid)], "{answer}");
}

/// Nodes claim and serve over mutual TLS, given the files by flags or by
/// the environment; SIGTERM frees the slot. `whois`, given the same files
/// the same ways, names the node that issued each ID. Then, with RBAC
/// turned on as well, a node logs in as a user over mutual TLS, and
/// `whois` (as that user, or as a user who may only read) names it; see
/// [`whois_refusals_over_mutual_tls_with_a_user`] for what it refuses.
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
    let mut ids = Vec::new();
    for service in [&by_flags, &by_env] {
        ready(service, 200);
        ids.push(an_id(service));
        let node = service.json("/v1/node");
        assert_eq!(node["coordinator"]["state"], "held", "{node}");
        assert_eq!(node["coordinator"]["url"], url.as_str());
    }
    let held = cluster.slot_holders("tls").await;
    assert_eq!(held.len(), 2, "{held:?}");
    let (by_flags_pid, by_env_pid) = (by_flags.pid(), by_env.pid());
    let (status, _) = by_flags.terminate();
    assert!(status.success(), "{status}");
    assert_eq!(cluster.slot_holders("tls").await.len(), 1);

    let tls_flags = [
        "--coordinator-ca",
        ca,
        "--coordinator-cert",
        cert,
        "--coordinator-key",
        key,
    ];
    let tls_env = [
        ("SNOWMINT_COORDINATOR_CA", ca),
        ("SNOWMINT_COORDINATOR_CERT", cert),
        ("SNOWMINT_COORDINATOR_KEY", key),
    ];
    let ended = whois(&url, "tls", &ids[0], &tls_flags, &[]).covered();
    names(&ended, by_flags_pid);
    assert_eq!(ended["claims"][0]["ended"], "release", "{ended}");
    names(
        &whois(&url, "tls", &ids[1], &[], &tls_env).covered(),
        by_env_pid,
    );
    drop(by_env);

    // RBAC on top of mutual TLS: `ids` may read and write the fleet's
    // prefix, `reader` may only read it.
    let read_only = Permission::read("/snowmint/ids/").with_prefix();
    cluster
        .enable_auth(
            ROOT_PASSWORD,
            &[ids_user(), ("reader", READER_PASSWORD, Some(read_only))],
        )
        .await;
    let as_ids = format!("etcd://ids@{}", cluster.client_addr());
    let secured = node(
        &home,
        &as_ids,
        "ids",
        &tls_flags,
        &[("SNOWMINT_COORDINATOR_PASSWORD", IDS_PASSWORD)],
    );
    ready(&secured, 200);
    let id = an_id(&secured);
    let file = password_file(home.path(), "ids", IDS_PASSWORD);
    let as_user = [&tls_flags[..], &["--coordinator-password-file", &file]].concat();
    let answer = whois(&as_ids, "ids", &id, &as_user, &[]);
    names(&answer.covered(), secured.pid());
    answer.shows_none_of(&[IDS_PASSWORD]);
    let as_reader = format!("etcd://reader@{}", cluster.client_addr());
    let answer = whois(
        &as_reader,
        "ids",
        &id,
        &[],
        &[
            tls_env[0],
            tls_env[1],
            tls_env[2],
            ("SNOWMINT_COORDINATOR_PASSWORD", READER_PASSWORD),
        ],
    );
    names(&answer.covered(), secured.pid());
    answer.shows_none_of(&[READER_PASSWORD]);
    assert_never_shown(&secured, IDS_PASSWORD);
}

/// What `whois` refuses on etcd over mutual TLS with RBAC, each with its
/// exit code and a sentence that says what is wrong, and never the
/// password: no CA (cleartext to a TLS port), a CA but no certificate, a
/// wrong password, a password file others may read, a user with no
/// password; a password in the URL on the command line works, with a
/// warning. `--help` shows no password from the environment.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn whois_refusals_over_mutual_tls_with_a_user() {
    let cluster = EtcdTlsServer::start().await;
    cluster.enable_auth(ROOT_PASSWORD, &[ids_user()]).await;
    let home = temp_dir("etcd-tls-whois");
    let url = format!("etcd://ids@{}", cluster.client_addr());
    let (ca, cert, key) = (
        path(cluster.ca.ca_file()),
        path(&cluster.node.cert),
        path(&cluster.node.key),
    );
    let tls = [
        "--coordinator-ca",
        ca,
        "--coordinator-cert",
        cert,
        "--coordinator-key",
        key,
    ];
    let password = [("SNOWMINT_COORDINATOR_PASSWORD", IDS_PASSWORD)];
    let secured = node(&home, &url, "ids", &tls, &password);
    ready(&secured, 200);
    let id = an_id(&secured);
    let secrets = [IDS_PASSWORD, WRONG_PASSWORD];

    let plain = whois(&url, "ids", &id, &[], &password);
    assert_eq!(plain.code, 1, "{}", plain.stderr);
    assert_eq!(
        plain.stderr.trim_end(),
        format!(
            "error: coordinator etcd://ids:***@{}: cannot read the claim history of fleet ids: \
             the server speaks TLS, and this connection to it is cleartext: give the CA that signed \
             its certificate (TLS to the coordinator is on when a CA is given)",
            cluster.client_addr()
        ),
    );
    plain.shows_none_of(&secrets);

    let no_cert = whois(&url, "ids", &id, &["--coordinator-ca", ca], &password);
    assert_eq!(no_cert.code, 1, "{}", no_cert.stderr);
    assert!(
        no_cert.stderr.contains("TLS handshake failed")
            && no_cert.stderr.contains("none is configured"),
        "{}",
        no_cert.stderr
    );
    no_cert.shows_none_of(&secrets);

    let wrong = password_file(home.path(), "wrong", WRONG_PASSWORD);
    let with_wrong = [&tls[..], &["--coordinator-password-file", &wrong]].concat();
    let refused = whois(&url, "ids", &id, &with_wrong, &[]);
    assert_eq!(refused.code, 1, "{}", refused.stderr);
    assert!(
        refused
            .stderr
            .contains("user \"ids\" cannot log in: etcd says the user name or password is wrong"),
        "{}",
        refused.stderr
    );
    refused.shows_none_of(&secrets);

    let open = password_file(home.path(), "open", IDS_PASSWORD);
    std::fs::set_permissions(&open, std::fs::Permissions::from_mode(0o644)).unwrap();
    let with_open = [&tls[..], &["--coordinator-password-file", &open]].concat();
    let refused = whois(&url, "ids", &id, &with_open, &[]);
    assert_eq!(refused.code, 2, "{}", refused.stderr);
    assert!(
        refused.stderr.starts_with(&format!(
            "error: the password file {open} has group or world access (mode 0644)"
        )) && refused
            .stderr
            .contains("(from --coordinator-password-file)"),
        "{}",
        refused.stderr
    );
    refused.shows_none_of(&secrets);

    let refused = whois(&url, "ids", &id, &tls, &[]);
    assert_eq!(refused.code, 2, "{}", refused.stderr);
    assert!(
        refused
            .stderr
            .contains("the coordinator URL names the user \"ids\" but no password"),
        "{}",
        refused.stderr
    );

    let in_url = format!("etcd://ids:{IDS_PASSWORD}@{}", cluster.client_addr());
    let careless = whois(&in_url, "ids", &id, &tls, &[]);
    names(&careless.covered(), secured.pid());
    assert!(
        careless.stderr.starts_with(
            "warning: the --coordinator URL holds a password, which every local user can read"
        ),
        "{}",
        careless.stderr
    );
    careless.shows_none_of(&secrets);

    let help = Command::new(BINARY)
        .args(["whois", "--help"])
        .env("SNOWMINT_COORDINATOR", &in_url)
        .env("SNOWMINT_COORDINATOR_PASSWORD", IDS_PASSWORD)
        .output()
        .unwrap();
    let help = String::from_utf8(help.stdout).unwrap();
    assert!(help.contains("--coordinator-password-file"), "{help}");
    assert!(!help.contains(IDS_PASSWORD), "{help}");
}

/// A wrong CA, no client certificate, an expired one, no CA at all
/// (cleartext): a running node that is not ready, whose reason says which,
/// and that keeps answering.
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
    let cases: [(&str, Vec<&str>, String); 4] = [
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
        (
            "cleartext",
            vec![],
            "the server speaks TLS, and this connection to it is cleartext: give the CA".to_owned(),
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
    cluster.enable_auth(ROOT_PASSWORD, &[ids_user()]).await;
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

    // whois reads the fleet's znodes as the fleet's identity; without
    // credentials, or with a wrong password (another identity), it may
    // not read them, and says so.
    let id = an_id(&service);
    let answer = whois(
        &url,
        "zk",
        &id,
        &["--coordinator-password-file", &file],
        &[],
    );
    names(&answer.covered(), service.pid());
    answer.shows_none_of(&[FLEET_PASSWORD]);
    let anonymous = format!("zk://{}", cluster.client_addr());
    let wrong = password_file(home.path(), "wrong", WRONG_PASSWORD);
    for (url, args) in [
        (&anonymous, vec![]),
        (&url, vec!["--coordinator-password-file", wrong.as_str()]),
    ] {
        let refused = whois(url, "zk", &id, &args, &[]);
        assert_eq!(refused.code, 1, "{}", refused.stderr);
        assert!(
            refused.stderr.contains("may not read /snowmint/zk/layout"),
            "{}",
            refused.stderr
        );
        refused.shows_none_of(&[FLEET_PASSWORD, WRONG_PASSWORD]);
    }
}
