//! What `snowmint serve` says when it cannot work: one sentence for the
//! person reading it, with the details in the log rather than in answers
//! to clients.

mod serve_common;

use std::time::{Duration, Instant};

use serve_common::{Service, TempDir, run_to_end};

/// A loopback port nothing listens on (free a moment ago).
fn closed_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|listener| listener.local_addr())
        .expect("binding a free loopback port")
        .port()
}

/// With the coordinator unreachable, every client's `no_claim` answer is
/// a sentence naming the coordinator and the system's words; tonic's
/// error, with its Rust debug form, goes only to the log.
#[test]
fn no_claim_for_an_unreachable_coordinator_is_a_sentence() {
    let home = TempDir::new("unreachable");
    let url = format!("etcd://127.0.0.1:{}", closed_port());
    let state = home.path().join("state");
    let service = Service::start(
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
    let deadline = Instant::now() + Duration::from_secs(60);
    let message = loop {
        let answer = service.connect().get("/v1/id").unwrap();
        assert_eq!(answer.status, 503, "{}", answer.body);
        let body: serde_json::Value = serde_json::from_str(&answer.body).unwrap();
        assert_eq!(body["error"]["code"], "no_claim", "{body}");
        let message = body["error"]["message"].as_str().unwrap().to_owned();
        if !message.contains("starting") {
            break message;
        }
        assert!(
            Instant::now() < deadline,
            "still starting after 60 s: {message}"
        );
        std::thread::sleep(Duration::from_millis(50));
    };
    assert!(message.ends_with(&sentence), "{message}");
    assert_eq!(message.matches(&url).count(), 1, "{message}");
    for dump in ["{", "Error(", "tonic", "source:", "os error"] {
        assert!(!message.contains(dump), "{dump:?} in {message:?}");
    }
    let ready = service.connect().get("/readyz").unwrap();
    assert_eq!(ready.status, 503);
    assert!(ready.body.contains(&sentence), "{}", ready.body);
    // The details are in the log, for the operator.
    let log = service.log();
    assert!(log.contains("ConnectionRefused"), "{log}");
}

/// `--state-dir` naming a file: one sentence that names the path and what
/// is wrong, nothing said twice.
#[test]
fn a_state_dir_that_is_a_file_is_named() {
    let home = TempDir::new("state-file");
    let file = home.path().join("state");
    std::fs::write(&file, "not a directory\n").unwrap();
    let file = file.to_str().unwrap();
    let (status, stdout, stderr) = run_to_end(
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
