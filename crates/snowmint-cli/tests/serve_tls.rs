//! TLS on the real `snowmint serve`, with certificates made by the test:
//! HTTP over TLS with curl (HTTP/1.1 and HTTP/2 by ALPN) and gRPC with
//! tonic and the Rust client; a cleartext client fails the handshake while
//! others are served; mTLS refuses a missing or foreign client
//! certificate; the files are read again when replaced (new handshakes
//! see the new certificate's serial, an open stream goes on), and a
//! corrupt file at that point keeps the old certificate; a bad file at
//! start exits with code 2 naming the file and quoting none of it.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use snowmint_client::proto::id_service_client::IdServiceClient;
use snowmint_client::proto::{NextIdsRequest, StreamIdsRequest};
use snowmint_test_support::binary::{Service, run_to_end};
use snowmint_test_support::shown;
use snowmint_test_support::temp::temp_dir;
use snowmint_test_support::tls::{Issued, TestCa, presented_serial, serial_bytes};
use snowmint_test_support::wait::wait_until;
use tonic::transport::{Certificate, Channel, ClientTlsConfig, Endpoint, Identity};

/// The `snowmint` binary under test.
const SNOWMINT: &str = env!("CARGO_BIN_EXE_snowmint");
const LIMIT: Duration = Duration::from_secs(60);

/// A node's TLS files, signed by `ca`, and the certificate's serial.
struct Files {
    cert: PathBuf,
    key: PathBuf,
    ca: PathBuf,
    serial: u64,
}

fn files(ca: &TestCa) -> Files {
    let node = ca.server("node");
    Files {
        cert: node.cert,
        key: node.key,
        ca: ca.ca_file().to_owned(),
        serial: node.serial,
    }
}

fn tls_args(files: &Files) -> Vec<String> {
    vec![
        "--grpc-listen".into(),
        "127.0.0.1:0".into(),
        "--tls-cert".into(),
        files.cert.display().to_string(),
        "--tls-key".into(),
        files.key.display().to_string(),
    ]
}

fn start(home: &Path, args: &[String]) -> Service {
    // A fixed node's identity, unless the node claims one.
    let fixed: &[&str] = if args.iter().any(|a| a == "--coordinator") {
        &[]
    } else {
        &["--datacenter", "0", "--machine", "0"]
    };
    let args: Vec<&str> = fixed
        .iter()
        .copied()
        .chain(args.iter().map(String::as_str))
        .collect();
    Service::start(SNOWMINT, home, &args, &[])
}

/// Runs curl with `args`; returns its exit code, standard output and
/// standard error. Fails the test, saying how to get it, without curl.
fn curl(args: &[&str]) -> (i32, String, String) {
    let output = Command::new("curl")
        .args(["--silent", "--show-error", "--max-time", "30"])
        .args(args)
        .output()
        .expect("curl is missing: apt-get install curl");
    (
        output.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&output.stdout).into_owned(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

/// A tonic channel to `address` over TLS trusting `ca`, presenting
/// `client` when given.
async fn channel(
    address: SocketAddr,
    ca: &TestCa,
    client: Option<&Issued>,
) -> Result<Channel, String> {
    let mut tls = ClientTlsConfig::new().ca_certificate(Certificate::from_pem(ca.pem()));
    if let Some(client) = client {
        tls = tls.identity(Identity::from_pem(&client.cert_pem, &client.key_pem));
    }
    Endpoint::from_shared(format!("https://{address}"))
        .unwrap()
        .tls_config(tls)
        .unwrap()
        .connect_timeout(Duration::from_secs(10))
        .connect()
        .await
        .map_err(|e| format!("{e:?}"))
}

async fn next_id(channel: Channel) -> Result<u64, String> {
    let batch = IdServiceClient::new(channel)
        .next_ids(NextIdsRequest { count: 1 })
        .await
        .map_err(|status| format!("{:?}: {}", status.code(), status.message()))?;
    Ok(batch.into_inner().ids[0])
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap()
}

/// The sample `series` of the node's Prometheus text, read over TLS.
fn metric(service: &Service, ca: &Path, series: &str) -> f64 {
    let url = format!("https://{}/metrics", service.address);
    let (code, body, error) = curl(&["--cacert", ca.to_str().unwrap(), &url]);
    assert_eq!(code, 0, "{error}");
    body.lines()
        .find_map(|line| line.strip_prefix(series)?.strip_prefix(' '))
        .map_or(0.0, |value| value.trim().parse().unwrap())
}

/// HTTP/1.1 and HTTP/2 (chosen by ALPN) with curl trusting the test CA,
/// gRPC with tonic and with the Rust client over TLS; the node says
/// `https://` where it listens.
#[test]
fn http_and_grpc_are_served_over_tls() {
    let home = temp_dir("tls-serve");
    let ca = TestCa::new("snowmint test CA");
    let files = files(&ca);
    let service = start(home.path(), &tls_args(&files));
    assert!(service.tls, "the node did not say https://");
    let cacert = files.ca.to_str().unwrap();
    let url = format!("https://{}/v1/id", service.address);
    for (flag, version) in [("--http1.1", "1.1"), ("--http2", "2")] {
        let (code, out, error) = curl(&["--cacert", cacert, flag, "-w", "\n%{http_version}", &url]);
        assert_eq!(code, 0, "{flag}: {error}");
        let (body, seen) = out.rsplit_once('\n').unwrap();
        assert_eq!(seen, version, "{flag}: {out}");
        let json: serde_json::Value = serde_json::from_str(body).unwrap();
        assert!(
            json["id"].as_str().unwrap().parse::<u64>().is_ok(),
            "{body}"
        );
    }
    // The name in the certificate is checked: localhost is in it too.
    let by_name = format!("https://localhost:{}/healthz", service.address.port());
    let (code, _, error) = curl(&["--cacert", cacert, &by_name]);
    assert_eq!(code, 0, "{error}");

    let grpc = service.grpc.unwrap();
    let runtime = runtime();
    runtime.block_on(async {
        let channel = channel(grpc, &ca, None).await.unwrap();
        assert!(next_id(channel).await.unwrap() > 0);
        let client = snowmint_client::Client::builder()
            .endpoints([format!("http://{grpc}")])
            .tls_ca(ca.pem())
            .build()
            .await
            .unwrap();
        let ids = client.next_ids(10).await.unwrap();
        assert_eq!(ids.len(), 10);
        assert!(
            client.endpoints()[0].starts_with("https://"),
            "{:?}",
            client.endpoints()
        );
    });
}

/// Cleartext to either TLS port gets no answer, and is counted, while a
/// TLS client on the same node goes on being served.
#[test]
fn a_cleartext_client_fails_the_handshake_and_others_are_unaffected() {
    let home = temp_dir("tls-cleartext");
    let ca = TestCa::new("snowmint test CA");
    let files = files(&ca);
    let service = start(home.path(), &tls_args(&files));
    let grpc = service.grpc.unwrap();
    let runtime = runtime();
    runtime.block_on(async {
        let good = channel(grpc, &ca, None).await.unwrap();
        for _ in 0..3 {
            let http = curl(&[&format!("http://{}/v1/id", service.address)]);
            assert_ne!(http.0, 0, "cleartext HTTP was answered: {http:?}");
            let plain = Endpoint::from_shared(format!("http://{grpc}"))
                .unwrap()
                .connect()
                .await;
            let refused = match plain {
                Ok(channel) => next_id(channel).await.is_err(),
                Err(_) => true,
            };
            assert!(refused, "cleartext gRPC was answered");
            // The TLS client on its open connection, and a new one.
            assert!(next_id(good.clone()).await.is_ok());
            let (code, _, error) = curl(&[
                "--cacert",
                files.ca.to_str().unwrap(),
                &format!("https://{}/v1/id", service.address),
            ]);
            assert_eq!(code, 0, "{error}");
        }
    });
    let failures = |listener: &str| {
        metric(
            &service,
            &files.ca,
            &format!("snowmint_tls_handshake_failures_total{{listener=\"{listener}\"}}"),
        )
    };
    assert!(failures("http") >= 3.0);
    assert!(failures("grpc") >= 1.0);
}

/// Issue 34, finding 9: 30 clients that send half a ClientHello and
/// stall, against a cap of 20 connections. A connection still in its
/// handshake half a second after its accept is the first closed to make
/// room, so each of ten new TLS clients is served within a bound (curl's
/// `--max-time 4`, below both the handshake deadline of 5 s and the
/// request timeout: before, room was made only from connections a request
/// timeout old).
#[test]
fn half_sent_client_hellos_cannot_keep_a_client_out() {
    use snowmint_test_support::hostile::{Attack, HALF_CLIENT_HELLO, Horde};
    let home = temp_dir("tls-half-hello");
    let ca = TestCa::new("snowmint test CA");
    let files = files(&ca);
    let mut args = tls_args(&files);
    args.extend(["--max-connections".into(), "20".into()]);
    let service = start(home.path(), &args);
    let horde = Horde::start(service.address, Attack::Stall(HALF_CLIENT_HELLO), 30);
    // Let the stalled handshakes fill the cap.
    std::thread::sleep(Duration::from_secs(2));
    let url = format!("https://{}/v1/id", service.address);
    let cacert = files.ca.to_str().unwrap();
    let mut served = 0;
    for probe in 0..10 {
        let started = std::time::Instant::now();
        let (code, out, error) = curl(&["--cacert", cacert, "--max-time", "4", &url]);
        let took = started.elapsed().as_millis();
        eprintln!(
            "probe {probe}: curl exit {code} {}{} ({took} ms)",
            out.trim(),
            error.trim()
        );
        served += usize::from(code == 0 && out.contains("\"id\""));
    }
    horde.stop();
    assert_eq!(served, 10, "new TLS clients served of 10");
    let evicted = metric(
        &service,
        &files.ca,
        "snowmint_limit_reached_total{limit=\"evicted\"}",
    );
    assert!(evicted > 0.0, "no handshaking connection made room");
}

/// With `--tls-client-ca`, a client without a certificate or with one of
/// another CA is refused, on both listeners; one of the CA is served.
#[test]
fn mtls_refuses_a_missing_or_foreign_client_certificate() {
    let home = temp_dir("tls-mtls");
    let ca = TestCa::new("snowmint test CA");
    let clients = TestCa::new("snowmint clients CA");
    let stranger = TestCa::new("someone else's CA");
    let files = files(&ca);
    let client_ca = clients.ca_file();
    let mut args = tls_args(&files);
    args.extend(["--tls-client-ca".into(), client_ca.display().to_string()]);
    let service = start(home.path(), &args);
    let cacert = files.ca.to_str().unwrap();
    let url = format!("https://{}/v1/id", service.address);

    let member = clients.client("member");
    let outsider = stranger.client("outsider");
    let (member_cert, member_key) = (&member.cert, &member.key);
    let (outsider_cert, outsider_key) = (&outsider.cert, &outsider.key);
    let with = |cert: &Path, key: &Path| {
        curl(&[
            "--cacert",
            cacert,
            "--cert",
            cert.to_str().unwrap(),
            "--key",
            key.to_str().unwrap(),
            &url,
        ])
    };
    let none = curl(&["--cacert", cacert, &url]);
    assert_ne!(none.0, 0, "served without a client certificate: {none:?}");
    let foreign = with(outsider_cert, outsider_key);
    assert_ne!(
        foreign.0, 0,
        "served with a foreign client certificate: {foreign:?}"
    );
    let (code, body, error) = with(member_cert, member_key);
    assert_eq!(code, 0, "{error}");
    assert!(body.contains("\"id\""), "{body}");

    let grpc = service.grpc.unwrap();
    runtime().block_on(async {
        for (who, client) in [("no certificate", None), ("a foreign one", Some(&outsider))] {
            let refused = match channel(grpc, &ca, client).await {
                Ok(channel) => next_id(channel).await.is_err(),
                Err(_) => true,
            };
            assert!(refused, "gRPC served with {who}");
        }
        let channel = channel(grpc, &ca, Some(&member)).await.unwrap();
        assert!(next_id(channel).await.is_ok());
        let client = snowmint_client::Client::builder()
            .endpoints([format!("https://{grpc}")])
            .tls_ca(ca.pem())
            .tls_identity_files(member_cert, member_key)
            .build()
            .await
            .unwrap();
        assert!(client.next_id().await.is_ok());
    });
}

/// Replaced files are read again: new handshakes on both listeners see
/// the new certificate (by its serial), a `StreamIds` opened before goes
/// on, SIGHUP reads the files again at once, and a corrupt file keeps the
/// certificate in force (logged with the file's name, counted).
#[test]
fn rotated_certificates_reach_new_handshakes_and_open_streams_survive() {
    let home = temp_dir("tls-rotate");
    let ca = TestCa::new("snowmint test CA");
    let files = files(&ca);
    let service = start(home.path(), &tls_args(&files));
    let grpc = service.grpc.unwrap();
    let serial = |address| presented_serial(address, ca.pem(), None).unwrap();
    assert_eq!(serial(service.address), serial_bytes(files.serial));
    assert_eq!(serial(grpc), serial_bytes(files.serial));

    let runtime = runtime();
    let mut stream = runtime.block_on(async {
        let channel = channel(grpc, &ca, None).await.unwrap();
        let mut stream = IdServiceClient::new(channel)
            .stream_ids(StreamIdsRequest {
                batch: 64,
                total: 0,
            })
            .await
            .unwrap()
            .into_inner();
        stream.message().await.unwrap().unwrap();
        stream
    });

    let renewed = ca.server("node-renewed");
    assert_ne!(renewed.serial, files.serial);
    renewed.replace(&files.cert, &files.key);
    let new = serial_bytes(renewed.serial);
    wait_until("new handshakes to present the new serial", LIMIT, || {
        (serial(service.address) == new).then_some(())
    });
    assert_eq!(serial(grpc), new);
    let last = runtime.block_on(async {
        // The stream opened under the first certificate goes on.
        let mut last = 0;
        for _ in 0..20 {
            let batch = stream.message().await.unwrap().unwrap();
            assert!(batch.ids[0] > last);
            last = *batch.ids.last().unwrap();
        }
        last
    });
    assert!(last > 0);
    let reloads = |result: &str| {
        metric(
            &service,
            &files.ca,
            &format!("snowmint_reloads_total{{file=\"tls\",result=\"{result}\"}}"),
        )
    };
    assert!(reloads("ok") >= 1.0);

    // SIGHUP reads the files at once, changed or not.
    let before = reloads("ok");
    let sent = Command::new("sh")
        .args(["-c", &format!("kill -HUP {}", service.pid())])
        .status()
        .unwrap();
    assert!(sent.success());
    wait_until("SIGHUP to reload the TLS files", LIMIT, || {
        (reloads("ok") > before).then_some(())
    });

    // A corrupt certificate: refused at the reload, the new one stays.
    std::fs::write(
        &files.cert,
        "-----BEGIN CERTIFICATE-----\nnot base64 at all!\n",
    )
    .unwrap();
    wait_until("the corrupt file to be refused", LIMIT, || {
        (reloads("failed") >= 1.0).then_some(())
    });
    assert_eq!(serial(service.address), new);
    assert_eq!(serial(grpc), new);
    let log = service.log();
    assert!(
        log.contains(&format!("TLS certificate {}", files.cert.display()))
            && log.contains("the certificate in force stays"),
        "{log}"
    );
    runtime.block_on(async {
        assert!(stream.message().await.unwrap().is_some());
    });
}

/// A TLS file that cannot be used stops the start with exit code 2, and
/// the message names the file and what is wrong, quoting none of it.
#[test]
fn a_bad_tls_file_at_start_exits_2_naming_it() {
    let home = temp_dir("tls-bad");
    let ca = TestCa::new("snowmint test CA");
    let files = files(&ca);
    let other = ca.server("other");
    let broken_key = home.path().join("broken.key");
    std::fs::write(
        &broken_key,
        "-----BEGIN PRIVATE KEY-----\nSECRETKEYMATERIAL!!notbase64\n-----END PRIVATE KEY-----\n",
    )
    .unwrap();
    let missing = home.path().join("missing.crt");
    let path = |p: &Path| p.display().to_string();
    let cases: Vec<(Vec<String>, String)> = vec![
        (
            vec![
                "--tls-cert".into(),
                path(&missing),
                "--tls-key".into(),
                path(&files.key),
            ],
            format!("TLS certificate {}: cannot be read", missing.display()),
        ),
        (
            vec![
                "--tls-cert".into(),
                path(&files.key),
                "--tls-key".into(),
                path(&files.key),
            ],
            format!(
                "TLS certificate {}: holds no certificate",
                files.key.display()
            ),
        ),
        (
            vec![
                "--tls-cert".into(),
                path(&files.cert),
                "--tls-key".into(),
                path(&broken_key),
            ],
            format!("TLS key {}: is not valid PEM", broken_key.display()),
        ),
        (
            vec![
                "--tls-cert".into(),
                path(&files.cert),
                "--tls-key".into(),
                path(&other.key),
            ],
            format!(
                "TLS key {} does not belong to the certificate {}",
                other.key.display(),
                files.cert.display()
            ),
        ),
        (
            vec!["--tls-cert".into(), path(&files.cert)],
            "--tls-cert needs --tls-key too".to_owned(),
        ),
        (
            vec![
                "--tls-cert".into(),
                path(&files.cert),
                "--tls-key".into(),
                path(&files.key),
                "--tls-client-ca".into(),
                path(&files.key),
            ],
            format!(
                "TLS client CA {}: holds no certificate",
                files.key.display()
            ),
        ),
    ];
    for (args, expected) in cases {
        let args: Vec<&str> = ["--datacenter", "0", "--machine", "0"]
            .into_iter()
            .chain(args.iter().map(String::as_str))
            .collect();
        let (status, stdout, stderr) = run_to_end(SNOWMINT, home.path(), &args, &[]);
        assert_eq!(status.code(), Some(2), "{args:?}: {stderr}");
        assert!(
            stderr.contains(&expected),
            "{args:?}: expected {expected:?} in:\n{stderr}"
        );
        assert!(!stderr.contains("SECRETKEYMATERIAL"), "{stderr}");
        assert!(!stdout.contains("listening"), "{stdout}");
    }
}

/// The security guide's client example ("Clients of a secured node"), word
/// for word but for the addresses and files, which come in as variables.
async fn readme_secured_client(
    a: &str,
    b: &str,
    ca: &Path,
    cert: &Path,
    key: &Path,
    token: &Path,
) -> Result<u64, snowmint_client::Error> {
    use snowmint_client::Client;

    let client = Client::builder()
        .endpoints([a, b])
        .tls_ca_file(ca)
        .tls_identity_files(cert, key)
        .token_file(token)
        .build()
        .await?;
    let id = client.next_id().await?;
    Ok(id)
}

/// The guide's example runs against a node that requires TLS, a client
/// certificate and a token, and is the code above.
#[test]
fn the_readme_secured_client_example_runs_as_shown() {
    let indented = shown::as_function_body(
        include_str!("../../../docs/security.md"),
        "## Clients of a secured node",
        "text",
    )
    .replace(
        "[\"https://ids-0.internal:9090\", \"https://ids-1.internal:9090\"]",
        "[a, b]",
    )
    .replace("(\"/etc/snowmint/tls/ca.crt\")", "(ca)")
    .replace(
        "(\"/etc/snowmint/tls/client.crt\", \"/etc/snowmint/tls/client.key\")",
        "(cert, key)",
    )
    .replace("(\"/etc/snowmint/client-token\")", "(token)");
    assert!(
        include_str!("serve_tls.rs").contains(&indented),
        "docs/security.md's example is not the code of readme_secured_client:\n{indented}"
    );

    let home = temp_dir("tls-readme");
    let ca = TestCa::new("snowmint test CA");
    let clients = TestCa::new("snowmint clients CA");
    let files = files(&ca);
    let tokens = home.path().join("tokens");
    std::fs::write(
        &tokens,
        "# the fleet's clients\nreadme-token-0123456789abcdef\n",
    )
    .unwrap();
    let client_token = home.path().join("client-token");
    std::fs::write(&client_token, "readme-token-0123456789abcdef\n").unwrap();
    let mut args = tls_args(&files);
    args.extend([
        "--tls-client-ca".into(),
        clients.ca_file().display().to_string(),
        "--auth-token-file".into(),
        tokens.display().to_string(),
    ]);
    let service = start(home.path(), &args);
    let app = clients.client("app");
    let (cert, key) = (&app.cert, &app.key);
    let port = service.grpc.unwrap().port();
    let (a, b) = (
        format!("https://localhost:{port}"),
        format!("https://127.0.0.1:{port}"),
    );
    let id = runtime()
        .block_on(readme_secured_client(
            &a,
            &b,
            &files.ca,
            cert,
            key,
            &client_token,
        ))
        .unwrap();
    assert!(id > 0);
    // Without the token the same client is refused.
    std::fs::write(&client_token, "another-token-0123456789abcdef\n").unwrap();
    let refused = runtime().block_on(readme_secured_client(
        &a,
        &b,
        &files.ca,
        cert,
        key,
        &client_token,
    ));
    assert!(
        matches!(refused, Err(snowmint_client::Error::Unauthenticated { .. })),
        "{refused:?}"
    );
}

/// The TLS settings read from the environment and the TOML file as from
/// the flags.
#[test]
fn the_tls_settings_come_from_the_environment_and_the_file_too() {
    let home = temp_dir("tls-ways");
    let ca = TestCa::new("snowmint test CA");
    let clients = TestCa::new("snowmint clients CA");
    let files = files(&ca);
    let cacert = files.ca.to_str().unwrap();
    let by_env = Service::start(
        SNOWMINT,
        home.path(),
        &["--datacenter", "0", "--machine", "0"],
        &[
            ("SNOWMINT_TLS_CERT", files.cert.to_str().unwrap()),
            ("SNOWMINT_TLS_KEY", files.key.to_str().unwrap()),
        ],
    );
    assert!(by_env.tls, "the node did not say https://");
    let (code, body, error) = curl(&[
        "--cacert",
        cacert,
        &format!("https://{}/v1/id", by_env.address),
    ]);
    assert_eq!(code, 0, "{error}");
    assert!(body.contains("\"id\""), "{body}");
    drop(by_env);

    let client_ca = clients.ca_file();
    let config = home.path().join("snowmint.toml");
    std::fs::write(
        &config,
        format!(
            "tls_cert = {:?}\ntls_key = {:?}\ntls_client_ca = {:?}\nstate_dir = {:?}\ndatacenter = 0\nmachine = 0\n",
            files.cert.display().to_string(),
            files.key.display().to_string(),
            client_ca.display().to_string(),
            home.path().join("state-toml").display().to_string(),
        ),
    )
    .unwrap();
    let by_file = Service::start(
        SNOWMINT,
        home.path(),
        &["--config", config.to_str().unwrap()],
        &[],
    );
    let url = format!("https://{}/healthz", by_file.address);
    let without = curl(&["--cacert", cacert, &url]);
    assert_ne!(
        without.0, 0,
        "served without a client certificate: {without:?}"
    );
    let app = clients.client("app");
    let (cert, key) = (&app.cert, &app.key);
    let (code, _, error) = curl(&[
        "--cacert",
        cacert,
        "--cert",
        cert.to_str().unwrap(),
        "--key",
        key.to_str().unwrap(),
        &url,
    ]);
    assert_eq!(code, 0, "{error}");
}

/// A client that speaks TLS dials the nodes it discovers on the
/// coordinator over TLS too (their holder values say `grpc=ADDR`, with no
/// scheme), and gets IDs from each; a client without the CA gets none.
#[cfg(feature = "etcd")]
#[test]
fn discovered_nodes_are_dialled_over_tls() {
    use snowmint_test_support::servers::CoordinatorServer;
    use std::collections::BTreeSet;

    let runtime = runtime();
    let etcd = runtime.block_on(snowmint_test_support::servers::etcd::EtcdServer::start());
    let url = etcd.url();
    let home = temp_dir("tls-discovery");
    let ca = TestCa::new("snowmint test CA");
    let files = files(&ca);
    let node = |name: &str| {
        let mut args = tls_args(&files);
        args.extend([
            "--coordinator".into(),
            url.clone(),
            "--fleet".into(),
            "secure".into(),
            "--state-dir".into(),
            home.path()
                .join(format!("state-{name}"))
                .display()
                .to_string(),
        ]);
        start(home.path(), &args)
    };
    let (a, b) = (node("a"), node("b"));
    runtime.block_on(async {
        let client = snowmint_client::Client::builder()
            .discover(url.clone(), "secure")
            .discover_every(Duration::from_millis(200))
            .max_age(Duration::ZERO)
            .tls_ca(ca.pem())
            .build()
            .await
            .unwrap();
        let want: BTreeSet<String> = [&a, &b]
            .iter()
            .map(|s| format!("https://{}", s.grpc.unwrap()))
            .collect();
        snowmint_test_support::wait::eventually("both nodes to be found", LIMIT, || async {
            let known: BTreeSet<String> = client.endpoints().into_iter().collect();
            (known == want).then_some(())
        })
        .await;
        let slots = std::sync::Mutex::new(BTreeSet::new());
        snowmint_test_support::wait::eventually("IDs from both nodes", LIMIT, || async {
            let id = client.next_id().await.unwrap();
            let mut slots = slots.lock().unwrap();
            slots.insert((id >> 12) & 0x3ff);
            (slots.len() == 2).then_some(())
        })
        .await;

        let cleartext = snowmint_client::Client::builder()
            .discover(url.clone(), "secure")
            .max_age(Duration::ZERO)
            .deadline(Duration::from_secs(2))
            .build()
            .await
            .unwrap();
        assert!(
            matches!(
                cleartext.next_id().await,
                Err(snowmint_client::Error::Unavailable { .. })
            ),
            "a cleartext client got an ID from a TLS node"
        );
    });
}
