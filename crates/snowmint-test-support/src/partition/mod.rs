//! Real network partitions: hosts in network namespaces of their own,
//! joined by one switch, whose links a test cuts and heals, one way or
//! both.
//!
//! A [`Network`] is a namespace holding a Linux bridge (the switch); each
//! [`Host`] is a namespace of its own, with loopback and one `eth0` (a
//! veth pair, the other end a port of the bridge) at `10.77.0.N/24`. A
//! test places each process on a host: coordinator members, nodes,
//! clients, each where it likes. Everything lives in namespaces the test
//! made, on addresses inside them, and goes when the network is dropped
//! (also when the test panics).
//!
//! - Cuts are nftables rules on the switch (a `bridge` table whose
//!   `forward` chain drops packets from one host's address to another's):
//!   [`Network::cut`] drops one direction, [`Network::cut_both`] both,
//!   [`Network::isolate`] a host from several. Packets are dropped, not
//!   refused: connections stay open and stall, as across a real
//!   partition, and resume with TCP's retransmissions after a heal. ARP
//!   still passes, as it would through a switch whose uplink failed
//!   further on.
//! - [`Network::link_down`] takes a host's cable out: its `eth0` goes
//!   down, and nothing reaches it or leaves it until [`Network::link_up`].
//! - A process runs on a host through [`Host::command`] (`ip netns exec`;
//!   [`Host::command_as`] also drops to another user, for PostgreSQL).
//! - The test's own threads reach into a host without leaving their
//!   namespace: [`Host::connect`] makes a connection from inside the host,
//!   [`Host::forward`] a loopback port of the test's that forwards into
//!   it (how the test reads the servers, never cut), and [`Host::enter`]
//!   moves the calling thread into the host for good (a client thread).
//!
//! It needs root (network namespaces need `CAP_SYS_ADMIN`, links and
//! rules `CAP_NET_ADMIN`), iproute2's `ip`, and `nft` with the kernel's
//! nf_tables for bridges. A missing one fails the test with how to get it;
//! nothing is skipped.
//!
//! ```no_run
//! use snowmint_test_support::partition::Network;
//!
//! let network = Network::new("demo");
//! let (a, b) = (network.host("a"), network.host("b"));
//! network.cut(&a, &b); // a's packets to b are dropped, b's to a pass
//! network.heal(&a, &b);
//! network.isolate(&a, &[&b]); // both ways
//! network.heal_all();
//! ```

mod forward;
mod network;

pub use forward::Forward;
pub use network::{Host, Network, SUBNET_PREFIX};
