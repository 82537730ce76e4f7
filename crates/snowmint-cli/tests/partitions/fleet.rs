//! One run: a partition network, a coordinator on its members' hosts,
//! `snowmint serve` nodes each on a host of its own, and a client host
//! per node whose threads pull IDs from it and record every answer.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, RwLock};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use serde_json::Value;
use snowmint_test_support::binary::Service;
use snowmint_test_support::faketime::libfaketime;
use snowmint_test_support::history::{self, Findings, History, Receipt, Server};
use snowmint_test_support::http::Connection;
use snowmint_test_support::partition::{Host, Network};
use snowmint_test_support::rng::Rng;
use snowmint_test_support::temp::{TempDir, temp_dir};
use snowmint_test_support::wait::eventually;

use crate::LIMIT;
use crate::coordinator::Placed;

/// The port every node listens on, at its host's address.
pub const NODE_PORT: u16 = 8080;

/// The batch sizes the clients ask for.
const COUNTS: [u32; 4] = [1, 4, 16, 64];

/// How a node's clock runs.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Clock {
    /// The machine's.
    Real,
    /// Under libfaketime at `rate` of real time, its monotonic clock,
    /// sleeps and timeouts too (`FAKETIME="+0 xRATE"`): a clock that runs
    /// slow or fast.
    Rate(f64),
    /// Under libfaketime, its wall clock set off by the offset file the
    /// test writes ([`Run::step_clock`]); timers and deadlines keep real
    /// time.
    Steps,
}

/// What every node of a run is started with.
#[derive(Debug, Clone)]
pub struct Settings {
    /// The fleet's name.
    pub fleet: &'static str,
    /// The slots the nodes share.
    pub slots: &'static str,
    /// The claim TTL, as the flag takes it.
    pub ttl: &'static str,
    /// More flags for every node.
    pub extra: Vec<&'static str>,
}

impl Settings {
    /// Two slots for three nodes (one always waits), TTL 2 s, the clock
    /// checked every second, every claim's record kept.
    pub fn new(fleet: &'static str) -> Settings {
        Settings {
            fleet,
            slots: "0-1",
            ttl: "2s",
            extra: Vec::new(),
        }
    }
}

/// One node: a host, its clients' host, a state directory that outlives
/// its processes.
pub struct Node {
    /// `n0`, `n1`, ...
    pub label: String,
    /// Where it runs.
    pub host: Host,
    /// Where its clients run.
    pub client_host: Host,
    state_dir: PathBuf,
    clock: Clock,
    /// libfaketime's offset file, with [`Clock::Steps`].
    clock_file: PathBuf,
    /// Its process now, and its index among the history's servers.
    service: Option<(usize, Service)>,
}

/// Which process answers for each node now: what the clients read.
type Directory = Arc<Vec<RwLock<Option<(usize, SocketAddr)>>>>;

/// What the clients saw besides IDs.
#[derive(Debug, Default, Clone, Copy)]
pub struct Counts {
    /// 503 answers (the node may not issue now).
    pub refusals: u64,
    /// Requests with no answer (the node was killed, or a connection
    /// broke).
    pub broken: u64,
}

/// What a client returns: its answers, its counts, the answers that
/// break the API.
type ClientLog = (Vec<Receipt>, Counts, Vec<String>);

/// A run: everything is stopped and removed when dropped.
pub struct Run<C: Placed> {
    /// The coordinator.
    pub coordinator: C,
    /// The nodes.
    pub nodes: Vec<Node>,
    /// The coordinator's members' hosts.
    pub members: Vec<Host>,
    binary: &'static str,
    settings: Settings,
    directory: Directory,
    history: Arc<Mutex<History>>,
    stop: Arc<AtomicBool>,
    clients: Vec<JoinHandle<ClientLog>>,
    /// When the run began: the clients' times count from here.
    pub started: Instant,
    home: TempDir,
    /// Declared last: dropped after every process on its hosts.
    pub network: Network,
}

impl<C: Placed> Run<C> {
    /// A network with `members` coordinator hosts (`c0`...), the
    /// coordinator on them, and one host per node of `clocks` (`n0`...)
    /// with a client host each (`k0`...); no node started yet.
    pub async fn new(
        binary: &'static str,
        label: &str,
        members: usize,
        clocks: &[Clock],
        settings: Settings,
    ) -> Run<C> {
        let network = Network::new(label);
        let member_hosts: Vec<Host> = (0..members)
            .map(|m| network.host(&format!("c{m}")))
            .collect();
        let coordinator = C::start_on(&member_hosts).await;
        let home = temp_dir(&format!("partitions-{label}"));
        let nodes: Vec<Node> = clocks
            .iter()
            .enumerate()
            .map(|(index, clock)| {
                let clock_file = home.path().join(format!("clock-n{index}"));
                write_offset(&clock_file, 0);
                Node {
                    label: format!("n{index}"),
                    host: network.host(&format!("n{index}")),
                    client_host: network.host(&format!("k{index}")),
                    state_dir: home.path().join(format!("state-n{index}")),
                    clock: *clock,
                    clock_file,
                    service: None,
                }
            })
            .collect();
        let directory = Arc::new(nodes.iter().map(|_| RwLock::new(None)).collect());
        Run {
            coordinator,
            nodes,
            members: member_hosts,
            binary,
            settings,
            directory,
            history: Arc::default(),
            stop: Arc::new(AtomicBool::new(false)),
            clients: Vec::new(),
            started: Instant::now(),
            home,
            network,
        }
    }

    /// Starts a process for `node` with its clock running as `clock`
    /// from now on (killing the one before, if any).
    pub fn start_with(&mut self, node: usize, clock: Clock) {
        self.nodes[node].clock = clock;
        self.start(node);
    }

    /// How `node`'s clock runs.
    pub fn clock(&self, node: usize) -> Clock {
        self.nodes[node].clock
    }

    /// Whether `node` has a process now.
    pub fn runs(&self, node: usize) -> bool {
        self.nodes[node].service.is_some()
    }

    /// What `node`'s current process logged so far.
    pub fn log(&self, node: usize) -> String {
        self.nodes[node]
            .service
            .as_ref()
            .map(|(_, service)| service.log())
            .unwrap_or_default()
    }

    /// Starts a process for `node` (killing the one before, if any).
    pub fn start(&mut self, node: usize) {
        self.kill(node);
        let url = self.coordinator.node_url();
        let entry = &self.nodes[node];
        let state_dir = entry.state_dir.display().to_string();
        let mut args = vec![
            "--coordinator",
            &url,
            "--fleet",
            self.settings.fleet,
            "--slots",
            self.settings.slots,
            "--claim-ttl",
            self.settings.ttl,
            "--state-dir",
            &state_dir,
            "--clock-check-every",
            "1s",
            // Every claim's record kept, for the checker.
            "--claim-history-keep",
            "1000",
        ];
        args.extend(self.settings.extra.iter().copied());
        let preload = libfaketime().display().to_string();
        let clock_file = entry.clock_file.display().to_string();
        let rate = match entry.clock {
            Clock::Rate(rate) => format!("+0 x{rate}"),
            _ => String::new(),
        };
        let env: Vec<(&str, &str)> = match entry.clock {
            Clock::Real => Vec::new(),
            Clock::Rate(_) => vec![("LD_PRELOAD", &preload), ("FAKETIME", &rate)],
            Clock::Steps => vec![
                ("LD_PRELOAD", &preload),
                ("FAKETIME_TIMESTAMP_FILE", &clock_file),
                ("FAKETIME_NO_CACHE", "1"),
                ("FAKETIME_DONT_FAKE_MONOTONIC", "1"),
                ("DONT_FAKE_MONOTONIC", "1"),
            ],
        };
        let service = Service::start_on(
            &entry.host,
            NODE_PORT,
            self.binary,
            self.home.path(),
            &args,
            &env,
        );
        let server = self.history.lock().unwrap().server(Server {
            node: entry.label.clone(),
            pid: service.pid(),
            listen: service.address.to_string(),
        });
        *self.directory[node].write().unwrap() = Some((server, service.address));
        self.nodes[node].service = Some((server, service));
    }

    /// kill -9 `node`'s process, if it runs.
    pub fn kill(&mut self, node: usize) {
        *self.directory[node].write().unwrap() = None;
        if let Some((_, service)) = self.nodes[node].service.take() {
            service.kill();
        }
    }

    /// Sets `node`'s wall clock `offset_ms` off real time ([`Clock::Steps`]).
    pub fn step_clock(&self, node: usize, offset_ms: i64) {
        write_offset(&self.nodes[node].clock_file, offset_ms);
    }

    /// `node`'s `/v1/node`, asked from its own host (no cut is in the
    /// way).
    pub fn node_report(&self, node: usize) -> Value {
        let (_, service) = self.nodes[node]
            .service
            .as_ref()
            .unwrap_or_else(|| panic!("node {node} does not run"));
        service.json("/v1/node")
    }

    /// The slot `node` holds now, if it holds one and is ready.
    pub fn held(&self, node: usize) -> Option<u64> {
        let report = self.node_report(node);
        let coordinator = &report["coordinator"];
        (coordinator["state"] == "held" && report["ready"] == true)
            .then(|| coordinator["slot"].as_u64())
            .flatten()
    }

    /// Waits until `node` holds a slot; returns it.
    pub async fn wait_held(&self, node: usize) -> u64 {
        let what = format!("node {} to hold a slot", self.nodes[node].label);
        eventually(&what, LIMIT, || async { self.held(node) }).await
    }

    /// Waits until `node` is fenced with a reason that says `why`;
    /// returns the reason.
    pub async fn wait_fenced(&self, node: usize, why: &str) -> String {
        let what = format!("node {} to be fenced for {why:?}", self.nodes[node].label);
        eventually(&what, LIMIT, || async {
            let report = self.node_report(node);
            let reason = report["reason"].as_str().unwrap_or_default();
            (report["ready"] == false && reason.contains(why)).then(|| reason.to_owned())
        })
        .await
    }

    /// Starts `per_node` clients for every node, each a thread on the
    /// node's client host, with batch sizes drawn from `seed`; pausing
    /// `pause` between requests.
    pub fn start_clients(&mut self, per_node: usize, seed: u64, pause: Duration) {
        for (node, entry) in self.nodes.iter().enumerate() {
            for client in 0..per_node {
                let number = node * per_node + client;
                let host = entry.client_host.clone();
                let directory = Arc::clone(&self.directory);
                let stop = Arc::clone(&self.stop);
                let rng = Rng::new(seed ^ (number as u64 + 1).wrapping_mul(0x9e37_79b9));
                let started = self.started;
                self.clients.push(std::thread::spawn(move || {
                    host.enter().expect("a client thread enters its host");
                    pull(number, node, &directory, &stop, rng, started, pause)
                }));
            }
        }
    }

    /// Stops the clients; every answer they got, and the refusals, broken
    /// requests and wrong answers.
    pub fn stop_clients(&mut self) -> (History, Counts) {
        self.stop.store(true, Ordering::Relaxed);
        let mut history = self.history.lock().unwrap().clone();
        let mut counts = Counts::default();
        let mut wrong = Vec::new();
        for client in self.clients.drain(..) {
            let (receipts, seen, mistakes) = client.join().expect("a client panicked");
            history.receipts.extend(receipts);
            counts.refusals += seen.refusals;
            counts.broken += seen.broken;
            wrong.extend(mistakes);
        }
        assert!(
            wrong.is_empty(),
            "answers that break the API: {}",
            wrong.join("\n")
        );
        (history, counts)
    }

    /// Checks `history` against the fleet's claim history, read now.
    pub async fn check(&self, history: &History) -> Findings {
        let claims = self.coordinator.history(self.settings.fleet).await;
        assert!(
            claims.unreadable.is_empty(),
            "unreadable histories: {:?}",
            claims.unreadable
        );
        history::check(history, &claims)
    }

    /// The run's directory (state, every process's log).
    pub fn home(&self) -> &Path {
        self.home.path()
    }
}

impl<C: Placed> Drop for Run<C> {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        for client in self.clients.drain(..) {
            let _ = client.join();
        }
    }
}

/// Writes libfaketime's offset file: seconds with decimals, replaced in
/// one rename so that a reader never sees half of it.
fn write_offset(file: &Path, offset_ms: i64) {
    let text = format!("{:+.3}\n", offset_ms as f64 / 1000.0);
    let partial = file.with_extension("partial");
    std::fs::write(&partial, text).expect("cannot write the clock offset");
    std::fs::rename(&partial, file).expect("cannot replace the clock offset");
}

/// One client's loop: ask `node`'s current process for a batch, again and
/// again, following it to its next process after a restart.
fn pull(
    client: usize,
    node: usize,
    directory: &Directory,
    stop: &AtomicBool,
    mut rng: Rng,
    started: Instant,
    pause: Duration,
) -> ClientLog {
    let mut receipts = Vec::new();
    let mut counts = Counts::default();
    let mut wrong = Vec::new();
    let mut connection: Option<(usize, Connection)> = None;
    let since = |at: Instant| at.duration_since(started).as_micros() as u64;
    while !stop.load(Ordering::Relaxed) {
        let current = *directory[node].read().unwrap();
        let Some((server, address)) = current else {
            connection = None;
            std::thread::sleep(Duration::from_millis(5));
            continue;
        };
        if connection.as_ref().is_none_or(|(s, _)| *s != server) {
            connection = Connection::open(address).ok().map(|c| (server, c));
        }
        let Some((_, open)) = connection.as_mut() else {
            counts.broken += 1;
            std::thread::sleep(Duration::from_millis(5));
            continue;
        };
        let count = *rng.pick(&COUNTS);
        let target = format!("/v1/ids?count={count}");
        let sent = Instant::now();
        let answer = open.get(&target);
        let received = Instant::now();
        match answer {
            Err(_) => {
                counts.broken += 1;
                connection = None;
                std::thread::sleep(Duration::from_millis(5));
            }
            Ok(response) if response.status == 200 => {
                match parse_ids(&response.body, count) {
                    Ok(ids) => receipts.push(Receipt {
                        client,
                        server,
                        sent_us: since(sent),
                        received_us: since(received),
                        ids,
                    }),
                    Err(why) => {
                        wrong.push(format!("node {node} {target}: {why}: {}", response.body))
                    }
                }
                std::thread::sleep(pause);
            }
            Ok(response) if response.status == 503 => {
                counts.refusals += 1;
                std::thread::sleep(Duration::from_millis(10));
            }
            Ok(response) => {
                wrong.push(format!(
                    "node {node} {target}: status {}: {}",
                    response.status, response.body
                ));
                std::thread::sleep(Duration::from_millis(10));
            }
        }
    }
    (receipts, counts, wrong)
}

/// The IDs of a `/v1/ids` body (`{"ids":["1","2"]}`), `count` of them.
fn parse_ids(body: &str, count: u32) -> Result<Vec<u64>, String> {
    let value: Value = serde_json::from_str(body).map_err(|error| error.to_string())?;
    let ids = value["ids"].as_array().ok_or("no ids")?;
    let ids: Vec<u64> = ids
        .iter()
        .map(|id| id.as_str().and_then(|text| text.parse().ok()))
        .collect::<Option<_>>()
        .ok_or("an ID that is not a decimal string")?;
    if ids.len() != count as usize {
        return Err(format!("{} IDs, not {count}", ids.len()));
    }
    Ok(ids)
}
