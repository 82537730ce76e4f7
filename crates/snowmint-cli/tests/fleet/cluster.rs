//! The real `snowmint serve` binary on a replicated coordinator (a
//! 3-member etcd cluster, a 3-server ZooKeeper ensemble), through faults
//! of its members, declared against each by [`every_cluster_scenario!`].
//!
//! Every scenario runs three nodes of one fleet that may claim two slots
//! (`--slots 0-1`): two hold a slot, the third waits for one, ready to
//! take over a slot whose holder's lease or session runs out. Each node is
//! given every member (`etcd://a,b,c`, `zk://a,b,c`), each member through
//! a proxy of the node's own ([`MemberProxies`]), so that the test knows
//! which members a node's client uses and can cut one off. While the
//! fault is injected, a client per node pulls `/v1/ids` without pause and
//! a sampler reads `/v1/node`.
//!
//! Each scenario ends with the same checks ([`Run::finish`]):
//!
//! - no ID was issued twice;
//! - no two nodes held the same slot at the same time: every node's claims,
//!   as its samples of `/v1/node` show them (`held` with time left), never
//!   overlap another node's claim of the same slot;
//! - every ID carries the slot of a node that held it.
//!
//! and prints how long the fault kept each node from issuing (its
//! [`Window`]): from the fault to the first 503, and from the fault (and
//! from the repair) to the first ID after it. The times are printed, never
//! asserted.

use std::collections::{BTreeMap, HashMap};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use serde_json::Value;
use snowmint_test_support::binary::{Service, now_ms, timestamp_ms};
use snowmint_test_support::http;
use snowmint_test_support::servers::replicated::{MemberProxies, Replicated};
use snowmint_test_support::temp::{TempDir, temp_dir};
use snowmint_test_support::wait::{Deadline, eventually};

/// The nodes' claim TTL: short, so that a fault outlasts it quickly.
pub const TTL: Duration = Duration::from_secs(2);
/// How long a fault stays in place: longer than the TTL, so that every
/// lease or session the fault keeps from being renewed runs out.
pub const DWELL: Duration = Duration::from_secs(4);
/// A liveness bound for each wait (not a timing assertion).
const LIMIT: Duration = Duration::from_secs(60);
/// The nodes of each scenario; they share [`SLOTS`].
const NODES: [&str; 3] = ["a", "b", "c"];
/// Two slots for three nodes: one node always waits.
const SLOTS: &str = "0-1";
/// How many slots [`SLOTS`] holds.
const SLOT_COUNT: usize = 2;
/// How often a client asks for IDs, and a sampler for `/v1/node`.
const PULL_EVERY: Duration = Duration::from_millis(5);
const SAMPLE_EVERY: Duration = Duration::from_millis(20);

/// One answer to `/v1/ids`.
#[derive(Debug, Clone, Copy)]
struct Answer {
    sent: Instant,
    received: Instant,
    status: u16,
}

/// One reading of `/v1/node`: the claim it showed, if any was usable.
#[derive(Debug, Clone, Copy)]
struct Sample {
    sent: Instant,
    received: Instant,
    /// (slot, claim generation) while `held` with time left.
    held: Option<(u64, u64)>,
}

/// What a node's client and sampler saw.
#[derive(Debug, Default)]
struct NodeLog {
    answers: Vec<Answer>,
    ids: Vec<u64>,
    samples: Vec<Sample>,
}

/// A node of the scenario: the process, its own proxies in front of the
/// members, and what was seen of it.
struct Node {
    name: &'static str,
    service: Service,
    proxies: MemberProxies,
    log: Arc<Mutex<NodeLog>>,
}

/// How long one fault kept one node from issuing, for the table. Every
/// time is counted from the fault.
#[derive(Debug, Clone)]
pub struct Window {
    /// The node.
    pub node: &'static str,
    /// The first 503 (none: it was never refused).
    pub first_refusal: Option<Duration>,
    /// The longest stretch without an ID, from the last ID before it to
    /// the first after it (none: the node issued no ID after the stretch
    /// began, its slot having gone to another node). A stretch that began
    /// before the fault counts from the fault.
    pub stalled: Option<(Duration, Option<Duration>)>,
    /// When the repair came.
    pub repair: Duration,
}

/// One scenario's run: the coordinator, the nodes, and the threads that
/// pull IDs and read `/v1/node`.
pub struct Run<R: Replicated> {
    /// The coordinator.
    pub cluster: R,
    backend: &'static str,
    scenario: &'static str,
    nodes: Vec<Node>,
    stop: Arc<AtomicBool>,
    threads: Vec<JoinHandle<()>>,
    // Last: the nodes' state directories outlive the nodes.
    _home: TempDir,
}

/// The claim a `/v1/node` body shows, if usable now.
fn usable_claim(node: &Value) -> Option<(u64, u64)> {
    let status = &node["coordinator"];
    let left = status["time_to_deadline_ms"].as_u64().unwrap_or(0);
    if status["state"] != "held" || left == 0 {
        return None;
    }
    Some((
        status["slot"].as_u64()?,
        status["claims_acquired"].as_u64()?,
    ))
}

/// Asks `service` for IDs until `stop`, logging every answer.
fn pull(service: std::net::SocketAddr, stop: Arc<AtomicBool>, log: Arc<Mutex<NodeLog>>) {
    let mut connection = None;
    while !stop.load(Ordering::Relaxed) {
        let open = match connection.take() {
            Some(open) => Ok(open),
            None => http::Connection::open(service),
        };
        let Ok(mut open) = open else {
            std::thread::sleep(PULL_EVERY);
            continue;
        };
        let sent = Instant::now();
        let Ok(response) = open.get("/v1/ids?count=100") else {
            continue;
        };
        let received = Instant::now();
        let mut ids = Vec::new();
        match response.status {
            200 => {
                let body: Value = serde_json::from_str(&response.body).unwrap();
                let listed = body["ids"].as_array().expect("an ids array");
                ids.extend(
                    listed
                        .iter()
                        .map(|id| id.as_str().unwrap().parse::<u64>().unwrap()),
                );
            }
            503 => {}
            other => panic!("/v1/ids answered {other}: {}", response.body),
        }
        {
            let mut log = log.lock().unwrap();
            log.answers.push(Answer {
                sent,
                received,
                status: response.status,
            });
            log.ids.extend(ids);
        }
        connection = Some(open);
        std::thread::sleep(PULL_EVERY);
    }
}

/// Reads `/v1/node` of `service` until `stop`, logging the claim seen.
fn sample(service: std::net::SocketAddr, stop: Arc<AtomicBool>, log: Arc<Mutex<NodeLog>>) {
    while !stop.load(Ordering::Relaxed) {
        sample_once(service, &log);
        std::thread::sleep(SAMPLE_EVERY);
    }
}

/// Reads `/v1/node` of `service` once, logging the claim seen.
fn sample_once(service: std::net::SocketAddr, log: &Mutex<NodeLog>) {
    let sent = Instant::now();
    let answer = http::Connection::open(service).and_then(|mut c| c.get("/v1/node"));
    let received = Instant::now();
    if let Ok(response) = answer {
        assert_eq!(response.status, 200, "/v1/node: {}", response.body);
        let body: Value = serde_json::from_str(&response.body).unwrap();
        log.lock().unwrap().samples.push(Sample {
            sent,
            received,
            held: usable_claim(&body),
        });
    }
}

impl<R: Replicated> Run<R> {
    /// Starts the coordinator and three nodes, waits until two hold a slot
    /// and serve and the third waits, and starts pulling IDs.
    pub async fn start(binary: &str, scenario: &'static str) -> Run<R> {
        let cluster = R::start().await;
        let home = temp_dir(&format!("cluster-{}", R::SCHEME));
        let fleet = scenario.replace(' ', "-");
        let ttl = format!("{}s", TTL.as_secs());
        let mut nodes = Vec::new();
        for name in NODES {
            let proxies = MemberProxies::start(&cluster.client_addrs()).await;
            let url = R::url(&proxies.addrs());
            let state_dir = home.path().join(format!("state-{name}"));
            let args = [
                "--coordinator",
                &url,
                "--fleet",
                &fleet,
                "--slots",
                SLOTS,
                "--claim-ttl",
                &ttl,
                "--state-dir",
                state_dir.to_str().unwrap(),
            ];
            let service = Service::start(binary, home.path(), &args, &[]);
            nodes.push(Node {
                name,
                service,
                proxies,
                log: Arc::default(),
            });
        }
        let mut run = Run {
            cluster,
            backend: R::NAME,
            scenario,
            nodes,
            stop: Arc::default(),
            threads: Vec::new(),
            _home: home,
        };
        eventually(
            "two nodes to hold a slot and one to wait",
            LIMIT,
            || async {
                let states: Vec<Value> = run
                    .nodes
                    .iter()
                    .map(|node| node.service.json("/v1/node")["coordinator"]["state"].clone())
                    .collect();
                let held = states.iter().filter(|state| *state == "held").count();
                let waiting = states.iter().filter(|state| *state == "all_taken").count();
                (held == SLOT_COUNT && waiting == NODES.len() - SLOT_COUNT).then_some(())
            },
        )
        .await;
        for node in &run.nodes {
            let address = node.service.address;
            for work in [pull, sample] {
                let (stop, log) = (run.stop.clone(), node.log.clone());
                run.threads
                    .push(std::thread::spawn(move || work(address, stop, log)));
            }
        }
        run.wait_serving("two nodes to issue IDs before the fault")
            .await;
        run
    }

    /// The proxies of the first node (its way to each member).
    pub fn first_node_proxies(&self) -> &MemberProxies {
        &self.nodes[0].proxies
    }

    /// Cuts member `member` off from every node.
    pub fn cut_everywhere(&self, member: usize) {
        for node in &self.nodes {
            node.proxies.cut(member);
        }
    }

    /// Lets member `member` reach every node again.
    pub fn heal_everywhere(&self, member: usize) {
        for node in &self.nodes {
            node.proxies.heal(member);
        }
    }

    /// The nodes that got an ID from a request sent at or after `since`.
    fn serving_since(&self, since: Instant) -> Vec<&'static str> {
        let serving = self.nodes.iter().filter(|node| {
            let log = node.log.lock().unwrap();
            log.answers
                .iter()
                .rev()
                .take_while(|answer| answer.sent >= since)
                .any(|answer| answer.status == 200)
        });
        serving.map(|node| node.name).collect()
    }

    /// Waits until as many nodes as there are slots issue IDs again (to
    /// requests sent after this call), `what` naming the wait.
    pub async fn wait_serving(&self, what: &str) {
        let since = Instant::now();
        eventually(what, LIMIT, || async {
            // More than one per slot when a slot changed hands meanwhile.
            (self.serving_since(since).len() >= SLOT_COUNT).then_some(())
        })
        .await
    }

    /// Waits until every node refuses IDs (every request of a tenth of a
    /// second) and says it is not ready.
    pub async fn wait_all_refusing(&self, what: &str) {
        let deadline = Deadline::after(LIMIT, what);
        loop {
            let since = Instant::now();
            tokio::time::sleep(Duration::from_millis(100)).await;
            let refusing = self.nodes.iter().all(|node| {
                let log = node.log.lock().unwrap();
                let recent: Vec<&Answer> = log
                    .answers
                    .iter()
                    .filter(|answer| answer.sent >= since)
                    .collect();
                !recent.is_empty() && recent.iter().all(|answer| answer.status == 503)
            });
            let unready = self
                .nodes
                .iter()
                .all(|node| node.service.connect().get("/readyz").unwrap().status == 503);
            if refusing && unready {
                return;
            }
            deadline.check_with(|| self.describe());
        }
    }

    /// What each node says about its claim, and what it logged about it.
    fn describe(&self) -> String {
        let mut text = String::new();
        for node in &self.nodes {
            let status = node.service.json("/v1/node")["coordinator"].clone();
            text.push_str(&format!(
                "node {}: {status}\n{}\n",
                node.name,
                claim_log(&node.service)
            ));
        }
        text
    }

    /// Stops the clients and checks the run: no ID twice, no slot held by
    /// two nodes at once, every ID from a slot its node held. Prints and
    /// returns how long the fault (injected at `fault`, repaired at
    /// `repair`) kept each serving node from issuing.
    pub fn finish(mut self, fault: Instant, repair: Instant) -> Vec<Window> {
        self.stop.store(true, Ordering::Relaxed);
        for thread in self.threads.drain(..) {
            thread.join().expect("a client or sampler panicked");
        }
        // A claim made in the last sampling interval may have issued IDs
        // that the clients pulled before any sample saw it (seen in CI: a
        // node claimed a slot 40 ms before the end). One more sample of
        // each node, now that no ID is pulled, sees the claim its last IDs
        // came from, unless that claim was lost in the same moment.
        for node in &self.nodes {
            sample_once(node.service.address, &node.log);
        }
        for node in &self.nodes {
            println!("node {}:\n{}", node.name, claim_log(&node.service));
        }
        let logs: Vec<(&'static str, NodeLog)> = self
            .nodes
            .iter()
            .map(|node| (node.name, std::mem::take(&mut *node.log.lock().unwrap())))
            .collect();
        assert_unique(&logs);
        let claims = check_claims(&logs);
        check_ids_within_claims(&logs, &claims);
        let end = Instant::now();
        let windows: Vec<Window> = logs
            .iter()
            .filter_map(|(name, log)| window(name, log, fault, repair, end))
            .collect();
        for window in &windows {
            let stalled = match window.stalled {
                Some((from, Some(until))) => format!(
                    "no ID from {} to {} ({} ms)",
                    from.as_millis(),
                    until.as_millis(),
                    (until - from).as_millis()
                ),
                Some((from, None)) => format!("no ID after {} (slot taken over)", from.as_millis()),
                None => "-".to_owned(),
            };
            println!(
                "fault window | {} | {} | node {} | first 503 {} | {stalled} | repaired at {}",
                self.backend,
                self.scenario,
                window.node,
                ms(window.first_refusal),
                window.repair.as_millis(),
            );
        }
        windows
    }
}

impl<R: Replicated> Drop for Run<R> {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
    }
}

/// The lines of a node's log that say how its claim changed.
fn claim_log(service: &Service) -> String {
    let log = service.log();
    let lines = log
        .lines()
        .filter(|line| line.contains("claimed a slot") || line.contains("fenced"));
    lines.collect::<Vec<_>>().join("\n")
}

fn ms(duration: Option<Duration>) -> String {
    duration.map_or_else(|| "-".to_owned(), |d| format!("{} ms", d.as_millis()))
}

/// The window of a node that was serving when the fault came; `end` is
/// when the clients stopped.
fn window(
    node: &'static str,
    log: &NodeLog,
    fault: Instant,
    repair: Instant,
    end: Instant,
) -> Option<Window> {
    let before = log.answers.iter().rev().find(|a| a.sent < fault)?;
    if before.status != 200 {
        return None;
    }
    let since = |instant: Instant| instant.saturating_duration_since(fault);
    let after: Vec<&Answer> = log.answers.iter().filter(|a| a.sent >= fault).collect();
    let refusal = after.iter().find(|answer| answer.status == 503);
    // The IDs' arrivals, from the last one before the fault.
    let mut arrivals = vec![before.received];
    arrivals.extend(after.iter().filter(|a| a.status == 200).map(|a| a.received));
    let longest = arrivals
        .windows(2)
        .map(|pair| (pair[1] - pair[0], since(pair[0]), Some(since(pair[1]))))
        .max_by_key(|(gap, ..)| *gap);
    let last = *arrivals.last().unwrap();
    // A node whose latest answer is a refusal has issued nothing since its
    // last ID: its slot went to another node. That stretch counts too.
    let refusing_at_the_end = after.last().is_some_and(|answer| answer.status != 200);
    let tail = refusing_at_the_end.then(|| (end - last, since(last), None));
    let (_, from, until) = match (longest, tail) {
        (Some(longest), Some(tail)) if longest.0 < tail.0 => tail,
        (Some(longest), _) => longest,
        (None, Some(tail)) => tail,
        (None, None) => (Duration::ZERO, since(last), Some(since(last))),
    };
    Some(Window {
        node,
        first_refusal: refusal.map(|answer| since(answer.received)),
        stalled: Some((from, until)),
        repair: since(repair),
    })
}

/// Panics if any ID was issued twice, by one node or two.
fn assert_unique(logs: &[(&'static str, NodeLog)]) {
    let mut seen: HashMap<u64, &str> = HashMap::new();
    let mut total = 0;
    for (name, log) in logs {
        for &id in &log.ids {
            total += 1;
            if let Some(first) = seen.insert(id, name) {
                panic!("ID {id} was issued twice: by node {first} and by node {name}");
            }
        }
    }
    assert!(total > 0, "no ID was issued at all");
    println!("{total} IDs checked, no duplicate");
}

/// One claim as a node's samples show it: the slot, and an interval
/// inside the time the node saw the claim usable.
#[derive(Debug, Clone, Copy)]
struct SeenClaim {
    node: &'static str,
    slot: u64,
    generation: u64,
    /// The first sample's answer: the claim was usable by then.
    from: Instant,
    /// The last sample's request: the claim was still usable then.
    until: Instant,
}

/// Every claim the samples show; panics if two nodes' claims of one slot
/// overlap.
fn check_claims(logs: &[(&'static str, NodeLog)]) -> Vec<SeenClaim> {
    let mut claims: Vec<SeenClaim> = Vec::new();
    for (name, log) in logs {
        let mut current: Option<SeenClaim> = None;
        for sample in &log.samples {
            match (sample.held, current.as_mut()) {
                (Some((slot, generation)), Some(claim))
                    if (claim.slot, claim.generation) == (slot, generation) =>
                {
                    claim.until = sample.sent;
                }
                (held, _) => {
                    claims.extend(current.take());
                    current = held.map(|(slot, generation)| SeenClaim {
                        node: name,
                        slot,
                        generation,
                        from: sample.received,
                        until: sample.sent,
                    });
                }
            }
        }
        claims.extend(current);
    }
    let start = claims.iter().map(|c| c.from).min();
    let at = |instant: Instant| start.map_or(0, |start| (instant - start).as_millis());
    for (i, first) in claims.iter().enumerate() {
        for second in &claims[i + 1..] {
            let overlap = first.slot == second.slot
                && first.node != second.node
                && first.from < second.until
                && second.from < first.until;
            assert!(
                !overlap,
                "slot {} was held by node {} (claim {}, {}..{} ms) and node {} (claim {}, {}..{} ms) at the same time",
                first.slot,
                first.node,
                first.generation,
                at(first.from),
                at(first.until),
                second.node,
                second.generation,
                at(second.from),
                at(second.until),
            );
        }
    }
    let mut per_slot: BTreeMap<u64, Vec<&str>> = BTreeMap::new();
    for claim in &claims {
        per_slot.entry(claim.slot).or_default().push(claim.node);
    }
    println!("claims seen per slot: {per_slot:?}");
    claims
}

/// Panics if a node issued an ID of a slot it was never seen holding.
fn check_ids_within_claims(logs: &[(&'static str, NodeLog)], claims: &[SeenClaim]) {
    for (name, log) in logs {
        for &id in &log.ids {
            let slot = (id >> 12) & 0x3ff;
            assert!(
                claims.iter().any(|c| c.node == *name && c.slot == slot),
                "node {name} issued {id} (slot {slot}) but was never seen holding slot {slot}"
            );
        }
    }
}

/// Checks that no node issued an ID stamped between `from_ms` and
/// `until_ms` (Unix ms): while no quorum could confirm any claim.
fn assert_none_stamped_between<R: Replicated>(run: &Run<R>, from_ms: i64, until_ms: i64) {
    for node in &run.nodes {
        let log = node.log.lock().unwrap();
        for &id in &log.ids {
            let stamped = timestamp_ms(id);
            assert!(
                stamped < from_ms || stamped > until_ms,
                "node {} issued {id}, stamped {stamped}, after every claim had run out ({from_ms}) and before the quorum came back ({until_ms})",
                node.name
            );
        }
    }
}

/// Kill -9 the leader: the nodes keep their claims, or fence themselves
/// and claim again through the two members left; the killed member,
/// restarted on its directory and ports, rejoins.
pub async fn kill_the_leader<R: Replicated>(binary: &str) -> Vec<Window> {
    let run = Run::<R>::start(binary, "kill the leader").await;
    let leader = run.cluster.leader().await;
    let fault = Instant::now();
    run.cluster.kill(leader);
    tokio::time::sleep(DWELL).await;
    run.wait_serving("two nodes to issue IDs through the members left")
        .await;
    let repair = Instant::now();
    run.cluster.restart(leader);
    run.cluster.wait_serving(leader).await;
    run.wait_serving("two nodes to issue IDs after the restart")
        .await;
    run.finish(fault, repair)
}

/// Kill -9 a follower: the same, with the leader in place.
pub async fn kill_a_follower<R: Replicated>(binary: &str) -> Vec<Window> {
    let run = Run::<R>::start(binary, "kill a follower").await;
    let follower = run.cluster.follower().await;
    let fault = Instant::now();
    run.cluster.kill(follower);
    tokio::time::sleep(DWELL).await;
    run.wait_serving("two nodes to issue IDs through the members left")
        .await;
    let repair = Instant::now();
    run.cluster.restart(follower);
    run.cluster.wait_serving(follower).await;
    run.wait_serving("two nodes to issue IDs after the restart")
        .await;
    run.finish(fault, repair)
}

/// SIGSTOP the member the first node's client uses, for longer than the
/// TTL: its connections stay open and say nothing. The nodes move to the
/// other members (or fence and claim again through them); after SIGCONT
/// everything serves.
pub async fn pause_the_member_in_use<R: Replicated>(binary: &str) -> Vec<Window> {
    let run = Run::<R>::start(binary, "pause the member in use").await;
    let member = run
        .first_node_proxies()
        .busiest(Duration::from_secs(1))
        .await;
    // The fault costs more on the leader (an election): say which it was.
    let role = run.cluster.role(member).await;
    println!("{} | {}: member {member}, {role:?}", R::NAME, run.scenario);
    let fault = Instant::now();
    run.cluster.pause(member);
    tokio::time::sleep(DWELL).await;
    run.wait_serving("two nodes to issue IDs while the member is stopped")
        .await;
    let repair = Instant::now();
    run.cluster.resume(member);
    run.cluster.wait_serving(member).await;
    run.wait_serving("two nodes to issue IDs after SIGCONT")
        .await;
    run.finish(fault, repair)
}

/// Cut the member the first node's client uses off from every node (the
/// proxies stop its bytes; the member itself runs and keeps its quorum):
/// the nodes reach the others.
pub async fn cut_a_member_off<R: Replicated>(binary: &str) -> Vec<Window> {
    let run = Run::<R>::start(binary, "cut a member off").await;
    let member = run
        .first_node_proxies()
        .busiest(Duration::from_secs(1))
        .await;
    // The fault costs more on the leader (an election): say which it was.
    let role = run.cluster.role(member).await;
    println!("{} | {}: member {member}, {role:?}", R::NAME, run.scenario);
    let fault = Instant::now();
    run.cut_everywhere(member);
    tokio::time::sleep(DWELL).await;
    run.wait_serving("two nodes to issue IDs with a member cut off")
        .await;
    let repair = Instant::now();
    run.heal_everywhere(member);
    run.wait_serving("two nodes to issue IDs after the heal")
        .await;
    run.finish(fault, repair)
}

/// Kill -9 two of the three members: no claim can be confirmed, so every
/// node fences itself within its TTL and issues nothing until the quorum
/// is back; restarted, the members elect a leader and the nodes claim
/// again.
pub async fn lose_the_quorum<R: Replicated>(binary: &str) -> Vec<Window> {
    let run = Run::<R>::start(binary, "lose the quorum").await;
    let leader = run.cluster.leader().await;
    let follower = run.cluster.follower().await;
    let fault = Instant::now();
    let fault_ms = now_ms();
    run.cluster.kill(follower);
    run.cluster.kill(leader);
    run.wait_all_refusing("every node to fence itself without a quorum")
        .await;
    tokio::time::sleep(DWELL).await;
    let repair = Instant::now();
    let repair_ms = now_ms();
    run.cluster.restart(leader);
    run.cluster.restart(follower);
    run.cluster.wait_serving(leader).await;
    run.cluster.wait_serving(follower).await;
    run.wait_serving("two nodes to claim and issue again once the quorum is back")
        .await;
    if R::NAME == "etcd" {
        // Without a quorum no node could revoke its lease when it gave its
        // session up, and the new leader renews every lease for a TTL: each
        // node revokes its old one as soon as it has a new session, so that
        // the old key does not keep its slot from the fleet meanwhile.
        for node in &run.nodes {
            let what = format!(
                "node {} to revoke the lease it could not revoke without a quorum",
                node.name
            );
            eventually(&what, LIMIT, || async {
                node.service
                    .log()
                    .contains("released the previous lease")
                    .then_some(())
            })
            .await;
        }
    }
    let ttl_ms = TTL.as_millis() as i64;
    assert_none_stamped_between(&run, fault_ms + ttl_ms, repair_ms);
    run.finish(fault, repair)
}
