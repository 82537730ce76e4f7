//! What a fleet test needs from a coordination server, whichever it is:
//! the claim engine's scenarios drive it through a backend, the binary's
//! through its `--coordinator` URL.

use std::collections::BTreeMap;
use std::future::Future;
use std::net::SocketAddr;

use snowmint_fleet::Backend;

use super::process::ServerProcess;

/// A coordination server started for one test.
pub trait CoordinatorServer: Send + Sync + Sized + 'static {
    /// The backend that talks to it.
    type Backend: Backend;

    /// The service's name in messages.
    const NAME: &'static str;

    /// What `/v1/node` calls the thing that holds a slot key: `lease`,
    /// `session`.
    const SESSION_KIND: &'static str;

    /// Starts a fresh server on free loopback ports and waits until it
    /// answers.
    fn start() -> impl Future<Output = Self> + Send;

    /// Where clients reach it.
    fn client_addr(&self) -> SocketAddr {
        self.process().addr()
    }

    /// A backend that reaches the server at `addr` (the server itself, or
    /// a proxy in front of it).
    fn backend(&self, addr: SocketAddr) -> Self::Backend;

    /// The `--coordinator` URL that reaches the server at `addr` (the
    /// server itself, or a proxy in front of it), credentials included.
    fn url_at(&self, addr: SocketAddr) -> String;

    /// The `--coordinator` URL of the server itself.
    fn url(&self) -> String {
        self.url_at(self.client_addr())
    }

    /// The `--coordinator` URL of the server where it serves: the same as
    /// [`url`](Self::url) on loopback; on a host of a partition network,
    /// its address there, for nodes on other hosts.
    fn served_url(&self) -> String {
        self.url_at(self.process().served_addr())
    }

    /// [`url`](Self::url) as a node shows it (in `/v1/node`, in messages):
    /// the same, with a password hidden.
    fn shown_url(&self) -> String {
        self.url()
    }

    /// The slot keys of `fleet` as the server has them: slot -> holder.
    fn slot_holders(&self, fleet: &str) -> impl Future<Output = BTreeMap<u64, String>> + Send;

    /// The high-water mark of `slot` as the server has it.
    fn stored_mark(&self, fleet: &str, slot: u64) -> impl Future<Output = Option<i64>> + Send;

    /// Overwrites the high-water mark of `slot`, as another writer would.
    fn set_mark(&self, fleet: &str, slot: u64, mark_ms: i64) -> impl Future<Output = ()> + Send;

    /// Deletes the key of `slot`, as an operator would by hand.
    fn delete_slot(&self, fleet: &str, slot: u64) -> impl Future<Output = ()> + Send;

    /// The server's process.
    fn process(&self) -> &ServerProcess;
}
