//! The high-water mark's state file: one small text file per node.
//!
//! The file says up to which instant (Unix ms) the node may already have
//! issued IDs. It is written whole to a temporary file, flushed to disk and
//! renamed over the old one, so a crash at any moment leaves either the old
//! mark or the new one, never a torn file.
//!
//! Its format, documented so that operators (and tests) can read and write
//! it by hand:
//!
//! ```text
//! # snowmint high-water mark: no ID at or below this instant may be issued again
//! high_water_ms = 1700000001000
//! high_water = "2023-11-14T22:13:21.000Z"
//! ```
//!
//! Only `high_water_ms` is read; the other lines are for people.

use std::fs::{self, File};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Duration;

use snowmint::{Layout, Node, format_time};

use crate::FleetError;
use crate::state_dir::dir_problem;

/// The key of the one value the file holds.
const KEY: &str = "high_water_ms";

/// The state file of one node.
///
/// # Examples
///
/// ```
/// use snowmint::Layout;
/// use snowmint_fleet::MarkFile;
///
/// let dir = std::env::temp_dir().join(format!("snowmint-doc-mark-{}", std::process::id()));
/// std::fs::create_dir_all(&dir)?;
/// let file = MarkFile::for_node(&dir, Layout::TWITTER, Layout::TWITTER.node(&[3, 7])?);
/// assert!(file.path().ends_with("node-dc3-m7.mark"));
/// // Sonyflake's machine 513 is the lowest (and only) node field.
/// let file = MarkFile::for_node(&dir, Layout::SONYFLAKE, Layout::SONYFLAKE.node(&[513])?);
/// assert!(file.path().ends_with("node-dc0-m513.mark"));
/// assert_eq!(file.read()?, None); // no file yet: nothing was issued
/// file.write(1_700_000_001_000)?;
/// assert_eq!(file.read()?, Some(1_700_000_001_000));
/// # std::fs::remove_dir_all(&dir)?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MarkFile {
    path: PathBuf,
    /// The node the file is for and its layout, when known (for messages).
    node: Option<(Layout, Node)>,
}

/// The two numbers a node's state file is named by, `node-dc{upper}-m{lowest}`:
/// its lowest node field, and the node fields above it taken together
/// (Twitter's datacenter and machine). Files keep the names they had
/// before layouts named their fields, and one slot of one layout has one
/// name.
pub(crate) fn file_numbers(layout: &Layout, node: Node) -> (u64, u64) {
    layout.pair_of(node)
}

impl MarkFile {
    /// The file of `node` of `layout` in the state directory `dir`:
    /// `node-dc{upper}-m{lowest}.mark` — for Twitter's layout
    /// `node-dc{datacenter}-m{machine}.mark`; in general the lowest node
    /// field and the node fields above it taken together — so that several
    /// nodes can share one directory.
    pub fn for_node(dir: &Path, layout: Layout, node: Node) -> MarkFile {
        let (upper, lowest) = file_numbers(&layout, node);
        MarkFile {
            path: dir.join(format!("node-dc{upper}-m{lowest}.mark")),
            node: Some((layout, node)),
        }
    }

    /// A state file at an explicit path.
    pub fn at(path: impl Into<PathBuf>) -> MarkFile {
        MarkFile {
            path: path.into(),
            node: None,
        }
    }

    /// Where the file lives.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The directory the file is in.
    pub fn dir(&self) -> &Path {
        match self.path.parent() {
            Some(dir) if !dir.as_os_str().is_empty() => dir,
            _ => Path::new("."),
        }
    }

    /// The node the file is for, if it was made with
    /// [`for_node`](MarkFile::for_node).
    pub fn node(&self) -> Option<Node> {
        self.node.map(|(_, node)| node)
    }

    /// The node as its layout names it (`datacenter 3 machine 7`), if the
    /// file was made with [`for_node`](MarkFile::for_node).
    pub fn node_text(&self) -> Option<String> {
        self.node
            .map(|(layout, node)| layout.describe(node).to_string())
    }

    /// The node's lock file, beside the state file (see [`NodeLock`]):
    /// `node-dc{datacenter}-m{machine}.lock` for `node-dc{datacenter}-m{machine}.mark`,
    /// otherwise the file's name with `.lock` added.
    ///
    /// [`NodeLock`]: crate::NodeLock
    ///
    /// # Examples
    ///
    /// ```
    /// use std::path::Path;
    /// use snowmint::Layout;
    /// use snowmint_fleet::MarkFile;
    ///
    /// let node = Layout::TWITTER.node(&[1, 2])?;
    /// let file = MarkFile::for_node(Path::new("/var/lib/snowmint"), Layout::TWITTER, node);
    /// assert_eq!(file.lock_path(), Path::new("/var/lib/snowmint/node-dc1-m2.lock"));
    /// assert_eq!(MarkFile::at("/x/state").lock_path(), Path::new("/x/state.lock"));
    /// # Ok::<(), snowmint::Error>(())
    /// ```
    pub fn lock_path(&self) -> PathBuf {
        if self.path.extension().is_some_and(|ext| ext == "mark") {
            return self.path.with_extension("lock");
        }
        let mut name = self.path.file_name().unwrap_or_default().to_owned();
        name.push(".lock");
        self.path.with_file_name(name)
    }

    /// Reads the mark; `None` when there is no file yet.
    ///
    /// A file that exists but holds no readable mark is an error, not
    /// "no mark": guessing could reissue IDs.
    pub fn read(&self) -> Result<Option<i64>, FleetError> {
        let text = match fs::read_to_string(&self.path) {
            Ok(text) => text,
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(error) => {
                return Err(FleetError::Io {
                    context: format!("cannot read the state file {}", self.path.display()),
                    error,
                });
            }
        };
        parse(&text)
            .map(Some)
            .map_err(|reason| FleetError::StateFile {
                path: self.path.clone(),
                reason,
            })
    }

    /// Replaces the mark durably: writes a temporary file next to it,
    /// flushes it to disk, renames it over the old file and flushes the
    /// directory, so that after a crash the file holds the old mark or the
    /// new one.
    ///
    /// Blocking; async callers run it on a blocking thread.
    pub fn write(&self, mark_ms: i64) -> Result<(), FleetError> {
        let io = |what: &str, path: &Path| {
            let context = format!("cannot {what} {}", path.display());
            move |error| FleetError::Io { context, error }
        };
        let dir = self.dir();
        let name = self
            .path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        // The process id keeps two processes that share a directory by
        // mistake from writing into each other's temporary file.
        let temp = dir.join(format!(".{name}.{}.tmp", std::process::id()));
        let text = format!(
            "# snowmint high-water mark: no ID at or below this instant may be issued again\n\
             {KEY} = {mark_ms}\n\
             high_water = \"{}\"\n",
            format_time(mark_ms)
        );
        let mut file = File::create(&temp).map_err(|error| match dir_problem(dir) {
            // The usual cause, said plainly: the directory is gone or is
            // no directory at all.
            Some(problem) => FleetError::StateDir {
                path: dir.to_owned(),
                problem: problem.to_string(),
            },
            None => io("create the temporary state file", &temp)(error),
        })?;
        file.write_all(text.as_bytes())
            .map_err(io("write the temporary state file", &temp))?;
        file.sync_all()
            .map_err(io("flush to disk the temporary state file", &temp))?;
        drop(file);
        fs::rename(&temp, &self.path).map_err(io(
            &format!("rename {} onto the state file", temp.display()),
            &self.path,
        ))?;
        sync_dir(dir).map_err(io("flush to disk the state directory", dir))
    }

    /// How long to wait at start before the clock passes `mark_ms`, or an
    /// error naming both times when that is longer than `max_wait`.
    ///
    /// A mark ahead of the clock means IDs may have been issued up to it
    /// (the mark is reserved ahead, and the clock may have been set back).
    /// A short gap is what an immediate restart looks like; a long one is a
    /// clock that is wrong, which a person should look at.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::time::Duration;
    /// use snowmint_fleet::MarkFile;
    ///
    /// let file = MarkFile::at("/var/lib/snowmint/node-dc0-m0.mark");
    /// let max = Duration::from_secs(2);
    /// assert_eq!(file.startup_wait(1_000, 5_000, max)?, Duration::ZERO);
    /// assert_eq!(file.startup_wait(6_500, 5_000, max)?, Duration::from_millis(1_501));
    /// let err = file.startup_wait(60_000, 5_000, max).unwrap_err().to_string();
    /// assert!(err.contains("1970-01-01T00:01:00.000Z") && err.contains("1970-01-01T00:00:05.000Z"));
    /// # Ok::<(), snowmint_fleet::FleetError>(())
    /// ```
    pub fn startup_wait(
        &self,
        mark_ms: i64,
        now_ms: i64,
        max_wait: Duration,
    ) -> Result<Duration, FleetError> {
        if now_ms > mark_ms {
            return Ok(Duration::ZERO);
        }
        // The first usable millisecond is the one after the mark.
        let wait = Duration::from_millis(mark_ms.abs_diff(now_ms) + 1);
        if wait <= max_wait {
            Ok(wait)
        } else {
            Err(FleetError::MarkAhead {
                path: self.path.clone(),
                mark_ms,
                now_ms,
                max_wait,
            })
        }
    }
}

fn parse(text: &str) -> Result<i64, String> {
    for line in text.lines() {
        let line = line.trim();
        let Some((key, value)) = line.split_once('=') else {
            continue;
        };
        if key.trim() == KEY {
            let value = value.trim();
            return value
                .parse::<i64>()
                .map_err(|_| format!("{KEY} {value:?} is not a number of Unix milliseconds"));
        }
    }
    Err(format!(
        "no `{KEY} = <Unix ms>` line; if the file is damaged, replace it with a mark at or after the last ID this node issued"
    ))
}

#[cfg(unix)]
fn sync_dir(dir: &Path) -> std::io::Result<()> {
    File::open(dir)?.sync_all()
}

#[cfg(not(unix))]
fn sync_dir(_dir: &Path) -> std::io::Result<()> {
    // Directories cannot be opened for flushing here; the rename itself is
    // what the platform offers.
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::{TempDir, assert_one_sentence};

    #[test]
    fn reads_the_key_among_comments_and_other_keys() {
        let text = "# note\nhigh_water = \"x\"\n  high_water_ms =  42 \n";
        assert_eq!(parse(text), Ok(42));
    }

    #[test]
    fn a_file_without_the_key_or_with_garbage_is_an_error() {
        assert!(parse("").unwrap_err().contains("no `high_water_ms"));
        assert!(
            parse("high_water_ms = soon")
                .unwrap_err()
                .contains("\"soon\" is not a number")
        );
    }

    /// A write into a directory that turned into a file, or that is gone,
    /// names the directory and the problem.
    #[test]
    fn writes_name_the_state_dir_that_went_wrong() {
        let dir = TempDir::new("write-into-file");
        let state = dir.path().join("state");
        fs::write(&state, "").unwrap();
        let file = MarkFile::for_node(&state, Layout::TWITTER, Node::default());
        let message = file.write(1_000).unwrap_err().to_string();
        assert_eq!(
            message,
            format!(
                "state directory {} is not a directory (it is a file)",
                state.display()
            )
        );
        fs::remove_file(&state).unwrap();
        let message = file.write(1_000).unwrap_err().to_string();
        assert_eq!(
            message,
            format!("state directory {} does not exist", state.display())
        );
        assert_one_sentence(&message);
    }

    /// A state file that is a directory cannot be read: the message says
    /// which file, and the system's words once.
    #[test]
    fn read_errors_name_the_file_once() {
        let dir = TempDir::new("read-dir");
        let file = MarkFile::at(dir.path());
        let error = file.read().unwrap_err();
        let message = error.to_string();
        assert!(
            message.starts_with(&format!(
                "cannot read the state file {}: ",
                dir.path().display()
            )),
            "{message}"
        );
        assert!(message.ends_with("is a directory"), "{message}");
        assert_one_sentence(&message);
        assert!(
            std::error::Error::source(&error).is_none(),
            "the I/O error is in the message, not repeated as a source"
        );
    }

    #[test]
    fn mark_equal_to_the_clock_still_waits_one_millisecond() {
        let file = MarkFile::at("x");
        let wait = file.startup_wait(5_000, 5_000, Duration::from_secs(2));
        assert_eq!(wait.unwrap(), Duration::from_millis(1));
    }
}
