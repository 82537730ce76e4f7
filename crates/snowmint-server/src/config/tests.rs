//! Resolution of layered settings: precedence, messages, identities.

use std::path::{Path, PathBuf};
use std::time::Duration;

use snowmint::{ClockPolicy, Layout, Node};

use super::*;
use crate::listener::Listener;

fn flags(pairs: &[(Setting, &str)]) -> Layer {
    let mut layer = Layer::flags();
    for (setting, value) in pairs {
        layer.set(*setting, *value);
    }
    layer
}

fn env(pairs: &'static [(&'static str, &'static str)]) -> impl Fn(&str) -> Option<String> {
    move |name| {
        pairs
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, v)| (*v).to_owned())
    }
}

fn file(text: &str) -> Layer {
    Layer::from_toml(Path::new("/etc/snowmint.toml"), text).unwrap()
}

#[test]
fn defaults() {
    let config = Config::resolve(&[], env(&[("HOME", "/home/ana")])).unwrap();
    assert_eq!(config.listeners.http().to_string(), "127.0.0.1:8080");
    assert_eq!(config.identity, Identity::Static(Node::default()));
    assert_eq!(
        config.state_dir,
        PathBuf::from("/home/ana/.local/state/snowmint")
    );
    assert_eq!(config.layout, Layout::TWITTER);
    assert_eq!(config.clock_policy, ClockPolicy::Refuse);
    assert_eq!(config.mark_step, Duration::from_secs(1));
    assert_eq!(config.origin_note(Setting::Machine), "(default)");
}

#[test]
fn flags_beat_env_beat_file() {
    let f = file("machine = 3\ndatacenter = 9\nlisten = \"127.0.0.1:9000\"\n");
    let e = Layer::from_env(env(&[
        ("SNOWMINT_MACHINE", "4"),
        ("SNOWMINT_LISTEN", "127.0.0.1:9001"),
    ]));
    let all = [flags(&[(Setting::Machine, "5")]), e.clone(), f.clone()];
    let config = Config::resolve(&all, |_| None).unwrap();
    assert_eq!(config.node(), Some(Node::from_slot(293)));
    assert_eq!(config.listeners.http().port(), 9001);
    assert_eq!(config.origin_note(Setting::Machine), "(from --machine)");
    assert_eq!(
        config.origin_note(Setting::Datacenter),
        "(from datacenter in /etc/snowmint.toml)"
    );

    let config = Config::resolve(&[Layer::flags(), e, f.clone()], |_| None).unwrap();
    assert_eq!(config.layout.pair_of(config.node().unwrap()).1, 4);
    let config = Config::resolve(&[Layer::flags(), f], |_| None).unwrap();
    assert_eq!(config.layout.pair_of(config.node().unwrap()).1, 3);
    assert_eq!(config.listeners.http().port(), 9000);
}

#[test]
fn bad_values_name_the_value_the_range_and_the_origin() {
    let check = |layer: Layer, expected: &str| {
        let err = Config::resolve(&[layer], |_| None).unwrap_err();
        assert_eq!(err.to_string(), expected);
    };
    check(
        flags(&[(Setting::Datacenter, "32")]),
        "datacenter 32 is out of range (0..=31) (from --datacenter)",
    );
    check(
        Layer::from_env(env(&[("SNOWMINT_MACHINE", "-1")])),
        "machine -1 is out of range (0..=31) (from SNOWMINT_MACHINE)",
    );
    check(
        file("machine = \"seven\""),
        "machine \"seven\" is not a number (expected an integer in 0..=31) (from machine in /etc/snowmint.toml)",
    );
    check(
        flags(&[(Setting::ClockPolicy, "sometimes")]),
        "unknown clock policy \"sometimes\" (expected refuse, wait or borrow) (from --clock-policy)",
    );
    check(
        flags(&[(Setting::Listen, "localhost")]),
        "listen \"localhost\" is not an address (expected IP:PORT such as 127.0.0.1:8080, or localhost:PORT) (from --listen)",
    );
    check(
        flags(&[(Setting::Layout, "twitter"), (Setting::Epoch, "-5")]),
        "invalid layout: epoch -5 is before 1970-01-01 (0..) (from --epoch)",
    );
}

#[test]
fn machine_range_follows_the_layout() {
    let layer = flags(&[(Setting::Layout, "41/0/10/12"), (Setting::Machine, "1000")]);
    let config = Config::resolve(&[layer], |_| None).unwrap();
    assert_eq!(config.node().unwrap().slot(), 1000);
}

#[test]
fn identity_sources_conflict() {
    let err = Config::resolve(
        &[
            flags(&[(Setting::MachineFromHostname, "true")]),
            file("datacenter = 1"),
        ],
        |_| None,
    )
    .unwrap_err();
    assert_eq!(
        err.to_string(),
        "--machine-from-hostname conflicts with datacenter in /etc/snowmint.toml: a node takes its identity from one place"
    );
    let err = Config::resolve(&[flags(&[(Setting::Slots, "0-9")])], |_| None).unwrap_err();
    assert_eq!(err.to_string(), "--slots only applies with --coordinator");
    let err = Config::resolve(&[flags(&[(Setting::Hostname, "ids-3")])], |_| None).unwrap_err();
    assert_eq!(
        err.to_string(),
        "--hostname only applies with --machine-from-hostname"
    );
}

#[test]
fn hostname_and_coordinator_identities() {
    let layer = flags(&[
        (Setting::MachineFromHostname, "yes"),
        (Setting::Hostname, "ids-12"),
    ]);
    let config = Config::resolve(&[layer], |_| None).unwrap();
    assert_eq!(config.identity, Identity::Hostname(Some("ids-12".into())));

    let layer = flags(&[
        (Setting::Coordinator, "etcd://127.0.0.1:2379,127.0.0.1:2380"),
        (Setting::Slots, "3-9"),
        (Setting::ClaimTtl, "5s"),
    ]);
    let config = Config::resolve(&[layer], |_| None).unwrap();
    let Identity::Coordinator { url, config: c } = config.identity else {
        panic!("not coordinated")
    };
    assert_eq!(url.to_string(), "etcd://127.0.0.1:2379,127.0.0.1:2380");
    assert_eq!((c.slots().first(), c.slots().last()), (3, 9));
    assert_eq!(c.ttl(), Duration::from_secs(5));
    assert_eq!(c.fleet(), "default");

    for (value, why) in [
        (
            "http://x:1",
            "coordinator URL \"http://x:1\" is invalid: scheme \"http\" is not etcd, zk or postgres",
        ),
        ("etcd://x", "endpoint \"x\" has no port"),
        ("zk://x:99999/app", "port 99999 is out of range (1..=65535)"),
    ] {
        let err = Config::resolve(&[flags(&[(Setting::Coordinator, value)])], |_| None)
            .unwrap_err()
            .to_string();
        assert!(err.contains(why), "{err}");
    }
    let err = Config::resolve(
        &[flags(&[
            (Setting::Coordinator, "zk://127.0.0.1:2181/app"),
            (Setting::Slots, "9-3"),
        ])],
        |_| None,
    )
    .unwrap_err();
    assert_eq!(
        err.to_string(),
        "slots \"9-3\" is invalid: the first slot 9 is after the last 3 (from --slots)"
    );

    let coordinated = |pairs: &[(Setting, &str)]| {
        let mut layer = flags(&[(Setting::Coordinator, "etcd://127.0.0.1:2379")]);
        for (setting, value) in pairs {
            layer.set(*setting, *value);
        }
        Config::resolve(&[layer], |_| None)
    };
    assert_eq!(
        coordinated(&[(Setting::ClaimTtl, "500ms")])
            .unwrap_err()
            .to_string(),
        "claim_ttl 500ms is out of range (1s..=1h) (from --claim-ttl)"
    );
    assert_eq!(
        coordinated(&[(Setting::Slots, "0-1024")])
            .unwrap_err()
            .to_string(),
        "slots \"0-1024\" is invalid: slot 1024 is out of range (0..=1023) (from --slots)"
    );
    assert!(coordinated(&[(Setting::ClaimTtl, "1s")]).is_ok());
    assert!(coordinated(&[(Setting::ClaimTtl, "2h")]).is_err());
    assert!(
        coordinated(&[(Setting::Fleet, "..")])
            .unwrap_err()
            .to_string()
            .starts_with("fleet name \"..\" is invalid")
    );
    let long = "f".repeat(65);
    assert!(
        coordinated(&[(Setting::Fleet, &long)])
            .unwrap_err()
            .to_string()
            .contains("it is 65 characters long")
    );
}

#[test]
fn durations_have_ranges() {
    let check = |setting: Setting, text: &str, expected: &str| {
        let err = Config::resolve(&[flags(&[(setting, text)])], |_| None).unwrap_err();
        assert_eq!(err.to_string(), expected);
    };
    check(
        Setting::ClockMax,
        "2",
        "clock_max \"2\" is not a duration (expected a number and a unit: 500ms, 2s, 1.5s, 1m, 1h) (from --clock-max)",
    );
    check(
        Setting::ClockMax,
        "25h",
        "clock_max 25h is out of range (0..=24h) (from --clock-max)",
    );
    check(
        Setting::MarkStep,
        "5ms",
        "mark_step 5ms is out of range (10ms..=24h) (from --mark-step)",
    );
    check(
        Setting::RequestTimeout,
        "0",
        "request_timeout 0 is out of range (1ms..=24h) (from --request-timeout)",
    );
    let config = Config::resolve(
        &[flags(&[
            (Setting::ClockPolicy, "BORROW"),
            (Setting::ClockMax, "1.5s"),
        ])],
        |_| None,
    )
    .unwrap();
    assert_eq!(
        config.clock_policy,
        ClockPolicy::Borrow {
            max_ahead: Duration::from_millis(1500)
        }
    );
}

#[test]
fn the_step_must_fit_the_start_wait() {
    let err = Config::resolve(&[flags(&[(Setting::MarkStep, "3s")])], |_| None).unwrap_err();
    assert!(err.to_string().contains("would refuse to start"), "{err}");
}

#[test]
fn file_errors_name_the_file() {
    let err = Layer::from_toml(Path::new("/x.toml"), "machin = 3").unwrap_err();
    assert!(
        err.to_string()
            .starts_with("config file /x.toml: unknown key \"machin\""),
        "{err}"
    );
    let err = Layer::from_toml(Path::new("/x.toml"), "machine = [1]").unwrap_err();
    assert_eq!(
        err.to_string(),
        "config file /x.toml: machine must be a string, an integer or a boolean, not array"
    );
    assert!(Layer::from_toml(Path::new("/x.toml"), "machine = ").is_err());
    let err = Layer::from_file(Path::new("/nonexistent/snowmint.toml")).unwrap_err();
    assert!(
        err.to_string()
            .starts_with("config file /nonexistent/snowmint.toml: ")
    );
}

#[test]
fn empty_env_values_count_as_unset() {
    let e = Layer::from_env(env(&[("SNOWMINT_MACHINE", "")]));
    let config = Config::resolve(&[e], |_| None).unwrap();
    assert_eq!(config.origin(Setting::Machine), &Origin::Default);
}

#[test]
fn grpc_is_off_unless_an_address_is_given_and_each_place_names_it() {
    let config = Config::resolve(&[], |_| None).unwrap();
    assert_eq!(config.listeners.address(Listener::Grpc), None);
    let from_file = file("grpc_listen = \"127.0.0.1:9090\"\n");
    let config = Config::resolve(std::slice::from_ref(&from_file), |_| None).unwrap();
    assert_eq!(
        config.listeners.address(Listener::Grpc),
        Some("127.0.0.1:9090".parse().unwrap())
    );
    let from_env = Layer::from_env(env(&[("SNOWMINT_GRPC_LISTEN", "127.0.0.1:9091")]));
    let config = Config::resolve(&[from_env, from_file.clone()], |_| None).unwrap();
    assert_eq!(
        config.listeners.address(Listener::Grpc).unwrap().port(),
        9091
    );
    let from_flag = flags(&[(Setting::GrpcListen, "127.0.0.1:9092")]);
    let config = Config::resolve(&[from_flag, from_file], |_| None).unwrap();
    assert_eq!(
        config.listeners.address(Listener::Grpc).unwrap().port(),
        9092
    );
    assert_eq!(
        config.origin_note(Setting::GrpcListen),
        "(from --grpc-listen)"
    );
    let bad = Config::resolve(&[flags(&[(Setting::GrpcListen, "9090")])], |_| None).unwrap_err();
    assert_eq!(
        bad.to_string(),
        "grpc_listen \"9090\" is not an address (expected IP:PORT such as 127.0.0.1:8080, or localhost:PORT) (from --grpc-listen)"
    );
}

/// `localhost:PORT` is loopback, on every listener; other names are
/// refused with the reason, and a port out of range names the value.
#[test]
fn localhost_is_loopback_and_other_names_are_refused() {
    let layer = flags(&[
        (Setting::Listen, "localhost:8090"),
        (Setting::GrpcListen, "LOCALHOST:0"),
        (Setting::MemcachedListen, "localhost:11211"),
    ]);
    let config = Config::resolve(&[layer], |_| None).unwrap();
    assert_eq!(config.listeners.http(), "127.0.0.1:8090".parse().unwrap());
    assert_eq!(
        config.listeners.address(Listener::Grpc),
        Some("127.0.0.1:0".parse().unwrap())
    );
    assert_eq!(
        config.listeners.address(Listener::Memcached),
        Some("127.0.0.1:11211".parse().unwrap())
    );
    let refused = |value: &str| {
        Config::resolve(&[flags(&[(Setting::Listen, value)])], |_| None)
            .unwrap_err()
            .to_string()
    };
    assert_eq!(
        refused("ids.internal:8080"),
        "listen \"ids.internal:8080\" is not an address (expected IP:PORT such as 127.0.0.1:8080, or localhost:PORT); host names other than localhost are not looked up, so that where a node listens cannot change with DNS (from --listen)"
    );
    assert_eq!(
        refused("localhost:99999"),
        "listen \"localhost:99999\" is not an address (expected IP:PORT such as 127.0.0.1:8080, or localhost:PORT) (from --listen)"
    );
}

/// memcached is off by default; its idle timeout has a default and a
/// range, named like every other duration.
#[test]
fn memcached_is_off_unless_an_address_is_given() {
    let config = Config::resolve(&[], |_| None).unwrap();
    assert_eq!(config.listeners.address(Listener::Memcached), None);
    assert_eq!(
        config.listeners.idle_timeout(Listener::Memcached).unwrap(),
        Duration::from_secs(600)
    );
    let from_file =
        file("memcached_listen = \"0.0.0.0:11211\"\nmemcached_idle_timeout = \"30s\"\n");
    let config = Config::resolve(&[from_file], |_| None).unwrap();
    assert_eq!(
        config.listeners.address(Listener::Memcached),
        Some("0.0.0.0:11211".parse().unwrap())
    );
    assert_eq!(
        config.listeners.idle_timeout(Listener::Memcached).unwrap(),
        Duration::from_secs(30)
    );
    let bad = Layer::from_env(env(&[("SNOWMINT_MEMCACHED_IDLE_TIMEOUT", "10ms")]));
    assert_eq!(
        Config::resolve(&[bad], |_| None).unwrap_err().to_string(),
        "memcached_idle_timeout 10ms is out of range (100ms..=24h) (from SNOWMINT_MEMCACHED_IDLE_TIMEOUT)"
    );
}

/// Each declared default is what applies when nothing gives a value: given
/// explicitly, as text, it resolves to the same configuration as not given
/// at all (so no code applies a default of its own).
#[test]
fn declared_defaults_are_the_defaults_applied() {
    let without_origins = |mut config: Config| {
        config.origins.clear();
        format!("{config:?}")
    };
    // The claim settings apply only with a coordinator, which is given
    // below them (in the file) for them.
    let coordinated = || file("coordinator = \"etcd://127.0.0.1:1\"");
    let mut checked = 0;
    for &setting in Setting::ALL {
        if let DefaultValue::Value(text) = setting.spec().default {
            let base = match setting {
                Setting::Fleet
                | Setting::ClaimTtl
                | Setting::CoordinatorWorldRead
                | Setting::MaxClockSkew
                | Setting::ClockCheckEvery
                | Setting::ClaimHistoryKeep
                | Setting::ClaimHistoryMaxAge => vec![coordinated()],
                // The scope applies only with a token file (read at the
                // start, not here).
                Setting::AuthScope => vec![file("auth_token_file = \"/run/tokens\"")],
                _ => vec![],
            };
            let none = without_origins(Config::resolve(&base, |_| None).unwrap());
            let mut layers = vec![flags(&[(setting, text)])];
            layers.extend(base);
            let given = Config::resolve(&layers, |_| None)
                .unwrap_or_else(|e| panic!("{} = {text:?}: {e}", setting.key()));
            assert_eq!(without_origins(given), none, "{} = {text:?}", setting.key());
            checked += 1;
        }
    }
    assert!(checked >= 12, "only {checked} defaults checked");
}

/// Every setting's names come from its key, and each key is its own.
#[test]
fn names_come_from_the_key() {
    assert_eq!(Setting::ClockMax.flag(), "--clock-max");
    assert_eq!(Setting::ClockMax.env(), "SNOWMINT_CLOCK_MAX");
    let keys: std::collections::BTreeSet<_> = Setting::ALL.iter().map(|s| s.key()).collect();
    assert_eq!(keys.len(), Setting::ALL.len(), "two settings share a key");
}

/// A coordinator setting the fleet's reader refuses is that reader's own
/// error, wrapped with where the value came from: programs match the
/// fleet's variant, people read its message and the origin.
#[test]
fn a_coordinator_setting_refused_carries_the_fleets_error() {
    let layer = flags(&[(Setting::Coordinator, "http://10.0.0.1:2379")]);
    let error = Config::resolve(&[layer], |_| None).unwrap_err();
    let ConfigError::Fleet { origin, source } = &error else {
        panic!("{error:?}");
    };
    assert_eq!(origin, "--coordinator");
    assert!(
        matches!(source, snowmint_fleet::ConfigError::Url { value, .. } if value == "http://10.0.0.1:2379"),
        "{source:?}"
    );
    assert_eq!(error.to_string(), format!("{source} (from --coordinator)"));
    let source = std::error::Error::source(&error).unwrap();
    assert!(
        source
            .downcast_ref::<snowmint_fleet::ConfigError>()
            .is_some()
    );

    let env = Layer::from_env(env(&[
        ("SNOWMINT_COORDINATOR", "etcd://10.0.0.1:2379"),
        ("SNOWMINT_FLEET", "a/b"),
    ]));
    let error = Config::resolve(&[env], |_| None).unwrap_err();
    assert!(
        matches!(
            &error,
            ConfigError::Fleet { origin, source: snowmint_fleet::ConfigError::Fleet { .. } }
                if origin == "SNOWMINT_FLEET"
        ),
        "{error:?}"
    );
}
