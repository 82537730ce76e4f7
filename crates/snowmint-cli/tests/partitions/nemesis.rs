//! (e) The randomized nemesis: every fault of (a) to (d), clock jumps,
//! slow clocks and restarts, drawn from a seed, on four nodes sharing
//! three slots; then every ID checked.
//!
//! # The run
//!
//! Four nodes on slots 0-2 (one always waits), TTL 2 s, a client each,
//! on a coordinator of three members (etcd, ZooKeeper) or one server
//! (PostgreSQL). One fault every 0.3 to 1.5 s, on a target (a node, a
//! member) that no other fault holds, for a while, then healed:
//!
//! - a node cut off from every member, both ways; or one way (it cannot
//!   send, or cannot hear);
//! - a node partitioned with one member (a minority) from the others;
//! - a member cut off from the other members;
//! - a node cut off from its clients (the coordinator still sees it);
//! - a node's link taken down;
//! - a node's wall clock stepped back or ahead by 10 ms to 3 s (its
//!   timers keep real time);
//! - a node killed (kill -9) and started again on its state directory,
//!   half the time with its clock at half the rate of real time for that
//!   life (then it must fence itself for its clock);
//! - a member killed and started again.
//!
//! Cuts of faults that overlap in time add up; each heal removes only
//! its own. After the last fault everything heals, clocks return to real
//! time, every process runs again, and the fleet must hold its three
//! slots again within a minute.
//!
//! # What is checked
//!
//! Every answer, by the history checker, against the claim history:
//! no ID twice; each process's IDs of a slot increasing; every ID inside
//! one claim of its slot held by the process that served it; no two
//! claims over one millisecond; no claim serving after the next one of
//! its slot had served. And no answer other than 200 or 503.
//!
//! # Running it longer, replaying it
//!
//! `SNOWMINT_PARTITION_SECONDS` (default 15) sets how long faults are
//! drawn; `SNOWMINT_PARTITION_SEED` (default: from the time) the seed.
//! The report gives both and the command that replays the same faults at
//! the same moments.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use snowmint_test_support::history::Findings;
use snowmint_test_support::partition::Host;
use snowmint_test_support::rng::Rng;

use crate::LIMIT;
use crate::coordinator::Placed;
use crate::fleet::{Clock, Run, Settings};

/// Nodes, and the slots they share.
const NODES: usize = 4;
const SLOTS: usize = 3;

/// A fault, on its target.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Fault {
    /// The node cut off from every member, both ways.
    Isolate { node: usize },
    /// The node's packets to the members dropped (`sends: false`), or
    /// theirs to it (`sends: true`: it can still send).
    OneWay { node: usize, sends: bool },
    /// The node and one member cut off from the other members (and the
    /// member from the other nodes).
    WithMinority { node: usize, member: usize },
    /// A member cut off from the other members.
    LoneMember { member: usize },
    /// The node cut off from its clients.
    FromClients { node: usize },
    /// The node's link down.
    LinkDown { node: usize },
    /// The node's wall clock stepped by this much.
    ClockStep { node: usize, offset_ms: i64 },
    /// The node killed, and started again at the end (with its clock at
    /// half speed for that life when `slow`).
    Restart { node: usize, slow: bool },
    /// The member killed, and started again at the end.
    KillMember { member: usize },
}

impl Fault {
    /// Its kind, for the report.
    fn kind(&self) -> &'static str {
        match self {
            Fault::Isolate { .. } => "node cut off from the coordinator",
            Fault::OneWay { sends: true, .. } => "node cannot hear the coordinator",
            Fault::OneWay { sends: false, .. } => "node cannot send to the coordinator",
            Fault::WithMinority { .. } => "node with a minority member",
            Fault::LoneMember { .. } => "member cut off from the others",
            Fault::FromClients { .. } => "node cut off from its clients",
            Fault::LinkDown { .. } => "node's link down",
            Fault::ClockStep { .. } => "node's clock stepped",
            Fault::Restart { slow: false, .. } => "node killed and restarted",
            Fault::Restart { slow: true, .. } => "node restarted with a slow clock",
            Fault::KillMember { .. } => "member killed and restarted",
        }
    }

    /// The node and the member it holds.
    fn targets(&self) -> (Option<usize>, Option<usize>) {
        match *self {
            Fault::Isolate { node }
            | Fault::OneWay { node, .. }
            | Fault::FromClients { node }
            | Fault::LinkDown { node }
            | Fault::ClockStep { node, .. }
            | Fault::Restart { node, .. } => (Some(node), None),
            Fault::WithMinority { node, member } => (Some(node), Some(member)),
            Fault::LoneMember { member } | Fault::KillMember { member } => (None, Some(member)),
        }
    }
}

/// One fault of the schedule: when it starts and ends, ms from the start.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Event {
    pub at_ms: u64,
    pub until_ms: u64,
    pub fault: Fault,
}

/// The schedule for `seconds` of faults on `members` members, a pure
/// function of `seed`.
pub fn plan(seed: u64, seconds: u64, members: usize) -> Vec<Event> {
    let mut rng = Rng::new(seed);
    let end = seconds * 1_000;
    let mut events: Vec<Event> = Vec::new();
    let mut at = rng.between(300, 1_500);
    while at < end {
        let busy = |node: Option<usize>, member: Option<usize>| {
            events.iter().any(|event| {
                let (n, m) = event.fault.targets();
                event.until_ms > at
                    && ((node.is_some() && n == node) || (member.is_some() && m == member))
            })
        };
        // Member faults need a quorum to survive them: three members or
        // more, one member at a time.
        let member_busy = events
            .iter()
            .any(|event| event.until_ms > at && event.fault.targets().1.is_some());
        let node = rng.below(NODES as u64) as usize;
        let member = rng.below(members as u64) as usize;
        let roll = rng.below(100);
        let fault = match roll {
            0..=19 => Fault::Isolate { node },
            20..=34 => Fault::OneWay {
                node,
                sends: rng.chance(1, 2),
            },
            35..=44 if members > 1 && !member_busy => Fault::WithMinority { node, member },
            45..=52 if members > 1 && !member_busy => Fault::LoneMember { member },
            53..=59 => Fault::FromClients { node },
            60..=66 => Fault::LinkDown { node },
            67..=81 => {
                let size = rng.log_between(10, 3_000) as i64;
                let offset_ms = if rng.chance(1, 2) { -size } else { size };
                Fault::ClockStep { node, offset_ms }
            }
            82..=93 => Fault::Restart {
                node,
                slow: rng.chance(1, 2),
            },
            94..=99 if members > 1 && !member_busy => Fault::KillMember { member },
            _ => Fault::Isolate { node },
        };
        let (n, m) = fault.targets();
        let lasts = match fault {
            Fault::Restart { slow: true, .. } => rng.between(2_000, 5_000),
            Fault::Restart { .. } | Fault::KillMember { .. } => rng.between(0, 2_000),
            Fault::ClockStep { .. } => rng.between(1_000, 5_000),
            _ => rng.between(500, 5_000),
        };
        if !busy(n, m) {
            events.push(Event {
                at_ms: at,
                until_ms: at + lasts,
                fault,
            });
        }
        at += rng.between(300, 1_500);
    }
    events
}

/// Whether `SNOWMINT_PARTITION_SECONDS` or the default: how long faults
/// are drawn; and the seed.
fn settings(test: &str) -> (u64, u64, String) {
    let seconds = std::env::var("SNOWMINT_PARTITION_SECONDS")
        .ok()
        .map(|text| {
            text.parse()
                .expect("SNOWMINT_PARTITION_SECONDS is a number of seconds")
        })
        .unwrap_or(15);
    let seed = std::env::var("SNOWMINT_PARTITION_SEED")
        .ok()
        .map(|text| text.parse().expect("SNOWMINT_PARTITION_SEED is a number"))
        .unwrap_or_else(|| {
            let now = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .unwrap();
            Rng::new(now.as_nanos() as u64 ^ u64::from(std::process::id())).next_u64()
        });
    let replay = format!(
        "SNOWMINT_PARTITION_SEED={seed} SNOWMINT_PARTITION_SECONDS={seconds} cargo test -p snowmint-cli --test partitions {test} -- --nocapture"
    );
    (seconds, seed, replay)
}

/// The cuts each fault in force makes, by the hosts' order in the run.
fn cuts_of<C: Placed>(run: &Run<C>, fault: &Fault) -> Vec<(Host, Host)> {
    let both = |a: &Host, b: &Host| vec![(a.clone(), b.clone()), (b.clone(), a.clone())];
    let members = &run.members;
    match *fault {
        Fault::Isolate { node } => members
            .iter()
            .flat_map(|member| both(&run.nodes[node].host, member))
            .collect(),
        Fault::OneWay { node, sends } => members
            .iter()
            .map(|member| {
                let host = run.nodes[node].host.clone();
                if sends {
                    (member.clone(), host)
                } else {
                    (host, member.clone())
                }
            })
            .collect(),
        Fault::WithMinority { node, member } => {
            let mut cuts = Vec::new();
            for (other, host) in members.iter().enumerate() {
                if other != member {
                    cuts.extend(both(&run.nodes[node].host, host));
                    cuts.extend(both(&members[member], host));
                }
            }
            for (other, entry) in run.nodes.iter().enumerate() {
                if other != node {
                    cuts.extend(both(&members[member], &entry.host));
                }
            }
            cuts
        }
        Fault::LoneMember { member } => members
            .iter()
            .enumerate()
            .filter(|(other, _)| *other != member)
            .flat_map(|(_, host)| both(&members[member], host))
            .collect(),
        Fault::FromClients { node } => both(&run.nodes[node].host, &run.nodes[node].client_host),
        _ => Vec::new(),
    }
}

/// Applies the union of the cuts of `active`.
fn apply_cuts<C: Placed>(run: &Run<C>, active: &[Event]) {
    let cuts: Vec<(Host, Host)> = active
        .iter()
        .flat_map(|event| cuts_of(run, &event.fault))
        .collect();
    let refs: Vec<(&Host, &Host)> = cuts.iter().map(|(a, b)| (a, b)).collect();
    run.network.set_cuts(&refs);
}

/// Starts `fault`.
async fn begin<C: Placed>(run: &mut Run<C>, fault: &Fault) {
    match *fault {
        Fault::LinkDown { node } => run.network.link_down(&run.nodes[node].host),
        Fault::ClockStep { node, offset_ms } => run.step_clock(node, offset_ms),
        Fault::Restart { node, .. } => run.kill(node),
        Fault::KillMember { member } => run.coordinator.members()[member].kill(),
        _ => {}
    }
}

/// Ends `fault`.
async fn end<C: Placed>(run: &mut Run<C>, fault: &Fault) {
    match *fault {
        Fault::LinkDown { node } => run.network.link_up(&run.nodes[node].host),
        Fault::ClockStep { node, .. } => run.step_clock(node, 0),
        Fault::Restart { node, slow } => {
            let clock = if slow { Clock::Rate(0.5) } else { Clock::Steps };
            run.start_with(node, clock);
        }
        Fault::KillMember { member } => {
            run.coordinator.members()[member].restart();
            run.coordinator.wait_serving(member).await;
        }
        _ => {}
    }
}

/// Runs the nemesis on `members` members of `C`; `test` names the test
/// for the replay command.
pub async fn random_faults<C: Placed>(binary: &'static str, members: usize, test: &str) {
    let (seconds, seed, replay) = settings(test);
    let events = plan(seed, seconds, members);
    println!(
        "(e) the nemesis on {members} {} members: {} faults in {seconds} s, seed {seed}\nreplay: {replay}",
        C::NAME,
        events.len()
    );
    let mut settings = Settings::new("nemesis");
    settings.slots = "0-2";
    let mut run = Run::<C>::new(binary, "e", members, &[Clock::Steps; NODES], settings).await;
    for node in 0..NODES {
        run.start(node);
    }
    wait_slots_held(&run).await;
    // A client per node, a little slower over long runs to bound memory.
    let pause = Duration::from_millis(if seconds > 60 { 5 } else { 2 });
    run.start_clients(1, seed, pause);

    let start = Instant::now();
    let mut active: Vec<Event> = Vec::new();
    let mut pending = events.clone();
    pending.sort_by_key(|event| event.at_ms);
    let mut pending = pending.into_iter().peekable();
    let mut counts: BTreeMap<&'static str, usize> = BTreeMap::new();
    loop {
        let now = start.elapsed().as_millis() as u64;
        // Ends first, so that a target freed now can be faulted again.
        let (ending, going): (Vec<Event>, Vec<Event>) =
            active.drain(..).partition(|event| event.until_ms <= now);
        active = going;
        let mut changed = !ending.is_empty();
        for event in &ending {
            end(&mut run, &event.fault).await;
        }
        while let Some(event) = pending.next_if(|event| event.at_ms <= now) {
            *counts.entry(event.fault.kind()).or_default() += 1;
            begin(&mut run, &event.fault).await;
            active.push(event);
            changed = true;
        }
        if changed {
            apply_cuts(&run, &active);
        }
        if active.is_empty() && pending.peek().is_none() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    // Everything healed: clocks real, every process running.
    for node in 0..NODES {
        run.step_clock(node, 0);
        if !run.runs(node) || run.clock(node) != Clock::Steps {
            run.start_with(node, Clock::Steps);
        }
    }
    run.network.heal_all();
    wait_slots_held(&run).await;
    tokio::time::sleep(Duration::from_secs(1)).await;
    let (history, refusals) = run.stop_clients();
    let findings: Findings = run.check(&history).await;
    let report = findings.report(&history);
    println!(
        "(e) on {members} {} members, seed {seed}, {seconds} s: faults by kind {counts:?}; {} refusals, {} broken requests; claims that served, per slot: {:?}\n{report}",
        C::NAME,
        refusals.refusals,
        refusals.broken,
        findings.claims_served
    );
    assert!(findings.ids > 0, "no ID was received");
    assert!(
        !findings.failed(),
        "(e) on {}: {report}\nreplay: {replay}\nthe run's directory: {}",
        C::NAME,
        run.home().display()
    );
}

/// Waits until the fleet holds every slot, one node each.
async fn wait_slots_held<C: Placed>(run: &Run<C>) {
    snowmint_test_support::wait::eventually("every slot to be held", LIMIT, || async {
        let held: Vec<u64> = (0..NODES).filter_map(|node| run.held(node)).collect();
        (held.len() == SLOTS).then_some(())
    })
    .await;
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One seed gives one schedule; no target is under two faults at once;
    /// one server gets no member faults.
    #[test]
    fn the_plan_is_a_function_of_the_seed() {
        assert_eq!(plan(7, 60, 3), plan(7, 60, 3));
        assert_ne!(plan(7, 60, 3), plan(8, 60, 3));
        let events = plan(11, 600, 3);
        assert!(events.len() > 300, "{}", events.len());
        for (index, a) in events.iter().enumerate() {
            for b in &events[index + 1..] {
                let overlap = a.at_ms < b.until_ms && b.at_ms < a.until_ms;
                let (na, ma) = a.fault.targets();
                let (nb, mb) = b.fault.targets();
                let shared = (na.is_some() && na == nb) || (ma.is_some() && ma == mb);
                assert!(!(overlap && shared), "{a:?} and {b:?}");
                assert!(
                    !(overlap && ma.is_some() && mb.is_some()),
                    "{a:?} and {b:?}"
                );
            }
        }
        assert!(
            plan(11, 600, 1)
                .iter()
                .all(|event| event.fault.targets().1.is_none())
        );
    }
}
