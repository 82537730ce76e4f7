//! Tail latency of one node's three front ends at a fixed rate, measured
//! without coordinated omission (issue 36, item 3).
//!
//! ```text
//! bench/latency.sh                         # builds the release binaries, runs this
//! target/release/latency SNOWMINT [SECONDS]   # default 10 s per measurement
//! CONNECTIONS=8 RATES=10000,50000 WARMUP=1 target/release/latency SNOWMINT
//! FRONTS=http,control-threads target/release/latency SNOWMINT 5
//! ```
//!
//! Starts one `snowmint serve` (release binary `SNOWMINT`, node 0/1, a
//! fresh state directory, default settings) with HTTP, gRPC and memcached
//! on free loopback ports, and measures, at each rate, one front end after
//! the other: HTTP/1.1 `GET /v1/id` on keep-alive connections, gRPC
//! `NextIds(count = 1)` (one HTTP/2 connection per client connection) and
//! memcached `get k`. Each measurement runs `CONNECTIONS` connections,
//! one thread and one request in flight each, sharing the rate on
//! staggered fixed timelines ([`Schedule::spread`]): the first `WARMUP`
//! seconds are not recorded, the next `SECONDS` are. Every request is timed
//! from when it was due, not from when it was sent
//! ([`snowmint_bench::latency`]), so a stall of the node (or of the
//! client) counts in full. Every answer is read whole and checked (an ID).
//! Three controls, measured the same way, show what the client and the
//! machine cost without snowmint: `control-threads`, a trivial HTTP
//! server in this process (one thread per connection) that answers every
//! request with a body of `/v1/id`'s size; `control-tokio`, the same
//! server on a Tokio runtime of two workers (`CONTROL_WORKERS` sets how
//! many); `control-nothing`, the
//! client's timelines with no request at all (its timer and the
//! machine's scheduling alone). `FRONTS` picks the columns (default: all,
//! `http,grpc,memcached,control-threads,control-tokio,control-nothing`).
//! Prints two markdown tables: p50, p99, p99.9 and max by rate, the front
//! ends side by side; and the rate each run achieved, with the largest
//! lag of a send behind its due time (a client or node that cannot keep
//! up shows there) and the CPU time per request, warm-up included, of the
//! node and of this process (the client, and the control's server when a
//! control is measured), from `/proc/PID/stat` in 10 ms ticks.

use std::io::{self, BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::process::{Child, Command, ExitCode, Stdio};
use std::thread;
use std::time::{Duration, Instant};

use snowmint_bench::latency::{RealTimeline, Recorded, Schedule, quantiles_us, run};
use snowmint_client::proto::NextIdsRequest;
use snowmint_client::proto::id_service_client::IdServiceClient;
use tonic::transport::Channel;

/// A running `snowmint serve`, killed on drop.
struct Node {
    child: Child,
    http: SocketAddr,
    grpc: String,
    memcached: SocketAddr,
    /// The controls' addresses ([`control_threads`], [`control_tokio`]).
    controls: [SocketAddr; 2],
    _state: tempfile::TempDir,
}

impl Drop for Node {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn start(binary: &str) -> Node {
    let state = tempfile::tempdir().expect("a temporary directory");
    let memcached = TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a free port");
    let mut child = Command::new(binary)
        .args([
            "serve",
            "--listen",
            "127.0.0.1:0",
            "--grpc-listen",
            "127.0.0.1:0",
        ])
        .args(["--datacenter", "0", "--machine", "1"])
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
    let (mut http, mut grpc) = (None, None);
    for line in BufReader::new(stdout).lines() {
        let line = line.expect("reading snowmint serve's output");
        if let Some(address) = line.strip_prefix("gRPC listening on ") {
            grpc = Some(address.to_owned());
        } else if let Some(address) = line.strip_prefix("listening on http://") {
            http = Some(address.parse().expect("an address"));
            break;
        }
    }
    Node {
        child,
        http: http.expect("snowmint serve ended before listening"),
        grpc: grpc.expect("no gRPC address"),
        memcached,
        controls: [control_threads(), control_tokio()],
        _state: state,
    }
}

/// What the controls answer to any request: an answer of `/v1/id`'s shape
/// and size.
fn control_answer() -> Vec<u8> {
    let body = "{\"id\":\"1234567890123456789\"}";
    format!(
        "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n{body}",
        body.len()
    )
    .into_bytes()
}

/// Answers one control connection's requests, each when its head (up to
/// the blank line) has come.
fn answer_control(stream: TcpStream, answer: &[u8]) -> io::Result<()> {
    stream.set_nodelay(true)?;
    let mut reader = BufReader::new(stream.try_clone()?);
    let mut writer = stream;
    let mut line = String::new();
    loop {
        line.clear();
        if reader.read_line(&mut line)? == 0 {
            return Ok(());
        }
        if line == "\r\n" {
            writer.write_all(answer)?;
        }
    }
}

/// A control, not snowmint: a trivial HTTP server in this process, one
/// thread per connection, that answers every request at once. What the
/// client and the machine cost by themselves.
fn control_threads() -> SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0").expect("a free port");
    let address = listener.local_addr().expect("its address");
    thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            thread::spawn(move || answer_control(stream, &control_answer()));
        }
    });
    address
}

/// A control, not snowmint: the same trivial server on a Tokio runtime of
/// two workers, or `CONTROL_WORKERS` (the node's runtime, without its HTTP
/// stack, layers or issuer).
fn control_tokio() -> SocketAddr {
    use tokio::io::{AsyncBufReadExt, AsyncWriteExt};
    let listener = TcpListener::bind("127.0.0.1:0").expect("a free port");
    let address = listener.local_addr().expect("its address");
    listener
        .set_nonblocking(true)
        .expect("a non-blocking listener");
    thread::spawn(move || {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(env_or("CONTROL_WORKERS", 2))
            .enable_all()
            .build()
            .expect("a runtime");
        runtime.block_on(async move {
            let listener = tokio::net::TcpListener::from_std(listener).expect("a listener");
            loop {
                let Ok((stream, _)) = listener.accept().await else {
                    continue;
                };
                tokio::spawn(async move {
                    let answer = control_answer();
                    stream.set_nodelay(true)?;
                    let (reader, mut writer) = stream.into_split();
                    let mut reader = tokio::io::BufReader::new(reader);
                    let mut line = String::new();
                    loop {
                        line.clear();
                        if reader.read_line(&mut line).await? == 0 {
                            return io::Result::Ok(());
                        }
                        if line == "\r\n" {
                            writer.write_all(&answer).await?;
                        }
                    }
                });
            }
        });
    });
    address
}

/// The front ends measured, in the order of the table's columns.
#[derive(Debug, Clone, Copy)]
enum FrontEnd {
    Http,
    Grpc,
    Memcached,
    /// [`control_threads`]: the same requests as `Http`.
    ControlThreads,
    /// [`control_tokio`]: the same requests as `Http`.
    ControlTokio,
    /// No request at all: the client's own timeline, its timer and the
    /// machine's scheduling, with nothing sent.
    ControlNothing,
}

impl FrontEnd {
    const ALL: [FrontEnd; 6] = [
        FrontEnd::Http,
        FrontEnd::Grpc,
        FrontEnd::Memcached,
        FrontEnd::ControlThreads,
        FrontEnd::ControlTokio,
        FrontEnd::ControlNothing,
    ];

    /// The name `FRONTS` takes.
    fn name(self) -> &'static str {
        match self {
            FrontEnd::Http => "http",
            FrontEnd::Grpc => "grpc",
            FrontEnd::Memcached => "memcached",
            FrontEnd::ControlThreads => "control-threads",
            FrontEnd::ControlTokio => "control-tokio",
            FrontEnd::ControlNothing => "control-nothing",
        }
    }

    fn title(self) -> &'static str {
        match self {
            FrontEnd::Http => "HTTP/1.1 `GET /v1/id`",
            FrontEnd::Grpc => "gRPC `NextIds(1)`",
            FrontEnd::Memcached => "memcached `get`",
            FrontEnd::ControlThreads => "control: threads",
            FrontEnd::ControlTokio => "control: Tokio",
            FrontEnd::ControlNothing => "control: no request",
        }
    }
}

/// One connection of one front end: sends a request, reads its whole
/// answer, checks it.
enum Client {
    Http {
        stream: TcpStream,
        reader: BufReader<TcpStream>,
        line: String,
        body: Vec<u8>,
    },
    Grpc {
        runtime: tokio::runtime::Runtime,
        client: IdServiceClient<Channel>,
    },
    Memcached {
        stream: TcpStream,
        reader: BufReader<TcpStream>,
        line: String,
    },
    Nothing,
}

fn bad(what: String) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, what)
}

impl Client {
    fn connect(node: &Node, front: FrontEnd) -> io::Result<Client> {
        let tcp = |address: SocketAddr| -> io::Result<(TcpStream, BufReader<TcpStream>)> {
            let stream = TcpStream::connect(address)?;
            stream.set_nodelay(true)?;
            let reader = BufReader::new(stream.try_clone()?);
            Ok((stream, reader))
        };
        Ok(match front {
            FrontEnd::ControlNothing => Client::Nothing,
            FrontEnd::Http | FrontEnd::ControlThreads | FrontEnd::ControlTokio => {
                let address = match front {
                    FrontEnd::ControlThreads => node.controls[0],
                    FrontEnd::ControlTokio => node.controls[1],
                    _ => node.http,
                };
                let (stream, reader) = tcp(address)?;
                Client::Http {
                    stream,
                    reader,
                    line: String::new(),
                    body: Vec::new(),
                }
            }
            FrontEnd::Memcached => {
                let (stream, reader) = tcp(node.memcached)?;
                Client::Memcached {
                    stream,
                    reader,
                    line: String::new(),
                }
            }
            FrontEnd::Grpc => {
                // A runtime of this thread alone, driven only while a call
                // is in flight: the connection's tasks run on the thread
                // that waits for the answer, as the blocking clients' do.
                let runtime = tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()?;
                let endpoint = Channel::from_shared(node.grpc.clone()).map_err(io::Error::other)?;
                let channel = runtime
                    .block_on(endpoint.tcp_nodelay(true).connect())
                    .map_err(io::Error::other)?;
                Client::Grpc {
                    runtime,
                    client: IdServiceClient::new(channel),
                }
            }
        })
    }

    fn request(&mut self) -> io::Result<()> {
        match self {
            Client::Http {
                stream,
                reader,
                line,
                body,
            } => {
                stream.write_all(b"GET /v1/id HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")?;
                line.clear();
                reader.read_line(line)?;
                if !line.starts_with("HTTP/1.1 200 ") {
                    return Err(bad(format!("not 200: {line:?}")));
                }
                let mut length = None;
                loop {
                    line.clear();
                    if reader.read_line(line)? == 0 {
                        return Err(bad("the connection closed".to_owned()));
                    }
                    if line == "\r\n" {
                        break;
                    }
                    if let Some((name, value)) = line.split_once(':')
                        && name.eq_ignore_ascii_case("content-length")
                    {
                        length = value.trim().parse::<usize>().ok();
                    }
                }
                let length = length.ok_or_else(|| bad("no Content-Length".to_owned()))?;
                body.resize(length, 0);
                reader.read_exact(body)?;
                if !body.starts_with(b"{\"id\":\"") {
                    return Err(bad(format!(
                        "not an ID: {:?}",
                        String::from_utf8_lossy(body)
                    )));
                }
                Ok(())
            }
            Client::Memcached {
                stream,
                reader,
                line,
            } => {
                stream.write_all(b"get k\r\n")?;
                line.clear();
                reader.read_line(line)?;
                if !line.starts_with("VALUE ") {
                    return Err(bad(format!("not an answer: {line:?}")));
                }
                line.clear();
                reader.read_line(line)?;
                if line.trim_end().parse::<u64>().is_err() {
                    return Err(bad(format!("not an ID: {line:?}")));
                }
                line.clear();
                reader.read_line(line)?;
                if line != "END\r\n" {
                    return Err(bad(format!("not the end: {line:?}")));
                }
                Ok(())
            }
            Client::Nothing => Ok(()),
            Client::Grpc { runtime, client } => {
                let batch = runtime
                    .block_on(client.next_ids(NextIdsRequest { count: 1 }))
                    .map_err(io::Error::other)?
                    .into_inner();
                if batch.ids.len() != 1 {
                    return Err(bad(format!("{} IDs, not 1", batch.ids.len())));
                }
                Ok(())
            }
        }
    }
}

/// One measurement: `front` at `rate` requests a second over
/// `connections`, `warmup` then `length`; what all connections recorded.
/// The CPU time (user and system) process `pid` has used, all its
/// threads, ended ones included: `/proc/PID/stat`'s utime and stime, in
/// Linux's clock ticks of 10 ms (`USER_HZ`, 100 on every Linux).
fn cpu_time(pid: &str) -> Duration {
    let path = format!("/proc/{pid}/stat");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    // The name (the second field) is in parentheses and may hold spaces;
    // after it, the state is field 3, utime field 14 and stime field 15.
    let after_name = text.rfind(')').map_or("", |end| &text[end + 1..]);
    let fields: Vec<&str> = after_name.split_whitespace().collect();
    let field = |number: usize| -> u64 {
        fields
            .get(number - 3)
            .and_then(|f| f.parse().ok())
            .unwrap_or_else(|| panic!("{path}: no field {number}"))
    };
    Duration::from_millis((field(14) + field(15)) * 10)
}

/// What one measurement cost: the CPU time of the node and of this
/// process (the client, and the control servers when they are measured),
/// and the requests sent, warm-up included.
#[derive(Debug, Clone, Copy)]
struct Cost {
    node: Duration,
    bench: Duration,
    requests: u64,
}

impl Cost {
    /// Microseconds of CPU per request.
    fn per_request_us(cpu: Duration, requests: u64) -> f64 {
        cpu.as_secs_f64() * 1e6 / requests.max(1) as f64
    }
}

fn measure(
    node: &Node,
    front: FrontEnd,
    rate: u64,
    connections: u64,
    warmup: Duration,
    length: Duration,
) -> (Recorded, Cost) {
    let per_connection = |d: Duration| (rate as f64 * d.as_secs_f64() / connections as f64) as u64;
    let (warmup_count, count) = (per_connection(warmup), per_connection(length));
    let node_pid = node.child.id().to_string();
    let cpu_before = (cpu_time(&node_pid), cpu_time("self"));
    let clients: Vec<Client> = (0..connections)
        .map(|_| Client::connect(node, front).expect("connecting"))
        .collect();
    // Everyone's timeline starts at the same instant, once all are up.
    let start = Instant::now() + Duration::from_millis(50);
    let threads: Vec<_> = clients
        .into_iter()
        .enumerate()
        .map(|(index, mut client)| {
            let schedule = Schedule::spread(rate, connections, index as u64);
            thread::spawn(move || {
                let mut timeline = RealTimeline { start };
                let mut record = Recorded::new();
                run(
                    &mut timeline,
                    schedule,
                    warmup_count,
                    count,
                    &mut record,
                    |_| client.request(),
                )
                .unwrap_or_else(|error| panic!("{}: {error}", front.title()));
                record
            })
        })
        .collect();
    let mut all = Recorded::new();
    for thread in threads {
        all.merge(&thread.join().expect("a connection's thread"));
    }
    let cost = Cost {
        node: cpu_time(&node_pid).saturating_sub(cpu_before.0),
        bench: cpu_time("self").saturating_sub(cpu_before.1),
        requests: connections * (warmup_count + count),
    };
    (all, cost)
}

fn show(us: f64) -> String {
    if us < 1000.0 {
        format!("{us:.0} µs")
    } else {
        format!("{:.2} ms", us / 1000.0)
    }
}

fn env_or<T: std::str::FromStr>(name: &str, default: T) -> T {
    match std::env::var(name) {
        Ok(value) => value
            .parse()
            .unwrap_or_else(|_| panic!("{name}={value:?} is not a valid value")),
        Err(_) => default,
    }
}

fn main() -> ExitCode {
    let mut args = std::env::args().skip(1);
    let Some(binary) = args.next() else {
        eprintln!("usage: latency SNOWMINT_BINARY [SECONDS]");
        return ExitCode::from(2);
    };
    let seconds: f64 = args
        .next()
        .map_or(10.0, |s| s.parse().expect("SECONDS: a number"));
    let connections: u64 = env_or("CONNECTIONS", 8);
    let warmup = Duration::from_secs_f64(env_or("WARMUP", 1.0));
    let rates: Vec<u64> = env_or("RATES", "10000,50000".to_owned())
        .split(',')
        .map(|r| r.trim().parse().expect("RATES: numbers, comma-separated"))
        .collect();
    let fronts: Vec<FrontEnd> = env_or("FRONTS", FrontEnd::ALL.map(FrontEnd::name).join(","))
        .split(',')
        .map(|name| {
            let name = name.trim();
            FrontEnd::ALL
                .into_iter()
                .find(|front| front.name() == name)
                .unwrap_or_else(|| {
                    let names = FrontEnd::ALL.map(FrontEnd::name).join(", ");
                    panic!("FRONTS: {name:?} is not one of {names}")
                })
        })
        .collect();
    let length = Duration::from_secs_f64(seconds);
    let node = start(&binary);
    // What each measurement got, by rate then front end.
    let mut results: Vec<(u64, Vec<(Recorded, Cost)>)> = Vec::new();
    for &rate in &rates {
        let mut row = Vec::new();
        for &front in &fronts {
            eprintln!("{} at {rate}/s ...", front.title());
            row.push(measure(&node, front, rate, connections, warmup, length));
            thread::sleep(Duration::from_millis(500));
        }
        results.push((rate, row));
    }

    println!(
        "Latency from each request's scheduled send to its whole answer; {connections} connections, \
         one request in flight each, {seconds} s per measurement after {} s of warm-up.",
        warmup.as_secs_f64()
    );
    println!();
    print!("| rate | quantile |");
    for front in &fronts {
        print!(" {} |", front.title());
    }
    println!();
    println!("|---|---|{}", "---:|".repeat(fronts.len()));
    for (rate, row) in &results {
        let quantiles: Vec<[f64; 4]> = row.iter().map(|(r, _)| quantiles_us(&r.latency)).collect();
        for (q, name) in ["p50", "p99", "p99.9", "max"].iter().enumerate() {
            print!("| {rate} req/s | {name} |");
            for values in &quantiles {
                print!(" {} |", show(values[q]));
            }
            println!();
        }
    }
    println!();
    println!(
        "| rate | front end | requests | achieved rate | largest send lag | node CPU per request | bench process CPU per request |"
    );
    println!("|---|---|---:|---:|---:|---:|---:|");
    for (rate, row) in &results {
        for (front, (record, cost)) in fronts.iter().zip(row) {
            let measured = record.finished.saturating_sub(warmup).as_secs_f64();
            println!(
                "| {rate} req/s | {} | {} | {:.0} req/s | {} | {:.1} µs | {:.1} µs |",
                front.title(),
                record.latency.len(),
                record.latency.len() as f64 / measured,
                show(record.max_send_lag.as_secs_f64() * 1e6),
                Cost::per_request_us(cost.node, cost.requests),
                Cost::per_request_us(cost.bench, cost.requests),
            );
        }
    }
    ExitCode::SUCCESS
}
