//! `snowmint audit` on real columns of IDs: a PostgreSQL table that real
//! `snowmint serve` nodes filled (one of them misconfigured with a fleet
//! node's slot), a CSV file of two fleet nodes whose claims overlap (a
//! mark lowered by hand), a clean table, garbage lines, IDs in the future
//! and before the epoch, and the same duplicates found in memory and in
//! chunks spilled to disk. What must be found is computed here from the
//! IDs each node served, not read back from the audit.

use std::collections::{BTreeMap, BTreeSet};
use std::io::Write as _;
use std::process::{Command, Output, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use serde_json::Value;
use snowmint_test_support::binary::{Service, now_ms, timestamp_ms};
use snowmint_test_support::servers::CoordinatorServer;
use snowmint_test_support::servers::etcd::EtcdServer;
use snowmint_test_support::servers::postgres::PostgresServer;
use snowmint_test_support::temp::{TempDir, temp_dir};
use snowmint_test_support::wait::eventually;

const SNOWMINT: &str = env!("CARGO_BIN_EXE_snowmint");
const LIMIT: Duration = Duration::from_secs(60);

/// Twitter's epoch, and an ID by the formula of DESIGN.md §1.
const EPOCH: i64 = 1_288_834_974_657;
fn id_at(ms: i64, slot: u64, sequence: u64) -> u64 {
    (((ms - EPOCH) as u64) << 22) | (slot << 12) | sequence
}

/// `snowmint audit ARGS` with `input` on standard input.
fn audit(args: &[&str], input: &str) -> Output {
    let mut child = Command::new(SNOWMINT)
        .arg("audit")
        .args(args)
        .env_remove("SNOWMINT_COORDINATOR")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("running snowmint audit");
    child
        .stdin
        .take()
        .unwrap()
        .write_all(input.as_bytes())
        .unwrap();
    child.wait_with_output().unwrap()
}

/// The JSON report of an audit that exited with `code`.
fn report(output: &Output, code: i32) -> Value {
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(code), "{stderr}");
    serde_json::from_slice(&output.stdout)
        .unwrap_or_else(|_| panic!("not JSON: {}", String::from_utf8_lossy(&output.stdout)))
}

/// A node of fleet `shop` on slot 5 alone, or, with `static_node`, a node
/// given slot 5 by hand (datacenter 0, machine 5): the faulty
/// configuration.
fn node(home: &TempDir, url: &str, name: &str, extra: &[&str]) -> Service {
    let state_dir = home.path().join(format!("state-{name}"));
    let mut args = vec!["--state-dir", state_dir.to_str().unwrap()];
    if url.is_empty() {
        args.extend(["--datacenter", "0", "--machine", "5"]);
    } else {
        args.extend([
            "--coordinator",
            url,
            "--fleet",
            "shop",
            "--slots",
            "5-5",
            "--claim-ttl",
            "2s",
        ]);
    }
    args.extend_from_slice(extra);
    Service::start(SNOWMINT, home.path(), &args, &[])
}

/// Waits until `node` issues.
async fn ready(node: &Service) {
    eventually("the node to issue", LIMIT, || async {
        (node.connect().get("/v1/id").unwrap().status == 200).then_some(())
    })
    .await;
}

/// Pulls batches of 64 IDs from each of `nodes` at once, for `duration`:
/// each node's IDs, in the order served. Small batches, asked without
/// pause, leave few milliseconds a node issues in without the other: both
/// start each millisecond at sequence 0.
fn pull(nodes: &[&Service], duration: Duration) -> Vec<Vec<u64>> {
    let stop = Arc::new(AtomicBool::new(false));
    std::thread::scope(|scope| {
        let threads: Vec<_> = nodes
            .iter()
            .map(|node| {
                let stop = Arc::clone(&stop);
                scope.spawn(move || {
                    let mut ids = Vec::new();
                    let mut connection = node.connect();
                    while !stop.load(Ordering::Relaxed) {
                        let response = connection.get("/v1/ids?count=64").unwrap();
                        assert_eq!(response.status, 200, "{}", response.body);
                        let body: Value = serde_json::from_str(&response.body).unwrap();
                        ids.extend(
                            body["ids"]
                                .as_array()
                                .unwrap()
                                .iter()
                                .map(|id| id.as_str().unwrap().parse::<u64>().unwrap()),
                        );
                    }
                    ids
                })
            })
            .collect();
        std::thread::sleep(duration);
        stop.store(true, Ordering::Relaxed);
        threads
            .into_iter()
            .map(|thread| thread.join().unwrap())
            .collect()
    })
}

/// Stores `rows` in a table `orders (n bigserial, id bigint)`, in order.
async fn fill_table(server: &PostgresServer, rows: &[u64]) {
    let admin = server.admin().await;
    admin
        .batch_execute("CREATE TABLE orders (n bigserial PRIMARY KEY, id bigint NOT NULL)")
        .await
        .unwrap();
    for chunk in rows.chunks(5_000) {
        let values: Vec<String> = chunk.iter().map(|id| format!("({id})")).collect();
        let insert = format!("INSERT INTO orders (id) VALUES {}", values.join(","));
        admin.batch_execute(&insert).await.unwrap();
    }
}

/// Each ID that appears more than once among `rows` (in row order, from
/// 1), with the rows it appears at.
fn duplicates_of(rows: &[u64]) -> BTreeMap<u64, Vec<u64>> {
    let mut seen: BTreeMap<u64, Vec<u64>> = BTreeMap::new();
    for (index, id) in rows.iter().enumerate() {
        seen.entry(*id).or_default().push(index as u64 + 1);
    }
    seen.retain(|_, rows| rows.len() > 1);
    seen
}

/// The duplicates of a report: ID -> the lines it was read at.
fn reported_duplicates(report: &Value) -> BTreeMap<u64, Vec<u64>> {
    report["duplicates"]["listed"]
        .as_array()
        .unwrap()
        .iter()
        .map(|entry| {
            let id = entry["id"].as_str().unwrap().parse().unwrap();
            let rows = entry["rows"]
                .as_array()
                .unwrap()
                .iter()
                .map(|row| row["line"].as_u64().unwrap())
                .collect();
            (id, rows)
        })
        .collect()
}

/// The pids of the claims a finding's `whois` names.
fn whois_pids(entry: &Value) -> BTreeSet<u64> {
    entry["whois"]["claims"]
        .as_array()
        .unwrap()
        .iter()
        .map(|claim| claim["pid"].as_u64().unwrap())
        .collect()
}

/// A table filled by two nodes on one slot: `a` holds slot 5 of fleet
/// `shop`, `b` is given slot 5 by hand (the faulty configuration), and
/// both hand IDs to the same application, which stores them in a
/// PostgreSQL table. Read with `--postgres --query`, against the fleet's
/// history on the same server: every ID both served is a duplicate, with
/// its two rows, each attributed to `a`'s claim (the only holder the
/// fleet knows); what `b` served once `a` had gone is issued by no known
/// holder.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_node_misconfigured_onto_a_fleets_slot_is_caught() {
    let server = PostgresServer::start().await;
    let url = server.url();
    let home = temp_dir("audit-table");
    let a = node(&home, &url, "a", &[]);
    ready(&a).await;
    let b = node(&home, "", "b", &[]);
    ready(&b).await;
    let mut served = pull(&[&a, &b], Duration::from_millis(300));
    let a_pid = u64::from(a.pid());
    let (status, log) = a.terminate();
    assert!(status.success(), "{log}");
    // Past the mark a reserved (a second ahead), b issues as no holder.
    std::thread::sleep(Duration::from_millis(1_500));
    let late = pull(&[&b], Duration::from_millis(200)).remove(0);
    served[1].extend(&late);

    let rows: Vec<u64> = served.concat();
    let planted = duplicates_of(&rows);
    assert!(
        !planted.is_empty(),
        "the faulty configuration planted no duplicate"
    );
    fill_table(&server, &rows).await;

    let output = audit(
        &[
            "--postgres",
            &server.admin_url(),
            "--query",
            "SELECT id FROM orders ORDER BY n",
            "--coordinator",
            &url,
            "--fleet",
            "shop",
            "--format",
            "json",
            "--limit",
            "0",
        ],
        "",
    );
    let report = report(&output, 3);
    assert_eq!(report["ids"], rows.len() as u64);
    assert_eq!(
        reported_duplicates(&report),
        planted,
        "every planted duplicate, with its rows"
    );
    assert_eq!(report["duplicates"]["count"], planted.len() as u64);
    for entry in report["duplicates"]["listed"].as_array().unwrap() {
        assert_eq!(entry["whois"]["answer"], "covered", "{entry}");
        assert_eq!(whois_pids(entry), BTreeSet::from([a_pid]), "{entry}");
    }
    // b's late IDs lie past a's claim: issued by no known holder.
    let history = snowmint_fleet::read_fleet_history(
        &url.parse().unwrap(),
        &snowmint_fleet::CoordinatorAccess::default(),
        &"shop".parse().unwrap(),
    )
    .await
    .unwrap();
    let claims = &history.slots[&5];
    let (first, last) = claims.span(0).unwrap();
    let outside = rows
        .iter()
        .filter(|id| !(first..=last).contains(&timestamp_ms(**id)))
        .count() as u64;
    assert!(outside >= late.len() as u64, "{outside} < {}", late.len());
    assert_eq!(report["no_known_holder"]["count"], outside);
    assert_eq!(report["no_known_holder"]["listed"][0]["slot"], 5);
    assert_eq!(report["two_holders"]["count"], 0);

    // The text says the same, for people.
    let output = audit(
        &[
            "--postgres",
            &server.admin_url(),
            "--query",
            "SELECT id FROM orders ORDER BY n",
            "--coordinator",
            &url,
            "--fleet",
            "shop",
            "--limit",
            "1",
        ],
        "",
    );
    assert_eq!(output.status.code(), Some(3));
    let text = String::from_utf8_lossy(&output.stdout);
    assert!(
        text.contains(&format!(
            "DUPLICATES: {} IDs appear more than once",
            planted.len()
        )),
        "{text}"
    );
    assert!(text.contains(&format!(", pid {a_pid}")), "{text}");
    assert!(text.contains("ISSUED BY NO KNOWN HOLDER"), "{text}");
}

/// Two fleet nodes whose claims of slot 5 overlap: `a` stops cleanly, the
/// mark is lowered by hand below its IDs, and `b` starts with its clock
/// set back into `a`'s time, so that it issues `a`'s IDs again. From a
/// CSV column and the etcd history: every ID both served is found, with
/// its rows, and attributed to both claims (a conflict); the slot is
/// reported as held twice at once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn overlapping_claims_name_both_holders_of_every_duplicate() {
    let server = EtcdServer::start().await;
    let url = server.url();
    let home = temp_dir("audit-overlap");
    let a = node(&home, &url, "a", &[]);
    ready(&a).await;
    let started = now_ms();
    let from_a = pull(&[&a], Duration::from_millis(300)).remove(0);
    let a_pid = u64::from(a.pid());
    let (status, log) = a.terminate();
    assert!(status.success(), "{log}");
    server.set_mark("shop", 5, 1).await;
    let back = format!("-{}", now_ms() - started);
    let b = node(&home, &url, "b", &["--clock-offset-ms", &back]);
    ready(&b).await;
    let from_b = pull(&[&b], Duration::from_millis(300)).remove(0);
    let b_pid = u64::from(b.pid());

    let rows: Vec<u64> = [from_a, from_b].concat();
    let planted = duplicates_of(&rows);
    assert!(!planted.is_empty(), "b issued none of a's IDs again");
    let csv = home.path().join("orders.csv");
    let mut text = String::from("n,id,note\n");
    for (n, id) in rows.iter().enumerate() {
        text.push_str(&format!("{},{id},\"an order, paid\"\n", n + 1));
    }
    std::fs::write(&csv, text).unwrap();
    let output = audit(
        &[
            csv.to_str().unwrap(),
            "--column",
            "id",
            "--coordinator",
            &url,
            "--fleet",
            "shop",
            "--format",
            "json",
            "--limit",
            "0",
        ],
        "",
    );
    let report = report(&output, 3);
    // Lines count the header: row n is line n + 1.
    let lines: BTreeMap<u64, Vec<u64>> = planted
        .iter()
        .map(|(id, rows)| (*id, rows.iter().map(|row| row + 1).collect()))
        .collect();
    assert_eq!(reported_duplicates(&report), lines);
    for entry in report["duplicates"]["listed"].as_array().unwrap() {
        assert_eq!(entry["whois"]["answer"], "conflict", "{entry}");
        assert_eq!(whois_pids(entry), BTreeSet::from([a_pid, b_pid]), "{entry}");
    }
    let pair = &report["two_holders"]["listed"][0];
    assert_eq!(report["two_holders"]["count"], 1, "{report}");
    assert_eq!(pair["slot"], 5);
    let pids: BTreeSet<u64> = pair["claims"]
        .as_array()
        .unwrap()
        .iter()
        .map(|claim| claim["pid"].as_u64().unwrap())
        .collect();
    assert_eq!(pids, BTreeSet::from([a_pid, b_pid]));
    assert!(report["conflicts"]["count"].as_u64().unwrap() >= rows.len() as u64 / 4);
}

/// A table one fleet node filled alone: nothing found, exit 0.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_clean_table_passes() {
    let server = PostgresServer::start().await;
    let url = server.url();
    let home = temp_dir("audit-clean");
    let a = node(&home, &url, "a", &[]);
    ready(&a).await;
    let rows = pull(&[&a], Duration::from_millis(300)).remove(0);
    fill_table(&server, &rows).await;
    let admin_url = server.admin_url();
    let args = [
        "--postgres",
        &admin_url,
        "--query",
        "SELECT id FROM orders",
        "--coordinator",
        &url,
        "--fleet",
        "shop",
    ];
    let output = audit(&args, "");
    let text = String::from_utf8_lossy(&output.stdout);
    assert_eq!(
        output.status.code(),
        Some(0),
        "{text}{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(
        text.starts_with(&format!("audited {} IDs from ", rows.len())),
        "{text}"
    );
    assert!(text.ends_with("\nnothing found\n"), "{text}");
    // A query that fails says why, in the server's words.
    let mut bad = args;
    bad[3] = "SELECT id FROM no_such_table";
    let output = audit(&bad, "");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("the query failed: relation \"no_such_table\" does not exist"),
        "{stderr}"
    );
}

/// A CSV with lines that hold no ID: the audit stops at the first and
/// names its line, or, with `--skip-bad`, counts and lists them.
#[test]
fn garbage_lines_stop_the_audit_or_are_skipped() {
    let home = temp_dir("audit-garbage");
    let csv = home.path().join("ids.csv");
    let id = id_at(1_700_000_000_000, 5, 0);
    std::fs::write(
        &csv,
        format!("id,note\n{id},a\nxyz,b\n\"{}\",c\n,d\n", id + 1),
    )
    .unwrap();
    let path = csv.to_str().unwrap();
    let output = audit(&[path, "--column", "id"], "");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.starts_with(&format!(
            "error: {path}:3: \"xyz\" holds no ID: ID \"xyz\" is not a decimal integer"
        )),
        "{stderr}"
    );
    assert!(stderr.contains("--skip-bad skips such lines"), "{stderr}");

    let output = audit(
        &[path, "--column", "id", "--skip-bad", "--format", "json"],
        "",
    );
    let report = report(&output, 0);
    assert_eq!(report["ids"], 2);
    assert_eq!(report["skipped"]["count"], 1);
    assert_eq!(report["skipped"]["listed"][0]["row"]["line"], 3);
    assert_eq!(report["skipped"]["listed"][0]["text"], "xyz");

    // A column that is not there is named, with the header's.
    let output = audit(&[path, "--column", "order_id"], "");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.starts_with(&format!(
            "error: {path} has no column \"order_id\"; its header names \"id\", \"note\""
        )),
        "{stderr}"
    );
    // A header read as a row: the hint says so.
    let output = audit(&[path, "--column", "1"], "");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("(a header? give --column NAME, or --header)"),
        "{stderr}"
    );
}

/// IDs dated after now (and its grace) and negative values (before the
/// epoch) are found, from standard input; `--now` moves "now".
#[test]
fn ids_in_the_future_and_before_the_epoch_are_found() {
    let now = now_ms();
    let future = id_at(now + 86_400_000, 7, 0);
    let past = id_at(now - 86_400_000, 7, 0);
    let input = format!("{past}\n{future}\n-42\n");
    let report = report(&audit(&["--format", "json"], &input), 3);
    assert_eq!(report["ids"], 3);
    assert_eq!(report["future"]["count"], 1);
    assert_eq!(report["future"]["listed"][0]["id"], future.to_string());
    assert_eq!(report["future"]["listed"][0]["rows"][0]["name"], "stdin:2");
    assert_eq!(report["before_epoch"]["count"], 1);
    assert_eq!(report["before_epoch"]["listed"][0]["value"], "-42");
    assert_eq!(report["before_epoch"]["listed"][0]["row"]["line"], 3);

    let later = (now + 2 * 86_400_000).to_string();
    let report = self::report(
        &audit(
            &["--format", "json", "--now", &later],
            &format!("{past}\n{future}\n"),
        ),
        0,
    );
    assert_eq!(report["future"]["count"], 0);
}

/// The same duplicates, rows and counts, whether the IDs are sorted in
/// memory or in chunks spilled to disk past a small memory limit.
#[test]
fn spilled_chunks_find_the_same_duplicates() {
    let home = temp_dir("audit-spill");
    let file = home.path().join("ids.txt");
    // 300,000 IDs over a day of one slot, 1,000 of them twice.
    let mut ids: Vec<u64> = (0..300_000u64)
        .map(|n| {
            id_at(
                1_700_000_000_000 + (n * 7_919 % 86_400_000) as i64,
                9,
                n % 4_096,
            )
        })
        .collect();
    ids.extend_from_within(..1_000);
    let text: String = ids.iter().map(|id| format!("{id}\n")).collect();
    std::fs::write(&file, text).unwrap();
    let path = file.to_str().unwrap();
    let temp = home.path().to_str().unwrap();
    let run = |limit: &str| {
        let output = audit(
            &[
                path,
                "--memory-limit",
                limit,
                "--temp-dir",
                temp,
                "--format",
                "json",
                "--limit",
                "0",
            ],
            "",
        );
        report(&output, 3)
    };
    let (memory, spilled) = (run("64MiB"), run("1MiB"));
    assert_eq!(memory["spilled_runs"], 0);
    assert!(
        spilled["spilled_runs"].as_u64().unwrap() >= 4,
        "{}",
        spilled["spilled_runs"]
    );
    let planted = duplicates_of(&ids);
    assert_eq!(planted.len(), 1_000);
    assert_eq!(reported_duplicates(&memory), planted);
    assert_eq!(reported_duplicates(&spilled), planted);
    // The chunks went with the audit.
    let left: Vec<_> = std::fs::read_dir(home.path())
        .unwrap()
        .flatten()
        .filter(|entry| {
            entry
                .file_name()
                .to_string_lossy()
                .starts_with("snowmint-audit-")
        })
        .collect();
    assert!(left.is_empty(), "{left:?}");
}
