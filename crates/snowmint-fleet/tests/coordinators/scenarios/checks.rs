//! Checks of a finished run: no ID issued twice, every ID issued inside
//! its claim (from one of the claim's slots), and every slot handed from one holder to the next only after
//! the first had stopped.

use std::collections::{BTreeMap, HashSet};

use snowmint::Layout;

use crate::node::Finished;

/// A slot handed from one node to another (or to itself, after a loss).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Handover {
    /// The slot.
    pub slot: u64,
    /// The node that held it first.
    pub from: String,
    /// The node that held it next.
    pub to: String,
}

/// Checks a finished run; returns the handovers it saw so that a scenario
/// can insist on the one it provoked.
pub fn check_run(nodes: &[Finished]) -> Vec<Handover> {
    let layout = Layout::TWITTER;
    let mut seen = HashSet::new();
    let mut total = 0;
    for node in nodes {
        for issued in &node.issued {
            total += 1;
            assert!(
                seen.insert(issued.id),
                "{} issued {} a second time",
                node.name,
                issued.id
            );
            let claim = node
                .claims
                .iter()
                .find(|claim| claim.generation == issued.generation)
                .unwrap_or_else(|| {
                    panic!(
                        "{}: no record of claim generation {}",
                        node.name, issued.generation
                    )
                });
            assert_eq!(claim.slot, issued.slot);
            // A node of several slots issues from every slot of its block.
            let slot = layout.slot_of(layout.node_of(issued.id)).unwrap();
            assert!(
                (claim.slot..claim.slot + claim.slots).contains(&slot),
                "{}: ID {} carries slot {slot}, outside its claim's slots {}..{}",
                node.name,
                issued.id,
                claim.slot,
                claim.slot + claim.slots
            );
            assert!(
                claim.claimed_at <= issued.at && issued.at < claim.valid_until,
                "{}: ID {} issued outside its claim",
                node.name,
                issued.id
            );
        }
    }
    // Every claim of every node, per slot, in the order they were made.
    let mut by_slot: BTreeMap<u64, Vec<(&str, &snowmint_fleet::ClaimRecord)>> = BTreeMap::new();
    for node in nodes {
        for claim in &node.claims {
            for slot in claim.slot..claim.slot + claim.slots {
                by_slot.entry(slot).or_default().push((&node.name, claim));
            }
        }
    }
    let mut handovers = Vec::new();
    for (slot, claims) in &mut by_slot {
        claims.sort_by_key(|(_, claim)| claim.claimed_at);
        for pair in claims.windows(2) {
            let ((from, earlier), (to, later)) = (pair[0], pair[1]);
            // Fenced before the next holder could even ask for the slot.
            assert!(
                earlier.valid_until <= later.claimed_at,
                "slot {slot}: {from} could still issue until {:?} after {to} claimed it",
                earlier.valid_until - later.claimed_at
            );
            // The next holder's IDs all come after the previous holder's.
            let last_before = issued_under(nodes, from, earlier.generation).max();
            let first_after = issued_under(nodes, to, later.generation).min();
            if let (Some(last_before), Some(first_after)) = (last_before, first_after) {
                assert!(
                    first_after > last_before,
                    "slot {slot}: {to} issued at {first_after} ms, not after {from}'s last ID at {last_before} ms"
                );
            }
            handovers.push(Handover {
                slot: *slot,
                from: from.to_owned(),
                to: to.to_owned(),
            });
        }
    }
    println!(
        "{total} IDs checked across {} nodes, {} handovers",
        nodes.len(),
        handovers.len()
    );
    handovers
}

/// Fails unless `slot` went from `from` to `to` among `handovers`.
pub fn assert_handed(handovers: &[Handover], slot: u64, from: &str, to: &str) {
    let (from, to) = (from.to_owned(), to.to_owned());
    let wanted = Handover { slot, from, to };
    assert!(
        handovers.contains(&wanted),
        "no {wanted:?} in {handovers:?}"
    );
}

/// The timestamp of each ID `name` issued under `generation`.
fn issued_under<'a>(
    nodes: &'a [Finished],
    name: &'a str,
    generation: u64,
) -> impl Iterator<Item = i64> + 'a {
    nodes
        .iter()
        .filter(move |node| node.name == name)
        .flat_map(|node| &node.issued)
        .filter(move |issued| issued.generation == generation)
        .map(|issued| Layout::TWITTER.timestamp_ms(issued.id))
}

/// The time of the last ID `node` issued.
pub fn last_issued_ms(node: &Finished) -> i64 {
    let times = node
        .issued
        .iter()
        .map(|issued| Layout::TWITTER.timestamp_ms(issued.id));
    times.max().expect("the node issued IDs")
}
