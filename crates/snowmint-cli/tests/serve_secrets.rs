//! No password ever shows: `snowmint serve` refuses a coordinator URL it
//! cannot read, in every form that holds a password (flag, environment,
//! configuration file; `etcd://`, `zk://`, `POSTGRES://`, a raw `/`, `?`
//! or `@` in the password), with exit code 2 and a message that shows the
//! URL's user part as `***`; a TOML error quotes no line; `serve --help`
//! shows no value; a password in a URL on the command line draws a
//! warning, never an echo.

use snowmint_test_support::binary::{Service, command, run_to_end};
use snowmint_test_support::temp::temp_dir;

const BINARY: &str = env!("CARGO_BIN_EXE_snowmint");
const SECRET: &str = "Pw-9Z7q";

/// Every malformed URL with a password, and what its message must say.
fn malformed() -> Vec<(String, &'static str)> {
    vec![
        (format!("etcd://alice7:{SECRET}@"), "etcd://***@"),
        (
            format!("etcd://alice7:{SECRET}@127.0.0.1"),
            "etcd://***@127.0.0.1",
        ),
        (
            format!("etcd://alice7:{SECRET}@h:99999"),
            "etcd://***@h:99999",
        ),
        (
            format!("zk://alice7:{SECRET}@h:2181//x"),
            "zk://***@h:2181//x",
        ),
        (
            format!("POSTGRES://ids:{SECRET}@db:0/app"),
            "POSTGRES://***@db:0/app",
        ),
        (
            format!("etcd://alice7:{SECRET}/x@h:2379"),
            "etcd://***@h:2379",
        ),
        (
            format!("etcd://alice7:x/{SECRET}@h:2379"),
            "etcd://***@h:2379",
        ),
        (
            format!("postgres://ids:{SECRET}?x@db/app"),
            "postgres://***@db/app",
        ),
        (format!("http://alice7:{SECRET}@h:1"), "http://***@h:1"),
    ]
}

fn assert_refused(status: std::process::ExitStatus, stderr: &str, shown: &str, way: &str) {
    assert_eq!(status.code(), Some(2), "{way}: {stderr}");
    assert!(
        stderr.contains(&format!("coordinator URL \"{shown}\" is invalid")),
        "{way}: {stderr}"
    );
    assert!(
        !stderr.contains(SECRET),
        "{way}: the password shows in {stderr}"
    );
    assert!(
        !stderr.contains("alice7"),
        "{way}: the user shows in {stderr}"
    );
}

/// Each malformed URL, by flag, environment and file: exit 2, the URL
/// shown with its user part masked, the password nowhere.
#[test]
fn malformed_urls_never_show_their_password() {
    let home = temp_dir("secrets");
    let file = home.path().join("snowmint.toml");
    for (url, shown) in malformed() {
        let (status, _, stderr) = run_to_end(BINARY, home.path(), &["--coordinator", &url], &[]);
        assert_refused(status, &stderr, shown, "--coordinator");
        let (status, _, stderr) =
            run_to_end(BINARY, home.path(), &[], &[("SNOWMINT_COORDINATOR", &url)]);
        assert_refused(status, &stderr, shown, "SNOWMINT_COORDINATOR");
        std::fs::write(&file, format!("coordinator = {url:?}\n")).unwrap();
        let (status, _, stderr) = run_to_end(
            BINARY,
            home.path(),
            &["--config", file.to_str().unwrap()],
            &[],
        );
        assert_refused(status, &stderr, shown, "the file");
    }
}

/// A TOML file that is not valid, on a line that holds a password: the
/// message gives the line and column, not the line.
#[test]
fn toml_errors_quote_no_line() {
    let home = temp_dir("secrets-toml");
    let file = home.path().join("snowmint.toml");
    std::fs::write(
        &file,
        format!("listen = \"127.0.0.1:0\"\ncoordinator = \"etcd://ids:{SECRET}@h:2379\n"),
    )
    .unwrap();
    let (status, _, stderr) = run_to_end(
        BINARY,
        home.path(),
        &["--config", file.to_str().unwrap()],
        &[],
    );
    assert_eq!(status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("not valid TOML at line 2, column "),
        "{stderr}"
    );
    assert!(!stderr.contains(SECRET), "{stderr}");
}

/// `serve --help` shows no value from the environment, passwords least.
#[test]
fn help_shows_no_password() {
    let home = temp_dir("secrets-help");
    let url = format!("etcd://alice7:{SECRET}@127.0.0.1:2379");
    let output = command(
        BINARY,
        home.path(),
        &["--help"],
        &[
            ("SNOWMINT_COORDINATOR", &url),
            ("SNOWMINT_COORDINATOR_PASSWORD", SECRET),
        ],
    )
    .output()
    .unwrap();
    let help = String::from_utf8_lossy(&output.stdout);
    assert!(output.status.success());
    assert!(help.contains("--coordinator-password-file"), "{help}");
    assert!(help.contains("SNOWMINT_COORDINATOR_PASSWORD"), "{help}");
    assert!(!help.contains(SECRET), "{help}");
}

/// A password in a `--coordinator` URL works, but is readable by every
/// local user: the node warns, naming the ways that are not, and shows the
/// password nowhere. The same URL from the environment draws no warning.
#[test]
fn a_password_on_the_command_line_draws_a_warning() {
    let home = temp_dir("secrets-cmdline");
    let port = snowmint_test_support::net::free_port();
    let url = format!("postgres://ids:{SECRET}@127.0.0.1:{port}/app");
    let state = home.path().join("state");
    let args = ["--state-dir", state.to_str().unwrap(), "--log", "trace"];
    let mut with_flag = vec!["--coordinator", url.as_str()];
    with_flag.extend_from_slice(&args);
    let service = Service::start(BINARY, home.path(), &with_flag, &[]);
    let log = service.log();
    assert!(
        log.contains("the --coordinator URL holds a password, which every local user can read"),
        "{log}"
    );
    assert!(
        log.contains("SNOWMINT_COORDINATOR_PASSWORD or --coordinator-password-file, PGPASSWORD"),
        "{log}"
    );
    for target in ["/v1/node", "/metrics", "/readyz"] {
        let body = service.connect().get(target).unwrap().body;
        assert!(!body.contains(SECRET), "{target}: {body}");
    }
    let (_, log) = service.terminate();
    assert!(!log.contains(SECRET), "{log}");

    let service = Service::start(
        BINARY,
        home.path(),
        &args,
        &[("SNOWMINT_COORDINATOR", &url)],
    );
    let (_, log) = service.terminate();
    assert!(!log.contains("holds a password"), "{log}");
    assert!(!log.contains(SECRET), "{log}");
}
