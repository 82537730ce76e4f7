//! The code generated from `proto/snowmint/v1/snowmint.proto` is checked
//! in: the server's types, service trait and descriptor set
//! (`src/grpc/generated/`) and the client's types and stub
//! (`snowmint-client`'s `src/generated/`), so that building needs no
//! `protoc`. This generates them again, with the `protoc` of the
//! protoc-bin-vendored crate, and compares; run with
//! `SNOWMINT_REGENERATE=1` after changing the `.proto`, to rewrite them.

use std::path::{Path, PathBuf};

/// Generates the code of `snowmint.proto` for a server or a client into a
/// new directory, with the descriptor set for a server.
fn generate(server: bool) -> tempfile::TempDir {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../proto");
    let out = tempfile::tempdir().unwrap();
    let mut config = prost_build::Config::new();
    config.protoc_executable(protoc_bin_vendored::protoc_bin_path().expect("a vendored protoc"));
    let mut builder = tonic_prost_build::configure()
        .build_client(!server)
        .build_server(server)
        .build_transport(false)
        .out_dir(out.path());
    if server {
        builder = builder.file_descriptor_set_path(out.path().join("snowmint_descriptor.bin"));
    }
    builder
        .compile_with_config(config, &[root.join("snowmint/v1/snowmint.proto")], &[root])
        .expect("snowmint.proto compiles");
    out
}

/// Compares (or, with SNOWMINT_REGENERATE, rewrites) `checked_in` with
/// `generated`.
fn check(generated: &Path, checked_in: PathBuf) {
    let fresh = std::fs::read(generated).unwrap();
    if std::env::var_os("SNOWMINT_REGENERATE").is_some() {
        std::fs::write(&checked_in, fresh).unwrap();
        return;
    }
    let current = std::fs::read(&checked_in).unwrap();
    assert!(
        current == fresh,
        "{} is not what proto/snowmint/v1/snowmint.proto generates: run `SNOWMINT_REGENERATE=1 cargo test -p snowmint-server --test generated` and commit the result",
        checked_in.display()
    );
}

#[test]
fn the_checked_in_grpc_code_is_generated_from_snowmint_proto() {
    let crates = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let server = generate(true);
    for file in ["snowmint.v1.rs", "snowmint_descriptor.bin"] {
        check(
            &server.path().join(file),
            crates.join("snowmint-server/src/grpc/generated").join(file),
        );
    }
    let client = generate(false);
    check(
        &client.path().join("snowmint.v1.rs"),
        crates.join("snowmint-client/src/generated/snowmint.v1.rs"),
    );
}
