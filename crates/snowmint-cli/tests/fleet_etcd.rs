//! `snowmint serve --coordinator etcd://...`: the real binary against a
//! real etcd server (Debian's etcd-server), started by each test on free
//! loopback ports.

use snowmint_test_support::servers::etcd::EtcdCluster;

snowmint_test_support::fleet_tests!(EtcdCluster);
