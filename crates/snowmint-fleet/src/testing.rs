//! What the unit tests share: temporary directories, closed ports, the
//! check that a message says each thing once, and a coordinator in memory.

use std::collections::{BTreeMap, VecDeque};
use std::path::Path;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use crate::{Backend, BackendError, GuardedWrite, Opened, Versioned};

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

/// A coordinator in memory, for the unit tests of the claim engine's
/// rules: keys with versions and owners, sessions that never expire, and
/// another writer's moves run just before a guarded write, so that a test
/// puts a concurrent write exactly between the engine's read and its
/// compare-and-set (which a real server makes a race to arrange).
///
/// `PROVES_OWNER` picks the guard's strength, as
/// [`Backend::GUARD_PROVES_OWNER`]: `true` checks that the session owns
/// the guard key (etcd, PostgreSQL); `false` only that it exists, and
/// tells a conflict from a lost guard after a failed write by the key's
/// owner (ZooKeeper).
pub(crate) struct MemoryBackend<const PROVES_OWNER: bool> {
    store: Arc<Mutex<Store>>,
}

/// What a [`MemoryBackend`] holds, shared with the test that drives it.
#[derive(Default)]
pub(crate) struct Store {
    keys: BTreeMap<String, Entry>,
    /// Bumped by every write, and the version it gives (etcd's revision).
    revision: i64,
    sessions: u64,
    /// Another writer's moves, oldest first: one runs just before each
    /// guarded write while any are left.
    before_write: VecDeque<Change>,
    /// While set, a guarded write never answers.
    stalled: bool,
    /// Guarded writes and reads asked for, whatever they found.
    pub(crate) writes: usize,
    pub(crate) reads: usize,
}

/// Another writer's move, made on what the coordinator holds.
type Change = Box<dyn FnOnce(&mut Store) + Send>;

struct Entry {
    value: Vec<u8>,
    version: i64,
    /// The session the key is tied to; `None` for a record.
    owner: Option<u64>,
}

impl Store {
    /// Writes `value` to `path` as another writer would (a record, tied
    /// to no session); returns its version.
    pub(crate) fn put(&mut self, path: &str, value: &str) -> i64 {
        self.write(path, value.as_bytes(), None)
    }

    /// Deletes `path`, as an operator would by hand.
    pub(crate) fn delete(&mut self, path: &str) {
        self.keys.remove(path);
    }

    /// The text and version at `path`.
    pub(crate) fn get(&self, path: &str) -> Option<(String, i64)> {
        self.keys.get(path).map(|entry| {
            (
                String::from_utf8_lossy(&entry.value).into_owned(),
                entry.version,
            )
        })
    }

    /// Makes every guarded write from now on hang (or answer again).
    pub(crate) fn stall(&mut self, stalled: bool) {
        self.stalled = stalled;
    }

    fn write(&mut self, path: &str, value: &[u8], owner: Option<u64>) -> i64 {
        self.revision += 1;
        self.keys.insert(
            path.to_owned(),
            Entry {
                value: value.to_vec(),
                version: self.revision,
                owner,
            },
        );
        self.revision
    }

    fn owns(&self, session: u64, path: &str) -> bool {
        self.keys
            .get(path)
            .is_some_and(|entry| entry.owner == Some(session))
    }
}

impl<const PROVES_OWNER: bool> MemoryBackend<PROVES_OWNER> {
    /// An empty coordinator.
    pub(crate) fn new() -> MemoryBackend<PROVES_OWNER> {
        MemoryBackend {
            store: Arc::default(),
        }
    }

    /// What it holds, for the test to look at and change.
    pub(crate) fn store(&self) -> MutexGuard<'_, Store> {
        self.store.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Runs `change` just before the next guarded write not yet given a
    /// change of its own.
    pub(crate) fn before_write(&self, change: impl FnOnce(&mut Store) + Send + 'static) {
        self.store().before_write.push_back(Box::new(change));
    }
}

impl<const PROVES_OWNER: bool> Backend for MemoryBackend<PROVES_OWNER> {
    type Session = u64;

    const KIND: &'static str = "memory";
    const SESSION_NAME: &'static str = "session";
    const GUARD_PROVES_OWNER: bool = PROVES_OWNER;

    fn url(&self) -> String {
        "memory://test".into()
    }

    async fn open_session(
        &self,
        ttl: Duration,
        _dirs: &[String],
    ) -> Result<Opened<u64>, BackendError> {
        let mut store = self.store();
        store.sessions += 1;
        Ok(Opened {
            session: store.sessions,
            ttl,
            id: store.sessions.to_string(),
        })
    }

    async fn list(&self, _session: &u64, dir: &str) -> Result<Vec<String>, BackendError> {
        let prefix = format!("{dir}/");
        Ok(self
            .store()
            .keys
            .keys()
            .filter_map(|path| path.strip_prefix(&prefix))
            .filter(|name| !name.contains('/'))
            .map(str::to_owned)
            .collect())
    }

    async fn create_if_absent(
        &self,
        session: &u64,
        paths: &[String],
        value: &[u8],
    ) -> Result<bool, BackendError> {
        let mut store = self.store();
        if paths.iter().any(|path| store.keys.contains_key(path)) {
            return Ok(false);
        }
        for path in paths {
            store.write(path, value, Some(*session));
        }
        Ok(true)
    }

    async fn create_record(
        &self,
        _session: &u64,
        path: &str,
        value: &[u8],
    ) -> Result<Option<Vec<u8>>, BackendError> {
        let mut store = self.store();
        if let Some(entry) = store.keys.get(path) {
            return Ok(Some(entry.value.clone()));
        }
        store.write(path, value, None);
        Ok(None)
    }

    async fn keep_alive(&self, session: &u64, held: &[String]) -> Result<Duration, BackendError> {
        let store = self.store();
        match held.iter().find(|key| !store.owns(*session, key)) {
            Some(key) => Err(BackendError::lost(format!(
                "key {key} is no longer held by session {session}"
            ))),
            None => Ok(Duration::from_secs(10)),
        }
    }

    async fn read(&self, _session: &u64, path: &str) -> Result<Option<Versioned>, BackendError> {
        let mut store = self.store();
        store.reads += 1;
        Ok(store.keys.get(path).map(|entry| Versioned {
            value: entry.value.clone(),
            version: entry.version,
        }))
    }

    async fn write_guarded(
        &self,
        session: &u64,
        guard: &str,
        path: &str,
        value: &[u8],
        expected: Option<i64>,
    ) -> Result<GuardedWrite, BackendError> {
        let stalled = {
            let mut store = self.store();
            store.writes += 1;
            if let Some(change) = store.before_write.pop_front() {
                change(&mut store);
            }
            store.stalled
        };
        if stalled {
            std::future::pending::<()>().await;
        }
        let mut store = self.store();
        let guarded = if PROVES_OWNER {
            store.owns(*session, guard)
        } else {
            store.keys.contains_key(guard)
        };
        if !guarded {
            return Ok(GuardedWrite::GuardLost);
        }
        let found = store.keys.get(path).map(|entry| entry.version);
        if found != expected {
            // As ZooKeeper's failed multi-op: the check saw a key, maybe
            // not this session's, so its owner decides.
            return Ok(if store.owns(*session, guard) {
                GuardedWrite::Conflict
            } else {
                GuardedWrite::GuardLost
            });
        }
        let version = store.write(path, value, None);
        Ok(GuardedWrite::Written { version })
    }

    async fn clock(&self, _session: &u64, _path: &str) -> Result<Option<i64>, BackendError> {
        Ok(None)
    }

    async fn release(&self, session: &u64, _held: &[String]) -> Result<(), BackendError> {
        // Every key tied to the session goes with it.
        self.store()
            .keys
            .retain(|_, entry| entry.owner != Some(*session));
        Ok(())
    }
}
