//! One holder per node on a host: an exclusive lock on a file beside the
//! node's state file.
//!
//! Two processes that issue as the same (datacenter, machine) pair issue
//! the same IDs, and two processes writing one state file each trust a mark
//! the other may have passed. So a process locks the node's lock file
//! before it reads the node's mark, and keeps the lock for as long as it
//! may issue as that node; a second process finds it locked and refuses.
//!
//! - The lock file is `node-dc{D}-m{M}.lock`, beside `node-dc{D}-m{M}.mark`.
//!   It is a file of its own because the mark file is replaced (renamed
//!   over) at every write: a lock on it would lock a file that the next
//!   write unlinks.
//! - The lock is the operating system's advisory whole-file lock (`flock`
//!   on Unix), taken with [`File::try_lock`]. The kernel drops it when the
//!   process ends, however it ends (`kill -9` included), so it never goes
//!   stale and the next start succeeds at once.
//! - The holder writes its pid into the file, for the refusal message of
//!   the next process to read; the lock, not the text, is what keeps others
//!   out. The file is left in place when the lock is given up.
//! - Deleting the lock file of a running node would let a second process
//!   lock a new one. The holder checks that its file is still the one at the
//!   path before each write of the mark and takes the new one, or refuses
//!   to write (and so to issue) if another process holds it.
//!
//! Text of a lock file:
//!
//! ```text
//! # snowmint: the process below issues IDs as this node; its lock on this file keeps others out
//! pid = 4242
//! ```

use std::fs::{self, File, OpenOptions, TryLockError};
use std::io::Write;
use std::path::{Path, PathBuf};

use crate::state_dir::dir_problem;
use crate::{FleetError, MarkFile};

/// The key of the holder's pid in the lock file.
const PID_KEY: &str = "pid";

/// An exclusive lock on a node's lock file, held until dropped.
///
/// # Examples
///
/// ```
/// use snowmint::Layout;
/// use snowmint_fleet::{FleetError, MarkFile, NodeLock};
///
/// let dir = std::env::temp_dir().join(format!("snowmint-doc-lock-{}", std::process::id()));
/// std::fs::create_dir_all(&dir)?;
/// let file = MarkFile::for_node(&dir, Layout::TWITTER, Layout::TWITTER.node(&[3, 7])?);
/// let lock = NodeLock::acquire(&file)?;
/// assert!(lock.path().ends_with("node-dc3-m7.lock"));
/// // A second holder of the same node is refused, and told who holds it.
/// match NodeLock::acquire(&file) {
///     Err(FleetError::NodeLocked { pid, .. }) => assert_eq!(pid, Some(std::process::id())),
///     other => panic!("{other:?}"),
/// }
/// drop(lock);
/// NodeLock::acquire(&file)?;
/// # std::fs::remove_dir_all(&dir)?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug)]
pub struct NodeLock {
    /// The open lock file; the lock lives as long as this handle.
    file: File,
    path: PathBuf,
    /// For messages: the state file's directory and node.
    mark: MarkFile,
}

impl NodeLock {
    /// Locks the lock file of `mark` (see [`MarkFile::lock_path`]),
    /// creating it if missing, and writes this process's pid into it.
    ///
    /// # Errors
    ///
    /// - [`FleetError::NodeLocked`] when another holder has it: the message
    ///   names the state directory, the node and the holder's pid.
    /// - [`FleetError::StateDir`] when the directory is missing or no
    ///   directory, [`FleetError::Io`] when the file cannot be created or
    ///   locked (a file system without locks, no rights).
    pub fn acquire(mark: &MarkFile) -> Result<NodeLock, FleetError> {
        let path = mark.lock_path();
        let io = |what: &str| {
            let context = format!("cannot {what} the lock file {}", path.display());
            move |error| FleetError::Io { context, error }
        };
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            // The holder's pid must survive a failed attempt to take it.
            .truncate(false)
            .open(&path)
            .map_err(|error| {
                let dir = path.parent().unwrap_or(Path::new("."));
                match dir_problem(dir) {
                    Some(problem) => FleetError::StateDir {
                        path: dir.to_owned(),
                        problem: problem.to_string(),
                    },
                    None => io("create")(error),
                }
            })?;
        match file.try_lock() {
            Ok(()) => {}
            Err(TryLockError::WouldBlock) => {
                return Err(FleetError::NodeLocked {
                    state_dir: mark.dir().to_owned(),
                    node: mark.node(),
                    node_text: mark.node_text(),
                    lock_file: path.clone(),
                    pid: read_pid(&path),
                });
            }
            Err(TryLockError::Error(error)) => return Err(io("lock")(error)),
        }
        let text = format!(
            "# snowmint: the process below issues IDs as this node; its lock on this file keeps others out\n\
             {PID_KEY} = {}\n",
            std::process::id()
        );
        file.set_len(0).map_err(io("write"))?;
        (&file).write_all(text.as_bytes()).map_err(io("write"))?;
        Ok(NodeLock {
            file,
            path,
            mark: mark.clone(),
        })
    }

    /// Whether the lock of `mark` could be taken now, without taking it
    /// or writing anything: a missing lock file is free; an existing one
    /// is opened read-only, locked and let go at once (`snowmint serve
    /// --check`).
    ///
    /// # Errors
    ///
    /// [`FleetError::NodeLocked`] when another process holds it, naming
    /// its pid; [`FleetError::Io`] when the file cannot be opened.
    pub fn probe(mark: &MarkFile) -> Result<(), FleetError> {
        let path = mark.lock_path();
        let file = match File::open(&path) {
            Ok(file) => file,
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => return Ok(()),
            Err(error) => {
                return Err(FleetError::Io {
                    context: format!("cannot open the lock file {}", path.display()),
                    error,
                });
            }
        };
        match file.try_lock() {
            // Dropping the file lets the lock go.
            Ok(()) => Ok(()),
            Err(TryLockError::WouldBlock) => Err(FleetError::NodeLocked {
                state_dir: mark.dir().to_owned(),
                node: mark.node(),
                node_text: mark.node_text(),
                pid: read_pid(&path),
                lock_file: path,
            }),
            Err(TryLockError::Error(error)) => Err(FleetError::Io {
                context: format!("cannot lock the lock file {}", path.display()),
                error,
            }),
        }
    }

    /// The lock file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Makes sure the locked file is still the one at the path: if it was
    /// deleted or replaced, locks the one there now (or a new one).
    ///
    /// # Errors
    ///
    /// As [`NodeLock::acquire`]: [`FleetError::NodeLocked`] when another
    /// process locked the file that replaced this one.
    pub fn confirm(&mut self) -> Result<(), FleetError> {
        if self.is_at_path() {
            return Ok(());
        }
        tracing::warn!(lock_file = %self.path.display(), "the node's lock file was removed or replaced; locking the one there now");
        *self = NodeLock::acquire(&self.mark)?;
        Ok(())
    }

    #[cfg(unix)]
    fn is_at_path(&self) -> bool {
        use std::os::unix::fs::MetadataExt;
        match (self.file.metadata(), fs::metadata(&self.path)) {
            (Ok(held), Ok(there)) => held.dev() == there.dev() && held.ino() == there.ino(),
            _ => false,
        }
    }

    #[cfg(not(unix))]
    fn is_at_path(&self) -> bool {
        // Without inode numbers, a file that exists is taken for ours (a
        // locked file cannot be deleted on Windows).
        self.path.exists()
    }
}

/// The pid a lock file names, if it names one (the holder may not have
/// written it yet, or the platform may not let a second process read a
/// locked file).
fn read_pid(path: &Path) -> Option<u32> {
    let text = fs::read_to_string(path).ok()?;
    let line = text
        .lines()
        .filter_map(|line| line.split_once('='))
        .find(|(key, _)| key.trim() == PID_KEY)?;
    line.1.trim().parse().ok()
}

/// The message of [`FleetError::NodeLocked`].
pub(crate) fn held_message(
    state_dir: &Path,
    node: Option<&str>,
    lock_file: &Path,
    pid: Option<u32>,
) -> String {
    let holder = match pid {
        Some(pid) => format!("process {pid}"),
        None => "another process (it has not written its pid yet)".to_owned(),
    };
    let stop = match pid {
        Some(pid) => format!("process {pid}"),
        None => "that process".to_owned(),
    };
    let what = match node {
        Some(node) => format!(
            "{node} is already being served from the state directory {} by {holder}",
            state_dir.display()
        ),
        None => format!(
            "the state directory {} is in use by {holder}",
            state_dir.display()
        ),
    };
    format!(
        "{what}, which holds the lock file {}; two processes issuing as one node would issue the same IDs, so this one will not. Stop {stop}, or give this one another node or another state directory",
        lock_file.display()
    )
}

#[cfg(test)]
mod tests {
    use snowmint::{Layout, Node};

    use super::*;
    use crate::testing::TempDir;

    /// Datacenter 3, machine 7.
    const NODE: Node = Node::from_slot(3 * 32 + 7);

    /// A second lock on the node (another open file, as another process
    /// would have) is refused with the holder's pid, the directory and the
    /// node; once the first is dropped, it is taken at once.
    #[test]
    fn a_held_node_is_refused_until_its_lock_is_dropped() {
        let dir = TempDir::new("lock-held");
        let mark = MarkFile::for_node(dir.path(), Layout::TWITTER, NODE);
        let first = NodeLock::acquire(&mark).unwrap();
        assert_eq!(first.path(), dir.path().join("node-dc3-m7.lock"));
        assert_eq!(read_pid(first.path()), Some(std::process::id()));
        let error = NodeLock::acquire(&mark).unwrap_err();
        let message = error.to_string();
        assert!(
            matches!(&error, FleetError::NodeLocked { pid: Some(pid), node: Some(NODE), .. } if *pid == std::process::id()),
            "{error:?}"
        );
        for part in [
            "datacenter 3 machine 7".to_owned(),
            dir.path().display().to_string(),
            format!("process {}", std::process::id()),
            first.path().display().to_string(),
        ] {
            assert!(message.contains(&part), "{part:?} is missing: {message}");
        }
        // The refused attempt left the holder's pid in place.
        assert_eq!(read_pid(first.path()), Some(std::process::id()));
        drop(first);
        NodeLock::acquire(&mark).expect("a dropped lock is free at once");
    }

    /// Other nodes in the same directory have locks of their own.
    #[test]
    fn other_nodes_are_not_held() {
        let dir = TempDir::new("lock-other");
        let _first =
            NodeLock::acquire(&MarkFile::for_node(dir.path(), Layout::TWITTER, NODE)).unwrap();
        NodeLock::acquire(&MarkFile::for_node(
            dir.path(),
            Layout::TWITTER,
            Node::default(),
        ))
        .unwrap();
    }

    /// A lock file without a pid (its holder has just locked it) still
    /// gives a message.
    #[test]
    fn a_holder_without_a_pid_is_still_named() {
        let dir = TempDir::new("lock-no-pid");
        let mark = MarkFile::for_node(dir.path(), Layout::TWITTER, NODE);
        let first = NodeLock::acquire(&mark).unwrap();
        fs::write(first.path(), "").unwrap();
        let message = NodeLock::acquire(&mark).unwrap_err().to_string();
        assert!(
            message.contains("by another process (it has not written its pid yet)"),
            "{message}"
        );
        assert!(message.contains("Stop that process"), "{message}");
    }

    /// A lock file deleted under a running holder: the holder locks a new
    /// one, so a second process cannot; a second process that got there
    /// first makes the holder's check fail.
    #[cfg(unix)]
    #[test]
    fn a_deleted_lock_file_is_taken_again_or_refused() {
        let dir = TempDir::new("lock-deleted");
        let mark = MarkFile::for_node(dir.path(), Layout::TWITTER, NODE);
        let mut holder = NodeLock::acquire(&mark).unwrap();
        fs::remove_file(holder.path()).unwrap();
        holder.confirm().unwrap();
        assert!(matches!(
            NodeLock::acquire(&mark),
            Err(FleetError::NodeLocked { .. })
        ));
        fs::remove_file(holder.path()).unwrap();
        let intruder = NodeLock::acquire(&mark).unwrap();
        assert!(matches!(
            holder.confirm(),
            Err(FleetError::NodeLocked { .. })
        ));
        drop(intruder);
    }

    /// A directory that is gone says so, as the state file's writes do.
    #[test]
    fn a_missing_directory_is_named() {
        let dir = TempDir::new("lock-missing");
        let gone = dir.path().join("gone");
        let message = NodeLock::acquire(&MarkFile::for_node(&gone, Layout::TWITTER, NODE))
            .unwrap_err()
            .to_string();
        assert_eq!(
            message,
            format!("state directory {} does not exist", gone.display())
        );
    }
}
