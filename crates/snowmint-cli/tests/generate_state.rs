//! `snowmint generate` mints through the fleet's issuer, with the real
//! binary: runs on one node at the same time take turns through the node's
//! lock instead of repeating IDs, a run whose clock was set back below the
//! mark is refused, and `--no-state` mints as before, with a warning.

use std::collections::HashSet;
use std::path::Path;
use std::process::{Command, Output, Stdio};

use snowmint_test_support::binary::Service;
use snowmint_test_support::faketime::libfaketime;
use snowmint_test_support::temp::temp_dir;

const SNOWMINT: &str = env!("CARGO_BIN_EXE_snowmint");

/// `snowmint` with `args`, HOME at `home` and no state directory from the
/// environment: the default state directory is `home`'s.
fn snowmint(home: &Path, args: &[&str]) -> Command {
    let mut command = Command::new(SNOWMINT);
    command.args(args);
    for (name, _) in std::env::vars() {
        if name.starts_with("SNOWMINT_") || name == "XDG_STATE_HOME" {
            command.env_remove(name);
        }
    }
    command.env("HOME", home).stdin(Stdio::null());
    command
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// The IDs a run printed.
fn ids(output: &Output) -> Vec<u64> {
    text(&output.stdout)
        .lines()
        .map(|line| line.parse().unwrap())
        .collect()
}

/// 200 runs of `snowmint generate --datacenter 1 --machine 2 --count 1`
/// started at once: every one succeeds, and no ID is printed twice. The
/// runs queue for the node's lock, one after the other; on a loaded
/// machine the last ones wait longer than the default `--lock-wait` of
/// 10 s, so the test gives them two minutes (what it checks is that no ID
/// repeats, not how fast 200 processes start).
#[test]
fn two_hundred_runs_at_once_print_no_id_twice() {
    let home = temp_dir("generate-200");
    let children: Vec<_> = (0..200)
        .map(|_| {
            snowmint(
                home.path(),
                &[
                    "generate",
                    "--datacenter",
                    "1",
                    "--machine",
                    "2",
                    "--count",
                    "1",
                    "--lock-wait",
                    "2m",
                ],
            )
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("running the snowmint binary")
        })
        .collect();
    let mut all = Vec::new();
    for child in children {
        let output = child.wait_with_output().unwrap();
        assert!(output.status.success(), "{}", text(&output.stderr));
        assert_eq!(text(&output.stderr), "");
        all.extend(ids(&output));
    }
    assert_eq!(all.len(), 200);
    let distinct: HashSet<u64> = all.iter().copied().collect();
    assert_eq!(distinct.len(), 200, "{} duplicates", 200 - distinct.len());
    // The mark the runs left in the default state directory covers them.
    let mark = std::fs::read_to_string(home.path().join(".local/state/snowmint/node-dc1-m2.mark"))
        .unwrap();
    let max_ms = all
        .iter()
        .map(|id| (id >> 22) as i64 + 1_288_834_974_657)
        .max()
        .unwrap();
    let recorded: i64 = mark
        .lines()
        .find_map(|line| line.strip_prefix("high_water_ms = "))
        .unwrap()
        .parse()
        .unwrap();
    assert!(
        recorded >= max_ms,
        "mark {recorded} below the last ID's {max_ms}"
    );
}

/// While `snowmint serve` issues as the node from the same state
/// directory, a run waits for the lock for `--lock-wait`, then is refused
/// with the holder named; with the node free it prints IDs above the
/// service's.
#[test]
fn a_run_on_a_node_a_service_holds_is_refused_with_the_holder_named() {
    let home = temp_dir("generate-locked");
    let state = home.path().join("state");
    let state_arg = state.to_str().unwrap();
    let service = Service::start(
        SNOWMINT,
        home.path(),
        &[
            "--datacenter",
            "4",
            "--machine",
            "5",
            "--state-dir",
            state_arg,
        ],
        &[],
    );
    let served: u64 = service.json("/v1/id")["id"]
        .as_str()
        .unwrap()
        .parse()
        .unwrap();
    for wait in ["0s", "300ms"] {
        let output = snowmint(
            home.path(),
            &[
                "generate",
                "--datacenter",
                "4",
                "--machine",
                "5",
                "--state-dir",
                state_arg,
                "--lock-wait",
                wait,
            ],
        )
        .output()
        .unwrap();
        let stderr = text(&output.stderr);
        assert_eq!(output.status.code(), Some(1), "{stderr}");
        assert_eq!(text(&output.stdout), "");
        for part in [
            "datacenter 4 machine 5".to_owned(),
            format!("process {}", service.pid()),
            state.join("node-dc4-m5.lock").display().to_string(),
        ] {
            assert!(stderr.contains(&part), "{part:?} is missing: {stderr}");
        }
    }
    service.terminate();
    let output = snowmint(
        home.path(),
        &[
            "generate",
            "--datacenter",
            "4",
            "--machine",
            "5",
            "--state-dir",
            state_arg,
            "--count",
            "3",
        ],
    )
    .output()
    .unwrap();
    assert!(output.status.success(), "{}", text(&output.stderr));
    assert!(ids(&output).iter().all(|&id| id > served));
}

/// A run with the clock 5 s behind the mark a previous run left is
/// refused, as `snowmint serve` refuses to start, naming both times;
/// `--no-state` mints anyway, and says what it gives up.
#[test]
fn a_clock_set_back_between_runs_is_refused() {
    let home = temp_dir("generate-clock");
    let args = [
        "generate",
        "--datacenter",
        "6",
        "--machine",
        "7",
        "--count",
        "5",
    ];
    let first = snowmint(home.path(), &args).output().unwrap();
    assert!(first.status.success(), "{}", text(&first.stderr));
    let back = |extra: &[&str]| {
        let mut all = args.to_vec();
        all.extend_from_slice(extra);
        snowmint(home.path(), &all)
            .env("LD_PRELOAD", libfaketime())
            .env("FAKETIME", "-5")
            .env("FAKETIME_DONT_FAKE_MONOTONIC", "1")
            .output()
            .unwrap()
    };
    let refused = back(&[]);
    let stderr = text(&refused.stderr);
    assert_eq!(refused.status.code(), Some(1), "{stderr}");
    assert_eq!(text(&refused.stdout), "");
    for part in [
        "node-dc6-m7.mark",
        "but the clock reads",
        "refuses to start",
    ] {
        assert!(stderr.contains(part), "{part:?} is missing: {stderr}");
    }

    let scratch = back(&["--no-state"]);
    let stderr = text(&scratch.stderr);
    assert!(scratch.status.success(), "{stderr}");
    assert_eq!(ids(&scratch).len(), 5);
    assert!(
        stderr.starts_with(
            "warning: --no-state: minting without the node's lock and high-water mark"
        ),
        "{stderr}"
    );
    // A scratch run leaves the mark alone.
    let again = snowmint(home.path(), &args).output().unwrap();
    assert!(again.status.success(), "{}", text(&again.stderr));
    assert!(ids(&again)[0] > *ids(&first).last().unwrap());
}

/// `--state-dir` chooses where the lock and the mark live.
#[test]
fn the_state_directory_can_be_chosen() {
    let home = temp_dir("generate-dir");
    let dir = home.path().join("elsewhere/state");
    let output = snowmint(
        home.path(),
        &[
            "generate",
            "--datacenter",
            "0",
            "--machine",
            "9",
            "--state-dir",
            dir.to_str().unwrap(),
        ],
    )
    .output()
    .unwrap();
    assert!(output.status.success(), "{}", text(&output.stderr));
    assert!(dir.join("node-dc0-m9.mark").is_file());
    assert!(dir.join("node-dc0-m9.lock").is_file());
    assert!(!home.path().join(".local/state/snowmint").exists());
}
