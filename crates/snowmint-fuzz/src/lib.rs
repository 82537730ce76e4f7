//! The checks of snowmint's fuzz targets, as plain functions. libFuzzer
//! drives them from `fuzz/` (`scripts/fuzz`, with cargo-fuzz); `cargo test`
//! replays the committed seeds (`fuzz/seeds/<target>.hex`) and every input
//! that once failed (`fuzz/regressions/<target>/`) through them, so that
//! each test run covers what fuzzing found without a fuzzing toolchain.
//!
//! # Layout
//!
//! One module per target, each with `run(data: &[u8])`: the check of one
//! input as libFuzzer hands it over. A target whose input has several
//! parts also has `check`, which takes them already read.
//!
//! - [`id_text`]: IDs in every text encoding.
//! - [`inspect_text`]: any text through the inspector (`snowmint inspect`).
//! - [`time_text`]: times (Unix ms, RFC 3339).
//! - [`layout_spec`]: layout specifications (`T/D/M/S@EPOCH`).
//! - [`http_query`]: any request through the HTTP API's real router.
//! - [`config_file`]: any configuration file, with flags over it.
//! - [`memcached`]: any bytes a memcached client sends, through the real
//!   connection handler.
//!
//! A failure found by fuzzing becomes a regression: copy the input from
//! `fuzz/artifacts/<target>/` to `fuzz/regressions/<target>/`, fix the
//! code, and `cargo test -p snowmint-fuzz` keeps it fixed.

pub mod config_file;
pub mod http_query;
pub mod id_text;
pub mod inspect_text;
pub mod layout_spec;
pub mod memcached;
pub mod time_text;

#[cfg(test)]
mod replay;

/// A target's check of one raw input.
pub type Check = fn(&[u8]);

/// Every target: its name (its binary in `fuzz/`, its directories of
/// inputs) and its check.
pub const TARGETS: [(&str, Check); 7] = [
    ("config_file", config_file::run),
    ("http_query", http_query::run),
    ("id_text", id_text::run),
    ("inspect_text", inspect_text::run),
    ("layout_spec", layout_spec::run),
    ("memcached", memcached::run),
    ("time_text", time_text::run),
];

/// The state of the node `config` describes, started as `snowmint serve`
/// starts it (its slot source, an issuer over it), for the targets that
/// drive the service without a socket.
pub(crate) async fn node_state(
    config: &snowmint_server::config::Config,
) -> snowmint_server::AppState {
    std::fs::create_dir_all(&config.state_dir).expect("the state directory can be made");
    let source = snowmint_server::slot_source(config).expect("the configured node is usable");
    let options = snowmint_server::IssuerOptions {
        layout: config.layout,
        clock_policy: config.clock_policy,
        clock: snowmint_server::clock(config),
        state_dir: config.state_dir.clone(),
        mark_step: config.mark_step,
    };
    let issuer = snowmint_server::Issuer::start(source, options)
        .await
        .expect("the node starts");
    snowmint_server::AppState::with_limits(issuer, config.limits)
}
