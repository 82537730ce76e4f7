//! The fleet guide's etcd example (docs/fleet.md, "etcd") run as written,
//! as a reader pastes it into a shell: a real etcd, two nodes, the wait
//! for them to be ready (`snowmint probe --wait`), an ID, the node's
//! claim, the slot keys, and SIGTERM freeing a slot. Only its ports and
//! directories are changed, to free ones of the test's own.

use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

use snowmint_test_support::net::free_port;
use snowmint_test_support::temp::temp_dir;
use snowmint_test_support::wait::wait_until;

/// The block of the guide's "etcd" section.
fn etcd_example() -> String {
    let guide =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/fleet.md"))
            .expect("docs/fleet.md");
    let section = &guide[guide.find("\n## etcd\n").expect("an etcd section")..];
    let start = section.find("```sh\n").expect("a sh block") + "```sh\n".len();
    section[start..start + section[start..].find("\n```").expect("the block ends")].to_owned()
}

#[test]
fn the_guides_etcd_example_runs_as_written() {
    let shown = etcd_example();
    let dir = temp_dir("fleet-guide");
    let at = |name: &str| dir.path().join(name).display().to_string();
    let (client, peer) = (free_port(), free_port());
    let (first, second) = (free_port(), free_port());
    let mut script = shown.clone();
    let replacements = [
        ("2379".to_owned(), client.to_string()),
        ("2380".to_owned(), peer.to_string()),
        ("8081".to_owned(), first.to_string()),
        ("8082".to_owned(), second.to_string()),
        ("/tmp/etcd-ids".to_owned(), at("etcd")),
        ("/tmp/ids-1".to_owned(), at("ids-1")),
        ("/tmp/ids-2".to_owned(), at("ids-2")),
    ];
    // In two passes, so that a port put in cannot be taken for one shown.
    for (at, (from, _)) in replacements.iter().enumerate() {
        assert!(
            script.contains(from),
            "the example no longer has {from}:\n{shown}"
        );
        script = script.replace(from, &format!("\u{0}{at}\u{0}"));
    }
    for (at, (_, to)) in replacements.iter().enumerate() {
        script = script.replace(&format!("\u{0}{at}\u{0}"), to);
    }
    // The binary under test first on PATH, as the reader's `snowmint`.
    let bin = Path::new(crate::SNOWMINT).parent().unwrap().to_path_buf();
    let path = std::env::join_paths(
        std::iter::once(bin).chain(std::env::split_paths(&std::env::var_os("PATH").unwrap())),
    )
    .unwrap();
    // Into files, not pipes: etcd and the second node outlive the script
    // and keep what they were given open.
    let (out, err) = (dir.path().join("stdout"), dir.path().join("stderr"));
    let mut shell = Command::new("sh");
    shell
        .arg("-ec")
        .arg(&script)
        .current_dir(dir.path())
        .env("PATH", path)
        .env("HOME", dir.path())
        .env("ETCDCTL_API", "3")
        .stdin(Stdio::null())
        .stdout(std::fs::File::create(&out).unwrap())
        .stderr(std::fs::File::create(&err).unwrap())
        // Its own process group: etcd and the second node outlive the
        // script, and go with the group below.
        .process_group(0);
    for (name, _) in std::env::vars_os() {
        if name.to_string_lossy().starts_with("SNOWMINT_") {
            shell.env_remove(name);
        }
    }
    let mut child = shell.spawn().expect("running sh");
    let group = child.id();
    struct Group(u32);
    impl Drop for Group {
        fn drop(&mut self) {
            // procps' kill, which takes a process group (dash's builtin
            // does not take `--`).
            let _ = Command::new("/bin/kill")
                .args(["-KILL", "--", &format!("-{}", self.0)])
                .status();
        }
    }
    let _group = Group(group);
    let status = child.wait().unwrap();
    let stdout = std::fs::read_to_string(&out).unwrap();
    assert!(
        status.success(),
        "the example failed ({status}):\n{stdout}\n{}",
        std::fs::read_to_string(&err).unwrap()
    );
    // Both probes said ready, then the first node's ID and its claim.
    assert_eq!(
        stdout.matches(r#"{"status":"ready"}"#).count(),
        2,
        "{stdout}"
    );
    assert!(stdout.contains(r#"{"id":""#), "{stdout}");
    let node = stdout
        .lines()
        .find(|line| line.starts_with(r#"{"state":"#))
        .unwrap_or_else(|| panic!("no /v1/node answer in:\n{stdout}"));
    let node: serde_json::Value = serde_json::from_str(node).unwrap();
    assert_eq!(node["source"], "etcd", "{node}");
    // etcdctl listed both slots, each with its holder.
    let slots: Vec<&str> = stdout
        .lines()
        .filter(|line| line.starts_with("/snowmint/ids/slots/"))
        .collect();
    assert_eq!(slots.len(), 2, "{stdout}");
    assert!(
        slots.contains(&format!("/snowmint/ids/slots/{}", node["slot"]).as_str()),
        "{stdout}"
    );
    // `kill $first`: the first node releases its slot at once.
    let endpoint = format!("127.0.0.1:{client}");
    wait_until(
        "the first node's slot to be released",
        Duration::from_secs(30),
        || {
            let listed = Command::new("etcdctl")
                .args(["--endpoints", &endpoint, "get", "--prefix", "--keys-only"])
                .arg("/snowmint/ids/slots/")
                .env("ETCDCTL_API", "3")
                .output()
                .ok()?;
            let keys = String::from_utf8_lossy(&listed.stdout);
            let keys: Vec<&str> = keys.lines().filter(|l| !l.is_empty()).collect();
            (keys.len() == 1 && keys[0] != format!("/snowmint/ids/slots/{}", node["slot"]))
                .then_some(())
        },
    );
}

/// The PostgreSQL guide's plain SQL functions (for servers that take no
/// extension) read IDs as the library does: the worked example's fields,
/// and the first ID of a millisecond.
#[tokio::test]
async fn the_guides_plain_sql_reads_ids_as_the_library_does() {
    use snowmint::{Layout, SnowflakeId};
    use snowmint_test_support::servers::CoordinatorServer;
    use snowmint_test_support::servers::postgres::PostgresServer;

    let guide = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/postgresql.md"),
    )
    .expect("docs/postgresql.md");
    let section = &guide[guide
        .find("\n## PostgreSQL versions and managed services\n")
        .expect("a section on managed services")..];
    let start = section.find("```sql\n").expect("an sql block") + "```sql\n".len();
    let functions = &section[start..start + section[start..].find("```").unwrap()];

    let server = PostgresServer::start().await;
    let client = server.admin().await;
    client
        .batch_execute(functions)
        .await
        .unwrap_or_else(|error| panic!("the guide's functions: {error}\n{functions}"));
    client.batch_execute("SET TIME ZONE 'UTC'").await.unwrap();
    let layout = Layout::TWITTER;
    for id in [1724551110457221119_i64, 2127421958475116544, 0, i64::MAX] {
        let parts = layout.decode(SnowflakeId::from_i64(id).unwrap()).unwrap();
        let field = |name: &str| parts.get(name).unwrap();
        let row = client
            .query_one(
                "SELECT floor(extract(epoch FROM snowflake_time($1)) * 1000)::bigint, \
                 snowflake_datacenter($1), snowflake_machine($1), snowflake_sequence($1), \
                 snowflake_from_time(snowflake_time($1))",
                &[&id],
            )
            .await
            .unwrap();
        let (ms, datacenter, machine, sequence, first): (i64, i32, i32, i32, i64) =
            (row.get(0), row.get(1), row.get(2), row.get(3), row.get(4));
        assert_eq!(ms, parts.time_ms(), "time of {id}");
        assert_eq!(
            (datacenter as u64, machine as u64, sequence as u64),
            (field("datacenter"), field("machine"), field("sequence")),
            "fields of {id}"
        );
        let range = layout.id_range(parts.time_ms(), parts.time_ms()).unwrap();
        assert_eq!(
            first,
            i64::try_from(*range.start()).unwrap(),
            "first ID of the millisecond of {id}"
        );
    }
}
