//! The OpenAPI 3 description of the API (`/openapi.json`).
//!
//! The document is kept by hand in `openapi.json` next to this file; a test
//! checks that it parses and describes exactly the routes of [`routes`].
//!
//! [`routes`]: crate::routes

use std::sync::LazyLock;

use serde_json::Value;

const DOCUMENT: &str = include_str!("openapi.json");

static TEXT: LazyLock<String> = LazyLock::new(|| {
    let mut document = document();
    document["info"]["version"] = env!("CARGO_PKG_VERSION").into();
    document.to_string()
});

/// The document, parsed.
///
/// # Examples
///
/// ```
/// let document = snowmint_server::openapi::document();
/// assert!(document["paths"]["/v1/id"]["get"].is_object());
/// ```
pub fn document() -> Value {
    serde_json::from_str(DOCUMENT).unwrap_or_else(|error| {
        // The file is compiled in and checked by tests; this cannot happen
        // in a released build, but an answer beats a panic.
        serde_json::json!({ "openapi": "3.0.3", "error": error.to_string() })
    })
}

/// The document as served, with this build's version.
pub fn document_text() -> &'static str {
    &TEXT
}
