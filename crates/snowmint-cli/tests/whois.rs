//! `snowmint whois`, `GET /v1/whois/{id}` and the gRPC `Whois` against real
//! nodes (`snowmint serve` processes) on a real etcd, ZooKeeper and
//! PostgreSQL server, each started by the test on free loopback ports.
//!
//! One slot changes hands: node A issues and stops cleanly, node B takes
//! the slot over. The ID each issued is answered with its holder (host,
//! pid, addresses, version) by the command, by either node's HTTP API and
//! by gRPC; a time before any claim is not covered; once B's claims with
//! `--claim-history-keep 1` prune A's record, A's ID is answered as
//! pruned. In a second fleet the slot's mark is lowered by hand between
//! two holders, so that their claims overlap: the answer is a conflict,
//! said loudly.

use std::process::{Command, Output};
use std::time::Duration;

use serde_json::Value;
use snowmint_client::proto::WhoisRequest;
use snowmint_client::proto::id_service_client::IdServiceClient;
use snowmint_test_support::binary::{Service, now_ms, timestamp_ms};
use snowmint_test_support::schema;
use snowmint_test_support::servers::CoordinatorServer;
use snowmint_test_support::servers::etcd::EtcdServer;
use snowmint_test_support::servers::postgres::PostgresServer;
use snowmint_test_support::servers::zookeeper::ZooKeeperServer;
use snowmint_test_support::temp::{TempDir, temp_dir};
use snowmint_test_support::wait::eventually;

const SNOWMINT: &str = env!("CARGO_BIN_EXE_snowmint");
const LIMIT: Duration = Duration::from_secs(60);

/// Starts a node of `fleet` on slot 3 alone.
fn node(home: &TempDir, url: &str, fleet: &str, name: &str, extra: &[&str]) -> Service {
    let state_dir = home.path().join(format!("state-{name}"));
    let mut args = vec![
        "--coordinator",
        url,
        "--fleet",
        fleet,
        "--slots",
        "3-3",
        "--claim-ttl",
        "2s",
        "--grpc-listen",
        "127.0.0.1:0",
        "--state-dir",
        state_dir.to_str().unwrap(),
    ];
    args.extend_from_slice(extra);
    Service::start(SNOWMINT, home.path(), &args, &[])
}

/// An ID from `node`, once it holds its slot.
async fn an_id(node: &Service) -> u64 {
    eventually("an ID", LIMIT, || async {
        let response = node.connect().get("/v1/id").unwrap();
        (response.status == 200).then(|| {
            let body: Value = serde_json::from_str(&response.body).unwrap();
            body["id"].as_str().unwrap().parse().unwrap()
        })
    })
    .await
}

/// `snowmint whois ID --coordinator URL --fleet FLEET [extra...]`.
fn whois(url: &str, fleet: &str, id: u64, extra: &[&str]) -> Output {
    Command::new(SNOWMINT)
        .args([
            "whois",
            &id.to_string(),
            "--coordinator",
            url,
            "--fleet",
            fleet,
        ])
        .args(extra)
        .env_remove("SNOWMINT_COORDINATOR")
        .env_remove("SNOWMINT_FLEET")
        .output()
        .unwrap()
}

/// The JSON answer of the command, with its exit code.
fn whois_json(url: &str, fleet: &str, id: u64) -> (i32, Value) {
    let output = whois(url, fleet, id, &["--format", "json"]);
    let text = String::from_utf8(output.stdout).unwrap();
    let answer = serde_json::from_str(&text).unwrap_or_else(|error| {
        panic!(
            "{error}: {text}\n{}",
            String::from_utf8_lossy(&output.stderr)
        )
    });
    (output.status.code().unwrap(), answer)
}

/// The ID of slot 3 (datacenter 0, machine 3) at `timestamp_ms`.
fn id_of_slot_3(timestamp_ms: i64) -> u64 {
    (((timestamp_ms - 1_288_834_974_657) as u64) << 22) | (3 << 12)
}

/// What the history should name of a node, kept past its end.
struct Who {
    pid: u32,
    address: String,
    grpc: String,
}

impl Who {
    fn of(node: &Service) -> Who {
        Who {
            pid: node.pid(),
            address: node.address.to_string(),
            grpc: node.grpc.unwrap().to_string(),
        }
    }
}

/// `GET target` on `node`, its JSON checked against the node's own
/// OpenAPI document (the schema of `path`'s 200 answer).
fn documented(node: &Service, path: &str, target: &str) -> Value {
    let answer = node.json(target);
    let document = node.json("/openapi.json");
    let schema = &document["paths"][path]["get"]["responses"]["200"]["content"]["application/json"]
        ["schema"];
    schema::check(&document, schema, &answer, path);
    answer
}

fn assert_holder(answer: &Value, node: &Who, generation: u64) {
    assert_eq!(answer["answer"], "covered", "{answer}");
    assert_eq!(
        (answer["slot"].as_u64(), answer["machine"].as_u64()),
        (Some(3), Some(3))
    );
    let claim = &answer["claims"][0];
    assert_eq!(claim["generation"], generation, "{answer}");
    assert_eq!(claim["pid"], node.pid, "{answer}");
    assert_eq!(claim["listen"], node.address, "{answer}");
    assert_eq!(claim["grpc"], node.grpc, "{answer}");
    assert_eq!(claim["version"], env!("CARGO_PKG_VERSION"));
    assert!(claim["host"].as_str().is_some_and(|host| !host.is_empty()));
}

async fn grpc_whois(node: &Service, id: u64) -> snowmint_client::proto::WhoisAnswer {
    let endpoint = format!("http://{}", node.grpc.unwrap());
    let channel = tonic::transport::Channel::from_shared(endpoint)
        .unwrap()
        .connect()
        .await
        .unwrap();
    let mut client = IdServiceClient::new(channel);
    client
        .whois(WhoisRequest {
            id: id.to_string(),
            encoding: String::new(),
        })
        .await
        .unwrap()
        .into_inner()
}

async fn whois_names_the_holder<C: CoordinatorServer>() {
    let cluster = C::start().await;
    let url = cluster.url();
    let home = temp_dir("whois");
    let before = now_ms();

    let a = node(&home, &url, "who", "a", &[]);
    let a_id = an_id(&a).await;
    let a_was = Who::of(&a);
    let (status, log) = a.terminate();
    assert!(status.success(), "{log}");

    let b = node(&home, &url, "who", "b", &[]);
    let b_id = an_id(&b).await;

    // The command, as text and as JSON.
    let output = whois(&url, "who", a_id, &[]);
    let text = String::from_utf8_lossy(&output.stdout);
    assert_eq!(
        output.status.code(),
        Some(0),
        "{text}{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(text.starts_with(&format!("id          {a_id}\n")), "{text}");
    assert!(text.contains("answer      covered\n"), "{text}");
    assert!(text.contains(&format!(", pid {}\n", a_was.pid)), "{text}");
    assert!(
        text.contains(&format!("http        {}\n", a_was.address)),
        "{text}"
    );
    assert!(text.contains("(release); its IDs up to "), "{text}");
    let (code, answer) = whois_json(&url, "who", a_id);
    assert_eq!(code, 0);
    assert_holder(&answer, &a_was, 1);
    assert_eq!(answer["claims"][0]["ended"], "release");
    assert!(answer["claims"][0]["last_ms"].as_i64().unwrap() >= timestamp_ms(a_id));

    // A node's HTTP API and gRPC answer the same, for any ID of the fleet.
    let over_http = documented(&b, "/v1/whois/{id}", &format!("/v1/whois/{a_id}"));
    // The node's description, with its clock check, as documented too.
    let described = documented(&b, "/v1/node", "/v1/node");
    assert!(
        described["coordinator"]["clock_check"].is_object(),
        "{described}"
    );
    assert_eq!(over_http["claims"], answer["claims"]);
    let (_, b_answer) = whois_json(&url, "who", b_id);
    assert_holder(&b_answer, &Who::of(&b), 2);
    assert_eq!(b_answer["claims"][0]["ended"], Value::Null);
    assert_eq!(
        b.json(&format!("/v1/whois/{b_id}"))["claims"],
        b_answer["claims"]
    );
    let over_grpc = grpc_whois(&b, b_id).await;
    assert_eq!(over_grpc.answer, "covered");
    assert_eq!(over_grpc.claims[0].pid, Some(b.pid()));
    assert_eq!(over_grpc.claims[0].generation, 2);

    // Before any claim of the slot: nobody (exit 3).
    let early = id_of_slot_3(before - 60_000);
    let (code, answer) = whois_json(&url, "who", early);
    assert_eq!(
        (code, &answer["answer"]),
        (3, &Value::from("not_covered")),
        "{answer}"
    );
    assert_eq!(answer["claims"], Value::Array(vec![]));
    let not_found = b.connect().get("/v1/whois/not-an-id").unwrap();
    assert_eq!(not_found.status, 400, "{}", not_found.body);

    // B again, keeping one record: A's is pruned (exit 4).
    let (status, log) = b.terminate();
    assert!(status.success(), "{log}");
    let b2 = node(&home, &url, "who", "b", &["--claim-history-keep", "1"]);
    an_id(&b2).await;
    let (code, answer) = whois_json(&url, "who", a_id);
    assert_eq!(
        (code, &answer["answer"]),
        (4, &Value::from("pruned")),
        "{answer}"
    );
    assert_eq!(answer["oldest_kept_generation"], 3);
    assert_eq!(answer["records_kept"], 1);
}

/// The mark lowered by hand between two holders lets the second start
/// inside the first's IDs: whois says so, loudly, and exits with 5.
async fn overlapping_claims_are_a_conflict<C: CoordinatorServer>() {
    let cluster = C::start().await;
    let url = cluster.url();
    let home = temp_dir("whois-conflict");
    // A long mark step: A's last mark lies seconds past its last ID.
    let wide = ["--mark-step", "5s", "--mark-wait-max", "5s"];
    let a = node(&home, &url, "bad", "a", &wide);
    an_id(&a).await;
    let a_pid = a.pid();
    let (status, log) = a.terminate();
    assert!(status.success(), "{log}");
    cluster.set_mark("bad", 3, 1).await;
    let b = node(&home, &url, "bad", "b", &wide);
    let b_id = an_id(&b).await;
    let output = whois(&url, "bad", b_id, &[]);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(5), "{stderr}");
    assert!(
        stderr.starts_with("error: CONFLICT: 2 claims covered slot 3 of fleet bad")
            && stderr.contains("this must never happen"),
        "{stderr}"
    );
    let text = String::from_utf8_lossy(&output.stdout);
    assert!(text.contains("answer      conflict\n"), "{text}");
    assert!(text.contains(&format!(", pid {a_pid}\n")), "{text}");
    assert!(text.contains(&format!(", pid {}\n", b.pid())), "{text}");
    let over_http = b.json(&format!("/v1/whois/{b_id}"));
    assert_eq!(over_http["answer"], "conflict");
    assert_eq!(over_http["claims"].as_array().unwrap().len(), 2);
}

/// A node given its identity keeps no history: 404, saying what to do.
#[test]
fn a_node_without_a_coordinator_keeps_no_history() {
    let home = temp_dir("whois-static");
    let state_dir = home.path().join("state");
    let node = Service::start(
        SNOWMINT,
        home.path(),
        &[
            "--datacenter",
            "1",
            "--state-dir",
            state_dir.to_str().unwrap(),
        ],
        &[],
    );
    let response = node.connect().get("/v1/whois/1724551110457221119").unwrap();
    assert_eq!(response.status, 404);
    let body: Value = serde_json::from_str(&response.body).unwrap();
    assert_eq!(body["error"]["code"], "no_coordinator");
    assert!(
        body["error"]["message"]
            .as_str()
            .unwrap()
            .contains("snowmint whois ID --coordinator URL --fleet NAME")
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn whois_on_etcd() {
    whois_names_the_holder::<EtcdServer>().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn whois_on_zookeeper() {
    whois_names_the_holder::<ZooKeeperServer>().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn whois_on_postgres() {
    whois_names_the_holder::<PostgresServer>().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_conflict_on_etcd_is_said_loudly() {
    overlapping_claims_are_a_conflict::<EtcdServer>().await;
}

/// Look-ups a node reads from the coordinator per second, as the README
/// states (`crates/snowmint-server/src/api/whois.rs`, `RATE`).
const WHOIS_RATE: f64 = 10.0;

/// Issue 34, finding 6: a flood of look-ups costs the coordinator a
/// bounded rate, counted by etcd itself (its `/metrics`). First, a node's
/// answer for an ID at or below the slot's mark is kept: asking for it 50
/// more times reads nothing. Then 16 clients ask for IDs of every slot as
/// fast as they are answered for 3 s: the node reads the history at most
/// `WHOIS_RATE` times a second (two `Range` requests each, with one burst
/// of that many), and tells the others `busy`. Once the flood passes, a
/// caller is answered.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_whois_flood_costs_the_coordinator_a_bounded_rate() {
    let etcd = EtcdServer::start().await;
    let url = etcd.url();
    let home = temp_dir("whois-flood");
    // No clock check: nothing but look-ups reads etcd's keys meanwhile.
    let a = node(&home, &url, "flood", "a", &["--max-clock-skew", "off"]);
    let id = an_id(&a).await;
    let target = format!("/v1/whois/{id}");
    assert_eq!(a.json(&target)["answer"], "covered");
    let before = etcd.kv_requests("Range").await;
    for _ in 0..50 {
        assert_eq!(a.json(&target)["answer"], "covered");
    }
    let read = etcd.kv_requests("Range").await - before;
    assert_eq!(
        read, 0.0,
        "50 look-ups of a kept answer read etcd {read} times"
    );

    let address = a.address;
    let before = etcd.kv_requests("Range").await;
    let started = std::time::Instant::now();
    let flood: Vec<_> = (0..16u64)
        .map(|client| {
            std::thread::spawn(move || {
                let (mut answered, mut busy) = (0u64, 0u64);
                let mut slot = client;
                while started.elapsed() < Duration::from_secs(3) {
                    let id =
                        (((now_ms() - 1_288_834_974_657) as u64) << 22) | ((slot % 1024) << 12);
                    slot += 16;
                    let mut connection =
                        snowmint_test_support::http::Connection::open(address).unwrap();
                    let response = connection.get(&format!("/v1/whois/{id}")).unwrap();
                    match response.status {
                        200 => answered += 1,
                        429 if response.body.contains("\"busy\"") => busy += 1,
                        other => panic!("{other}: {}", response.body),
                    }
                }
                (answered, busy)
            })
        })
        .collect();
    let (answered, busy) = flood
        .into_iter()
        .map(|thread| thread.join().unwrap())
        .fold((0, 0), |(a, b), (x, y)| (a + x, b + y));
    let elapsed = started.elapsed().as_secs_f64();
    let ranges = etcd.kv_requests("Range").await - before;
    let bound = 2.0 * WHOIS_RATE * (1.0 + elapsed);
    eprintln!(
        "{answered} look-ups answered, {busy} told busy in {elapsed:.1} s; etcd served {ranges} Range requests (bound {bound:.0})"
    );
    assert!(
        answered > 0 && busy > answered,
        "{answered} answered, {busy} busy"
    );
    assert!(
        ranges <= bound,
        "{ranges} Range requests, over the bound of {bound:.0}"
    );

    // A caller after the flood: its ID is newer than any mark read, so the
    // node reads the coordinator, once it has a turn again.
    let later = an_id(&a).await;
    let answer = eventually("a whois answer after the flood", LIMIT, || async {
        let response = a.connect().get(&format!("/v1/whois/{later}")).unwrap();
        (response.status == 200).then(|| serde_json::from_str::<Value>(&response.body).unwrap())
    })
    .await;
    assert_eq!(answer["answer"], "covered", "{answer}");
}

/// Bad input is exit 2 with the value and its range, before any
/// coordinator is asked; a coordinator that cannot be reached is exit 1,
/// naming it.
#[test]
fn bad_input_and_an_unreachable_coordinator() {
    let run = |args: &[&str]| {
        let output = Command::new(SNOWMINT)
            .arg("whois")
            .args(args)
            .env_remove("SNOWMINT_COORDINATOR")
            .env_remove("SNOWMINT_FLEET")
            .output()
            .unwrap();
        (
            output.status.code().unwrap(),
            String::from_utf8_lossy(&output.stdout).into_owned(),
            String::from_utf8_lossy(&output.stderr).into_owned(),
        )
    };
    let (code, out, err) = run(&["-1", "--coordinator", "etcd://127.0.0.1:1"]);
    assert_eq!(code, 2, "{err}");
    assert!(out.is_empty());
    assert!(
        err.starts_with("error: ID -1 is out of range (0..=18446744073709551615)"),
        "{err}"
    );
    let (code, _, err) = run(&["12", "--coordinator", "http://x:1"]);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.starts_with("error: coordinator URL \"http://x:1\" is invalid"),
        "{err}"
    );
    let (code, _, err) = run(&[
        "12",
        "--coordinator",
        "etcd://127.0.0.1:1",
        "--fleet",
        "a/b",
    ]);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.starts_with("error: fleet name \"a/b\" is invalid"),
        "{err}"
    );
    let port = snowmint_test_support::net::free_port();
    let url = format!("etcd://127.0.0.1:{port}");
    let (code, out, err) = run(&["12", "--coordinator", &url, "--fleet", "ids"]);
    assert_eq!(code, 1, "{err}");
    assert!(out.is_empty());
    assert_eq!(
        err.trim_end(),
        format!(
            "error: coordinator {url}: cannot read the claim history of fleet ids: connection refused"
        )
    );
}
