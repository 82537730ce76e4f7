//! The PostgreSQL form of a coordinator URL, libpq's
//! `postgres://USER[:PASSWORD]@HOST[:PORT][,HOST[:PORT]...]/DB[?PARAMS]`,
//! and the one place that hides its password (`***`) wherever it is shown.

use std::fmt;

use crate::coordinator::secret::HIDDEN;

/// The port PostgreSQL listens on when the URL names none.
pub const DEFAULT_PORT: u16 = 5432;
/// The schema the tables live in when the URL names none.
pub const DEFAULT_SCHEMA: &str = "snowmint";

/// The query parameters a PostgreSQL coordinator URL takes.
const PARAMS: &str = "sslmode, sslrootcert, schema, passfile, application_name";

/// How the connection is encrypted, with libpq's `sslmode` names.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SslMode {
    /// Plain TCP.
    Disable,
    /// TLS if the server offers it, else plain; the certificate is not
    /// checked (libpq's default).
    #[default]
    Prefer,
    /// TLS or nothing; the certificate is not checked.
    Require,
    /// TLS, with a certificate signed by a trusted authority (the
    /// `sslrootcert` file, else the system's); the host name is not
    /// checked.
    VerifyCa,
    /// TLS, with a trusted certificate issued for the host named in the URL.
    VerifyFull,
}

impl SslMode {
    /// libpq's name for the mode.
    pub fn as_str(self) -> &'static str {
        match self {
            SslMode::Disable => "disable",
            SslMode::Prefer => "prefer",
            SslMode::Require => "require",
            SslMode::VerifyCa => "verify-ca",
            SslMode::VerifyFull => "verify-full",
        }
    }

    fn parse(text: &str) -> Result<SslMode, String> {
        Ok(match text {
            "disable" => SslMode::Disable,
            "prefer" => SslMode::Prefer,
            "require" => SslMode::Require,
            "verify-ca" => SslMode::VerifyCa,
            "verify-full" => SslMode::VerifyFull,
            other => {
                return Err(format!(
                    "sslmode {other:?} is not one of disable, prefer, require, verify-ca, verify-full"
                ));
            }
        })
    }
}

/// A PostgreSQL database to keep a fleet's slots in.
///
/// Its `Display` and `Debug` show the password as `***`, so the value can
/// go into any log or status page as it is; [`password`](Self::password)
/// is for connecting only.
///
/// # Examples
///
/// ```
/// use snowmint_fleet::CoordinatorUrl;
///
/// let url: CoordinatorUrl = "postgres://ids:s3cret@db.internal/app?sslmode=require".parse()?;
/// assert_eq!(url.to_string(), "postgres://ids:***@db.internal:5432/app?sslmode=require");
/// let CoordinatorUrl::Postgres(target) = &url else { unreachable!() };
/// assert_eq!(target.password(), Some("s3cret"));
/// assert_eq!(target.schema(), "snowmint");
/// # Ok::<(), snowmint_fleet::ConfigError>(())
/// ```
#[derive(Clone, PartialEq, Eq)]
pub struct PostgresUrl {
    user: String,
    password: Option<String>,
    hosts: Vec<(String, u16)>,
    dbname: String,
    ssl_mode: SslMode,
    /// Whether the URL named the mode (shown back only then).
    ssl_mode_given: bool,
    ssl_root_cert: Option<String>,
    schema: String,
    passfile: Option<String>,
    application_name: Option<String>,
}

impl PostgresUrl {
    /// The role to log in as.
    pub fn user(&self) -> &str {
        &self.user
    }

    /// The password written in the URL, if any (else `PGPASSWORD` or a
    /// password file may give one when connecting).
    pub fn password(&self) -> Option<&str> {
        self.password.as_deref()
    }

    /// The servers to try, in order: (host, port).
    pub fn hosts(&self) -> &[(String, u16)] {
        &self.hosts
    }

    /// The database (the user's name when the URL names none, as libpq
    /// does).
    pub fn dbname(&self) -> &str {
        &self.dbname
    }

    /// How the connection is encrypted.
    pub fn ssl_mode(&self) -> SslMode {
        self.ssl_mode
    }

    /// A PEM file of the authorities trusted to sign the server's
    /// certificate (`sslrootcert=`).
    pub fn ssl_root_cert(&self) -> Option<&str> {
        self.ssl_root_cert.as_deref()
    }

    /// The schema the tables live in (`schema=`, default `snowmint`).
    pub fn schema(&self) -> &str {
        &self.schema
    }

    /// A libpq password file to look the password up in (`passfile=`).
    pub fn passfile(&self) -> Option<&str> {
        self.passfile.as_deref()
    }

    /// The name the connection shows in `pg_stat_activity`
    /// (`application_name=`, default `snowmint`).
    pub fn application_name(&self) -> &str {
        self.application_name.as_deref().unwrap_or("snowmint")
    }

    /// Reads what follows `postgres://` or `postgresql://`.
    pub(super) fn parse(rest: &str) -> Result<PostgresUrl, String> {
        let (main, query) = match rest.split_once('?') {
            Some((main, query)) => (main, Some(query)),
            None => (rest, None),
        };
        let (authority, path) = match main.find('/') {
            Some(at) => (&main[..at], &main[at + 1..]),
            None => (main, ""),
        };
        let (userinfo, hostlist) = authority.rsplit_once('@').ok_or_else(|| {
            "it names no user (expected postgres://USER[:PASSWORD]@HOST[:PORT]/DB)".to_owned()
        })?;
        let (user, password) = match userinfo.split_once(':') {
            Some((user, password)) => (user, Some(decode("password", password)?)),
            None => (userinfo, None),
        };
        let user = decode("user", user)?;
        if user.is_empty() {
            return Err("the user name is empty".into());
        }
        let hosts = hostlist
            .split(',')
            .map(parse_host)
            .collect::<Result<Vec<_>, _>>()?;
        let dbname = match decode("database", path)? {
            name if name.is_empty() => user.clone(),
            name if name.contains('/') => {
                return Err(format!("database name {name:?} contains \"/\""));
            }
            name => name,
        };
        let mut url = PostgresUrl {
            user,
            password,
            hosts,
            dbname,
            ssl_mode: SslMode::default(),
            ssl_mode_given: false,
            ssl_root_cert: None,
            schema: DEFAULT_SCHEMA.to_owned(),
            passfile: None,
            application_name: None,
        };
        for pair in query.into_iter().flat_map(|q| q.split('&')) {
            if pair.is_empty() {
                continue;
            }
            let (name, value) = pair
                .split_once('=')
                .ok_or_else(|| format!("parameter {pair:?} has no value (expected NAME=VALUE)"))?;
            let value = decode(name, value)?;
            match name {
                "sslmode" => {
                    url.ssl_mode = SslMode::parse(&value)?;
                    url.ssl_mode_given = true;
                }
                "sslrootcert" => url.ssl_root_cert = Some(value),
                "schema" => url.schema = check_schema(value)?,
                "passfile" => url.passfile = Some(value),
                "application_name" => url.application_name = Some(value),
                other => {
                    return Err(format!("parameter {other:?} is not one of {PARAMS}"));
                }
            }
        }
        Ok(url)
    }
}

/// A host, `HOST[:PORT]` or `[IPV6][:PORT]`.
fn parse_host(text: &str) -> Result<(String, u16), String> {
    let (host, port) = if let Some(inner) = text.strip_prefix('[') {
        let (host, after) = inner
            .split_once(']')
            .ok_or_else(|| format!("host {text:?} opens a \"[\" it does not close"))?;
        match after.strip_prefix(':') {
            Some(port) => (host, Some(port)),
            None if after.is_empty() => (host, None),
            None => return Err(format!("host {text:?} has text after \"]\"")),
        }
    } else {
        match text.split_once(':') {
            Some((host, port)) => (host, Some(port)),
            None => (text, None),
        }
    };
    if host.is_empty() {
        return Err(format!(
            "host {text:?} is empty (expected HOST[:PORT]; connections go over TCP)"
        ));
    }
    let port = match port {
        Some(port) => snowmint::value::parse_bounded("port", port, 1..=65535)
            .map_err(|error| error.to_string())? as u16,
        None => DEFAULT_PORT,
    };
    Ok((host.to_owned(), port))
}

/// A schema name kept to what needs no quoting, so that it can be
/// written into statements as it is.
fn check_schema(name: String) -> Result<String, String> {
    let mut chars = name.chars();
    let starts_well = chars
        .next()
        .is_some_and(|c| c.is_ascii_lowercase() || c == '_');
    let rest_well = chars.all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_');
    if starts_well && rest_well && name.len() <= 63 {
        Ok(name)
    } else {
        Err(format!(
            "schema {name:?} is not a plain name (expected 1 to 63 of a-z, 0-9 and _, not starting with a digit)"
        ))
    }
}

/// Decodes `%XX` escapes, as libpq does in every part of a URL.
pub(super) fn decode(what: &str, text: &str) -> Result<String, String> {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut at = 0;
    while at < bytes.len() {
        if bytes[at] == b'%' {
            let hex = text
                .get(at + 1..at + 3)
                .and_then(|hex| u8::from_str_radix(hex, 16).ok())
                .ok_or_else(|| format!("the {what} has a \"%\" not followed by two hex digits"))?;
            out.push(hex);
            at += 3;
        } else {
            out.push(bytes[at]);
            at += 1;
        }
    }
    String::from_utf8(out).map_err(|_| format!("the {what} is not UTF-8 once decoded"))
}

/// Encodes what a URL part cannot hold as it is.
pub(super) fn encode(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for byte in text.bytes() {
        if byte.is_ascii_alphanumeric() || b"-._~".contains(&byte) {
            out.push(char::from(byte));
        } else {
            out.push_str(&format!("%{byte:02X}"));
        }
    }
    out
}

impl fmt::Display for PostgresUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "postgres://{}", encode(&self.user))?;
        if self.password.is_some() {
            write!(f, ":{HIDDEN}")?;
        }
        let hosts: Vec<String> = self
            .hosts
            .iter()
            .map(|(host, port)| match host.contains(':') {
                true => format!("[{host}]:{port}"),
                false => format!("{host}:{port}"),
            })
            .collect();
        write!(f, "@{}/{}", hosts.join(","), encode(&self.dbname))?;
        let mut params = Vec::new();
        if self.ssl_mode_given {
            params.push(format!("sslmode={}", self.ssl_mode.as_str()));
        }
        if let Some(file) = &self.ssl_root_cert {
            params.push(format!("sslrootcert={}", encode(file)));
        }
        if self.schema != DEFAULT_SCHEMA {
            params.push(format!("schema={}", self.schema));
        }
        if let Some(file) = &self.passfile {
            params.push(format!("passfile={}", encode(file)));
        }
        if let Some(name) = &self.application_name {
            params.push(format!("application_name={}", encode(name)));
        }
        if !params.is_empty() {
            write!(f, "?{}", params.join("&"))?;
        }
        Ok(())
    }
}

impl fmt::Debug for PostgresUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("PostgresUrl")
            .field(&self.to_string())
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> PostgresUrl {
        PostgresUrl::parse(text).unwrap_or_else(|e| panic!("{text}: {e}"))
    }

    #[test]
    fn reads_libpq_urls() {
        let url =
            parse("ids:p%40ss@db.internal:6432,10.0.0.2/app?sslmode=verify-full&schema=fleet_1");
        assert_eq!(url.user(), "ids");
        assert_eq!(url.password(), Some("p@ss"));
        assert_eq!(
            url.hosts(),
            [
                ("db.internal".to_owned(), 6432),
                ("10.0.0.2".to_owned(), 5432)
            ]
        );
        assert_eq!(url.dbname(), "app");
        assert_eq!(url.ssl_mode(), SslMode::VerifyFull);
        assert_eq!(url.schema(), "fleet_1");
        // The database defaults to the user's name, as in libpq.
        let url = parse("ids@[::1]");
        assert_eq!(url.dbname(), "ids");
        assert_eq!(url.hosts(), [("::1".to_owned(), 5432)]);
        assert_eq!(url.ssl_mode(), SslMode::Prefer);
        assert_eq!(url.password(), None);
        assert_eq!(url.to_string(), "postgres://ids@[::1]:5432/ids");
    }

    #[test]
    fn the_password_never_shows() {
        let url = parse("ids:hunter2@db/app?application_name=web%201");
        let shown = url.to_string();
        assert_eq!(
            shown,
            "postgres://ids:***@db:5432/app?application_name=web%201"
        );
        assert!(!format!("{url:?}").contains("hunter2"));
    }

    #[test]
    fn bad_parts_are_named() {
        for (text, says) in [
            ("db:5432/app", "it names no user"),
            (":pw@db/app", "the user name is empty"),
            ("ids@/app", "host \"\" is empty"),
            ("ids@db:0/app", "port 0 is out of range (1..=65535)"),
            ("ids@[::1/app", "opens a \"[\" it does not close"),
            (
                "ids@db/app?sslmode=allow",
                "sslmode \"allow\" is not one of",
            ),
            (
                "ids@db/app?sslcert=x",
                "parameter \"sslcert\" is not one of sslmode",
            ),
            (
                "ids@db/app?schema=Ids",
                "schema \"Ids\" is not a plain name",
            ),
            ("ids@db/app?schema", "parameter \"schema\" has no value"),
            (
                "ids%zz@db/app",
                "the user has a \"%\" not followed by two hex digits",
            ),
        ] {
            let err = PostgresUrl::parse(text).unwrap_err();
            assert!(err.contains(says), "{text}: {err}");
        }
    }
}
