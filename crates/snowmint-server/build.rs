//! Compiles the gRPC contract, `proto/snowmint/v1/snowmint.proto`, into the
//! server's message types and service trait, and writes its descriptor set
//! for server reflection. `protoc` comes from PROTOC, which
//! .cargo/config.toml points at scripts/protoc.

use std::path::PathBuf;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let root = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR")?).join("../../proto");
    let proto = root.join("snowmint/v1/snowmint.proto");
    let out = PathBuf::from(std::env::var("OUT_DIR")?);
    println!("cargo:rerun-if-changed={}", proto.display());
    tonic_prost_build::configure()
        .build_client(false)
        .build_server(true)
        .file_descriptor_set_path(out.join("snowmint_descriptor.bin"))
        .compile_protos(&[proto], &[root])?;
    Ok(())
}
