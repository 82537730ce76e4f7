//! What the unit tests share: temporary directories, closed ports, and the
//! check that a message says each thing once.

use std::path::Path;

/// A fresh directory under the system's temporary directory, removed on
/// drop (a [`tempfile::TempDir`] whose name starts with the test's label).
pub(crate) struct TempDir(tempfile::TempDir);

impl TempDir {
    /// A new empty directory whose name starts with `name`.
    pub(crate) fn new(name: &str) -> TempDir {
        let dir = tempfile::Builder::new()
            .prefix(&format!("snowmint-fleet-{name}-"))
            .tempdir()
            .expect("creating a temporary directory");
        TempDir(dir)
    }

    /// Where it is.
    pub(crate) fn path(&self) -> &Path {
        self.0.path()
    }
}

/// Asserts that an I/O failure's message is one sentence: no error number,
/// and no pair of words said twice.
pub(crate) fn assert_one_sentence(message: &str) {
    assert!(!message.contains("os error"), "{message}");
    let words: Vec<&str> = message.split_whitespace().collect();
    let mut seen = std::collections::HashSet::new();
    for group in words.windows(2) {
        assert!(seen.insert(group), "{group:?} repeats in {message:?}");
    }
}

/// A loopback port that nothing listens on (it was free a moment ago), so
/// that a connection to it is refused.
pub(crate) fn closed_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|listener| listener.local_addr())
        .expect("binding a free loopback port")
        .port()
}
