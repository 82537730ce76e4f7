//! `snowmint serve --coordinator zk://a,b,c`: the real binary on a real
//! 3-server ZooKeeper ensemble (Debian's zookeeper), started by each test
//! on loopback ports, while a server is killed, stopped or cut off, or two
//! of them are down. Every test prints how long the fault kept each node
//! from issuing (`--nocapture`).

use snowmint_test_support::servers::replicated::zookeeper::ReplicatedZooKeeper;

snowmint_test_support::cluster_tests!(ReplicatedZooKeeper);
