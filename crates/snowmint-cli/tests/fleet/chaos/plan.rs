//! The fault schedule: a pure function of the seed, so that a failing run
//! can be replayed with the same faults at the same moments.
//!
//! Every 1 to 3 s one fault starts, on a target that is not already under
//! one (a node, or a coordinator member); faults on different targets
//! overlap. Whatever undoes a fault (SIGCONT, the heal, the member's
//! restart) is part of the fault, with its own moment.

use std::fmt;

use snowmint_test_support::rng::Rng;

/// The shortest and longest pause between two faults' starts, in ms.
const GAP_MS: (u64, u64) = (1_000, 3_000);
/// How far a restart may set a node's clock back, or a step move it, in
/// ms (drawn on a logarithmic scale, so that steps inside and outside the
/// mark step are both tried).
const CLOCK_MS: (u64, u64) = (10, 10_000);
/// A running node's clock never drifts further than this from real time.
const CLOCK_LIMIT_MS: i64 = 10_000;
/// How long a restarted coordinator member is left alone, after it is
/// started again, before another member may be hit: time to rejoin, so
/// that the faults take one member at a time.
const MEMBER_REJOIN_MS: u64 = 5_000;
/// How long a restarted node is left alone before its next fault.
const NODE_RESTART_MS: u64 = 500;

/// The kinds of fault, for the counts in the report.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Kind {
    /// kill -9 a node and start it again at once.
    KillRestart,
    /// The same, with the new process's clock set back.
    KillRestartClockBack,
    /// SIGSTOP a node past its TTL, then SIGCONT.
    Pause,
    /// kill -9 a coordinator member, start it again a little later.
    MemberRestart,
    /// Cut a node off from one coordinator member, through its proxy.
    CutOne,
    /// Cut a node off from every coordinator member.
    CutAll,
    /// Step a running node's clock (libfaketime's offset file).
    ClockStep,
}

impl Kind {
    /// Every kind, in report order.
    pub const ALL: [Kind; 7] = [
        Kind::KillRestart,
        Kind::KillRestartClockBack,
        Kind::Pause,
        Kind::MemberRestart,
        Kind::CutOne,
        Kind::CutAll,
        Kind::ClockStep,
    ];

    /// The kind's name in the report.
    pub fn name(self) -> &'static str {
        match self {
            Kind::KillRestart => "kill -9 and restart",
            Kind::KillRestartClockBack => "kill -9 and restart, clock set back",
            Kind::Pause => "SIGSTOP past the TTL, then SIGCONT",
            Kind::MemberRestart => "coordinator member killed and restarted",
            Kind::CutOne => "link to one coordinator member cut",
            Kind::CutAll => "link to every coordinator member cut",
            Kind::ClockStep => "running node's clock stepped",
        }
    }
}

/// One fault, with what undoes it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Fault {
    /// kill -9 `node`, then start it again on the same state directory;
    /// the new process's clock is `clock_back_ms` behind the old one's.
    KillRestart {
        /// The node.
        node: usize,
        /// How far back the new process's clock is set (0: not at all).
        clock_back_ms: u64,
    },
    /// SIGSTOP `node`, SIGCONT it `for_ms` later.
    Pause {
        /// The node.
        node: usize,
        /// How long it stays stopped.
        for_ms: u64,
    },
    /// kill -9 coordinator member `member`, start it again `down_ms` later.
    MemberRestart {
        /// The member.
        member: usize,
        /// How long it stays down.
        down_ms: u64,
    },
    /// Cut `node` off from `members` (through its proxies), heal `for_ms`
    /// later.
    Cut {
        /// The node.
        node: usize,
        /// The members it loses (one, or all).
        members: Vec<usize>,
        /// How long the cut lasts.
        for_ms: u64,
    },
    /// Set `node`'s clock `to_ms` off real time, a step of `by_ms`.
    ClockStep {
        /// The node.
        node: usize,
        /// The step (negative: back).
        by_ms: i64,
        /// The clock's offset from real time after the step.
        to_ms: i64,
    },
}

impl Fault {
    /// The fault's kind.
    pub fn kind(&self, members: usize) -> Kind {
        match self {
            Fault::KillRestart {
                clock_back_ms: 0, ..
            } => Kind::KillRestart,
            Fault::KillRestart { .. } => Kind::KillRestartClockBack,
            Fault::Pause { .. } => Kind::Pause,
            Fault::MemberRestart { .. } => Kind::MemberRestart,
            Fault::Cut { members: cut, .. } if cut.len() == members => Kind::CutAll,
            Fault::Cut { .. } => Kind::CutOne,
            Fault::ClockStep { .. } => Kind::ClockStep,
        }
    }

    /// How long after its start the fault is undone (0: nothing to undo).
    pub fn lasts_ms(&self) -> u64 {
        match self {
            Fault::KillRestart { .. } | Fault::ClockStep { .. } => 0,
            Fault::Pause { for_ms, .. } | Fault::Cut { for_ms, .. } => *for_ms,
            Fault::MemberRestart { down_ms, .. } => *down_ms,
        }
    }
}

impl fmt::Display for Fault {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Fault::KillRestart {
                node,
                clock_back_ms: 0,
            } => write!(f, "kill -9 node {node} and restart it"),
            Fault::KillRestart {
                node,
                clock_back_ms,
            } => write!(
                f,
                "kill -9 node {node} and restart it with its clock {clock_back_ms} ms back"
            ),
            Fault::Pause { node, for_ms } => write!(f, "SIGSTOP node {node} for {for_ms} ms"),
            Fault::MemberRestart { member, down_ms } => {
                write!(f, "kill -9 coordinator member {member} for {down_ms} ms")
            }
            Fault::Cut {
                node,
                members,
                for_ms,
            } => write!(
                f,
                "cut node {node} off from members {members:?} for {for_ms} ms"
            ),
            Fault::ClockStep { node, by_ms, to_ms } => write!(
                f,
                "step node {node}'s clock by {by_ms:+} ms (to {to_ms:+} ms off real time)"
            ),
        }
    }
}

/// A fault and when it starts, in ms after the run's start.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Planned {
    /// When it starts.
    pub at_ms: u64,
    /// What it is.
    pub fault: Fault,
}

/// What the schedule is made for.
#[derive(Debug, Clone, Copy)]
pub struct Shape {
    /// How many `snowmint serve` nodes.
    pub nodes: usize,
    /// How many coordinator members.
    pub members: usize,
    /// The nodes' claim TTL, in ms.
    pub ttl_ms: u64,
    /// How long faults are started for, in ms.
    pub run_ms: u64,
    /// Whether a running node's clock can be stepped.
    pub clock_steps: bool,
}

/// The faults of a run of `shape`, from `seed`, in order of their start.
pub fn plan(seed: u64, shape: Shape) -> Vec<Planned> {
    let mut rng = Rng::new(seed);
    // When each target is free again.
    let mut node_free = vec![0u64; shape.nodes];
    let mut members_free = 0u64;
    // Each node's clock offset from real time, as the steps leave it.
    let mut offsets = vec![0i64; shape.nodes];
    let mut kinds = vec![
        Kind::KillRestart,
        Kind::Pause,
        Kind::MemberRestart,
        Kind::CutOne,
    ];
    if shape.clock_steps {
        kinds.push(Kind::ClockStep);
    }
    let mut planned = Vec::new();
    let mut at = rng.between(GAP_MS.0, GAP_MS.1);
    while at < shape.run_ms {
        // A busy target makes the draw fall to another kind; a few tries,
        // then this moment passes without a fault.
        for _ in 0..4 {
            let kind = *rng.pick(&kinds);
            if let Some(fault) = draw(
                kind,
                at,
                &mut rng,
                shape,
                &node_free,
                members_free,
                &offsets,
            ) {
                match &fault {
                    Fault::MemberRestart { down_ms, .. } => {
                        members_free = at + down_ms + MEMBER_REJOIN_MS;
                    }
                    Fault::ClockStep { node, to_ms, .. } => {
                        offsets[*node] = *to_ms;
                        node_free[*node] = at;
                    }
                    Fault::KillRestart { node, .. } => node_free[*node] = at + NODE_RESTART_MS,
                    Fault::Pause { node, for_ms } | Fault::Cut { node, for_ms, .. } => {
                        node_free[*node] = at + for_ms;
                    }
                }
                planned.push(Planned { at_ms: at, fault });
                break;
            }
        }
        at += rng.between(GAP_MS.0, GAP_MS.1);
    }
    planned
}

/// A fault of `kind` starting at `at`, or `None` when every target of that
/// kind is busy.
fn draw(
    kind: Kind,
    at: u64,
    rng: &mut Rng,
    shape: Shape,
    node_free: &[u64],
    members_free: u64,
    offsets: &[i64],
) -> Option<Fault> {
    let ttl = shape.ttl_ms;
    if kind == Kind::MemberRestart {
        return (members_free <= at).then(|| Fault::MemberRestart {
            member: rng.below(shape.members as u64) as usize,
            down_ms: rng.between(0, 3_000),
        });
    }
    let free: Vec<usize> = (0..shape.nodes).filter(|&n| node_free[n] <= at).collect();
    if free.is_empty() {
        return None;
    }
    let node = *rng.pick(&free);
    Some(match kind {
        Kind::KillRestart | Kind::KillRestartClockBack => Fault::KillRestart {
            node,
            clock_back_ms: if rng.chance(1, 2) {
                rng.log_between(CLOCK_MS.0, CLOCK_MS.1)
            } else {
                0
            },
        },
        // Past the TTL, by up to three seconds more.
        Kind::Pause => Fault::Pause {
            node,
            for_ms: rng.between(ttl + 200, ttl + 3_000),
        },
        // From well inside the TTL to well past it.
        Kind::CutOne | Kind::CutAll => {
            let members = if rng.chance(1, 2) {
                (0..shape.members).collect()
            } else {
                vec![rng.below(shape.members as u64) as usize]
            };
            Fault::Cut {
                node,
                members,
                for_ms: rng.between(ttl / 4, 2 * ttl + 1_000),
            }
        }
        Kind::ClockStep => {
            let size = rng.log_between(CLOCK_MS.0, CLOCK_MS.1) as i64;
            let by = if rng.chance(1, 2) { -size } else { size };
            let mut to = (offsets[node] + by).clamp(-CLOCK_LIMIT_MS, CLOCK_LIMIT_MS);
            if to == offsets[node] {
                // Already at the limit that way: step the other way.
                to = (offsets[node] - by).clamp(-CLOCK_LIMIT_MS, CLOCK_LIMIT_MS);
            }
            Fault::ClockStep {
                node,
                by_ms: to - offsets[node],
                to_ms: to,
            }
        }
        Kind::MemberRestart => unreachable!("handled above"),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const SHAPE: Shape = Shape {
        nodes: 5,
        members: 3,
        ttl_ms: 2_000,
        run_ms: 600_000,
        clock_steps: true,
    };

    /// One seed, one schedule; another seed, another schedule.
    #[test]
    fn the_seed_decides_the_schedule() {
        assert_eq!(plan(42, SHAPE), plan(42, SHAPE));
        assert_ne!(plan(42, SHAPE), plan(43, SHAPE));
    }

    /// Faults start 1 to 3 s apart, never hit a target that is still under
    /// one, keep to one coordinator member at a time, stay in their
    /// bounds, and every kind occurs.
    #[test]
    fn the_schedule_keeps_its_rules() {
        let planned = plan(7, SHAPE);
        let mut busy_until = [0u64; SHAPE.nodes];
        let mut member_busy_until = 0u64;
        let mut offsets = [0i64; SHAPE.nodes];
        let mut kinds = std::collections::BTreeSet::new();
        for pair in planned.windows(2) {
            let gap = pair[1].at_ms - pair[0].at_ms;
            // A moment whose draws all met busy targets passes unused.
            assert!(gap >= 1_000, "{pair:?}");
        }
        for Planned { at_ms, fault } in &planned {
            kinds.insert(fault.kind(SHAPE.members));
            match fault {
                Fault::MemberRestart { member, down_ms } => {
                    assert!(*member < SHAPE.members && *down_ms <= 3_000);
                    assert!(member_busy_until <= *at_ms, "two members down: {fault}");
                    member_busy_until = at_ms + down_ms + MEMBER_REJOIN_MS;
                }
                Fault::KillRestart {
                    node,
                    clock_back_ms,
                } => {
                    assert!(busy_until[*node] <= *at_ms, "{fault} at {at_ms}");
                    assert!(*clock_back_ms == 0 || (10..=10_000).contains(clock_back_ms));
                    busy_until[*node] = at_ms + NODE_RESTART_MS;
                }
                Fault::Pause { node, for_ms } => {
                    assert!(busy_until[*node] <= *at_ms, "{fault} at {at_ms}");
                    assert!(*for_ms > SHAPE.ttl_ms, "a pause within the TTL: {fault}");
                    busy_until[*node] = at_ms + for_ms;
                }
                Fault::Cut {
                    node,
                    members,
                    for_ms,
                } => {
                    assert!(busy_until[*node] <= *at_ms, "{fault} at {at_ms}");
                    assert!(members.len() == 1 || members.len() == SHAPE.members);
                    busy_until[*node] = at_ms + for_ms;
                }
                Fault::ClockStep { node, by_ms, to_ms } => {
                    assert!(busy_until[*node] <= *at_ms, "{fault} at {at_ms}");
                    assert_eq!(offsets[*node] + by_ms, *to_ms);
                    assert!((1..=10_000).contains(&by_ms.abs()), "{fault}");
                    assert!(to_ms.abs() <= 10_000, "{fault}");
                    offsets[*node] = *to_ms;
                }
            }
        }
        assert_eq!(kinds.len(), Kind::ALL.len(), "{kinds:?}");
        assert!(planned.last().unwrap().at_ms < SHAPE.run_ms);
    }

    /// Without clock steps (no libfaketime), none is planned.
    #[test]
    fn clock_steps_can_be_left_out() {
        let shape = Shape {
            clock_steps: false,
            ..SHAPE
        };
        assert!(
            plan(7, shape)
                .iter()
                .all(|p| !matches!(p.fault, Fault::ClockStep { .. }))
        );
    }
}
