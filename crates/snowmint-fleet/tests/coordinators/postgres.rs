//! The fleet claim engine against a real PostgreSQL 15 server (Debian's
//! postgresql-15), started by each test on a free loopback port (as the
//! `postgres` user when the tests run as root).

use std::time::{Duration, Instant};

use snowmint::Layout;
use snowmint_fleet::{
    ClaimState, Coordinator, CoordinatorConfig, CoordinatorUrl, NodeState, PostgresBackend,
    PostgresUrl, Secret, SlotRange, SlotSource, postgres_schema,
};
use snowmint_test_support::net::free_port;
use snowmint_test_support::servers::CoordinatorServer;
use snowmint_test_support::servers::postgres::{ADMIN_USER, PostgresServer, give_to_server};
use snowmint_test_support::temp::temp_dir;
use snowmint_test_support::tls::TestCa;
use snowmint_test_support::wait::eventually;

every_scenario!(PostgresServer);

fn backend(url: &str) -> PostgresBackend {
    match url.parse::<CoordinatorUrl>() {
        Ok(CoordinatorUrl::Postgres(url)) => PostgresBackend::new(*url),
        other => panic!("{url} is not a PostgreSQL URL: {other:?}"),
    }
}

fn engine(url: &str, fleet: &str, holder: &str) -> Coordinator<PostgresBackend> {
    let config = CoordinatorConfig::new(
        fleet,
        SlotRange::new(0, 3).unwrap(),
        crate::scenarios::TTL,
        holder.into(),
        Layout::TWITTER,
    )
    .unwrap();
    Coordinator::start(backend(url), config).unwrap()
}

/// Waits until `engine` is fenced for a reason other than starting, and
/// returns it.
async fn reason<S: SlotSource>(engine: &S, part: &str) -> String {
    let states = engine.state();
    eventually(
        &format!("a node fenced because {part:?}"),
        Duration::from_secs(60),
        || {
            let state = states.borrow().clone();
            async move {
                match state {
                    NodeState::Fenced { reason } if reason.contains(part) => Some(reason),
                    NodeState::Active(claim) => panic!("claimed without the rights: {claim:?}"),
                    NodeState::Fenced { .. } => None,
                }
            }
        },
    )
    .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn connect_reads_a_postgres_url() {
    let server = PostgresServer::start().await;
    let url = server.url();
    crate::scenarios::connect_from_url(&server, &url, "postgres", "session").await;
}

/// A closed port: the node is fenced with a sentence that names the
/// coordinator and the system's words, and says that it retries.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unreachable_coordinator_is_one_sentence() {
    let port = free_port();
    let url = format!("postgres://ids@127.0.0.1:{port}/ids");
    let expected = format!("cannot reach the coordinator {url} (connection refused); retrying");
    crate::scenarios::unreachable_coordinator(&url, &expected).await;
}

/// A role that may not create the schema is told so, then that it may not
/// create the tables in the schema made for it, then which rights it
/// lacks on the tables made for it by hand; it stays fenced (not ready)
/// until it has them all, then claims. The password never shows.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_role_without_rights_is_told_what_is_missing_and_stays_fenced() {
    let server = PostgresServer::start().await;
    let admin = server.admin().await;
    admin
        .batch_execute("CREATE ROLE app LOGIN PASSWORD 'app-secret'")
        .await
        .unwrap();
    admin.batch_execute("CREATE DATABASE appdb").await.unwrap();
    let url = server.login_url("app", "app-secret", "appdb");
    let shown = server.login_url("app", "***", "appdb");
    let node = engine(&url, "rights", "app-node");

    let missing = reason(&node, "does not exist").await;
    assert_eq!(
        missing,
        format!(
            "the coordinator {shown} could not serve the request: schema snowmint does not \
             exist and role \"app\" may not create it (it lacks CREATE on database \"appdb\"); \
             create the schema and tables as the fleet guide (docs/fleet.md) shows, or grant CREATE; retrying"
        )
    );
    // It keeps trying, and stays fenced.
    tokio::time::sleep(crate::scenarios::TTL).await;
    assert!(matches!(
        node.state().borrow().clone(),
        NodeState::Fenced { .. }
    ));
    assert_eq!(node.status().state, ClaimState::Connecting);

    let (owner, connection) = tokio_postgres::connect(
        &server.login_url(ADMIN_USER, server.password(), "appdb"),
        tokio_postgres::NoTls,
    )
    .await
    .unwrap();
    tokio::spawn(connection);
    // An administrator makes the schema alone, and lets the role use it.
    owner
        .batch_execute("CREATE SCHEMA snowmint; GRANT USAGE ON SCHEMA snowmint TO app;")
        .await
        .unwrap();
    let no_tables = reason(&node, "tables snowmint.slots").await;
    assert_eq!(
        no_tables,
        format!(
            "the coordinator {shown} could not serve the request: tables snowmint.slots, \
             snowmint.marks, snowmint.fleets, snowmint.claims do not exist and role \"app\" may not create them \
             in schema snowmint (it lacks CREATE on the schema); create the tables as the \
             fleet guide (docs/fleet.md) shows, or grant CREATE; retrying"
        )
    );
    // Then the tables, as the fleet guide shows, granting only reading.
    owner
        .batch_execute(&postgres_schema("snowmint"))
        .await
        .unwrap();
    owner
        .batch_execute(
            "GRANT USAGE ON SCHEMA snowmint TO app; \
             GRANT SELECT ON ALL TABLES IN SCHEMA snowmint TO app;",
        )
        .await
        .unwrap();
    let lacks = reason(&node, "lacks INSERT").await;
    assert_eq!(
        lacks,
        format!(
            "the coordinator {shown} could not serve the request: role \"app\" lacks \
             INSERT, UPDATE, DELETE on table snowmint.slots; INSERT, UPDATE on table \
             snowmint.marks; INSERT on table snowmint.fleets; INSERT, UPDATE on table \
             snowmint.claims; retrying"
        )
    );

    owner
        .batch_execute("GRANT INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA snowmint TO app;")
        .await
        .unwrap();
    let states = node.state();
    let claim = eventually(
        "a claim once the rights are there",
        Duration::from_secs(60),
        || {
            let claim = states.borrow().claim_at(Instant::now()).cloned();
            async move { claim }
        },
    )
    .await;
    assert_eq!(claim.details["coordinator"], shown);
    for text in [
        missing,
        no_tables,
        lacks,
        claim.details["coordinator"].clone(),
    ] {
        assert!(!text.contains("app-secret"), "{text}");
    }
    node.release().await;
}

/// With no password in the URL, the node finds it in a libpq password
/// file named by `passfile=`; the lease counts on the database's clock,
/// as a row whose `expires_at` lies one TTL after the database's `now()`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_password_file_logs_the_node_in_and_leases_count_on_the_databases_clock() {
    let server = PostgresServer::start().await;
    let dir = temp_dir("pgpass");
    let file = dir.path().join("pgpass");
    std::fs::write(
        &file,
        format!(
            "# host:port:database:user:password\n127.0.0.1:{}:postgres:{ADMIN_USER}:{}\n",
            server.port(),
            server.password().replace(':', "\\:")
        ),
    )
    .unwrap();
    // As libpq, a file its group or others may read is refused: the node
    // says why and which file, and never what the file holds.
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o644)).unwrap();
    let url = format!(
        "{}?passfile={}",
        server.login_url(ADMIN_USER, "", "postgres"),
        file.display()
    );
    let open = engine(&url, "passfile", "from-file");
    let refused = reason(&open, "group or world access").await;
    assert!(
        refused.contains(&format!(
            "the password file {} has group or world access (mode 0644)",
            file.display()
        )),
        "{refused}"
    );
    assert!(!refused.contains(server.password()), "{refused}");
    open.release().await;
    std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o600)).unwrap();
    let node = engine(&url, "passfile", "from-file");
    let states = node.state();
    let claim = eventually(
        "a claim with the password file",
        Duration::from_secs(60),
        || {
            let claim = states.borrow().claim_at(Instant::now()).cloned();
            async move { claim }
        },
    )
    .await;
    let slot = i64::try_from(claim.slot).unwrap();
    let row = server
        .admin()
        .await
        .query_one(
            "SELECT holder, (extract(epoch FROM expires_at - now()) * 1000)::float8 \
             FROM snowmint.slots WHERE fleet = 'passfile' AND slot = $1",
            &[&slot],
        )
        .await
        .unwrap();
    assert_eq!(row.get::<_, String>(0), "from-file");
    let left: f64 = row.get(1);
    let ttl_ms = crate::scenarios::TTL.as_millis() as f64;
    assert!(
        left > 0.0 && left <= ttl_ms,
        "the lease ends {left} ms after the database's now, not within the TTL of {ttl_ms} ms"
    );
    node.release().await;
}

/// A password given apart from the URL (`--coordinator-password-file`,
/// `SNOWMINT_COORDINATOR_PASSWORD`) logs the node in ahead of
/// `PGPASSWORD` and password files.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_password_given_apart_from_the_url_logs_the_node_in() {
    let server = PostgresServer::start().await;
    let url: CoordinatorUrl = server
        .login_url(ADMIN_USER, "", "postgres")
        .parse()
        .unwrap();
    let CoordinatorUrl::Postgres(target) = &url else {
        unreachable!()
    };
    let backend = PostgresBackend::new(PostgresUrl::clone(target))
        .with_password(Secret::new(server.password()));
    let slot = crate::scenarios::refusals::claims(backend, "apart").await;
    assert!(slot <= 3);
}

/// The fleet guide's DDL for PostgreSQL is the one nodes run.
#[test]
fn the_guide_shows_the_tables_nodes_create() {
    let guide =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/fleet.md"))
            .expect("cannot read docs/fleet.md");
    let ddl = postgres_schema("snowmint");
    assert!(
        guide.contains(&format!("```sql\n{ddl}")),
        "docs/fleet.md has no ```sql block starting with:\n{ddl}"
    );
}

/// Waits until `node` holds a claim, or panics with its last reason.
async fn claims(node: &Coordinator<PostgresBackend>, what: &str) {
    let states = node.state();
    eventually(what, Duration::from_secs(60), || {
        let claim = states.borrow().claim_at(Instant::now()).cloned();
        async move { claim }
    })
    .await;
}

/// TLS by rustls, as `sslmode` says: `require` encrypts without checking
/// the certificate; `verify-ca` checks that a trusted authority signed it
/// (`sslrootcert`), for any host name; `verify-full` also that it names
/// the host; a certificate that fails the check is refused, in words.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tls_follows_sslmode() {
    // The certificate names 127.0.0.1 only (see verify-full below). The
    // server reads its files as its own user, and refuses a key that
    // others may read.
    let authority = TestCa::new("snowmint test CA");
    let certificate = authority.server_for("postgres", &["127.0.0.1"]);
    for path in [&certificate.cert, &certificate.key] {
        give_to_server(path);
    }
    give_to_server(authority.dir());
    let server = PostgresServer::builder()
        .setting("ssl", "on")
        .setting("ssl_cert_file", &certificate.cert.display().to_string())
        .setting("ssl_key_file", &certificate.key.display().to_string())
        .start()
        .await;
    let ca = authority.ca_file().display().to_string();
    let at = |host: &str, params: &str| {
        format!(
            "postgres://{ADMIN_USER}:{}@{host}:{}/postgres?{params}",
            server.password(),
            server.port()
        )
    };

    let node = engine(
        &at("127.0.0.1", "sslmode=require&application_name=tls-require"),
        "tls",
        "require",
    );
    claims(&node, "a claim over TLS, certificate unchecked").await;
    let row = server
        .admin()
        .await
        .query_one(
            "SELECT count(*), bool_and(s.ssl) FROM pg_stat_ssl s JOIN pg_stat_activity a USING (pid) \
             WHERE a.application_name = 'tls-require'",
            &[],
        )
        .await
        .unwrap();
    assert_eq!(
        (row.get::<_, i64>(0), row.get::<_, bool>(1)),
        (1, true),
        "one connection, encrypted"
    );
    node.release().await;

    let node = engine(
        &at(
            "127.0.0.1",
            &format!("sslmode=verify-full&sslrootcert={ca}"),
        ),
        "tls",
        "full",
    );
    claims(&node, "a claim with the certificate fully checked").await;
    node.release().await;
    // The certificate names 127.0.0.1, not localhost: enough for
    // verify-ca, not for verify-full.
    let node = engine(
        &at("localhost", &format!("sslmode=verify-ca&sslrootcert={ca}")),
        "tls",
        "ca",
    );
    claims(&node, "a claim with the authority checked").await;
    node.release().await;
    let node = engine(
        &at(
            "localhost",
            &format!("sslmode=verify-full&sslrootcert={ca}"),
        ),
        "tls",
        "name",
    );
    let refused = reason(&node, "certificate").await;
    assert!(refused.contains("invalid peer certificate"), "{refused}");
    node.release().await;
    // Without sslrootcert, the system's authorities, which never signed it.
    let node = engine(&at("127.0.0.1", "sslmode=verify-full"), "tls", "system");
    let refused = reason(&node, "certificate").await;
    assert!(refused.contains("invalid peer certificate"), "{refused}");
    assert!(!refused.contains(server.password()), "{refused}");
    node.release().await;
}

/// `read_holders` (how clients find a fleet's nodes) reads the live slot
/// rows: the holder of each claimed slot, and none once it is released.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn read_holders_lists_the_live_claims() {
    let server = PostgresServer::start().await;
    let url = server.url();
    let holder = snowmint_fleet::Holder {
        host: "web-1".into(),
        pid: 42,
        listen: "127.0.0.1:8081".into(),
        grpc: Some("127.0.0.1:9091".into()),
        started_ms: 1_700_000_000_000,
    };
    let node = engine(&url, "found", &holder.to_string());
    claims(&node, "a claim to be found").await;
    let slot = node.status().slot.expect("a slot is held");
    let fleet: snowmint_fleet::FleetName = "found".parse().unwrap();
    let parsed: CoordinatorUrl = url.parse().unwrap();
    let found = snowmint_fleet::read_holders(&parsed, &fleet).await.unwrap();
    assert_eq!(found, std::collections::BTreeMap::from([(slot, holder)]));
    node.release().await;
    let found = snowmint_fleet::read_holders(&parsed, &fleet).await.unwrap();
    assert!(found.is_empty(), "{found:?}");
}
