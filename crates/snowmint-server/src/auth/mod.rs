//! Bearer tokens (`--auth-token-file`, `--auth-scope`).
//!
//! - With a token file, issuing needs `Authorization: Bearer <token>`,
//!   and so does what describes the node's processes: HTTP `/v1/id`,
//!   `/v1/ids`, Leaf's `/api/snowflake/get/{key}`, `/v1/node`,
//!   `/v1/whois/{id}`, gRPC `NextIds`, `StreamIds`, `GetNode`, `Whois`
//!   (scope `issue`, the default). Scope `all` extends it to every
//!   endpoint but `/healthz`, `/readyz` and gRPC health, which probes
//!   must reach without a secret.
//! - A listener whose protocol carries no credential
//!   ([`Guard::Nothing`](crate::Guard::Nothing)) is served beside tokens
//!   only on loopback or when its switch says so (see `crate::listener`).
//! - A missing, malformed or unknown token is HTTP 401 with
//!   `WWW-Authenticate: Bearer` (and the API's error body), or gRPC
//!   `UNAUTHENTICATED`. Refusals are counted by reason, never by token.
//! - Nothing here logs, formats or keeps a token: [`Tokens`], which reads
//!   the file and compares, holds digests.

use std::fmt;
use std::str::FromStr;

use http::HeaderMap;
use http::header::AUTHORIZATION;

mod tokens;

pub use tokens::{MAX_TOKEN_LEN, MIN_TOKEN_LEN, TokenFileError, Tokens};

/// Which endpoints need a token.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum AuthScope {
    /// Those that issue IDs or describe the node's processes: HTTP
    /// `/v1/id`, `/v1/ids`, `/api/snowflake/get/{key}`, `/v1/node`,
    /// `/v1/whois/{id}`; gRPC `NextIds`, `StreamIds`, `GetNode`, `Whois`.
    #[default]
    Issue,
    /// Every endpoint but `/healthz`, `/readyz` and gRPC health.
    All,
}

impl AuthScope {
    /// The name, as in `--auth-scope`.
    pub const fn name(self) -> &'static str {
        match self {
            AuthScope::Issue => "issue",
            AuthScope::All => "all",
        }
    }
}

impl AuthScope {
    /// Whether the HTTP route `route` (as matched, such as
    /// `/v1/ids/{id}`) needs a token in this scope.
    pub fn guards_http(self, route: &str) -> bool {
        match self {
            AuthScope::Issue => HTTP_ISSUE.contains(&route),
            AuthScope::All => !HTTP_OPEN.contains(&route),
        }
    }

    /// Whether the gRPC method `path` (`/package.Service/Method`) needs a
    /// token in this scope.
    pub fn guards_grpc(self, path: &str) -> bool {
        match self {
            AuthScope::Issue => GRPC_ISSUE.contains(&path),
            AuthScope::All => !path.starts_with(GRPC_OPEN),
        }
    }
}

impl fmt::Display for AuthScope {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for AuthScope {
    type Err = String;

    fn from_str(text: &str) -> Result<AuthScope, String> {
        if text.eq_ignore_ascii_case("issue") {
            Ok(AuthScope::Issue)
        } else if text.eq_ignore_ascii_case("all") {
            Ok(AuthScope::All)
        } else {
            Err(format!(
                "unknown auth scope {:?} (expected issue or all)",
                snowmint::value::echo(text)
            ))
        }
    }
}

/// The HTTP routes that issue, or describe the node's processes (whois
/// names any fleet node's host, pid, addresses and lease). A test walks
/// the router and fails when a route that issues is missing here.
const HTTP_ISSUE: [&str; 5] = [
    "/v1/id",
    "/v1/ids",
    "/api/snowflake/get/{key}",
    "/v1/node",
    "/v1/whois/{id}",
];
/// The HTTP routes that stay open whatever the scope.
const HTTP_OPEN: [&str; 2] = ["/healthz", "/readyz"];
/// The gRPC methods that issue or describe the node.
const GRPC_ISSUE: [&str; 4] = [
    "/snowmint.v1.IdService/NextIds",
    "/snowmint.v1.IdService/StreamIds",
    "/snowmint.v1.IdService/GetNode",
    "/snowmint.v1.IdService/Whois",
];
/// The gRPC service that stays open whatever the scope.
const GRPC_OPEN: &str = "/grpc.health.v1.Health/";

/// Why a request was refused, as counted in
/// `snowmint_auth_refused_total{reason}`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AuthFailure {
    /// No `Authorization` header (or metadata).
    Missing,
    /// Not one `Bearer <token>`.
    Malformed,
    /// A token that is not in the file.
    Unknown,
}

impl AuthFailure {
    /// Every reason.
    pub const ALL: [AuthFailure; 3] = [
        AuthFailure::Missing,
        AuthFailure::Malformed,
        AuthFailure::Unknown,
    ];

    /// The label value.
    pub const fn name(self) -> &'static str {
        match self {
            AuthFailure::Missing => "missing",
            AuthFailure::Malformed => "malformed",
            AuthFailure::Unknown => "unknown",
        }
    }

    /// What the client is told (it names no token).
    pub fn message(self) -> &'static str {
        match self {
            AuthFailure::Missing => {
                "this endpoint needs a bearer token: send Authorization: Bearer <token>"
            }
            AuthFailure::Malformed => {
                "the Authorization header is not one Bearer <token> (one header, the word Bearer, a space, the token)"
            }
            AuthFailure::Unknown => "the bearer token is not one this node accepts",
        }
    }

    /// The `WWW-Authenticate` challenge (RFC 6750): an error code when a
    /// token was sent.
    pub fn challenge(self) -> &'static str {
        match self {
            AuthFailure::Missing => "Bearer realm=\"snowmint\"",
            AuthFailure::Malformed => "Bearer realm=\"snowmint\", error=\"invalid_request\"",
            AuthFailure::Unknown => "Bearer realm=\"snowmint\", error=\"invalid_token\"",
        }
    }
}

/// The node's tokens and the endpoints they guard.
#[derive(Debug)]
pub struct Auth {
    scope: AuthScope,
    tokens: Tokens,
}

impl Auth {
    /// `tokens` guarding the endpoints of `scope`.
    pub fn new(tokens: Tokens, scope: AuthScope) -> Auth {
        Auth { scope, tokens }
    }

    /// Which endpoints need a token.
    pub fn scope(&self) -> AuthScope {
        self.scope
    }

    /// The tokens.
    pub fn tokens(&self) -> &Tokens {
        &self.tokens
    }

    /// Whether the HTTP route `route` (as matched, such as `/v1/ids/{id}`)
    /// needs a token.
    pub fn guards_http(&self, route: &str) -> bool {
        self.scope.guards_http(route)
    }

    /// Whether the gRPC method `path` (`/package.Service/Method`) needs a
    /// token.
    pub fn guards_grpc(&self, path: &str) -> bool {
        self.scope.guards_grpc(path)
    }

    /// Checks the `authorization` header (HTTP) or metadata (gRPC).
    ///
    /// # Errors
    ///
    /// [`AuthFailure`]: why the request may not pass.
    pub fn check(&self, headers: &HeaderMap) -> Result<(), AuthFailure> {
        let mut values = headers.get_all(AUTHORIZATION).iter();
        let value = values.next().ok_or(AuthFailure::Missing)?;
        if values.next().is_some() {
            return Err(AuthFailure::Malformed);
        }
        let token = bearer(value.as_bytes()).ok_or(AuthFailure::Malformed)?;
        if self.tokens.accepts(token) {
            Ok(())
        } else {
            Err(AuthFailure::Unknown)
        }
    }
}

/// The token of `Bearer <token>` (the scheme in any case, one or more
/// spaces), if the value has that form.
fn bearer(value: &[u8]) -> Option<&[u8]> {
    const SCHEME: &[u8] = b"bearer";
    if value.len() <= SCHEME.len() || !value[..SCHEME.len()].eq_ignore_ascii_case(SCHEME) {
        return None;
    }
    let rest = &value[SCHEME.len()..];
    let start = rest.iter().position(|&b| b != b' ')?;
    if start == 0 {
        return None;
    }
    let token = &rest[start..];
    (!token.contains(&b' ')).then_some(token)
}

#[cfg(test)]
mod tests {
    use super::*;
    use http::HeaderValue;

    #[test]
    fn bearer_values_are_read_strictly() {
        assert_eq!(bearer(b"Bearer abc"), Some(&b"abc"[..]));
        assert_eq!(bearer(b"bearer   abc"), Some(&b"abc"[..]));
        assert_eq!(bearer(b"BEARER abc"), Some(&b"abc"[..]));
        for bad in [
            &b"Bearer"[..],
            b"Bearer ",
            b"Bearerabc",
            b"Basic abc",
            b"Bearer a b",
            b"",
        ] {
            assert_eq!(bearer(bad), None, "{:?}", String::from_utf8_lossy(bad));
        }
    }

    #[test]
    fn scopes_guard_their_endpoints() {
        let dir = std::env::temp_dir().join(format!("snowmint-auth-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("tokens");
        std::fs::write(&path, "the-token-0123456789\n").unwrap();
        let issue = Auth::new(Tokens::load(&path).unwrap(), AuthScope::Issue);
        let all = Auth::new(Tokens::load(&path).unwrap(), AuthScope::All);
        for route in [
            "/v1/id",
            "/v1/ids",
            "/v1/node",
            "/api/snowflake/get/{key}",
            "/v1/whois/{id}",
        ] {
            assert!(
                issue.guards_http(route) && all.guards_http(route),
                "{route}"
            );
        }
        for route in [
            "/v1/ids/{id}",
            "/v1/encode",
            "/v1/range",
            "/v1/layout",
            "/metrics",
            "/openapi.json",
            "/",
        ] {
            assert!(
                !issue.guards_http(route) && all.guards_http(route),
                "{route}"
            );
        }
        for route in ["/healthz", "/readyz"] {
            assert!(
                !issue.guards_http(route) && !all.guards_http(route),
                "{route}"
            );
        }
        assert!(issue.guards_grpc("/snowmint.v1.IdService/StreamIds"));
        assert!(issue.guards_grpc("/snowmint.v1.IdService/Whois"));
        assert!(!issue.guards_grpc("/snowmint.v1.IdService/Decode"));
        assert!(all.guards_grpc("/snowmint.v1.IdService/Decode"));
        assert!(all.guards_grpc("/grpc.reflection.v1.ServerReflection/ServerReflectionInfo"));
        assert!(!all.guards_grpc("/grpc.health.v1.Health/Check"));

        let headers = |values: &[&str]| {
            let mut map = HeaderMap::new();
            for value in values {
                map.append(AUTHORIZATION, HeaderValue::from_str(value).unwrap());
            }
            map
        };
        assert_eq!(issue.check(&headers(&[])), Err(AuthFailure::Missing));
        assert_eq!(
            issue.check(&headers(&["Basic dXNlcjpwdw=="])),
            Err(AuthFailure::Malformed)
        );
        assert_eq!(
            issue.check(&headers(&[
                "Bearer the-token-0123456789",
                "Bearer the-token-0123456789"
            ])),
            Err(AuthFailure::Malformed)
        );
        assert_eq!(
            issue.check(&headers(&["Bearer not-the-token-000"])),
            Err(AuthFailure::Unknown)
        );
        assert_eq!(
            issue.check(&headers(&["Bearer the-token-0123456789"])),
            Ok(())
        );
        let _ = std::fs::remove_dir_all(dir);
    }

    #[test]
    fn scopes_are_read_in_any_case_and_junk_is_named() {
        assert_eq!("ALL".parse::<AuthScope>(), Ok(AuthScope::All));
        assert_eq!("issue".parse::<AuthScope>(), Ok(AuthScope::Issue));
        assert_eq!(
            "some".parse::<AuthScope>(),
            Err("unknown auth scope \"some\" (expected issue or all)".to_owned())
        );
    }
}
