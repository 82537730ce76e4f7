//! What TLS costs a node: gRPC `StreamIds` IDs/s over TLS against
//! cleartext, from the same build.
//!
//! ```text
//! bench/tls.sh                                      # builds, runs this and wrk
//! target/release/tls certs DIR                      # ca.pem, node.crt, node.key in DIR
//! target/release/tls grpc SNOWMINT DIR [SECONDS] [ROUNDS]
//! target/release/tls builds BEFORE AFTER [SECONDS] [ROUNDS]   # bench/limits.sh
//! ```
//!
//! `grpc` starts two `snowmint serve --grpc-listen` nodes of the release
//! binary `SNOWMINT` (nodes 0/1 and 0/2, fresh state directories), one in
//! cleartext and one with the certificate of `DIR`, and reads one
//! `StreamIds` (batch 4096, until cancelled) from each in turn, `ROUNDS`
//! times `SECONDS` each (default 3 x 5 s), in one client process with a
//! runtime of one worker thread. The ratio TLS : cleartext is taken in
//! each round (same minute, same load on the machine) and its median
//! reported. `builds` does the same with two cleartext nodes of two
//! builds (before and after a change). Nothing here is a test.

use std::path::Path;
use std::process::{Child, Command, ExitCode, Stdio};
use std::time::{Duration, Instant};

use snowmint_client::proto::StreamIdsRequest;
use snowmint_client::proto::id_service_client::IdServiceClient;
use tonic::transport::{Certificate, ClientTlsConfig, Endpoint};

/// The format's ceiling for one node: 4096 IDs per millisecond.
const CEILING: f64 = 4_096_000.0;

/// A running `snowmint serve`, killed on drop.
struct Node {
    child: Child,
    grpc: String,
    _state: tempfile::TempDir,
}

impl Drop for Node {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn start(binary: &str, machine: u32, tls: Option<&Path>) -> Node {
    let state = tempfile::tempdir().expect("a temporary directory");
    let mut command = Command::new(binary);
    command
        .args([
            "serve",
            "--listen",
            "127.0.0.1:0",
            "--grpc-listen",
            "127.0.0.1:0",
        ])
        .args(["--datacenter", "0", "--machine", &machine.to_string()])
        .arg("--state-dir")
        .arg(state.path())
        .env("SNOWMINT_LOG", "warn")
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit());
    if let Some(dir) = tls {
        command
            .arg("--tls-cert")
            .arg(dir.join("node.crt"))
            .arg("--tls-key")
            .arg(dir.join("node.key"));
    }
    let mut child = command.spawn().expect("running snowmint serve");
    let stdout = child.stdout.take().unwrap();
    let mut grpc = None;
    for line in std::io::BufRead::lines(std::io::BufReader::new(stdout)) {
        let line = line.expect("snowmint serve's output");
        if let Some(address) = line.strip_prefix("gRPC listening on ") {
            grpc = Some(address.to_owned());
            break;
        }
    }
    Node {
        child,
        grpc: grpc.expect("snowmint serve said where gRPC listens"),
        _state: state,
    }
}

/// IDs/s of one `StreamIds` read for `seconds`, every batch checked to
/// increase.
async fn stream(endpoint: &str, ca: Option<&str>, seconds: u64) -> f64 {
    let mut builder = Endpoint::from_shared(endpoint.to_owned()).unwrap();
    if let Some(ca) = ca {
        builder = builder
            .tls_config(ClientTlsConfig::new().ca_certificate(Certificate::from_pem(ca)))
            .unwrap();
    }
    let channel = builder.connect().await.expect("a channel to the node");
    let mut stream = IdServiceClient::new(channel)
        .stream_ids(StreamIdsRequest {
            batch: 4096,
            total: 0,
        })
        .await
        .expect("StreamIds")
        .into_inner();
    // The first batch opens the stream; counting starts after it.
    let mut last = stream.message().await.unwrap().unwrap().ids[4095];
    let started = Instant::now();
    let until = started + Duration::from_secs(seconds);
    let mut ids = 0u64;
    while Instant::now() < until {
        let batch = stream.message().await.unwrap().expect("the stream goes on");
        assert!(batch.ids[0] > last, "IDs did not increase");
        last = *batch.ids.last().unwrap();
        ids += batch.ids.len() as u64;
    }
    ids as f64 / started.elapsed().as_secs_f64()
}

fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    values[values.len() / 2]
}

fn grpc(binary: &str, dir: &Path, seconds: u64, rounds: usize) {
    let ca = std::fs::read_to_string(dir.join("ca.pem")).expect("DIR/ca.pem (tls certs DIR)");
    let plain = start(binary, 1, None);
    let secure = start(binary, 2, Some(dir));
    compare(
        ("cleartext", &plain, None),
        ("TLS", &secure, Some(&ca)),
        seconds,
        rounds,
    );
}

/// Two builds side by side, both in cleartext: what a change to the
/// node costs a stream.
fn builds(before: &str, after: &str, seconds: u64, rounds: usize) {
    let old = start(before, 1, None);
    let new = start(after, 2, None);
    compare(
        ("before", &old, None),
        ("after", &new, None),
        seconds,
        rounds,
    );
}

/// Reads one `StreamIds` from node `a`, then from node `b`, `rounds`
/// times, and prints each round's IDs/s and ratio b : a, and the medians.
fn compare(
    (a_name, a, a_ca): (&str, &Node, Option<&str>),
    (b_name, b, b_ca): (&str, &Node, Option<&str>),
    seconds: u64,
    rounds: usize,
) {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap();
    let mut ratios = Vec::new();
    let (mut a_runs, mut b_runs) = (Vec::new(), Vec::new());
    println!("StreamIds (batch 4096), IDs/s per round: {a_name}, {b_name}; {b_name} : {a_name}");
    for round in 1..=rounds {
        let (x, y) = runtime.block_on(async {
            let x = stream(&a.grpc, a_ca, seconds).await;
            let y = stream(&b.grpc, b_ca, seconds).await;
            (x, y)
        });
        println!("round {round}: {x:.0} {y:.0}; {:.1}%", 100.0 * y / x);
        ratios.push(y / x);
        a_runs.push(x);
        b_runs.push(y);
    }
    let (x, y) = (median(a_runs), median(b_runs));
    println!();
    println!("| StreamIds, one node | IDs/s (median round) | of 4,096,000 |");
    println!("|---|---|---|");
    println!("| {a_name} | {x:.0} | {:.1}% |", 100.0 * x / CEILING);
    println!("| {b_name} | {y:.0} | {:.1}% |", 100.0 * y / CEILING);
    println!();
    println!(
        "{b_name} : {a_name} = {:.1}% (median of the per-round ratios)",
        100.0 * median(ratios)
    );
}

/// A CA (`DIR/ca.pem`) and a node certificate for `127.0.0.1` and
/// `localhost` signed by it (`DIR/node.crt`, `DIR/node.key`), ECDSA P-256.
fn certs(dir: &Path) {
    use rcgen::{BasicConstraints, CertificateParams, DnType, IsCa, Issuer, KeyPair};
    // Distinct names: a certificate whose subject is its issuer's reads
    // as self-signed.
    let name = |common_name: &str| {
        let mut name = rcgen::DistinguishedName::new();
        name.push(DnType::CommonName, common_name);
        name
    };
    let ca_key = KeyPair::generate().expect("an ECDSA key");
    let mut ca = CertificateParams::default();
    ca.distinguished_name = name("snowmint bench CA");
    ca.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    let ca_pem = ca.self_signed(&ca_key).expect("a CA certificate").pem();
    let issuer = Issuer::new(ca, ca_key);
    let key = KeyPair::generate().expect("an ECDSA key");
    let mut node = CertificateParams::new(vec!["127.0.0.1".to_owned(), "localhost".to_owned()])
        .expect("valid names");
    node.distinguished_name = name("snowmint bench node");
    let node = node.signed_by(&key, &issuer).expect("a node certificate");
    std::fs::write(dir.join("ca.pem"), ca_pem).expect("writing ca.pem");
    std::fs::write(dir.join("node.crt"), node.pem()).expect("writing node.crt");
    std::fs::write(dir.join("node.key"), key.serialize_pem()).expect("writing node.key");
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args
        .iter()
        .map(String::as_str)
        .collect::<Vec<_>>()
        .as_slice()
    {
        ["certs", dir] => {
            certs(Path::new(dir));
            ExitCode::SUCCESS
        }
        ["grpc", binary, dir, rest @ ..] => {
            let seconds = rest.first().map_or(5, |s| s.parse().expect("SECONDS"));
            let rounds = rest.get(1).map_or(3, |s| s.parse().expect("ROUNDS"));
            grpc(binary, Path::new(dir), seconds, rounds);
            ExitCode::SUCCESS
        }
        ["builds", before, after, rest @ ..] => {
            let seconds = rest.first().map_or(5, |s| s.parse().expect("SECONDS"));
            let rounds = rest.get(1).map_or(3, |s| s.parse().expect("ROUNDS"));
            builds(before, after, seconds, rounds);
            ExitCode::SUCCESS
        }
        _ => {
            eprintln!(
                "usage: tls certs DIR | tls grpc SNOWMINT DIR [SECONDS] [ROUNDS] | tls builds BEFORE AFTER [SECONDS] [ROUNDS]"
            );
            ExitCode::from(2)
        }
    }
}
