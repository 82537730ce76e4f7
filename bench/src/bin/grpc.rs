//! IDs delivered to one client process over loopback by the gRPC API, next
//! to HTTP's `/v1/ids?count=4096` of the same build, and the Rust client's
//! own costs.
//!
//! ```text
//! bench/grpc.sh                    # builds the release binaries, runs this
//! target/release/grpc SNOWMINT [SECONDS]   # default 5 s per measurement
//! ```
//!
//! Starts two `snowmint serve --grpc-listen` nodes (release binary
//! `SNOWMINT`, nodes 0/1 and 0/2, fresh state directories) and measures, in
//! this one process:
//!
//! 1. `StreamIds` (batch 4096, until cancelled) from one node: IDs/s
//!    received and checked (strictly increasing), against the format's
//!    ceiling of 4,096,000 IDs/s per node;
//! 2. the same from both nodes at once (one stream each);
//! 3. HTTP `GET /v1/ids?count=4096` on 8 keep-alive connections to one
//!    node: IDs/s;
//! 4. the client's `next_id` (one node, `max_age` 100 ms, batch 4096):
//!    ns per ID from a warm buffer, and amortized over a run as fast as it
//!    goes, refills included (bounded by what one node makes);
//! 5. a cold `NextIds(count = 1)` round trip, one at a time: p50, p99;
//! 6. `StreamIds` from a third node that holds two slots
//!    (`--slots-per-node 2`, machines 4 and 5) against one of one slot,
//!    measured one after the other in rounds, and the lead (how far the
//!    node's IDs ran ahead of its clock) that `/v1/node` reports after.
//!
//! Prints a markdown table; nothing here is a test.

use std::process::{Child, Command, ExitCode, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use snowmint_client::Client;
use snowmint_client::proto::id_service_client::IdServiceClient;
use snowmint_client::proto::{NextIdsRequest, StreamIdsRequest};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::TcpStream;
use tonic::transport::Channel;

/// The format's ceiling for one node: 4096 IDs per millisecond.
const CEILING: f64 = 4_096_000.0;

/// A running `snowmint serve`, killed on drop.
struct Node {
    child: Child,
    http: String,
    grpc: String,
    _state: tempfile::TempDir,
}

impl Drop for Node {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn start(binary: &str, machine: u32) -> Node {
    start_with(binary, machine, 1)
}

/// A node holding `slots` slots from machine `machine`.
fn start_with(binary: &str, machine: u32, slots: u32) -> Node {
    let state = tempfile::tempdir().expect("a temporary directory");
    let mut child = Command::new(binary)
        .args([
            "serve",
            "--listen",
            "127.0.0.1:0",
            "--grpc-listen",
            "127.0.0.1:0",
        ])
        .args(["--datacenter", "0", "--machine", &machine.to_string()])
        .args(["--slots-per-node", &slots.to_string()])
        .arg("--state-dir")
        .arg(state.path())
        .env("SNOWMINT_LOG", "warn")
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("running snowmint serve");
    let stdout = child.stdout.take().unwrap();
    let mut lines = std::io::BufRead::lines(std::io::BufReader::new(stdout));
    let (mut http, mut grpc) = (None, None);
    while http.is_none() {
        let line = lines
            .next()
            .expect("snowmint serve ended before listening")
            .unwrap();
        if let Some(address) = line.strip_prefix("gRPC listening on ") {
            grpc = Some(address.to_owned());
        } else if let Some(address) = line.strip_prefix("listening on http://") {
            http = Some(address.to_owned());
        }
    }
    Node {
        child,
        http: http.unwrap(),
        grpc: grpc.expect("no gRPC address"),
        _state: state,
    }
}

async fn stub(node: &Node) -> IdServiceClient<Channel> {
    let channel = Channel::from_shared(node.grpc.clone())
        .unwrap()
        .tcp_nodelay(true)
        .connect()
        .await
        .expect("connecting to the node");
    IdServiceClient::new(channel)
}

/// IDs received from `node`'s stream during `length`, checked.
async fn stream_from(node: &Node, length: Duration, total: Arc<AtomicU64>) {
    let mut client = stub(node).await;
    let mut stream = client
        .stream_ids(StreamIdsRequest {
            batch: 4096,
            total: 0,
        })
        .await
        .expect("StreamIds")
        .into_inner();
    let end = Instant::now() + length;
    let mut last = 0u64;
    while Instant::now() < end {
        let batch = stream
            .message()
            .await
            .expect("a batch")
            .expect("the stream ended");
        assert!(batch.ids[0] > last, "not increasing");
        last = *batch.ids.last().unwrap();
        total.fetch_add(batch.ids.len() as u64, Ordering::Relaxed);
    }
}

/// IDs/s from `nodes`, one stream each, all at once.
async fn streams(nodes: &[&Node], length: Duration) -> f64 {
    let total = Arc::new(AtomicU64::new(0));
    let started = Instant::now();
    let tasks: Vec<_> = nodes
        .iter()
        .map(|node| stream_from(node, length, Arc::clone(&total)))
        .collect();
    futures_join(tasks).await;
    total.load(Ordering::Relaxed) as f64 / started.elapsed().as_secs_f64()
}

async fn futures_join<F: std::future::Future<Output = ()>>(tasks: Vec<F>) {
    // Polled together in this task: the measurement is one client process,
    // one task per node would only add scheduling.
    let mut tasks: Vec<_> = tasks.into_iter().map(Box::pin).collect();
    std::future::poll_fn(|cx| {
        tasks.retain_mut(|task| task.as_mut().poll(cx).is_pending());
        if tasks.is_empty() {
            std::task::Poll::Ready(())
        } else {
            std::task::Poll::Pending
        }
    })
    .await;
}

/// One keep-alive HTTP/1.1 connection asking for batches until `end`;
/// returns the IDs received.
async fn http_batches(address: &str, end: Instant) -> u64 {
    let stream = TcpStream::connect(address)
        .await
        .expect("connecting over HTTP");
    stream.set_nodelay(true).unwrap();
    let mut stream = BufReader::new(stream);
    let request = format!("GET /v1/ids?count=4096 HTTP/1.1\r\nHost: {address}\r\n\r\n");
    let mut ids = 0;
    let mut body = Vec::new();
    while Instant::now() < end {
        stream
            .get_mut()
            .write_all(request.as_bytes())
            .await
            .unwrap();
        let mut length = None;
        let mut line = String::new();
        loop {
            line.clear();
            stream.read_line(&mut line).await.unwrap();
            if line == "\r\n" {
                break;
            }
            if line.starts_with("HTTP/1.1 ") {
                assert!(line.starts_with("HTTP/1.1 200"), "{line}");
            }
            if let Some(value) = line.to_ascii_lowercase().strip_prefix("content-length:") {
                length = Some(value.trim().parse::<usize>().unwrap());
            }
        }
        body.resize(length.expect("a Content-Length"), 0);
        stream.read_exact(&mut body).await.unwrap();
        // {"ids":["...","...",...]}: one comma fewer than IDs.
        ids += body.iter().filter(|&&b| b == b',').count() as u64 + 1;
    }
    ids
}

async fn http_rate(node: &Node, length: Duration) -> f64 {
    let end = Instant::now() + length;
    let started = Instant::now();
    let tasks: Vec<_> = (0..8)
        .map(|_| {
            let address = node.http.clone();
            tokio::spawn(async move { http_batches(&address, end).await })
        })
        .collect();
    let mut ids = 0;
    for task in tasks {
        ids += task.await.unwrap();
    }
    ids as f64 / started.elapsed().as_secs_f64()
}

/// The largest lead the node has issued with since it started, from
/// `/v1/node` (`lead_ms.max`).
async fn lead_max_ms(node: &Node) -> f64 {
    let mut stream = TcpStream::connect(&node.http)
        .await
        .expect("connecting over HTTP");
    let request = format!(
        "GET /v1/node HTTP/1.1\r\nHost: {}\r\nConnection: close\r\n\r\n",
        node.http
    );
    stream.write_all(request.as_bytes()).await.unwrap();
    let mut answer = String::new();
    stream.read_to_string(&mut answer).await.unwrap();
    // `"lead_ms":{"current":0,"max":N}`: the digits after its "max":.
    let lead = answer
        .split("\"lead_ms\"")
        .nth(1)
        .and_then(|rest| rest.split("\"max\":").nth(1))
        .expect("lead_ms.max in /v1/node");
    lead.chars()
        .take_while(|c| c.is_ascii_digit() || *c == '.')
        .collect::<String>()
        .parse()
        .expect("lead_ms.max is a number")
}

/// ns per `next_id`: from a warm buffer (2000 calls at a time, each run
/// started only when the buffer holds more than that), and amortized over
/// a long run that includes waiting for refills; the client's counters of
/// the long run.
async fn next_id_cost(node: &Node, length: Duration) -> (f64, f64, snowmint_client::Stats) {
    let client = Client::builder()
        .endpoints([node.grpc.clone()])
        .build()
        .await
        .unwrap();
    let mut sink = 0u64;
    // Warm: the layout is learned and the buffer filled.
    for _ in 0..10_000 {
        sink ^= client.next_id().await.unwrap();
    }
    let (mut warm_time, mut warm_ids) = (Duration::ZERO, 0u64);
    let started = Instant::now();
    while started.elapsed() < length {
        if client.buffered() <= 2000 {
            tokio::task::yield_now().await;
            continue;
        }
        let run = Instant::now();
        for _ in 0..2000 {
            sink ^= client.next_id().await.unwrap();
        }
        warm_time += run.elapsed();
        warm_ids += 2000;
    }
    let before = client.stats();
    let started = Instant::now();
    let mut n = 0u64;
    while started.elapsed() < length {
        for _ in 0..1000 {
            sink ^= client.next_id().await.unwrap();
        }
        n += 1000;
    }
    std::hint::black_box(sink);
    let amortized = started.elapsed().as_nanos() as f64 / n as f64;
    let after = client.stats();
    let delta = snowmint_client::Stats {
        buffer_hits: after.buffer_hits - before.buffer_hits,
        refills: after.refills - before.refills,
        stale_dropped: after.stale_dropped - before.stale_dropped,
        failovers: after.failovers - before.failovers,
        round_trips: after.round_trips - before.round_trips,
    };
    (
        warm_time.as_nanos() as f64 / warm_ids as f64,
        amortized,
        delta,
    )
}

/// p50 and p99 of a `NextIds(count = 1)` round trip, in microseconds.
async fn round_trip(node: &Node, calls: usize) -> (f64, f64) {
    let mut client = stub(node).await;
    let mut times = Vec::with_capacity(calls);
    for _ in 0..calls {
        let started = Instant::now();
        client
            .next_ids(NextIdsRequest { count: 1 })
            .await
            .expect("NextIds");
        times.push(started.elapsed().as_nanos() as f64 / 1000.0);
    }
    times.sort_by(f64::total_cmp);
    let at = |q: f64| times[((times.len() as f64 - 1.0) * q) as usize];
    (at(0.5), at(0.99))
}

fn main() -> ExitCode {
    let mut args = std::env::args().skip(1);
    let Some(binary) = args.next() else {
        eprintln!("usage: grpc SNOWMINT_BINARY [SECONDS]");
        return ExitCode::from(2);
    };
    let seconds: u64 = args.next().map_or(5, |s| s.parse().expect("SECONDS"));
    let length = Duration::from_secs(seconds);
    // One worker: the client's background refills run there while the
    // measuring loop runs on this thread, as in an application.
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap();
    let (a, b) = (start(&binary, 1), start(&binary, 2));
    let two_slots = start_with(&binary, 4, 2);
    runtime.block_on(async {
        // The nodes wait out their fresh high-water marks; let them settle.
        tokio::time::sleep(Duration::from_millis(500)).await;
        let one = streams(&[&a], length).await;
        let two = streams(&[&a, &b], length).await;
        let http = http_rate(&a, length).await;
        let (warm, amortized, stats) = next_id_cost(&a, length).await;
        let (p50, p99) = round_trip(&a, 20_000).await;
        // One slot against two, in alternating rounds, so that the
        // machine's load falls on both alike.
        let (mut k1, mut k2) = (Vec::new(), Vec::new());
        for _ in 0..3 {
            k1.push(streams(&[&a], length).await);
            k2.push(streams(&[&two_slots], length).await);
        }
        let median = |rates: &mut Vec<f64>| {
            rates.sort_by(f64::total_cmp);
            rates[rates.len() / 2]
        };
        let (k1, k2) = (median(&mut k1), median(&mut k2));
        let (lead_k1, lead_k2) = (lead_max_ms(&a).await, lead_max_ms(&two_slots).await);
        println!("| measurement | figure | ratio |");
        println!("|---|---|---|");
        println!(
            "| StreamIds, one node | {one:.0} IDs/s | {:.1}% of 4,096,000 |",
            100.0 * one / CEILING
        );
        println!(
            "| StreamIds, two nodes at once | {two:.0} IDs/s | {:.2}x one node |",
            two / one
        );
        println!(
            "| HTTP /v1/ids?count=4096, 8 connections, one node | {http:.0} IDs/s | {:.1}% of 4,096,000 |",
            100.0 * http / CEILING
        );
        println!("| client next_id, warm buffer | {warm:.1} ns/ID | runs of 2000 calls on a full buffer |");
        println!(
            "| client next_id, as fast as it goes | {amortized:.1} ns/ID ({:.0} IDs/s) | {} IDs, {} refills, {} stale dropped |",
            1e9 / amortized,
            stats.buffer_hits,
            stats.refills,
            stats.stale_dropped
        );
        println!("| NextIds(count=1) round trip | p50 {p50:.0} us, p99 {p99:.0} us | 20,000 calls in a row |");
        println!(
            "| StreamIds, one node of 1 slot (median of 3 rounds) | {k1:.0} IDs/s | {:.1}% of 4,096,000; lead max {lead_k1} ms |",
            100.0 * k1 / CEILING
        );
        println!(
            "| StreamIds, one node of 2 slots (median of 3 rounds) | {k2:.0} IDs/s | **{:.2}x** 1 slot, {:.1}% of 8,192,000; lead max {lead_k2} ms |",
            k2 / k1,
            100.0 * k2 / (2.0 * CEILING)
        );
    });
    ExitCode::SUCCESS
}
