//! The calculator page at `/`, built into the binary.
//!
//! The files live in `assets/` and are embedded at compile time, so the
//! page works offline and a binary always serves the page it was built
//! with. Everything on the page comes from this origin: the HTML names only
//! its own files, and the `Content-Security-Policy` header keeps it that way
//! (no CDN, no external fonts, requests only to this server's API).
//!
//! Caching: the file names carry no version, so every answer says
//! `Cache-Control: no-cache` with a strong `ETag` (a hash of the file). A
//! browser keeps its copy and revalidates it with `If-None-Match`, which is
//! answered with an empty 304 while the file is unchanged; after an upgrade
//! it gets the new file at once.

use axum::Router;
use axum::http::header::{
    CACHE_CONTROL, CONTENT_SECURITY_POLICY, CONTENT_TYPE, ETAG, IF_NONE_MATCH, REFERRER_POLICY,
    X_CONTENT_TYPE_OPTIONS,
};
use axum::http::{HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::get;

/// One embedded file and the path it is served at.
#[derive(Debug)]
pub struct Asset {
    /// The URL path.
    pub path: &'static str,
    /// The `Content-Type` it is served with.
    pub content_type: &'static str,
    /// The file's bytes.
    pub body: &'static [u8],
    hash: u64,
}

macro_rules! asset {
    ($path:literal, $file:literal, $content_type:literal) => {{
        const BODY: &[u8] = include_bytes!(concat!("../assets/", $file));
        Asset {
            path: $path,
            content_type: $content_type,
            body: BODY,
            hash: fnv1a(BODY),
        }
    }};
}

/// Every file of the page. `page.js` is the page's scripts (`app.js` and
/// the modules it imports, in `assets/` too) and the npm package's reader,
/// bundled by `js/build-page.mjs` into one classic script, which also runs
/// from disk (`snowmint page --export`); it is committed, so that building
/// this crate needs no npm.
pub static ASSETS: [Asset; 4] = [
    asset!("/", "index.html", "text/html; charset=utf-8"),
    asset!(
        "/assets/page.js",
        "page.js",
        "text/javascript; charset=utf-8"
    ),
    asset!("/assets/style.css", "style.css", "text/css; charset=utf-8"),
    asset!("/assets/favicon.svg", "favicon.svg", "image/svg+xml"),
];

/// Only this origin, and no inline code: the page needs nothing else.
/// (`blob:` lets it read back the files it makes itself, such as a
/// batch's CSV; a blob URL belongs to the origin that made it.)
const POLICY: &str = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; \
     connect-src 'self' blob:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

/// The routes of the page's files, for any router state.
pub fn router<S: Clone + Send + Sync + 'static>() -> Router<S> {
    ASSETS.iter().fold(Router::new(), |router, asset| {
        router.route(
            asset.path,
            get(move |headers: HeaderMap| async move { asset.answer(&headers) }),
        )
    })
}

impl Asset {
    /// The strong entity tag of the file's content.
    pub fn etag(&self) -> String {
        format!("\"{:016x}\"", self.hash)
    }

    fn answer(&self, request: &HeaderMap) -> Response {
        let etag = self.etag();
        let fresh = request
            .get_all(IF_NONE_MATCH)
            .iter()
            .filter_map(|value| value.to_str().ok())
            .flat_map(|value| value.split(','))
            .map(|tag| tag.trim())
            // If-None-Match compares weakly: W/"x" matches "x".
            .any(|tag| tag == "*" || tag.strip_prefix("W/").unwrap_or(tag) == etag);
        let mut response = if fresh {
            StatusCode::NOT_MODIFIED.into_response()
        } else {
            let mut full = self.body.into_response();
            full.headers_mut()
                .insert(CONTENT_TYPE, HeaderValue::from_static(self.content_type));
            full
        };
        let headers = response.headers_mut();
        headers.insert(CACHE_CONTROL, HeaderValue::from_static("no-cache"));
        if let Ok(value) = HeaderValue::from_str(&etag) {
            headers.insert(ETAG, value);
        }
        headers.insert(X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff"));
        if self.path == "/" {
            headers.insert(CONTENT_SECURITY_POLICY, HeaderValue::from_static(POLICY));
            headers.insert(REFERRER_POLICY, HeaderValue::from_static("no-referrer"));
        }
        response
    }
}

/// 64-bit FNV-1a: a content fingerprint for `ETag`, computed at compile
/// time (not a security measure).
const fn fnv1a(bytes: &[u8]) -> u64 {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    let mut i = 0;
    while i < bytes.len() {
        hash ^= bytes[i] as u64;
        hash = hash.wrapping_mul(0x0000_0100_0000_01b3);
        i += 1;
    }
    hash
}
