//! `snowmint serve --memcached-listen`: the real binary answering
//! memcached's text protocol, driven by a real memcached client from PyPI
//! (pymemcache, in a virtualenv under target/) and by `nc`, as
//! applications and operators would.
//!
//! What memcached does is the reference (its `doc/protocol.txt`): `get`
//! and `gets` answer `VALUE <key> <flags> <bytes>[ <cas>]`, data, `END`;
//! an unknown command is `ERROR`; a malformed one `CLIENT_ERROR`; a server
//! that cannot answer says `SERVER_ERROR`; `quit` closes without a word.

use std::collections::HashSet;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::process::{Command, Stdio};
use std::time::Duration;

use snowmint::{Layout, SnowflakeId};
use snowmint_test_support::binary::Service;
use snowmint_test_support::net::free_port;
use snowmint_test_support::python::run_python;
use snowmint_test_support::temp::{TempDir, temp_dir};

const SNOWMINT: &str = env!("CARGO_BIN_EXE_snowmint");

/// A bound on each wait for the service (not a timing assertion).
const LIMIT: Duration = Duration::from_secs(30);

/// A node on datacenter 5, machine 9, with memcached on a free port.
fn node(label: &str, extra: &[&str]) -> (Service, SocketAddr, TempDir) {
    let home = temp_dir(label);
    let state = home.path().join("state");
    let memcached = SocketAddr::from(([127, 0, 0, 1], free_port()));
    let memcached_arg = memcached.to_string();
    let mut args = vec![
        "--state-dir",
        state.to_str().unwrap(),
        "--memcached-listen",
        &memcached_arg,
    ];
    args.extend_from_slice(extra);
    if !extra.contains(&"--coordinator") {
        args.extend_from_slice(&["--datacenter", "5", "--machine", "9"]);
    }
    let service = Service::start(SNOWMINT, home.path(), &args, &[]);
    (service, memcached, home)
}

/// The IDs of a pymemcache session, one line per ID as
/// `connection id` (see the script).
const FETCH: &str = r#"
import sys, threading
from pymemcache.client.base import Client

host, port = sys.argv[1], int(sys.argv[2])
connections, singles, batches = 4, 5000, 200
out, lock = [], threading.Lock()

def fetch(n):
    client = Client((host, port), connect_timeout=10, timeout=30)
    ids = []
    # One ID per get, as katsubushi's clients ask.
    for i in range(singles):
        ids.append(client.get(f"order-{i}"))
    # 100 keys per request: get_many sends `get k1 ... k100`, gets_many
    # `gets k1 ... k100`; every key has its own ID.
    keys = [f"k{i}" for i in range(100)]
    for b in range(batches):
        if b % 2:
            got = client.get_many(keys)
            ids.extend(got[k] for k in keys)
        else:
            got = client.gets_many(keys)
            ids.extend(got[k][0] for k in keys)
    version = client.version()
    client.close()
    with lock:
        out.extend(f"{n} {int(i)}" for i in ids)
        out.append(f"version {version.decode()}")

threads = [threading.Thread(target=fetch, args=(n,)) for n in range(connections)]
for t in threads: t.start()
for t in threads: t.join()
print("\n".join(out))
"#;

/// A real memcached client fetches 100,000 IDs over four connections,
/// one per `get` and a hundred per `get`/`gets` of many keys: all
/// distinct, all of this node, each connection's in increasing order, as
/// pymemcache reads them (so the framing is memcached's).
#[test]
fn pymemcache_fetches_100000_ids_all_distinct_and_from_this_node() {
    let (_service, memcached, _home) = node("memcached-pymemcache", &[]);
    let output = run_python(FETCH, &["127.0.0.1", &memcached.port().to_string()]);
    let mut seen = HashSet::new();
    let mut last = [0u64; 4];
    let mut versions = 0;
    for line in output.lines() {
        let (who, value) = line.split_once(' ').unwrap();
        if who == "version" {
            assert_eq!(value, env!("CARGO_PKG_VERSION"));
            versions += 1;
            continue;
        }
        let connection: usize = who.parse().unwrap();
        let id: u64 = value.parse().unwrap();
        assert!(seen.insert(id), "ID {id} was handed out twice");
        assert!(
            id > last[connection],
            "connection {connection}: {id} after {}",
            last[connection]
        );
        last[connection] = id;
        let parts = Layout::TWITTER.decode(SnowflakeId::from_u64(id)).unwrap();
        assert_eq!(
            (parts.get("datacenter"), parts.get("machine")),
            (Some(5), Some(9)),
            "ID {id}"
        );
    }
    assert_eq!(versions, 4);
    assert_eq!(seen.len(), 100_000);
}

/// pymemcache's storing calls get memcached's error lines, which it
/// raises as its own exceptions, and the connection serves gets after
/// them; with `noreply` (pymemcache's default for set) nothing is answered.
#[test]
fn pymemcache_sees_storing_refused_and_goes_on() {
    let (_service, memcached, _home) = node("memcached-refused", &[]);
    let script = r#"
import sys
from pymemcache.client.base import Client
from pymemcache.exceptions import MemcacheClientError, MemcacheUnknownCommandError
client = Client((sys.argv[1], int(sys.argv[2])), timeout=30)
client.set("k", "v")                     # noreply: nothing comes back
try:
    client.set("k", "v", noreply=False)
    print("stored")
except MemcacheClientError as error:
    print("client error:", error)
try:
    client.delete("k", noreply=False)
except MemcacheClientError as error:
    print("client error:", error)
try:
    client.raw_command(b"frobnicate")
except MemcacheUnknownCommandError as error:
    print("unknown command")
print("id", int(client.get("after")))
"#;
    let output = run_python(script, &["127.0.0.1", &memcached.port().to_string()]);
    let lines: Vec<&str> = output.lines().collect();
    assert_eq!(lines.len(), 4, "{output}");
    assert!(
        lines[0].starts_with("client error: b'set is not served: this is a snowmint ID service"),
        "{output}"
    );
    assert!(
        lines[1].starts_with("client error: b'delete is not served"),
        "{output}"
    );
    assert_eq!(lines[2], "unknown command");
    let id: u64 = lines[3].strip_prefix("id ").unwrap().parse().unwrap();
    assert_eq!(
        Layout::TWITTER
            .decode(SnowflakeId::from_u64(id))
            .unwrap()
            .get("machine"),
        Some(9)
    );
}

/// What `nc` sends and reads: the exchange of one connection.
fn nc(address: SocketAddr, input: &[u8]) -> String {
    let mut child = Command::new("nc")
        // -N: end the connection when the input ends, as a script would.
        .args(["-N", "127.0.0.1", &address.port().to_string()])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("nc is missing: apt-get install netcat-openbsd (scripts/test installs it)");
    child.stdin.take().unwrap().write_all(input).unwrap();
    let output = child.wait_with_output().unwrap();
    String::from_utf8(output.stdout).unwrap()
}

/// The IDs in `VALUE` answers, in order.
fn values(answer: &str) -> Vec<u64> {
    let lines: Vec<&str> = answer.split("\r\n").collect();
    lines
        .iter()
        .enumerate()
        .filter(|(_, line)| line.starts_with("VALUE "))
        .map(|(at, _)| lines[at + 1].parse().unwrap())
        .collect()
}

/// Commands typed with nc get memcached's answers, byte for byte: an
/// unknown command or a bare `get` is `ERROR`, names are case-sensitive,
/// a long key is a `CLIENT_ERROR`, a storage command's data block is read
/// and dropped, `version`, then `quit` closes.
#[test]
fn nc_gets_memcacheds_answers() {
    let (_service, memcached, _home) = node("memcached-nc", &[]);
    let long_key = "k".repeat(251);
    let input = format!(
        "bogus\r\nget\r\nGET a\r\nget {long_key}\r\nset k 0 0 5\r\nhello\r\nset k 0 0 5 noreply\r\nhello\r\n\
         get a\r\ngets x y z\r\nversion\r\nquit\r\nget never\r\n"
    );
    let answer = nc(memcached, input.as_bytes());
    let ids = values(&answer);
    assert_eq!(ids.len(), 4, "{answer}");
    let expected = format!(
        "ERROR\r\nERROR\r\nERROR\r\nCLIENT_ERROR bad command line format\r\n\
         CLIENT_ERROR set is not served: this is a snowmint ID service, which answers get, gets, version and quit (each key gets a new ID) and stores nothing\r\n\
         VALUE a 0 {}\r\n{}\r\nEND\r\n\
         VALUE x 0 {} 0\r\n{}\r\nVALUE y 0 {} 0\r\n{}\r\nVALUE z 0 {} 0\r\n{}\r\nEND\r\n\
         VERSION {}\r\n",
        ids[0].to_string().len(),
        ids[0],
        ids[1].to_string().len(),
        ids[1],
        ids[2].to_string().len(),
        ids[2],
        ids[3].to_string().len(),
        ids[3],
        env!("CARGO_PKG_VERSION"),
    );
    assert_eq!(answer, expected);
    assert!(ids.windows(2).all(|pair| pair[0] < pair[1]), "{ids:?}");
}

/// A line past 8 KiB is answered `CLIENT_ERROR line too long` and the
/// connection closed (the rest of it cannot be read as requests). A
/// client that connects and says nothing, and one that stops halfway
/// through its first line, are closed at the first request's deadline
/// (the request timeout, as on every listener); one that goes quiet after
/// a request is closed after the memcached idle timeout; each is counted
/// in `/metrics`. Meanwhile, and after, other clients are served.
#[test]
fn long_lines_and_silent_clients_cost_nothing_to_others() {
    let (service, memcached, _home) = node(
        "memcached-hostile",
        &["--memcached-idle-timeout", "1s", "--request-timeout", "1s"],
    );
    let mut long = vec![b'a'; 9000];
    long.extend_from_slice(b"\r\nget a\r\n");
    assert_eq!(nc(memcached, &long), "CLIENT_ERROR line too long\r\n");

    let silent = TcpStream::connect(memcached).unwrap();
    let mut halfway = TcpStream::connect(memcached).unwrap();
    halfway.write_all(b"get a").unwrap();
    let mut quiet = TcpStream::connect(memcached).unwrap();
    quiet.set_read_timeout(Some(LIMIT)).unwrap();
    quiet.write_all(b"get a\r\n").unwrap();
    let mut answer = Vec::new();
    let mut byte = [0u8];
    while !answer.ends_with(b"END\r\n") {
        assert_eq!(quiet.read(&mut byte).unwrap(), 1, "{answer:?}");
        answer.push(byte[0]);
    }
    // Others are served while those hang on.
    for _ in 0..5 {
        assert_eq!(values(&nc(memcached, b"get a\r\n")).len(), 1);
    }
    for mut stream in [silent, halfway, quiet] {
        stream.set_read_timeout(Some(LIMIT)).unwrap();
        let mut rest = Vec::new();
        // The server closes it: end of stream, and nothing more answered.
        stream.read_to_end(&mut rest).unwrap();
        assert_eq!(rest, b"", "a silent or unfinished request got an answer");
    }
    let metrics = service.connect().get("/metrics").unwrap().body;
    let count = |limit: &str| {
        let series = format!("snowmint_limit_reached_total{{limit=\"{limit}\"}} ");
        metrics
            .lines()
            .find_map(|line| line.strip_prefix(&series))
            .map_or(0.0, |value| value.parse::<f64>().unwrap())
    };
    assert_eq!(count("first_request_timeout"), 2.0, "{metrics}");
    assert_eq!(count("idle_timeout"), 1.0, "{metrics}");
    assert_eq!(values(&nc(memcached, b"get b\r\n")).len(), 1);
}

/// A node that may not issue (here: its coordinator is unreachable, so it
/// holds no slot) answers `SERVER_ERROR <reason>`, one line, and keeps the
/// connection for the next request, as memcached does.
#[test]
fn a_fenced_node_answers_server_error_and_keeps_the_connection() {
    let (_service, memcached, _home) = node(
        "memcached-fenced",
        &["--coordinator", "etcd://127.0.0.1:1", "--fleet", "mc"],
    );
    let mut stream = TcpStream::connect(memcached).unwrap();
    stream.set_read_timeout(Some(LIMIT)).unwrap();
    let mut reader = BufReader::new(stream.try_clone().unwrap());
    for request in ["get a\r\n", "gets a b\r\n"] {
        stream.write_all(request.as_bytes()).unwrap();
        let mut line = String::new();
        reader.read_line(&mut line).unwrap();
        assert!(
            line.starts_with("SERVER_ERROR this node holds no slot and may not issue IDs"),
            "{line:?}"
        );
        assert!(line.ends_with("\r\n") && !line[..line.len() - 2].contains(['\r', '\n']));
    }
    stream.write_all(b"version\r\n").unwrap();
    let mut line = String::new();
    reader.read_line(&mut line).unwrap();
    assert_eq!(line, format!("VERSION {}\r\n", env!("CARGO_PKG_VERSION")));
}

/// memcached's protocol carries no token and no TLS. A node with tokens
/// or TLS refuses to start with memcached on an address other than
/// loopback (exit code 2, naming the way out), unless told it may be
/// open; then, and on loopback, it starts and says in its log that
/// memcached is open. (It served IDs to anyone before.)
#[test]
fn memcached_beside_tokens_or_tls_is_open_only_when_said() {
    let home = temp_dir("memcached-gate");
    let tokens = home.path().join("tokens");
    std::fs::write(&tokens, "memcached-token-0123456789\n").unwrap();
    std::fs::set_permissions(&tokens, std::os::unix::fs::PermissionsExt::from_mode(0o600)).unwrap();
    let ca = snowmint_test_support::tls::TestCa::new("memcached");
    let server = ca.server("localhost");
    let port = free_port();
    let everywhere = format!("0.0.0.0:{port}");
    let token_args = ["--auth-token-file", tokens.to_str().unwrap()];
    let tls_args = [
        "--tls-cert",
        server.cert.to_str().unwrap(),
        "--tls-key",
        server.key.to_str().unwrap(),
    ];
    for secured in [&token_args[..], &tls_args[..]] {
        let args = [
            secured,
            &["--memcached-listen", &everywhere, "--datacenter", "1"],
        ]
        .concat();
        let (status, _, stderr) =
            snowmint_test_support::binary::run_to_end(SNOWMINT, home.path(), &args, &[]);
        assert_eq!(status.code(), Some(2), "{args:?}: {stderr}");
        assert!(
            stderr.contains(&format!(
                "--memcached-listen {everywhere} would serve IDs to any client"
            )) && stderr.contains("127.0.0.1:")
                && stderr.contains("--memcached-unauthenticated"),
            "{stderr}"
        );
    }

    // Said open: it starts, serves, and says so in its log.
    let state = home.path().join("state");
    let args = [
        &token_args[..],
        &[
            "--memcached-listen",
            &everywhere,
            "--memcached-unauthenticated",
            "--datacenter",
            "1",
            "--state-dir",
            state.to_str().unwrap(),
        ],
    ]
    .concat();
    let service = Service::start(SNOWMINT, home.path(), &args, &[]);
    let answer = nc(
        SocketAddr::from(([127, 0, 0, 1], port)),
        b"get a\r\nquit\r\n",
    );
    assert!(answer.starts_with("VALUE a 0 "), "{answer}");
    let log = service.log();
    assert!(
        log.contains(&format!(
            "memcached on {everywhere} issues IDs with no token and in cleartext"
        )) && log.contains("served open by --memcached-unauthenticated"),
        "{log}"
    );
    // HTTP still needs the token.
    assert_eq!(service.connect().get("/v1/id").unwrap().status, 401);
    // /v1/node names each listener and which issue with no credential.
    let described = service
        .connect()
        .get_with(
            "/v1/node",
            &[("Authorization", "Bearer memcached-token-0123456789")],
        )
        .unwrap();
    assert_eq!(described.status, 200, "{}", described.body);
    let described: serde_json::Value = serde_json::from_str(&described.body).unwrap();
    let listeners: Vec<(String, bool, bool)> = described["listeners"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| {
            let name = l["name"].as_str().unwrap().to_owned();
            (
                name,
                l["tokens"].as_bool().unwrap(),
                l["open"].as_bool().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        listeners,
        [
            ("http".to_owned(), true, false),
            ("memcached".to_owned(), false, true)
        ],
        "{described}"
    );
    assert_eq!(described["listeners"][1]["address"], everywhere);

    // On loopback it needs no word, and the log says it is open there.
    let (service, memcached, _home) = node("memcached-loopback", &token_args);
    let answer = nc(memcached, b"get a\r\nquit\r\n");
    assert!(answer.starts_with("VALUE a 0 "), "{answer}");
    assert!(
        service
            .log()
            .contains("reachable from this host only (loopback)"),
        "{}",
        service.log()
    );
}
