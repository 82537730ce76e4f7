//! `snowmint serve` killed with SIGKILL and restarted at once on the same
//! state directory, even with its clock set back, issues no ID twice.

use std::collections::HashSet;

use snowmint_test_support::binary::{Service, timestamp_ms};
use snowmint_test_support::temp::{TempDir, temp_dir};
use snowmint_test_support::wait::Deadline;

/// The `snowmint` binary under test.
const SNOWMINT: &str = env!("CARGO_BIN_EXE_snowmint");

/// Takes IDs as fast as it can until the connection breaks; returns every
/// ID it received.
fn hammer(service: &Service) -> std::thread::JoinHandle<Vec<u64>> {
    let mut connection = service.connect();
    std::thread::spawn(move || {
        let mut ids = Vec::new();
        for round in 0u64.. {
            let target = if round % 2 == 0 {
                "/v1/ids?count=500"
            } else {
                "/v1/id"
            };
            let Ok(response) = connection.get(target) else {
                break;
            };
            assert_eq!(response.status, 200, "{}", response.body);
            let json: serde_json::Value = serde_json::from_str(&response.body).unwrap();
            match json.get("ids") {
                Some(batch) => ids.extend(
                    batch
                        .as_array()
                        .unwrap()
                        .iter()
                        .map(|v| v.as_str().unwrap().parse::<u64>().unwrap()),
                ),
                None => ids.push(json["id"].as_str().unwrap().parse().unwrap()),
            }
        }
        ids
    })
}

/// Runs a node under load, kills it with SIGKILL, restarts it at once with
/// `args`; returns the IDs of both runs and the second run's log.
fn kill_and_restart(home: &TempDir, args: &[&str]) -> (Vec<u64>, Vec<u64>, String) {
    let state_dir = home.path().join("state");
    let state_dir = state_dir.to_str().unwrap();
    let first = Service::start(
        SNOWMINT,
        home.path(),
        &[
            "--datacenter",
            "0",
            "--machine",
            "0",
            "--state-dir",
            state_dir,
        ],
        &[],
    );
    // The kill lands while these clients are taking IDs.
    let clients: Vec<_> = (0..2).map(|_| hammer(&first)).collect();
    // Let the load run until well past the first reservation step. (The
    // time limit is a safety net against a hang, not a timing assertion.)
    let what = "the node to issue 40000 IDs under load";
    let deadline = Deadline::after(std::time::Duration::from_secs(120), what);
    loop {
        std::thread::sleep(std::time::Duration::from_millis(50));
        let metrics = first.connect().get("/metrics").unwrap().body;
        let seen: u64 = metrics
            .lines()
            .find_map(|l| l.strip_prefix("snowmint_ids_issued_total "))
            .map_or(0, |v| v.parse().unwrap());
        if seen >= 40_000 {
            break;
        }
        assert!(
            clients.iter().all(|c| !c.is_finished()),
            "a client stopped early:\n{}",
            first.log()
        );
        deadline.check_with(|| format!("the load did not run:\n{}", first.log()));
    }
    first.kill();
    let before: Vec<u64> = clients
        .into_iter()
        .flat_map(|c| c.join().unwrap())
        .collect();

    let mut all_args = vec![
        "--datacenter",
        "0",
        "--machine",
        "0",
        "--state-dir",
        state_dir,
    ];
    all_args.extend_from_slice(args);
    let second = Service::start(SNOWMINT, home.path(), &all_args, &[]);
    let mut after = Vec::new();
    for _ in 0..20 {
        let batch = second.json("/v1/ids?count=4096");
        after.extend(
            batch["ids"]
                .as_array()
                .unwrap()
                .iter()
                .map(|v| v.as_str().unwrap().parse::<u64>().unwrap()),
        );
        after.push(
            second.json("/v1/id")["id"]
                .as_str()
                .unwrap()
                .parse()
                .unwrap(),
        );
    }
    let log = second.log();
    second.kill();
    (before, after, log)
}

fn assert_no_repeats(before: &[u64], after: &[u64]) {
    let first_run: HashSet<u64> = before.iter().copied().collect();
    assert_eq!(
        first_run.len(),
        before.len(),
        "the first run repeated itself"
    );
    for id in after {
        assert!(
            !first_run.contains(id),
            "ID {id} was issued again after the restart"
        );
    }
    let last_before = before.iter().max().unwrap();
    let first_after = after.iter().min().unwrap();
    assert!(
        first_after > last_before,
        "after the restart the IDs start at {} ({first_after}), at or before the last one issued, {} ({last_before})",
        timestamp_ms(*first_after),
        timestamp_ms(*last_before)
    );
}

/// The plain case: same clock.
#[test]
fn kill_9_and_restart_at_once() {
    let home = temp_dir("restart");
    let (before, after, _) = kill_and_restart(&home, &[]);
    assert!(before.len() > 40_000, "the load ran: {}", before.len());
    assert_no_repeats(&before, &after);
}

/// The clock set back 800 ms on the restart: the recorded mark is ahead of
/// it, so the node waits it out instead of reissuing.
#[test]
fn kill_9_and_restart_with_the_clock_set_back() {
    let home = temp_dir("restart-back");
    let (before, after, log) = kill_and_restart(&home, &["--clock-offset-ms", "-800"]);
    assert_no_repeats(&before, &after);
    assert!(
        log.contains("the high-water mark is ahead of the clock"),
        "the restart should have waited for the mark:\n{log}"
    );
}
