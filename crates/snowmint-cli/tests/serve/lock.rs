//! One holder per node on a host, with the real binary: a second
//! `snowmint serve` on the same node and state directory refuses to start,
//! naming the directory, the node and the first one's pid; a `kill -9`
//! leaves no lock behind; other nodes in the same directory serve side by
//! side.

use std::collections::HashSet;
use std::process::Stdio;

use snowmint_test_support::binary::{Service, command, run_to_end};
use snowmint_test_support::temp::temp_dir;

use crate::ids;

const SNOWMINT: &str = env!("CARGO_BIN_EXE_snowmint");

/// The fields an ID was issued by: (datacenter, machine) in the Twitter
/// layout, the ten bits above the sequence.
fn node_of(id: u64) -> (u64, u64) {
    ((id >> 17) & 0x1f, (id >> 12) & 0x1f)
}

/// A second process on the node refuses to start while the first serves,
/// with a message naming the directory, the node and the first one's pid;
/// after `kill -9` of the first, the next start serves at once and goes on
/// after the first one's IDs.
#[test]
fn a_second_process_on_the_same_node_refuses_until_the_first_is_killed() {
    let home = temp_dir("lock-same-node");
    let state = home.path().join("state");
    let state_arg = state.to_str().unwrap();
    let args = [
        "--datacenter",
        "3",
        "--machine",
        "7",
        "--state-dir",
        state_arg,
    ];
    let first = Service::start(SNOWMINT, home.path(), &args, &[]);
    let before = ids(&first, 100);
    assert!(before.iter().all(|&id| node_of(id) == (3, 7)));

    let (status, stdout, stderr) = run_to_end(SNOWMINT, home.path(), &args, &[]);
    assert!(!status.success(), "the second process started:\n{stderr}");
    assert_eq!(status.code(), Some(1), "{stderr}");
    assert!(
        !stdout.contains("listening on"),
        "the second process listened: {stdout}"
    );
    for part in [
        state.display().to_string(),
        "datacenter 3 machine 7".to_owned(),
        format!("process {}", first.pid()),
        state.join("node-dc3-m7.lock").display().to_string(),
    ] {
        assert!(stderr.contains(&part), "{part:?} is missing:\n{stderr}");
    }
    // Run again the same command line as the first (the same port too,
    // as a second copy of one unit would): the node is the reason given,
    // not the port.
    let listen = first.address.to_string();
    let mut same_port = vec!["--listen", listen.as_str()];
    same_port.extend_from_slice(&args);
    let output = command(SNOWMINT, home.path(), &same_port, &[])
        .stdin(Stdio::null())
        .output()
        .expect("cannot run the binary");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    for part in [
        "datacenter 3 machine 7".to_owned(),
        format!("process {}", first.pid()),
    ] {
        assert!(stderr.contains(&part), "{part:?} is missing:\n{stderr}");
    }
    assert!(!stderr.contains("in use (os error"), "{stderr}");
    // The first one kept serving.
    let during = ids(&first, 100);
    assert!(during[0] > *before.last().unwrap());

    first.kill();
    let again = Service::start(SNOWMINT, home.path(), &args, &[]);
    let after = ids(&again, 100);
    assert!(
        after[0] > *during.last().unwrap(),
        "the restarted node went back: {} after {}",
        after[0],
        during.last().unwrap()
    );
    assert!(
        again.log().contains(&format!(
            "lock_file={}",
            state.join("node-dc3-m7.lock").display()
        )),
        "{}",
        again.log()
    );
}

/// Two processes on different nodes share a state directory and both
/// serve, each as its own node.
#[test]
fn processes_on_different_nodes_share_a_directory() {
    let home = temp_dir("lock-other-node");
    let state = home.path().join("state");
    let state_arg = state.to_str().unwrap();
    let one = Service::start(
        SNOWMINT,
        home.path(),
        &[
            "--datacenter",
            "3",
            "--machine",
            "7",
            "--state-dir",
            state_arg,
        ],
        &[],
    );
    let two = Service::start(
        SNOWMINT,
        home.path(),
        &[
            "--datacenter",
            "3",
            "--machine",
            "8",
            "--state-dir",
            state_arg,
        ],
        &[],
    );
    let from_one = ids(&one, 1000);
    let from_two = ids(&two, 1000);
    assert!(from_one.iter().all(|&id| node_of(id) == (3, 7)));
    assert!(from_two.iter().all(|&id| node_of(id) == (3, 8)));
    let all: HashSet<u64> = from_one.iter().chain(&from_two).copied().collect();
    assert_eq!(all.len(), 2000);
    for name in ["node-dc3-m7.lock", "node-dc3-m8.lock"] {
        assert!(state.join(name).is_file(), "{name} is missing");
    }
}
