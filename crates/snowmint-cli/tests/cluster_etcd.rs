//! `snowmint serve --coordinator etcd://a,b,c`: the real binary on a real
//! 3-member etcd cluster (Debian's etcd-server), started by each test on
//! loopback ports, while a member is killed, stopped or cut off, or two
//! of them are down. Every test prints how long the fault kept each node
//! from issuing (`--nocapture`).

use snowmint_test_support::servers::replicated::etcd::ReplicatedEtcd;

snowmint_test_support::cluster_tests!(ReplicatedEtcd);
