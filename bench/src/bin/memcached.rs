//! IDs per second from memcached's text protocol (`--memcached-listen`)
//! next to HTTP's `GET /v1/id` of the same process, each over 8
//! connections, one request in flight per connection.
//!
//! ```text
//! bench/memcached.sh                          # builds the release binaries, runs this
//! target/release/memcached SNOWMINT [SECONDS] [ROUNDS]   # default 5 s, 3 rounds
//! target/release/memcached builds BEFORE AFTER [SECONDS] [ROUNDS]   # bench/seam.sh
//! ```
//!
//! Starts one `snowmint serve` (release binary `SNOWMINT`, node 0/1, a
//! fresh state directory) with HTTP and memcached on loopback, and drives
//! it from this process with the same plain blocking client for both: 8
//! threads, one keep-alive connection each, a request written, its whole
//! answer read, the next request. Each round measures memcached `get k`
//! (one ID per request), HTTP `GET /v1/id` (one ID, JSON), and, for
//! reference, memcached `gets` of 100 keys (100 IDs per request); the table
//! gives the median round of each, and the `get` : `/v1/id` ratio is the
//! median of the per-round ratios. Every answer is checked (an ID, or
//! `VALUE ... END`); nothing here is a test.
//!
//! `builds` starts one node of each of two builds (before and after a
//! change, nodes 0/1 and 0/2) and measures memcached `get k` on each in
//! turn, the order swapped every round; it reports the median of the
//! per-round ratios after : before.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::process::{Child, Command, ExitCode, Stdio};
use std::time::{Duration, Instant};

const CONNECTIONS: usize = 8;

/// A running `snowmint serve`, killed on drop.
struct Node {
    child: Child,
    http: SocketAddr,
    memcached: SocketAddr,
    _state: tempfile::TempDir,
}

impl Drop for Node {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn start(binary: &str, machine: u32) -> Node {
    let state = tempfile::tempdir().expect("a temporary directory");
    let memcached = TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a free port");
    let mut child = Command::new(binary)
        .args(["serve", "--listen", "127.0.0.1:0", "--machine"])
        .arg(machine.to_string())
        .arg("--memcached-listen")
        .arg(memcached.to_string())
        .arg("--state-dir")
        .arg(state.path())
        .env("SNOWMINT_LOG", "warn")
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("running snowmint serve");
    let stdout = child.stdout.take().unwrap();
    let mut http = None;
    for line in BufReader::new(stdout).lines() {
        let line = line.expect("reading snowmint serve's output");
        if let Some(address) = line.strip_prefix("listening on http://") {
            http = Some(address.parse().unwrap());
            break;
        }
    }
    Node {
        child,
        http: http.expect("snowmint serve ended before listening"),
        memcached,
        _state: state,
    }
}

/// One connection's loop: requests answered until `until`; the IDs got.
type Client = fn(SocketAddr, Instant) -> u64;

/// memcached `get k`: one ID per request.
fn memcached_get(address: SocketAddr, until: Instant) -> u64 {
    memcached_loop(address, until, b"get k\r\n", 1)
}

/// memcached `gets` of 100 keys: 100 IDs per request.
fn memcached_gets_100(address: SocketAddr, until: Instant) -> u64 {
    let keys: Vec<String> = (0..100).map(|k| format!("k{k}")).collect();
    let request = format!("gets {}\r\n", keys.join(" "));
    memcached_loop(address, until, request.as_bytes(), 100)
}

fn memcached_loop(address: SocketAddr, until: Instant, request: &[u8], per: u64) -> u64 {
    let mut stream = TcpStream::connect(address).unwrap();
    stream.set_nodelay(true).unwrap();
    let mut reader = BufReader::new(stream.try_clone().unwrap());
    let mut line = String::new();
    let mut ids = 0;
    while Instant::now() < until {
        stream.write_all(request).unwrap();
        let mut values = 0;
        loop {
            line.clear();
            reader.read_line(&mut line).unwrap();
            if line == "END\r\n" {
                break;
            }
            assert!(line.starts_with("VALUE "), "not an answer: {line:?}");
            line.clear();
            reader.read_line(&mut line).unwrap();
            assert!(
                line.trim_end().parse::<u64>().is_ok(),
                "not an ID: {line:?}"
            );
            values += 1;
        }
        assert_eq!(values, per);
        ids += per;
    }
    ids
}

/// HTTP `GET /v1/id`, keep-alive: one ID per request.
fn http_id(address: SocketAddr, until: Instant) -> u64 {
    let mut stream = TcpStream::connect(address).unwrap();
    stream.set_nodelay(true).unwrap();
    let mut reader = BufReader::new(stream.try_clone().unwrap());
    let request = format!("GET /v1/id HTTP/1.1\r\nHost: {address}\r\n\r\n");
    let mut line = String::new();
    let mut body = Vec::new();
    let mut ids = 0;
    while Instant::now() < until {
        stream.write_all(request.as_bytes()).unwrap();
        let mut length = None;
        line.clear();
        reader.read_line(&mut line).unwrap();
        assert!(line.starts_with("HTTP/1.1 200"), "{line:?}");
        loop {
            line.clear();
            reader.read_line(&mut line).unwrap();
            if line == "\r\n" {
                break;
            }
            let lower = line.to_ascii_lowercase();
            if let Some(value) = lower.strip_prefix("content-length:") {
                length = Some(value.trim().parse::<usize>().unwrap());
            }
        }
        body.resize(length.expect("a Content-Length"), 0);
        reader.read_exact(&mut body).unwrap();
        assert!(body.starts_with(b"{\"id\":\""), "{body:?}");
        ids += 1;
    }
    ids
}

/// IDs per second over `CONNECTIONS` connections for `seconds`.
fn measure(client: Client, address: SocketAddr, seconds: u64) -> f64 {
    let started = Instant::now();
    let until = started + Duration::from_secs(seconds);
    let threads: Vec<_> = (0..CONNECTIONS)
        .map(|_| std::thread::spawn(move || client(address, until)))
        .collect();
    let ids: u64 = threads.into_iter().map(|t| t.join().unwrap()).sum();
    ids as f64 / started.elapsed().as_secs_f64()
}

fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    values[values.len() / 2]
}

/// memcached `get k` on a node of each of two builds, in turns.
fn builds(before: &str, after: &str, seconds: u64, rounds: usize) {
    let (old, new) = (start(before, 1), start(after, 2));
    eprintln!(
        "memcached get, {CONNECTIONS} connections, {seconds} s per run, {rounds} rounds: before {}, after {}",
        old.memcached, new.memcached
    );
    let (mut a, mut b, mut ratios) = (vec![], vec![], vec![]);
    for round in 1..=rounds {
        let (x, y) = if round % 2 == 1 {
            let x = measure(memcached_get, old.memcached, seconds);
            (x, measure(memcached_get, new.memcached, seconds))
        } else {
            let y = measure(memcached_get, new.memcached, seconds);
            (measure(memcached_get, old.memcached, seconds), y)
        };
        eprintln!(
            "round {round}: before {x:.0} IDs/s, after {y:.0} IDs/s; {:.1}%",
            100.0 * y / x
        );
        a.push(x);
        b.push(y);
        ratios.push(y / x);
    }
    println!("| memcached `get k`, 8 connections | IDs/s (median of {rounds}) |");
    println!("|---|--:|");
    println!("| before | {:.0} |", median(a));
    println!("| after | {:.0} |", median(b));
    println!();
    println!(
        "after : before = {:.1}% (median of the per-round ratios)",
        100.0 * median(ratios)
    );
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().collect();
    if let [_, mode, before, after, rest @ ..] = args.as_slice()
        && mode == "builds"
    {
        let seconds: u64 = rest.first().map_or(5, |s| s.parse().expect("SECONDS"));
        let rounds: usize = rest.get(1).map_or(5, |s| s.parse().expect("ROUNDS"));
        builds(before, after, seconds, rounds);
        return ExitCode::SUCCESS;
    }
    let Some(binary) = args.get(1) else {
        eprintln!(
            "usage: memcached SNOWMINT [SECONDS] [ROUNDS] | memcached builds BEFORE AFTER [SECONDS] [ROUNDS]"
        );
        return ExitCode::from(2);
    };
    let seconds: u64 = args.get(2).map_or(5, |s| s.parse().expect("SECONDS"));
    let rounds: usize = args.get(3).map_or(3, |s| s.parse().expect("ROUNDS"));
    let node = start(binary, 1);
    eprintln!(
        "snowmint serve: HTTP {}, memcached {}; {CONNECTIONS} connections, {seconds} s per run, {rounds} rounds",
        node.http, node.memcached
    );
    let (mut get, mut http, mut gets, mut ratios) = (vec![], vec![], vec![], vec![]);
    for round in 1..=rounds {
        let g = measure(memcached_get, node.memcached, seconds);
        let h = measure(http_id, node.http, seconds);
        let m = measure(memcached_gets_100, node.memcached, seconds);
        eprintln!(
            "round {round}: memcached get {g:.0}/s, HTTP /v1/id {h:.0}/s, gets x100 {m:.0} IDs/s"
        );
        get.push(g);
        http.push(h);
        gets.push(m);
        ratios.push(g / h);
    }
    println!("| front end, 8 connections | IDs per request | IDs/s (median of {rounds}) |");
    println!("|---|--:|--:|");
    println!("| memcached `get k` | 1 | {:.0} |", median(get));
    println!("| HTTP `GET /v1/id` | 1 | {:.0} |", median(http));
    println!(
        "| memcached `gets` of 100 keys | 100 | {:.0} |",
        median(gets)
    );
    println!();
    println!(
        "memcached get : HTTP /v1/id = {:.2} (median of per-round ratios)",
        median(ratios)
    );
    ExitCode::SUCCESS
}
