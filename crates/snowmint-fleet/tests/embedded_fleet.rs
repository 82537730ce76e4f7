//! The embedded issuer on a fleet: the scenarios of the claim engine that
//! apply to a program minting in-process, run against real etcd,
//! ZooKeeper and PostgreSQL servers (one each per test, on free loopback
//! ports). Each scenario mints from plain threads through the synchronous
//! API, as an application does, and ends with every ID checked: none
//! issued twice, each issuer's strictly increasing, each carrying the node
//! of the slot it was issued under.
//!
//! Also here, against etcd: the crate README's "Embedding" example, run as shown.

use std::collections::{BTreeMap, BTreeSet, HashSet};
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicI64, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use snowmint::{Clock, Layout, Node, SnowflakeId, SystemClock};
use snowmint_fleet::{EmbeddedIssuer, NodeState, Refusal};
use snowmint_test_support::servers::CoordinatorServer;
use snowmint_test_support::servers::etcd::EtcdServer;
use snowmint_test_support::servers::postgres::PostgresServer;
use snowmint_test_support::servers::proxy::Proxy;
use snowmint_test_support::servers::zookeeper::ZooKeeperServer;
use snowmint_test_support::shown;
use snowmint_test_support::temp::temp_dir;
use snowmint_test_support::wait::eventually;

/// The claim TTL of every scenario: short, so that expiry is quick.
const TTL: Duration = Duration::from_secs(2);
/// How often a minter asks for an ID.
const MINT_EVERY: Duration = Duration::from_millis(2);
/// A safety net against hangs, not a timing assertion.
const LIMIT: Duration = Duration::from_secs(60);

/// The system clock shifted by an amount the test sets at any time.
#[derive(Debug, Clone, Default)]
struct ShiftedClock(Arc<AtomicI64>);

impl Clock for ShiftedClock {
    fn now_ms(&self) -> i64 {
        SystemClock.now_ms() + self.0.load(Ordering::SeqCst)
    }
}

/// What a minter saw.
#[derive(Debug, Default)]
struct Log {
    /// Every ID handed out, with when, in order.
    issued: Vec<(SnowflakeId, Instant)>,
    /// Refusals, by code.
    refusals: BTreeMap<&'static str, u64>,
}

/// An embedded issuer and a thread that asks it for an ID every
/// [`MINT_EVERY`].
struct Minter {
    name: String,
    issuer: Arc<EmbeddedIssuer>,
    log: Arc<Mutex<Log>>,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

/// What a stopped minter issued.
struct Minted {
    name: String,
    issued: Vec<SnowflakeId>,
}

impl Minter {
    /// An issuer of `fleet` at `url` that may claim `slots`, with its state
    /// in `dir`, written into its slot key as `name`; returns once started
    /// (not necessarily holding a slot: see `wait_active`).
    async fn start(name: &str, url: &str, fleet: &str, slots: (u64, u64), dir: &Path) -> Minter {
        Minter::start_with_clock(name, url, fleet, slots, dir, ShiftedClock::default()).await
    }

    async fn start_with_clock(
        name: &str,
        url: &str,
        fleet: &str,
        slots: (u64, u64),
        dir: &Path,
        clock: ShiftedClock,
    ) -> Minter {
        let issuer = EmbeddedIssuer::builder()
            .coordinator(url, fleet)
            .slots(slots.0..=slots.1)
            .claim_ttl(TTL)
            .state_dir(dir)
            .holder(name)
            .clock(clock)
            .wait_for_claim(Duration::ZERO)
            .start()
            .await
            .unwrap_or_else(|err| panic!("{name} did not start: {err}"));
        Minter::around(name, issuer)
    }

    fn around(name: &str, issuer: EmbeddedIssuer) -> Minter {
        let issuer = Arc::new(issuer);
        let log = Arc::new(Mutex::new(Log::default()));
        let stop = Arc::new(AtomicBool::new(false));
        let thread = {
            let (issuer, log, stop) = (issuer.clone(), log.clone(), stop.clone());
            std::thread::spawn(move || {
                while !stop.load(Ordering::Relaxed) {
                    let outcome = issuer.next_id();
                    let at = Instant::now();
                    let mut log = log.lock().unwrap();
                    match outcome {
                        Ok(id) => log.issued.push((id, at)),
                        Err(refusal) => *log.refusals.entry(refusal.code()).or_default() += 1,
                    }
                    drop(log);
                    std::thread::sleep(MINT_EVERY);
                }
            })
        };
        Minter {
            name: name.to_owned(),
            issuer,
            log,
            stop,
            thread: Some(thread),
        }
    }

    fn claim(&self) -> Option<snowmint_fleet::Claim> {
        self.issuer.state().claim_at(Instant::now()).cloned()
    }

    /// Waits until it holds a claim of generation `generation` or later,
    /// and has issued under it: the claim is read again after the IDs, and
    /// the wait goes on while it changed. (A claim the issuer gives up,
    /// such as a slot whose node another process on the host locks, is
    /// published before the issuer finds it cannot issue under it.)
    async fn wait_active(&self, generation: u64) -> snowmint_fleet::Claim {
        let mut generation = generation;
        loop {
            let claim = eventually(&format!("{} to hold a claim", self.name), LIMIT, || async {
                self.claim().filter(|claim| claim.generation >= generation)
            })
            .await;
            let count = self.issued();
            self.wait_issued(count, 5).await;
            if self
                .claim()
                .is_some_and(|now| now.generation == claim.generation)
            {
                return claim;
            }
            generation = claim.generation + 1;
        }
    }

    /// Waits until the issuer is fenced for a reason that contains `part`.
    async fn wait_fenced(&self, part: &str) -> String {
        eventually(
            &format!("{} to be fenced: {part:?}", self.name),
            LIMIT,
            || async {
                match self.issuer.state() {
                    NodeState::Fenced { reason } if reason.contains(part) => Some(reason),
                    _ => None,
                }
            },
        )
        .await
    }

    fn issued(&self) -> usize {
        self.log.lock().unwrap().issued.len()
    }

    fn last_issued(&self) -> Option<(SnowflakeId, Instant)> {
        self.log.lock().unwrap().issued.last().copied()
    }

    async fn wait_issued(&self, since: usize, count: usize) {
        eventually(
            &format!("{} to issue {count} more", self.name),
            LIMIT,
            || async { (self.issued() >= since + count).then_some(()) },
        )
        .await
    }

    fn refusals(&self, code: &str) -> u64 {
        self.log
            .lock()
            .unwrap()
            .refusals
            .get(code)
            .copied()
            .unwrap_or(0)
    }

    fn halt(&mut self) -> Minted {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(thread) = self.thread.take() {
            thread.join().unwrap();
        }
        Minted {
            name: self.name.clone(),
            issued: self
                .log
                .lock()
                .unwrap()
                .issued
                .iter()
                .map(|(id, _)| *id)
                .collect(),
        }
    }

    /// A clean shutdown: stops minting, releases the slot.
    async fn shutdown(mut self) -> Minted {
        let minted = self.halt();
        let issuer = Arc::try_unwrap(self.issuer).expect("the minter's thread has stopped");
        issuer.shutdown_async().await;
        minted
    }

    /// A crash: stops minting and leaves the claim and the node's lock as
    /// they are (the claim ends when its TTL runs out; the lock with the
    /// process, which is the test's, so the node's state directory is not
    /// used again).
    fn crash(mut self) -> Minted {
        let minted = self.halt();
        let issuer = Arc::try_unwrap(self.issuer).expect("the minter's thread has stopped");
        issuer.abandon();
        minted
    }
}

/// Checks every ID of a run: none twice, each minter's strictly
/// increasing, and each carrying a node of `slots` of the Twitter layout.
fn check_run(minted: &[Minted], slots: (u64, u64)) {
    let mut seen = HashSet::new();
    for m in minted {
        assert!(
            m.issued.windows(2).all(|w| w[0] < w[1]),
            "{}'s IDs are not strictly increasing",
            m.name
        );
        for id in &m.issued {
            assert!(
                seen.insert(*id),
                "{id} was issued twice (by {} and another)",
                m.name
            );
            let slot = Layout::TWITTER
                .slot_of(Layout::TWITTER.node_of(*id))
                .unwrap();
            assert!((slots.0..=slots.1).contains(&slot), "{id} of slot {slot}");
        }
    }
}

async fn shutdown_all(minters: Vec<Minter>) -> Vec<Minted> {
    let mut minted = Vec::new();
    for minter in minters {
        minted.push(minter.shutdown().await);
    }
    minted
}

/// An issuer claims a slot, keeps it past several TTLs, and frees it at
/// once on shutdown; a second gets another slot; a third, restarted on the
/// first one's state directory, takes the first one's slot back above its
/// mark.
async fn claim_keep_release<C: CoordinatorServer>() {
    let cluster = C::start().await;
    let url = cluster.url_at(cluster.client_addr());
    let (dir_a, dir_b) = (temp_dir("embedded-a"), temp_dir("embedded-b"));
    let slots = (0, 1023);
    let a = Minter::start("a", &url, "keep", slots, dir_a.path()).await;
    let slot = a.wait_active(1).await.slot;
    let b = Minter::start("b", &url, "keep", slots, dir_b.path()).await;
    let other = b.wait_active(1).await.slot;
    assert_ne!(slot, other);
    assert_eq!(
        cluster.slot_holders("keep").await,
        BTreeMap::from([(slot, "a".to_owned()), (other, "b".to_owned())])
    );

    let before = a.issued();
    tokio::time::sleep(TTL * 3).await;
    for m in [&a, &b] {
        let status = m.issuer.report().coordinator.unwrap();
        assert_eq!(
            (status.claims, status.losses),
            (1, 0),
            "{} lost its claim",
            m.name
        );
    }
    assert!(a.issued() > before);

    let a = a.shutdown().await;
    let holders: Vec<u64> = cluster.slot_holders("keep").await.into_keys().collect();
    assert_eq!(holders, [other], "the slot is freed at once");
    let mark = cluster.stored_mark("keep", slot).await.unwrap();
    let last = *a.issued.last().unwrap();
    assert!(mark >= Layout::TWITTER.timestamp_ms(last));

    // The state directory remembers the slot: the restart prefers it.
    let c = Minter::start("c", &url, "keep", slots, dir_a.path()).await;
    let claim = c.wait_active(1).await;
    assert_eq!((claim.slot, claim.floor_ms), (slot, Some(mark)));
    let mut minted = vec![a];
    minted.extend(shutdown_all(vec![b, c]).await);
    assert!(minted[2].issued[0] > last);
    assert!(cluster.slot_holders("keep").await.is_empty());
    check_run(&minted, slots);
}

/// 40 issuers race for 32 slots: 32 hold distinct slots and issue, 8 are
/// refused, saying that every slot is taken.
async fn race_for_slots<C: CoordinatorServer>() {
    let cluster = C::start().await;
    let url = cluster.url_at(cluster.client_addr());
    let dir = temp_dir("embedded-race");
    let slots = (0, 31);
    let mut minters = Vec::new();
    for n in 0..40 {
        minters.push(Minter::start(&format!("n{n}"), &url, "race", slots, dir.path()).await);
    }
    let (active, waiting) = eventually("32 claims and 8 refusals", LIMIT, || {
        let (active, waiting): (Vec<&Minter>, Vec<&Minter>) =
            minters.iter().partition(|m| m.claim().is_some());
        let settled = active.len() == 32
            && waiting.iter().all(|m| {
                matches!(m.issuer.state(), NodeState::Fenced { reason } if reason.contains("all 32 slots of fleet race in 0-31 are taken"))
            });
        async move { settled.then_some((active.len(), waiting.len())) }
    })
    .await;
    assert_eq!((active, waiting), (32, 8));
    let held: BTreeSet<u64> = minters
        .iter()
        .filter_map(|m| m.claim().map(|c| c.slot))
        .collect();
    assert_eq!(held.len(), 32);
    for m in minters.iter().filter(|m| m.claim().is_none()) {
        match m.issuer.next_id() {
            Err(Refusal::NoClaim { reason }) => assert!(reason.contains("are taken"), "{reason}"),
            other => panic!("{}: {other:?}", m.name),
        }
    }
    let minted = shutdown_all(minters).await;
    check_run(&minted, slots);
}

/// The coordinator stops answering (SIGSTOP): every issuer refuses before
/// its TTL runs out; when it answers again, every one claims anew and
/// issues again.
async fn a_paused_coordinator_fences_every_issuer<C: CoordinatorServer>() {
    let cluster = C::start().await;
    let url = cluster.url_at(cluster.client_addr());
    let dir = temp_dir("embedded-pause");
    let slots = (0, 1023);
    let mut minters = Vec::new();
    for name in ["a", "b", "c"] {
        let m = Minter::start(name, &url, "pause", slots, dir.path()).await;
        m.wait_active(1).await;
        minters.push(m);
    }
    let paused_at = Instant::now();
    cluster.process().pause();
    for m in &minters {
        m.wait_fenced("").await;
    }
    let counts: Vec<usize> = minters.iter().map(Minter::issued).collect();
    for m in &minters {
        let (_, last) = m.last_issued().unwrap();
        assert!(
            last < paused_at + TTL,
            "{} issued after its TTL ran out",
            m.name
        );
        assert!(matches!(m.issuer.next_id(), Err(Refusal::NoClaim { .. })));
    }
    tokio::time::sleep(TTL).await;
    let still: Vec<usize> = minters.iter().map(Minter::issued).collect();
    assert_eq!(counts, still, "an issuer issued while fenced");
    assert!(minters.iter().all(|m| m.refusals("no_claim") > 0));

    cluster.process().resume();
    for m in &minters {
        m.wait_active(2).await;
    }
    let minted = shutdown_all(minters).await;
    check_run(&minted, slots);
}

/// One issuer is cut off from the coordinator: it refuses before a
/// waiting issuer takes its slot, and the waiter issues above everything
/// it issued; healed, it finds every slot taken.
async fn a_cut_issuer_fences_itself_before_its_slot_is_taken<C: CoordinatorServer>() {
    let cluster = C::start().await;
    let proxy = Proxy::start(cluster.client_addr()).await;
    let direct = cluster.url_at(cluster.client_addr());
    let dirs: Vec<_> = (0..4)
        .map(|n| temp_dir(&format!("embedded-cut-{n}")))
        .collect();
    let slots = (0, 2);
    let cut = Minter::start(
        "cut",
        &cluster.url_at(proxy.addr()),
        "cut",
        slots,
        dirs[0].path(),
    )
    .await;
    let slot = cut.wait_active(1).await.slot;
    let mut others = Vec::new();
    for (n, name) in ["b", "c"].iter().enumerate() {
        let m = Minter::start(name, &direct, "cut", slots, dirs[n + 1].path()).await;
        m.wait_active(1).await;
        others.push(m);
    }
    let waiter = Minter::start("waiter", &direct, "cut", slots, dirs[3].path()).await;
    waiter
        .wait_fenced("all 3 slots of fleet cut in 0-2 are taken")
        .await;

    proxy.cut();
    let taken = waiter.wait_active(1).await;
    assert_eq!(taken.slot, slot, "the waiter takes the cut issuer's slot");
    assert!(cut.claim().is_none());
    assert!(matches!(cut.issuer.next_id(), Err(Refusal::NoClaim { .. })));
    let (last_cut, _) = cut.last_issued().unwrap();
    let (first_waiter, _) = waiter.log.lock().unwrap().issued[0];
    assert!(
        first_waiter > last_cut,
        "the waiter issued below the cut issuer"
    );

    proxy.heal();
    cut.wait_fenced("all 3 slots of fleet cut in 0-2 are taken")
        .await;
    let mut minters = vec![cut, waiter];
    minters.extend(others);
    let minted = shutdown_all(minters).await;
    check_run(&minted, slots);
}

/// An issuer crashes without releasing: its slot frees after the TTL, and
/// the issuer that takes it issues nothing at or below the crashed one's
/// mark, even with its clock a minute behind.
async fn a_crashed_issuers_slot_is_taken_over_above_its_mark<C: CoordinatorServer>() {
    let cluster = C::start().await;
    let proxy = Proxy::start(cluster.client_addr()).await;
    let (dir_old, dir_new) = (temp_dir("embedded-old"), temp_dir("embedded-new"));
    let old = Minter::start(
        "old",
        &cluster.url_at(proxy.addr()),
        "crash",
        (5, 5),
        dir_old.path(),
    )
    .await;
    assert_eq!(old.wait_active(1).await.slot, 5);
    old.wait_issued(0, 50).await;
    // The crashed machine's network dies with it.
    proxy.cut();
    let old = old.crash();
    let mark = cluster.stored_mark("crash", 5).await.unwrap();
    let last = *old.issued.last().unwrap();
    assert!(mark >= Layout::TWITTER.timestamp_ms(last));

    let clock = ShiftedClock::default();
    clock.0.store(-60_000, Ordering::SeqCst);
    let url = cluster.url_at(cluster.client_addr());
    let new =
        Minter::start_with_clock("new", &url, "crash", (5, 5), dir_new.path(), clock.clone()).await;
    let claim = eventually("the new issuer to take slot 5", LIMIT, || async {
        new.claim()
    })
    .await;
    assert_eq!((claim.slot, claim.floor_ms), (5, Some(mark)));
    eventually("refusals with the clock behind the mark", LIMIT, || async {
        (new.refusals("clock_behind") > 20).then_some(())
    })
    .await;
    assert_eq!(
        new.issued(),
        0,
        "issued with the clock a minute behind the mark"
    );
    clock.0.store(0, Ordering::SeqCst);
    new.wait_issued(0, 50).await;
    let new = new.shutdown().await;
    assert!(
        new.issued
            .iter()
            .all(|id| Layout::TWITTER.timestamp_ms(*id) > mark)
    );
    check_run(&[old, new], (5, 5));
}

/// An operator deletes the issuer's slot key: it notices, claims anew
/// (the same slot, free again) and goes on above what it issued.
async fn a_deleted_slot_key_is_noticed<C: CoordinatorServer>() {
    let cluster = C::start().await;
    let url = cluster.url_at(cluster.client_addr());
    let dir = temp_dir("embedded-deleted");
    let m = Minter::start("node", &url, "deleted", (0, 1023), dir.path()).await;
    let slot = m.wait_active(1).await.slot;
    cluster.delete_slot("deleted", slot).await;
    let claim = m.wait_active(2).await;
    assert_eq!(claim.slot, slot);
    assert!(claim.floor_ms.is_some());
    let status = m.issuer.report().coordinator.unwrap();
    assert_eq!((status.claims, status.losses), (2, 1));
    let minted = m.shutdown().await;
    check_run(&[minted], (0, 1023));
}

/// A node given explicitly holds node 0/0 in a state directory; an issuer
/// of the fleet on the same directory first claims slot 0 (the newest
/// state file's), gives it up since it could never issue as it, and
/// issues from another slot, naming the reason in its report.
async fn a_slot_locked_on_the_host_is_passed_over<C: CoordinatorServer>() {
    let cluster = C::start().await;
    let url = cluster.url_at(cluster.client_addr());
    let dir = temp_dir("embedded-passed");
    let fixed = EmbeddedIssuer::builder()
        .node(0, 0)
        .state_dir(dir.path())
        .start()
        .await
        .unwrap();
    let fixed_id = fixed.next_id().unwrap();
    let m = Minter::start("fleet", &url, "passed", (0, 1023), dir.path()).await;
    let claim = m.wait_active(1).await;
    assert_ne!(claim.slot, 0);
    assert_ne!(claim.node, Node::default());
    let status = m.issuer.report().coordinator.unwrap();
    assert_eq!(status.losses, 0);
    assert_eq!(status.passed_over.len(), 1, "{status:?}");
    assert_eq!(status.passed_over[0].slot, 0);
    let reason = &status.passed_over[0].reason;
    assert!(
        reason.contains("node-dc0-m0.lock")
            && reason.contains(&format!("process {}", std::process::id())),
        "{reason}"
    );
    assert_eq!(
        cluster
            .slot_holders("passed")
            .await
            .into_keys()
            .collect::<Vec<_>>(),
        [claim.slot]
    );
    let minted = m.shutdown().await;
    assert!(fixed.next_id().unwrap() > fixed_id);
    fixed.shutdown_async().await;
    check_run(&[minted], (1, 1023));
}

/// An issuer of 2, then 4 slots claims an aligned block of the range and
/// mints from every slot of it: within one tick (the clock held still)
/// K x 4,096 IDs, strictly increasing, the first 4,096 from the block's
/// first slot, the next from the second, and so on; the next tick starts
/// again at the first slot. Every slot's key names it, and its shutdown
/// frees them all.
async fn an_issuer_of_several_slots_mints_from_every_one<C: CoordinatorServer>() {
    let cluster = C::start().await;
    let url = cluster.url_at(cluster.client_addr());
    for per_node in [2u64, 4] {
        let fleet = format!("wide{per_node}");
        let dir = temp_dir(&format!("embedded-wide-{per_node}"));
        let clock = snowmint::ManualClock::new(SystemClock.now_ms());
        let issuer = EmbeddedIssuer::builder()
            .coordinator(&url, &fleet)
            .slots(0..=7)
            .slots_per_node(per_node)
            .claim_ttl(TTL)
            .state_dir(dir.path())
            .holder("wide")
            .clock(clock.clone())
            .start()
            .await
            .unwrap_or_else(|err| panic!("the issuer of {per_node} slots did not start: {err}"));
        let issuer = Arc::new(issuer);
        let ids = tokio::task::spawn_blocking({
            let issuer = issuer.clone();
            move || {
                let mut ids = Vec::new();
                for _ in 0..per_node {
                    ids.extend(issuer.next_ids(4096).unwrap());
                }
                ids
            }
        })
        .await
        .unwrap();
        assert!(
            ids.windows(2).all(|w| w[0] < w[1]),
            "not strictly increasing"
        );
        let layout = Layout::TWITTER;
        let slot_of = |id: SnowflakeId| layout.slot_of(layout.node_of(id)).unwrap();
        let first = slot_of(ids[0]);
        assert_eq!(first % per_node, 0, "the block starts at slot {first}");
        let in_order: Vec<u64> = ids.chunks(4096).map(|chunk| slot_of(chunk[0])).collect();
        assert_eq!(in_order, (first..first + per_node).collect::<Vec<_>>());
        for chunk in ids.chunks(4096) {
            assert!(chunk.iter().all(|id| slot_of(*id) == slot_of(chunk[0])));
        }
        let tick = layout.timestamp_ms(ids[0]);
        assert!(ids.iter().all(|id| layout.timestamp_ms(*id) == tick));
        clock.advance(1);
        let next = issuer.next_id().unwrap();
        assert_eq!(slot_of(next), first);
        assert!(next > *ids.last().unwrap());
        let wide: BTreeMap<u64, String> = (first..first + per_node)
            .map(|slot| (slot, "wide".to_owned()))
            .collect();
        assert_eq!(cluster.slot_holders(&fleet).await, wide);
        let issuer = Arc::into_inner(issuer).expect("the minting task kept the issuer");
        issuer.shutdown_async().await;
        assert!(cluster.slot_holders(&fleet).await.is_empty());
    }
}

/// Declares every scenario as a test against one coordinator.
macro_rules! scenarios {
    ($name:ident, $cluster:ty) => {
        mod $name {
            use super::*;

            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn claims_keeps_and_releases_a_slot() {
                claim_keep_release::<$cluster>().await;
            }

            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn forty_issuers_race_for_thirty_two_slots() {
                race_for_slots::<$cluster>().await;
            }

            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn a_paused_coordinator_fences_every_issuer_until_it_answers() {
                a_paused_coordinator_fences_every_issuer::<$cluster>().await;
            }

            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn a_cut_issuer_stops_before_its_slot_is_taken() {
                a_cut_issuer_fences_itself_before_its_slot_is_taken::<$cluster>().await;
            }

            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn a_crashed_issuers_slot_is_taken_over_above_its_mark() {
                super::a_crashed_issuers_slot_is_taken_over_above_its_mark::<$cluster>().await;
            }

            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn a_deleted_slot_key_is_noticed() {
                super::a_deleted_slot_key_is_noticed::<$cluster>().await;
            }

            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn a_slot_locked_on_the_host_is_passed_over() {
                super::a_slot_locked_on_the_host_is_passed_over::<$cluster>().await;
            }

            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn an_issuer_of_several_slots_mints_from_every_one() {
                super::an_issuer_of_several_slots_mints_from_every_one::<$cluster>().await;
            }
        }
    };
}

scenarios!(etcd, EtcdServer);
scenarios!(zookeeper, ZooKeeperServer);
scenarios!(postgres, PostgresServer);

/// The crate README's "Embedding" example, as shown but for the coordinator's
/// URL (`url`) and the state directory (`dir`).
fn readme_example(
    url: &str,
    dir: &Path,
) -> Result<(SnowflakeId, Vec<SnowflakeId>), Box<dyn std::error::Error>> {
    use snowmint_fleet::{EmbeddedIssuer, NodeState};
    use std::time::Duration;

    // Once, at start-up: claims a free slot of fleet "orders" and keeps it.
    let issuer = EmbeddedIssuer::builder()
        .coordinator(url, "orders")
        // or: .node(1, 2), or .hostname_ordinal()
        .slots(0..=1023)
        .claim_ttl(Duration::from_secs(10))
        .state_dir(dir) // the node's lock and mark
        .start_blocking()?; // in async code: .start().await?

    // From any thread: synchronous, and in the common case no lock, no I/O.
    let id = issuer.next_id()?;
    let batch = issuer.next_ids(100)?;
    if let NodeState::Active(claim) = issuer.state() {
        println!(
            "issuing as slot {} ({})",
            claim.slot,
            issuer.layout().describe(claim.node)
        );
    }

    // At exit (dropping it does the same): the slot frees at once.
    issuer.shutdown();
    Ok((id, batch))
}

/// The example of the crate README's "Embedding" is `readme_example`, word for
/// word but for the URL, and it runs against a real etcd: IDs of the slot
/// it claimed, and the slot free again once it is shut down.
#[test]
fn the_readme_example_runs_as_shown() {
    let indented =
        shown::as_function_body(include_str!("../README.md"), "## Embedding", "rust,no_run")
            .replace("\"etcd://10.0.0.9:2379\"", "url")
            .replace("\"/var/lib/orders/snowmint\"", "dir");
    assert!(
        include_str!("embedded_fleet.rs").contains(&indented),
        "the crate README's example is not the code of readme_example:\n{indented}"
    );

    let runtime = tokio::runtime::Runtime::new().unwrap();
    let cluster = runtime.block_on(EtcdServer::start());
    let dir = temp_dir("embedded-readme");
    let url = format!("etcd://{}", cluster.client_addr());
    let (id, batch) = readme_example(&url, dir.path()).unwrap();
    assert_eq!(batch.len(), 100);
    assert!(batch.iter().all(|later| *later > id));
    let node = Layout::TWITTER.node_of(id);
    assert!(
        batch
            .iter()
            .all(|later| Layout::TWITTER.node_of(*later) == node)
    );
    let (datacenter, machine) = Layout::TWITTER.pair_of(node);
    let node_file = format!("node-dc{datacenter}-m{machine}.mark");
    assert!(dir.path().join(node_file).is_file());
    assert!(runtime.block_on(cluster.slot_holders("orders")).is_empty());
}
