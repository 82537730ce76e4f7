//! Reading requests: query parameters, the `{id}` path segment and the
//! `Accept` header, with every rejection in the API's error shape.
//!
//! Parameters are read as text and converted by the one parser of each
//! kind of value (in `snowmint`: the same that reads the command line's
//! flags and the service's settings; the calculator's inputs through
//! `inputs.rs`, as gRPC reads them), so that messages name the parameter,
//! the value and the valid range the same way everywhere. Unknown and
//! repeated parameters are rejected rather than ignored: a typo such as
//! `?cout=5` should not silently mean "one ID".

use std::sync::Arc;

use axum::extract::{FromRequestParts, Path, Query};
use axum::http::header::ACCEPT;
use axum::http::request::Parts;
use snowmint::value::echo;
use snowmint::{Clock, Encoding, Layout};

use crate::error::ApiError;
use crate::inputs;
use crate::state::AppState;

/// The most readings `top=` may ask for of each token of `/v1/inspect`
/// (more than any token has).
pub const MAX_TOP: u64 = 64;
/// The query parameters of a request.
pub struct Params {
    pairs: Vec<(String, String)>,
    /// The node's clock, for times given as `now`.
    clock: Arc<dyn Clock>,
    /// The node's layout, the calculator's when the query names none.
    node_layout: Layout,
}

impl std::fmt::Debug for Params {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Params")
            .field("pairs", &self.pairs)
            .finish_non_exhaustive()
    }
}

impl FromRequestParts<AppState> for Params {
    type Rejection = ApiError;

    async fn from_request_parts(
        parts: &mut Parts,
        state: &AppState,
    ) -> Result<Self, Self::Rejection> {
        let pairs = if parts.uri.query().is_none_or(str::is_empty) {
            Vec::new()
        } else {
            let Query(pairs) =
                Query::<Vec<(String, String)>>::try_from_uri(&parts.uri).map_err(|rejection| {
                    ApiError::bad_input(
                        "query",
                        "invalid_query",
                        format!("the query string cannot be read: {}", rejection.body_text()),
                    )
                })?;
            pairs
        };
        Ok(Params {
            pairs,
            clock: Arc::clone(state.issuer().clock()),
            node_layout: state.issuer().layout(),
        })
    }
}

impl Params {
    /// Rejects parameters not in `known`.
    pub fn allow(&self, known: &[&str]) -> Result<&Self, ApiError> {
        if let Some((name, _)) = self
            .pairs
            .iter()
            .find(|(n, _)| !known.contains(&n.as_str()))
        {
            let expected = if known.is_empty() {
                "this endpoint takes no parameters".to_owned()
            } else {
                format!("expected {}", known.join(", "))
            };
            return Err(ApiError::bad_input(
                name,
                "unknown_parameter",
                format!("unknown parameter {:?} ({expected})", echo(name)),
            ));
        }
        Ok(self)
    }

    /// The value of `name`, if given (once).
    pub fn get(&self, name: &str) -> Result<Option<&str>, ApiError> {
        let mut values = self.pairs.iter().filter(|(n, _)| n == name);
        let first = values.next();
        if values.next().is_some() {
            return Err(ApiError::bad_input(
                name,
                "invalid_parameter",
                format!("parameter {name} is given more than once"),
            ));
        }
        Ok(first.map(|(_, v)| v.as_str()))
    }

    /// The value of `name`, which must be given.
    pub fn required(&self, name: &str, expected: &str) -> Result<&str, ApiError> {
        self.get(name)?
            .ok_or_else(|| ApiError::missing(name, expected))
    }

    /// A required integer in `min..=max`.
    pub fn bounded(&self, name: &'static str, min: u64, max: u64) -> Result<u64, ApiError> {
        let text = self
            .required(name, &format!("an integer in {min}..={max}"))
            .map_err(|error| error.with_range(min, max))?;
        snowmint::value::parse_bounded(name, text, min..=max)
            .map_err(|e| ApiError::from_core(name, e))
    }

    /// A required instant: `now`, Unix ms or RFC 3339, within the layout.
    pub fn time(&self, name: &'static str, layout: &Layout) -> Result<i64, ApiError> {
        Ok(inputs::instant(
            name,
            self.get(name)?,
            layout,
            self.clock.as_ref(),
        )?)
    }

    /// The layout asked for with `layout=` and `epoch=`; the node's own
    /// for what neither names.
    pub fn layout(&self) -> Result<Layout, ApiError> {
        Ok(inputs::layout(
            self.node_layout,
            self.get("layout")?,
            self.get("epoch")?,
        )?)
    }

    /// The IDs of `text` as `/v1/inspect` reads them: `now=` (the node's
    /// clock by default), and `layout=`/`epoch=` to read integers as that
    /// layout alone.
    ///
    /// `top=` (1..=[`MAX_TOP`]) keeps that many readings of each token, the
    /// most plausible: a batch that shows the best of each asks for one,
    /// and the answer is a fraction of the size.
    pub fn inspect(&self, text: &[u8]) -> Result<inputs::Inspection, ApiError> {
        let top = match self.get("top")? {
            Some(text) => Some(
                snowmint::value::parse_bounded("top", text, 1..=MAX_TOP)
                    .map_err(|e| ApiError::from_core("top", e))?,
            ),
            None => None,
        };
        let mut inspection = inputs::inspect(
            text,
            self.node_layout,
            self.get("layout")?,
            self.get("epoch")?,
            self.get("now")?,
            self.clock.as_ref(),
        )?;
        if let Some(top) = top {
            for token in &mut inspection.tokens {
                // At most MAX_TOP, so within usize.
                token.keep_best(top as usize);
            }
        }
        Ok(inspection)
    }

    /// The encoding named by `encoding=`, decimal if none.
    pub fn encoding(&self) -> Result<Encoding, ApiError> {
        Ok(inputs::encoding(self.get("encoding")?)?)
    }
}

/// The `{id}` segment of `/v1/ids/{id}`, as text.
#[derive(Debug)]
pub struct IdSegment(pub String);

impl<S: Send + Sync> FromRequestParts<S> for IdSegment {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, Self::Rejection> {
        Path::<String>::from_request_parts(parts, state)
            .await
            .map(|Path(id)| IdSegment(id))
            .map_err(|rejection| {
                ApiError::bad_input(
                    "id",
                    "invalid_parameter",
                    format!(
                        "the ID in the path cannot be read: {}",
                        rejection.body_text()
                    ),
                )
            })
    }
}

/// Whether the client asked for plain text rather than JSON.
///
/// Of `text/plain` and `application/json`, the one with the higher `q`
/// wins; on a tie the more specific match (`text/plain` over `*/*`), and
/// then JSON. No `Accept`, or one that names neither, means JSON.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WantsText(pub bool);

impl<S: Send + Sync> FromRequestParts<S> for WantsText {
    type Rejection = std::convert::Infallible;

    async fn from_request_parts(parts: &mut Parts, _state: &S) -> Result<Self, Self::Rejection> {
        let accept = parts.headers.get(ACCEPT).and_then(|v| v.to_str().ok());
        Ok(WantsText(accept.is_some_and(prefers_text)))
    }
}

/// See [`WantsText`].
fn prefers_text(accept: &str) -> bool {
    // (q, specificity) of the best range matching each type.
    let mut text = (0.0f32, -1i8);
    let mut json = (0.0f32, -1i8);
    for range in accept.split(',') {
        let mut pieces = range.split(';');
        let media = pieces.next().unwrap_or("").trim().to_ascii_lowercase();
        let q = pieces
            .filter_map(|p| p.trim().strip_prefix("q="))
            .find_map(|q| q.trim().parse::<f32>().ok())
            .unwrap_or(1.0);
        let rank = |kind: &str, sub: &str| match media.split_once('/') {
            Some((k, s)) if k == kind && s == sub => Some(2),
            Some((k, "*")) if k == kind => Some(1),
            Some(("*", "*")) => Some(0),
            _ => None,
        };
        for (slot, kind, sub) in [
            (&mut text, "text", "plain"),
            (&mut json, "application", "json"),
        ] {
            if let Some(specificity) = rank(kind, sub)
                && specificity > slot.1
            {
                *slot = (q, specificity);
            }
        }
    }
    text.1 >= 0 && text.0 > 0.0 && (text.0 > json.0 || (text.0 == json.0 && text.1 > json.1))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accept_negotiation() {
        for (accept, text) in [
            ("text/plain", true),
            ("TEXT/PLAIN; charset=utf-8", true),
            ("text/plain, */*", true),
            ("text/plain;q=0.5, application/json", false),
            ("application/json, text/plain", false),
            ("text/*", true),
            ("*/*", false),
            ("text/html,application/xhtml+xml,*/*;q=0.8", false),
            ("text/plain;q=0", false),
            ("image/png", false),
            ("", false),
        ] {
            assert_eq!(prefers_text(accept), text, "{accept:?}");
        }
    }

    #[test]
    fn numbers_outside_the_range_name_it() {
        let bounded = |text| {
            let params = Params {
                pairs: vec![("count".to_owned(), text)],
                clock: Arc::new(snowmint::SystemClock),
                node_layout: Layout::TWITTER,
            };
            params.bounded("count", 1, 4096).unwrap_err()
        };
        let err = bounded("18446744073709551616".to_owned());
        assert_eq!(err.code(), "out_of_range");
        assert_eq!(
            err.message(),
            "count 18446744073709551616 is out of range (1..=4096)"
        );
        let err = bounded("abc".to_owned());
        assert_eq!(err.code(), "invalid_parameter");
        assert_eq!(
            err.message(),
            "count \"abc\" is not a number (expected an integer in 1..=4096)"
        );
        assert_eq!(bounded("-1".to_owned()).code(), "out_of_range");
    }
}
