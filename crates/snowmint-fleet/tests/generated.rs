//! The etcd backend's code generated from `proto/etcd.proto` is checked
//! in (`src/etcd/api.rs`), so that building snowmint-fleet, and anything
//! that depends on it, needs no `protoc`. This generates it again, with
//! the `protoc` of the protoc-bin-vendored crate, and compares; run with
//! `SNOWMINT_REGENERATE=1` after changing the `.proto`, to rewrite it.

use std::path::Path;

#[test]
fn the_checked_in_etcd_api_is_generated_from_its_proto() {
    let crate_dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    let proto_dir = crate_dir.join("proto");
    let checked_in = crate_dir.join("src/etcd/api.rs");
    let out = tempfile::tempdir().unwrap();
    let mut config = prost_build::Config::new();
    config.protoc_executable(protoc_bin_vendored::protoc_bin_path().expect("a vendored protoc"));
    tonic_prost_build::configure()
        .build_client(true)
        .build_server(false)
        .build_transport(false)
        .out_dir(out.path())
        .compile_with_config(config, &[proto_dir.join("etcd.proto")], &[proto_dir])
        .expect("proto/etcd.proto compiles");
    let generated = std::fs::read_to_string(out.path().join("etcdserverpb.rs")).unwrap();
    if std::env::var_os("SNOWMINT_REGENERATE").is_some() {
        std::fs::write(&checked_in, &generated).unwrap();
        return;
    }
    let current = std::fs::read_to_string(&checked_in).unwrap();
    assert!(
        current == generated,
        "{} is not what proto/etcd.proto generates: run `SNOWMINT_REGENERATE=1 cargo test -p snowmint-fleet --features etcd --test generated` and commit the result",
        checked_in.display()
    );
}
