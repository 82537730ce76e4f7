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

/// A fixed node of several slots (`--slots-per-node`) locks every one of
/// them: while machines 6 and 7 serve as one node, a node on machine 7
/// alone, or a block 4-7 over them, refuses to start naming the slot held
/// and the holder; a block beside it (8-9) serves. In Sonyflake's layout
/// (256 IDs a 10 ms tick) a batch of 512 takes every sequence number in
/// both machines, in increasing order.
#[test]
fn a_fixed_node_of_two_slots_locks_both_and_issues_from_both() {
    let home = temp_dir("lock-two-slots");
    let state = home.path().join("state");
    let state_arg = state.to_str().unwrap();
    let node = |machine: &'static str, slots: &'static str| {
        vec![
            "--layout",
            "sonyflake",
            "--machine",
            machine,
            "--slots-per-node",
            slots,
            "--state-dir",
            state_arg,
        ]
    };
    let pair = Service::start(SNOWMINT, home.path(), &node("6", "2"), &[]);
    let batch = ids(&pair, 512);
    assert!(batch.windows(2).all(|w| w[0] < w[1]), "increasing");
    let machines: HashSet<u64> = batch.iter().map(|id| id & 0xffff).collect();
    assert_eq!(machines, HashSet::from([6, 7]));
    // The first tick of the batch: sequence 0 in machine 6, then in 7...
    let first_tick: Vec<(u64, u64)> = batch
        .iter()
        .take_while(|&&id| id >> 24 == batch[0] >> 24)
        .map(|id| ((id >> 16) & 0xff, id & 0xffff))
        .collect();
    let order: Vec<(u64, u64)> = (0..256)
        .flat_map(|sequence| [(sequence, 6), (sequence, 7)])
        .collect();
    let start = order.iter().position(|p| *p == first_tick[0]).unwrap();
    assert_eq!(first_tick[..], order[start..start + first_tick.len()]);

    // Refused at the first slot held: 7 for machine 7 alone, 6 for 4-7.
    for (machine, slots, held) in [("7", "1", "machine 7"), ("4", "4", "machine 6")] {
        let (status, _, stderr) = run_to_end(SNOWMINT, home.path(), &node(machine, slots), &[]);
        assert_eq!(status.code(), Some(1), "{stderr}");
        for part in [held, &format!("process {}", pair.pid())] {
            assert!(stderr.contains(part), "{part:?} is missing:\n{stderr}");
        }
    }
    let beside = Service::start(SNOWMINT, home.path(), &node("8", "2"), &[]);
    let theirs: HashSet<u64> = ids(&beside, 512).iter().map(|id| id & 0xffff).collect();
    assert_eq!(theirs, HashSet::from([8, 9]));
    assert!(
        ids(&pair, 10)
            .iter()
            .all(|id| [6, 7].contains(&(id & 0xffff)))
    );
}
