//! `snowmint serve --coordinator zk://...`: the real binary against a real
//! ZooKeeper server (Debian's zookeeper), started by each test on a free
//! loopback port.

mod fleet_common;
mod serve_common;

use fleet_common::servers::zookeeper::ZooKeeperCluster;

fleet_common::fleet_tests!(ZooKeeperCluster);
