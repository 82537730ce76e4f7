//! The coordinator's TLS files and credentials as settings: where they
//! may come from, what goes with what, and that no message shows a
//! password.

use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use snowmint_test_support::temp::temp_dir;

use super::*;

const SECRET: &str = "Pw-never-shown";

fn flags(pairs: &[(Setting, &str)]) -> Layer {
    let mut layer = Layer::flags();
    for (setting, value) in pairs {
        layer.set(*setting, *value);
    }
    layer
}

fn resolve(layers: &[Layer]) -> Result<Config, ConfigError> {
    Config::resolve(layers, |_| None)
}

fn env(pairs: &[(&str, &str)]) -> Layer {
    let pairs: Vec<(String, String)> = pairs
        .iter()
        .map(|(n, v)| ((*n).to_owned(), (*v).to_owned()))
        .collect();
    Layer::from_env(move |name| {
        pairs
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.clone())
    })
}

fn error(layers: &[Layer]) -> String {
    let err = resolve(layers).unwrap_err().to_string();
    assert!(!err.contains(SECRET), "the password shows in {err}");
    err
}

fn password_file(dir: &Path, mode: u32) -> String {
    let path = dir.join(format!("password-{mode:o}"));
    std::fs::write(&path, format!("{SECRET}\n")).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(mode)).unwrap();
    path.display().to_string()
}

/// The password of the URL's user from a file only its owner may read, or
/// from the environment; given twice, or with no user, it is refused.
#[test]
fn passwords_come_from_a_private_file_or_the_environment() {
    let dir = temp_dir("password");
    let private = password_file(dir.path(), 0o600);
    let coordinator = (Setting::Coordinator, "etcd://ids@127.0.0.1:2379");
    let config = resolve(&[flags(&[
        coordinator,
        (Setting::CoordinatorPasswordFile, &private),
    ])])
    .unwrap();
    let Identity::Coordinator {
        url,
        config: claims,
    } = &config.identity
    else {
        panic!("{:?}", config.identity);
    };
    let credentials = claims.access().credentials(url).unwrap().unwrap();
    assert_eq!(credentials.password.expose(), SECRET);
    assert!(!format!("{config:?}").contains(SECRET));

    let from_env = env(&[("SNOWMINT_COORDINATOR_PASSWORD", SECRET)]);
    let config = resolve(&[flags(&[coordinator]), from_env.clone()]).unwrap();
    assert!(!format!("{config:?}").contains(SECRET));

    let open = password_file(dir.path(), 0o644);
    let err = error(&[flags(&[
        coordinator,
        (Setting::CoordinatorPasswordFile, &open),
    ])]);
    assert!(
        err.contains("has group or world access (mode 0644)"),
        "{err}"
    );
    assert!(err.ends_with("(from --coordinator-password-file)"), "{err}");

    let err = error(&[
        flags(&[coordinator, (Setting::CoordinatorPasswordFile, &private)]),
        from_env.clone(),
    ]);
    assert!(
        err.contains(
            "given twice, by --coordinator-password-file and by SNOWMINT_COORDINATOR_PASSWORD"
        ),
        "{err}"
    );
    let err = error(&[
        flags(&[(Setting::Coordinator, "etcd://ids:other@127.0.0.1:2379")]),
        from_env.clone(),
    ]);
    assert!(
        err.contains("given twice, in the URL and apart from it"),
        "{err}"
    );
    assert!(
        err.contains("--coordinator and SNOWMINT_COORDINATOR_PASSWORD"),
        "{err}"
    );
    let err = error(&[
        flags(&[(Setting::Coordinator, "zk://127.0.0.1:2181")]),
        from_env,
    ]);
    assert!(err.contains("names no user"), "{err}");
    let err = error(&[flags(&[coordinator])]);
    assert!(
        err.contains("names the user \"ids\" but no password"),
        "{err}"
    );
}

/// A password cannot be written into the TOML file (a password file can
/// be named there); a TOML error never quotes the line it stopped at.
#[test]
fn the_file_holds_no_password_and_its_errors_quote_no_line() {
    let err = Layer::from_toml(
        Path::new("/etc/snowmint.toml"),
        &format!("coordinator_password = \"{SECRET}\"\n"),
    )
    .unwrap_err()
    .to_string();
    assert!(
        err.contains("unknown key \"coordinator_password\""),
        "{err}"
    );
    assert!(!err.contains(SECRET), "{err}");
    assert!(err.contains("coordinator_password_file"), "{err}");

    for text in [
        format!("listen = \"127.0.0.1:1\"\ncoordinator = \"etcd://ids:{SECRET}@127.0.0.1:2379\n"),
        format!("coordinator = 'etcd://ids:{SECRET}@h:1' x\n"),
        format!("coordinator = \"etcd://ids:{SECRET}@h:1\"\ncoordinator = \"x\"\n"),
    ] {
        let err = Layer::from_toml(Path::new("/etc/snowmint.toml"), &text)
            .unwrap_err()
            .to_string();
        assert!(!err.contains(SECRET), "{err}");
        assert!(
            err.starts_with("config file /etc/snowmint.toml: not valid TOML at line "),
            "{err}"
        );
    }
}

/// TLS is on with a CA; a certificate goes with its key and a CA; each
/// file is checked at start, naming the setting that gave it.
#[test]
fn tls_files_go_together_and_are_checked_at_start() {
    let coordinator = (Setting::Coordinator, "etcd://127.0.0.1:2379");
    let err = error(&[flags(&[coordinator, (Setting::CoordinatorCert, "/c.pem")])]);
    assert!(
        err.starts_with("--coordinator-cert needs --coordinator-ca"),
        "{err}"
    );
    let err = error(&[flags(&[
        coordinator,
        (Setting::CoordinatorCa, "/ca.pem"),
        (Setting::CoordinatorKey, "/k.pem"),
    ])]);
    assert!(
        err.starts_with("--coordinator-key needs --coordinator-cert too"),
        "{err}"
    );
    let err = error(&[flags(&[
        coordinator,
        (Setting::CoordinatorCa, "/nonexistent/ca.pem"),
    ])]);
    assert_eq!(
        err,
        "cannot read the coordinator CA file /nonexistent/ca.pem: no such file or directory (from --coordinator-ca)"
    );
    let dir = temp_dir("tls-files");
    let not_pem = dir.path().join("ca.pem");
    std::fs::write(&not_pem, "not a certificate\n").unwrap();
    let err = error(&[
        flags(&[coordinator]),
        env(&[("SNOWMINT_COORDINATOR_CA", not_pem.to_str().unwrap())]),
    ]);
    assert!(err.contains("holds no certificate"), "{err}");
    assert!(err.ends_with("(from SNOWMINT_COORDINATOR_CA)"), "{err}");
    let err = error(&[flags(&[
        (Setting::Coordinator, "postgres://ids@db/app"),
        (Setting::CoordinatorCa, not_pem.to_str().unwrap()),
    ])]);
    assert!(err.contains("sslrootcert"), "{err}");
}

/// The coordinator's access settings without a coordinator, and world
/// read outside ZooKeeper with credentials, are mistakes.
#[test]
fn access_settings_need_a_coordinator_they_fit() {
    let err = error(&[flags(&[(Setting::CoordinatorCa, "/ca.pem")])]);
    assert_eq!(err, "--coordinator-ca only applies with --coordinator");
    let err = error(&[env(&[("SNOWMINT_COORDINATOR_PASSWORD", SECRET)])]);
    assert_eq!(
        err,
        "SNOWMINT_COORDINATOR_PASSWORD only applies with --coordinator"
    );
    let world = (Setting::CoordinatorWorldRead, "true");
    let err = error(&[flags(&[
        (Setting::Coordinator, "etcd://127.0.0.1:2379"),
        world,
    ])]);
    assert!(err.contains("ZooKeeper's znodes only"), "{err}");
    let err = error(&[flags(&[
        (Setting::Coordinator, "zk://127.0.0.1:2181"),
        world,
    ])]);
    assert!(
        err.contains("only with a ZooKeeper user and password"),
        "{err}"
    );
    let err = error(&[flags(&[
        (Setting::Coordinator, "zk://u:p@127.0.0.1:2181"),
        (Setting::CoordinatorWorldRead, "maybe"),
    ])]);
    assert_eq!(
        err,
        "coordinator_world_read \"maybe\" is not a boolean (expected true or false) (from --coordinator-world-read)"
    );
    assert!(
        resolve(&[flags(&[
            (Setting::Coordinator, "zk://u:p@127.0.0.1:2181"),
            world
        ])])
        .is_ok()
    );
}
