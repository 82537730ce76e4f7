//! An application outside this workspace that depends on snowmint-fleet
//! with its etcd backend builds on a machine without `protoc`: nothing
//! this workspace's `.cargo/` could set reaches a dependent crate, so the
//! crate must need none. (The code generated from `proto/etcd.proto` is
//! checked in; see `tests/generated.rs`.)
//!
//! The application is made in a temporary directory and built with
//! `cargo build`, `PROTOC` unset and no `protoc` on PATH, into a target
//! directory kept under this workspace's `target/`, so that later runs
//! rebuild only what changed. It resolves its dependencies with this
//! workspace's lock file, offline when the registry cache has them.

use std::path::{Path, PathBuf};
use std::process::Command;

/// The application: an embedded issuer of a fleet on etcd.
const MAIN: &str = r#"
use std::time::Duration;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let issuer = snowmint_fleet::EmbeddedIssuer::builder()
        .coordinator("etcd://127.0.0.1:2379", "app")
        .claim_ttl(Duration::from_secs(10))
        .wait_for_claim(Duration::from_secs(1))
        .start_blocking()?;
    println!("{}", issuer.next_id()?);
    Ok(())
}
"#;

/// PATH as it is, but with every directory that holds a `protoc` replaced
/// by a directory of links to everything else in it.
fn path_without_protoc(shadow: &Path) -> String {
    let path = std::env::var_os("PATH").unwrap_or_default();
    let mut dirs = Vec::new();
    for (n, dir) in std::env::split_paths(&path).enumerate() {
        if !dir.join("protoc").exists() {
            dirs.push(dir);
            continue;
        }
        let copy = shadow.join(n.to_string());
        std::fs::create_dir_all(&copy).unwrap();
        for entry in std::fs::read_dir(&dir).unwrap().flatten() {
            if entry.file_name() != "protoc" {
                let _ = std::os::unix::fs::symlink(entry.path(), copy.join(entry.file_name()));
            }
        }
        dirs.push(copy);
    }
    std::env::join_paths(dirs)
        .unwrap()
        .into_string()
        .expect("PATH is UTF-8")
}

#[test]
fn an_application_outside_the_workspace_builds_without_protoc() {
    let fleet = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let workspace = fleet.join("../..").canonicalize().unwrap();
    let app = tempfile::tempdir().unwrap();
    std::fs::create_dir(app.path().join("src")).unwrap();
    std::fs::write(
        app.path().join("Cargo.toml"),
        format!(
            "[package]\nname = \"snowmint-outside-app\"\nversion = \"0.1.0\"\nedition = \"2024\"\npublish = false\n\n\
             [dependencies]\nsnowmint-fleet = {{ path = {:?}, features = [\"etcd\"] }}\n\n\
             # Not a member of any workspace above the temporary directory.\n[workspace]\n",
            fleet.display().to_string()
        ),
    )
    .unwrap();
    std::fs::write(app.path().join("src/main.rs"), MAIN).unwrap();
    // The same versions as this workspace builds, so that the registry
    // cache serves them.
    std::fs::copy(workspace.join("Cargo.lock"), app.path().join("Cargo.lock")).unwrap();
    let shadow = tempfile::tempdir().unwrap();
    let path = path_without_protoc(shadow.path());
    let found = Command::new("sh")
        .args(["-c", "command -v protoc"])
        .env("PATH", &path)
        .output()
        .unwrap();
    assert!(
        !found.status.success(),
        "protoc is still on PATH: {}",
        String::from_utf8_lossy(&found.stdout)
    );
    let target = Path::new(env!("CARGO_TARGET_TMPDIR")).join("outside-app");
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned());
    let build = |offline: bool| {
        let mut command = Command::new(&cargo);
        command.arg("build").current_dir(app.path());
        if offline {
            command.arg("--offline");
        }
        command
            .env("PATH", &path)
            .env_remove("PROTOC")
            .env_remove("CARGO_BUILD_BUILD_DIR")
            .env_remove("RUSTFLAGS")
            .env("CARGO_TARGET_DIR", &target)
            .output()
            .unwrap()
    };
    let mut output = build(true);
    if !output.status.success() && String::from_utf8_lossy(&output.stderr).contains("offline") {
        // Something is not in the registry cache: as any build would.
        output = build(false);
    }
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        output.status.success(),
        "the application did not build:\n{stderr}"
    );
    assert!(!stderr.contains("protoc"), "{stderr}");
    assert!(target.join("debug/snowmint-outside-app").is_file());
}
