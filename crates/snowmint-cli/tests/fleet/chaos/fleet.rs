//! The nodes of the run (real `snowmint serve` processes, each behind its
//! own proxies to the coordinator members, each clock under libfaketime)
//! and the clients that pull IDs from them.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, RwLock};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use snowmint_test_support::binary::{Service, now_ms};
use snowmint_test_support::faketime::libfaketime;
use snowmint_test_support::http::Connection;
use snowmint_test_support::temp::TempDir;

use super::check::{Batch, slot_of};
use snowmint_test_support::rng::Rng;

/// What every node is started with, besides its coordinator URL.
pub(super) struct NodeSettings {
    /// The fleet's name under the coordinator.
    pub fleet: &'static str,
    /// The slots the nodes share, `A-B`.
    pub slots: String,
    /// The claim TTL, as the flag takes it.
    pub ttl: String,
}

/// One node: a state directory and a clock that outlive its processes.
struct Node {
    /// The `--coordinator` URL, through this node's own proxies.
    url: String,
    state_dir: PathBuf,
    /// libfaketime's offset file for this node's processes.
    clock_file: PathBuf,
    /// The running process, if any, and its number.
    service: Option<(u32, Service)>,
}

/// Every process ever started, for the report and for a failure's logs.
pub(super) struct Started {
    pub node: usize,
    pub process: u32,
    pub pid: u32,
    pub log: PathBuf,
}

/// Which process answers for each node now: what the clients read.
pub(super) type Directory = Arc<Vec<RwLock<Option<(u32, SocketAddr)>>>>;

/// The nodes of the run.
pub(super) struct Fleet {
    binary: String,
    home: TempDir,
    settings: NodeSettings,
    libfaketime: PathBuf,
    nodes: Vec<Node>,
    directory: Directory,
    next_process: u32,
    pub(super) started: Vec<Started>,
}

impl Fleet {
    /// The nodes, one per URL (none started yet), in `home`.
    pub(super) fn new(
        binary: &str,
        home: TempDir,
        settings: NodeSettings,
        urls: Vec<String>,
    ) -> Fleet {
        let libfaketime = libfaketime();
        let nodes: Vec<Node> = urls
            .into_iter()
            .enumerate()
            .map(|(index, url)| {
                let clock_file = home.path().join(format!("clock-{index}"));
                write_offset(&clock_file, 0);
                Node {
                    url,
                    state_dir: home.path().join(format!("state-{index}")),
                    clock_file,
                    service: None,
                }
            })
            .collect();
        let directory = Arc::new(nodes.iter().map(|_| RwLock::new(None)).collect());
        Fleet {
            binary: binary.to_owned(),
            home,
            settings,
            libfaketime,
            nodes,
            directory,
            next_process: 1,
            started: Vec::new(),
        }
    }

    /// How many nodes.
    pub(super) fn len(&self) -> usize {
        self.nodes.len()
    }

    /// Where the clients find each node's current process.
    pub(super) fn directory(&self) -> Directory {
        Arc::clone(&self.directory)
    }

    /// The run's directory (state, clocks, every process's log).
    pub(super) fn home(&self) -> &Path {
        self.home.path()
    }

    /// Keeps the run's directory after the test, and says where it is.
    pub(super) fn keep_home(self) -> PathBuf {
        self.home.keep()
    }

    /// Starts a process for `node`, its clock `clock_back_ms` behind the
    /// node's clock; returns its number.
    pub(super) fn start(&mut self, node: usize, clock_back_ms: u64) -> u32 {
        let process = self.next_process;
        self.next_process += 1;
        let entry = &self.nodes[node];
        let offset = format!("-{clock_back_ms}");
        let state_dir = entry.state_dir.display().to_string();
        let mut args = vec![
            "--coordinator",
            &entry.url,
            "--fleet",
            self.settings.fleet,
            "--slots",
            &self.settings.slots,
            "--claim-ttl",
            &self.settings.ttl,
            "--state-dir",
            &state_dir,
            // The faults set clocks seconds apart on purpose, to test what
            // the marks do then; the clock check would keep those nodes
            // from claiming at all.
            "--max-clock-skew",
            "off",
        ];
        if clock_back_ms > 0 {
            args.extend_from_slice(&["--clock-offset-ms", &offset]);
        }
        let preload = self.libfaketime.display().to_string();
        let clock_file = entry.clock_file.display().to_string();
        let env = [
            ("LD_PRELOAD", preload.as_str()),
            ("FAKETIME_TIMESTAMP_FILE", clock_file.as_str()),
            // Read the offset file at every clock reading, so that a step
            // takes effect at once.
            ("FAKETIME_NO_CACHE", "1"),
            // Only the wall clock moves: timers, timeouts and the claim's
            // deadline (all monotonic) keep real time.
            ("FAKETIME_DONT_FAKE_MONOTONIC", "1"),
            ("DONT_FAKE_MONOTONIC", "1"),
        ];
        let service = Service::start(&self.binary, self.home.path(), &args, &env);
        self.started.push(Started {
            node,
            process,
            pid: service.pid(),
            log: service.log_path().to_owned(),
        });
        *self.directory[node].write().unwrap() = Some((process, service.address));
        self.nodes[node].service = Some((process, service));
        process
    }

    /// kill -9 `node`'s process and reap it.
    pub(super) fn kill(&mut self, node: usize) {
        *self.directory[node].write().unwrap() = None;
        if let Some((_, service)) = self.nodes[node].service.take() {
            service.kill();
        }
    }

    /// Sends `signal` (`STOP`, `CONT`) to `node`'s process.
    pub(super) fn signal(&self, node: usize, signal: &str) {
        let (_, service) = self.nodes[node]
            .service
            .as_ref()
            .unwrap_or_else(|| panic!("node {node} has no process to send SIG{signal}"));
        let sent = Command::new("kill")
            .arg(format!("-{signal}"))
            .arg(service.pid().to_string())
            .status()
            .expect("cannot run kill");
        assert!(sent.success(), "kill -{signal} of node {node} failed");
    }

    /// Sets `node`'s clock `offset_ms` off real time (its running process
    /// and the next ones).
    pub(super) fn set_clock(&self, node: usize, offset_ms: i64) {
        write_offset(&self.nodes[node].clock_file, offset_ms);
    }

    /// Checks that `node`'s clock follows its offset file, so that the
    /// clock steps are real: moved 7 s ahead, the clock its `/v1/node`
    /// reports is 5 to 9 s ahead of the test's; moved back, within 2 s.
    pub(super) fn assert_clock_follows_file(&self, node: usize) {
        let (_, service) = self.nodes[node].service.as_ref().expect("a running node");
        let offset = || {
            let report = service.json("/v1/node");
            let clock = report["clock_ms"].as_i64().expect("clock_ms in /v1/node");
            clock - now_ms()
        };
        self.set_clock(node, 7_000);
        let ahead = offset();
        self.set_clock(node, 0);
        let back = offset();
        assert!(
            (5_000..9_000).contains(&ahead) && back.abs() < 2_000,
            "libfaketime does not move node {node}'s clock through {}: set 7 s ahead it read {ahead} ms off, set back {back} ms",
            self.nodes[node].clock_file.display()
        );
    }

    /// Panics, with the end of its log, if a process exited that was not
    /// killed by the test.
    pub(super) fn assert_running(&mut self) {
        for (node, entry) in self.nodes.iter_mut().enumerate() {
            if let Some((process, service)) = entry.service.as_mut()
                && let Some(status) = service.exited()
            {
                let log = service.log();
                let tail: Vec<&str> = log.lines().rev().take(30).collect();
                panic!(
                    "node {node} (process {process}) exited by itself ({status}); its log ends with:\n{}",
                    tail.into_iter().rev().collect::<Vec<_>>().join("\n")
                );
            }
        }
    }

    /// The nodes whose process says it is ready.
    pub(super) fn ready(&self) -> Vec<usize> {
        (0..self.nodes.len())
            .filter(|&node| {
                let Some((_, service)) = &self.nodes[node].service else {
                    return false;
                };
                let status = Connection::open(service.address)
                    .and_then(|mut c| c.get("/readyz"))
                    .map(|r| r.status);
                status.is_ok_and(|status| status == 200)
            })
            .collect()
    }
}

/// Writes libfaketime's offset file: seconds with decimals ("-0.050"; a
/// unit such as "ms" would be read as minutes), replaced in one rename so
/// that a reader never sees half of it.
fn write_offset(file: &Path, offset_ms: i64) {
    let text = format!("{:+.3}\n", offset_ms as f64 / 1000.0);
    let partial = file.with_extension("partial");
    std::fs::write(&partial, text).expect("cannot write the clock offset");
    std::fs::rename(&partial, file).expect("cannot replace the clock offset");
}

/// What one client saw.
#[derive(Default)]
pub(super) struct ClientLog {
    pub batches: Vec<Batch>,
    pub ids: Vec<u64>,
    /// 503 answers (the node may not issue now).
    pub refusals: u64,
    /// Requests that got no answer (the process died, or the connection
    /// broke).
    pub broken: u64,
    /// Anything that breaks the API's promises: another status, a body
    /// that is not a batch of the size asked for, IDs out of order.
    pub wrong: Vec<String>,
}

/// The clients: threads that pull `/v1/ids` from every node, each on a
/// keep-alive connection to the node's current process.
pub(super) struct Clients {
    stop: Arc<AtomicBool>,
    threads: Vec<JoinHandle<ClientLog>>,
}

/// The batch sizes the clients ask for.
const COUNTS: [u32; 5] = [1, 4, 16, 64, 256];

impl Clients {
    /// `per_node` clients for each node of `directory`, with request sizes
    /// drawn from `seed`; times are measured from `start`.
    pub(super) fn start(
        directory: &Directory,
        per_node: usize,
        seed: u64,
        start: Instant,
    ) -> Clients {
        let stop = Arc::new(AtomicBool::new(false));
        let mut threads = Vec::new();
        for node in 0..directory.len() {
            for client in 0..per_node {
                let directory = Arc::clone(directory);
                let stop = Arc::clone(&stop);
                let rng = Rng::new(
                    seed ^ ((node * per_node + client) as u64 + 1).wrapping_mul(0x9e37_79b9),
                );
                threads.push(std::thread::spawn(move || {
                    pull(node, &directory, &stop, rng, start)
                }));
            }
        }
        Clients { stop, threads }
    }

    /// Stops every client; what they saw.
    pub(super) fn finish(self) -> Vec<ClientLog> {
        self.stop.store(true, Ordering::Relaxed);
        self.threads
            .into_iter()
            .map(|thread| thread.join().expect("a client panicked"))
            .collect()
    }
}

/// One client's loop: ask `node`'s current process for a batch, again and
/// again, following the node to its next process after a restart.
fn pull(
    node: usize,
    directory: &Directory,
    stop: &AtomicBool,
    mut rng: Rng,
    start: Instant,
) -> ClientLog {
    let mut log = ClientLog::default();
    let mut connection: Option<(u32, Connection)> = None;
    let since_start = |at: Instant| at.duration_since(start).as_micros() as u64;
    while !stop.load(Ordering::Relaxed) {
        let current = *directory[node].read().unwrap();
        let Some((process, address)) = current else {
            connection = None;
            std::thread::sleep(Duration::from_millis(5));
            continue;
        };
        if connection.as_ref().is_none_or(|(p, _)| *p != process) {
            connection = Connection::open(address).ok().map(|c| (process, c));
        }
        let Some((_, open)) = connection.as_mut() else {
            log.broken += 1;
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
                log.broken += 1;
                connection = None;
                std::thread::sleep(Duration::from_millis(5));
            }
            Ok(response) if response.status == 200 => {
                let before = log.ids.len();
                match parse_batch(&response.body, count, &mut log.ids) {
                    Ok(()) => log.batches.push(Batch {
                        node,
                        process,
                        sent_us: since_start(sent),
                        received_us: since_start(received),
                        first: log.ids[before],
                        last: log.ids[log.ids.len() - 1],
                        count,
                    }),
                    Err(why) => {
                        log.ids.truncate(before);
                        log.wrong.push(format!(
                            "node {node} process {process} {target}: {why}: {}",
                            response.body.chars().take(200).collect::<String>()
                        ));
                    }
                }
                // Leaves the two cores some room for the coordinator and
                // the nodes' keep-alives.
                std::thread::sleep(Duration::from_millis(1));
            }
            Ok(response) if response.status == 503 => {
                log.refusals += 1;
                std::thread::sleep(Duration::from_millis(10));
            }
            Ok(response) => {
                log.wrong.push(format!(
                    "node {node} process {process} {target}: status {}: {}",
                    response.status, response.body
                ));
                std::thread::sleep(Duration::from_millis(10));
            }
        }
    }
    log
}

/// Appends the IDs of a `/v1/ids` body (`{"ids":["1","2"]}`) to `ids`,
/// checking that there are `count` of them, strictly increasing, all of
/// one slot.
fn parse_batch(body: &str, count: u32, ids: &mut Vec<u64>) -> Result<(), String> {
    let list = body
        .strip_prefix(r#"{"ids":["#)
        .and_then(|rest| rest.strip_suffix("]}"))
        .ok_or("not an ids body")?;
    let before = ids.len();
    for item in list.split(',') {
        let digits = item
            .strip_prefix('"')
            .and_then(|item| item.strip_suffix('"'))
            .ok_or("an ID that is not a string")?;
        ids.push(digits.parse().map_err(|_| format!("ID {digits:?}"))?);
    }
    let batch = &ids[before..];
    if batch.len() != count as usize {
        return Err(format!("{} IDs, not {count}", batch.len()));
    }
    if batch.windows(2).any(|pair| pair[0] >= pair[1]) {
        return Err("IDs not strictly increasing".into());
    }
    if batch.iter().any(|&id| slot_of(id) != slot_of(batch[0])) {
        return Err("IDs of more than one slot".into());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A body is read as the service writes it, and a wrong one is named.
    #[test]
    fn batches_are_parsed_and_checked() {
        let mut ids = Vec::new();
        parse_batch(r#"{"ids":["4096","4097"]}"#, 2, &mut ids).unwrap();
        assert_eq!(ids, vec![4096, 4097]);
        let wrong = [
            (r#"{"ids":["4097","4096"]}"#, "IDs not strictly increasing"),
            (r#"{"ids":["4096"]}"#, "1 IDs, not 2"),
            (r#"{"ids":["4096","8192"]}"#, "IDs of more than one slot"),
            (r#"{"id":"4096"}"#, "not an ids body"),
        ];
        for (body, why) in wrong {
            assert_eq!(parse_batch(body, 2, &mut ids).unwrap_err(), why, "{body}");
        }
    }

    /// The offset file holds seconds with decimals.
    #[test]
    fn clock_offsets_are_written_in_seconds() {
        let dir = snowmint_test_support::temp::temp_dir("clock");
        let file = dir.path().join("clock");
        for (ms, text) in [(0, "+0.000\n"), (-50, "-0.050\n"), (9_999, "+9.999\n")] {
            write_offset(&file, ms);
            assert_eq!(std::fs::read_to_string(&file).unwrap(), text);
        }
    }
}
