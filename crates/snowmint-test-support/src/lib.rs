//! What snowmint's tests and benches share: real servers started on free
//! loopback ports and stopped on drop, HTTP helpers, the OpenAPI schema
//! checker, temporary directories, and waits that end.
//!
//! Not published: a test crate takes it as a dev-dependency with the
//! features it needs, such as
//! `snowmint-test-support = { path = "../snowmint-test-support", features = ["etcd"] }`.
//!
//! # Layout
//!
//! Always there:
//!
//! - [`wait`]: every wait in a test has a deadline ([`wait::wait_until`],
//!   [`wait::eventually`], [`wait::Deadline`]) and fails saying what it
//!   waited for and for how long.
//! - [`temp`]: temporary directories ([`tempfile::TempDir`]).
//! - [`net`]: free loopback ports, and waiting for one to listen.
//! - [`hostile`]: clients that attack a node's resources (silent
//!   connections, pipelined requests never read, unread gRPC streams), and
//!   what the process under attack costs (RSS, descriptors, `prlimit`).
//! - [`http`]: a blocking HTTP/1.1 client on one keep-alive connection.
//! - [`schema`]: checks a JSON value against the OpenAPI document's schemas.
//! - [`serve`]: the real `snowmint serve` binary as a child process.
//!
//! Behind a cargo feature, so that a test crate builds only what it uses:
//!
//! - `server` (feature `server`): the service in-process, a router on a
//!   static node and requests sent to it without a socket.
//! - `grpc` (feature `server`): the gRPC API in-process on a loopback
//!   socket, on a claim the test switches on and off.
//! - `certs` (feature `tls`): certificates made by the test (a CA, server
//!   and client certificates with chosen serial numbers), and a TLS client
//!   that reads the serial of the certificate a server presents.
//! - `servers` (feature `fleet`): the `Cluster` a fleet test runs against,
//!   the server process behind it, and a TCP proxy that cuts a node off.
//!   The features `etcd` and `zookeeper` add the two servers (and turn on
//!   snowmint-fleet's features of the same names), alone or as three
//!   members (`servers::replicated`: a 3-member etcd cluster, a 3-server
//!   ZooKeeper ensemble, whose members a test can kill, restart, pause and
//!   cut off). A missing server fails the test and says how to install it.
//! - `servers::postgres` (feature `postgres`, without the fleet): a real
//!   PostgreSQL server, run as the `postgres` user when the test is root,
//!   with a superuser the test connects as, killed, paused, stopped and
//!   restarted (with its clock moved) by the test. With the feature
//!   `fleet-postgres` (which turns on snowmint-fleet's `postgres`), the
//!   same server as a fleet coordinator: `PostgresCluster`.
//! - `fleet` (feature `fleet`): in-process nodes and the claim engine's
//!   scenarios, declared against one server by `scenario_tests!`.
//! - `serve_fleet` (feature `fleet`): the binary's fleet scenarios,
//!   declared against one server by `fleet_tests!`.
//! - `serve_cluster` (feature `fleet`): the binary's scenarios on a
//!   replicated coordinator (a member killed, paused, cut off; the quorum
//!   lost), declared against one by `cluster_tests!`; each prints how long
//!   the fault kept each node from issuing.
//! - `chaos` (feature `fleet`): the randomized fault test, five real
//!   nodes on a replicated coordinator under random faults, and its
//!   checker.

pub mod hostile;
pub mod http;
pub mod net;
pub mod schema;
pub mod serve;
pub mod temp;
pub mod wait;

#[cfg(feature = "tls")]
pub mod certs;
#[cfg(feature = "fleet")]
pub mod chaos;
#[cfg(feature = "fleet")]
pub mod fleet;
#[cfg(feature = "server")]
pub mod grpc;
#[cfg(feature = "fleet")]
pub mod serve_cluster;
#[cfg(feature = "fleet")]
pub mod serve_fleet;
#[cfg(feature = "server")]
pub mod server;
#[cfg(any(feature = "fleet", feature = "postgres"))]
pub mod servers;
