//! `snowmint serve --coordinator etcd://...`: the real binary against a
//! real etcd server (Debian's etcd-server), started by each test on free
//! loopback ports.

mod fleet_common;
mod serve_common;

use fleet_common::servers::etcd::EtcdCluster;

fleet_common::fleet_tests!(EtcdCluster);
