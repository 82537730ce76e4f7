//! The state directory: where each node's [`MarkFile`](crate::MarkFile)
//! lives. Made at start, with a message that says plainly what is wrong
//! when it cannot be (the path is a file, a parent is a file, no rights).

use std::fs;
use std::path::{Path, PathBuf};

use crate::FleetError;
use crate::reason::io_reason;

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
    use crate::testing::TempDir;

    /// The message says each thing once, without the error number.
    fn assert_one_sentence(message: &str) {
        assert!(!message.contains("os error"), "{message}");
        let words: Vec<&str> = message.split_whitespace().collect();
        let mut seen = std::collections::HashSet::new();
        for group in words.windows(2) {
            assert!(seen.insert(group), "{group:?} repeats in {message:?}");
        }
    }

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
