//! The calculator's inputs, read once for both front ends: the layout a
//! call asks for (the node's own when it names none), instants (`now` on
//! the node's clock), encodings and ID text.
//!
//! HTTP takes them from a query string (`api/params.rs`), gRPC from a
//! message's fields (`grpc/ids.rs`); both hand them here, typed where the
//! message is typed, so that a value means the same either way and a bad
//! one is refused with the same message. A [`Rejection`] says which input
//! was wrong; each front end turns it into its own answer.

use snowmint::{Clock, Encoding, Layout, SnowflakeId};

/// What the forms of a time are, for a message about a missing one.
pub(crate) const TIME_FORMS: &str =
    "now, Unix milliseconds such as 1700000000000, or RFC 3339 such as 2023-11-14T22:13:20.000Z";

/// An input of a calculator call that cannot be used.
#[derive(Debug)]
pub(crate) enum Rejection {
    /// A required input was not given; `expected` says what it may be.
    Missing {
        /// The input's name (`timestamp`).
        input: &'static str,
        /// Its forms or range, for people.
        expected: &'static str,
    },
    /// The core refused the input; the error says why and what is valid.
    Refused {
        /// The input's name (`layout`, `from`; `parts` for the fields of
        /// an ID to encode, whose error names its own field).
        input: &'static str,
        /// The core's error.
        error: snowmint::Error,
    },
}

/// The refusal of `input`, for `map_err`.
pub(crate) fn refused(input: &'static str) -> impl FnOnce(snowmint::Error) -> Rejection {
    move |error| Rejection::Refused { input, error }
}

/// The layout a call asks for: `layout` (a preset or `T/D/M/S[@EPOCH]`)
/// with `epoch` on top, each defaulting to the node's own, so that a node
/// explains its own IDs unless asked about another layout.
pub(crate) fn layout(
    node: Layout,
    layout: Option<&str>,
    epoch: Option<&str>,
) -> Result<Layout, Rejection> {
    let base = match layout {
        Some(text) => text.parse::<Layout>().map_err(refused("layout"))?,
        None => node,
    };
    match epoch {
        Some(text) => snowmint::parse_epoch(text)
            .and_then(|epoch| base.with_epoch(epoch))
            .map_err(refused("epoch")),
        None => Ok(base),
    }
}

/// A required instant named `input`: `now` (read from `clock`), Unix
/// milliseconds or RFC 3339, within `layout`.
pub(crate) fn instant(
    input: &'static str,
    text: Option<&str>,
    layout: &Layout,
    clock: &dyn Clock,
) -> Result<i64, Rejection> {
    let text = text.ok_or(Rejection::Missing {
        input,
        expected: TIME_FORMS,
    })?;
    let ms = snowmint::parse_instant(input, text, clock).map_err(refused(input))?;
    layout.timestamp_offset(ms).map_err(refused(input))?;
    Ok(ms)
}

/// The encoding an ID's text is in: `decimal` unless named.
pub(crate) fn encoding(name: Option<&str>) -> Result<Encoding, Rejection> {
    match name {
        Some(name) => name.parse::<Encoding>().map_err(refused("encoding")),
        None => Ok(Encoding::Decimal),
    }
}

/// The ID of `layout` written as `text` in `encoding`.
pub(crate) fn id(
    layout: &Layout,
    text: &str,
    encoding: Encoding,
) -> Result<SnowflakeId, Rejection> {
    layout.parse_id(encoding, text).map_err(refused("id"))
}

/// What a call to inspect asks for: its text's tokens and the "now" they
/// were judged against.
#[derive(Debug)]
pub(crate) struct Inspection {
    /// "Now", in Unix milliseconds.
    pub(crate) now_ms: i64,
    /// Every token of the text, most plausible reading first.
    pub(crate) tokens: Vec<snowmint::inspect::Token>,
}

/// The IDs of `text` (at most [`snowmint::inspect::MAX_TEXT`] bytes and
/// [`snowmint::inspect::MAX_TOKENS`] tokens), read as every preset, or as
/// the layout `layout` and `epoch` name alone (the node's own with only
/// `epoch`); times later than `now` (the clock's unless given) are
/// implausible.
pub(crate) fn inspect(
    text: &[u8],
    node: Layout,
    layout: Option<&str>,
    epoch: Option<&str>,
    now: Option<&str>,
    clock: &dyn Clock,
) -> Result<Inspection, Rejection> {
    use snowmint::inspect::{Catalog, Inspector};

    let catalog = if layout.is_some() || epoch.is_some() {
        let layout = self::layout(node, layout, epoch)?;
        Catalog::from_layouts([(layout.name().unwrap_or("custom"), layout)])
    } else {
        Catalog::presets()
    };
    let now_ms = match now {
        Some(text) => snowmint::parse_instant("now", text, clock).map_err(refused("now"))?,
        None => clock.now_ms(),
    };
    let tokens = Inspector::with_catalog(catalog, now_ms)
        .inspect_all(text)
        .map_err(refused("text"))?;
    Ok(Inspection { now_ms, tokens })
}
