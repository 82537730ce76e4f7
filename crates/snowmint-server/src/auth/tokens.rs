//! The token file: one bearer token per line, read again when it changes.
//!
//! - Blank lines and lines starting with `#` are skipped; spaces around a
//!   token are not part of it.
//! - A token is at least [`MIN_TOKEN_LEN`] characters of
//!   `A-Z a-z 0-9 - . _ ~ + /`, then any `=` (RFC 6750's `b64token`), so
//!   that it can travel in an `Authorization` header as it is.
//! - Only SHA-256 digests of the tokens are kept in memory, and a
//!   presented token is compared with every one of them in constant time
//!   (no early exit), so that neither the time an answer takes nor a dump
//!   of the process gives a token away.
//! - Errors name the file and the line, never what the line holds.
//! - The file is read only as far as its last newline: a final line
//!   without one may be half-written, and is ignored. Replace the file by
//!   writing a new one beside it and renaming it over the old one (as
//!   Kubernetes and `install -m 600` do); an edit in place is read as it
//!   stands each second.
//! - Revocation: a file deleted, or left with no token, while the node
//!   runs revokes every token: each guarded endpoint is refused, as on a
//!   node with no token, `/readyz` answers 503 `tokens_revoked` saying
//!   why, and the log says so. A file that holds tokens again restores
//!   them. (A malformed file keeps the tokens in force: it is a mistake
//!   to fix, not a revocation.)

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError, RwLock};

use aws_lc_rs::constant_time::verify_slices_are_equal;
use aws_lc_rs::digest::{SHA256, digest};

use crate::reload::FileStamp;

/// The shortest token accepted: 16 characters of 64 kinds are 96 bits.
pub const MIN_TOKEN_LEN: usize = 16;

/// The longest token accepted (a header line has to carry it).
pub const MAX_TOKEN_LEN: usize = 4096;

/// Why the token file cannot be used. Never holds a token.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("token file {}: {reason}", path.display())]
pub struct TokenFileError {
    /// The file.
    pub path: PathBuf,
    /// What is wrong, with the line number where there is one.
    pub reason: String,
    /// Whether, for a running node, this revokes every token: the file
    /// is gone or holds no token.
    pub revokes: bool,
}

/// The tokens of the token file, as digests.
pub struct Tokens {
    path: PathBuf,
    digests: RwLock<Arc<Vec<[u8; 32]>>>,
    stamp: Mutex<Option<FileStamp>>,
    /// Why every token is revoked (the file was deleted or emptied), while
    /// it is.
    revoked: RwLock<Option<String>>,
}

impl std::fmt::Debug for Tokens {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Tokens")
            .field("path", &self.path)
            .field("tokens", &self.count())
            .finish_non_exhaustive()
    }
}

impl Tokens {
    /// Reads the token file at `path`.
    ///
    /// # Errors
    ///
    /// [`TokenFileError`]: the file cannot be read, holds a line that is
    /// not a token, or holds no token.
    pub fn load(path: &Path) -> Result<Tokens, TokenFileError> {
        let stamp = FileStamp::of(path);
        let digests = read(path)?;
        warn_if_readable_by_others(path);
        Ok(Tokens {
            path: path.to_owned(),
            digests: RwLock::new(Arc::new(digests)),
            stamp: Mutex::new(stamp),
            revoked: RwLock::new(None),
        })
    }

    /// Why every token is revoked, while the file is deleted or holds no
    /// token; `None` while tokens are in force.
    pub fn revoked(&self) -> Option<String> {
        self.revoked
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// The file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// How many tokens are in force.
    pub fn count(&self) -> usize {
        self.digests
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .len()
    }

    /// Reads the file again if it changed since it was last read (or
    /// always, with `force`). `Ok(false)`: nothing changed. A file deleted
    /// or holding no token revokes every token (`Ok(true)`, and
    /// [`Tokens::revoked`] says why). On any other error the tokens in
    /// force stay, and the same file is not tried again until it changes
    /// (or `force`).
    ///
    /// # Errors
    ///
    /// [`TokenFileError`], as [`Tokens::load`].
    pub fn reload(&self, force: bool) -> Result<bool, TokenFileError> {
        let now = FileStamp::of(&self.path);
        {
            let mut stamp = self.stamp.lock().unwrap_or_else(PoisonError::into_inner);
            if !force && *stamp == now {
                return Ok(false);
            }
            *stamp = now;
        }
        let (digests, revoked) = match read(&self.path) {
            Ok(digests) => (digests, None),
            Err(error) if error.revokes => (Vec::new(), Some(error.to_string())),
            Err(error) => return Err(error),
        };
        *self.digests.write().unwrap_or_else(PoisonError::into_inner) = Arc::new(digests);
        *self.revoked.write().unwrap_or_else(PoisonError::into_inner) = revoked;
        Ok(true)
    }

    /// Whether `presented` is one of the tokens.
    pub fn accepts(&self, presented: &[u8]) -> bool {
        let presented = digest(&SHA256, presented);
        let digests = Arc::clone(&self.digests.read().unwrap_or_else(PoisonError::into_inner));
        // Every digest is compared, whatever the outcome of the others, so
        // the time taken says nothing about which token came close.
        let mut found = false;
        for known in digests.iter() {
            found |= verify_slices_are_equal(presented.as_ref(), known).is_ok();
        }
        found
    }
}

/// Whether `text` has the form of a token (see the module docs).
pub fn is_token(text: &str) -> bool {
    let body = text.trim_end_matches('=');
    (MIN_TOKEN_LEN..=MAX_TOKEN_LEN).contains(&text.len())
        && !body.is_empty()
        && body
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-._~+/".contains(&b))
}

/// The digests of the tokens in the file at `path`.
fn read(path: &Path) -> Result<Vec<[u8; 32]>, TokenFileError> {
    let bad = |reason: String| TokenFileError {
        path: path.to_owned(),
        reason,
        revokes: false,
    };
    let text = std::fs::read(path).map_err(|error| TokenFileError {
        revokes: error.kind() == std::io::ErrorKind::NotFound,
        ..bad(format!("cannot be read: {error}"))
    })?;
    // Not from_utf8's error: it would quote the bytes around the fault.
    let text = String::from_utf8(text).map_err(|_| bad("is not UTF-8 text".to_owned()))?;
    // Only whole lines: a writer may be half-way through the last one.
    let (complete, partial) = text.split_at(text.rfind('\n').map_or(0, |end| end + 1));
    let mut digests = Vec::new();
    for (number, line) in complete.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        if !is_token(line) {
            return Err(bad(format!(
                "line {} is not a token (a token is {MIN_TOKEN_LEN} to {MAX_TOKEN_LEN} characters of A-Z a-z 0-9 - . _ ~ + /, then any =; comments start with #)",
                number + 1
            )));
        }
        let mut sum = [0u8; 32];
        sum.copy_from_slice(digest(&SHA256, line.as_bytes()).as_ref());
        digests.push(sum);
    }
    if digests.is_empty() {
        let partial = if partial.trim().is_empty() {
            ""
        } else {
            "; its last line has no newline, so it is taken for half-written and ignored"
        };
        return Err(TokenFileError {
            revokes: true,
            ..bad(format!(
                "holds no token (one per line, each ended by a newline; blank lines and # comments are skipped){partial}"
            ))
        });
    }
    Ok(digests)
}

/// Warns when users other than the owner may read the file: anyone who
/// can read it can get IDs. (A warning, not a refusal: Kubernetes mounts
/// secrets readable by all unless told otherwise.)
fn warn_if_readable_by_others(path: &Path) {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        if let Ok(metadata) = std::fs::metadata(path) {
            let mode = metadata.permissions().mode() & 0o777;
            if mode & 0o077 != 0 {
                tracing::warn!(
                    file = %path.display(),
                    mode = format!("{mode:o}"),
                    "the token file can be read by other users; make it readable by the service's user alone (chmod 600)"
                );
            }
        }
    }
    #[cfg(not(unix))]
    let _ = path;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_have_the_form_of_a_b64token() {
        assert!(is_token("abcdefghijklmnop"));
        assert!(is_token("A-B.C_D~E+F/G123=="));
        assert!(!is_token("short"));
        assert!(!is_token("abcdefghijklmnop q"));
        assert!(!is_token("abcdefghijklmnop\u{e9}"));
        assert!(!is_token("================"));
        assert!(!is_token(&"a".repeat(MAX_TOKEN_LEN + 1)));
    }

    #[test]
    fn the_file_is_read_and_errors_quote_no_token() {
        let dir = tempfile_dir();
        let path = dir.join("tokens");
        std::fs::write(
            &path,
            "# ops\n\n  first-token-0123456789  \nsecond/token+abcdef==\n",
        )
        .unwrap();
        let tokens = Tokens::load(&path).unwrap();
        assert_eq!(tokens.count(), 2);
        assert!(tokens.accepts(b"first-token-0123456789"));
        assert!(tokens.accepts(b"second/token+abcdef=="));
        assert!(!tokens.accepts(b"first-token-012345678"));
        assert!(!tokens.accepts(b" first-token-0123456789"));
        assert!(!tokens.accepts(b""));

        std::fs::write(&path, "good-token-0123456789\nsecret with spaces in it\n").unwrap();
        let error = Tokens::load(&path).unwrap_err().to_string();
        assert!(error.contains("line 2 is not a token"), "{error}");
        assert!(!error.contains("secret"), "{error}");
        std::fs::write(&path, "# nothing\n").unwrap();
        let error = Tokens::load(&path).unwrap_err().to_string();
        assert!(
            error.ends_with(
                "holds no token (one per line, each ended by a newline; blank lines and # comments are skipped)"
            ),
            "{error}"
        );
        std::fs::write(&path, b"\xff\xfesecret-token-0123456789\n").unwrap();
        let error = Tokens::load(&path).unwrap_err().to_string();
        assert!(error.ends_with("is not UTF-8 text"), "{error}");
        let _ = std::fs::remove_dir_all(dir);
    }

    #[test]
    fn a_reload_keeps_the_tokens_in_force_when_the_file_is_bad() {
        let dir = tempfile_dir();
        let path = dir.join("tokens");
        std::fs::write(&path, "old-token-0123456789\n").unwrap();
        let tokens = Tokens::load(&path).unwrap();
        assert_eq!(tokens.reload(false), Ok(false));
        std::fs::write(&path, "bad\n").unwrap();
        assert!(tokens.reload(true).is_err());
        assert!(tokens.accepts(b"old-token-0123456789"));
        std::fs::write(&path, "new-token-0123456789\n").unwrap();
        assert_eq!(tokens.reload(true), Ok(true));
        assert!(!tokens.accepts(b"old-token-0123456789"));
        assert!(tokens.accepts(b"new-token-0123456789"));
        let _ = std::fs::remove_dir_all(dir);
    }

    /// Emptying or deleting the file revokes every token; a final line
    /// with no newline is never read (a writer may be half-way through
    /// it); a file with tokens again restores them.
    #[test]
    fn emptied_or_deleted_files_revoke_and_half_lines_are_ignored() {
        let dir = tempfile_dir();
        let path = dir.join("tokens");
        std::fs::write(
            &path,
            "old-token-0123456789
",
        )
        .unwrap();
        let tokens = Tokens::load(&path).unwrap();
        assert_eq!(tokens.revoked(), None);

        std::fs::write(
            &path,
            "# none for now
",
        )
        .unwrap();
        assert_eq!(tokens.reload(true), Ok(true));
        assert!(!tokens.accepts(b"old-token-0123456789"));
        assert!(tokens.revoked().unwrap().contains("holds no token"));

        std::fs::write(
            &path,
            "old-token-0123456789
",
        )
        .unwrap();
        assert_eq!(tokens.reload(true), Ok(true));
        assert!(tokens.accepts(b"old-token-0123456789"));
        assert_eq!(tokens.revoked(), None);

        std::fs::remove_file(&path).unwrap();
        assert_eq!(tokens.reload(true), Ok(true));
        assert!(!tokens.accepts(b"old-token-0123456789"));
        assert!(tokens.revoked().unwrap().contains("cannot be read"));

        // A writer stalled 19 characters into a new token: the prefix is
        // not a token, and the complete line before it still is.
        std::fs::write(
            &path,
            "old-token-0123456789
new-token-012345678",
        )
        .unwrap();
        assert_eq!(tokens.reload(true), Ok(true));
        assert!(tokens.accepts(b"old-token-0123456789"));
        assert!(!tokens.accepts(b"new-token-012345678"));
        assert_eq!(tokens.count(), 1);
        std::fs::write(&path, "new-token-012345678").unwrap();
        let error = Tokens::load(&path).unwrap_err().to_string();
        assert!(
            error.ends_with("taken for half-written and ignored"),
            "{error}"
        );
        let _ = std::fs::remove_dir_all(dir);
    }

    fn tempfile_dir() -> PathBuf {
        let dir = std::env::temp_dir().join(format!(
            "snowmint-tokens-{}-{}",
            std::process::id(),
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .unwrap()
                .as_nanos()
        ));
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }
}
