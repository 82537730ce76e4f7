//! Where the password comes from, in libpq's order: the URL, then (ahead
//! of libpq's sources) the one given to snowmint apart from the URL
//! (`--coordinator-password-file`, `SNOWMINT_COORDINATOR_PASSWORD`), then
//! the `PGPASSWORD` environment variable, then a password file
//! (`passfile=` in the URL, else `PGPASSFILE`, else `~/.pgpass`) in
//! libpq's format, one `hostname:port:database:username:password` a line,
//! `*` matching anything and `\` escaping `:` and `\`.
//!
//! A password file that its group or others may access is refused, as
//! libpq refuses it: the node is not ready, and its reason says why.

use std::path::PathBuf;

use crate::coordinator::{PostgresUrl, Secret, secret::check_private};

/// The password to log in to `host`:`port` with, if any source has one.
///
/// # Errors
///
/// A sentence naming a password file that others may read.
pub(super) fn password_for(
    url: &PostgresUrl,
    given: Option<&Secret>,
    host: &str,
    port: u16,
) -> Result<Option<String>, String> {
    if let Some(password) = url.password() {
        return Ok(Some(password.to_owned()));
    }
    if let Some(password) = given {
        return Ok(Some(password.expose().to_owned()));
    }
    if let Some(password) = std::env::var_os("PGPASSWORD") {
        return Ok(Some(password.to_string_lossy().into_owned()));
    }
    let file = match url.passfile() {
        Some(file) => PathBuf::from(file),
        None => match std::env::var_os("PGPASSFILE") {
            Some(file) => PathBuf::from(file),
            None => match std::env::var_os("HOME") {
                Some(home) => PathBuf::from(home).join(".pgpass"),
                None => return Ok(None),
            },
        },
    };
    // A missing file gives no password, as in libpq; the server's refusal
    // then says what is wrong.
    if !file.exists() {
        return Ok(None);
    }
    check_private(&file)?;
    let Ok(text) = std::fs::read_to_string(&file) else {
        return Ok(None);
    };
    Ok(lookup(&text, host, port, url.dbname(), url.user()))
}

/// The password of the first line of a password file that matches.
fn lookup(text: &str, host: &str, port: u16, dbname: &str, user: &str) -> Option<String> {
    let port = port.to_string();
    let wanted = [host, &port, dbname, user];
    text.lines()
        .filter(|line| !line.trim_start().starts_with('#'))
        .find_map(|line| {
            let fields = split(line);
            let [h, p, d, u, password] = fields.as_slice() else {
                return None;
            };
            let matches = [h, p, d, u]
                .iter()
                .zip(wanted)
                .all(|(field, want)| field.as_str() == "*" || field.as_str() == want);
            matches.then(|| password.clone())
        })
}

/// The fields of a line, `:`-separated, with `\` escapes undone.
fn split(line: &str) -> Vec<String> {
    let mut fields = vec![String::new()];
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => {
                if let Some(next) = chars.next() {
                    fields.last_mut().expect("never empty").push(next);
                }
            }
            ':' => fields.push(String::new()),
            c => fields.last_mut().expect("never empty").push(c),
        }
    }
    fields
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn password_files_match_like_libpq() {
        let file = "# comment\n\
                    other:5432:app:ids:wrong\n\
                    db.internal:*:app:ids:pa\\:ss\n\
                    *:*:*:*:fallback\n";
        assert_eq!(
            lookup(file, "db.internal", 6432, "app", "ids").as_deref(),
            Some("pa:ss")
        );
        assert_eq!(
            lookup(file, "elsewhere", 5432, "app", "ids").as_deref(),
            Some("fallback")
        );
        assert_eq!(lookup("a:1:b:c\n", "a", 1, "b", "c"), None);
    }
}
