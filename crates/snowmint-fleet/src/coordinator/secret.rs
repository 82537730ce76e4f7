//! Passwords, which are never shown: [`Secret`], the masking of a URL's
//! user part in messages about a URL that could not be read, and password
//! files, refused when others may read them.

use std::fmt;
use std::path::Path;

/// What a password reads as in every message, log line and status page.
pub const HIDDEN: &str = "***";

/// A password: its `Display` and `Debug` show `***`, so that a value
/// holding one can go into any log, error or status page as it is.
/// [`expose`](Self::expose) is for the one call that logs in.
///
/// # Examples
///
/// ```
/// use snowmint_fleet::Secret;
///
/// let password = Secret::new("hunter2");
/// assert_eq!(password.to_string(), "***");
/// assert_eq!(format!("{password:?}"), "Secret(***)");
/// assert_eq!(password.expose(), "hunter2");
/// ```
#[derive(Clone, PartialEq, Eq)]
pub struct Secret(String);

impl Secret {
    /// Wraps `text`.
    pub fn new(text: impl Into<String>) -> Secret {
        Secret(text.into())
    }

    /// The password itself, for logging in with. Never format it.
    pub fn expose(&self) -> &str {
        &self.0
    }

    /// The password held in `path`: the file's text without one final line
    /// break. Like libpq with its password file, it refuses a file that
    /// its group or others may read or write (it must be mode 0600 or
    /// less), and a file that is not a regular file. Messages name the
    /// file, never what it holds.
    ///
    /// # Errors
    ///
    /// A sentence naming the file and what is wrong with it.
    pub fn from_file(path: &Path) -> Result<Secret, String> {
        check_private(path)?;
        let text = std::fs::read_to_string(path).map_err(|error| {
            format!(
                "cannot read the password file {}: {}",
                path.display(),
                crate::reason::io_reason(&error)
            )
        })?;
        let text = text
            .strip_suffix('\n')
            .map(|rest| rest.strip_suffix('\r').unwrap_or(rest))
            .unwrap_or(&text);
        if text.is_empty() {
            return Err(format!("the password file {} is empty", path.display()));
        }
        Ok(Secret::new(text))
    }
}

impl fmt::Display for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(HIDDEN)
    }
}

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Secret({HIDDEN})")
    }
}

/// Refuses a password file that is not a regular file, or that its group
/// or others have any access to: on a shared host they could read it (as
/// libpq refuses `~/.pgpass`).
pub(crate) fn check_private(path: &Path) -> Result<(), String> {
    let metadata = std::fs::metadata(path).map_err(|error| {
        format!(
            "cannot read the password file {}: {}",
            path.display(),
            crate::reason::io_reason(&error)
        )
    })?;
    if !metadata.is_file() {
        return Err(format!(
            "the password file {} is not a regular file",
            path.display()
        ));
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = metadata.permissions().mode() & 0o777;
        if mode & 0o077 != 0 {
            return Err(format!(
                "the password file {} has group or world access (mode {mode:04o}), so other users may read it; \
                 it is not used: make it u=rw (0600) or less, with chmod 600",
                path.display()
            ));
        }
    }
    Ok(())
}

/// `text` with everything between `://` and the last `@` replaced by
/// `***`: what may be shown of a URL that could not be read. The user part
/// of a URL that does not parse cannot be told apart reliably (a password
/// may hold a raw `/`, `?` or `@`), so all of it goes, and the user name
/// with it.
///
/// # Examples
///
/// ```
/// use snowmint_fleet::mask_user_part;
///
/// assert_eq!(mask_user_part("etcd://root:pa/ss@10.0.0.1:2379"), "etcd://***@10.0.0.1:2379");
/// assert_eq!(mask_user_part("zk://10.0.0.1:2181/apps"), "zk://10.0.0.1:2181/apps");
/// ```
pub fn mask_user_part(text: &str) -> String {
    let Some((scheme, rest)) = text.split_once("://") else {
        // No scheme: no URL syntax to go by, so any "@" may end a password.
        return match text.rfind('@') {
            Some(at) => format!("{HIDDEN}{}", &text[at..]),
            None => text.to_owned(),
        };
    };
    match rest.rfind('@') {
        Some(at) => format!("{scheme}://{HIDDEN}{}", &rest[at..]),
        None => text.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn user_parts_are_masked_whatever_they_hold() {
        for (text, shown) in [
            ("etcd://root:PW@h:1", "etcd://***@h:1"),
            ("etcd://root:P/W@h:1", "etcd://***@h:1"),
            ("etcd://root:P?W@h:1", "etcd://***@h:1"),
            ("etcd://root:P@W@h:1", "etcd://***@h:1"),
            ("POSTGRES://ids:PW@db/app", "POSTGRES://***@db/app"),
            ("zk://u:PW@h:1/x", "zk://***@h:1/x"),
            ("root:PW@h:1", "***@h:1"),
            ("etcd://h:1", "etcd://h:1"),
        ] {
            assert_eq!(mask_user_part(text), shown, "{text}");
        }
    }

    #[test]
    fn password_files_must_be_private() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("password");
        std::fs::write(&path, "s3cret\n").unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).unwrap();
        assert_eq!(Secret::from_file(&path).unwrap().expose(), "s3cret");
        std::fs::write(&path, "s3cret\r\n").unwrap();
        assert_eq!(Secret::from_file(&path).unwrap().expose(), "s3cret");
        for mode in [0o640, 0o604, 0o660] {
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(mode)).unwrap();
            let err = Secret::from_file(&path).unwrap_err();
            assert!(err.contains(&format!("(mode {mode:04o})")), "{err}");
            assert!(err.contains("0600"), "{err}");
            assert!(!err.contains("s3cret"), "{err}");
        }
        let err = Secret::from_file(dir.path()).unwrap_err();
        assert!(err.ends_with("is not a regular file"), "{err}");
        let err = Secret::from_file(&dir.path().join("missing")).unwrap_err();
        assert!(err.ends_with("no such file or directory"), "{err}");
    }
}
