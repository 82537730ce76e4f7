//! Claim storms: N claim engines started at once in one process, against
//! one real etcd, one real ZooKeeper and one real PostgreSQL server on
//! loopback ports (a fresh server for every run), claim TTL 10 s.
//!
//! ```sh
//! ulimit -n 65536    # 1,024 nodes need over 2,000 sockets (see below)
//! cargo bench -p snowmint-fleet --all-features --bench storm
//! cargo bench -p snowmint-fleet --all-features --bench storm -- --nodes 64,256 --backends etcd
//! cargo bench -p snowmint-fleet --all-features --bench storm -- --nodes 64,256,1024 --backends postgres
//! cargo bench -p snowmint-fleet --all-features --bench storm -- --nodes 256 --layouts twitter,sonyflake,baidu
//! ```
//!
//! `--layouts` runs each storm in each named layout (Twitter's by
//! default): the fleet's slots are the layout's node fields, 1,024 in
//! Twitter's, 65,536 in Sonyflake's, 4,194,304 in Baidu's, and a claim
//! should cost the same whatever their number.
//!
//! Each run, for one backend and one N:
//!
//! 1. **Claim.** N engines start together, each with its own holder value
//!    (host, pid, listen address, start time), all allowed every slot
//!    of the layout (0-1023 in Twitter's). Measured: the time from the start to each node's first
//!    `Active` state (p50, p99, max; the max is when all hold a slot), and
//!    that the N slots are distinct, in the engines and on the server.
//!    Every node, once it holds a slot, reserves the high-water mark a
//!    mark step (1 s) ahead every mark step, as a serving node would.
//! 2. **Hold** for 3 TTLs (30 s). Measured: claims lost (must be 0), and
//!    the steady load on the server per second: keep-alives, mark writes.
//! 3. **Release**, all at once. Measured: the time until every engine has
//!    released, and that no slot key is left.
//!
//! The coordinator's work is read from the server before and after each
//! phase: etcd's `/metrics` (`etcd_server_proposals_committed_total`, the
//! raft entries committed, and gRPC counters per method), ZooKeeper's
//! `mntr` (`zk_packets_received`, `zk_packets_sent`) and `srvr` (the zxid,
//! which counts write transactions), PostgreSQL's `pg_stat_statements`
//! (the statements the nodes ran, by kind; the server is started with it
//! loaded for the bench). The work per node of the claim phase
//! leaves out the mark writes that nodes holding a slot make while others
//! still claim (each one proposal, or one request): those are the steady
//! load, which the hold gives per second. Each node's first mark write is
//! counted in its claim. "Claim + release" is the two phases together,
//! without the hold.
//!
//! Every node holds a socket to the server, and the server one back:
//! 1,024 nodes need over 2,048 descriptors between the bench and the
//! server it starts (which inherits the limit). The bench checks the
//! limit at start and says what to run when it is too low.

use std::collections::{BTreeMap, BTreeSet};
use std::future::Future;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use snowmint::{Clock, Layout, SystemClock};
use snowmint_fleet::{Coordinator, CoordinatorConfig, Holder, NodeState, SlotRange, SlotSource};
use snowmint_test_support::servers::CoordinatorServer;
use snowmint_test_support::servers::etcd::EtcdServer;
use snowmint_test_support::servers::postgres::PostgresServer;
use snowmint_test_support::servers::zookeeper::ZooKeeperServer;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::task::JoinSet;

/// The claim TTL (lease TTL, session timeout).
const TTL: Duration = Duration::from_secs(10);
/// How far ahead, and how often, each node reserves the high-water mark.
const MARK_STEP: Duration = Duration::from_secs(1);
/// How long the fleet is held after it has claimed: 3 TTLs.
const HOLD: Duration = Duration::from_secs(30);
/// How long a storm may take to claim before the run gives up.
const CLAIM_LIMIT: Duration = Duration::from_secs(300);
/// How long the release may take before the run gives up.
const RELEASE_LIMIT: Duration = Duration::from_secs(120);
/// Descriptors needed besides one per node in the bench and one per node
/// in the server.
const SPARE_DESCRIPTORS: u64 = 512;

/// What the command line asks for.
struct Args {
    nodes: Vec<usize>,
    backends: Vec<String>,
    layouts: Vec<(String, Layout)>,
}

fn usage() -> ! {
    eprintln!(
        "usage: storm [--nodes N[,N...]] [--backends etcd,zookeeper,postgres] [--layouts NAME[,NAME...]]\n\
         (defaults: --nodes 64,256,1024 --backends etcd,zookeeper,postgres --layouts twitter)"
    );
    std::process::exit(2);
}

fn parse_args() -> Args {
    let mut args = Args {
        nodes: vec![64, 256, 1024],
        backends: vec!["etcd".into(), "zookeeper".into(), "postgres".into()],
        layouts: vec![("twitter".into(), Layout::TWITTER)],
    };
    let mut given = std::env::args().skip(1);
    while let Some(arg) = given.next() {
        match arg.as_str() {
            // cargo bench passes this to every bench binary.
            "--bench" => {}
            "--nodes" => {
                let value = given.next().unwrap_or_else(|| usage());
                args.nodes = value
                    .split(',')
                    .map(|n| match n.parse::<usize>() {
                        Ok(n @ 1..=1024) => n,
                        _ => {
                            eprintln!(
                                "--nodes: {n:?} is not a node count in 1..=1024 (the slots of the smallest layout, Twitter's)"
                            );
                            std::process::exit(2);
                        }
                    })
                    .collect();
            }
            "--backends" => {
                let value = given.next().unwrap_or_else(|| usage());
                args.backends = value.split(',').map(str::to_owned).collect();
                for backend in &args.backends {
                    if !["etcd", "zookeeper", "postgres"].contains(&backend.as_str()) {
                        eprintln!("--backends: {backend:?} is not etcd, zookeeper or postgres");
                        std::process::exit(2);
                    }
                }
            }
            "--layouts" => {
                let value = given.next().unwrap_or_else(|| usage());
                args.layouts = value
                    .split(',')
                    .map(|name| match name.parse::<Layout>() {
                        Ok(layout) if layout.is_mintable() => (name.to_owned(), layout),
                        Ok(_) => {
                            eprintln!("--layouts: {name:?} is read-only: its IDs cannot be minted");
                            std::process::exit(2);
                        }
                        Err(error) => {
                            eprintln!("--layouts: {error}");
                            std::process::exit(2);
                        }
                    })
                    .collect();
            }
            "-h" | "--help" => usage(),
            other => {
                eprintln!("unknown argument {other:?}");
                usage();
            }
        }
    }
    args
}

/// Exits with a clear message when the open-file limit cannot hold the
/// largest run's sockets.
fn check_descriptor_limit(nodes: usize) {
    let limits = std::fs::read_to_string("/proc/self/limits").unwrap_or_default();
    let soft = limits
        .lines()
        .find(|line| line.starts_with("Max open files"))
        .and_then(|line| line.split_whitespace().nth(3))
        .and_then(|soft| soft.parse::<u64>().ok());
    let needed = 2 * nodes as u64 + SPARE_DESCRIPTORS;
    if let Some(soft) = soft
        && soft < needed
    {
        eprintln!(
            "{nodes} nodes need about {needed} open files, but the limit is {soft}; \
             raise it first, e.g. `ulimit -n 65536`, and run the bench again"
        );
        std::process::exit(1);
    }
}

/// A server's counters, by name, as read at one instant.
type Counters = BTreeMap<&'static str, f64>;

/// A server whose work the bench can count.
trait Counted: CoordinatorServer {
    /// The counters, in the order the table shows them.
    const COUNTERS: &'static [&'static str];
    /// The counter that the per-node figure is about.
    const WORK: &'static str;

    fn counters(&self) -> impl Future<Output = Counters> + Send;
}

/// The body of an HTTP/1.0 GET or a four-letter ZooKeeper command sent to
/// `port` on loopback.
async fn ask(port: u16, request: &[u8]) -> String {
    let mut stream = TcpStream::connect(("127.0.0.1", port))
        .await
        .unwrap_or_else(|err| panic!("cannot reach the server on port {port}: {err}"));
    stream
        .write_all(request)
        .await
        .expect("cannot ask the server");
    let mut answer = String::new();
    stream
        .read_to_string(&mut answer)
        .await
        .expect("cannot read the server's answer");
    answer
}

/// The sum of every sample of `metric` in Prometheus text whose labels
/// contain `labels`.
fn metric_sum(text: &str, metric: &str, labels: &str) -> f64 {
    text.lines()
        .filter(|line| !line.starts_with('#'))
        .filter_map(|line| {
            let (name, value) = line.rsplit_once(' ')?;
            let bare = name.split('{').next()?;
            (bare == metric && name.contains(labels)).then(|| value.parse::<f64>().ok())?
        })
        .sum()
}

impl Counted for EtcdServer {
    const COUNTERS: &'static [&'static str] = &[
        "proposals",
        "lease grants",
        "keep-alives",
        "txns",
        "ranges",
        "revokes",
    ];
    const WORK: &'static str = "proposals";

    async fn counters(&self) -> Counters {
        let text = ask(
            self.client_addr().port(),
            b"GET /metrics HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n",
        )
        .await;
        let handled = |method: &str| {
            metric_sum(
                &text,
                "grpc_server_handled_total",
                &format!("grpc_method=\"{method}\""),
            )
        };
        BTreeMap::from([
            (
                "proposals",
                metric_sum(&text, "etcd_server_proposals_committed_total", ""),
            ),
            ("lease grants", handled("LeaseGrant")),
            (
                "keep-alives",
                metric_sum(
                    &text,
                    "grpc_server_msg_received_total",
                    "grpc_method=\"LeaseKeepAlive\"",
                ),
            ),
            ("txns", handled("Txn")),
            ("ranges", handled("Range")),
            ("revokes", handled("LeaseRevoke")),
        ])
    }
}

impl Counted for ZooKeeperServer {
    const COUNTERS: &'static [&'static str] = &["packets received", "packets sent", "writes"];
    const WORK: &'static str = "packets received";

    async fn counters(&self) -> Counters {
        let port = self.client_addr().port();
        let mntr = ask(port, b"mntr").await;
        let value = |key: &str| {
            mntr.lines()
                .find_map(|line| line.strip_prefix(key)?.trim().parse::<f64>().ok())
                .unwrap_or_else(|| panic!("no {key} in ZooKeeper's mntr answer:\n{mntr}"))
        };
        let srvr = ask(port, b"srvr").await;
        let zxid = srvr
            .lines()
            .find_map(|line| line.strip_prefix("Zxid: 0x"))
            .and_then(|hex| u64::from_str_radix(hex.trim(), 16).ok())
            .unwrap_or_else(|| panic!("no zxid in ZooKeeper's srvr answer:\n{srvr}"));
        BTreeMap::from([
            ("packets received", value("zk_packets_received")),
            ("packets sent", value("zk_packets_sent")),
            // The low 32 bits count transactions within the leader's epoch,
            // which a single server never changes.
            ("writes", (zxid & 0xffff_ffff) as f64),
        ])
    }
}

impl Counted for PostgresServer {
    const COUNTERS: &'static [&'static str] = &[
        "statements",
        "claims",
        "keep-alives",
        "mark writes",
        "listings",
    ];
    const WORK: &'static str = "statements";

    async fn counters(&self) -> Counters {
        let admin = self.admin().await;
        admin
            .batch_execute("CREATE EXTENSION IF NOT EXISTS pg_stat_statements")
            .await
            .expect("cannot create pg_stat_statements");
        // Every call of a statement on the fleet's tables (and of the
        // keep-alive without a slot), by its text.
        let rows = admin
            .query(
                "SELECT query, calls::float8 FROM pg_stat_statements \
                 WHERE query LIKE '%snowmint.%' OR query = 'SELECT now()'",
                &[],
            )
            .await
            .expect("cannot read pg_stat_statements (is it in shared_preload_libraries?)");
        let mut counters: Counters = Self::COUNTERS.iter().map(|name| (*name, 0.0)).collect();
        for row in rows {
            let query: String = row.get(0);
            let calls: f64 = row.get(1);
            if query.contains("pg_stat_statements") {
                continue;
            }
            *counters.get_mut("statements").unwrap() += calls;
            let kind = if query.starts_with("INSERT INTO snowmint.slots") {
                "claims"
            } else if query.starts_with("UPDATE snowmint.slots") {
                "keep-alives"
            } else if query.starts_with("WITH owner") {
                "mark writes"
            } else if query.starts_with("SELECT slot FROM snowmint.slots") {
                "listings"
            } else {
                continue;
            };
            *counters.get_mut(kind).unwrap() += calls;
        }
        counters
    }
}

fn delta(after: &Counters, before: &Counters, name: &str) -> f64 {
    after[name] - before[name]
}

/// The holder value of node `n`, as a service would write it.
fn holder(n: usize, started_ms: i64) -> String {
    Holder {
        host: "storm".into(),
        pid: std::process::id(),
        listen: format!("127.0.0.1:{}", 20_000 + n),
        grpc: None,
        started_ms,
    }
    .to_string()
}

/// What the nodes of a run share with the bench.
#[derive(Default)]
struct Progress {
    /// When each node first held a slot, from the start.
    claimed: Mutex<Vec<Duration>>,
    /// Mark writes after each node's first, made while others still claim:
    /// the steady load, not the claims' cost.
    steady_writes: AtomicU64,
    /// Set once every node has claimed.
    all_claimed: AtomicBool,
}

/// Waits for the engine's first claim, then reserves the mark a step
/// ahead every step, as a serving node does.
async fn serve<S: SlotSource>(engine: Arc<S>, started: Instant, progress: Arc<Progress>) {
    let mut states = engine.state();
    if states
        .wait_for(|state| matches!(state, NodeState::Active(_)))
        .await
        .is_err()
    {
        return;
    }
    progress.claimed.lock().unwrap().push(started.elapsed());
    let step_ms = i64::try_from(MARK_STEP.as_millis()).unwrap();
    let mut every = tokio::time::interval(MARK_STEP);
    every.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let mut first = true;
    loop {
        every.tick().await;
        let claim = states.borrow().claim_at(Instant::now()).cloned();
        if let Some(claim) = claim {
            if !first && !progress.all_claimed.load(Ordering::SeqCst) {
                progress.steady_writes.fetch_add(1, Ordering::SeqCst);
            }
            first = false;
            // A refusal (fenced in between) shows as a lost claim.
            let _ = engine
                .reserve(claim.generation, SystemClock.now_ms() + step_ms)
                .await;
        }
    }
}

/// The claim time at quantile `q` of `nodes` nodes, from the sorted
/// `times` of those that claimed, in seconds; `None` when that node never
/// claimed.
fn quantile(times: &[Duration], nodes: usize, q: f64) -> Option<f64> {
    let at = ((nodes - 1) as f64 * q).round() as usize;
    times.get(at).map(Duration::as_secs_f64)
}

fn seconds(time: Option<f64>) -> String {
    time.map_or_else(
        || format!("> {}", CLAIM_LIMIT.as_secs()),
        |time| format!("{time:.2}"),
    )
}

/// One run's figures, as a table row.
struct Row {
    layout: String,
    slots: u64,
    backend: &'static str,
    nodes: usize,
    claimed: usize,
    holding: usize,
    p50: Option<f64>,
    p99: Option<f64>,
    max: Option<f64>,
    per_node_claim: f64,
    per_node_release: f64,
    lost: u64,
    lost_claiming: u64,
    hold_rates: Vec<(&'static str, f64)>,
    release_s: f64,
    left: usize,
}

async fn run<C: Counted>(nodes: usize, (name, layout): &(String, Layout)) -> Row {
    let layout = *layout;
    let server = C::start().await;
    let fleet = format!("storm-{nodes}");
    let started_ms = SystemClock.now_ms();
    let configs: Vec<CoordinatorConfig> = (0..nodes)
        .map(|n| {
            CoordinatorConfig::new(
                &fleet,
                SlotRange::all(layout),
                TTL,
                holder(n, started_ms),
                layout,
            )
            .expect("valid settings")
        })
        .collect();
    let before = server.counters().await;

    // 1. Claim.
    let progress = Arc::new(Progress::default());
    let started = Instant::now();
    let engines: Vec<Arc<Coordinator<C::Backend>>> = configs
        .into_iter()
        .map(|config| {
            Arc::new(
                Coordinator::start(server.backend(server.client_addr()), config)
                    .expect("inside a runtime"),
            )
        })
        .collect();
    let mut servers = JoinSet::new();
    for engine in &engines {
        servers.spawn(serve(engine.clone(), started, progress.clone()));
    }
    while progress.claimed.lock().unwrap().len() < nodes && started.elapsed() < CLAIM_LIMIT {
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    progress.all_claimed.store(true, Ordering::SeqCst);
    let mut times = progress.claimed.lock().unwrap().clone();
    times.sort();
    let after_claim = server.counters().await;
    // Each steady mark write is one proposal (etcd) or one request
    // (ZooKeeper), the same either way.
    let steady_writes = progress.steady_writes.load(Ordering::SeqCst) as f64;
    if times.len() < nodes {
        eprintln!(
            "{}: only {} of {nodes} nodes held a slot after {CLAIM_LIMIT:?}",
            C::NAME,
            times.len()
        );
    }
    let held: Vec<u64> = engines.iter().filter_map(|e| e.status().slot).collect();
    let slots: BTreeSet<u64> = held.iter().copied().collect();
    assert_eq!(
        slots.len(),
        held.len(),
        "two engines hold the same slot ({} distinct slots, {} holders)",
        slots.len(),
        held.len()
    );
    let on_server = server.slot_holders(&fleet).await;
    if on_server.len() != slots.len() {
        eprintln!(
            "{}: the server has {} slot keys, the engines hold {} slots",
            C::NAME,
            on_server.len(),
            slots.len()
        );
    }
    for engine in &engines {
        if let NodeState::Fenced { reason } = &*engine.state().borrow() {
            eprintln!("{}: a node is fenced after the claim: {reason}", C::NAME);
        }
    }
    let lost_claiming: u64 = engines.iter().map(|engine| engine.status().losses).sum();

    // 2. Hold.
    let hold_from = server.counters().await;
    tokio::time::sleep(HOLD).await;
    let hold_to = server.counters().await;
    let mut reasons = BTreeMap::<String, usize>::new();
    for engine in &engines {
        if let NodeState::Fenced { reason } = &*engine.state().borrow() {
            // Without the numbers that differ per node.
            let shape: String = reason
                .chars()
                .map(|c| if c.is_ascii_hexdigit() { '#' } else { c })
                .collect();
            *reasons.entry(shape).or_default() += 1;
        }
    }
    for (reason, count) in reasons {
        eprintln!(
            "{}: {count} nodes fenced at the end of the hold: {reason}",
            C::NAME
        );
    }
    let lost: u64 = engines
        .iter()
        .map(|engine| engine.status().losses)
        .sum::<u64>()
        - lost_claiming;
    let hold_rates = C::COUNTERS
        .iter()
        .map(|name| {
            (
                *name,
                delta(&hold_to, &hold_from, name) / HOLD.as_secs_f64(),
            )
        })
        .collect();

    // 3. Release, all at once.
    servers.abort_all();
    while servers.join_next().await.is_some() {}
    let before_release = server.counters().await;
    let releasing = Instant::now();
    let mut releases = JoinSet::new();
    for engine in engines {
        releases.spawn(async move { engine.release().await });
    }
    let all = async { while releases.join_next().await.is_some() {} };
    if tokio::time::timeout(RELEASE_LIMIT, all).await.is_err() {
        eprintln!("{}: the release took over {RELEASE_LIMIT:?}", C::NAME);
    }
    let release_s = releasing.elapsed().as_secs_f64();
    let after_release = server.counters().await;
    let left = server.slot_holders(&fleet).await.len();

    let per_node =
        |after: &Counters, before: &Counters| delta(after, before, C::WORK) / nodes as f64;
    Row {
        layout: name.clone(),
        slots: layout.node_count(),
        backend: C::NAME,
        nodes,
        claimed: times.len(),
        holding: held.len(),
        p50: quantile(&times, nodes, 0.5),
        p99: quantile(&times, nodes, 0.99),
        max: quantile(&times, nodes, 1.0),
        per_node_claim: per_node(&after_claim, &before) - steady_writes / nodes as f64,
        per_node_release: per_node(&after_release, &before_release),
        lost,
        lost_claiming,
        hold_rates,
        release_s,
        left,
    }
}

fn print_table(rows: &[Row]) {
    println!(
        "| layout | slots | backend | nodes | all hold distinct slots | claim p50 s | p99 s | max s | work per node: claim | release | claim + release | claims lost while claiming | in 3 TTLs after | steady load per s (hold) | release s | keys left |"
    );
    println!("|---|--:|---|--:|---|--:|--:|--:|--:|--:|--:|--:|--:|---|--:|--:|");
    for row in rows {
        let unit = match row.backend {
            "etcd" => "proposals",
            "PostgreSQL" => "statements",
            _ => "packets in",
        };
        let load: Vec<String> = row
            .hold_rates
            .iter()
            .map(|(name, rate)| format!("{name} {rate:.0}"))
            .collect();
        println!(
            "| {} | {} | {} | {} | {} | {} | {} | {} | {:.1} {unit} | {:.1} | {:.1} | {} | {} | {} | {:.2} | {} |",
            row.layout,
            row.slots,
            row.backend,
            row.nodes,
            if row.claimed == row.nodes {
                "yes".to_owned()
            } else {
                format!(
                    "no: {} claimed in {} s, {} held then",
                    row.claimed,
                    CLAIM_LIMIT.as_secs(),
                    row.holding
                )
            },
            seconds(row.p50),
            seconds(row.p99),
            seconds(row.max),
            row.per_node_claim,
            row.per_node_release,
            row.per_node_claim + row.per_node_release,
            row.lost_claiming,
            row.lost,
            load.join(", "),
            row.release_s,
            row.left,
        );
    }
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let args = parse_args();
    check_descriptor_limit(args.nodes.iter().copied().max().unwrap_or(0));
    let load = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    println!(
        "claim TTL {TTL:?}, mark step {MARK_STEP:?}, hold {HOLD:?}; load average at start: {}",
        load.split_whitespace()
            .take(3)
            .collect::<Vec<_>>()
            .join(" ")
    );
    let mut rows = Vec::new();
    for backend in &args.backends {
        for layout in &args.layouts {
            for &nodes in &args.nodes {
                let row = match backend.as_str() {
                    "etcd" => run::<EtcdServer>(nodes, layout).await,
                    "postgres" => run::<PostgresServer>(nodes, layout).await,
                    _ => run::<ZooKeeperServer>(nodes, layout).await,
                };
                eprintln!(
                    "{} x {nodes} in {}: all claimed in {} s, {:.1} per node",
                    row.backend,
                    row.layout,
                    seconds(row.max),
                    row.per_node_claim
                );
                rows.push(row);
            }
        }
    }
    let load = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    println!(
        "load average at the end: {}",
        load.split_whitespace()
            .take(3)
            .collect::<Vec<_>>()
            .join(" ")
    );
    print_table(&rows);
}
