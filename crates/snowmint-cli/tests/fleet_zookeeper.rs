//! `snowmint serve --coordinator zk://...`: the real binary against a real
//! ZooKeeper server (Debian's zookeeper), started by each test on a free
//! loopback port.

use snowmint_test_support::servers::zookeeper::ZooKeeperCluster;

snowmint_test_support::fleet_tests!(ZooKeeperCluster);
