//! The fleet scenarios of the real `snowmint serve` binary, written once
//! and run against a real etcd, ZooKeeper and PostgreSQL server (through
//! [`every_fleet_scenario!`]), each started by the test on free loopback
//! ports.
//!
//! Every node is its own process with its own state directory, so that
//! only the coordinator's slot keys and high-water marks keep the nodes'
//! IDs apart. Every scenario collects the IDs the nodes hand out over HTTP
//! and checks that none was issued twice. Each scenario takes the path of
//! the `snowmint` executable.

use std::collections::{BTreeSet, HashSet};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;
use std::time::Duration;

use serde_json::Value;
use snowmint_test_support::binary::{Service, now_ms, timestamp_ms};
use snowmint_test_support::schema;
use snowmint_test_support::servers::CoordinatorServer;
use snowmint_test_support::temp::{TempDir, temp_dir};
use snowmint_test_support::wait::eventually;

/// The claim TTL of the nodes: short, so that a crashed node's slot frees
/// quickly (etcd leases count whole seconds; 1 s is the least accepted).
const TTL: &str = "2s";
const TTL_MS: i64 = 2_000;
/// A liveness bound for each wait (not a timing assertion: it is many
/// times what the step needs).
const LIMIT: Duration = Duration::from_secs(60);

/// The nodes of one scenario: one coordinator, one fleet, one HOME.
struct Fleet<'a, S: CoordinatorServer> {
    server: &'a S,
    name: &'static str,
    home: TempDir,
    /// The `snowmint` executable.
    binary: &'a str,
}

impl<'a, S: CoordinatorServer> Fleet<'a, S> {
    fn new(binary: &'a str, server: &'a S, name: &'static str) -> Fleet<'a, S> {
        Fleet {
            server,
            name,
            home: temp_dir(&format!("fleet-{name}")),
            binary,
        }
    }

    /// Starts node `node` of the fleet with its own state directory, `args`
    /// and the scenarios' TTL unless `args` set one; it answers at once,
    /// claiming in the background.
    fn start(&self, node: &str, args: &[&str]) -> Service {
        let url = self.server.url();
        let state_dir = self.home.path().join(format!("state-{node}"));
        let state_dir = state_dir.to_str().unwrap();
        let mut all = vec![
            "--coordinator",
            &url,
            "--fleet",
            self.name,
            "--state-dir",
            state_dir,
        ];
        if !args.contains(&"--claim-ttl") {
            all.extend_from_slice(&["--claim-ttl", TTL]);
        }
        all.extend_from_slice(args);
        Service::start(self.binary, self.home.path(), &all, &[])
    }

    /// The holder written into each slot key of the fleet.
    async fn holders(&self) -> std::collections::BTreeMap<u64, String> {
        self.server.slot_holders(self.name).await
    }
}

/// The slot an ID was issued by: datacenter * 32 + machine, the ten bits
/// above the sequence in the Twitter layout.
fn slot_of(id: u64) -> u64 {
    (id >> 12) & 0x3ff
}

/// What a node's key says about it: its pid and the address it serves on.
fn holder_of(service: &Service) -> String {
    format!("pid={} listen={}", service.pid(), service.address)
}

/// `GET target` on a fresh connection: status, `Retry-After`, JSON body.
fn get(service: &Service, target: &str) -> (u16, Option<String>, Value) {
    let response = service.connect().get(target).unwrap();
    let retry_after = response.header("retry-after").map(str::to_owned);
    let body = serde_json::from_str(&response.body)
        .unwrap_or_else(|_| panic!("{target}: not JSON: {}", response.body));
    (response.status, retry_after, body)
}

/// The claim engine's part of `/v1/node`, checked against the node's own
/// OpenAPI document.
fn coordinator(service: &Service) -> Value {
    let node = service.json("/v1/node");
    let document = service.json("/openapi.json");
    let schema = &document["paths"]["/v1/node"]["get"]["responses"]["200"]["content"]["application/json"]
        ["schema"];
    schema::check(&document, schema, &node, "/v1/node");
    assert!(node["coordinator"].is_object(), "{node}");
    node["coordinator"].clone()
}

/// Waits until `service` holds a slot and can issue; returns the slot.
async fn held(service: &Service) -> u64 {
    eventually("the node to hold a slot", LIMIT, || async {
        let status = coordinator(service);
        let ready = service.connect().get("/readyz").unwrap().status == 200;
        (status["state"] == "held" && ready).then(|| status["slot"].as_u64().unwrap())
    })
    .await
}

/// Waits until the claim engine of `service` is in `state`.
async fn in_state(service: &Service, state: &str) -> Value {
    eventually(&format!("the claim state {state:?}"), LIMIT, || async {
        let status = coordinator(service);
        (status["state"] == state).then_some(status)
    })
    .await
}

/// Checks that `service` may not issue: 503 with `Retry-After` on `/v1/id`
/// and `/v1/ids`, `/readyz` not ready, and still live. Returns the error
/// code and message of `/v1/id`.
fn refuses(service: &Service) -> (String, String) {
    for target in ["/v1/id", "/v1/ids?count=10"] {
        let (status, retry_after, body) = get(service, target);
        assert_eq!(status, 503, "{target}: {body}");
        let seconds: u64 = retry_after
            .unwrap_or_else(|| panic!("{target}: 503 without Retry-After"))
            .parse()
            .unwrap();
        assert!(seconds >= 1, "{target}: Retry-After {seconds}");
    }
    let (status, _, ready) = get(service, "/readyz");
    assert_eq!(status, 503, "/readyz: {ready}");
    let (status, _, live) = get(service, "/healthz");
    assert_eq!((status, &live["status"]), (200, &Value::from("ok")));
    let (_, _, body) = get(service, "/v1/id");
    (
        body["error"]["code"].as_str().unwrap().to_owned(),
        body["error"]["message"].as_str().unwrap().to_owned(),
    )
}

/// One metric's value in `/metrics`, such as `snowmint_node_slot` or
/// `snowmint_claim_state{state="held"}`.
fn metric(service: &Service, name: &str) -> f64 {
    let text = service.connect().get("/metrics").unwrap().body;
    text.lines()
        .find_map(|line| line.strip_prefix(name)?.strip_prefix(' '))
        .unwrap_or_else(|| panic!("no {name} in /metrics:\n{text}"))
        .parse()
        .unwrap()
}

/// A client that takes batches of IDs from a node until stopped or until
/// the node goes away, riding out 503s.
struct Client {
    stop: Arc<AtomicBool>,
    taken: Arc<std::sync::atomic::AtomicUsize>,
    thread: JoinHandle<Vec<u64>>,
}

impl Client {
    fn start(service: &Service) -> Client {
        let stop = Arc::new(AtomicBool::new(false));
        let taken = Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let mut connection = service.connect();
        let thread = {
            let (stop, taken) = (stop.clone(), taken.clone());
            std::thread::spawn(move || {
                let mut ids = Vec::new();
                while !stop.load(Ordering::Relaxed) {
                    let Ok(response) = connection.get("/v1/ids?count=100") else {
                        break;
                    };
                    match response.status {
                        200 => {
                            let body: Value = serde_json::from_str(&response.body).unwrap();
                            ids.extend(
                                body["ids"]
                                    .as_array()
                                    .unwrap()
                                    .iter()
                                    .map(|id| id.as_str().unwrap().parse::<u64>().unwrap()),
                            );
                            taken.store(ids.len(), Ordering::Relaxed);
                        }
                        503 => {}
                        other => panic!("/v1/ids answered {other}: {}", response.body),
                    }
                    // Leaves the two cores some room for the coordinator and
                    // the nodes' keep-alives.
                    std::thread::sleep(Duration::from_millis(2));
                }
                ids
            })
        };
        Client {
            stop,
            taken,
            thread,
        }
    }

    /// Waits until it has taken `count` IDs in all.
    async fn wait_for(&self, count: usize) {
        eventually(&format!("{count} IDs"), LIMIT, || async {
            assert!(!self.thread.is_finished(), "the client stopped early");
            (self.taken.load(Ordering::Relaxed) >= count).then_some(())
        })
        .await
    }

    fn taken(&self) -> usize {
        self.taken.load(Ordering::Relaxed)
    }

    /// Stops (if the node has not gone away already) and returns the IDs.
    fn finish(self) -> Vec<u64> {
        self.stop.store(true, Ordering::Relaxed);
        self.thread.join().unwrap()
    }
}

/// Takes `batches` batches of 4096 IDs from a node that can issue.
fn take(service: &Service, batches: usize) -> Vec<u64> {
    (0..batches)
        .flat_map(|_| {
            let body = service.json("/v1/ids?count=4096");
            body["ids"]
                .as_array()
                .unwrap()
                .iter()
                .map(|id| id.as_str().unwrap().parse::<u64>().unwrap())
                .collect::<Vec<_>>()
        })
        .collect()
}

/// Panics if any ID appears twice among all of `runs`.
fn assert_unique(runs: &[&[u64]]) {
    let mut seen = HashSet::new();
    for id in runs.iter().flat_map(|run| run.iter()) {
        assert!(seen.insert(*id), "ID {id} was issued twice");
    }
    assert!(!seen.is_empty(), "no ID was issued at all");
}

/// Two nodes against one coordinator get different slots, say so on
/// `/v1/node`, `/metrics` and in their slot keys, and their IDs never
/// collide; a third, allowed only those two slots, finds them taken and
/// refuses to issue. One node reads its settings from a TOML file, one
/// from the environment.
pub async fn two_nodes_take_different_slots<S: CoordinatorServer>(binary: &str) {
    let server = S::start().await;
    let fleet = Fleet::new(binary, &server, "two");
    let url = server.url();
    let file = fleet.home.path().join("a.toml");
    std::fs::write(
        &file,
        format!(
            "coordinator = \"{url}\"\nfleet = \"two\"\nclaim_ttl = \"{TTL}\"\nslots = \"0-1\"\n"
        ),
    )
    .unwrap();
    let a = Service::start(
        binary,
        fleet.home.path(),
        &[
            "--config",
            file.to_str().unwrap(),
            "--state-dir",
            fleet.home.path().join("state-a").to_str().unwrap(),
        ],
        &[],
    );
    let b = Service::start(
        binary,
        fleet.home.path(),
        &[
            "--state-dir",
            fleet.home.path().join("state-b").to_str().unwrap(),
        ],
        &[
            ("SNOWMINT_COORDINATOR", url.as_str()),
            ("SNOWMINT_FLEET", "two"),
            ("SNOWMINT_CLAIM_TTL", TTL),
            ("SNOWMINT_SLOTS", "0-1"),
        ],
    );
    let slot_a = held(&a).await;
    let slot_b = held(&b).await;
    assert_eq!(BTreeSet::from([slot_a, slot_b]), BTreeSet::from([0, 1]));

    let holders = fleet.holders().await;
    assert_eq!(holders.len(), 2, "{holders:?}");
    for (slot, node) in [(slot_a, &a), (slot_b, &b)] {
        let holder = holders.get(&slot).map(String::as_str).unwrap_or_default();
        assert!(holder.contains(&holder_of(node)), "{holders:?}");
    }

    let status = coordinator(&a);
    assert_eq!(status["url"], server.shown_url().as_str());
    assert_eq!(status["fleet"], "two");
    assert_eq!(status["slots"], "0-1");
    assert_eq!(status["slot"], slot_a);
    assert_eq!(status["session_kind"], S::SESSION_KIND);
    assert!(status["session_id"].is_string(), "{status}");
    assert_eq!(status["claims_acquired"], 1);
    assert_eq!(status["claims_lost"], 0);
    assert!(status["holder"].as_str().unwrap().contains(&holder_of(&a)));
    let left = status["time_to_deadline_ms"].as_u64().unwrap();
    assert!(
        left > 0 && left <= status["ttl_ms"].as_u64().unwrap(),
        "{status}"
    );
    assert_eq!(metric(&a, "snowmint_node_slot"), slot_a as f64);
    assert_eq!(metric(&a, "snowmint_claim_state{state=\"held\"}"), 1.0);
    assert_eq!(
        metric(&a, "snowmint_claim_state{state=\"connecting\"}"),
        0.0
    );
    assert_eq!(
        metric(&a, "snowmint_claim_changes_total{change=\"acquired\"}"),
        1.0
    );
    assert_eq!(
        metric(&a, "snowmint_claim_changes_total{change=\"lost\"}"),
        0.0
    );
    assert!(metric(&a, "snowmint_claim_time_to_deadline_ms") > 0.0);

    let c = fleet.start("c", &["--slots", "0-1"]);
    in_state(&c, "all_taken").await;
    let (code, message) = refuses(&c);
    assert_eq!(code, "no_claim");
    assert!(
        message.contains("all 2 slots of fleet two in 0-1 are taken"),
        "{message}"
    );
    let (_, _, ready) = get(&c, "/readyz");
    assert!(
        ready["error"]["message"]
            .as_str()
            .unwrap()
            .contains("are taken"),
        "{ready}"
    );
    assert_eq!(metric(&c, "snowmint_claim_state{state=\"all_taken\"}"), 1.0);
    assert_eq!(metric(&c, "snowmint_node_slot"), -1.0);

    let clients = [Client::start(&a), Client::start(&b)];
    for client in &clients {
        client.wait_for(20_000).await;
    }
    let [from_a, from_b] = clients.map(Client::finish);
    assert!(from_a.iter().all(|&id| slot_of(id) == slot_a));
    assert!(from_b.iter().all(|&id| slot_of(id) == slot_b));
    assert_unique(&[&from_a, &from_b]);
}

/// SIGTERM releases the claim: right after the node exits its slot key is
/// gone (or already another node's), though its lease or session had 30 s
/// left; a node waiting for that slot takes it and issues above the first
/// node's IDs.
pub async fn sigterm_frees_the_slot_at_once<S: CoordinatorServer>(binary: &str) {
    let server = S::start().await;
    let fleet = Fleet::new(binary, &server, "term");
    let a = fleet.start("a", &["--claim-ttl", "30s", "--slots", "0-0"]);
    assert_eq!(held(&a).await, 0);
    let from_a = take(&a, 5);
    let holder_a = holder_of(&a);

    let b = fleet.start("b", &["--slots", "0-0"]);
    in_state(&b, "all_taken").await;
    refuses(&b);

    let (status, log) = a.terminate();
    assert!(status.success(), "{status}: {log}");
    assert!(log.contains("its claim on slot 0 is released"), "{log}");
    let holders = fleet.holders().await;
    assert!(
        holders
            .get(&0)
            .is_none_or(|holder| !holder.contains(&holder_a)),
        "the slot key outlived a clean shutdown: {holders:?}"
    );

    assert_eq!(held(&b).await, 0);
    let holders = fleet.holders().await;
    assert!(
        holders
            .get(&0)
            .is_some_and(|holder| holder.contains(&holder_of(&b))),
        "{holders:?}"
    );
    let from_b = take(&b, 5);
    let last_a = *from_a.iter().max().unwrap();
    assert!(from_b.iter().all(|&id| id > last_a));
    assert_unique(&[&from_a, &from_b]);
}

/// SIGKILL releases nothing: the slot key stays until its TTL runs out,
/// then another node takes the slot. With its clock a minute behind, that
/// node refuses (`refuse`) rather than issue at or below the mark the
/// killed node left; with `borrow` it issues, every ID after the killed
/// node's last.
pub async fn sigkill_then_takeover_above_the_mark<S: CoordinatorServer>(binary: &str) {
    let server = S::start().await;
    let fleet = Fleet::new(binary, &server, "kill");
    let a = fleet.start("a", &["--claim-ttl", "4s", "--slots", "0-0"]);
    assert_eq!(held(&a).await, 0);
    let client = Client::start(&a);
    client.wait_for(20_000).await;
    let holder_a = holder_of(&a);
    a.kill();
    let holders = fleet.holders().await;
    assert!(
        holders
            .get(&0)
            .is_some_and(|holder| holder.contains(&holder_a)),
        "a killed node's key went before its TTL: {holders:?}"
    );
    let from_a = client.finish();
    let last_a = *from_a.iter().max().unwrap();

    // The clock check would keep a node a minute behind from claiming at
    // all; the point here is what the mark does when one does.
    let behind = [
        "--slots",
        "0-0",
        "--clock-offset-ms",
        "-60000",
        "--max-clock-skew",
        "off",
    ];
    let b = fleet.start("b", &behind);
    let status = in_state(&b, "held").await;
    assert_eq!(status["slot"], 0);
    assert_eq!(status["claims_acquired"], 1);
    // (Until the issuer has built the claim's generator, the refusal says
    // that it is setting up.)
    eventually("a refusal because of the clock", LIMIT, || async {
        let (code, message) = refuses(&b);
        assert!(
            code == "clock_behind" || code == "not_ready",
            "{code}: {message}"
        );
        (code == "clock_behind").then_some(())
    })
    .await;
    let node = b.json("/v1/node");
    let floor = node["claim_floor_ms"].as_i64().unwrap();
    assert!(floor >= timestamp_ms(last_a), "{node}");
    let (status, log) = b.terminate();
    assert!(status.success(), "{status}: {log}");

    let mut borrowing = behind.to_vec();
    borrowing.extend_from_slice(&["--clock-policy", "borrow", "--clock-max", "2m"]);
    let c = fleet.start("c", &borrowing);
    assert_eq!(held(&c).await, 0);
    let from_c = take(&c, 20);
    assert!(
        from_c.iter().all(|&id| timestamp_ms(id) > floor),
        "an ID at or below the floor"
    );
    let first_c = *from_c.iter().min().unwrap();
    assert!(
        timestamp_ms(first_c) > timestamp_ms(last_a),
        "the new holder's first ID ({first_c}) is not after the killed node's last ({last_a})"
    );
    assert_unique(&[&from_a, &from_c]);
}

/// A stopped coordinator (SIGSTOP) fences every node before the TTL ends:
/// 503 and not ready, still live, and no ID stamped at or after the stop
/// plus the TTL. Once it runs again (SIGCONT) the nodes claim anew and
/// serve; no ID repeats across the whole run.
pub async fn a_stopped_coordinator_fences_every_node<S: CoordinatorServer>(binary: &str) {
    let server = S::start().await;
    let fleet = Fleet::new(binary, &server, "stop");
    let nodes = [fleet.start("a", &[]), fleet.start("b", &[])];
    for node in &nodes {
        held(node).await;
    }
    let clients = nodes.each_ref().map(Client::start);
    for client in &clients {
        client.wait_for(5_000).await;
    }

    let stopped_ms = now_ms();
    server.process().pause();
    for node in &nodes {
        eventually("the node to fence itself", LIMIT, || async {
            let gone = metric(node, "snowmint_claim_state{state=\"held\"}") == 0.0;
            (gone && get(node, "/readyz").0 == 503).then_some(())
        })
        .await;
        let (code, message) = refuses(node);
        assert_eq!(code, "no_claim", "{message}");
        assert_ne!(coordinator(node)["state"], "held");
    }
    // Stopped for two TTLs: every lease or session runs out meanwhile (as
    // the coordinator will find when it runs again).
    let until = stopped_ms + 2 * TTL_MS;
    tokio::time::sleep(Duration::from_millis((until - now_ms()).max(0) as u64)).await;
    let resumed_ms = now_ms();
    server.process().resume();

    let before: Vec<usize> = clients.iter().map(Client::taken).collect();
    for (node, client) in nodes.iter().zip(&clients) {
        held(node).await;
        let status = coordinator(node);
        assert!(status["claims_acquired"].as_u64().unwrap() >= 2, "{status}");
        assert!(status["claims_lost"].as_u64().unwrap() >= 1, "{status}");
        assert!(metric(node, "snowmint_claim_changes_total{change=\"lost\"}") >= 1.0);
        let taken = client.taken();
        client.wait_for(taken + 5_000).await;
    }
    let ids = clients.map(Client::finish);
    for (run, before) in ids.iter().zip(before) {
        assert!(run.len() > before, "no ID after the coordinator came back");
        for &id in run {
            let stamped = timestamp_ms(id);
            assert!(
                stamped < stopped_ms + TTL_MS || stamped > resumed_ms,
                "ID {id} stamped {stamped}, after the TTL ran out ({}) on a stopped coordinator (resumed at {resumed_ms})",
                stopped_ms + TTL_MS
            );
        }
    }
    assert_unique(&[&ids[0], &ids[1]]);
}

/// Sonyflake v1's epoch, 2014-09-01T00:00:00Z, in Unix milliseconds; its
/// time counts 10 ms ticks in the 39 bits above an 8-bit sequence and the
/// 16-bit machine (github.com/sony/sonyflake).
const SONYFLAKE_EPOCH_MS: i64 = 1_409_529_600_000;

/// A fleet in Sonyflake's layout: the slot is the layout's one node field,
/// the 16-bit machine, so the fleet has 65,536 slots. Three nodes allowed
/// only the last three claim one each (slots Twitter's layout does not
/// have), their slot keys say so, every ID carries its node's slot in its
/// low 16 bits and a time on the 10 ms grid of the real clock, and no ID
/// is issued twice.
pub async fn a_sonyflake_fleet_claims_slots_past_twitters<S: CoordinatorServer>(binary: &str) {
    let server = S::start().await;
    let fleet = Fleet::new(binary, &server, "sony");
    let nodes: Vec<Service> = (0..3)
        .map(|n| {
            fleet.start(
                &n.to_string(),
                &["--layout", "sonyflake", "--slots", "65533-65535"],
            )
        })
        .collect();
    let mut slots = Vec::new();
    for node in &nodes {
        slots.push(held(node).await);
    }
    let distinct: BTreeSet<u64> = slots.iter().copied().collect();
    assert_eq!(distinct, BTreeSet::from([65_533, 65_534, 65_535]));
    let holders = fleet.holders().await;
    assert_eq!(
        holders.keys().copied().collect::<BTreeSet<u64>>(),
        distinct,
        "{holders:?}"
    );
    for node in &nodes {
        assert_eq!(coordinator(node)["slots"], "65533-65535");
        let status = node.json("/v1/node");
        assert_eq!(status["layout"], "sonyflake", "{status}");
    }

    let mut runs = Vec::new();
    for (node, &slot) in nodes.iter().zip(&slots) {
        let before = now_ms();
        let ids = take(node, 2);
        let after = now_ms();
        assert_eq!(ids.len(), 2 * 4096);
        assert!(ids.windows(2).all(|w| w[0] < w[1]), "strictly increasing");
        for &id in &ids {
            assert_eq!(id & 0xffff, slot, "the machine of {id}");
            let ms = (id >> 24) as i64 * 10 + SONYFLAKE_EPOCH_MS;
            // The tick that holds `before` starts up to 9 ms before it.
            assert!(
                (before - 9..=after).contains(&ms),
                "{id}: {ms} not in {before}..={after}"
            );
        }
        runs.push(ids);
    }
    let all: Vec<&[u64]> = runs.iter().map(Vec::as_slice).collect();
    assert_unique(&all);
}

/// Two `snowmint serve` nodes of two slots each (`--slots-per-node 2`) in
/// Sonyflake slots 65532-65535: each claims an aligned block (65532-65533
/// and 65534-65535), the coordinator holds all four keys, and each node
/// issues from both machines of its block, increasing, none twice.
pub async fn a_fleet_of_two_slot_nodes_claims_aligned_blocks<S: CoordinatorServer>(binary: &str) {
    let server = S::start().await;
    let fleet = Fleet::new(binary, &server, "pairs");
    let args = [
        "--layout",
        "sonyflake",
        "--slots",
        "65532-65535",
        "--slots-per-node",
        "2",
    ];
    let nodes: Vec<Service> = (0..2).map(|n| fleet.start(&n.to_string(), &args)).collect();
    let mut firsts = Vec::new();
    for node in &nodes {
        firsts.push(held(node).await);
    }
    let blocks: BTreeSet<u64> = firsts.iter().copied().collect();
    assert_eq!(blocks, BTreeSet::from([65_532, 65_534]));
    let holders = fleet.holders().await;
    assert_eq!(
        holders.keys().copied().collect::<BTreeSet<u64>>(),
        BTreeSet::from([65_532, 65_533, 65_534, 65_535]),
        "{holders:?}"
    );
    let mut runs = Vec::new();
    for (node, &first) in nodes.iter().zip(&firsts) {
        let ids = take(node, 2);
        assert!(ids.windows(2).all(|w| w[0] < w[1]), "strictly increasing");
        let machines: BTreeSet<u64> = ids.iter().map(|id| id & 0xffff).collect();
        // 8192 IDs at 512 a tick: every tick uses both machines.
        assert_eq!(machines, BTreeSet::from([first, first + 1]));
        runs.push(ids);
    }
    let all: Vec<&[u64]> = runs.iter().map(Vec::as_slice).collect();
    assert_unique(&all);
}
