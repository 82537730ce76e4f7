//! The configuration of `snowmint serve`: any TOML file, with any flags
//! layered over it, is a clean error or a configuration that holds
//! together (its node lies in its layout, its step fits its start wait)
//! and whose node can be set up; never a panic.

use std::net::SocketAddr;
use std::path::Path;

use arbitrary::{Arbitrary, Unstructured};
use snowmint_server::config::{Config, Identity, Layer, Setting};

/// Reads `data` as libfuzzer-sys reads the target's typed input, and
/// [`check`]s it; bytes that make no such input are skipped, as libFuzzer
/// skips them.
pub fn run(data: &[u8]) {
    if let Ok(input) = <(&str, Vec<(u8, String)>)>::arbitrary_take_rest(Unstructured::new(data)) {
        check(input);
    }
}

/// The check of one input; panics when a property does not hold.
pub fn check(input: (&str, Vec<(u8, String)>)) {
    let (toml, flag_values) = input;
    let path = Path::new("/etc/snowmint/fuzz.toml");
    let file = match Layer::from_toml(path, toml) {
        Ok(file) => file,
        Err(error) => {
            assert!(
                error
                    .to_string()
                    .starts_with("config file /etc/snowmint/fuzz.toml: ")
            );
            return;
        }
    };
    let mut flags = Layer::flags();
    for (which, value) in flag_values {
        flags.set(Setting::ALL[which as usize % Setting::ALL.len()], value);
    }
    let env = |name: &str| (name == "HOME").then(|| "/home/fuzz".to_owned());
    let config = match Config::resolve(&[flags, file], env) {
        Ok(config) => config,
        Err(error) => {
            assert!(!error.to_string().is_empty());
            return;
        }
    };
    assert!(config.mark_step <= config.mark_wait_max);
    assert!(!config.limits.request_timeout.is_zero());
    assert!(config.clock_offset_ms.unsigned_abs() <= 366 * 86_400_000);
    assert!(config.layout.last_instant_ms() >= config.layout.epoch_ms());
    match &config.identity {
        Identity::Static(node) | Identity::StaticSlots { node, .. } => {
            assert!(config.layout.slot_of(*node).is_ok());
            // A node that validates can be set up.
            snowmint_server::slot_source(&config).expect("the configured node is usable");
        }
        Identity::Hostname(Some(_)) => {
            // The hostname may have no ordinal: a clean error then.
            let _ = snowmint_server::slot_source(&config);
        }
        Identity::Hostname(None) => {}
        Identity::Coordinator { config: claims, .. } => {
            assert!(claims.slots().first() <= claims.slots().last());
            assert!(claims.slots().last() < config.layout.node_count());
            assert!(!claims.fleet().is_empty() && claims.fleet().len() <= 64);
        }
    }
    let line = snowmint_server::startup_line(&config, SocketAddr::from(([127, 0, 0, 1], 0)));
    assert!(line.starts_with("snowmint serve "));
}
