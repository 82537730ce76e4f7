//! Scenarios (a) to (d): one partition each, on three nodes of one fleet
//! that share two slots (two hold one each, the third waits), every ID
//! the clients received checked with the history checker.

use std::time::Duration;

use snowmint::Layout;
use snowmint_test_support::history::{Findings, History};

use crate::coordinator::Placed;
use crate::fleet::{Clock, Run, Settings};

/// How long the clients pull before a fault, and after each step.
const TRAFFIC: Duration = Duration::from_millis(800);

/// The slot of an ID of `layout` (Twitter's: datacenter * 32 + machine).
fn slot_of(layout: &Layout, id: u64) -> u64 {
    layout
        .slot_of(layout.node_of(id.into()))
        .expect("a slot of the layout")
}

/// What a scenario measured.
#[derive(Debug, Clone, Copy)]
pub struct Outcome {
    /// From the isolated node's last ID on its slot to the new holder's
    /// first ID on it, by the IDs' own timestamps (both nodes on the
    /// machine's clock), ms.
    pub gap_ms: Option<i64>,
}

/// Starts the three nodes: `n0` and `n1` each hold a slot (`n0`'s is
/// returned), then `n2` waits for one; then the clients.
async fn three_nodes<C: Placed>(run: &mut Run<C>) -> u64 {
    three_nodes_waiting_for(run, "are taken").await
}

/// [`three_nodes`], `n2` fenced with a reason that says `why` (a node of
/// several slots waits for a block).
async fn three_nodes_waiting_for<C: Placed>(run: &mut Run<C>, why: &str) -> u64 {
    run.start(1);
    run.wait_held(1).await;
    run.start(0);
    let slot = run.wait_held(0).await;
    run.start(2);
    run.wait_fenced(2, why).await;
    run.start_clients(1, 0x5eed, Duration::from_millis(2));
    tokio::time::sleep(TRAFFIC).await;
    slot
}

/// (a)'s fault: `n0` cut off from every member, both ways; waits until it
/// is fenced, then until `n2` holds `slot`, and heals.
async fn isolate_first_node<C: Placed>(run: &Run<C>, slot: u64) {
    let members: Vec<_> = run.members.iter().collect();
    run.network.isolate(&run.nodes[0].host, &members);
    run.wait_fenced(0, "").await;
    taken_over_then_healed(run, slot).await;
}

/// Waits until `node` holds `slot`.
async fn wait_holds<C: Placed>(run: &Run<C>, node: usize, slot: u64) {
    let what = format!("node {} to hold slot {slot}", run.nodes[node].label);
    snowmint_test_support::wait::eventually(&what, crate::LIMIT, || async {
        (run.held(node) == Some(slot)).then_some(())
    })
    .await;
}

/// After a cut of `n0`: waits until `n2` holds `slot`, lets the clients
/// pull a while, heals every cut, and lets them pull again.
async fn taken_over_then_healed<C: Placed>(run: &Run<C>, slot: u64) {
    wait_holds(run, 2, slot).await;
    tokio::time::sleep(TRAFFIC).await;
    run.network.heal_all();
    tokio::time::sleep(TRAFFIC).await;
}

/// Stops the clients and checks what they received; fails with the
/// findings when `require` says so, and prints them either way.
async fn finish<C: Placed>(
    run: &mut Run<C>,
    name: &str,
    require: fn(&Findings) -> bool,
) -> (History, Findings) {
    let (history, counts) = run.stop_clients();
    let findings = run.check(&history).await;
    let report = findings.report(&history);
    println!(
        "{name} on {}: {} refusals, {} broken requests; claims that served, per slot: {:?}\n{report}",
        C::NAME,
        counts.refusals,
        counts.broken,
        findings.claims_served
    );
    assert!(
        findings.ids > 0,
        "{name} on {}: no ID was received",
        C::NAME
    );
    assert!(
        !require(&findings),
        "{name} on {}: {report}\nthe run's directory: {}",
        C::NAME,
        run.home().display()
    );
    (history, findings)
}

/// The IDs `node`'s processes issued on `slot` (of `layout`).
fn ids_on(history: &History, layout: &Layout, node: &str, slot: u64) -> Vec<u64> {
    history
        .receipts
        .iter()
        .filter(|receipt| history.servers[receipt.server].node == node)
        .flat_map(|receipt| receipt.ids.iter().copied())
        .filter(|id| slot_of(layout, *id) == slot)
        .collect()
}

/// The isolated node's last ID on `slot` and the new holder's first one,
/// by their timestamps (in `layout`): the time between them, ms.
fn gap(history: &History, layout: &Layout, old: &str, new: &str, slot: u64) -> Option<i64> {
    let time_ms = |id: u64| {
        layout
            .decode(id.into())
            .expect("an ID of the layout")
            .time_ms()
    };
    let last_old = ids_on(history, layout, old, slot).into_iter().max()?;
    let first_new = ids_on(history, layout, new, slot).into_iter().min()?;
    Some(time_ms(first_new) - time_ms(last_old))
}

/// (a) `n0` is cut off from every coordinator member, both ways, while its
/// clients still reach it; `n2` waits for a slot. `n0` must stop issuing
/// before `n2` issues its first ID on `n0`'s slot (the checker's fencing
/// finding), and no ID may repeat. Returns the gap between the two.
pub async fn isolated_from_the_coordinator<C: Placed>(binary: &'static str) -> Outcome {
    let mut run = Run::<C>::new(binary, "a", 1, &[Clock::Real; 3], Settings::new("isolated")).await;
    let slot = three_nodes(&mut run).await;
    isolate_first_node(&run, slot).await;
    let (history, _) = finish(
        &mut run,
        "(a) isolated from the coordinator",
        Findings::failed,
    )
    .await;
    let gap_ms = gap(&history, &Layout::TWITTER, "n0", "n2", slot);
    println!(
        "(a) on {}: the isolated node's last ID to the new holder's first: {gap_ms:?} ms",
        C::NAME
    );
    Outcome { gap_ms }
}

/// (a) with nodes of two slots (`--slots-per-node 2` over slots 0-3):
/// `n0` and `n1` each hold a block, `n2` waits for one. The layout is
/// Sonyflake's, whose sequence lies above the machine field, so that a
/// node of two slots issues from both in every tick, not only once the
/// first slot's sequence runs out. `n0` is cut off from every member while
/// its clients still reach it; it must stop issuing on both of its slots
/// before `n2` issues its first ID on either, `n2` must take `n0`'s whole
/// block, and no ID may repeat.
pub async fn isolated_node_of_two_slots<C: Placed>(binary: &'static str) {
    let layout: Layout = "sonyflake".parse().expect("the sonyflake preset");
    let mut settings = Settings::new("blocks");
    settings.slots = "0-3";
    settings.extra = vec!["--slots-per-node", "2", "--layout", "sonyflake"];
    let mut run = Run::<C>::new(binary, "a2", 1, &[Clock::Real; 3], settings).await;
    let first = three_nodes_waiting_for(&mut run, "have a slot taken").await;
    assert_eq!(
        first % 2,
        0,
        "a block of two starts at an even slot: {first}"
    );
    isolate_first_node(&run, first).await;
    // The fence names the whole block: both slots stopped.
    let block = format!("the claim on slots {first}-{} ", first + 1);
    let log = run.log(0);
    assert!(
        log.lines()
            .any(|line| line.contains("fenced") && line.contains(&block)),
        "n0's log has no fence naming {block:?}:\n{log}"
    );
    let (history, findings) = finish(
        &mut run,
        "(a) a node of two slots isolated from the coordinator",
        Findings::failed,
    )
    .await;
    // Each slot of the block was served by n0 before the cut and by n2
    // after it, n2's first ID after n0's last.
    for slot in [first, first + 1] {
        let counts = [
            ids_on(&history, &layout, "n0", slot).len(),
            ids_on(&history, &layout, "n2", slot).len(),
        ];
        let gap_ms = gap(&history, &layout, "n0", "n2", slot);
        println!(
            "(a) two slots on {}: slot {slot}: n0 issued {} IDs on it, n2 {}; n0's last ID to n2's first: {gap_ms:?} ms",
            C::NAME,
            counts[0],
            counts[1]
        );
        assert!(
            gap_ms.is_some_and(|gap| gap > 0),
            "slot {slot}: n0 issued {} IDs on it and n2 {}, n2's first not after n0's last ({gap_ms:?} ms)\n{}",
            counts[0],
            counts[1],
            findings.report(&history)
        );
    }
}

/// (a), once, or `SNOWMINT_PARTITION_GAP_RUNS` times (the benchmark of
/// its gap): prints the gaps' minimum, median and maximum.
pub async fn gap_runs<C: Placed>(binary: &'static str) {
    let runs: usize = std::env::var("SNOWMINT_PARTITION_GAP_RUNS")
        .ok()
        .map(|text| {
            text.parse()
                .expect("SNOWMINT_PARTITION_GAP_RUNS is a count")
        })
        .unwrap_or(1);
    let mut gaps: Vec<i64> = Vec::new();
    for _ in 0..runs {
        let outcome = isolated_from_the_coordinator::<C>(binary).await;
        gaps.extend(outcome.gap_ms);
    }
    gaps.sort_unstable();
    if let (Some(min), Some(max)) = (gaps.first(), gaps.last()) {
        println!(
            "(a) on {}: gap from the isolated node's last ID to the new holder's first, {} runs: min {min} ms, median {} ms, max {max} ms",
            C::NAME,
            gaps.len(),
            gaps[gaps.len() / 2]
        );
    }
}

/// (b) As (a), `n0`'s clock running at `rate` of real time (libfaketime:
/// its monotonic clock, sleeps and timeouts too). With the clock check on
/// (the skew allowed set to an hour, so that only the rate judges), `n0`
/// must notice that its clock runs slow and fence itself, with a reason
/// that says so; then the partition must find it fenced, and every rule
/// holds.
pub async fn slow_clock_fences_itself<C: Placed>(binary: &'static str, rate: f64) {
    let mut settings = Settings::new("slow");
    settings.extra = vec!["--max-clock-skew", "1h"];
    let clocks = [Clock::Rate(rate), Clock::Real, Clock::Real];
    let mut run = Run::<C>::new(binary, "b", 1, &clocks, settings).await;
    run.start(1);
    run.wait_held(1).await;
    run.start(0);
    run.start(2);
    run.start_clients(1, 0x5eed, Duration::from_millis(2));
    let reason = run.wait_fenced(0, "this node's clock runs slow").await;
    println!("(b) at rate {rate} on {}: {reason}", C::NAME);
    assert!(
        reason.contains("it claims no slot until its clock runs at the right rate"),
        "{reason}"
    );
    // Both slots pass to the nodes whose clocks are sound.
    let slot = run.wait_held(2).await;
    let members: Vec<_> = run.members.iter().collect();
    run.network.isolate(&run.nodes[0].host, &members);
    tokio::time::sleep(TRAFFIC).await;
    run.network.heal_all();
    tokio::time::sleep(TRAFFIC).await;
    assert_eq!(run.held(2), Some(slot));
    let name = format!("(b) slow clock at rate {rate}");
    finish(&mut run, &name, Findings::failed).await;
}

/// (b) with the clock check off: `n0`'s clock at half the rate of real
/// time, isolated while it holds its slot. Its deadline, timed by that
/// clock, outlasts its lease, so it may go on issuing after `n2` took the
/// slot over (a fencing breach, printed, not required); but it cannot
/// store a mark while cut off, so its IDs stay at or below the mark `n2`
/// starts above: no ID may repeat or fall outside its claim (invariant 4
/// alone). The mark is reserved 3 s ahead (not 1 s), so that the mark
/// does not stop `n0` before its deadline does and the breach can show.
/// (At a fifth of real time, `n0` could not even renew a 2 s lease: its
/// renewals, a third of the TTL apart by its clock, come 3.3 s apart.)
pub async fn slow_clock_unchecked_keeps_ids_unique<C: Placed>(binary: &'static str) {
    let mut settings = Settings::new("unchecked");
    settings.extra = vec![
        "--max-clock-skew",
        "off",
        "--mark-step",
        "3s",
        "--mark-wait-max",
        "10s",
    ];
    let clocks = [Clock::Rate(0.5), Clock::Real, Clock::Real];
    let mut run = Run::<C>::new(binary, "b-off", 1, &clocks, settings).await;
    let slot = three_nodes(&mut run).await;
    let members: Vec<_> = run.members.iter().collect();
    run.network.isolate(&run.nodes[0].host, &members);
    taken_over_then_healed(&run, slot).await;
    let (_, findings) = finish(
        &mut run,
        "(b) slow clock at rate 0.5, clock check off",
        Findings::unique_failed,
    )
    .await;
    println!(
        "(b) unchecked on {}: {} fencing breaches (the mark kept the IDs apart)",
        C::NAME,
        findings.fencing.len()
    );
}

/// Which way (c) cuts.
#[derive(Debug, Clone, Copy)]
pub enum OneWay {
    /// `n0`'s packets to the coordinator are dropped; the coordinator's
    /// reach it.
    NodeCannotSend,
    /// The coordinator's packets to `n0` are dropped; `n0`'s reach it.
    NodeCannotReceive,
}

/// (c) As (a), cut one way only. A node that can send but not receive
/// may keep its lease alive at the coordinator (its renewals arrive)
/// while it cannot see the answers: it must fence itself all the same,
/// and the slot passes on once its lease ends.
pub async fn cut_one_way<C: Placed>(binary: &'static str, way: OneWay) {
    let mut run = Run::<C>::new(binary, "c", 1, &[Clock::Real; 3], Settings::new("oneway")).await;
    let slot = three_nodes(&mut run).await;
    for member in &run.members {
        let node = &run.nodes[0].host;
        match way {
            OneWay::NodeCannotSend => run.network.cut(node, member),
            OneWay::NodeCannotReceive => run.network.cut(member, node),
        }
    }
    run.wait_fenced(0, "").await;
    taken_over_then_healed(&run, slot).await;
    let name = format!("(c) cut one way, {way:?}");
    finish(&mut run, &name, Findings::failed).await;
}

/// (d) A coordinator of `members` members: `n0` is partitioned together
/// with one member, the one that leads (so that the majority must elect
/// another), which still accepts `n0`'s connection but has no quorum.
/// The partition heals a TTL after `n0` fenced itself, while its slot is
/// being claimed anew. With one server (PostgreSQL) there is no minority
/// to be partitioned with: `n0` is cut off alone, and the heal comes as
/// well mid-claim.
pub async fn minority_partition_heals_mid_claim<C: Placed>(binary: &'static str, members: usize) {
    let mut run = Run::<C>::new(
        binary,
        "d",
        members,
        &[Clock::Real; 3],
        Settings::new("minority"),
    )
    .await;
    three_nodes(&mut run).await;
    let leader = if members > 1 {
        Some(run.coordinator.leader().await)
    } else {
        None
    };
    let node = run.nodes[0].host.clone();
    let majority: Vec<_> = (0..members)
        .filter(|m| Some(*m) != leader)
        .map(|m| run.members[m].clone())
        .collect();
    let majority_refs: Vec<_> = majority.iter().collect();
    // The minority: n0 and the leader, cut from the majority; the other
    // nodes stay with the majority.
    run.network.isolate(&node, &majority_refs);
    if let Some(leader) = leader {
        let lonely = run.members[leader].clone();
        let others: Vec<_> = majority_refs
            .iter()
            .copied()
            .chain([&run.nodes[1].host, &run.nodes[2].host])
            .collect();
        run.network.isolate(&lonely, &others);
    }
    run.wait_fenced(0, "").await;
    // The slot's key runs out about a TTL after n0's last renewal, when
    // n2 takes it: heal then.
    tokio::time::sleep(Duration::from_secs(2)).await;
    run.network.heal_all();
    if let Some(leader) = leader {
        let new = run.coordinator.leader().await;
        println!(
            "(d) on {} members of {}: member {leader} led, member {new} leads after the heal",
            members,
            C::NAME
        );
    }
    // Every slot held again, by whichever nodes won.
    snowmint_test_support::wait::eventually(
        "both slots to be held again",
        crate::LIMIT,
        || async {
            let held: Vec<u64> = (0..3).filter_map(|n| run.held(n)).collect();
            (held.len() == 2).then_some(())
        },
    )
    .await;
    tokio::time::sleep(TRAFFIC).await;
    let name = format!("(d) minority partition of {members} members, healed mid-claim");
    finish(&mut run, &name, Findings::failed).await;
}
