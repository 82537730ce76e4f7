//! The bodies of the API's answers, as types.
//!
//! Every JSON answer of the service is one of these, serialized with serde;
//! `/openapi.json` is generated from the same definitions (utoipa's
//! `ToSchema`), so the document describes exactly what is sent.
//!
//! New IDs are [`NewId`] and [`NewIds`], or their `text/plain` forms
//! [`IdText`] and [`IdsText`]; the calculator answers [`DecodedId`],
//! [`IdRange`] and [`LayoutDescription`] (which `snowmint layout --format
//! json` prints too); the node describes itself with [`NodeDescription`]
//! and its [`CoordinatorDescription`], its health with [`Status`], and the
//! holder of an ID with [`WhoisBody`] and its [`ClaimRecordBody`]s;
//! `/v1/inspect` answers [`Inspected`] to a text or an
//! [`InspectRequest`]. Every
//! error is an [`ErrorBody`].
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
    ClockCheckDescription, CoordinatorDescription, FencingState, LeadDescription,
    ListenerDescription, NodeDescription, Status, StatusWord,
};
pub use whois::{ClaimRecordBody, WhoisBody};

/// The schema of an ID written in decimal, as a string.
fn decimal_id() -> ObjectBuilder {
    ObjectBuilder::new()
        .schema_type(Type::String)
        .pattern(Some("^[0-9]{1,20}$"))
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
