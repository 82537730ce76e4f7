//! A real etcd server (Debian's etcd-server) for one test.

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::time::Duration;

use snowmint_fleet::EtcdBackend;
use snowmint_fleet::etcd_api::auth_client::AuthClient;
use snowmint_fleet::etcd_api::kv_client::KvClient;
use snowmint_fleet::etcd_api::{
    AuthenticateRequest, DeleteRangeRequest, KeyValue, PutRequest, RangeRequest,
};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tonic::transport::{Channel, Endpoint};

use super::CoordinatorServer;
use super::process::ServerProcess;
use crate::net::free_port;
use crate::temp::temp_dir;
use crate::wait::within;

pub(crate) const INSTALL: &str = "apt-get install etcd-server (or put an etcd 3.4+ binary on PATH)";

/// A real etcd server (a single-member cluster) on loopback ports.
pub struct EtcdServer {
    process: ServerProcess,
}

impl EtcdServer {
    async fn client(&self) -> Client {
        connect(&[self.process.addr()]).await
    }

    /// [`CoordinatorServer::start`], with `extra` flags given to etcd
    /// (such as `--auth-token-ttl 1`).
    pub async fn start_with(extra: &[&str]) -> EtcdServer {
        let extra: Vec<String> = extra.iter().map(|flag| (*flag).to_owned()).collect();
        EtcdServer {
            process: spawn("http", &extra).await,
        }
    }

    /// Turns etcd's authentication (RBAC) on, with the user `root` (role
    /// `root`) and each of `users`: a name, a password and, when given,
    /// a permission (on a key or a prefix) in a role of its own. Set up
    /// with etcdctl, as an operator would. The clients of
    /// [`CoordinatorServer`]'s methods do not log in: call them before.
    pub async fn enable_auth(
        &self,
        root_password: &str,
        users: &[(&str, &str, Option<Permission>)],
    ) {
        let endpoint = format!("--endpoints=http://{}", self.client_addr());
        enable_auth(&[endpoint], root_password, users).await;
    }

    /// The value of etcd's own counter of the requests it served with
    /// `method` of its KV service (`Range`, `Txn`, `Put`...), from its
    /// `/metrics` endpoint: what clients cost it, counted by the server.
    pub async fn kv_requests(&self, method: &str) -> f64 {
        let mut stream = within(
            "a connection to etcd's /metrics",
            Duration::from_secs(20),
            TcpStream::connect(self.client_addr()),
        )
        .await
        .expect("etcd's client port takes connections");
        let request = "GET /metrics HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n";
        stream.write_all(request.as_bytes()).await.unwrap();
        let mut answer = String::new();
        within(
            "etcd's /metrics",
            Duration::from_secs(20),
            stream.read_to_string(&mut answer),
        )
        .await
        .unwrap();
        let wanted = format!("grpc_method=\"{method}\"");
        answer
            .lines()
            .filter(|line| {
                line.starts_with("grpc_server_handled_total{")
                    && line.contains(&wanted)
                    && line.contains("grpc_service=\"etcdserverpb.KV\"")
            })
            .filter_map(|line| line.rsplit(' ').next()?.parse::<f64>().ok())
            .sum()
    }

    /// The keys and values under `prefix` (every key that starts with it),
    /// read by the test's own client logged in as `user`.
    pub async fn keys_as(&self, user: &str, password: &str, prefix: &str) -> Vec<(String, String)> {
        let channel = Endpoint::from_shared(format!("http://{}", self.client_addr()))
            .expect("a loopback address is a URL")
            .connect_timeout(Duration::from_secs(20))
            .connect_lazy();
        let login = AuthenticateRequest {
            name: user.to_owned(),
            password: password.to_owned(),
        };
        let what = format!("a login to the test etcd as {user}");
        let token = within(
            &what,
            Duration::from_secs(20),
            AuthClient::new(channel.clone()).authenticate(login),
        )
        .await
        .unwrap_or_else(|err| panic!("cannot log in to etcd as {user}: {err}"))
        .into_inner()
        .token;
        let mut request = tonic::Request::new(RangeRequest {
            key: prefix.as_bytes().to_vec(),
            range_end: prefix_end(prefix),
            keys_only: false,
        });
        request
            .metadata_mut()
            .insert("token", token.parse().expect("etcd's token is ASCII"));
        let what = format!("a read of {prefix} from the test etcd as {user}");
        let answer = within(
            &what,
            Duration::from_secs(20),
            KvClient::new(channel).range(request),
        )
        .await
        .unwrap_or_else(|err| panic!("cannot read {prefix} as {user}: {err}"));
        key_values(answer.into_inner().kvs)
    }
}

/// A right on a key or a prefix, granted to a role by
/// [`EtcdServer::enable_auth`].
#[derive(Debug, Clone)]
pub struct Permission {
    kind: &'static str,
    key: String,
    prefix: bool,
}

impl Permission {
    /// Read `key`.
    pub fn read(key: &str) -> Permission {
        Permission {
            kind: "read",
            key: key.to_owned(),
            prefix: false,
        }
    }

    /// Read and write `key`.
    pub fn read_write(key: &str) -> Permission {
        Permission {
            kind: "readwrite",
            key: key.to_owned(),
            prefix: false,
        }
    }

    /// The same right on every key that starts with the key.
    pub fn with_prefix(self) -> Permission {
        Permission {
            prefix: true,
            ..self
        }
    }
}

/// Turns authentication on in the etcd that etcdctl reaches with
/// `connection` (its `--endpoints`, and TLS flags): the user `root` (role
/// `root`) with `root_password`, and each of `users` with a permission in
/// a role of its own (see [`EtcdServer::enable_auth`]).
pub(crate) async fn enable_auth(
    connection: &[String],
    root_password: &str,
    users: &[(&str, &str, Option<Permission>)],
) {
    let mut commands: Vec<Vec<String>> = vec![
        vec!["user".into(), "add".into(), format!("root:{root_password}")],
        vec![
            "user".into(),
            "grant-role".into(),
            "root".into(),
            "root".into(),
        ],
    ];
    for (user, password, permission) in users {
        commands.push(vec![
            "user".into(),
            "add".into(),
            format!("{user}:{password}"),
        ]);
        if let Some(permission) = permission {
            let role = format!("{user}-role");
            commands.push(vec!["role".into(), "add".into(), role.clone()]);
            let mut grant = vec![
                "role".into(),
                "grant-permission".into(),
                role.clone(),
                permission.kind.into(),
                permission.key.clone(),
            ];
            if permission.prefix {
                grant.push("--prefix=true".into());
            }
            commands.push(grant);
            commands.push(vec![
                "user".into(),
                "grant-role".into(),
                (*user).to_owned(),
                role,
            ]);
        }
    }
    commands.push(vec!["auth".into(), "enable".into()]);
    for command in commands {
        etcdctl(connection, command).await;
    }
}

/// Runs `etcdctl` (v3 API) with `connection` (`--endpoints`, and TLS
/// flags) and `args`; panics with its output if it fails.
async fn etcdctl(connection: &[String], args: Vec<String>) {
    let connection = connection.to_vec();
    let shown = args.join(" ");
    let output = tokio::task::spawn_blocking(move || {
        std::process::Command::new("etcdctl")
            .env("ETCDCTL_API", "3")
            .args(&connection)
            .args(&args)
            .output()
    })
    .await
    .expect("etcdctl's thread")
    .unwrap_or_else(|err| {
        panic!(
            "cannot run etcdctl ({err}): apt-get install etcd-client (or put etcdctl 3.4+ on PATH)"
        )
    });
    assert!(
        output.status.success(),
        "etcdctl {shown} failed: {}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
}

/// The end of the range of every key that starts with `prefix`: the
/// prefix with its last byte raised (`/` + 1 is `0`; a test's prefixes end
/// in an ASCII character).
fn prefix_end(prefix: &str) -> Vec<u8> {
    let mut end = prefix.as_bytes().to_vec();
    *end.last_mut().expect("a prefix is not empty") += 1;
    end
}

/// Keys and values as text.
fn key_values(kvs: Vec<KeyValue>) -> Vec<(String, String)> {
    kvs.into_iter()
        .map(|kv| {
            (
                String::from_utf8(kv.key).expect("a key is UTF-8"),
                String::from_utf8(kv.value).expect("a value is UTF-8"),
            )
        })
        .collect()
}

/// The test's own etcd client: the key-value calls of etcd's API, as
/// snowmint's backend speaks them.
pub(crate) type Client = KvClient<Channel>;

/// The test's own client of the etcd members at `endpoints` (requests
/// spread over them); it connects at the first request.
pub(crate) async fn connect(endpoints: &[SocketAddr]) -> Client {
    let endpoints = endpoints.iter().map(|addr| {
        Endpoint::from_shared(format!("http://{addr}"))
            .expect("a loopback address is a URL")
            .connect_timeout(Duration::from_secs(20))
    });
    KvClient::new(Channel::balance_list(endpoints))
}

/// Reads `key`, or every key under `prefix` (ending in `/`) with
/// `prefix: true`.
async fn range(client: &mut Client, key: &str, prefix: bool) -> Vec<(String, String)> {
    let request = RangeRequest {
        key: key.as_bytes().to_vec(),
        range_end: if prefix { prefix_end(key) } else { Vec::new() },
        keys_only: false,
    };
    let what = format!("a read of {key} from the test etcd");
    let answer = within(&what, Duration::from_secs(20), client.range(request))
        .await
        .unwrap_or_else(|err| panic!("cannot read {key}: {err}"));
    key_values(answer.into_inner().kvs)
}

/// Whether the etcd member serving clients on `port` says it is healthy
/// (in etcd 3.4: it has a leader and a quorum read succeeds).
pub(crate) async fn healthy(port: u16) -> bool {
    let Ok(mut stream) = TcpStream::connect(("127.0.0.1", port)).await else {
        return false;
    };
    let request = "GET /health HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n";
    let mut answer = String::new();
    stream.write_all(request.as_bytes()).await.is_ok()
        && stream.read_to_string(&mut answer).await.is_ok()
        && answer.contains(r#""health":"true""#)
}

/// Starts a single-member etcd in a directory of its own, its client URL
/// with `scheme` (`http`, or `https` with TLS flags in `extra`), and waits
/// until it is healthy: its metrics listener (always plain HTTP) answers
/// `/health`.
pub(crate) async fn spawn(scheme: &str, extra: &[String]) -> ServerProcess {
    let dir = temp_dir("etcd");
    let data = dir.path().join("data");
    let (client_port, peer_port, metrics_port) = (free_port(), free_port(), free_port());
    let client_url = format!("{scheme}://127.0.0.1:{client_port}");
    let peer_url = format!("http://127.0.0.1:{peer_port}");
    let mut args = args(&data, &client_url, &peer_url);
    args.extend([
        "--listen-metrics-urls".to_owned(),
        format!("http://127.0.0.1:{metrics_port}"),
    ]);
    args.extend_from_slice(extra);
    let process = ServerProcess::spawn("etcd", "etcd", &args, dir, INSTALL, client_port);
    process.wait_ready(move |_| healthy(metrics_port)).await;
    process
}

/// etcd's client port, on a host.
pub const CLIENT_PORT: u16 = 2379;
/// etcd's peer port, on a host.
pub const PEER_PORT: u16 = 2380;

/// The arguments of a single-member etcd with its data in `data`, serving
/// clients at `client_url` and its (one) peer at `peer_url`.
fn args(data: &std::path::Path, client_url: &str, peer_url: &str) -> Vec<String> {
    [
        "--name",
        "snowmint-test",
        "--data-dir",
        &data.display().to_string(),
        "--listen-client-urls",
        client_url,
        "--advertise-client-urls",
        client_url,
        "--listen-peer-urls",
        peer_url,
        "--initial-advertise-peer-urls",
        peer_url,
        "--initial-cluster",
        &format!("snowmint-test={peer_url}"),
        // A short election: the single member leads sooner.
        "--heartbeat-interval",
        "50",
        "--election-timeout",
        "500",
    ]
    .map(String::from)
    .to_vec()
}

impl EtcdServer {
    /// A single-member etcd on `host` of a partition network, serving
    /// plain HTTP on [`CLIENT_PORT`] at the host's address; the test reads
    /// it through a forward ([`CoordinatorServer::client_addr`]), nodes on
    /// other hosts at [`CoordinatorServer::served_url`].
    pub async fn start_on(host: &crate::partition::Host) -> EtcdServer {
        let dir = temp_dir("etcd");
        let data = dir.path().join("data");
        let client_url = format!("http://{}", host.addr(CLIENT_PORT));
        let peer_url = format!("http://{}", host.addr(PEER_PORT));
        let args = args(&data, &client_url, &peer_url);
        let site = super::Site::Host(host.clone());
        let process = ServerProcess::spawn_at(
            &site,
            "etcd",
            "etcd",
            &args,
            &[],
            None,
            dir,
            INSTALL,
            CLIENT_PORT,
        );
        process.wait_ready(healthy).await;
        EtcdServer { process }
    }
}

impl CoordinatorServer for EtcdServer {
    type Backend = EtcdBackend;

    const NAME: &'static str = "etcd";
    const SESSION_KIND: &'static str = "lease";

    async fn start() -> EtcdServer {
        EtcdServer {
            process: spawn("http", &[]).await,
        }
    }

    fn backend(&self, addr: SocketAddr) -> EtcdBackend {
        EtcdBackend::new(vec![addr.to_string()])
    }

    fn url_at(&self, addr: SocketAddr) -> String {
        format!("etcd://{addr}")
    }

    async fn slot_holders(&self, fleet: &str) -> BTreeMap<u64, String> {
        slot_holders(&mut self.client().await, fleet).await
    }

    async fn stored_mark(&self, fleet: &str, slot: u64) -> Option<i64> {
        stored_mark(&mut self.client().await, fleet, slot).await
    }

    async fn set_mark(&self, fleet: &str, slot: u64, mark_ms: i64) {
        let put = PutRequest {
            key: format!("/snowmint/{fleet}/hwm/{slot}").into_bytes(),
            value: mark_ms.to_string().into_bytes(),
            lease: 0,
        };
        self.client()
            .await
            .put(put)
            .await
            .expect("cannot write the mark");
    }

    async fn delete_slot(&self, fleet: &str, slot: u64) {
        let delete = DeleteRangeRequest {
            key: format!("/snowmint/{fleet}/slots/{slot}").into_bytes(),
            range_end: Vec::new(),
        };
        let deleted = self
            .client()
            .await
            .delete_range(delete)
            .await
            .expect("cannot delete the slot key");
        assert_eq!(deleted.into_inner().deleted, 1, "no slot key to delete");
    }

    fn process(&self) -> &ServerProcess {
        &self.process
    }
}

/// The slot keys of `fleet` as etcd has them: slot -> holder.
pub(crate) async fn slot_holders(client: &mut Client, fleet: &str) -> BTreeMap<u64, String> {
    let prefix = format!("/snowmint/{fleet}/slots/");
    range(client, &prefix, true)
        .await
        .into_iter()
        .map(|(key, holder)| {
            let slot = key.strip_prefix(&prefix).and_then(|n| n.parse().ok());
            let slot = slot.unwrap_or_else(|| panic!("unexpected key {key}"));
            (slot, holder)
        })
        .collect()
}

/// The high-water mark of `slot` as etcd has it.
pub(crate) async fn stored_mark(client: &mut Client, fleet: &str, slot: u64) -> Option<i64> {
    let key = format!("/snowmint/{fleet}/hwm/{slot}");
    range(client, &key, false)
        .await
        .first()
        .map(|(_, mark)| mark.parse().expect("mark is not a number"))
}
