//! The state directory: where each node's [`MarkFile`](crate::MarkFile)
//! lives ([`default_state_dir`] when none is given). Made at start, with a message that says plainly what is wrong
//! when it cannot be (the path is a file, a parent is a file, no rights).
//! The file written last names the slot a restarted node most likely
//! held ([`last_written_slot`]).

use std::fs;
use std::path::{Path, PathBuf};

use snowmint::Layout;

use crate::FleetError;
use crate::reason::io_reason;

/// The state directory used when none is configured:
/// `$XDG_STATE_HOME/snowmint`, else `$HOME/.local/state/snowmint`, else
/// `./snowmint-state`, reading the environment through `env`. One
/// directory for every process of a host that issues IDs (the service,
/// `snowmint generate`, embedded issuers), so that their node locks and
/// marks meet.
///
/// # Examples
///
/// ```
/// use std::path::PathBuf;
/// use snowmint_fleet::default_state_dir;
///
/// let env = |name: &str| (name == "HOME").then(|| "/home/ana".to_owned());
/// assert_eq!(default_state_dir(env), PathBuf::from("/home/ana/.local/state/snowmint"));
/// assert_eq!(default_state_dir(|_| None), PathBuf::from("snowmint-state"));
/// ```
pub fn default_state_dir(env: impl Fn(&str) -> Option<String>) -> PathBuf {
    let set = |name| env(name).filter(|v| !v.is_empty()).map(PathBuf::from);
    if let Some(xdg) = set("XDG_STATE_HOME") {
        xdg.join("snowmint")
    } else if let Some(home) = set("HOME") {
        home.join(".local/state/snowmint")
    } else {
        PathBuf::from("snowmint-state")
    }
}

/// Creates the state directory `dir` (and its parents) if missing.
///
/// # Errors
///
/// [`FleetError::StateDir`], one sentence naming the directory and what
/// is wrong: it is a file, a parent is a file, or it cannot be created
/// (with the system's reason, such as "permission denied").
///
/// # Examples
///
/// ```
/// let file = std::env::temp_dir().join(format!("snowmint-doc-statedir-{}", std::process::id()));
/// std::fs::write(&file, "")?;
/// let err = snowmint_fleet::create_state_dir(&file).unwrap_err();
/// assert_eq!(
///     err.to_string(),
///     format!("state directory {} is not a directory (it is a file)", file.display())
/// );
/// # std::fs::remove_file(&file)?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn create_state_dir(dir: &Path) -> Result<(), FleetError> {
    fs::create_dir_all(dir).map_err(|error| {
        let problem = match dir_problem(dir) {
            // Missing after a failed create: the error says why.
            Some(DirProblem::Missing) | None => {
                format!("cannot be created: {}", io_reason(&error))
            }
            Some(problem) => problem.to_string(),
        };
        FleetError::StateDir {
            path: dir.to_owned(),
            problem,
        }
    })
}

/// What [`create_state_dir`] would find at `dir`, found without creating
/// anything: `Ok(true)` when the directory exists, `Ok(false)` when it
/// would be created (whether the system then lets it be is known only by
/// trying).
///
/// # Errors
///
/// The [`FleetError::StateDir`] that [`create_state_dir`] gives for a path
/// that cannot be a directory: a file, a parent that is a file, a
/// symbolic link to nothing.
///
/// # Examples
///
/// ```
/// let dir = std::env::temp_dir();
/// assert!(snowmint_fleet::state_dir_exists(&dir)?);
/// assert!(!snowmint_fleet::state_dir_exists(&dir.join("snowmint-doc-not-made-yet"))?);
/// # Ok::<(), snowmint_fleet::FleetError>(())
/// ```
pub fn state_dir_exists(dir: &Path) -> Result<bool, FleetError> {
    match dir_problem(dir) {
        None => Ok(true),
        Some(DirProblem::Missing) => Ok(false),
        Some(problem) => Err(FleetError::StateDir {
            path: dir.to_owned(),
            problem: problem.to_string(),
        }),
    }
}

/// The slot, in `layout`, of the node whose state file in `dir` was
/// written last: the slot a node restarted on this directory most likely
/// held, to try first when it claims again
/// ([`CoordinatorConfig::with_preferred_slot`](crate::CoordinatorConfig::with_preferred_slot)).
/// `None` when no state file can be found (a new directory, or one that
/// cannot be read: a guess is all this is).
///
/// # Examples
///
/// ```
/// use snowmint::{Layout, Node};
/// use snowmint_fleet::{MarkFile, last_written_slot};
///
/// let dir = std::env::temp_dir().join(format!("snowmint-doc-last-{}", std::process::id()));
/// std::fs::create_dir_all(&dir)?;
/// assert_eq!(last_written_slot(&dir, Layout::TWITTER), None);
/// MarkFile::for_node(&dir, Layout::TWITTER, Layout::TWITTER.node(&[1, 2])?).write(1_700_000_000_000)?;
/// assert_eq!(last_written_slot(&dir, Layout::TWITTER), Some(34));
/// # std::fs::remove_dir_all(&dir)?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn last_written_slot(dir: &Path, layout: Layout) -> Option<u64> {
    fs::read_dir(dir)
        .ok()?
        .filter_map(|entry| {
            let entry = entry.ok()?;
            let slot = slot_of_file(&layout, &entry.file_name().to_string_lossy())?;
            let written = entry.metadata().ok()?.modified().ok()?;
            Some((written, slot))
        })
        .max()
        .map(|(_, slot)| slot)
}

/// The slot, in `layout`, of the node whose state file is called `name`
/// (`node-dc3-m7.mark`; see [`MarkFile::for_node`]).
fn slot_of_file(layout: &Layout, name: &str) -> Option<u64> {
    let (upper, lowest) = name
        .strip_prefix("node-dc")?
        .strip_suffix(".mark")?
        .split_once("-m")?;
    let digits = |text: &str| {
        (!text.is_empty() && text.bytes().all(|b| b.is_ascii_digit()))
            .then(|| text.parse::<u64>().ok())
            .flatten()
    };
    let node = layout
        .node_from_pair(digits(upper)?, digits(lowest)?)
        .ok()?;
    Some(node.slot())
}

/// Why a path cannot serve as a directory.
pub(crate) enum DirProblem {
    /// It is something else: "a file".
    NotADirectory(&'static str),
    /// A parent is something else.
    ParentNotADirectory(PathBuf, &'static str),
    /// A symbolic link to nothing.
    BrokenLink,
    /// Nothing there.
    Missing,
}

impl std::fmt::Display for DirProblem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            DirProblem::NotADirectory(kind) => write!(f, "is not a directory (it is {kind})"),
            DirProblem::ParentNotADirectory(parent, kind) => write!(
                f,
                "cannot exist: {} is not a directory (it is {kind})",
                parent.display()
            ),
            DirProblem::BrokenLink => f.write_str("is a symbolic link to nothing"),
            DirProblem::Missing => f.write_str("does not exist"),
        }
    }
}

/// What keeps `dir` from being a directory, if anything does.
pub(crate) fn dir_problem(dir: &Path) -> Option<DirProblem> {
    match fs::metadata(dir) {
        Ok(meta) if meta.is_dir() => None,
        Ok(meta) => Some(DirProblem::NotADirectory(kind_of(&meta))),
        Err(_) if fs::symlink_metadata(dir).is_ok() => Some(DirProblem::BrokenLink),
        Err(_) => {
            let nearest = dir
                .ancestors()
                .skip(1)
                .find_map(|parent| Some((parent, fs::metadata(parent).ok()?)));
            Some(match nearest {
                Some((parent, meta)) if !meta.is_dir() => {
                    DirProblem::ParentNotADirectory(parent.to_owned(), kind_of(&meta))
                }
                _ => DirProblem::Missing,
            })
        }
    }
}

/// "a file", "a socket"...: what a path that should be a directory is.
fn kind_of(meta: &fs::Metadata) -> &'static str {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        let kind = meta.file_type();
        if kind.is_socket() {
            return "a socket";
        }
        if kind.is_fifo() {
            return "a named pipe";
        }
        if kind.is_block_device() || kind.is_char_device() {
            return "a device";
        }
    }
    if meta.is_file() {
        "a file"
    } else {
        "not a regular file"
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::{TempDir, assert_one_sentence};

    #[test]
    fn a_state_dir_that_is_a_file_says_so() {
        let dir = TempDir::new("dir-is-file");
        let file = dir.path().join("state");
        fs::write(&file, "").unwrap();
        let message = create_state_dir(&file).unwrap_err().to_string();
        assert_eq!(
            message,
            format!(
                "state directory {} is not a directory (it is a file)",
                file.display()
            )
        );
        assert_one_sentence(&message);
        let below = file.join("below");
        let message = create_state_dir(&below).unwrap_err().to_string();
        assert_eq!(
            message,
            format!(
                "state directory {} cannot exist: {} is not a directory (it is a file)",
                below.display(),
                file.display()
            )
        );
        assert_one_sentence(&message);
    }

    #[test]
    fn the_state_file_written_last_names_the_slot() {
        let dir = TempDir::new("last-written");
        assert_eq!(last_written_slot(dir.path(), Layout::TWITTER), None);
        let older = crate::MarkFile::for_node(
            dir.path(),
            Layout::TWITTER,
            Layout::TWITTER.node(&[0, 5]).unwrap(),
        );
        older.write(1_700_000_000_000).unwrap();
        let newer = crate::MarkFile::for_node(
            dir.path(),
            Layout::TWITTER,
            Layout::TWITTER.node(&[2, 1]).unwrap(),
        );
        // Written later, even on a file system whose times are coarse.
        let stamp = |file: &crate::MarkFile| fs::metadata(file.path()).unwrap().modified().unwrap();
        newer.write(1_700_000_000_000).unwrap();
        while stamp(&newer) <= stamp(&older) {
            std::thread::sleep(std::time::Duration::from_millis(10));
            newer.write(1_700_000_000_001).unwrap();
        }
        assert_eq!(last_written_slot(dir.path(), Layout::TWITTER), Some(65));
        // Other files, and nodes the layout cannot hold, are passed over.
        fs::write(dir.path().join("node-dc1-m1.mark.tmp"), "").unwrap();
        fs::write(dir.path().join("node-dc99-m1.mark"), "").unwrap();
        fs::write(dir.path().join("notes.txt"), "").unwrap();
        assert_eq!(last_written_slot(dir.path(), Layout::TWITTER), Some(65));
        assert_eq!(
            last_written_slot(&dir.path().join("missing"), Layout::TWITTER),
            None
        );
    }

    #[test]
    fn state_file_names_give_their_slot() {
        assert_eq!(
            slot_of_file(&Layout::TWITTER, "node-dc3-m7.mark"),
            Some(3 * 32 + 7)
        );
        // One node field: the machine alone names the slot.
        assert_eq!(
            slot_of_file(&Layout::SONYFLAKE, "node-dc0-m513.mark"),
            Some(513)
        );
        for other in [
            "node-dc3-m7.mark.tmp",
            ".node-dc3-m7.mark.42.tmp",
            "node-dc-m7.mark",
            "node-dc3-m+7.mark",
            "node-dc3.mark",
            "node-dc0-m32.mark",
            "node-dc32-m0.mark",
        ] {
            assert_eq!(slot_of_file(&Layout::TWITTER, other), None, "{other}");
        }
        assert_eq!(slot_of_file(&Layout::SONYFLAKE, "node-dc1-m0.mark"), None);
        // Every slot's file names it back.
        for layout in [
            Layout::TWITTER,
            Layout::SONYFLAKE,
            Layout::DISCORD,
            Layout::BAIDU,
        ] {
            for slot in [0, 1, 31, 32, 1023, layout.node_count() - 1] {
                let Ok(node) = layout.node_from_slot(slot) else {
                    continue;
                };
                let file = crate::MarkFile::for_node(Path::new("/x"), layout, node);
                let name = file
                    .path()
                    .file_name()
                    .unwrap()
                    .to_string_lossy()
                    .into_owned();
                assert_eq!(slot_of_file(&layout, &name), Some(slot), "{layout} {name}");
            }
        }
    }

    #[test]
    fn a_state_dir_is_created_with_its_parents() {
        let dir = TempDir::new("dir-created");
        let deep = dir.path().join("a/b/c");
        create_state_dir(&deep).unwrap();
        assert!(deep.is_dir());
        create_state_dir(&deep).expect("an existing directory is fine");
    }

    #[cfg(unix)]
    #[test]
    fn a_broken_link_as_state_dir_says_so() {
        let dir = TempDir::new("dir-link");
        let link = dir.path().join("state");
        std::os::unix::fs::symlink(dir.path().join("gone"), &link).unwrap();
        let message = create_state_dir(&link).unwrap_err().to_string();
        assert_eq!(
            message,
            format!(
                "state directory {} is a symbolic link to nothing",
                link.display()
            )
        );
    }
}
