//! The body of `/v1/inspect`: the text's tokens, each serialized as the
//! core writes it (`snowmint::inspect::Token`), the same JSON
//! `snowmint inspect --format json` prints; and the JSON form of a request.

use serde::{Deserialize, Serialize};
use snowmint::format_time;
use snowmint::inspect::{Plausibility, Token};
use utoipa::ToSchema;
use utoipa::openapi::schema::{
    AdditionalProperties, ArrayBuilder, ObjectBuilder, SchemaType, Type,
};

/// The answer of `/v1/inspect`.
#[derive(Debug, Clone, Serialize, ToSchema)]
#[schema(as = Inspection)]
pub struct Inspected {
    /// The "now" the times were judged against (RFC 3339, UTC).
    #[schema(examples("2025-06-15T15:06:40.000Z"))]
    pub now: String,
    /// The text's tokens, in the order they appear.
    #[schema(schema_with = tokens_schema)]
    pub tokens: Vec<Token>,
}

impl Inspected {
    /// The answer for `tokens` judged at `now_ms`.
    pub fn new(now_ms: i64, tokens: Vec<Token>) -> Inspected {
        Inspected {
            now: format_time(now_ms).to_string(),
            tokens,
        }
    }
}

/// `POST /v1/inspect`'s body as JSON.
#[derive(Debug, Clone, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct InspectRequest {
    /// The text, up to 1 MiB.
    #[schema(examples("see <@175928847299117063>"))]
    pub text: String,
}

fn string(description: &str) -> ObjectBuilder {
    ObjectBuilder::new()
        .schema_type(Type::String)
        .description(Some(description))
}

fn nullable_string(description: &str) -> ObjectBuilder {
    ObjectBuilder::new()
        .schema_type(
            [Type::String, Type::Null]
                .into_iter()
                .collect::<SchemaType>(),
        )
        .description(Some(description))
}

fn count(description: &str) -> ObjectBuilder {
    ObjectBuilder::new()
        .schema_type(Type::Integer)
        .minimum(Some(0))
        .description(Some(description))
}

/// The schema of the tokens, as `Token`'s serde form writes them.
fn tokens_schema() -> ArrayBuilder {
    let plausibility = [
        Plausibility::Pinned,
        Plausibility::Plausible,
        Plausibility::Implausible,
    ];
    // A family's own fields sit beside these: small numbers as JSON numbers,
    // the rest (IDs, hex, names) as strings.
    let field = ObjectBuilder::new()
        .schema_type([Type::Integer, Type::String].into_iter().collect::<SchemaType>())
        .description(Some("A field, named as the family names it (worker, sequence, clock_seq...): an integer below 2^53, or a string."));
    let reading = ObjectBuilder::new()
        .description(Some("One reading of the token: a family, its time and fields, how plausible it is and why."))
        .property("family", string("The family: a preset (twitter, discord...), a string family (ulid, uuid-v7, objectid, ksuid, tid, misskey-aid, misskey-aidx, tsid), or discord-timestamp.").examples(["discord"]))
        .required("family")
        .property("time", nullable_string("RFC 3339 in UTC at the family's precision; null for an ID with no time.").examples(["2016-04-30T11:18:25.796Z"]))
        .required("time")
        .property(
            "plausibility",
            ObjectBuilder::new()
                .schema_type(Type::String)
                .enum_values(Some(plausibility.map(Plausibility::name))),
        )
        .required("plausibility")
        .property("why", string("Why it ranks where it does, for people."))
        .required("why")
        .additional_properties(Some(AdditionalProperties::from(field)));
    let token = ObjectBuilder::new()
        .property("input", string("The token as it appears in the text.").examples(["175928847299117063"]))
        .required("input")
        .property("context", nullable_string("Where it was found, when that says what it is (\"user mention\", \"message in a Discord link\").").examples(["user mention"]))
        .required("context")
        .property("start", count("Where it starts in the text, in bytes."))
        .required("start")
        .property("end", count("Where it ends in the text, in bytes (exclusive)."))
        .required("end")
        .property("candidates", ArrayBuilder::new().items(reading).description(Some("Its readings, most plausible first.")))
        .required("candidates");
    ArrayBuilder::new().items(token)
}

#[cfg(test)]
mod tests {
    use snowmint::inspect::Inspector;

    use super::*;

    /// Every key a token and a reading serialize is in the document's
    /// schema (a family's own fields are its additional properties).
    #[test]
    fn the_schema_names_what_tokens_serialize() {
        let document = crate::openapi::document();
        let tokens = &document["components"]["schemas"]["Inspection"]["properties"]["tokens"];
        let declared = &tokens["items"]["properties"];
        let inspector = Inspector::new(1_750_000_000_000);
        let token = inspector.inspect("<@175928847299117063>").next().unwrap();
        let json = serde_json::to_value(Inspected::new(0, vec![token])).unwrap();
        for key in json["tokens"][0].as_object().unwrap().keys() {
            assert!(
                declared.get(key).is_some(),
                "{key} is not in the schema: {tokens}"
            );
        }
        let reading = &declared["candidates"]["items"];
        for key in ["family", "time", "plausibility", "why"] {
            assert!(reading["properties"].get(key).is_some(), "{key}");
            assert!(
                json["tokens"][0]["candidates"][0].get(key).is_some(),
                "{key}"
            );
        }
        assert!(reading["additionalProperties"].is_object());
    }
}
