//! Temporary directories for tests, removed when dropped (from
//! [`tempfile`]).

pub use tempfile::TempDir;

/// A fresh, empty directory under the system's temporary directory, named
/// after `label` so that a leftover one says which test made it.
///
/// # Examples
///
/// ```
/// let dir = snowmint_test_support::temp::temp_dir("example");
/// assert!(dir.path().is_dir());
/// ```
pub fn temp_dir(label: &str) -> TempDir {
    tempfile::Builder::new()
        .prefix(&format!("snowmint-{label}-"))
        .tempdir()
        .unwrap_or_else(|err| panic!("cannot create a temporary directory for {label}: {err}"))
}
