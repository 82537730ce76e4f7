//! `snowmint serve` configuration: flags > environment > TOML file >
//! defaults, identities, bad values, and a clean stop on SIGTERM.

use snowmint_test_support::binary::{Service, run_to_end};

use crate::ids;
use snowmint_test_support::temp::temp_dir;

/// The `snowmint` binary under test.
const SNOWMINT: &str = env!("CARGO_BIN_EXE_snowmint");

fn node_of(service: &Service) -> (u64, u64, String) {
    let node = service.json("/v1/node");
    (
        node["datacenter"].as_u64().unwrap(),
        node["machine"].as_u64().unwrap(),
        node["layout"].as_str().unwrap().to_owned(),
    )
}

/// A flag beats the environment, which beats the file; the file's layout
/// is not hidden by the global `--layout` default.
#[test]
fn flags_beat_environment_beat_file() {
    let home = temp_dir("precedence");
    let file = home.path().join("snowmint.toml");
    std::fs::write(
        &file,
        "datacenter = 2\nmachine = 3\nlayout = \"discord\"\nstate_dir = \"state\"\n",
    )
    .unwrap();
    let file = file.to_str().unwrap();
    let state = home.path().join("state");
    let state = state.to_str().unwrap();
    let env = [("SNOWMINT_MACHINE", "4"), ("SNOWMINT_STATE_DIR", state)];

    let service = Service::start(
        SNOWMINT,
        home.path(),
        &["--config", file, "--machine", "5"],
        &env,
    );
    assert_eq!(node_of(&service), (2, 5, "discord".to_owned()));
    let log = service.log();
    assert!(log.contains("machine 5 (from --machine)"), "{log}");
    assert!(
        log.contains(&format!("datacenter 2 (from datacenter in {file})")),
        "{log}"
    );
    drop(service);

    let service = Service::start(SNOWMINT, home.path(), &["--config", file], &env);
    assert_eq!(node_of(&service), (2, 4, "discord".to_owned()));
    assert!(service.log().contains("machine 4 (from SNOWMINT_MACHINE)"));
    drop(service);

    let service = Service::start(
        SNOWMINT,
        home.path(),
        &["--state-dir", state],
        &[("SNOWMINT_CONFIG", file)],
    );
    assert_eq!(node_of(&service), (2, 3, "discord".to_owned()));
    drop(service);

    let service = Service::start(
        SNOWMINT,
        home.path(),
        &["--config", file, "--layout", "twitter"],
        &env,
    );
    assert_eq!(node_of(&service).2, "twitter");
}

/// Other families serve by their layout's node fields: `--machine` is
/// the lowest node field (CosId's 3-bit machine, Sonyflake's 16-bit one).
/// A JavaScript-safe node's IDs all stay below 2^53, where a JSON number
/// is still exact; a machine past the field's width is refused, naming
/// its range.
#[test]
fn other_families_serve_by_their_node_fields() {
    let home = temp_dir("families");
    // CosId's SafeJavaScriptSnowflakeId: time 41 | machine 3 | sequence 9.
    let safe = Service::start(
        SNOWMINT,
        home.path(),
        &["--layout", "cosid-safe-js", "--machine", "5"],
        &[],
    );
    assert_eq!(node_of(&safe), (0, 5, "cosid-safe-js".to_owned()));
    let mut all = Vec::new();
    for _ in 0..4 {
        all.extend(ids(&safe, 4096));
    }
    assert!(all.windows(2).all(|w| w[0] < w[1]), "strictly increasing");
    for &id in &all {
        assert!(id < 1 << 53, "{id} is not below 2^53");
        assert_eq!((id >> 9) & 7, 5, "the machine of {id}");
    }
    drop(safe);

    // Sonyflake: time 39 (10 ms) | sequence 8 | machine 16.
    let sonyflake = Service::start(
        SNOWMINT,
        home.path(),
        &["--layout", "sonyflake", "--machine", "513"],
        &[],
    );
    assert_eq!(node_of(&sonyflake), (0, 513, "sonyflake".to_owned()));
    let taken = ids(&sonyflake, 1000);
    assert!(taken.windows(2).all(|w| w[0] < w[1]), "strictly increasing");
    assert!(taken.iter().all(|id| id & 0xffff == 513), "{taken:?}");
    drop(sonyflake);

    let (status, _, stderr) = run_to_end(
        SNOWMINT,
        home.path(),
        &["--layout", "cosid-safe-js", "--machine", "8"],
        &[],
    );
    assert_eq!(status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("machine 8 is out of range (0..=7)"),
        "{stderr}"
    );
}

/// With nothing configured, a node does not start: two nodes started so
/// would issue the same IDs. It says how to give it an identity, and
/// neither binds nor writes anything; `--check` says the same.
#[test]
fn a_node_given_no_identity_is_refused() {
    let home = temp_dir("no-identity");
    for check in [&[][..], &["--check"][..]] {
        let (status, stdout, stderr) = run_to_end(SNOWMINT, home.path(), check, &[]);
        assert_eq!(status.code(), Some(2), "{check:?}: {stderr}");
        assert_eq!(stdout, "", "{check:?}");
        assert!(
            stderr.starts_with("error: no node identity is set: "),
            "{check:?}: {stderr}"
        );
        for way in [
            "--datacenter D --machine M",
            "--machine-from-hostname",
            "--coordinator URL",
        ] {
            assert!(stderr.contains(way), "{check:?}: {stderr}");
        }
    }
    assert!(!home.path().join(".local/state/snowmint").exists());
}

/// Given only a machine: datacenter 0 by default, the state directory
/// under HOME, all said in the first log line.
#[test]
fn defaults_are_stated_in_the_first_log_line() {
    let home = temp_dir("defaults");
    let service = Service::start(SNOWMINT, home.path(), &["--machine", "0"], &[]);
    let log = service.log();
    let first = log.lines().next().unwrap();
    let state_dir = home.path().join(".local/state/snowmint");
    assert!(first.contains("starting on 127.0.0.1:"), "{first}");
    assert!(
        first.contains("as datacenter 0 (default) machine 0 (from --machine)"),
        "{first}"
    );
    assert!(
        first.contains(&format!(
            "state directory {} (default)",
            state_dir.display()
        )),
        "{first}"
    );
    assert!(
        first.contains("layout twitter, clock policy refuse"),
        "{first}"
    );
    let node = service.json("/v1/node");
    assert_eq!(
        (node["datacenter"].as_u64(), node["machine"].as_u64()),
        (Some(0), Some(0))
    );
    assert_eq!(
        node["state_file"],
        state_dir.join("node-dc0-m0.mark").display().to_string()
    );
    service.json("/v1/id");
    assert!(state_dir.join("node-dc0-m0.mark").exists());
}

/// `--machine-from-hostname`: ids-45 is slot 45, datacenter 1 machine 13.
#[test]
fn identity_from_a_hostname_ordinal() {
    let home = temp_dir("hostname");
    let service = Service::start(
        SNOWMINT,
        home.path(),
        &["--machine-from-hostname", "--hostname", "ids-45"],
        &[],
    );
    let node = service.json("/v1/node");
    assert_eq!(
        (node["slot"].as_u64(), node["source"].as_str()),
        (Some(45), Some("hostname"))
    );
    assert_eq!(
        (node["datacenter"].as_u64(), node["machine"].as_u64()),
        (Some(1), Some(13))
    );
    drop(service);

    let service = Service::start(
        SNOWMINT,
        home.path(),
        &["--hostname", "web-7"],
        &[("SNOWMINT_MACHINE_FROM_HOSTNAME", "true")],
    );
    assert_eq!(service.json("/v1/node")["slot"].as_u64(), Some(7));
}

/// Bad settings stop the start with a message naming the value, the range
/// and where the value came from.
#[test]
fn bad_settings_are_reported() {
    let home = temp_dir("bad");
    let bad_file = home.path().join("bad.toml");
    std::fs::write(&bad_file, "machin = 3\n").unwrap();
    let bad_file = bad_file.to_str().unwrap();
    for (args, env, expected) in [
        (
            vec!["--datacenter", "32"],
            vec![],
            "datacenter 32 is out of range (0..=31) (from --datacenter)",
        ),
        (
            vec![],
            vec![("SNOWMINT_MACHINE", "-1")],
            "machine -1 is out of range (0..=31) (from SNOWMINT_MACHINE)",
        ),
        (
            vec!["--clock-policy", "never"],
            vec![],
            "unknown clock policy \"never\" (expected refuse, wait or borrow) (from --clock-policy)",
        ),
        (
            vec!["--machine-from-hostname", "--hostname", "ids"],
            vec![],
            "hostname \"ids\": it has no ordinal",
        ),
        (
            vec!["--coordinator", "etcd://127.0.0.1"],
            vec![],
            "coordinator URL \"etcd://127.0.0.1\" is invalid: endpoint \"127.0.0.1\" has no port (expected HOST:PORT)",
        ),
        (
            vec!["--claim-ttl", "500ms"],
            vec![("SNOWMINT_COORDINATOR", "zk://127.0.0.1:2181")],
            "claim_ttl 500ms is out of range (1s..=1h) (from --claim-ttl)",
        ),
        (
            vec!["--coordinator", "zk://127.0.0.1:2181", "--machine", "3"],
            vec![],
            "--coordinator conflicts with --machine: a node takes its identity from one place",
        ),
        (vec!["--config", bad_file], vec![], "unknown key \"machin\""),
    ] {
        let (status, stdout, stderr) = run_to_end(SNOWMINT, home.path(), &args, &env);
        assert!(!status.success(), "{args:?} started");
        assert!(stdout.is_empty(), "{stdout}");
        assert!(stderr.contains(expected), "{args:?}: {stderr}");
    }
}

/// SIGTERM: a clean exit, with the claim released.
#[test]
fn sigterm_stops_cleanly() {
    let home = temp_dir("sigterm");
    let service = Service::start(SNOWMINT, home.path(), &crate::ZERO, &[]);
    service.json("/v1/id");
    let (status, log) = service.terminate();
    assert!(status.success(), "{status}: {log}");
    assert!(log.contains("SIGTERM received"), "{log}");
    assert!(
        log.contains("stopped; the node's lock is released"),
        "{log}"
    );
}
