//! Compiles the gRPC contract, `proto/snowmint/v1/snowmint.proto`, into the
//! client's message types and stub. `protoc` comes from PROTOC, which
//! .cargo/config.toml points at scripts/protoc.

use std::path::PathBuf;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let root = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR")?).join("../../proto");
    let proto = root.join("snowmint/v1/snowmint.proto");
    println!("cargo:rerun-if-changed={}", proto.display());
    tonic_prost_build::configure()
        .build_client(true)
        .build_server(false)
        .compile_protos(&[proto], &[root])?;
    Ok(())
}
