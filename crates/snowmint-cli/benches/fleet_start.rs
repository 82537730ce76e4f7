//! How long `snowmint serve --coordinator ...` takes from being started to
//! handing out its first ID, against real etcd and ZooKeeper servers on
//! loopback ports (the ones the tests use).
//!
//! ```sh
//! cargo bench -p snowmint-cli --bench fleet_start
//! ```
//!
//! Each run spawns the release binary, reads its `listening on` line, then
//! asks `/v1/id` on one keep-alive connection until it answers 200 (503
//! until the node holds a slot), and stops it with SIGTERM. Two series per
//! coordinator:
//!
//! - a fresh fleet each run: connect, claim slot 0, no earlier mark;
//! - the same fleet and state directory each run, started right after the
//!   previous run's clean shutdown: the node takes slot 0 back with the
//!   mark its predecessor reserved ahead of the clock (`--mark-step`, 1 s),
//!   and under the default `refuse` policy waits for the clock to pass it.

use std::io::{BufRead, BufReader};
use std::net::SocketAddr;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use snowmint_test_support::binary;
use snowmint_test_support::http::Connection;
use snowmint_test_support::servers::CoordinatorServer;
use snowmint_test_support::servers::etcd::EtcdServer;
use snowmint_test_support::servers::zookeeper::ZooKeeperServer;
use snowmint_test_support::temp::{TempDir, temp_dir};
use snowmint_test_support::wait::{Deadline, child_exit};

/// Starts timed per series.
const RUNS: usize = 20;
/// How long a node may take to hand out its first ID, or to stop, before
/// the bench gives up (a bound against a hang, far above what is measured).
const LIMIT: Duration = Duration::from_secs(60);

/// When a run's node printed its address and when it handed out its first
/// ID, counted from the spawn.
struct Run {
    listening: Duration,
    first_id: Duration,
}

fn main() {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("a runtime for the coordinators");
    println!("| coordinator | series | what | runs | min | median | p90 | max |");
    println!("|---|---|---|---|---|---|---|---|");
    {
        let etcd = runtime.block_on(EtcdServer::start());
        series("etcd", &format!("etcd://{}", etcd.client_addr()));
    }
    {
        let zookeeper = runtime.block_on(ZooKeeperServer::start());
        series("ZooKeeper", &format!("zk://{}", zookeeper.client_addr()));
    }
}

fn series(name: &str, url: &str) {
    let home = temp_dir("bench-start");
    // One unmeasured start: the page cache and the coordinator warm up.
    start_once(&home, url, "warm-up", "warm-up");
    let fresh: Vec<Run> = (0..RUNS)
        .map(|run| {
            let fleet = format!("fresh-{run}");
            start_once(&home, url, &fleet, &fleet)
        })
        .collect();
    report(name, "fresh fleet", &fresh);
    let again: Vec<Run> = (0..RUNS)
        .map(|_| start_once(&home, url, "again", "again"))
        .collect();
    report(name, "restart on its slot", &again);
}

fn start_once(home: &TempDir, url: &str, fleet: &str, state: &str) -> Run {
    let state_dir = home.path().join(format!("state-{state}"));
    let args = [
        "--listen",
        "127.0.0.1:0",
        "--coordinator",
        url,
        "--fleet",
        fleet,
        "--claim-ttl",
        "2s",
        "--state-dir",
        state_dir.to_str().unwrap(),
    ];
    let spawned = Instant::now();
    let snowmint = env!("CARGO_BIN_EXE_snowmint");
    let mut child = binary::command(snowmint, home.path(), &args, &[("SNOWMINT_LOG", "error")])
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("running the snowmint binary");
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let address: SocketAddr = lines
        .find_map(|line| {
            line.ok()?
                .strip_prefix("listening on http://")?
                .parse()
                .ok()
        })
        .expect("the node never said where it listens");
    let listening = spawned.elapsed();
    let mut connection = Connection::open(address).unwrap();
    let deadline = Deadline::after(LIMIT, "the node's first ID");
    let first_id = loop {
        let answer = connection.get("/v1/id").unwrap();
        match answer.status {
            200 => break spawned.elapsed(),
            503 => std::thread::sleep(Duration::from_micros(200)),
            other => panic!("/v1/id answered {other}: {}", answer.body),
        }
        deadline.check();
    };
    drop(connection);
    let stopped = Command::new("sh")
        .args(["-c", &format!("kill -TERM {}", child.id())])
        .status()
        .unwrap();
    assert!(stopped.success());
    assert!(
        child_exit(&mut child, "the node", LIMIT).success(),
        "the node did not stop cleanly"
    );
    Run {
        listening,
        first_id,
    }
}

fn report(name: &str, series: &str, runs: &[Run]) {
    for (what, pick) in [
        (
            "start -> listening",
            (|run: &Run| run.listening) as fn(&Run) -> Duration,
        ),
        ("start -> first ID", |run: &Run| run.first_id),
    ] {
        let mut ms: Vec<f64> = runs
            .iter()
            .map(|run| pick(run).as_secs_f64() * 1000.0)
            .collect();
        ms.sort_by(f64::total_cmp);
        let at = |q: f64| ms[((ms.len() - 1) as f64 * q).round() as usize];
        println!(
            "| {name} | {series} | {what} | {} | {:.1} | {:.1} | {:.1} | {:.1} |",
            ms.len(),
            ms[0],
            at(0.5),
            at(0.9),
            ms[ms.len() - 1]
        );
    }
}
