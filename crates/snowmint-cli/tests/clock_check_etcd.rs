//! The clock check of `snowmint serve` on etcd (which keeps no clock, so
//! the peers decide): three real nodes, one of them under libfaketime 3 s
//! ahead. It claims no slot and says why, naming the offset and the two
//! peers it asked; the other two, which ask each other, stay in range.
//! Its clock is then put right through libfaketime's control file, and it
//! claims. The figures are printed (`--nocapture`).

use std::path::Path;
use std::time::{Duration, Instant};

use serde_json::Value;
use snowmint_test_support::binary::Service;
use snowmint_test_support::faketime::libfaketime;
use snowmint_test_support::servers::CoordinatorServer;
use snowmint_test_support::servers::etcd::EtcdServer;
use snowmint_test_support::temp::temp_dir;
use snowmint_test_support::wait::eventually;

const LIMIT: Duration = Duration::from_secs(60);

/// Writes libfaketime's offset file (`+3.000`), replacing it whole, so
/// that a reading never sees half a file.
fn set_offset(file: &Path, offset_ms: i64) {
    let partial = file.with_extension("partial");
    std::fs::write(&partial, format!("{:+.3}\n", offset_ms as f64 / 1000.0)).unwrap();
    std::fs::rename(&partial, file).unwrap();
}

/// `/v1/node` once its claim engine is in `state`.
async fn in_state(node: &Service, state: &str) -> Value {
    eventually(&format!("the claim state {state:?}"), LIMIT, || async {
        let described = node.json("/v1/node");
        (described["coordinator"]["state"] == state).then_some(described)
    })
    .await
}

/// The value of the metric line that starts with `name` (labels included).
fn metric(text: &str, name: &str) -> f64 {
    text.lines()
        .find_map(|line| line.strip_prefix(name)?.strip_prefix(' '))
        .unwrap_or_else(|| panic!("no {name} in:\n{text}"))
        .trim()
        .parse()
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_node_three_seconds_ahead_claims_nothing_until_its_clock_is_right() {
    let cluster = EtcdServer::start().await;
    let url = format!("etcd://{}", cluster.client_addr());
    let home = temp_dir("clock-check");
    let start = |name: &str, env: &[(&str, &str)]| {
        let state_dir = home.path().join(format!("state-{name}"));
        Service::start(
            env!("CARGO_BIN_EXE_snowmint"),
            home.path(),
            &[
                "--coordinator",
                &url,
                "--fleet",
                "clocks",
                "--claim-ttl",
                "2s",
                "--max-clock-skew",
                "1s",
                "--clock-check-every",
                "1s",
                "--state-dir",
                state_dir.to_str().unwrap(),
            ],
            env,
        )
    };
    let a = start("a", &[]);
    in_state(&a, "held").await;
    let b = start("b", &[]);
    in_state(&b, "held").await;

    let clock_file = home.path().join("clock-c");
    set_offset(&clock_file, 3_000);
    let preload = libfaketime().display().to_string();
    let clock_path = clock_file.display().to_string();
    let started = Instant::now();
    let c = start(
        "c",
        &[
            ("LD_PRELOAD", &preload),
            ("FAKETIME_TIMESTAMP_FILE", &clock_path),
            // Read the file at every reading, so that putting the clock
            // right takes effect at once.
            ("FAKETIME_NO_CACHE", "1"),
            // Only the wall clock moves; timers keep real time.
            ("FAKETIME_DONT_FAKE_MONOTONIC", "1"),
            ("DONT_FAKE_MONOTONIC", "1"),
        ],
    );
    let refused = in_state(&c, "clock_skew").await;
    let refused_after = started.elapsed();
    let reason = refused["reason"].as_str().unwrap().to_owned();
    let check = &refused["coordinator"]["clock_check"];
    let offset = check["offset_ms"].as_i64().unwrap();
    let error = check["error_ms"].as_i64().unwrap();
    assert!((2_800..=3_200).contains(&offset), "{refused}");
    assert!(
        reason.starts_with(&format!(
            "this node's clock is {offset} ms ahead of 2 of the 2 clocks it was checked against, more than the 1s allowed"
        )),
        "{reason}"
    );
    // Both peers are named, with their addresses.
    for peer in [&a, &b] {
        assert!(
            reason.contains(&format!("({})", peer.address)),
            "{reason} names no {}",
            peer.address
        );
    }
    assert_eq!(refused["ready"], false);
    assert_eq!(refused["slot"], Value::Null);
    let readyz = c.connect().get("/readyz").unwrap();
    assert_eq!(readyz.status, 503);
    assert!(
        readyz.body.contains("ms ahead of 2 of the 2 clocks"),
        "{}",
        readyz.body
    );
    let metrics = c.connect().get("/metrics").unwrap().body;
    assert_eq!(metric(&metrics, "snowmint_clock_skewed"), 1.0);
    assert_eq!(
        metric(&metrics, "snowmint_clock_sources{kind=\"peer\"}"),
        2.0
    );
    assert_eq!(
        metric(&metrics, "snowmint_clock_sources{kind=\"coordinator\"}"),
        0.0
    );
    assert_eq!(metric(&metrics, "snowmint_clock_offset_ms"), offset as f64);
    assert_eq!(
        metric(&metrics, "snowmint_claim_state{state=\"clock_skew\"}"),
        1.0
    );

    // The two sound nodes ask each other (C holds no slot): in range.
    let mut peers = Vec::new();
    for peer in [&a, &b] {
        let described = eventually("a peer's clock check", LIMIT, || async {
            let described = peer.json("/v1/node");
            let check = &described["coordinator"]["clock_check"];
            (check["readings"].as_array().is_some_and(|r| r.len() == 1)).then_some(described)
        })
        .await;
        let check = described["coordinator"]["clock_check"].clone();
        assert_eq!(check["skewed"], false, "{check}");
        assert!(check["offset_ms"].as_i64().unwrap().abs() < 200, "{check}");
        assert_eq!(described["coordinator"]["state"], "held");
        peers.push(check);
    }

    // The clock put right: C claims, and issues.
    let fixed = Instant::now();
    set_offset(&clock_file, 0);
    let held = in_state(&c, "held").await;
    let claimed_after = fixed.elapsed();
    let check = &held["coordinator"]["clock_check"];
    assert_eq!(check["skewed"], false, "{held}");
    assert!(check["offset_ms"].as_i64().unwrap().abs() < 200, "{held}");
    let id = eventually("an ID from the node put right", LIMIT, || async {
        let response = c.connect().get("/v1/id").unwrap();
        (response.status == 200).then_some(response.body)
    })
    .await;
    println!(
        "clock check on etcd, 3 nodes, one 3 s ahead: refused {} ms after start with offset {offset} ± {error} ms \
         against 2 peers ({reason}); the sound nodes measured {} and {}; after the clock was put right it claimed in {} ms and issued {id}",
        refused_after.as_millis(),
        peers[0]["readings"][0],
        peers[1]["readings"][0],
        claimed_after.as_millis(),
    );
}
