//! What the claim history and the clock check cost a claim, against real
//! etcd, ZooKeeper and PostgreSQL servers on loopback ports (the ones the
//! tests start), and how large a slot's history grows.
//!
//! ```sh
//! cargo bench -p snowmint-fleet --all-features --bench history
//! cargo bench -p snowmint-fleet --all-features --bench history -- etcd
//! ```
//!
//! - Claim time: from starting an engine to its first `Active` state, one
//!   slot taken over again and again (each claim released before the
//!   next), in three settings taken in turn, so that the machine's drift
//!   falls on all three alike: history off (`keep` 0: the claim path
//!   without it), history on (the default retention: the slot's history is
//!   read beside the mark and written before the claim is published), and
//!   history on with the clock check reading the coordinator's clock.
//! - Size: the slot's history once it holds the default 16 records, with a
//!   holder value as `snowmint serve` writes it; times 1,024 slots.

use std::sync::Arc;
use std::time::{Duration, Instant};

use snowmint::{Layout, SystemClock};
use snowmint_fleet::{
    ClockCheck, Coordinator, CoordinatorConfig, CoordinatorUrl, FleetName, HistoryRetention,
    NodeState, SlotRange, SlotSource,
};
use snowmint_test_support::servers::CoordinatorServer;
use snowmint_test_support::servers::etcd::EtcdServer;
use snowmint_test_support::servers::postgres::PostgresServer;
use snowmint_test_support::servers::zookeeper::ZooKeeperServer;
use snowmint_test_support::wait::within;

const TTL: Duration = Duration::from_secs(2);
/// Claims timed per setting and backend.
const CLAIMS: usize = 40;
const LIMIT: Duration = Duration::from_secs(60);

/// A holder value as `snowmint serve` writes it, of typical length.
const HOLDER: &str = "host=ids-eu-west-1-node-07 pid=4242 listen=10.20.30.40:8080 grpc=10.20.30.40:9090 started=2024-05-01T12:00:00.000Z";

#[derive(Clone, Copy)]
enum Setting {
    Off,
    On,
    OnWithClock,
}

fn config(setting: Setting) -> CoordinatorConfig {
    let config = CoordinatorConfig::new(
        "bench",
        SlotRange::new(9, 9).unwrap(),
        TTL,
        HOLDER.into(),
        Layout::TWITTER,
    )
    .unwrap();
    let off = ClockCheck {
        max_skew: None,
        ..ClockCheck::default()
    };
    match setting {
        Setting::Off => config
            .with_history(HistoryRetention {
                keep: 0,
                ..HistoryRetention::default()
            })
            .with_clock_check(off, None),
        Setting::On => config.with_clock_check(off, None),
        // No peer reader: only the coordinator's own clock is read.
        Setting::OnWithClock => config
            .with_clock(Arc::new(SystemClock))
            .with_clock_check(ClockCheck::default(), None),
    }
}

async fn claim_once<C: CoordinatorServer>(cluster: &C, setting: Setting) -> Duration {
    let started = Instant::now();
    let engine =
        Coordinator::start(cluster.backend(cluster.client_addr()), config(setting)).unwrap();
    let mut states = engine.state();
    let active = states.wait_for(|state| matches!(state, NodeState::Active(_)));
    within("an active claim", LIMIT, active)
        .await
        .expect("the engine stopped");
    let took = started.elapsed();
    within("a release", LIMIT, engine.release()).await;
    took
}

fn summary(times: &mut [Duration]) -> String {
    times.sort();
    let ms = |d: Duration| format!("{:.2}", d.as_secs_f64() * 1000.0);
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

async fn measure<C: CoordinatorServer>(url: impl Fn(&C) -> String) {
    let cluster = C::start().await;
    // A first claim of each kind warms the connection paths and creates
    // the tables, znodes and keys.
    for setting in [Setting::Off, Setting::On, Setting::OnWithClock] {
        claim_once(&cluster, setting).await;
    }
    let (mut off, mut on, mut clock) = (Vec::new(), Vec::new(), Vec::new());
    for _ in 0..CLAIMS {
        off.push(claim_once(&cluster, Setting::Off).await);
        on.push(claim_once(&cluster, Setting::On).await);
        clock.push(claim_once(&cluster, Setting::OnWithClock).await);
    }
    let median = |times: &mut Vec<Duration>| {
        times.sort();
        times[times.len() / 2].as_secs_f64() * 1000.0
    };
    let (m_off, m_on, m_clock) = (median(&mut off), median(&mut on), median(&mut clock));
    let name = C::NAME;
    println!("| {name} | history off | {} |", summary(&mut off));
    println!("| {name} | history on | {} |", summary(&mut on));
    println!(
        "| {name} | history on, clock check (coordinator's clock) | {} |",
        summary(&mut clock)
    );
    println!(
        "{name}: median claim +{:.2} ms with the history ({:.2}x), +{:.2} ms more with the clock check",
        m_on - m_off,
        m_on / m_off,
        m_clock - m_on
    );

    // The slot's history now holds the default 16 records.
    let url: CoordinatorUrl = url(&cluster).parse().unwrap();
    let fleet: FleetName = "bench".parse().unwrap();
    let id = Layout::TWITTER
        .encode_pair(snowmint::Clock::now_ms(&SystemClock), 0, 9, 0)
        .unwrap();
    let whois = snowmint_fleet::whois(&url, &fleet, id).await.unwrap();
    let records = serde_json::to_vec(&whois.kept).unwrap().len() + r#"{"v":1,"records":}"#.len();
    println!(
        "{name}: a slot's history of {} records is {records} bytes ({} per record); 1,024 such slots: {:.2} MB",
        whois.kept.len(),
        records / whois.kept.len(),
        records as f64 * 1024.0 / 1e6
    );
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    println!("claim TTL {TTL:?}; one slot claimed and released again and again; times in ms");
    println!("| backend | setting | runs | min | median | p90 | max |");
    println!("|---|---|---|---|---|---|---|");
    let names = ["etcd", "zookeeper", "postgres"];
    let mut picked: Vec<String> = std::env::args()
        .skip(1)
        .filter(|arg| names.contains(&arg.as_str()))
        .collect();
    if picked.is_empty() {
        picked = names.map(str::to_owned).to_vec();
    }
    for name in picked {
        match name.as_str() {
            "etcd" => measure::<EtcdServer>(|c| format!("etcd://{}", c.client_addr())).await,
            "zookeeper" => {
                measure::<ZooKeeperServer>(|c| format!("zk://{}", c.client_addr())).await
            }
            _ => measure::<PostgresServer>(|c| c.url()).await,
        }
    }
}
