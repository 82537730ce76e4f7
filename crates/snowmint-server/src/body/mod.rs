//! The bodies of the API's answers, as types.
//!
//! Every JSON answer of the service is one of these, serialized with serde;
//! `/openapi.json` is generated from the same definitions (utoipa's
//! `ToSchema`), so the document describes exactly what is sent.
//!
//! - `issue.rs`: [`NewId`], [`NewIds`] and their `text/plain` forms
//!   ([`IdText`], [`IdsText`]).
//! - `calc.rs`: [`DecodedId`], [`IdRange`], [`LayoutDescription`] (also
//!   what `snowmint layout --format json` prints).
//! - `node.rs`: [`NodeDescription`] with its [`CoordinatorDescription`],
//!   and [`Status`] for `/healthz` and `/readyz`.
//! - `inspect.rs`: [`Inspected`], the answer of `/v1/inspect`, and
//!   [`InspectRequest`], its JSON request.
//! - `whois.rs`: [`WhoisBody`] and its [`ClaimRecordBody`]s.
//! - `error.rs`: [`ErrorBody`], the one error answer.
//!
//! IDs are decimal strings everywhere: JavaScript numbers lose precision
//! above 2^53.

use utoipa::openapi::schema::{ObjectBuilder, Type};

mod calc;
mod error;
mod inspect;
mod issue;
mod node;
mod whois;

pub use calc::{DecodedId, Encodings, IdRange, LayoutDescription, LayoutField, MS_PER_YEAR};
pub use error::{ErrorBody, ErrorDetails};
pub use inspect::{InspectRequest, Inspected};
pub use issue::{IdText, IdsText, NewId, NewIds};
pub use node::{
    ClockCheckDescription, CoordinatorDescription, FencingState, NodeDescription, Status,
    StatusWord,
};
pub use whois::{ClaimRecordBody, WhoisBody};

/// The schema of an ID written in decimal, as a string.
fn decimal_id() -> ObjectBuilder {
    ObjectBuilder::new()
        .schema_type(Type::String)
        .pattern(Some("^[0-9]{1,19}$"))
        .description(Some(
            "An ID in decimal (a string: JavaScript numbers lose precision above 2^53).",
        ))
        .examples(["1724551110457221119"])
}

/// The schema of a string that is one of `names`.
fn one_of_names<'a>(names: impl IntoIterator<Item = &'a str>, description: &str) -> ObjectBuilder {
    ObjectBuilder::new()
        .schema_type(Type::String)
        .enum_values(Some(names))
        .description(Some(description))
}
