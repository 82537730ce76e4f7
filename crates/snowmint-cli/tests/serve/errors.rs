//! What `snowmint serve` says when it cannot work: one sentence for the
//! person reading it, with the details in the log rather than in answers
//! to clients.

use std::time::Duration;

use snowmint_test_support::binary::{Service, run_to_end};
use snowmint_test_support::net::free_port;
use snowmint_test_support::temp::temp_dir;
use snowmint_test_support::wait::wait_until;

/// The `snowmint` binary under test.
const SNOWMINT: &str = env!("CARGO_BIN_EXE_snowmint");

/// A loopback port nothing listens on (free a moment ago).
fn closed_port() -> u16 {
    free_port()
}

/// With the coordinator unreachable, every client's `no_claim` answer is
/// a sentence naming the coordinator and the system's words; tonic's
/// error, with its Rust debug form, goes only to the log.
#[test]
fn no_claim_for_an_unreachable_coordinator_is_a_sentence() {
    let home = temp_dir("unreachable");
    let url = format!("etcd://127.0.0.1:{}", closed_port());
    let state = home.path().join("state");
    let service = Service::start(
        SNOWMINT,
        home.path(),
        &[
            "--coordinator",
            &url,
            "--state-dir",
            state.to_str().unwrap(),
        ],
        &[],
    );
    let sentence = format!("cannot reach the coordinator {url} (connection refused); retrying");
    // The first attempt fails at once; the limit only guards against a hang.
    let what = "a no_claim reason past starting";
    let message = wait_until(what, Duration::from_secs(60), || {
        let answer = service.connect().get("/v1/id").unwrap();
        assert_eq!(answer.status, 503, "{}", answer.body);
        let body: serde_json::Value = serde_json::from_str(&answer.body).unwrap();
        assert_eq!(body["error"]["code"], "no_claim", "{body}");
        let message = body["error"]["message"].as_str().unwrap().to_owned();
        (!message.contains("starting")).then_some(message)
    });
    assert!(message.ends_with(&sentence), "{message}");
    assert_eq!(message.matches(&url).count(), 1, "{message}");
    for dump in ["{", "Error(", "tonic", "source:", "os error"] {
        assert!(!message.contains(dump), "{dump:?} in {message:?}");
    }
    let ready = service.connect().get("/readyz").unwrap();
    assert_eq!(ready.status, 503);
    assert!(ready.body.contains(&sentence), "{}", ready.body);
    // The details are in the log, for the operator: written just after the
    // node is fenced, so a reader may see the reason a moment before them.
    wait_until("the details in the log", Duration::from_secs(10), || {
        service.log().contains("ConnectionRefused").then_some(())
    });
    // Stopped, it says that it held no claim, rather than that it released
    // one.
    let (status, log) = service.terminate();
    assert!(status.success(), "{status}: {log}");
    assert!(
        log.contains("stopped; it held no claim, so none is released"),
        "{log}"
    );
}

/// `--state-dir` naming a file: one sentence that names the path and what
/// is wrong, nothing said twice.
#[test]
fn a_state_dir_that_is_a_file_is_named() {
    let home = temp_dir("state-file");
    let file = home.path().join("state");
    std::fs::write(&file, "not a directory\n").unwrap();
    let file = file.to_str().unwrap();
    let (status, stdout, stderr) = run_to_end(
        SNOWMINT,
        home.path(),
        &["--datacenter", "1", "--machine", "2", "--state-dir", file],
        &[],
    );
    assert!(!status.success(), "started with a file as state directory");
    assert!(stdout.is_empty(), "{stdout}");
    let error = stderr
        .lines()
        .find(|line| line.starts_with("error: "))
        .unwrap_or_else(|| panic!("no error line in {stderr}"));
    assert_eq!(
        error,
        format!("error: state directory {file} is not a directory (it is a file)")
    );
}
