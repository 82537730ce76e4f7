//! The hostile-client findings of issue 24, replayed against the real
//! `snowmint serve` with its descriptor limit lowered to 128 (`prlimit`),
//! so that exhausting it takes seconds:
//!
//! 1. thousands of gRPC `StreamIds` calls opened with a huge window and
//!    never read;
//! 2. HTTP clients that pipeline requests and never read the answers;
//! 3. silent TCP connections to the gRPC port;
//!
//! and those of issue 34, on the memcached listener, which had its own
//! accept loop outside the connection cap (a flood of it took the
//! descriptors the state file needs):
//!
//! 4. silent connections to the memcached port;
//! 5. memcached clients that pipeline `gets` of many keys and never read.
//!
//! Under each attack a new client must keep getting `/healthz`, an ID over
//! HTTP, one over gRPC and one over memcached; the high-water mark must
//! keep being written (the node runs with a 100 ms mark step, so every
//! probe needs a fresh write, which needs a descriptor); the node's
//! resident memory must stay under a stated bound; and the limit that held
//! the attack off must show in `/metrics`
//! (`snowmint_limit_reached_total{limit=...}`). Each test prints its
//! figures (answers, RSS, descriptors), which the closing notes of the
//! issues quote.
//!
//! `SNOWMINT_REPLAY_BINARY=/path/to/snowmint` replays the attacks against
//! another build (an old one, for the "before" figures); the test then
//! fails where that build fails, after printing what it saw.

use std::io::{Read, Write};
use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use snowmint_client::proto::NextIdsRequest;
use snowmint_client::proto::id_service_client::IdServiceClient;
use snowmint_test_support::binary::Service;
use snowmint_test_support::hostile::{
    Attack, Horde, limit_descriptors, open_descriptors, rss_kib, try_get,
};
use snowmint_test_support::temp::temp_dir;

/// The `snowmint` binary under test.
const SNOWMINT: &str = env!("CARGO_BIN_EXE_snowmint");

/// The descriptor limit the node is held to, as in the review.
const DESCRIPTORS: u64 = 128;
/// How long one probe of a new client may wait for its answer: a liveness
/// bound (the node's deadlines are 2 s here), not a timing assertion.
const PROBE_LIMIT: Duration = Duration::from_secs(15);
/// Probes of a new client per attack.
const PROBES: usize = 6;
/// The bound on the node's resident memory under attack. Its parts: the
/// process at rest (about 15 MiB for this debug build), 96 connections'
/// buffers, and at most 256 calls in flight (the test's `--max-calls`),
/// each holding its queue of two batches and its HTTP/2 send buffer
/// (see docs/service.md, "Limits").
const RSS_BOUND_MIB: u64 = 160;

/// The build under test, and the flags it is started with beside the
/// addresses: an older build replayed gets only the ones it knows.
fn binary() -> (String, Vec<&'static str>) {
    let mut args = vec![
        "--datacenter",
        "0",
        "--machine",
        "0",
        "--request-timeout",
        "2s",
        "--mark-step",
        "100ms",
    ];
    match std::env::var("SNOWMINT_REPLAY_BINARY") {
        Ok(other) => (other, args),
        Err(_) => {
            args.extend(["--max-calls", "256"]);
            (SNOWMINT.to_owned(), args)
        }
    }
}

/// What a new client saw during an attack, and what the node cost.
#[derive(Debug, Default)]
struct Figures {
    healthz: usize,
    http_ids: usize,
    grpc_ids: usize,
    memcached_ids: usize,
    /// The high-water mark on disk before and after the attack, Unix ms.
    mark_before: i64,
    mark_after: i64,
    rss_start_kib: u64,
    rss_peak_kib: u64,
    descriptors_peak: usize,
    reopened: u64,
}

/// The listener an attack goes to.
#[derive(Debug, Clone, Copy)]
enum Target {
    Http,
    Grpc,
    Memcached,
}

/// The node's high-water mark on disk (datacenter 0, machine 0).
fn mark_on_disk(state: &std::path::Path) -> i64 {
    snowmint_fleet::MarkFile::for_node(state, snowmint::Layout::TWITTER, snowmint::Node::default())
        .read()
        .unwrap()
        .unwrap_or(0)
}

/// Starts a node with HTTP, gRPC and memcached, lowers its descriptor
/// limit, sets `connections` attackers on one of its listeners, and
/// probes it as a new client [`PROBES`] times; then stops the attack and
/// returns the figures with the node's `/metrics`.
fn replay(attack: Attack, target: Target, connections: usize, name: &str) -> (Figures, String) {
    let home = temp_dir("serve-limits");
    let state = home.path().join("state");
    let (binary, mut args) = binary();
    args.extend([
        "--grpc-listen",
        "127.0.0.1:0",
        "--memcached-listen",
        "127.0.0.1:0",
        "--state-dir",
        state.to_str().unwrap(),
    ]);
    let service = Service::start(&binary, home.path(), &args, &[]);
    let pid = service.pid();
    let grpc = service.grpc.expect("a gRPC address");
    let memcached = service.memcached.expect("a memcached address");
    // One ID before the attack, so that the mark is on disk.
    let first = try_get(service.address, "/v1/id", PROBE_LIMIT);
    assert!(matches!(first, Some((200, _))), "{first:?}");
    let mut figures = Figures {
        rss_start_kib: rss_kib(pid),
        mark_before: mark_on_disk(&state),
        ..Figures::default()
    };
    limit_descriptors(pid, DESCRIPTORS);

    let sampling = Arc::new(AtomicBool::new(true));
    let peak = Arc::new(AtomicU64::new(0));
    let peak_fds = Arc::new(AtomicU64::new(0));
    let sampler = {
        let (sampling, peak, peak_fds) = (sampling.clone(), peak.clone(), peak_fds.clone());
        std::thread::spawn(move || {
            while sampling.load(Ordering::Relaxed) {
                if std::fs::metadata(format!("/proc/{pid}")).is_err() {
                    return;
                }
                peak.fetch_max(rss_kib(pid), Ordering::Relaxed);
                peak_fds.fetch_max(open_descriptors(pid) as u64, Ordering::Relaxed);
                std::thread::sleep(Duration::from_millis(100));
            }
        })
    };

    let target = match target {
        Target::Http => service.address,
        Target::Grpc => grpc,
        Target::Memcached => memcached,
    };
    let horde = Horde::start(target, attack, connections);
    // Let the attack take hold before the first probe.
    std::thread::sleep(Duration::from_secs(3));
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    for probe in 0..PROBES {
        let started = Instant::now();
        let healthz = try_get(service.address, "/healthz", PROBE_LIMIT);
        let id = try_get(service.address, "/v1/id", PROBE_LIMIT);
        let grpc_id = runtime.block_on(grpc_next_id(grpc));
        let memcached_id = memcached_get(memcached);
        eprintln!(
            "{name}: probe {probe}: /healthz {:?}, /v1/id {:?}, gRPC NextIds {grpc_id:?}, memcached get {memcached_id:?} ({} ms)",
            healthz.as_ref().map(|(status, _)| *status),
            id.as_ref().map(|(status, body)| (*status, body.trim())),
            started.elapsed().as_millis()
        );
        figures.healthz += usize::from(matches!(healthz, Some((200, _))));
        figures.http_ids += usize::from(matches!(id, Some((200, _))));
        figures.grpc_ids += usize::from(grpc_id.is_ok());
        figures.memcached_ids += usize::from(memcached_id.is_ok());
        std::thread::sleep(Duration::from_millis(500));
    }
    figures.reopened = horde.stop();
    sampling.store(false, Ordering::Relaxed);
    sampler.join().unwrap();
    figures.rss_peak_kib = peak.load(Ordering::Relaxed);
    figures.descriptors_peak = peak_fds.load(Ordering::Relaxed) as usize;
    figures.mark_after = mark_on_disk(&state);
    let metrics = try_get(service.address, "/metrics", Duration::from_secs(60))
        .map(|(_, body)| body)
        .unwrap_or_default();
    eprintln!(
        "{name}: /healthz answered {} of {PROBES}, /v1/id {} of {PROBES}, gRPC NextIds {} of {PROBES}, \
         memcached get {} of {PROBES}; the mark on disk moved {} ms; \
         RSS {} MiB at start, {} MiB at the peak (bound {RSS_BOUND_MIB} MiB); \
         at most {} descriptors open of {DESCRIPTORS}; attackers reconnected {} times",
        figures.healthz,
        figures.http_ids,
        figures.grpc_ids,
        figures.memcached_ids,
        figures.mark_after - figures.mark_before,
        figures.rss_start_kib / 1024,
        figures.rss_peak_kib / 1024,
        figures.descriptors_peak,
        figures.reopened,
    );
    let log = service.log();
    assert!(!log.contains("panicked"), "the node panicked:\n{log}");
    (figures, metrics)
}

/// One `NextIds(1)` on a new connection, within [`PROBE_LIMIT`].
async fn grpc_next_id(address: SocketAddr) -> Result<u64, String> {
    let call = async {
        let channel = tonic::transport::Channel::from_shared(format!("http://{address}"))
            .map_err(|e| format!("endpoint: {e}"))?
            .connect()
            .await
            .map_err(|e| format!("connect: {e}"))?;
        let mut client = IdServiceClient::new(channel);
        let batch = client
            .next_ids(NextIdsRequest { count: 1 })
            .await
            .map_err(|status| format!("{:?}: {}", status.code(), status.message()))?;
        batch
            .into_inner()
            .ids
            .first()
            .copied()
            .ok_or_else(|| "no ID".to_owned())
    };
    tokio::time::timeout(PROBE_LIMIT, call)
        .await
        .unwrap_or_else(|_| Err("no answer".to_owned()))
}

/// One `get` on a new memcached connection, within [`PROBE_LIMIT`]: the
/// ID, or what came instead.
fn memcached_get(address: SocketAddr) -> Result<u64, String> {
    let mut stream = std::net::TcpStream::connect_timeout(&address, PROBE_LIMIT)
        .map_err(|e| format!("connect: {e}"))?;
    stream.set_read_timeout(Some(PROBE_LIMIT)).unwrap();
    stream
        .write_all(b"get probe\r\n")
        .map_err(|e| format!("write: {e}"))?;
    let mut answer = Vec::new();
    let mut buffer = [0u8; 256];
    // Up to END, or to the end of an error line.
    let done = |answer: &[u8]| {
        answer.ends_with(b"END\r\n") || (!answer.starts_with(b"VALUE") && answer.ends_with(b"\r\n"))
    };
    while !done(&answer) {
        match stream.read(&mut buffer) {
            Ok(0) => break,
            Ok(n) => answer.extend_from_slice(&buffer[..n]),
            Err(e) => return Err(format!("read: {e}")),
        }
    }
    let text = String::from_utf8_lossy(&answer);
    let mut lines = text.split("\r\n");
    match (lines.next(), lines.next()) {
        (Some(head), Some(id)) if head.starts_with("VALUE probe 0 ") => {
            id.parse().map_err(|_| text.clone().into_owned())
        }
        _ => Err(text.into_owned()),
    }
}

/// The value of the sample `name{labels}` in Prometheus text (0 when
/// absent).
fn sample(metrics: &str, series: &str) -> f64 {
    metrics
        .lines()
        .find_map(|line| line.strip_prefix(series)?.strip_prefix(' '))
        .map_or(0.0, |value| value.trim().parse().unwrap())
}

fn assert_served(figures: &Figures, metrics: &str, limits: &[&str]) {
    assert_eq!(figures.healthz, PROBES, "/healthz answers: {figures:?}");
    assert_eq!(figures.http_ids, PROBES, "IDs over HTTP: {figures:?}");
    assert_eq!(figures.grpc_ids, PROBES, "IDs over gRPC: {figures:?}");
    assert_eq!(
        figures.memcached_ids, PROBES,
        "IDs over memcached: {figures:?}"
    );
    // Every probe took IDs past the mark a 100 ms step reserved before it.
    assert!(
        figures.mark_after > figures.mark_before,
        "the high-water mark on disk did not move: {figures:?}"
    );
    assert_eq!(
        sample(metrics, "snowmint_mark_write_failing"),
        0.0,
        "the mark cannot be written"
    );
    assert!(
        figures.rss_peak_kib < RSS_BOUND_MIB * 1024,
        "RSS {} MiB over the bound of {RSS_BOUND_MIB} MiB",
        figures.rss_peak_kib / 1024
    );
    for limit in limits {
        let series = format!("snowmint_limit_reached_total{{limit=\"{limit}\"}}");
        assert!(
            sample(metrics, &series) > 0.0,
            "{series} did not count:\n{metrics}"
        );
    }
}

/// Finding 1: 40 connections of 100 `StreamIds` calls each, never read,
/// with the largest window HTTP/2 allows (4,000 calls, as in the review).
/// Each connection gets at most `--max-streams` calls, the node at most
/// `--max-calls` beyond each connection's first; a call's batches wait in
/// its bounded queue and HTTP/2 send buffer; connections that stop
/// reading are closed by the write deadline.
#[test]
fn unread_grpc_streams_cannot_exhaust_memory_or_starve_other_clients() {
    let (figures, metrics) = replay(
        Attack::UnreadStreams { streams: 100 },
        Target::Grpc,
        40,
        "unread StreamIds",
    );
    assert_served(&figures, &metrics, &["calls", "streams"]);
}

/// Finding 2: 150 HTTP clients pipelining `GET /v1/id` and never reading
/// an answer. The connection cap keeps descriptors for the state files;
/// a new client waiting at the cap makes the oldest connection close
/// (its buffers take long to fill with answers this small, so the write
/// deadline seldom gets to close them first: see the next test).
#[test]
fn pipelining_clients_that_never_read_are_disconnected() {
    let (figures, metrics) = replay(
        Attack::Pipeline("/v1/id"),
        Target::Http,
        150,
        "pipelined, unread HTTP",
    );
    assert_served(&figures, &metrics, &["connections", "evicted"]);
}

/// Finding 3: 150 silent TCP connections to the gRPC port. Each must send
/// the HTTP/2 preface and a first call within the request timeout, and
/// the cap leaves descriptors for HTTP, the state files and the
/// coordinator.
#[test]
fn silent_grpc_connections_are_closed_and_capped() {
    let (figures, metrics) = replay(Attack::Silent, Target::Grpc, 150, "silent gRPC connections");
    assert_served(
        &figures,
        &metrics,
        &["connections", "first_request_timeout"],
    );
}

/// Issue 34, finding 3: 120 silent connections to the memcached port.
/// They count towards the one connection cap, under the descriptor limit
/// less the reserve the state files need, and each must send a first
/// request within the request timeout, as every listener's.
#[test]
fn silent_memcached_connections_are_capped_and_closed() {
    let (figures, metrics) = replay(
        Attack::Silent,
        Target::Memcached,
        120,
        "silent memcached connections",
    );
    assert_served(
        &figures,
        &metrics,
        &["connections", "first_request_timeout"],
    );
}

/// `gets` of 1,000 keys (a 2 KB line, about 30 KB of answers), sent over
/// and over.
static MANY_GETS: std::sync::LazyLock<String> =
    std::sync::LazyLock::new(|| format!("gets{}\r\n", " k".repeat(1000)));

/// Issue 34, findings 3 and 4: 125 memcached clients that pipeline
/// `gets` of many keys and never read. They count towards the cap, and a
/// new client waiting at the cap makes the oldest close (the write
/// deadline would close each a request timeout after its answers stopped
/// going out: see the next test).
#[test]
fn memcached_clients_that_never_read_are_disconnected() {
    let (figures, metrics) = replay(
        Attack::Repeat(&MANY_GETS),
        Target::Memcached,
        125,
        "pipelined, unread memcached",
    );
    assert_served(&figures, &metrics, &["connections", "evicted"]);
}

/// The sample `snowmint_limit_reached_total{limit="NAME"}` of `service`.
fn limit_count(service: &Service, limit: &str) -> f64 {
    let metrics = try_get(service.address, "/metrics", Duration::from_secs(60))
        .map(|(_, body)| body)
        .unwrap_or_default();
    sample(
        &metrics,
        &format!("snowmint_limit_reached_total{{limit=\"{limit}\"}}"),
    )
}

/// Waits (with a liveness limit) until the limit `limit` has counted.
fn wait_for_limit(service: &Service, limit: &str) {
    snowmint_test_support::wait::wait_until(
        &format!("snowmint_limit_reached_total{{limit=\"{limit}\"}} to count"),
        Duration::from_secs(120),
        || (limit_count(service, limit) > 0.0).then_some(()),
    );
}

/// The write deadline alone, below the connection cap: four clients that
/// pipeline `/v1/ids?count=4096` (90 KiB answers) and never read fill
/// their sockets' buffers; each is closed once its answers have waited a
/// request timeout, and a new client is served meanwhile.
#[test]
fn a_client_that_leaves_answers_unread_is_closed_by_the_write_deadline() {
    let home = temp_dir("serve-limits-write");
    let service = Service::start(
        SNOWMINT,
        home.path(),
        &[
            "--datacenter",
            "0",
            "--machine",
            "0",
            "--request-timeout",
            "2s",
        ],
        &[],
    );
    let address = service.address;
    write_deadline_holds(
        &service,
        address,
        Attack::Pipeline("/v1/ids?count=4096"),
        || match try_get(address, "/v1/id", PROBE_LIMIT) {
            Some((200, _)) => Ok(()),
            other => Err(format!("{other:?}")),
        },
    );
}

/// Issue 34, finding 4: the write deadline on memcached, below the
/// connection cap: four clients that pipeline `gets` of many keys and
/// never read are closed once their answers have waited a request timeout
/// (not the memcached idle timeout of 10 minutes), and a new client is
/// served meanwhile.
#[test]
fn a_memcached_client_that_leaves_answers_unread_is_closed_by_the_write_deadline() {
    let home = temp_dir("serve-limits-memcached-write");
    let args = [
        "--datacenter",
        "0",
        "--machine",
        "0",
        "--request-timeout",
        "2s",
        "--memcached-listen",
        "127.0.0.1:0",
    ];
    // The build under test, or the one replayed (SNOWMINT_REPLAY_BINARY).
    let service = Service::start(&binary().0, home.path(), &args, &[]);
    let memcached = service.memcached.unwrap();
    write_deadline_holds(&service, memcached, Attack::Repeat(&MANY_GETS), || {
        memcached_get(memcached).map(drop)
    });
}

/// Sets four attackers that never read on `target` of `service` and
/// waits until the write deadline closes one; meanwhile `served` (a new
/// client) must succeed, and nobody is evicted (the cap is far).
fn write_deadline_holds(
    service: &Service,
    target: SocketAddr,
    attack: Attack,
    served: impl Fn() -> Result<(), String>,
) {
    let horde = Horde::start(target, attack, 4);
    wait_for_limit(service, "write_timeout");
    let reply = served();
    assert!(reply.is_ok(), "{reply:?}");
    // The attacker sees its connection gone only at its next write, after
    // the node counted the close: wait for that (a liveness bound).
    snowmint_test_support::wait::wait_until(
        "an attacker to find its connection closed",
        Duration::from_secs(60),
        || (horde.reopened() > 0).then_some(()),
    );
    assert!(horde.stop() > 0, "no attacker was disconnected");
    assert_eq!(
        limit_count(service, "evicted"),
        0.0,
        "below the cap, nobody is evicted"
    );
}

/// The deadlines of a gRPC connection, each counted when it closes one:
/// a connection idle for the request timeout is sent GOAWAY (the client
/// reconnects on its next call); one that does not answer pings is
/// closed; one older than `--max-connection-age` is sent GOAWAY and
/// closed a request timeout later, even with a stream open.
#[test]
fn grpc_connections_are_closed_when_idle_silent_to_pings_or_too_old() {
    let home = temp_dir("serve-limits-grpc");
    let service = Service::start(
        SNOWMINT,
        home.path(),
        &[
            "--datacenter",
            "0",
            "--machine",
            "0",
            "--grpc-listen",
            "127.0.0.1:0",
            "--request-timeout",
            "1s",
            "--max-connection-age",
            "3s",
        ],
        &[],
    );
    let grpc = service.grpc.unwrap();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();

    // Idle: one call, then nothing.
    runtime.block_on(async {
        let channel = tonic::transport::Channel::from_shared(format!("http://{grpc}"))
            .unwrap()
            .connect()
            .await
            .unwrap();
        let mut client = IdServiceClient::new(channel);
        client.next_ids(NextIdsRequest { count: 1 }).await.unwrap();
        tokio::task::block_in_place(|| wait_for_limit(&service, "idle_timeout"));
        // The same client carries on over a new connection.
        let again = client.next_ids(NextIdsRequest { count: 1 }).await;
        assert!(again.is_ok(), "{again:?}");
    });

    // Pings unanswered: a health watch is open (so the connection is not
    // idle), and the client neither reads nor writes.
    let mut silent = std::net::TcpStream::connect(grpc).unwrap();
    let mut bytes = snowmint_test_support::hostile::h2_preface();
    // HealthCheckRequest { service: "snowmint.v1.IdService" }.
    let mut watch = vec![0x0a, 21];
    watch.extend_from_slice(b"snowmint.v1.IdService");
    bytes.extend(snowmint_test_support::hostile::grpc_call(
        1,
        "/grpc.health.v1.Health/Watch",
        &watch,
    ));
    std::io::Write::write_all(&mut silent, &bytes).unwrap();
    wait_for_limit(&service, "keepalive_timeout");
    drop(silent);

    // Too old: a health watch outlives the connection's age; it is sent
    // GOAWAY at 3 s and closed a request timeout later.
    runtime.block_on(async {
        let channel = tonic::transport::Endpoint::from_shared(format!("http://{grpc}"))
            .unwrap()
            .connect()
            .await
            .unwrap();
        let mut health = tonic_health::pb::health_client::HealthClient::new(channel);
        let mut watch = health
            .watch(tonic_health::pb::HealthCheckRequest {
                service: "snowmint.v1.IdService".to_owned(),
            })
            .await
            .unwrap()
            .into_inner();
        let first = watch.message().await;
        assert!(matches!(first, Ok(Some(_))), "{first:?}");
        let ended = tokio::time::timeout(Duration::from_secs(60), watch.message()).await;
        assert!(
            matches!(ended, Ok(Err(_) | Ok(None))),
            "the watch outlived its connection's age by far: {ended:?}"
        );
    });
    wait_for_limit(&service, "max_connection_age");
    assert_eq!(limit_count(&service, "first_request_timeout"), 0.0);
}
