//! The alert rules and the dashboard against the real things: a real
//! Prometheus (Debian's `prometheus`, started on a free port with a config
//! of the test's own) scrapes two real nodes on a real etcd, with
//! `deploy/prometheus/snowmint-rules.yml` loaded. The coordinator is then
//! paused (SIGSTOP): the nodes' claims run out, and the test sees
//! `SnowmintNodeFenced` go to firing for both through Prometheus's HTTP
//! API. Every query of `deploy/grafana/snowmint.json` is run by the same
//! Prometheus, and every metric it names must be in a real node's
//! `/metrics`.

use std::collections::BTreeSet;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;
use snowmint_test_support::binary::Service;
use snowmint_test_support::net::{free_port, wait_for_port};
use snowmint_test_support::servers::CoordinatorServer;
use snowmint_test_support::servers::etcd::EtcdServer;
use snowmint_test_support::temp::{TempDir, temp_dir};
use snowmint_test_support::wait::eventually;
use std::io::{Read, Write};
use std::net::TcpStream;

const LIMIT: Duration = Duration::from_secs(120);

fn repo(path: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .join(path)
}

/// A Prometheus server, killed on drop.
struct Prometheus {
    child: Child,
    address: SocketAddr,
}

impl Drop for Prometheus {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Prometheus {
    /// Starts Prometheus on a free port, scraping `targets` every second
    /// and evaluating the snowmint rules every second.
    fn start(dir: &TempDir, targets: &[SocketAddr]) -> Prometheus {
        let binary = ["/usr/bin/prometheus", "/usr/local/bin/prometheus"]
            .into_iter()
            .find(|path| Path::new(path).exists())
            .expect("prometheus is missing: apt-get install prometheus (scripts/test installs it)");
        let rules = repo("deploy/prometheus/snowmint-rules.yml");
        let targets: Vec<String> = targets.iter().map(|t| format!("\"{t}\"")).collect();
        let config = format!(
            "global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\n\
             rule_files:\n  - \"{}\"\n\
             scrape_configs:\n  - job_name: snowmint\n    static_configs:\n      - targets: [{}]\n",
            rules.display(),
            targets.join(", ")
        );
        let config_file = dir.path().join("prometheus.yml");
        std::fs::write(&config_file, config).unwrap();
        let port = free_port();
        let address: SocketAddr = format!("127.0.0.1:{port}").parse().unwrap();
        let child = Command::new(binary)
            .arg(format!("--config.file={}", config_file.display()))
            .arg(format!(
                "--storage.tsdb.path={}",
                dir.path().join("data").display()
            ))
            .arg(format!("--web.listen-address={address}"))
            .arg("--log.level=warn")
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(dir.path().join("prometheus.log")).unwrap())
            .spawn()
            .expect("running prometheus");
        let prometheus = Prometheus { child, address };
        wait_for_port("prometheus", port, LIMIT);
        let ready = || http_get(address, "/-/ready").is_ok_and(|(status, _)| status == 200);
        snowmint_test_support::wait::wait_until("Prometheus to be ready", LIMIT, || {
            ready().then_some(())
        });
        prometheus
    }

    /// `GET target`, the JSON body.
    fn get(&self, target: &str) -> Value {
        let (status, body) = http_get(self.address, target).unwrap();
        assert_eq!(status, 200, "{target}: {body}");
        serde_json::from_str(&body).unwrap()
    }

    /// The result of an instant query, or the error Prometheus gives.
    fn query(&self, expr: &str) -> Result<Value, String> {
        let target = format!("/api/v1/query?query={}", encode(expr));
        let (_, text) = http_get(self.address, &target).map_err(|error| error.to_string())?;
        let body: Value =
            serde_json::from_str(&text).map_err(|error| format!("{expr}: {error}: {text}"))?;
        match body["status"].as_str() {
            Some("success") => Ok(body["data"]["result"].clone()),
            _ => Err(format!("{expr}: {text}")),
        }
    }

    /// The instances `alertname` fires for now.
    fn firing(&self, alertname: &str) -> BTreeSet<String> {
        self.get("/api/v1/alerts")["data"]["alerts"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|alert| alert["labels"]["alertname"] == alertname && alert["state"] == "firing")
            .map(|alert| alert["labels"]["instance"].as_str().unwrap().to_owned())
            .collect()
    }
}

/// `GET target` in HTTP/1.0, so that the answer comes whole (no chunks)
/// and ends with the connection: its status and body.
fn http_get(address: SocketAddr, target: &str) -> std::io::Result<(u16, String)> {
    let mut stream = TcpStream::connect(address)?;
    stream.set_read_timeout(Some(Duration::from_secs(30)))?;
    write!(stream, "GET {target} HTTP/1.0\r\nHost: {address}\r\n\r\n")?;
    let mut answer = String::new();
    stream.read_to_string(&mut answer)?;
    let (head, body) = answer.split_once("\r\n\r\n").unwrap_or((&answer, ""));
    let status = head
        .split_whitespace()
        .nth(1)
        .and_then(|code| code.parse().ok())
        .unwrap_or(0);
    Ok((status, body.to_owned()))
}

/// Percent-encodes a query parameter's value.
fn encode(text: &str) -> String {
    text.bytes()
        .map(|byte| match byte {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                (byte as char).to_string()
            }
            _ => format!("%{byte:02X}"),
        })
        .collect()
}

/// Every query of the dashboard.
fn dashboard_queries() -> Vec<String> {
    let text = std::fs::read_to_string(repo("deploy/grafana/snowmint.json")).unwrap();
    let dashboard: Value = serde_json::from_str(&text).unwrap();
    let queries: Vec<String> = dashboard["panels"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|panel| panel["targets"].as_array().unwrap().iter())
        .map(|target| target["expr"].as_str().unwrap().to_owned())
        .collect();
    assert!(queries.len() >= 10, "{queries:?}");
    queries
}

/// The `snowmint_*` names a query reads.
fn metric_names(query: &str) -> Vec<String> {
    let mut names = Vec::new();
    let mut rest = query;
    while let Some(at) = rest.find("snowmint_") {
        let name: String = rest[at..]
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
            .collect();
        rest = &rest[at + name.len()..];
        names.push(name);
    }
    names
}

fn start_node(home: &TempDir, url: &str, name: &str) -> Service {
    let state_dir = home.path().join(format!("state-{name}"));
    Service::start(
        env!("CARGO_BIN_EXE_snowmint"),
        home.path(),
        &[
            "--coordinator",
            url,
            "--fleet",
            "watched",
            "--claim-ttl",
            "2s",
            "--clock-check-every",
            "1s",
            "--state-dir",
            state_dir.to_str().unwrap(),
        ],
        &[],
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn prometheus_sees_a_fenced_node_and_runs_the_dashboard() {
    let cluster = EtcdServer::start().await;
    let url = format!("etcd://{}", cluster.client_addr());
    let home = temp_dir("prometheus");
    let nodes = [start_node(&home, &url, "a"), start_node(&home, &url, "b")];
    for node in &nodes {
        eventually(
            "a held claim and a clock check with a peer",
            LIMIT,
            || async {
                let described = node.json("/v1/node");
                let coordinator = &described["coordinator"];
                (coordinator["state"] == "held"
                    && coordinator["clock_check"]["readings"]
                        .as_array()
                        .is_some_and(|readings| !readings.is_empty()))
                .then_some(())
            },
        )
        .await;
        // Traffic, so that the counters have moved.
        assert_eq!(node.connect().get("/v1/ids?count=10").unwrap().status, 200);
    }

    // Every metric the dashboard reads is one a real node exports.
    let exported = nodes[0].connect().get("/metrics").unwrap().body;
    let queries = dashboard_queries();
    for query in &queries {
        for name in metric_names(query) {
            let listed = exported.lines().any(|line| {
                line.strip_prefix(&name)
                    .is_some_and(|rest| rest.starts_with('{') || rest.starts_with(' '))
            });
            assert!(
                listed,
                "the dashboard's {query:?} reads {name}, which /metrics lacks:\n{exported}"
            );
        }
    }

    let prometheus_dir = temp_dir("prometheus-data");
    let targets: Vec<SocketAddr> = nodes.iter().map(|node| node.address).collect();
    let prometheus = Prometheus::start(&prometheus_dir, &targets);
    let instances: BTreeSet<String> = targets.iter().map(ToString::to_string).collect();
    eventually("Prometheus to scrape both nodes", LIMIT, || async {
        let up = prometheus.query("up == 1").ok()?;
        let scraped: BTreeSet<String> = up
            .as_array()?
            .iter()
            .map(|series| series["metric"]["instance"].as_str().unwrap().to_owned())
            .collect();
        (scraped == instances).then_some(())
    })
    .await;
    // The rules are loaded, and nothing fires while all is well.
    let groups = prometheus.get("/api/v1/rules");
    let loaded = groups["data"]["groups"][0]["rules"]
        .as_array()
        .unwrap()
        .len();
    assert_eq!(loaded, 9, "{groups}");
    assert!(prometheus.firing("SnowmintNodeFenced").is_empty());

    // Every dashboard query runs, and those of the claims find both nodes.
    for query in &queries {
        let runnable = query.replace("$__rate_interval", "1m");
        let result = prometheus
            .query(&runnable)
            .unwrap_or_else(|error| panic!("{error}"));
        if query.contains("snowmint_claim_time_to_deadline_ms") {
            assert_eq!(result.as_array().unwrap().len(), 2, "{query}: {result}");
        }
    }

    let paused = Instant::now();
    cluster.process().pause();
    eventually(
        "SnowmintNodeFenced to fire for both nodes",
        LIMIT,
        || async { (prometheus.firing("SnowmintNodeFenced") == instances).then_some(()) },
    )
    .await;
    let fired_after = paused.elapsed();
    for node in &nodes {
        let described = node.json("/v1/node");
        assert_eq!(described["state"], "fenced", "{described}");
    }
    cluster.process().resume();
    println!(
        "SnowmintNodeFenced fired for both nodes {} ms after the coordinator was paused (claim TTL 2 s, alert `for: 30s`, scrape and evaluation every 1 s)",
        fired_after.as_millis()
    );
}
