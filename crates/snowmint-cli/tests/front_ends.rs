//! The front ends for applications moving from other ID services, on the
//! real binary: Leaf's HTTP API (driven by curl, as a shell or a health
//! check would), and all four front ends of one node (HTTP, gRPC, Leaf,
//! memcached) drawing from its one issuer at once.

use std::collections::HashSet;
use std::io::{BufRead, BufReader, Write};
use std::net::{SocketAddr, TcpStream};
use std::process::Command;
use std::time::Duration;

use serde_json::Value;
use snowmint_test_support::binary::Service;
use snowmint_test_support::net::free_port;
use snowmint_test_support::temp::{TempDir, temp_dir};

const SNOWMINT: &str = env!("CARGO_BIN_EXE_snowmint");

/// A static node on datacenter 2, machine `machine`.
fn node(label: &str, machine: u64, extra: &[&str]) -> (Service, TempDir) {
    let home = temp_dir(label);
    let state = home.path().join("state");
    let machine = machine.to_string();
    let mut args = vec![
        "--datacenter",
        "2",
        "--machine",
        &machine,
        "--state-dir",
        state.to_str().unwrap(),
    ];
    args.extend_from_slice(extra);
    (Service::start(SNOWMINT, home.path(), &args, &[]), home)
}

/// `curl -s ARGS`, which must succeed; its standard output.
fn curl(args: &[&str]) -> String {
    let output = Command::new("curl")
        .arg("-sS")
        .args(args)
        .output()
        .expect("curl is missing: apt-get install curl (scripts/test installs it)");
    assert!(
        output.status.success(),
        "curl {args:?}: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout).unwrap()
}

fn node_of(id: u64) -> (u64, u64) {
    ((id >> 17) & 31, (id >> 12) & 31)
}

/// 1,000 requests per node to Leaf's `/api/snowflake/get/{key}` (curl's
/// URL ranges: one connection, one request per key), on two nodes: each
/// answer is a bare decimal ID as Leaf writes it, each node's IDs
/// increase, and no ID comes twice across the nodes.
#[test]
fn leaf_answers_1000_ids_per_node_with_curl_distinct_and_increasing() {
    let (first, _a) = node("leaf-1", 1, &[]);
    let (second, _b) = node("leaf-2", 2, &[]);
    let mut all = HashSet::new();
    for (service, machine) in [(&first, 1), (&second, 2)] {
        let url = format!("http://{}/api/snowflake/get/order[1-1000]", service.address);
        // Each answer is the bare number; -w puts a line break after it.
        let text = curl(&["--fail", "-w", "\\n", &url]);
        let ids: Vec<u64> = text
            .lines()
            .map(|line| {
                assert!(
                    !line.is_empty() && line.bytes().all(|b| b.is_ascii_digit()),
                    "not a bare decimal ID: {line:?}"
                );
                line.parse().unwrap()
            })
            .collect();
        assert_eq!(ids.len(), 1000);
        assert!(
            ids.windows(2).all(|pair| pair[0] < pair[1]),
            "not increasing"
        );
        for &id in &ids {
            assert_eq!(node_of(id), (2, machine), "ID {id}");
            assert!(all.insert(id), "ID {id} twice");
        }
    }
    // Leaf's clients read text/plain; any key, however odd, is accepted
    // and ignored.
    let head = curl(&[
        "-D",
        "-",
        "-o",
        "/dev/null",
        &format!("http://{}/api/snowflake/get/%E2%9C%93%20x", first.address),
    ]);
    assert!(head.starts_with("HTTP/1.1 200"), "{head}");
    assert!(
        head.to_ascii_lowercase()
            .contains("content-type: text/plain"),
        "{head}"
    );
}

/// `/api/snowflake/decode?id=` answers what `/v1/ids/{id}` answers; text
/// that is an ID in another encoding names it.
#[test]
fn leaf_decode_answers_the_fields_and_names_the_encoding_that_reads_an_id() {
    let (service, _home) = node("leaf-decode", 1, &[]);
    let leaf: Value = serde_json::from_str(&curl(&[&format!(
        "http://{}/api/snowflake/decode?id=1724551110457221119",
        service.address
    )]))
    .unwrap();
    assert_eq!(leaf, service.json("/v1/ids/1724551110457221119"));
    assert_eq!(
        (&leaf["datacenter"], &leaf["machine"], &leaf["sequence"]),
        (&Value::from(7), &Value::from(13), &Value::from(4095))
    );
    let error: Value = serde_json::from_str(&curl(&[&format!(
        "http://{}/api/snowflake/decode?id=17eed6190fcedfff",
        service.address
    )]))
    .unwrap();
    assert_eq!(error["error"]["readable_as"], serde_json::json!(["hex"]));
    assert!(
        error["error"]["message"]
            .as_str()
            .unwrap()
            .ends_with("; it reads as hex: encoding=hex"),
        "{error}"
    );
}

/// A node that holds no slot answers Leaf's clients 503 with
/// `Retry-After` (Leaf answers 500; a client retries either).
#[test]
fn leaf_refusals_are_503_with_retry_after() {
    let (service, _home) = {
        let home = temp_dir("leaf-fenced");
        let state = home.path().join("state");
        let args = [
            "--coordinator",
            "etcd://127.0.0.1:1",
            "--state-dir",
            state.to_str().unwrap(),
        ];
        (Service::start(SNOWMINT, home.path(), &args, &[]), home)
    };
    let head = curl(&[
        "-D",
        "-",
        &format!("http://{}/api/snowflake/get/order", service.address),
    ]);
    assert!(head.starts_with("HTTP/1.1 503"), "{head}");
    assert!(
        head.to_ascii_lowercase().contains("\r\nretry-after: "),
        "{head}"
    );
    assert!(head.contains("\"code\":\"no_claim\""), "{head}");
}

/// One node, four front ends, eight clients drawing at once (two per
/// front end): HTTP `/v1/ids`, gRPC `NextIds` (the Rust client), Leaf's
/// `/api/snowflake/get`, memcached `gets`. No ID comes twice; every one is
/// this node's; each client's IDs increase.
#[test]
fn http_grpc_leaf_and_memcached_share_one_issuer() {
    let memcached = SocketAddr::from(([127, 0, 0, 1], free_port()));
    let memcached_arg = memcached.to_string();
    let (service, _home) = node(
        "front-ends",
        3,
        &[
            "--grpc-listen",
            "127.0.0.1:0",
            "--memcached-listen",
            &memcached_arg,
        ],
    );
    let http = service.address;
    let grpc = format!("http://{}", service.grpc.unwrap());
    const ROUNDS: usize = 300;
    let mut clients: Vec<std::thread::JoinHandle<(String, Vec<u64>)>> = Vec::new();
    for copy in 0..2 {
        clients.push(std::thread::spawn(move || {
            let mut connection = snowmint_test_support::http::Connection::open(http).unwrap();
            let mut ids = Vec::new();
            for _ in 0..ROUNDS {
                let answer = connection.get("/v1/ids?count=20").unwrap();
                assert_eq!(answer.status, 200, "{}", answer.body);
                let body: Value = serde_json::from_str(&answer.body).unwrap();
                ids.extend(
                    body["ids"]
                        .as_array()
                        .unwrap()
                        .iter()
                        .map(|id| id.as_str().unwrap().parse::<u64>().unwrap()),
                );
            }
            (format!("http {copy}"), ids)
        }));
        clients.push(std::thread::spawn(move || {
            let mut connection = snowmint_test_support::http::Connection::open(http).unwrap();
            let mut ids = Vec::new();
            for round in 0..ROUNDS * 5 {
                let answer = connection
                    .get(&format!("/api/snowflake/get/key{round}"))
                    .unwrap();
                assert_eq!(answer.status, 200, "{}", answer.body);
                ids.push(answer.body.parse().unwrap());
            }
            (format!("leaf {copy}"), ids)
        }));
        clients.push(std::thread::spawn(move || {
            let mut stream = TcpStream::connect(memcached).unwrap();
            stream
                .set_read_timeout(Some(Duration::from_secs(30)))
                .unwrap();
            let mut reader = BufReader::new(stream.try_clone().unwrap());
            let keys: Vec<String> = (0..20).map(|k| format!("k{k}")).collect();
            let request = format!("gets {}\r\n", keys.join(" "));
            let mut ids = Vec::new();
            for _ in 0..ROUNDS {
                stream.write_all(request.as_bytes()).unwrap();
                for key in &keys {
                    let mut head = String::new();
                    reader.read_line(&mut head).unwrap();
                    assert!(head.starts_with(&format!("VALUE {key} 0 ")), "{head:?}");
                    let mut data = String::new();
                    reader.read_line(&mut data).unwrap();
                    ids.push(data.trim_end().parse().unwrap());
                }
                let mut end = String::new();
                reader.read_line(&mut end).unwrap();
                assert_eq!(end, "END\r\n");
            }
            (format!("memcached {copy}"), ids)
        }));
        let grpc = grpc.clone();
        clients.push(std::thread::spawn(move || {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .unwrap();
            let ids = runtime.block_on(async {
                // No buffer: each call is one NextIds round trip.
                let client = snowmint_client::Client::builder()
                    .endpoints([grpc])
                    .max_age(Duration::ZERO)
                    .build()
                    .await
                    .unwrap();
                let mut ids = Vec::new();
                for _ in 0..ROUNDS {
                    ids.extend(client.next_ids(20).await.unwrap());
                }
                ids
            });
            (format!("grpc {copy}"), ids)
        }));
    }
    let mut all = HashSet::new();
    for client in clients {
        let (name, ids) = client.join().unwrap();
        assert!(ids.len() >= ROUNDS * 5, "{name}: {} IDs", ids.len());
        assert!(
            ids.windows(2).all(|pair| pair[0] < pair[1]),
            "{name}: its IDs do not increase"
        );
        for id in ids {
            assert_eq!(node_of(id), (2, 3), "{name}: ID {id}");
            assert!(all.insert(id), "{name}: ID {id} was handed out twice");
        }
    }
    // HTTP, memcached and gRPC: 20 per round; Leaf: one per request.
    assert_eq!(all.len(), 3 * 2 * ROUNDS * 20 + 2 * ROUNDS * 5);
}
