//! Fixtures for snowmint's tests and benches: real servers started on free
//! loopback ports and stopped on drop, the `snowmint` binary as a child
//! process, the service in-process, HTTP helpers, the OpenAPI schema
//! checker, temporary directories, and waits that end.
//!
//! Fixtures only: the suites that use them live with the crates they test
//! (the claim engine's scenarios in `snowmint-fleet/tests/coordinators`,
//! the binary's fleet, cluster and chaos tests in
//! `snowmint-cli/tests/fleet`).
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
//! - [`binary`]: the real `snowmint serve` binary as a child process.
//! - [`faketime`]: libfaketime, to run a process with its clock moved.
//! - [`podman`]: podman for the container tests, on a Debian base image
//!   made without a registry.
//! - [`history`]: the history checker: every ID the clients received,
//!   with the process that served it, judged against the fleet's claim
//!   history (no ID twice, each process's IDs increasing, every ID inside
//!   a claim of its server's, no two claims over one millisecond, no
//!   claim serving after the next one had).
//! - [`partition`]: real network partitions: hosts in network namespaces
//!   of their own, joined by one switch, whose links a test cuts one way
//!   or both (nftables) or takes down; servers, nodes and clients each on
//!   a host.
//! - [`rng`]: a small seeded generator, so that one seed replays a
//!   randomized fault schedule.
//! - [`shown`]: an example of the documentation as the body of the test
//!   function that runs it, word for word.
//! - [`servers`]: the [`CoordinatorServer`](servers::CoordinatorServer) a
//!   fleet test runs against, the server process behind it, a TCP proxy
//!   that cuts a node off, and replicated coordinators
//!   (`servers::replicated`, with `etcd` or `zookeeper`: three members a
//!   test can kill, restart, pause and cut off).
//!
//! Behind a cargo feature, so that a test crate builds only what it uses.
//! The backend features mean what they mean in every snowmint crate, the
//! coordinator: each turns on snowmint-fleet's feature of the same name.
//!
//! - `etcd`: a real etcd server, alone (`EtcdServer`)
//!   or as a 3-member cluster (`ReplicatedEtcd`).
//! - `zookeeper`: a real ZooKeeper server, alone
//!   (`ZooKeeperServer`) or as a
//!   3-server ensemble (`ReplicatedZooKeeper`).
//! - `postgres`: a real PostgreSQL server as a coordinator (the
//!   `PostgresServer` below, as a
//!   `CoordinatorServer`).
//! - `postgres-server`: a real PostgreSQL server alone, without the fleet
//!   (the extension's tests): run as the `postgres` user when the test is
//!   root, with a superuser the test connects as, killed, paused, stopped
//!   and restarted (with its clock moved) by the test.
//! - `in-process`: the service in-process (`in_process`): a router on a
//!   static node and requests sent to it without a socket, and its gRPC
//!   API on a loopback socket (`in_process::grpc`), on a claim the test
//!   switches on and off.
//!
//! - `tls` (on with `etcd` and `zookeeper`): a certificate authority made
//!   by the test (rcgen) and the certificates it signs, as PEM and as
//!   files, for every server a test secures: the coordinators as in
//!   production (`servers::etcd_tls`, `servers::zookeeper_secure`,
//!   PostgreSQL's `ssl`) and the node's own listeners; and a TLS client
//!   that reads the serial number of the certificate a server presents.
//!
//! A missing server fails the test and says how to install it.

pub mod binary;
pub mod faketime;
pub mod history;
pub mod hostile;
pub mod http;
pub mod net;
pub mod partition;
pub mod podman;
pub mod python;
pub mod rng;
pub mod schema;
pub mod servers;
pub mod shown;
pub mod temp;
pub mod wait;

#[cfg(feature = "in-process")]
pub mod in_process;
#[cfg(feature = "tls")]
pub mod tls;
