//! The calculator page's files as the service serves them: content types,
//! caching, revalidation, the security policy, and that the page needs
//! nothing from elsewhere and has every word in both languages.
//!
//! The page's behaviour in a browser is tested in
//! `crates/snowmint-cli/tests/page.rs` (headless Chromium).

use std::collections::BTreeSet;
use std::path::Path;

use axum::body::Body;
use axum::http::{Request, StatusCode};
use snowmint_test_support::in_process::{get, get_with, node, send};

/// Path served, file in `assets/`, content type.
const FILES: [(&str, &str, &str); 4] = [
    ("/", "index.html", "text/html; charset=utf-8"),
    (
        "/assets/page.js",
        "page.js",
        "text/javascript; charset=utf-8",
    ),
    ("/assets/style.css", "style.css", "text/css; charset=utf-8"),
    ("/assets/favicon.svg", "favicon.svg", "image/svg+xml"),
];

fn source(file: &str) -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("assets")
        .join(file);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

#[tokio::test]
async fn every_file_is_served_with_its_type_and_revalidation_headers() {
    let node = node().await;
    for (path, file, content_type) in FILES {
        let answer = get(&node.app, path).await;
        assert_eq!(answer.status, StatusCode::OK, "{path}");
        assert_eq!(answer.content_type(), content_type, "{path}");
        assert_eq!(answer.body, source(file), "{path} serves {file} as built");
        let header = |name: &str| {
            answer
                .headers
                .get(name)
                .map(|v| v.to_str().unwrap().to_owned())
        };
        assert_eq!(
            header("cache-control").as_deref(),
            Some("no-cache"),
            "{path}"
        );
        assert_eq!(
            header("x-content-type-options").as_deref(),
            Some("nosniff"),
            "{path}"
        );
        let etag = header("etag").unwrap_or_else(|| panic!("{path} has no ETag"));
        assert!(
            etag.len() > 2 && etag.starts_with('"') && etag.ends_with('"'),
            "{etag}"
        );
    }
}

#[tokio::test]
async fn files_have_distinct_tags_and_unchanged_ones_answer_304() {
    let node = node().await;
    let mut tags = BTreeSet::new();
    for (path, _, _) in FILES {
        let etag = get(&node.app, path).await.headers["etag"]
            .to_str()
            .unwrap()
            .to_owned();
        assert!(tags.insert(etag.clone()), "{path} shares its ETag");
        for condition in [
            etag.clone(),
            format!("W/{etag}"),
            format!("\"other\", {etag}"),
            "*".to_owned(),
        ] {
            let answer = get_with(&node.app, path, ("if-none-match", &condition)).await;
            assert_eq!(
                answer.status,
                StatusCode::NOT_MODIFIED,
                "{path} with {condition}"
            );
            assert_eq!(answer.body, "", "{path}");
            assert_eq!(answer.headers["etag"].to_str().unwrap(), etag);
            assert_eq!(answer.headers["cache-control"], "no-cache");
        }
        let changed = get_with(&node.app, path, ("if-none-match", "\"0000000000000000\"")).await;
        assert_eq!(changed.status, StatusCode::OK, "{path}");
    }
}

#[tokio::test]
async fn head_answers_without_a_body() {
    let node = node().await;
    let answer = send(&node.app, Request::head("/").body(Body::empty()).unwrap()).await;
    assert_eq!(answer.status, StatusCode::OK);
    assert_eq!(answer.content_type(), "text/html; charset=utf-8");
    assert_eq!(answer.body, "");
}

#[tokio::test]
async fn the_page_may_talk_only_to_its_own_server() {
    let node = node().await;
    let page = get(&node.app, "/").await;
    let policy = page.headers["content-security-policy"].to_str().unwrap();
    for directive in [
        "default-src 'none'",
        "script-src 'self'",
        "style-src 'self'",
        "connect-src 'self'",
    ] {
        assert!(
            policy.contains(directive),
            "{directive} missing from {policy}"
        );
    }
    // No file names anything outside this server: no CDN, no web fonts.
    for (_, file, _) in FILES {
        // An XML namespace is a name, never fetched; nor are the schemes
        // the package's reader looks for at the start of a link it reads.
        let text = source(file)
            .replace("xmlns=\"http://www.w3.org/2000/svg\"", "")
            .replace("\"https://\"", "")
            .replace("\"http://\"", "");
        for outside in ["http:", "https:", "//cdn", "@import", "url("] {
            assert!(!text.contains(outside), "{file} contains {outside:?}");
        }
    }
}

#[tokio::test]
async fn everything_the_page_loads_is_served() {
    let node = node().await;
    let html = source("index.html");
    let mut loaded = Vec::new();
    for attribute in ["src=\"", "href=\""] {
        for piece in html.split(attribute).skip(1) {
            let target = &piece[..piece.find('"').unwrap()];
            if !target.starts_with('#') {
                loaded.push(target.to_owned());
            }
        }
    }
    for target in [
        "assets/page.js",
        "assets/style.css",
        "assets/favicon.svg",
        "/openapi.json",
    ] {
        assert!(
            loaded.iter().any(|t| t == target),
            "{target} is not loaded by the page: {loaded:?}"
        );
    }
    for target in &loaded {
        // Relative to the page at `/`, so that it also works from disk.
        let path = if target.starts_with('/') {
            target.clone()
        } else {
            format!("/{target}")
        };
        let answer = get(&node.app, &path).await;
        assert_eq!(answer.status, StatusCode::OK, "{target}");
    }
}

/// The `'key': 'text'` entries of one dictionary (`const NAME = { ... };`)
/// in i18n.js.
fn dictionary(name: &str) -> BTreeSet<String> {
    let text = source("i18n.js");
    let start = text
        .find(&format!("const {name} = {{"))
        .unwrap_or_else(|| panic!("no dictionary {name}"));
    let body = &text[start..];
    let body = &body[..body.find("\n};").unwrap()];
    body.lines()
        .filter_map(|line| line.trim().strip_prefix('\''))
        .filter_map(|line| line.split_once("':").map(|(key, _)| key.to_owned()))
        .collect()
}

/// Every word the page shows exists in English and Spanish.
#[test]
fn every_label_has_both_languages() {
    let en = dictionary("en");
    let es = dictionary("es");
    assert!(en.len() > 50, "{en:?}");
    assert_eq!(en, es, "English and Spanish have different keys");
    let html = source("index.html");
    let mut used: BTreeSet<String> = html
        .split("data-i18n=\"")
        .skip(1)
        .map(|piece| piece[..piece.find('"').unwrap()].to_owned())
        .collect();
    let app = source("app.js");
    for piece in app.split("t(state.lang, ").skip(1) {
        if let Some(rest) = piece.strip_prefix('\'') {
            used.insert(rest[..rest.find('\'').unwrap()].to_owned());
        }
    }
    // The bit picture names its parts with `field.${name}`.
    for field in ["sign", "timestamp", "datacenter", "machine", "sequence"] {
        used.insert(format!("field.{field}"));
    }
    assert!(used.len() > 40, "{used:?}");
    let missing: Vec<_> = used.difference(&en).collect();
    assert!(
        missing.is_empty(),
        "words the page uses but i18n.js lacks: {missing:?}"
    );
}
