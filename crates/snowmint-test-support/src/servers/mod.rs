//! Real servers for tests: etcd, ZooKeeper and PostgreSQL started on free
//! loopback ports, or on hosts of a partition network ([`Site`]), and
//! killed on drop; etcd and ZooKeeper alone or as several members, and a
//! TCP proxy that can cut a node off like a partition.
//!
//! - [`CoordinatorServer`]: what a fleet test needs from a coordination
//!   server, whichever it is.
//! - [`process`]: the server's process, its directory and its log.
//! - `etcd` (feature `etcd`), `zookeeper` (feature `zookeeper`),
//!   `postgres` (feature `postgres-server`; a `CoordinatorServer` with
//!   `postgres`): the servers. A missing server fails the test and says
//!   how to install it.
//! - `etcd_tls`, `zookeeper_secure`: the same servers secured as in
//!   production: etcd over mutual TLS (and, with `EtcdServer::enable_auth`,
//!   etcd's users and roles); ZooKeeper with digest authentication, or
//!   over mutual TLS.
//! - [`proxy`]: the partition.
//! - `replicated` (feature `etcd` or `zookeeper`): a 3-member etcd
//!   cluster and a 3-server ZooKeeper ensemble, whose members a test can
//!   kill, restart, pause and cut off.

#[cfg(feature = "etcd")]
pub mod etcd;
#[cfg(feature = "etcd")]
pub mod etcd_tls;
#[cfg(feature = "postgres-server")]
pub mod postgres;
pub mod process;
pub mod proxy;
#[cfg(any(feature = "etcd", feature = "zookeeper"))]
pub mod replicated;
#[cfg(feature = "zookeeper")]
pub mod zookeeper;
#[cfg(feature = "zookeeper")]
pub mod zookeeper_secure;

mod coordinator;
mod site;
pub use coordinator::CoordinatorServer;
pub use site::Site;
