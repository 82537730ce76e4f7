//! The real `snowmint serve`, killed with SIGKILL under load and restarted
//! at once on the same state directory with its clock set back (by
//! libfaketime, Debian package `faketime`): 50 ms and 1 s back it waits out
//! its high-water mark and then issues only new IDs; an hour back it refuses
//! to start, naming both times. And 100 rapid kill/restart cycles under
//! load, some with the clock set back, issue no ID twice.

use std::collections::HashSet;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::thread::JoinHandle;
use std::time::Duration;

use snowmint_test_support::binary::{Service, now_ms, run_to_end, timestamp_ms};
use snowmint_test_support::faketime::libfaketime;
use snowmint_test_support::temp::{TempDir, temp_dir};
use snowmint_test_support::wait::Deadline;

/// The `snowmint` binary under test.
const SNOWMINT: &str = env!("CARGO_BIN_EXE_snowmint");

/// The environment that runs the service with its clock `seconds_back`
/// behind the real one. libfaketime reads a relative offset in seconds,
/// with decimals ("-0.050"); beware "-50ms", which it reads as 50 minutes.
/// Only the wall clock moves: timers and timeouts keep real time.
fn clock_back(seconds_back: &str) -> Vec<(&'static str, String)> {
    vec![
        ("LD_PRELOAD", libfaketime().display().to_string()),
        ("FAKETIME", format!("-{seconds_back}")),
        ("FAKETIME_DONT_FAKE_MONOTONIC", "1".to_owned()),
        ("DONT_FAKE_MONOTONIC", "1".to_owned()),
    ]
}

fn as_refs<'a>(env: &'a [(&'static str, String)]) -> Vec<(&'static str, &'a str)> {
    env.iter()
        .map(|(name, value)| (*name, value.as_str()))
        .collect()
}

/// The high-water mark in the state file of datacenter 0, machine 0.
fn recorded_mark(state_dir: &Path) -> i64 {
    let text = std::fs::read_to_string(state_dir.join("node-dc0-m0.mark")).unwrap();
    text.lines()
        .find_map(|line| line.strip_prefix("high_water_ms = "))
        .expect("a high_water_ms line")
        .parse()
        .unwrap()
}

/// Clients taking IDs as fast as they can, each on its own connection, until
/// the connection breaks; they keep every ID that came with a 200.
struct Load {
    clients: Vec<JoinHandle<Vec<u64>>>,
    received: Arc<AtomicU64>,
}

impl Load {
    fn start(service: &Service, clients: usize) -> Load {
        let received = Arc::new(AtomicU64::new(0));
        let clients = (0..clients)
            .map(|n| {
                let mut connection = service.connect();
                let received = Arc::clone(&received);
                std::thread::spawn(move || {
                    let mut ids = Vec::new();
                    for round in 0u64.. {
                        // Mostly batches (they keep the node busy), with
                        // single IDs between them.
                        let target = match (round + n as u64) % 3 {
                            0 => "/v1/id",
                            1 => "/v1/ids?count=97",
                            _ => "/v1/ids?count=1000",
                        };
                        let Ok(response) = connection.get(target) else {
                            break;
                        };
                        assert_eq!(response.status, 200, "{target}: {}", response.body);
                        let before = ids.len();
                        parse_ids(&response.body, &mut ids);
                        received.fetch_add((ids.len() - before) as u64, Ordering::Relaxed);
                    }
                    ids
                })
            })
            .collect();
        Load { clients, received }
    }

    /// Waits until the clients have received at least `count` IDs; false
    /// if a client stopped first.
    fn wait_for(&self, count: u64) -> bool {
        // A safety net against a hang, not a timing assertion.
        let what = format!("the clients to receive {count} IDs");
        let deadline = Deadline::after(Duration::from_secs(120), what);
        while self.received.load(Ordering::Relaxed) < count {
            if self.clients.iter().any(JoinHandle::is_finished) {
                return false;
            }
            deadline.check();
            std::thread::sleep(Duration::from_millis(1));
        }
        true
    }

    /// Every ID received, once the connections have broken.
    fn join(self) -> Vec<u64> {
        self.clients
            .into_iter()
            .flat_map(|client| client.join().unwrap())
            .collect()
    }
}

/// The IDs of a `/v1/id` or `/v1/ids` JSON body.
fn parse_ids(body: &str, out: &mut Vec<u64>) {
    let json: serde_json::Value = serde_json::from_str(body).unwrap();
    match json.get("ids") {
        Some(batch) => out.extend(
            batch
                .as_array()
                .unwrap()
                .iter()
                .map(|v| v.as_str().unwrap().parse::<u64>().unwrap()),
        ),
        None => out.push(json["id"].as_str().unwrap().parse().unwrap()),
    }
}

/// Starts a node on `state_dir` in `env`, loads it until it has handed out
/// `ids` IDs, kills it with SIGKILL just after it moved its high-water mark
/// on (the mark then lies most of a step ahead of the clock, so that the
/// restart finds it ahead even if starting takes a while); returns the IDs
/// the clients received.
fn load_then_kill(home: &TempDir, state_dir: &Path, env: &[(&str, &str)], ids: u64) -> Vec<u64> {
    let service = Service::start(
        SNOWMINT,
        home.path(),
        &[
            "--datacenter",
            "0",
            "--machine",
            "0",
            "--state-dir",
            state_dir.to_str().unwrap(),
        ],
        env,
    );
    let load = Load::start(&service, 2);
    let ran = load.wait_for(ids);
    let mut probe = service.connect();
    // A safety net against a hang, not a timing assertion.
    let what = "the mark to move a step ahead of the clock";
    let deadline = Deadline::after(Duration::from_secs(60), what);
    let fresh_mark = loop {
        let node: serde_json::Value =
            serde_json::from_str(&probe.get("/v1/node").unwrap().body).unwrap();
        let ahead =
            node["high_water_mark_ms"].as_i64().unwrap() - node["clock_ms"].as_i64().unwrap();
        if ahead >= 700 || deadline.passed() {
            break ahead >= 700;
        }
    };
    let log = service.log();
    service.kill();
    let received = load.join();
    assert!(ran, "the load stopped early:\n{log}");
    if !fresh_mark {
        deadline.fail(&log);
    }
    received
}

/// Takes a few batches and single IDs from `service`, one request at a time.
fn take_ids(service: &Service) -> Vec<u64> {
    let mut connection = service.connect();
    let mut ids = Vec::new();
    for _ in 0..10 {
        for target in ["/v1/ids?count=4096", "/v1/id"] {
            let response = connection.get(target).unwrap();
            assert_eq!(response.status, 200, "{target}: {}", response.body);
            parse_ids(&response.body, &mut ids);
        }
    }
    ids
}

/// The node's clock as `/v1/node` reports it lies `back_ms` behind the real
/// clock read around the request: the offset took effect. (A bracket, not
/// a timing assertion: it holds however long the request takes.)
fn assert_clock_set_back(service: &Service, back_ms: i64) {
    let before = now_ms();
    let node = service.json("/v1/node");
    let after = now_ms();
    let clock = node["clock_ms"].as_i64().unwrap();
    assert!(
        (before - back_ms - 1..=after - back_ms + 1).contains(&clock),
        "the node's clock {clock} is not {back_ms} ms behind the real clock ({before}..={after}): is libfaketime in effect?"
    );
}

/// No ID twice, and everything after the restart lies after everything
/// before it and after the mark left on disk.
fn assert_only_new_ids(before: &[u64], mark: i64, after: &[u64]) {
    let mut seen: HashSet<u64> = before.iter().copied().collect();
    assert_eq!(seen.len(), before.len(), "the first run repeated an ID");
    for id in after {
        assert!(seen.insert(*id), "ID {id} was issued twice");
    }
    let last_before = *before.iter().max().unwrap();
    let first_after = *after.iter().min().unwrap();
    assert!(
        first_after > last_before,
        "after the restart the IDs start at {first_after} (ms {}), not after the last one before, {last_before} (ms {})",
        timestamp_ms(first_after),
        timestamp_ms(last_before)
    );
    assert!(
        timestamp_ms(first_after) > mark,
        "the first ID after the restart (ms {}) is not past the recorded mark {mark}",
        timestamp_ms(first_after)
    );
}

/// Kill -9 under load, restart with the clock `seconds_back` behind: the
/// node waits out the mark (the log says so) and then issues only new IDs.
fn restart_waits(name: &str, seconds_back: &str, back_ms: i64) {
    let home = temp_dir(name);
    let state_dir = home.path().join("state");
    let before = load_then_kill(&home, &state_dir, &[], 20_000);
    let mark = recorded_mark(&state_dir);

    let env = clock_back(seconds_back);
    let service = Service::start(
        SNOWMINT,
        home.path(),
        &[
            "--datacenter",
            "0",
            "--machine",
            "0",
            "--state-dir",
            state_dir.to_str().unwrap(),
        ],
        &as_refs(&env),
    );
    assert_clock_set_back(&service, back_ms);
    let after = take_ids(&service);
    let log = service.log();
    assert!(
        log.contains("the high-water mark is ahead of the clock"),
        "the restart should have waited out the mark:\n{log}"
    );
    assert_only_new_ids(&before, mark, &after);
}

/// 50 ms back: well within the mark the node reserved ahead, so it waits.
#[test]
fn restart_with_the_clock_50_ms_back_waits_then_issues_new_ids() {
    restart_waits("back-50ms", "0.050", 50);
}

/// 1 s back: the gap to the mark (reserved at most 1 s ahead of the last
/// write) is at most 2 s, the default bound of the start wait, so it waits.
#[test]
fn restart_with_the_clock_1_s_back_waits_then_issues_new_ids() {
    restart_waits("back-1s", "1", 1_000);
}

/// An hour back: far past the 2 s the node waits at start, so it refuses to
/// start, names the mark and the clock, and leaves the state file alone; with
/// the clock right again it issues only new IDs.
#[test]
fn restart_with_the_clock_an_hour_back_refuses_to_start() {
    let home = temp_dir("back-1h");
    let state_dir = home.path().join("state");
    let state_dir_arg = state_dir.to_str().unwrap();
    let before = load_then_kill(&home, &state_dir, &[], 20_000);
    let mark = recorded_mark(&state_dir);
    let file_before = std::fs::read(state_dir.join("node-dc0-m0.mark")).unwrap();

    let env = clock_back("3600");
    let started = now_ms();
    let (status, stdout, stderr) = run_to_end(
        SNOWMINT,
        home.path(),
        &[
            "--datacenter",
            "0",
            "--machine",
            "0",
            "--state-dir",
            state_dir_arg,
        ],
        &as_refs(&env),
    );
    let ended = now_ms();
    assert!(!status.success(), "it started:\n{stderr}");
    assert!(!stdout.contains("listening"), "{stdout}");
    let mark_time = snowmint::format_time(mark);
    for needle in [
        format!("up to {mark_time} ({mark} ms)"),
        "refuses to start".to_owned(),
        "node-dc0-m0.mark".to_owned(),
    ] {
        assert!(stderr.contains(&needle), "missing {needle:?} in:\n{stderr}");
    }
    // "but the clock reads <time> (<ms> ms)": an hour behind the real clock.
    let clock: i64 = stderr
        .split("but the clock reads ")
        .nth(1)
        .and_then(|rest| rest.split_once(" (")?.1.split_once(" ms)"))
        .and_then(|(ms, _)| ms.parse().ok())
        .unwrap_or_else(|| panic!("no clock reading in:\n{stderr}"));
    assert!(
        (started - 3_600_000 - 1..=ended - 3_600_000 + 1).contains(&clock),
        "the clock named, {clock}, is not an hour behind {started}..={ended}"
    );
    assert!(
        stderr.contains(&snowmint::format_time(clock).to_string()),
        "{stderr}"
    );
    assert_eq!(
        std::fs::read(state_dir.join("node-dc0-m0.mark")).unwrap(),
        file_before,
        "a node that refused to start changed the state file"
    );

    let service = Service::start(
        SNOWMINT,
        home.path(),
        &[
            "--datacenter",
            "0",
            "--machine",
            "0",
            "--state-dir",
            state_dir_arg,
        ],
        &[],
    );
    let after = take_ids(&service);
    assert_only_new_ids(&before, mark, &after);
}

/// A small seeded generator (xorshift64) for the kill points; the seed is
/// printed so that a failing run can be replayed with SNOWMINT_CYCLE_SEED.
struct Random(u64);

impl Random {
    fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0 % n
    }
}

/// 100 kill -9 / restart cycles on one state directory, each killed at a
/// random point while two clients take IDs, a third of them restarted with
/// the clock 50 ms or 150 ms back: no ID is handed out twice, and each run
/// starts after everything the runs before it handed out.
#[test]
fn a_hundred_kill_and_restart_cycles_under_load_issue_no_id_twice() {
    const CYCLES: usize = 100;
    let seed = std::env::var("SNOWMINT_CYCLE_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| now_ms() as u64 | 1);
    eprintln!("kill/restart cycles: seed {seed} (SNOWMINT_CYCLE_SEED)");
    let mut random = Random(seed);
    let home = temp_dir("cycles");
    let state_dir = home.path().join("state");
    // A short reservation step keeps each restart's wait short, so that
    // the cycles are many and quick.
    let args = [
        "--datacenter",
        "0",
        "--machine",
        "0",
        "--state-dir",
        state_dir.to_str().unwrap(),
        "--mark-step",
        "200ms",
    ];
    let mut seen = HashSet::new();
    let mut last_max = 0u64;
    let mut total = 0usize;
    for cycle in 0..CYCLES {
        let env = match random.below(6) {
            0 => clock_back("0.050"),
            1 => clock_back("0.150"),
            _ => Vec::new(),
        };
        let service = Service::start(SNOWMINT, home.path(), &args, &as_refs(&env));
        let load = Load::start(&service, 2);
        let ran = load.wait_for(1);
        // Somewhere in the middle of the traffic, often mid-batch.
        std::thread::sleep(Duration::from_millis(random.below(120)));
        let log = service.log();
        service.kill();
        let ids = load.join();
        assert!(ran, "cycle {cycle}: the load stopped early:\n{log}");
        let first = *ids.iter().min().unwrap();
        assert!(
            first > last_max,
            "cycle {cycle} (seed {seed}): its first ID {first} is not after the last ID before it, {last_max}"
        );
        for id in &ids {
            assert!(
                seen.insert(*id),
                "cycle {cycle} (seed {seed}): ID {id} was issued twice"
            );
        }
        last_max = *ids.iter().max().unwrap();
        total += ids.len();
    }
    eprintln!("kill/restart cycles: {CYCLES} cycles, {total} IDs received, no duplicates");
}
