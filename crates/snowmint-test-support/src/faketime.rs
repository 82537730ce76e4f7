//! libfaketime, which moves the clock of a process it is preloaded into
//! (`LD_PRELOAD`, `FAKETIME`): the restart and chaos tests run
//! `snowmint serve` with its clock moved, the extension's tests
//! PostgreSQL.

/// The multi-threaded build of libfaketime, which a threaded program (the
/// service, PostgreSQL) needs. Panics, saying how to get it, when it is
/// missing.
pub fn libfaketime() -> std::path::PathBuf {
    let mut candidates = vec![std::path::PathBuf::from(
        "/usr/lib/faketime/libfaketimeMT.so.1",
    )];
    // Debian puts it under the multiarch directory, such as x86_64-linux-gnu.
    if let Ok(entries) = std::fs::read_dir("/usr/lib") {
        for entry in entries.flatten() {
            candidates.push(entry.path().join("faketime/libfaketimeMT.so.1"));
        }
    }
    candidates
        .into_iter()
        .find(|path| path.exists())
        .expect("libfaketime is missing: apt-get install faketime (scripts/test installs it)")
}
