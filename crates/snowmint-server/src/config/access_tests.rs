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

/// A reader of the fleet (`snowmint whois`) reads the coordinator's
/// settings as a node does: the same access from the same layers, and,
/// for each mistake, the very message a node's start stops with.
#[test]
fn a_reader_of_the_fleet_reads_them_as_a_node_does() {
    let dir = temp_dir("reader");
    let private = password_file(dir.path(), 0o600);
    let open = password_file(dir.path(), 0o644);
    let not_pem = dir.path().join("ca.pem");
    std::fs::write(&not_pem, "not a certificate\n").unwrap();
    let not_pem = not_pem.to_str().unwrap();
    let etcd = (Setting::Coordinator, "etcd://ids@127.0.0.1:2379");
    let unreadable = format!("etcd://ids:{SECRET}@h");
    let in_url = format!("etcd://ids:{SECRET}@127.0.0.1:2379");
    let reader = |layers: &[Layer]| FleetAccess::resolve(layers);

    let both = [
        flags(&[etcd, (Setting::Fleet, "ids")]),
        env(&[("SNOWMINT_COORDINATOR_PASSWORD", SECRET)]),
    ];
    let read = reader(&both).unwrap();
    let node = resolve(&both).unwrap();
    let Identity::Coordinator { url, config } = &node.identity else {
        panic!("{:?}", node.identity);
    };
    assert_eq!((&read.url, read.fleet.as_str()), (url, "ids"));
    assert_eq!(&read.access, config.access());
    assert!(!format!("{read:?}").contains(SECRET));
    assert_eq!(read.password_on_command_line(), None);

    for layers in [
        vec![flags(&[etcd, (Setting::CoordinatorPasswordFile, &open)])],
        vec![
            flags(&[etcd, (Setting::CoordinatorPasswordFile, &private)]),
            env(&[("SNOWMINT_COORDINATOR_PASSWORD", SECRET)]),
        ],
        vec![flags(&[etcd])],
        vec![flags(&[
            (Setting::Coordinator, "etcd://127.0.0.1:2379"),
            (Setting::CoordinatorCert, "/c.pem"),
        ])],
        vec![
            flags(&[(Setting::Coordinator, "etcd://127.0.0.1:2379")]),
            env(&[("SNOWMINT_COORDINATOR_CA", not_pem)]),
        ],
        vec![flags(&[
            (Setting::Coordinator, "postgres://ids@db/app"),
            (Setting::CoordinatorCa, "/ca.pem"),
        ])],
        vec![flags(&[etcd, (Setting::Fleet, "a/b")])],
        vec![flags(&[(Setting::Coordinator, unreadable.as_str())])],
    ] {
        let as_reader = reader(&layers).unwrap_err().to_string();
        assert_eq!(as_reader, error(&layers), "{layers:?}");
        assert!(!as_reader.contains(SECRET), "{as_reader}");
    }

    // World read says how a node creates its znodes: a reader, which
    // creates none, does not read it (a reader run with a node's
    // environment is not refused for it).
    let world = [flags(&[
        (Setting::Coordinator, "zk://127.0.0.1:2181"),
        (Setting::CoordinatorWorldRead, "true"),
    ])];
    assert!(!reader(&world).unwrap().access.world_read());

    let err = reader(&[flags(&[(Setting::Fleet, "ids")])])
        .unwrap_err()
        .to_string();
    assert_eq!(
        err,
        "no coordinator is given: --coordinator URL (or SNOWMINT_COORDINATOR) names the fleet's"
    );

    // A password in the URL, as a flag: the node's warning; from the
    // environment: none.
    let read = reader(&[flags(&[(Setting::Coordinator, in_url.as_str())])]).unwrap();
    let warning = read.password_on_command_line().unwrap();
    assert!(
        warning.starts_with("the --coordinator URL holds a password"),
        "{warning}"
    );
    assert!(!warning.contains(SECRET), "{warning}");
    let read = reader(&[env(&[("SNOWMINT_COORDINATOR", in_url.as_str())])]).unwrap();
    assert_eq!(read.password_on_command_line(), None);
}

/// A layer's `Debug` shows no password: not the environment's, not one
/// in a coordinator URL.
#[test]
fn a_layer_shows_no_password() {
    let url = format!("etcd://ids:{SECRET}@h:1");
    let layers = [
        flags(&[(Setting::Coordinator, url.as_str())]),
        env(&[
            ("SNOWMINT_COORDINATOR_PASSWORD", SECRET),
            ("SNOWMINT_FLEET", "ids"),
        ]),
    ];
    let shown = format!("{layers:?}");
    assert!(!shown.contains(SECRET), "{shown}");
    assert!(shown.contains("etcd://***@h:1"), "{shown}");
    assert!(shown.contains("\"ids\""), "{shown}");
}
