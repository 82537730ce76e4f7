//! A node as the service runs one: a claim engine, and a loop that issues
//! IDs only under a valid claim, with a generator rebuilt for every claim
//! generation and the high-water mark reserved before IDs are handed out.

use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use snowmint::{Clock, Generator, Layout, SnowflakeId, SystemClock};
use snowmint_fleet::{
    Backend, Claim, ClaimRecord, Coordinator, CoordinatorConfig, NodeState, SlotRange, SlotSource,
};
use snowmint_test_support::wait::{eventually, within};
use tokio::task::JoinHandle;

/// How far ahead of the IDs a node reserves the high-water mark.
pub const RESERVE_STEP_MS: i64 = 500;
/// How often a test node issues an ID: enough to see every transition,
/// little enough for 40 nodes on two cores.
const ISSUE_EVERY: Duration = Duration::from_millis(2);

/// The system clock shifted by an amount the test sets at any time.
#[derive(Debug, Clone, Default)]
pub struct ShiftedClock {
    offset_ms: Arc<AtomicI64>,
}

impl ShiftedClock {
    /// Sets the shift (negative: behind the real time).
    pub fn shift(&self, offset_ms: i64) {
        self.offset_ms.store(offset_ms, Ordering::SeqCst);
    }
}

impl Clock for ShiftedClock {
    fn now_ms(&self) -> i64 {
        SystemClock.now_ms() + self.offset_ms.load(Ordering::SeqCst)
    }
}

/// One ID handed out.
#[derive(Debug, Clone, Copy)]
pub struct Issued {
    /// The ID.
    pub id: SnowflakeId,
    /// When the node decided to hand it out (checked against the claim).
    pub at: Instant,
    /// The claim generation it was issued under.
    pub generation: u64,
    /// The slot of that claim.
    pub slot: u64,
}

/// What a node's issuing loop saw.
#[derive(Debug, Default)]
pub struct IssueLog {
    /// Every ID handed out, in order.
    pub issued: Vec<Issued>,
    /// Attempts the generator refused (clock behind the floor).
    pub refusals: u64,
    /// Reservations the engine refused.
    pub reserve_failures: u64,
}

/// A node that has stopped: what it issued and claimed.
#[derive(Debug)]
pub struct Finished {
    /// The node's name (also its holder string).
    pub name: String,
    /// Every ID it handed out.
    pub issued: Vec<Issued>,
    /// Its claims, oldest first.
    pub claims: Vec<ClaimRecord>,
}

/// A running test node.
pub struct TestNode<B: Backend> {
    /// Its name, written as the holder of its slot.
    pub name: String,
    /// The claim engine.
    pub engine: Arc<Coordinator<B>>,
    log: Arc<Mutex<IssueLog>>,
    issuer: JoinHandle<()>,
}

impl<B: Backend> TestNode<B> {
    /// Starts a node of `fleet` that may claim `slots` ("A-B").
    pub fn start(name: &str, backend: B, fleet: &str, slots: &str, ttl: Duration) -> TestNode<B> {
        TestNode::start_with_clock(name, backend, fleet, slots, ttl, ShiftedClock::default())
    }

    /// The same, with IDs timed by `clock`.
    pub fn start_with_clock(
        name: &str,
        backend: B,
        fleet: &str,
        slots: &str,
        ttl: Duration,
        clock: ShiftedClock,
    ) -> TestNode<B> {
        let slots: SlotRange = slots.parse().unwrap();
        let config =
            CoordinatorConfig::new(fleet, slots, ttl, name.to_owned(), Layout::TWITTER).unwrap();
        TestNode::start_configured(name, backend, config, clock)
    }

    /// The same, with every setting given (the holder should be `name`).
    pub fn start_configured(
        name: &str,
        backend: B,
        config: CoordinatorConfig,
        clock: ShiftedClock,
    ) -> TestNode<B> {
        let engine = Arc::new(Coordinator::start(backend, config).unwrap());
        let log = Arc::new(Mutex::new(IssueLog::default()));
        // The test keeps its own handle on `clock` to shift it.
        let issuer = tokio::spawn(issue(engine.clone(), clock, log.clone()));
        TestNode {
            name: name.to_owned(),
            engine,
            log,
            issuer,
        }
    }

    /// The state the engine publishes now.
    pub fn state(&self) -> NodeState {
        self.engine.state().borrow().clone()
    }

    /// The claim, if active now.
    pub fn claim(&self) -> Option<Claim> {
        self.state().claim_at(Instant::now()).cloned()
    }

    /// Waits until the node holds a claim of generation `generation` or
    /// later, and returns it.
    pub async fn wait_active(&self, generation: u64) -> Claim {
        eventually(
            &format!("{} to hold a claim of generation {generation}", self.name),
            Duration::from_secs(60),
            || async { self.claim().filter(|claim| claim.generation >= generation) },
        )
        .await
    }

    /// Waits until the node is fenced for a reason that contains `reason`.
    pub async fn wait_fenced(&self, reason: &str) -> String {
        eventually(
            &format!("{} to be fenced because {reason:?}", self.name),
            Duration::from_secs(60),
            || async {
                match self.state() {
                    NodeState::Fenced { reason: why } if why.contains(reason) => Some(why),
                    _ => None,
                }
            },
        )
        .await
    }

    /// Checks that the node still holds its first claim and never lost one.
    pub fn assert_undisturbed(&self) {
        let status = self.engine.status();
        assert_eq!(
            (status.claims, status.losses),
            (1, 0),
            "{} lost its claim",
            self.name
        );
        assert!(self.claim().is_some(), "{} is not active", self.name);
    }

    /// How many IDs it has handed out.
    pub fn issued_count(&self) -> usize {
        self.log.lock().unwrap().issued.len()
    }

    /// Waits until it has handed out `count` more IDs than `since`.
    pub async fn wait_issued(&self, since: usize, count: usize) {
        eventually(
            &format!("{} to issue {count} more IDs", self.name),
            Duration::from_secs(60),
            || async { (self.issued_count() >= since + count).then_some(()) },
        )
        .await
    }

    /// A copy of what the issuing loop saw.
    pub fn with_log<T>(&self, read: impl FnOnce(&IssueLog) -> T) -> T {
        read(&self.log.lock().unwrap())
    }

    /// Clean shutdown: stop issuing, then release the claim.
    pub async fn release(self) -> Finished {
        self.issuer.abort();
        let _ = self.issuer.await;
        let what = format!("{} to release its claim", self.name);
        within(&what, Duration::from_secs(30), self.engine.release()).await;
        finished(self.name, &self.engine, &self.log)
    }

    /// A crash: everything stops at once, nothing is released.
    pub fn crash(self) -> Finished {
        self.issuer.abort();
        let done = finished(self.name, &self.engine, &self.log);
        drop(self.engine);
        done
    }
}

fn finished<B: Backend>(name: String, engine: &Coordinator<B>, log: &Mutex<IssueLog>) -> Finished {
    Finished {
        name,
        issued: std::mem::take(&mut log.lock().unwrap().issued),
        claims: engine.claims(),
    }
}

/// The issuing loop: what the service does per request, at a steady pace.
async fn issue<B: Backend>(
    engine: Arc<Coordinator<B>>,
    clock: ShiftedClock,
    log: Arc<Mutex<IssueLog>>,
) {
    let mut states = engine.state();
    // (generation, generator, mark reserved so far)
    let mut current: Option<(u64, Generator<ShiftedClock>, i64)> = None;
    let mut tick = tokio::time::interval(ISSUE_EVERY);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tick.tick().await;
        let Some(claim) = states.borrow_and_update().claim_at(Instant::now()).cloned() else {
            continue;
        };
        if current
            .as_ref()
            .is_none_or(|(generation, ..)| *generation != claim.generation)
        {
            let mut builder = Generator::builder(Layout::TWITTER, claim.node)
                .slots(claim.slots)
                .clock(clock.clone());
            if let Some(floor) = claim.floor_ms {
                builder = builder.resume_after(floor);
            }
            let generator = builder.build().expect("the claim's node fits the layout");
            current = Some((
                claim.generation,
                generator,
                claim.floor_ms.unwrap_or(i64::MIN),
            ));
        }
        let Some((generation, generator, reserved)) = current.as_mut() else {
            continue;
        };
        let id = match generator.next_id() {
            Ok(id) => id,
            Err(_) => {
                log.lock().unwrap().refusals += 1;
                continue;
            }
        };
        let timestamp = Layout::TWITTER.timestamp_ms(id);
        if timestamp > *reserved {
            if engine
                .reserve(*generation, timestamp + RESERVE_STEP_MS)
                .await
                .is_err()
            {
                log.lock().unwrap().reserve_failures += 1;
                continue;
            }
            *reserved = timestamp + RESERVE_STEP_MS;
        }
        // Handed out only if the same claim still holds now.
        let at = Instant::now();
        let still_held = states
            .borrow()
            .claim_at(at)
            .is_some_and(|now| now.generation == *generation);
        if still_held {
            log.lock().unwrap().issued.push(Issued {
                id,
                at,
                generation: *generation,
                slot: claim.slot,
            });
        }
    }
}
