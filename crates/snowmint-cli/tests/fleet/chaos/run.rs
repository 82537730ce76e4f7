//! Running the test: the settings, the run itself, the report.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::time::{Duration, Instant};

use snowmint_test_support::servers::replicated::{MEMBERS, MemberProxies, Replicated};
use snowmint_test_support::temp::temp_dir;
use snowmint_test_support::wait::wait_until;

use super::check::{Findings, check, serving_shares};
use super::fleet::{ClientLog, Clients, Fleet, NodeSettings};
use super::plan::{Fault, Kind, Planned, Shape, plan};

/// How many `snowmint serve` nodes.
const NODES: usize = 5;
/// The slots they share: one fewer than the nodes.
const SLOTS: (u64, u64) = (0, 3);
/// Their claim TTL.
const TTL: Duration = Duration::from_secs(2);
/// Clients per node.
const CLIENTS_PER_NODE: usize = 2;
/// How long the fleet may take to recover once the faults end (a liveness
/// bound, not a timing assertion).
const RECOVERY_LIMIT: Duration = Duration::from_secs(90);

/// How long a run injects faults and with which seed, from the
/// environment.
#[derive(Debug, Clone, Copy)]
pub struct Settings {
    /// The seed of the fault schedule and the clients' requests.
    pub seed: u64,
    /// How long faults are injected.
    pub run: Duration,
}

impl Settings {
    /// `SNOWMINT_CHAOS_SECONDS` (default 60) and `SNOWMINT_CHAOS_SEED`
    /// (default: drawn from the time); panics naming the variable, the
    /// value and the range when one is not a number in range.
    pub fn from_env() -> Settings {
        let seconds = read_env("SNOWMINT_CHAOS_SECONDS", 1, 86_400).unwrap_or(60);
        let seed = read_env("SNOWMINT_CHAOS_SEED", 0, u64::MAX).unwrap_or_else(|| {
            let now = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .unwrap();
            snowmint_test_support::rng::Rng::new(
                now.as_nanos() as u64 ^ u64::from(std::process::id()),
            )
            .next_u64()
        });
        Settings {
            seed,
            run: Duration::from_secs(seconds),
        }
    }
}

/// The value of the environment variable `name`, a whole number in
/// `min..=max`, if set.
fn read_env(name: &str, min: u64, max: u64) -> Option<u64> {
    let value = std::env::var(name).ok().filter(|v| !v.is_empty())?;
    match value.parse::<u64>() {
        Ok(number) if (min..=max).contains(&number) => Some(number),
        _ => panic!("{name} must be a whole number in {min}..={max}, not {value:?}"),
    }
}

/// One step of the run: a fault starts, or is undone.
#[derive(Debug)]
enum Step {
    Begin(Fault),
    End(Fault),
}

/// Runs the randomized fault test on a fresh `R`, with the `snowmint`
/// executable `binary`; `test` is the test's full name in the `fleet`
/// test binary, for the replay command. Panics, after printing the report, if any check fails.
pub fn run<R: Replicated>(binary: &str, test: &str) {
    let settings = Settings::from_env();
    let replay = format!(
        "SNOWMINT_CHAOS_SEED={} SNOWMINT_CHAOS_SECONDS={} cargo test -p snowmint-cli --test fleet {test} -- --exact --nocapture",
        settings.seed,
        settings.run.as_secs()
    );
    println!(
        "randomized fault test on {}: seed {}",
        R::NAME,
        settings.seed
    );
    println!("replay: {replay}");
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("cannot start a Tokio runtime");
    let cluster = runtime.block_on(R::start());
    let proxies: Vec<MemberProxies> = (0..NODES)
        .map(|_| runtime.block_on(MemberProxies::start(&cluster.client_addrs())))
        .collect();
    let shape = Shape {
        nodes: NODES,
        members: MEMBERS,
        ttl_ms: TTL.as_millis() as u64,
        run_ms: settings.run.as_millis() as u64,
        clock_steps: true,
    };
    let planned = plan(settings.seed, shape);
    let node_settings = NodeSettings {
        fleet: "chaos",
        slots: format!("{}-{}", SLOTS.0, SLOTS.1),
        ttl: format!("{}s", TTL.as_secs()),
    };
    let urls = proxies.iter().map(|p| R::url(&p.addrs())).collect();
    let mut fleet = Fleet::new(binary, temp_dir("chaos"), node_settings, urls);
    for node in 0..NODES {
        fleet.start(node, 0);
    }
    fleet.assert_clock_follows_file(0);
    let start = Instant::now();
    let clients = Clients::start(&fleet.directory(), CLIENTS_PER_NODE, settings.seed, start);

    let mut journal = Vec::new();
    let mut injected: BTreeMap<Kind, usize> = BTreeMap::new();
    for (at_ms, step) in steps(&planned) {
        let due = start + Duration::from_millis(at_ms);
        std::thread::sleep(due.saturating_duration_since(Instant::now()));
        fleet.assert_running();
        let what = match step {
            Step::Begin(fault) => {
                *injected.entry(fault.kind(MEMBERS)).or_default() += 1;
                let what = fault.to_string();
                match fault {
                    Fault::KillRestart {
                        node,
                        clock_back_ms,
                    } => {
                        fleet.kill(node);
                        let process = fleet.start(node, clock_back_ms);
                        format!("{what}: process {process}")
                    }
                    Fault::Pause { node, .. } => {
                        fleet.signal(node, "STOP");
                        what
                    }
                    Fault::MemberRestart { member, .. } => {
                        cluster.kill(member);
                        what
                    }
                    Fault::Cut { node, members, .. } => {
                        for member in members {
                            proxies[node].cut(member);
                        }
                        what
                    }
                    Fault::ClockStep { node, to_ms, .. } => {
                        fleet.set_clock(node, to_ms);
                        what
                    }
                }
            }
            Step::End(fault) => match fault {
                Fault::Pause { node, .. } => {
                    fleet.signal(node, "CONT");
                    format!("SIGCONT node {node}")
                }
                Fault::MemberRestart { member, .. } => {
                    cluster.restart(member);
                    format!("restart coordinator member {member}")
                }
                Fault::Cut { node, members, .. } => {
                    for &member in &members {
                        proxies[node].heal(member);
                    }
                    format!("heal node {node}'s link to members {members:?}")
                }
                Fault::KillRestart { .. } | Fault::ClockStep { .. } => unreachable!("not undone"),
            },
        };
        journal.push(format!("{:9.3} s  {what}", start.elapsed().as_secs_f64()));
    }
    let faults_ended = start.elapsed();

    // Every member serves again; then the fleet must recover.
    runtime.block_on(async {
        for member in 0..MEMBERS {
            cluster.wait_serving(member).await;
        }
    });
    let want = NODES.min((SLOTS.1 - SLOTS.0 + 1) as usize);
    let what = format!("{want} nodes to be ready again after the faults");
    wait_until(&what, RECOVERY_LIMIT, || {
        fleet.assert_running();
        let ready = fleet.ready();
        if ready.len() < want {
            std::thread::sleep(Duration::from_millis(200));
        }
        (ready.len() >= want).then_some(())
    });
    let recovered = start.elapsed() - faults_ended;
    let logs = clients.finish();
    let ran = start.elapsed();

    let report = Report::new(&logs, &injected, &fleet, ran);
    let text = report.text(R::NAME, settings, &replay, faults_ended, recovered, &fleet);
    println!("{text}");
    if report.failed() {
        let mut failure = String::new();
        let _ = writeln!(
            failure,
            "the randomized fault test failed (seed {}):",
            settings.seed
        );
        let _ = writeln!(failure, "{}", report.failures());
        let _ = writeln!(failure, "faults, as injected:\n{}", journal.join("\n"));
        for started in &fleet.started {
            let _ = writeln!(
                failure,
                "node {} process {} (pid {}) logged to {}",
                started.node,
                started.process,
                started.pid,
                started.log.display()
            );
        }
        let kept = fleet.keep_home();
        let _ = write!(
            failure,
            "the run's directory is kept: {}\nreplay: {replay}",
            kept.display()
        );
        panic!("{failure}");
    }
}

/// The steps of `planned`, in order: each fault's start, and its end when
/// it has one.
fn steps(planned: &[Planned]) -> Vec<(u64, Step)> {
    let mut steps = Vec::new();
    for Planned { at_ms, fault } in planned {
        if fault.lasts_ms() > 0 || matches!(fault, Fault::MemberRestart { .. }) {
            steps.push((at_ms + fault.lasts_ms(), Step::End(fault.clone())));
        }
        steps.push((*at_ms, Step::Begin(fault.clone())));
    }
    // By time; at the same moment, starts before ends (a member may be
    // restarted 0 ms after its kill).
    steps.sort_by_key(|(at, step)| (*at, matches!(step, Step::End(_))));
    steps
}

/// What the run found, for the report and the verdict.
struct Report {
    findings: Findings,
    injected: Vec<(Kind, usize)>,
    shares: Vec<f64>,
    ids_per_node: Vec<usize>,
    refusals: u64,
    broken: u64,
    wrong: Vec<String>,
}

impl Report {
    fn new(
        logs: &[ClientLog],
        injected: &BTreeMap<Kind, usize>,
        fleet: &Fleet,
        ran: Duration,
    ) -> Report {
        let batches: Vec<_> = logs
            .iter()
            .flat_map(|l| l.batches.iter().copied())
            .collect();
        let mut ids_per_node = vec![0; fleet.len()];
        for batch in &batches {
            ids_per_node[batch.node] += batch.count as usize;
        }
        let mut ids: Vec<u64> = Vec::with_capacity(logs.iter().map(|l| l.ids.len()).sum());
        for log in logs {
            ids.extend_from_slice(&log.ids);
        }
        let findings = check(&batches, &mut ids);
        Report {
            findings,
            injected: Kind::ALL
                .iter()
                .map(|kind| (*kind, injected.get(kind).copied().unwrap_or(0)))
                .collect(),
            shares: serving_shares(&batches, fleet.len(), ran.as_micros() as u64),
            ids_per_node,
            refusals: logs.iter().map(|l| l.refusals).sum(),
            broken: logs.iter().map(|l| l.broken).sum(),
            wrong: logs.iter().flat_map(|l| l.wrong.iter().cloned()).collect(),
        }
    }

    fn failed(&self) -> bool {
        self.findings.failed() || !self.wrong.is_empty() || self.findings.ids == 0
    }

    fn failures(&self) -> String {
        let mut lines = vec![self.findings.failures()];
        if self.findings.ids == 0 {
            lines.push("no ID was received at all".into());
        }
        if !self.wrong.is_empty() {
            lines.push(format!(
                "{} answers broke the API's promises:",
                self.wrong.len()
            ));
            lines.extend(self.wrong.iter().take(10).map(|w| format!("  {w}")));
        }
        lines.retain(|line| !line.is_empty());
        lines.join("\n")
    }

    fn text(
        &self,
        coordinator: &str,
        settings: Settings,
        replay: &str,
        faults_ended: Duration,
        recovered: Duration,
        fleet: &Fleet,
    ) -> String {
        let findings = &self.findings;
        let mut out = String::new();
        let _ = writeln!(
            out,
            "randomized fault test: {NODES} nodes on {MEMBERS} {coordinator} members, slots {}-{}, TTL {} s",
            SLOTS.0,
            SLOTS.1,
            TTL.as_secs()
        );
        let _ = writeln!(out, "seed {}; replay: {replay}", settings.seed);
        let _ = writeln!(
            out,
            "faults for {:.1} s, then recovered in {:.1} s",
            faults_ended.as_secs_f64(),
            recovered.as_secs_f64()
        );
        let total: usize = self.injected.iter().map(|(_, n)| n).sum();
        let _ = writeln!(out, "faults injected: {total}");
        for (kind, count) in &self.injected {
            let _ = writeln!(out, "  {count:>6}  {}", kind.name());
        }
        let _ = writeln!(
            out,
            "IDs checked: {} in {} batches; duplicates: {}; milliseconds shared by two processes: {}; batches below an earlier one: {}",
            thousands(findings.ids),
            thousands(findings.batches),
            findings.duplicates,
            findings.overlaps,
            findings.regressions
        );
        let per_slot: Vec<String> = findings
            .processes_per_slot
            .iter()
            .map(|(slot, n)| format!("slot {slot}: {n}"))
            .collect();
        let _ = writeln!(
            out,
            "slots seen changing hands: {} times (processes that issued on each: {})",
            findings.hand_overs,
            per_slot.join(", ")
        );
        let _ = writeln!(
            out,
            "503 answers: {}; requests without an answer: {}; other answers: {}",
            thousands(self.refusals as usize),
            thousands(self.broken as usize),
            self.wrong.len()
        );
        let _ = writeln!(out, "node  processes  IDs received  time serving");
        for node in 0..fleet.len() {
            let processes = fleet.started.iter().filter(|s| s.node == node).count();
            let _ = writeln!(
                out,
                "{node:>4}  {processes:>9}  {:>12}  {:>11.1}%",
                thousands(self.ids_per_node[node]),
                100.0 * self.shares[node]
            );
        }
        let _ = write!(out, "(the run's files: {})", fleet.home().display());
        out
    }
}

/// `1234567` as `1,234,567`.
fn thousands(n: usize) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, digit) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(digit);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn thousands_are_grouped() {
        assert_eq!(thousands(0), "0");
        assert_eq!(thousands(999), "999");
        assert_eq!(thousands(1_000), "1,000");
        assert_eq!(thousands(12_345_678), "12,345,678");
    }

    /// Every lasting fault is undone after it starts, even one that lasts
    /// no time at all.
    #[test]
    fn every_fault_is_undone_after_it_starts() {
        let planned = vec![
            Planned {
                at_ms: 1_000,
                fault: Fault::MemberRestart {
                    member: 1,
                    down_ms: 0,
                },
            },
            Planned {
                at_ms: 1_000,
                fault: Fault::Pause {
                    node: 2,
                    for_ms: 2_500,
                },
            },
            Planned {
                at_ms: 2_000,
                fault: Fault::ClockStep {
                    node: 0,
                    by_ms: -30,
                    to_ms: -30,
                },
            },
        ];
        let order: Vec<String> = steps(&planned)
            .into_iter()
            .map(|(at, step)| match step {
                Step::Begin(fault) => format!("{at} begin {fault}"),
                Step::End(fault) => format!("{at} end {fault}"),
            })
            .collect();
        assert_eq!(
            order,
            [
                "1000 begin kill -9 coordinator member 1 for 0 ms",
                "1000 begin SIGSTOP node 2 for 2500 ms",
                "1000 end kill -9 coordinator member 1 for 0 ms",
                "2000 begin step node 0's clock by -30 ms (to -30 ms off real time)",
                "3500 end SIGSTOP node 2 for 2500 ms",
            ]
        );
    }
}
