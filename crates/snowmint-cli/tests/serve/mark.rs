//! `snowmint serve` started with a state file whose high-water mark lies
//! ahead of the clock: a small gap is waited out, a large one refuses.

use snowmint_test_support::binary::{Service, now_ms, run_to_end, timestamp_ms};
use snowmint_test_support::temp::temp_dir;

/// The `snowmint` binary under test.
const SNOWMINT: &str = env!("CARGO_BIN_EXE_snowmint");

/// Writes the state file of datacenter 0, machine 0 as an operator would.
fn write_mark(state_dir: &std::path::Path, mark_ms: i64) {
    std::fs::create_dir_all(state_dir).unwrap();
    std::fs::write(
        state_dir.join("node-dc0-m0.mark"),
        format!("high_water_ms = {mark_ms}\n"),
    )
    .unwrap();
}

/// 1.5 s ahead (under the 2 s bound): it starts, and its first ID is after
/// the mark.
#[test]
fn a_small_gap_is_waited_out() {
    let home = temp_dir("mark-wait");
    let state_dir = home.path().join("state");
    let mark = now_ms() + 1_500;
    write_mark(&state_dir, mark);
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
        &[],
    );
    let id: u64 = service.json("/v1/id")["id"]
        .as_str()
        .unwrap()
        .parse()
        .unwrap();
    assert!(
        timestamp_ms(id) > mark,
        "ID at {} is not after the mark {mark}",
        timestamp_ms(id)
    );
    let log = service.log();
    assert!(log.contains("waiting it out"), "{log}");
    let node = service.json("/v1/node");
    assert!(node["high_water_mark_ms"].as_i64().unwrap() >= timestamp_ms(id));
}

/// A minute ahead: it refuses to start, naming both times.
#[test]
fn a_large_gap_refuses_to_start() {
    let home = temp_dir("mark-refuse");
    let state_dir = home.path().join("state");
    let mark = now_ms() + 60_000;
    write_mark(&state_dir, mark);
    let (status, stdout, stderr) = run_to_end(
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
        &[],
    );
    assert!(!status.success());
    assert!(!stdout.contains("listening"), "{stdout}");
    let mark_time = snowmint::format_time(mark);
    for needle in [
        format!("up to {mark_time} ({mark} ms)"),
        "but the clock reads ".to_owned(),
        "refuses to start".to_owned(),
        "node-dc0-m0.mark".to_owned(),
    ] {
        assert!(stderr.contains(&needle), "missing {needle:?} in:\n{stderr}");
    }

    // A larger bound lets the same file through: the gap is what decides.
    let (status, _, stderr) = run_to_end(
        SNOWMINT,
        home.path(),
        &[
            "--datacenter",
            "0",
            "--machine",
            "0",
            "--state-dir",
            state_dir.to_str().unwrap(),
            "--mark-wait-max",
            "1s",
            "--mark-step",
            "500ms",
        ],
        &[],
    );
    assert!(!status.success(), "{stderr}");
    assert!(
        stderr.contains("more than the 1000 ms this node waits"),
        "{stderr}"
    );
}

/// A damaged state file refuses to start rather than guess.
#[test]
fn a_damaged_state_file_refuses_to_start() {
    let home = temp_dir("mark-damaged");
    let state_dir = home.path().join("state");
    std::fs::create_dir_all(&state_dir).unwrap();
    std::fs::write(state_dir.join("node-dc0-m0.mark"), "high_water_ms = soon\n").unwrap();
    let (status, _, stderr) = run_to_end(
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
        &[],
    );
    assert!(!status.success());
    assert!(
        stderr.contains("node-dc0-m0.mark: high_water_ms \"soon\" is not a number"),
        "{stderr}"
    );
}
