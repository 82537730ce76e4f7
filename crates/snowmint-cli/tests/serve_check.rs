//! `snowmint serve --check`, on the real binary: it reads the settings
//! from flags, environment and file, says what the node would do, binds
//! nothing, claims nothing, writes nothing, and refuses what a start
//! refuses, with the start's own message. Also: what the first hour of
//! a newcomer runs into (`--listen localhost:PORT`, the refusal that
//! names `--mark-wait-max`, `decode` naming the `--input` that reads an
//! ID).

use std::net::TcpListener;
use std::process::{Command, Output, Stdio};

use snowmint::{Layout, Node};
use snowmint_fleet::MarkFile;
use snowmint_test_support::binary::{self, now_ms, run_to_end};
use snowmint_test_support::temp::temp_dir;

const SNOWMINT: &str = env!("CARGO_BIN_EXE_snowmint");

/// `snowmint serve --check --offline ARGS` in `home`, with `env`.
fn check(home: &std::path::Path, args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut all = vec!["--check", "--offline"];
    all.extend_from_slice(args);
    binary::command(SNOWMINT, home, &all, env)
        .stdin(Stdio::null())
        .output()
        .expect("running snowmint serve --check")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8(bytes.to_vec()).unwrap()
}

/// Each source of identity is named, with where each value came from
/// (flag, environment, file); the coordinator's password is masked; exit
/// code 0.
#[test]
fn check_names_the_identity_and_where_each_setting_came_from() {
    let home = temp_dir("check-sources");
    let file = home.path().join("snowmint.toml");
    std::fs::write(&file, "listen = \"0.0.0.0:8080\"\n").unwrap();
    let file = file.to_str().unwrap();

    let fixed = check(
        home.path(),
        &["--datacenter", "3", "--state-dir", "state"],
        &[("SNOWMINT_MACHINE", "7")],
    );
    assert_eq!(fixed.status.code(), Some(0), "{}", text(&fixed.stderr));
    let out = text(&fixed.stdout);
    assert!(
        out.starts_with(
            "identity     static: slot 103 (datacenter 3 (from --datacenter), machine 7 (from SNOWMINT_MACHINE))\n"
        ),
        "{out}"
    );
    assert!(
        out.ends_with("ok: this configuration starts, as far as can be told offline (the lock, the ports and the coordinator were not tried; nothing was bound, claimed or written)\n"),
        "{out}"
    );

    let hostname = check(
        home.path(),
        &["--machine-from-hostname", "--config", file],
        &[("SNOWMINT_HOSTNAME", "ids-45")],
    );
    assert_eq!(
        hostname.status.code(),
        Some(0),
        "{}",
        text(&hostname.stderr)
    );
    let out = text(&hostname.stdout);
    assert!(
        out.contains(
            "identity     hostname: slot 45 (datacenter 1, machine 13) of \"ids-45\" (from SNOWMINT_HOSTNAME)\n"
        ),
        "{out}"
    );
    assert!(
        out.contains(&format!(
            "listen       http://0.0.0.0:8080 (from listen in {file})\n"
        )),
        "{out}"
    );

    let coordinated = check(
        home.path(),
        &[
            "--slots",
            "0-31",
            "--config",
            file,
            "--memcached-listen",
            "0.0.0.0:11211",
        ],
        &[
            (
                "SNOWMINT_COORDINATOR",
                "postgres://ids:s3cret-pw@db.internal/app",
            ),
            ("SNOWMINT_FLEET", "ids"),
        ],
    );
    assert_eq!(
        coordinated.status.code(),
        Some(0),
        "{}",
        text(&coordinated.stderr)
    );
    let out = text(&coordinated.stdout);
    assert!(out.starts_with("identity     postgres: "), "{out}");
    assert!(
        out.contains(
            "coordinator  postgres://ids:***@db.internal:5432/app (from SNOWMINT_COORDINATOR), fleet ids (from SNOWMINT_FLEET), slots 0-31 (from --slots) (32 of them), claim_ttl 10s\n"
        ),
        "{out}"
    );
    assert!(out.contains("memcached    0.0.0.0:11211 (from --memcached-listen), silent connections closed after 10m\n"), "{out}");
    assert!(!out.contains("s3cret-pw"), "the password is shown: {out}");
}

/// With its ports taken, no state directory and a coordinator nobody
/// runs, --check still answers at once: it binds, claims and makes
/// nothing.
#[test]
fn check_binds_claims_and_writes_nothing() {
    let home = temp_dir("check-nothing");
    let taken = TcpListener::bind("127.0.0.1:0").unwrap();
    let address = taken.local_addr().unwrap().to_string();
    let state = home.path().join("not-made");
    let out = check(
        home.path(),
        &[
            "--listen",
            &address,
            "--grpc-listen",
            &address,
            "--coordinator",
            "etcd://127.0.0.1:1",
            "--state-dir",
            state.to_str().unwrap(),
        ],
        &[],
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    assert!(
        stdout.contains("not there yet, a start creates it"),
        "{stdout}"
    );
    assert!(
        stdout.contains("note: two listeners share an address"),
        "{stdout}"
    );
    assert!(!state.exists(), "--check made the state directory");
}

/// A setting a start refuses is refused by --check with the same message
/// and exit code 2; so is a hostname without an ordinal, which a start
/// also stops at (with exit code 1, as a failed start).
#[test]
fn check_refuses_what_a_start_refuses_with_the_same_message() {
    let home = temp_dir("check-refusals");
    type Case<'a> = (&'a [&'a str], &'a [(&'a str, &'a str)]);
    let cases: [Case; 3] = [
        (&["--datacenter", "32"], &[]),
        (
            &["--coordinator", "etcd://10.0.0.1:2379", "--machine", "7"],
            &[],
        ),
        (
            &["--machine-from-hostname"],
            &[("SNOWMINT_HOSTNAME", "web")],
        ),
    ];
    for (args, env) in cases {
        let checked = check(home.path(), args, env);
        assert_eq!(checked.status.code(), Some(2), "{args:?}");
        assert!(checked.stdout.is_empty(), "{args:?}");
        let (started, _, start_err) = run_to_end(SNOWMINT, home.path(), args, env);
        assert!(!started.success(), "{args:?} started");
        let first_line = |text: &str| {
            text.lines()
                .find(|l| l.starts_with("error: "))
                .map(str::to_owned)
        };
        let check_err = text(&checked.stderr);
        assert_eq!(
            first_line(&check_err),
            first_line(&start_err),
            "{args:?}:\ncheck: {check_err}\nstart: {start_err}"
        );
    }
}

/// A fixed node whose state file holds a mark an hour ahead of the clock
/// (its clock was set back): a start refuses and names the setting that
/// would let it wait, `--mark-wait-max`; --check says the same, exit 2;
/// given a long enough wait, --check says the start would wait.
#[test]
fn a_mark_far_ahead_is_refused_naming_mark_wait_max() {
    let home = temp_dir("check-mark");
    let state = home.path().join("state");
    std::fs::create_dir_all(&state).unwrap();
    let mark = now_ms() + 3_600_000;
    MarkFile::for_node(&state, Layout::TWITTER, Node::from_slot(4))
        .write(mark)
        .unwrap();
    let args = ["--machine", "4", "--state-dir", state.to_str().unwrap()];
    let (status, _, start_err) = run_to_end(SNOWMINT, home.path(), &args, &[]);
    assert!(!status.success());
    let refusal = start_err
        .lines()
        .find(|l| l.starts_with("error: "))
        .unwrap()
        .to_owned();
    assert!(
        refusal.ends_with("Fix the clock, or wait until it passes the mark, or raise --mark-wait-max (2s by default) above the gap"),
        "{refusal}"
    );
    assert!(
        refusal.contains(&snowmint::format_time(mark).to_string()),
        "{refusal}"
    );

    let checked = check(home.path(), &args, &[]);
    assert_eq!(checked.status.code(), Some(2));
    let check_err = text(&checked.stderr);
    // The clock moved between the two runs: compare up to the reading.
    let before_clock = |line: &str| {
        line.split(", but the clock reads")
            .next()
            .unwrap()
            .to_owned()
    };
    assert_eq!(
        before_clock(check_err.lines().next().unwrap()),
        before_clock(&refusal)
    );
    assert!(check_err.contains("or raise --mark-wait-max (2s by default) above the gap"));

    let env_wait = check(home.path(), &args, &[("SNOWMINT_MARK_WAIT_MAX", "5s")]);
    assert!(
        text(&env_wait.stderr).contains("or raise SNOWMINT_MARK_WAIT_MAX (now 5s) above the gap"),
        "{}",
        text(&env_wait.stderr)
    );
    let waits = check(
        home.path(),
        &[&args[..], &["--mark-wait-max", "2h", "--mark-step", "1s"]].concat(),
        &[],
    );
    assert_eq!(waits.status.code(), Some(0), "{}", text(&waits.stderr));
    assert!(text(&waits.stdout).contains("ms ahead of the clock: a start waits that out"));
}

/// `--listen localhost:PORT` listens on loopback, and the README's curl
/// reaches it by that name.
#[test]
fn listen_on_localhost_by_name() {
    let home = temp_dir("listen-localhost");
    let port = snowmint_test_support::net::free_port();
    let state = home.path().join("state");
    let mut child = binary::command(
        SNOWMINT,
        home.path(),
        &[
            "--datacenter",
            "0",
            "--listen",
            &format!("localhost:{port}"),
            "--state-dir",
            state.to_str().unwrap(),
        ],
        &[],
    )
    .stdout(Stdio::piped())
    .stderr(Stdio::null())
    .spawn()
    .unwrap();
    let mut line = String::new();
    std::io::BufRead::read_line(
        &mut std::io::BufReader::new(child.stdout.take().unwrap()),
        &mut line,
    )
    .unwrap();
    assert_eq!(line, format!("listening on http://127.0.0.1:{port}\n"));
    let answer = Command::new("curl")
        .args(["-s", &format!("localhost:{port}/readyz")])
        .output()
        .unwrap();
    let _ = child.kill();
    let _ = child.wait();
    assert_eq!(text(&answer.stdout), "{\"status\":\"ready\"}");
}

/// `snowmint decode` names the `--input` that reads an ID written in
/// another encoding; `--input auto` takes it when it reads in one encoding
/// only, and refuses it, naming them, when it reads in several.
#[test]
fn decode_names_the_input_that_reads_an_id() {
    let run = |args: &[&str]| {
        Command::new(SNOWMINT)
            .arg("decode")
            .args(args)
            .output()
            .unwrap()
    };
    let hex = run(&["17eed6190fcedfff"]);
    assert_eq!(hex.status.code(), Some(2));
    assert_eq!(
        text(&hex.stderr),
        "error: ID \"17eed6190fcedfff\" is not a decimal integer: 'e' at position 2; \
         expected a decimal integer in 0..=9223372036854775807; it reads as hex: --input hex\n"
    );
    // Each of these reads in one encoding only.
    for spelling in [
        "17eed6190fcedfff",
        "0x17EED6190FCEDFFF",
        "1724551110457221119",
    ] {
        let auto = run(&[
            "--input",
            "auto",
            "--format",
            "csv",
            "--no-header",
            spelling,
        ]);
        assert_eq!(
            auto.status.code(),
            Some(0),
            "{spelling}: {}",
            text(&auto.stderr)
        );
        // The specification's worked example.
        assert_eq!(
            text(&auto.stdout),
            "1724551110457221119,1700000000000,2023-11-14T22:13:20.000Z,7,13,4095\n",
            "{spelling}"
        );
    }
    let ambiguous = run(&["--input", "auto", "12", "51BRJMCGQge"]);
    assert_eq!(ambiguous.status.code(), Some(2));
    assert_eq!(
        text(&ambiguous.stderr),
        "error: ID \"12\" is valid in decimal, hex, base32 and base58, as different IDs; say which with --input\n\
         error: ID \"51BRJMCGQge\" is valid in base32 and base58, as different IDs; say which with --input\n\
         error: 2 of 2 IDs could not be decoded\n"
    );
    // Bulk input: a file of hex IDs is told once, not once per line.
    let mut bulk = Command::new(SNOWMINT)
        .arg("decode")
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    std::io::Write::write_all(
        &mut bulk.stdin.take().unwrap(),
        b"17eed6190fcedfff\n17eed6190fcedffe\n",
    )
    .unwrap();
    let bulk = bulk.wait_with_output().unwrap();
    let stderr = text(&bulk.stderr);
    assert_eq!(stderr.matches("--input hex").count(), 1, "{stderr}");
    assert!(
        stderr.contains("line 2: ID \"17eed6190fcedffe\""),
        "{stderr}"
    );
}

/// `snowmint serve --check ARGS` (trying the lock, the ports and the
/// coordinator) in `home`, with `env`.
fn check_live(home: &std::path::Path, args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut all = vec!["--check"];
    all.extend_from_slice(args);
    binary::command(SNOWMINT, home, &all, env)
        .stdin(Stdio::null())
        .output()
        .expect("running snowmint serve --check")
}

/// By default --check tries what a start would run into, claiming
/// nothing: a node's lock held by a running node, a port in use, an etcd
/// nobody runs, each refused with exit code 1 and the start's words; a
/// free configuration says so and leaves no lock file. `--offline` says
/// "ok" to the same, trying none of them.
#[test]
fn check_tries_the_lock_the_ports_and_the_coordinator() {
    let home = temp_dir("check-live");
    let state = home.path().join("state");
    let state = state.to_str().unwrap();
    let node = ["--datacenter", "3", "--machine", "7", "--state-dir", state];

    // Free: the lock file is not made, the port is let go.
    let free = check_live(
        home.path(),
        &[&node[..], &["--listen", "127.0.0.1:0"]].concat(),
        &[],
    );
    assert_eq!(free.status.code(), Some(0), "{}", text(&free.stderr));
    let out = text(&free.stdout);
    assert!(out.contains("lock         "), "{out}");
    assert!(
        out.contains("ports        every listener's address can be bound"),
        "{out}"
    );
    assert!(
        out.ends_with("ok: this configuration starts (the lock, the ports and the coordinator were tried; nothing was claimed or written)\n"),
        "{out}"
    );
    assert!(
        !home.path().join("state").exists(),
        "--check made the state directory"
    );

    // Held by a running node.
    let running = binary::Service::start(SNOWMINT, home.path(), &node, &[]);
    let held = check_live(
        home.path(),
        &[&node[..], &["--listen", "127.0.0.1:0"]].concat(),
        &[],
    );
    assert_eq!(held.status.code(), Some(1), "{}", text(&held.stdout));
    let error = text(&held.stderr);
    assert!(
        error.contains(&format!("process {}", running.pid())),
        "{error}"
    );
    assert!(check(home.path(), &node, &[]).status.success());
    drop(running);

    // A port in use.
    let taken = TcpListener::bind("127.0.0.1:0").unwrap();
    let address = taken.local_addr().unwrap().to_string();
    let used = check_live(
        home.path(),
        &["--listen", &address, "--datacenter", "4"],
        &[],
    );
    assert_eq!(used.status.code(), Some(1), "{}", text(&used.stdout));
    let error = text(&used.stderr);
    assert!(
        error.starts_with(&format!("error: cannot listen for HTTP on {address}")),
        "{error}"
    );
    let grpc = check_live(
        home.path(),
        &[
            "--listen",
            "127.0.0.1:0",
            "--grpc-listen",
            &address,
            "--datacenter",
            "4",
        ],
        &[],
    );
    assert_eq!(grpc.status.code(), Some(1));
    assert!(text(&grpc.stderr).starts_with(&format!("error: cannot listen for gRPC on {address}")));
    assert!(
        check(
            home.path(),
            &["--listen", &address, "--datacenter", "4"],
            &[]
        )
        .status
        .success()
    );

    // An etcd nobody runs.
    let coordinator = [
        "--coordinator",
        "etcd://127.0.0.1:1",
        "--listen",
        "127.0.0.1:0",
    ];
    let unreachable = check_live(home.path(), &coordinator, &[]);
    assert_eq!(
        unreachable.status.code(),
        Some(1),
        "{}",
        text(&unreachable.stdout)
    );
    let error = text(&unreachable.stderr);
    assert!(
        error.starts_with("error: coordinator etcd://127.0.0.1:1: "),
        "{error}"
    );
    assert!(check(home.path(), &coordinator, &[]).status.success());
}

/// A wrong password is refused by the coordinator's read-only login
/// (exit code 1, the password shown nowhere); the right one is let in
/// and the fleet's free slots are counted; nothing is claimed.
#[tokio::test(flavor = "multi_thread")]
async fn check_logs_in_to_the_coordinator() {
    use snowmint_test_support::servers::CoordinatorServer;
    use snowmint_test_support::servers::etcd::{EtcdServer, Permission};
    const ROOT: &str = "Root-Pw-5120";
    const RIGHT: &str = "Ids-Pw-6631";
    const WRONG: &str = "Wrong-Pw-7342";
    let etcd = EtcdServer::start().await;
    etcd.enable_auth(
        ROOT,
        &[(
            "ids",
            RIGHT,
            Some(Permission::read_write("/snowmint/ids/").with_prefix()),
        )],
    )
    .await;
    let home = temp_dir("check-login");
    let url = format!("etcd://ids@{}", etcd.client_addr());
    let args = [
        "--coordinator",
        &url,
        "--fleet",
        "ids",
        "--slots",
        "0-7",
        "--listen",
        "127.0.0.1:0",
    ];
    let wrong = check_live(
        home.path(),
        &args,
        &[("SNOWMINT_COORDINATOR_PASSWORD", WRONG)],
    );
    assert_eq!(wrong.status.code(), Some(1), "{}", text(&wrong.stdout));
    let error = text(&wrong.stderr);
    assert!(
        error.starts_with(&format!(
            "error: coordinator etcd://ids:***@{}",
            etcd.client_addr()
        )),
        "{error}"
    );
    assert!(!error.contains(WRONG) && !error.contains(RIGHT), "{error}");

    let right = check_live(
        home.path(),
        &args,
        &[("SNOWMINT_COORDINATOR_PASSWORD", RIGHT)],
    );
    assert_eq!(right.status.code(), Some(0), "{}", text(&right.stderr));
    let out = text(&right.stdout);
    assert!(
        out.contains("answered a read-only login: fleet ids has 8 of 8 slots free"),
        "{out}"
    );
    assert!(!out.contains(RIGHT), "{out}");
    let keys = etcd.keys_as("root", ROOT, "/snowmint/ids/slots/").await;
    assert!(keys.is_empty(), "--check claimed: {keys:?}");

    // A node that holds a slot is counted (the login reads the fleet).
    let state = home.path().join("node-state");
    let mut node_args = args.to_vec();
    node_args.retain(|arg| *arg != "--listen" && *arg != "127.0.0.1:0");
    node_args.extend_from_slice(&["--state-dir", state.to_str().unwrap()]);
    let node = binary::Service::start(
        SNOWMINT,
        home.path(),
        &node_args,
        &[("SNOWMINT_COORDINATOR_PASSWORD", RIGHT)],
    );
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while node.connect().get("/readyz").unwrap().status != 200 {
        assert!(std::time::Instant::now() < deadline, "{}", node.log());
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    let counted = check_live(
        home.path(),
        &args,
        &[("SNOWMINT_COORDINATOR_PASSWORD", RIGHT)],
    );
    let out = text(&counted.stdout);
    assert!(out.contains("fleet ids has 7 of 8 slots free"), "{out}");
}

/// --check reads the TLS files and the token file as a start does:
/// missing files and a token file of comments only are refused with the
/// start's message and exit code 2 (it said "ok" to each before).
#[test]
fn check_refuses_the_files_a_start_refuses() {
    let home = temp_dir("check-files");
    let dir = home.path();
    let comments = dir.join("comments");
    std::fs::write(&comments, "# the tokens go here\n\n").unwrap();
    let missing = dir.join("missing.pem");
    let missing = missing.to_str().unwrap();
    let ca = snowmint_test_support::tls::TestCa::new("check");
    let server = ca.server("localhost");
    let cert = server.cert.to_str().unwrap();
    type Case<'a> = &'a [&'a str];
    let cases: [Case; 4] = [
        &["--tls-cert", missing, "--tls-key", missing],
        &["--tls-cert", cert, "--tls-key", missing],
        &["--auth-token-file", missing],
        &["--auth-token-file", comments.to_str().unwrap()],
    ];
    for args in cases {
        let args = [args, &["--datacenter", "2"]].concat();
        let checked = check(dir, &args, &[]);
        assert_eq!(
            checked.status.code(),
            Some(2),
            "{args:?}: {}",
            text(&checked.stdout)
        );
        let (started, _, start_err) = run_to_end(SNOWMINT, dir, &args, &[]);
        assert_eq!(started.code(), Some(2), "{args:?} started");
        let check_err = text(&checked.stderr);
        assert_eq!(
            check_err.lines().next(),
            start_err.lines().find(|line| line.starts_with("error: ")),
            "{args:?}:\ncheck: {check_err}\nstart: {start_err}"
        );
    }
}

/// --check names the scheme of each listener, what guards it, and every
/// listener that issues with no credential.
#[test]
fn check_says_what_guards_each_listener() {
    let home = temp_dir("check-gate");
    let dir = home.path();
    let tokens = dir.join("tokens");
    std::fs::write(&tokens, "check-token-0123456789\nother-token-0123456789\n").unwrap();
    let ca = snowmint_test_support::tls::TestCa::new("check");
    let server = ca.server("localhost");
    let line = |out: &str, name: &str| {
        out.lines()
            .find_map(|l| l.strip_prefix(&format!("{name:<12} ")))
            .unwrap_or_else(|| panic!("no {name} line: {out}"))
            .to_owned()
    };

    let open = check(
        dir,
        &[
            "--datacenter",
            "0",
            "--grpc-listen",
            "127.0.0.1:9091",
            "--memcached-listen",
            "127.0.0.1:11211",
        ],
        &[],
    );
    assert!(open.status.success(), "{}", text(&open.stderr));
    let out = text(&open.stdout);
    assert_eq!(line(&out, "tls"), "off: every listener is cleartext");
    assert_eq!(line(&out, "tokens"), "off: no endpoint needs a token");
    assert_eq!(
        line(&out, "open"),
        "issuing with no credential: HTTP 127.0.0.1:8080, gRPC 127.0.0.1:9091, memcached 127.0.0.1:11211"
    );

    let secured = check(
        dir,
        &[
            "--datacenter",
            "0",
            "--grpc-listen",
            "127.0.0.1:9091",
            "--tls-cert",
            server.cert.to_str().unwrap(),
            "--tls-key",
            server.key.to_str().unwrap(),
            "--auth-token-file",
            tokens.to_str().unwrap(),
            "--memcached-listen",
            "127.0.0.1:11211",
        ],
        &[],
    );
    assert!(secured.status.success(), "{}", text(&secured.stderr));
    let out = text(&secured.stdout);
    assert!(
        line(&out, "listen").starts_with("https://127.0.0.1:8080"),
        "{out}"
    );
    assert!(
        line(&out, "grpc").starts_with("https://127.0.0.1:9091"),
        "{out}"
    );
    assert!(
        line(&out, "tls").starts_with("on for HTTP and gRPC: certificate "),
        "{out}"
    );
    let guard = line(&out, "tokens");
    assert!(guard.starts_with("2 tokens of "), "{guard}");
    assert!(guard.contains(" guard scope issue: "), "{guard}");
    assert!(guard.contains("/api/snowflake/get/{key}"), "{guard}");
    assert_eq!(
        line(&out, "open"),
        "issuing with no credential: memcached 127.0.0.1:11211 (its protocol carries no token and no TLS; loopback only)"
    );
    assert!(!out.contains("check-token"), "{out}");
}

/// A fixed node of four slots (`--slots-per-node 4`, machines 4 to 7):
/// --check tries every slot's lock, as a start takes them all, and refuses
/// while a running node holds machine 5, naming its pid; the mark it
/// reports is the highest of the four slots', the one a start resumes
/// after.
#[test]
fn check_tries_every_slot_of_a_fixed_block() {
    let home = temp_dir("check-block");
    let state = home.path().join("state");
    let state_arg = state.to_str().unwrap();
    let block = [
        "--machine",
        "4",
        "--slots-per-node",
        "4",
        "--state-dir",
        state_arg,
        "--listen",
        "127.0.0.1:0",
    ];
    let free = check_live(home.path(), &block, &[]);
    assert_eq!(free.status.code(), Some(0), "{}", text(&free.stderr));
    let out = text(&free.stdout);
    for machine in 4..8 {
        assert!(out.contains(&format!("node-dc0-m{machine}.lock")), "{out}");
    }

    let running = binary::Service::start(
        SNOWMINT,
        home.path(),
        &["--machine", "5", "--state-dir", state_arg],
        &[],
    );
    let held = check_live(home.path(), &block, &[]);
    assert_eq!(held.status.code(), Some(1), "{}", text(&held.stdout));
    let error = text(&held.stderr);
    assert!(error.contains("machine 5"), "{error}");
    assert!(
        error.contains(&format!("process {}", running.pid())),
        "{error}"
    );
    drop(running);

    // Slot 6's mark, a minute ahead, is the one the start waits out.
    let ahead = now_ms() + 60_000;
    MarkFile::for_node(&state, Layout::TWITTER, Node::from_slot(6))
        .write(ahead)
        .unwrap();
    let checked = check(home.path(), &block, &[]);
    assert_eq!(checked.status.code(), Some(2), "{}", text(&checked.stdout));
    let refusal = text(&checked.stderr);
    assert!(
        refusal.contains(&snowmint::format_time(ahead).to_string()),
        "{refusal}"
    );
}
