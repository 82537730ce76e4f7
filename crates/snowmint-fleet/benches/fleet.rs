//! Claim time and fencing delay of the fleet claim engine, against real
//! etcd, ZooKeeper and PostgreSQL servers started on loopback ports (the
//! same ones the tests use).
//!
//! ```sh
//! cargo bench -p snowmint-fleet --all-features --bench fleet
//! cargo bench -p snowmint-fleet --all-features --bench fleet -- postgres
//! ```
//!
//! Names on the command line (`etcd`, `zookeeper`, `postgres`) pick the
//! backends; none: all three. The secured servers are measured when named:
//! `etcd-tls` (etcd over mutual TLS), `zookeeper-tls` (ZooKeeper's secure
//! port, mutual TLS), `zookeeper-digest` (digest authentication, ACLs):
//!
//! ```sh
//! cargo bench -p snowmint-fleet --all-features --bench fleet -- etcd etcd-tls
//! ```
//!
//! - Claim time: from starting an engine (connect, open a lease or session,
//!   list the slots, create the slot key, read the high-water mark) to the
//!   published `Active` state, on an empty fleet.
//! - Fencing delay: a node reaches the coordinator through a proxy; the
//!   proxy is cut (a partition: connections stay open, nothing flows). Two
//!   figures: how long until the claim's `valid_until` passes (a reader
//!   checking it stops issuing then) and how long until the engine
//!   publishes `Fenced`. Cuts are spread over the keep-alive cycle, so the
//!   spread reflects where in the cycle the network failed.

use std::time::{Duration, Instant};

use snowmint::Layout;
use snowmint_fleet::{Coordinator, CoordinatorConfig, NodeState, SlotRange, SlotSource};
use snowmint_test_support::servers::CoordinatorServer;
use snowmint_test_support::servers::etcd::EtcdServer;
use snowmint_test_support::servers::etcd_tls::EtcdTlsServer;
use snowmint_test_support::servers::postgres::PostgresServer;
use snowmint_test_support::servers::proxy::Proxy;
use snowmint_test_support::servers::zookeeper::ZooKeeperServer;
use snowmint_test_support::servers::zookeeper_secure::{ZooKeeperDigestServer, ZooKeeperTlsServer};
use snowmint_test_support::wait::within;

/// The claim TTL (lease TTL, session timeout) measured with.
const TTL: Duration = Duration::from_secs(2);
/// Claims timed per backend.
const CLAIMS: usize = 30;
/// Cuts timed per backend (each takes about a TTL).
const CUTS: usize = 9;
/// How long a claim or a fence may take before the bench gives up (a
/// bound against a hang, far above what is measured).
const LIMIT: Duration = Duration::from_secs(60);

fn config(fleet: &str) -> CoordinatorConfig {
    CoordinatorConfig::new(
        fleet,
        SlotRange::all(Layout::TWITTER),
        TTL,
        "bench".into(),
        Layout::TWITTER,
    )
    .expect("valid settings")
}

async fn claimed<S: SlotSource>(engine: &S) -> snowmint_fleet::Claim {
    let mut states = engine.state();
    let active = states.wait_for(|state| matches!(state, NodeState::Active(_)));
    let state = within("an active claim", LIMIT, active)
        .await
        .expect("the engine stopped");
    match &*state {
        NodeState::Active(claim) => claim.clone(),
        NodeState::Fenced { .. } => unreachable!("waited for Active"),
    }
}

async fn claim_times<S: CoordinatorServer>(server: &S) -> Vec<Duration> {
    let mut times = Vec::with_capacity(CLAIMS);
    for _ in 0..CLAIMS {
        let started = Instant::now();
        let engine =
            Coordinator::start(server.backend(server.client_addr()), config("claim")).unwrap();
        claimed(&engine).await;
        times.push(started.elapsed());
        engine.release().await;
    }
    times
}

/// (until `valid_until` passed, until `Fenced` was published) per cut.
async fn fencing_delays<S: CoordinatorServer>(server: &S) -> (Vec<Duration>, Vec<Duration>) {
    let (mut deadlines, mut published) = (Vec::new(), Vec::new());
    for cut in 0..CUTS {
        let proxy = Proxy::start(server.client_addr()).await;
        let engine =
            Coordinator::start(server.backend(proxy.addr()), config(&format!("cut-{cut}")))
                .unwrap();
        claimed(&engine).await;
        // Past the first renewal, then a different point of the cycle each time.
        let phase = TTL / 3 * u32::try_from(cut).unwrap() / u32::try_from(CUTS).unwrap();
        tokio::time::sleep(TTL + phase).await;
        let deadline = claimed(&engine)
            .await
            .valid_until
            .expect("coordinated claims have a deadline");
        let cut_at = Instant::now();
        proxy.cut();
        let mut states = engine.state();
        let fenced = states.wait_for(|state| matches!(state, NodeState::Fenced { .. }));
        within("the cut engine to fence itself", LIMIT, fenced)
            .await
            .expect("the engine stopped");
        published.push(cut_at.elapsed());
        deadlines.push(deadline.saturating_duration_since(cut_at));
        // Dropped without release, like a crash; the cut proxy goes with it.
    }
    (deadlines, published)
}

fn summary(times: &mut [Duration]) -> String {
    times.sort();
    let ms = |d: Duration| format!("{:.1}", d.as_secs_f64() * 1000.0);
    let at = |q: f64| times[((times.len() - 1) as f64 * q).round() as usize];
    format!(
        "{} | {} | {} | {} | {}",
        times.len(),
        ms(times[0]),
        ms(at(0.5)),
        ms(at(0.9)),
        ms(times[times.len() - 1])
    )
}

async fn measure<S: CoordinatorServer>() {
    let server = S::start().await;
    let mut claims = claim_times(&server).await;
    let (mut deadlines, mut published) = fencing_delays(&server).await;
    let name = S::NAME;
    println!(
        "| {name} | claim time (connect + claim) | {} |",
        summary(&mut claims)
    );
    println!(
        "| {name} | fencing delay: cut -> valid_until passed | {} |",
        summary(&mut deadlines)
    );
    println!(
        "| {name} | fencing delay: cut -> Fenced published | {} |",
        summary(&mut published)
    );
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    println!("claim TTL {TTL:?}; times in ms");
    println!("| backend | what | runs | min | median | p90 | max |");
    println!("|---|---|---|---|---|---|---|");
    let names = ["etcd", "zookeeper", "postgres"];
    let secured = ["etcd-tls", "zookeeper-tls", "zookeeper-digest"];
    let mut picked: Vec<String> = std::env::args()
        .skip(1)
        .filter(|arg| names.contains(&arg.as_str()) || secured.contains(&arg.as_str()))
        .collect();
    if picked.is_empty() {
        picked = names.map(str::to_owned).to_vec();
    }
    for name in picked {
        match name.as_str() {
            "etcd" => measure::<EtcdServer>().await,
            "etcd-tls" => measure::<EtcdTlsServer>().await,
            "zookeeper" => measure::<ZooKeeperServer>().await,
            "zookeeper-tls" => measure::<ZooKeeperTlsServer>().await,
            "zookeeper-digest" => measure::<ZooKeeperDigestServer>().await,
            _ => measure::<PostgresServer>().await,
        }
    }
}
