//! The Rust client against three real `snowmint serve --grpc-listen`
//! processes: one is killed with SIGKILL, another stopped with SIGSTOP for
//! longer than the client's per-call timeout, and both come back, while
//! the application draws IDs without pause. It sees no error and no
//! duplicate; the longest stall is printed.

use std::collections::HashSet;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use snowmint_client::Client;
use snowmint_test_support::binary::Service;
use snowmint_test_support::net::free_port;
use snowmint_test_support::temp::{TempDir, temp_dir};
use snowmint_test_support::wait::eventually;

/// The `snowmint` binary under test.
const SNOWMINT: &str = env!("CARGO_BIN_EXE_snowmint");
const LIMIT: Duration = Duration::from_secs(60);

/// One node: machine `machine` of datacenter 0, with a fixed gRPC port so
/// that a restart answers where the client already looks.
struct Member {
    home: TempDir,
    machine: u64,
    grpc_port: u16,
}

impl Member {
    fn new(machine: u64) -> Member {
        Member {
            home: temp_dir("grpc-failover"),
            machine,
            grpc_port: free_port(),
        }
    }

    fn endpoint(&self) -> String {
        format!("http://127.0.0.1:{}", self.grpc_port)
    }

    fn start(&self) -> Service {
        let state_dir = self.home.path().join("state");
        let grpc = format!("127.0.0.1:{}", self.grpc_port);
        let machine = self.machine.to_string();
        tokio::task::block_in_place(|| {
            Service::start(
                SNOWMINT,
                self.home.path(),
                &[
                    "--grpc-listen",
                    &grpc,
                    "--datacenter",
                    "0",
                    "--machine",
                    &machine,
                    "--state-dir",
                    state_dir.to_str().unwrap(),
                ],
                &[],
            )
        })
    }
}

/// What the drawing application saw.
#[derive(Default)]
struct Seen {
    ids: std::sync::Mutex<Vec<u64>>,
    /// IDs drawn from each machine (index = machine).
    per_machine: [AtomicU64; 4],
    errors: std::sync::Mutex<Vec<String>>,
    /// The longest time between two IDs, in microseconds.
    longest_stall_us: AtomicU64,
}

impl Seen {
    fn drawn(&self, machine: usize) -> u64 {
        self.per_machine[machine].load(Ordering::Relaxed)
    }

    fn total(&self) -> u64 {
        (1..4).map(|m| self.drawn(m)).sum()
    }
}

/// Waits until `more` IDs beyond `from` were drawn, from any node, or from
/// `machine` alone.
async fn until_drawn(seen: &Seen, what: &str, more: u64, machine: Option<usize>) {
    let count = || machine.map_or_else(|| seen.total(), |m| seen.drawn(m));
    let from = count();
    eventually(what, LIMIT, || async {
        (count() >= from + more).then_some(())
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_application_sees_no_error_while_a_node_serves() {
    let members: Vec<Member> = (1..=3).map(Member::new).collect();
    let mut services: Vec<Option<Service>> = members.iter().map(|m| Some(m.start())).collect();
    let client = Client::builder()
        .endpoints(members.iter().map(Member::endpoint))
        .batch(256)
        .call_timeout(Duration::from_millis(300))
        .max_backoff(Duration::from_millis(500))
        .deadline(Duration::from_secs(10))
        .build()
        .await
        .unwrap();
    let seen = Arc::new(Seen::default());
    let stop = Arc::new(AtomicBool::new(false));
    let drawer = {
        let (client, seen, stop) = (client.clone(), Arc::clone(&seen), Arc::clone(&stop));
        tokio::spawn(async move {
            let mut last = Instant::now();
            while !stop.load(Ordering::Relaxed) {
                match client.next_id().await {
                    Ok(id) => {
                        let machine = ((id >> 12) & 31) as usize;
                        assert!((1..=3).contains(&machine), "{id} of machine {machine}");
                        seen.ids.lock().unwrap().push(id);
                        seen.per_machine[machine].fetch_add(1, Ordering::Relaxed);
                    }
                    Err(error) => seen.errors.lock().unwrap().push(error.to_string()),
                }
                let now = Instant::now();
                let stall = now.duration_since(last).as_micros() as u64;
                seen.longest_stall_us.fetch_max(stall, Ordering::Relaxed);
                last = now;
            }
        })
    };
    for machine in 1..=3 {
        until_drawn(
            &seen,
            &format!("IDs from machine {machine}"),
            500,
            Some(machine),
        )
        .await;
    }

    // kill -9 the first node.
    let killed = services[0].take().unwrap();
    tokio::task::block_in_place(|| killed.kill());
    until_drawn(&seen, "IDs after the kill", 20_000, None).await;

    // SIGSTOP the second, past the per-call timeout: only the third serves.
    services[1].as_ref().unwrap().pause();
    tokio::time::sleep(Duration::from_millis(1000)).await;
    until_drawn(&seen, "IDs from the third node alone", 20_000, Some(3)).await;

    // Both come back: the killed one restarted on its state directory and
    // port, the stopped one continued.
    services[0] = Some(members[0].start());
    services[1].as_ref().unwrap().resume();
    for machine in 1..=3 {
        until_drawn(
            &seen,
            &format!("IDs from machine {machine} after the restart"),
            2_000,
            Some(machine),
        )
        .await;
    }
    stop.store(true, Ordering::Relaxed);
    drawer.await.unwrap();

    let errors = seen.errors.lock().unwrap();
    assert!(errors.is_empty(), "the application saw errors: {errors:?}");
    let ids = seen.ids.lock().unwrap();
    let distinct: HashSet<_> = ids.iter().collect();
    assert_eq!(distinct.len(), ids.len(), "duplicate IDs");
    let stats = client.stats();
    assert!(stats.failovers > 0, "no failover happened: {stats:?}");
    println!(
        "{} IDs drawn, none repeated, no error; longest stall {} ms; {stats:?}",
        ids.len(),
        seen.longest_stall_us.load(Ordering::Relaxed) / 1000
    );
}

/// A gRPC address that cannot be used stops the start: bad text is bad
/// input (exit code 2) naming the value and where it came from; an address
/// in use is named in the error.
#[test]
fn a_grpc_address_that_cannot_be_used_stops_the_start() {
    use snowmint_test_support::binary::run_to_end;
    let home = temp_dir("grpc-bad");
    let (status, stdout, stderr) =
        run_to_end(SNOWMINT, home.path(), &["--grpc-listen", "9090"], &[]);
    assert_eq!(status.code(), Some(2), "{stderr}");
    assert!(stdout.is_empty(), "{stdout}");
    assert!(
        stderr.contains(
            "grpc_listen \"9090\" is not an address (expected IP:PORT such as 127.0.0.1:8080, or localhost:PORT) (from --grpc-listen)"
        ),
        "{stderr}"
    );
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let address = taken.local_addr().unwrap().to_string();
    let state_dir = home.path().join("state");
    let (status, _, stderr) = run_to_end(
        SNOWMINT,
        home.path(),
        &[
            "--datacenter",
            "0",
            "--machine",
            "0",
            "--grpc-listen",
            &address,
            "--state-dir",
            state_dir.to_str().unwrap(),
        ],
        &[("SNOWMINT_LOG", "error")],
    );
    assert_eq!(status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains(&format!("cannot listen for gRPC on {address}")),
        "{stderr}"
    );
}
