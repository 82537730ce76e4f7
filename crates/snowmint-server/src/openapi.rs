//! The OpenAPI 3.1 description of the API (`/openapi.json`), generated.
//!
//! Nothing here is written by hand but prose: each operation is declared
//! on its handler (`#[utoipa::path]` in `api/`), each body is the type the
//! handler answers with ([`crate::body`]), and this module gathers them
//! with the parts the handlers share: the error responses, the `layout=`
//! and `epoch=` parameters, and the document's own header. Tests check that
//! the document lists exactly the routes of [`routes`], and that every
//! answer matches its schema.
//!
//! With a token file the node serves the document of its scope
//! ([`document_for`]): the operations the scope guards carry the
//! `bearerAuth` security requirement and a 401 answer. The scheme itself
//! is declared in every document.
//!
//! [`routes`]: crate::routes

use std::sync::LazyLock;

use serde_json::Value;
use snowmint::Encoding;
use utoipa::openapi::RefOr;
use utoipa::openapi::schema::{ObjectBuilder, Schema, Type};
use utoipa::{IntoParams, Modify, OpenApi, PartialSchema, ToResponse, ToSchema};

use crate::api;
use crate::auth::AuthScope;
use crate::body::ErrorBody;

/// The document: header, tags, every operation (the schemas they use are
/// gathered from them), the shared responses.
#[derive(OpenApi)]
#[openapi(
    info(
        title = "snowmint",
        description = "Twitter-style Snowflake IDs: a service that issues them and a calculator that explains them. IDs are 63-bit integers written as decimal strings. Every error answer is `{\"error\":{\"code\",\"message\",\"field\"?,\"value\"?,\"min\"?,\"max\"?,\"readable_as\"?,\"retry_after_s\"?}}`: bad input is a 4xx naming the parameter and its range; refusing to issue is a 503 with `Retry-After`. Unknown and repeated query parameters are rejected on /v1/ endpoints.",
        license(name = "MIT OR Apache-2.0"),
    ),
    tags(
        (name = "issue", description = "New IDs from this node."),
        (name = "calculator", description = "Decode, encode and window any layout's IDs; nothing is issued."),
        (name = "service", description = "The node and the process."),
        (name = "leaf", description = "Leaf's HTTP API, for clients moving from Leaf: new IDs as bare text, keys ignored."),
    ),
    paths(
        api::issue::next_id,
        api::issue::next_ids,
        api::calc::decode,
        api::calc::encode,
        api::calc::range,
        api::calc::layout,
        api::inspect::get,
        api::inspect::post,
        api::status::node,
        api::whois::whois,
        api::status::healthz,
        api::status::readyz,
        api::status::metrics,
        api::status::openapi,
        api::leaf::next_id,
        api::leaf::decode,
    ),
    components(
        schemas(ErrorBody),
        responses(BadRequest, NotFound, UriTooLong, TooManyRequests, Unavailable, Unauthorized),
    ),
    modifiers(&ListParameters, &BearerScheme),
)]
struct ApiDoc;

static TEXT: LazyLock<String> = LazyLock::new(|| document().to_string());
static TEXT_ISSUE: LazyLock<String> =
    LazyLock::new(|| document_for(Some(AuthScope::Issue)).to_string());
static TEXT_ALL: LazyLock<String> =
    LazyLock::new(|| document_for(Some(AuthScope::All)).to_string());

/// The name of the security scheme in the document.
pub const BEARER_SCHEME: &str = "bearerAuth";

/// The document, as JSON.
///
/// # Examples
///
/// ```
/// let document = snowmint_server::openapi::document();
/// assert!(document["paths"]["/v1/id"]["get"].is_object());
/// assert_eq!(document["info"]["version"], env!("CARGO_PKG_VERSION"));
/// ```
pub fn document() -> Value {
    serde_json::to_value(ApiDoc::openapi()).unwrap_or_else(|error| {
        // Serializing a document of strings and maps cannot fail; an
        // answer beats a panic all the same.
        serde_json::json!({ "openapi": "3.1.0", "error": error.to_string() })
    })
}

/// The document of a node whose tokens guard `scope` (`None`: a node
/// without tokens): every operation the scope guards requires
/// [`BEARER_SCHEME`] and may answer 401.
///
/// # Examples
///
/// ```
/// use snowmint_server::auth::AuthScope;
/// use snowmint_server::openapi::document_for;
///
/// let document = document_for(Some(AuthScope::Issue));
/// assert_eq!(document["paths"]["/v1/id"]["get"]["security"][0]["bearerAuth"], serde_json::json!([]));
/// assert!(document["paths"]["/v1/layout"]["get"]["security"].is_null());
/// assert!(document["paths"]["/healthz"]["get"]["responses"]["401"].is_null());
/// ```
pub fn document_for(scope: Option<AuthScope>) -> Value {
    let mut document = document();
    let Some(scope) = scope else {
        return document;
    };
    if let Some(paths) = document["paths"].as_object_mut() {
        for (route, item) in paths {
            if !scope.guards_http(route) {
                continue;
            }
            let Some(item) = item.as_object_mut() else {
                continue;
            };
            for operation in item.values_mut().filter_map(Value::as_object_mut) {
                operation.insert(
                    "security".to_owned(),
                    serde_json::json!([{ BEARER_SCHEME: [] }]),
                );
                if let Some(responses) = operation
                    .get_mut("responses")
                    .and_then(Value::as_object_mut)
                {
                    responses.insert(
                        "401".to_owned(),
                        serde_json::json!({ "$ref": "#/components/responses/Unauthorized" }),
                    );
                }
            }
        }
    }
    document
}

/// The document as served by a node without tokens.
pub fn document_text() -> &'static str {
    &TEXT
}

/// The document as served by a node whose tokens guard `scope`.
pub fn document_text_for(scope: Option<AuthScope>) -> &'static str {
    match scope {
        None => &TEXT,
        Some(AuthScope::Issue) => &TEXT_ISSUE,
        Some(AuthScope::All) => &TEXT_ALL,
    }
}

/// Declares the bearer scheme, used by the operations a node's tokens
/// guard ([`document_for`]).
struct BearerScheme;

impl Modify for BearerScheme {
    fn modify(&self, openapi: &mut utoipa::openapi::OpenApi) {
        use utoipa::openapi::security::{HttpAuthScheme, HttpBuilder, SecurityScheme};
        let components = openapi.components.get_or_insert_with(Default::default);
        components.add_security_scheme(
            BEARER_SCHEME,
            SecurityScheme::Http(
                HttpBuilder::new()
                    .scheme(HttpAuthScheme::Bearer)
                    .description(Some(
                        "A token of the node's token file (--auth-token-file), as `Authorization: Bearer <token>`. Required by /v1/id, /v1/ids and /v1/node with --auth-scope issue (the default), by every endpoint but /healthz and /readyz with --auth-scope all, by none without a token file.",
                    ))
                    .build(),
            ),
        );
    }
}

/// Writes `"parameters": []` into operations that take none, so that
/// clients read every operation's list the same way.
struct ListParameters;

impl Modify for ListParameters {
    fn modify(&self, openapi: &mut utoipa::openapi::OpenApi) {
        for item in openapi.paths.paths.values_mut() {
            for operation in [&mut item.get, &mut item.head].into_iter().flatten() {
                operation.parameters.get_or_insert_with(Vec::new);
            }
        }
    }
}

/// Bad input: the message names the parameter, the value and the valid
/// range; `field` names the parameter.
#[derive(ToResponse)]
#[expect(dead_code, reason = "describes ApiError's 400 answers; never built")]
pub(crate) struct BadRequest(ErrorBody);

/// No such endpoint.
#[derive(ToResponse)]
#[expect(dead_code, reason = "describes ApiError's 404 answers; never built")]
pub(crate) struct NotFound(ErrorBody);

/// No bearer token this node accepts: missing, malformed (not one
/// `Authorization: Bearer <token>`) or unknown.
#[derive(ToResponse)]
#[response(headers(
    ("WWW-Authenticate" = String, description = "`Bearer realm=\"snowmint\"`, with `error=\"invalid_token\"` for an unknown token and `error=\"invalid_request\"` for a malformed header.")
))]
#[expect(dead_code, reason = "describes the 401 answers; never built")]
pub(crate) struct Unauthorized(ErrorBody);

/// The request target is longer than 8192 bytes.
#[derive(ToResponse)]
#[expect(dead_code, reason = "describes ApiError's 414 answers; never built")]
pub(crate) struct UriTooLong(ErrorBody);

/// The node may not issue IDs now (clock behind, no claim, high-water mark
/// not writable, request timeout). Try again after `Retry-After` seconds.
#[derive(ToResponse)]
#[response(headers(
    ("Retry-After" = inline(RetryAfter), description = "Seconds until a retry is worth it (at least 1).")
))]
#[expect(dead_code, reason = "describes ApiError's 503 answers; never built")]
pub(crate) struct Unavailable(ErrorBody);

/// Too many look-ups: this node reads the coordinator for them at a
/// bounded rate, and a client beyond it is told `busy`. Try again after
/// `Retry-After` seconds.
#[derive(ToResponse)]
#[response(headers(
    ("Retry-After" = inline(RetryAfter), description = "Seconds until a retry is worth it (at least 1).")
))]
#[expect(dead_code, reason = "describes ApiError's 429 answers; never built")]
pub(crate) struct TooManyRequests(ErrorBody);

/// The schema of `Retry-After`: whole seconds, at least 1.
struct RetryAfter;

impl PartialSchema for RetryAfter {
    fn schema() -> RefOr<Schema> {
        ObjectBuilder::new()
            .schema_type(Type::Integer)
            .minimum(Some(1))
            .into()
    }
}

impl ToSchema for RetryAfter {}

/// The layout parameters of the calculator, read by `Params::layout`.
#[derive(IntoParams)]
#[into_params(parameter_in = Query)]
#[expect(dead_code, reason = "describes the parameters; Params reads them")]
pub(crate) struct LayoutParams {
    /// The layout: `twitter` (default), `discord`, or widths `T/D/M/S`
    /// adding up to 63, each optionally followed by `@EPOCH` (Unix
    /// milliseconds or RFC 3339).
    #[param(default = "twitter", example = "discord", nullable = false)]
    layout: Option<String>,
    /// A custom epoch on top of the layout: Unix milliseconds
    /// (`1288834974657`) or RFC 3339 (`2010-11-04T01:42:54.657Z`), not
    /// before 1970.
    #[param(
        pattern = "^(-?[0-9]+|[0-9]{4}-[0-9]{2}-[0-9]{2}[Tt ][0-9]{2}:[0-9]{2}:[0-9]{2}(\\.[0-9]+)?([Zz]|[+-][0-9]{2}:[0-9]{2}))$",
        example = "2015-01-01T00:00:00Z",
        nullable = false
    )]
    epoch: Option<String>,
}

/// The parameters of `/v1/inspect` besides its text, read by
/// `Params::inspect`.
#[derive(IntoParams)]
#[into_params(parameter_in = Query)]
#[expect(dead_code, reason = "describes the parameters; Params reads them")]
pub(crate) struct InspectParams {
    /// When "now" is, for judging times in the future: `now` (the node's
    /// clock, the default), Unix milliseconds or RFC 3339.
    #[param(value_type = Option<TimeParam>, nullable = false)]
    now: Option<String>,
    /// Read integers as this layout alone (a preset, or widths `T/D/M/S`
    /// with `@EPOCH`) rather than as every preset.
    #[param(example = "discord", nullable = false)]
    layout: Option<String>,
    /// A custom epoch on top of the layout (the node's, without
    /// `layout`): Unix milliseconds or RFC 3339, not before 1970.
    #[param(
        pattern = "^(-?[0-9]+|[0-9]{4}-[0-9]{2}-[0-9]{2}[Tt ][0-9]{2}:[0-9]{2}:[0-9]{2}(\\.[0-9]+)?([Zz]|[+-][0-9]{2}:[0-9]{2}))$",
        example = "2015-01-01T00:00:00Z",
        nullable = false
    )]
    epoch: Option<String>,
    /// Keep this many readings of each token, the most plausible (all of
    /// them by default): `top=1` gives the best reading of each.
    #[param(minimum = 1, maximum = 64, example = 1, nullable = false)]
    top: Option<u64>,
}

/// Unix milliseconds or RFC 3339, as `snowmint::parse_time` reads them
/// (also written out in `LayoutParams`'s attribute, which takes only a
/// literal; a test checks that the two agree).
const INSTANT: &str = "^(-?[0-9]+|[0-9]{4}-[0-9]{2}-[0-9]{2}[Tt ][0-9]{2}:[0-9]{2}:[0-9]{2}(\\.[0-9]+)?([Zz]|[+-][0-9]{2}:[0-9]{2}))$";

/// The schema of the `encoding` parameter: an encoding's name.
pub(crate) struct EncodingParam;

impl PartialSchema for EncodingParam {
    fn schema() -> RefOr<Schema> {
        ObjectBuilder::new()
            .schema_type(Type::String)
            .enum_values(Some(Encoding::ALL.map(Encoding::name)))
            .default(Some(Encoding::Decimal.name().into()))
            .into()
    }
}

impl ToSchema for EncodingParam {}

/// The schema of an instant parameter: `now` (any case), Unix milliseconds
/// or RFC 3339, as `snowmint::parse_instant` reads them.
pub(crate) struct TimeParam;

impl PartialSchema for TimeParam {
    fn schema() -> RefOr<Schema> {
        ObjectBuilder::new()
            .schema_type(Type::String)
            .pattern(Some(format!(
                "^([Nn][Oo][Ww]|{})$",
                &INSTANT[1..INSTANT.len() - 1]
            )))
            .examples(["2023-11-14T22:13:20.000Z"])
            .into()
    }
}

impl ToSchema for TimeParam {}

/// The schema of the document itself: a JSON object.
pub(crate) struct Document;

impl PartialSchema for Document {
    fn schema() -> RefOr<Schema> {
        ObjectBuilder::new().schema_type(Type::Object).into()
    }
}

impl ToSchema for Document {}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Refusal;

    /// The epoch parameter is described, with the instants' pattern.
    #[test]
    fn instant_patterns_agree() {
        let document = document();
        let epoch = document["paths"]["/v1/layout"]["get"]["parameters"]
            .as_array()
            .unwrap()
            .iter()
            .find(|p| p["name"] == "epoch")
            .unwrap();
        assert_eq!(epoch["schema"]["pattern"], INSTANT);
        assert!(epoch["description"].as_str().unwrap().contains("RFC 3339"));
    }

    /// The limits the document states are the ones the code applies.
    #[test]
    fn stated_limits_are_the_codes() {
        let document = document();
        let count = &document["paths"]["/v1/ids"]["get"]["parameters"][0];
        assert_eq!(count["name"], "count");
        assert_eq!(count["schema"]["minimum"], 1);
        assert_eq!(count["schema"]["maximum"], snowmint_fleet::MAX_BATCH);
        let ids = &document["components"]["schemas"]["Ids"]["properties"]["ids"];
        assert_eq!(ids["maxItems"], snowmint_fleet::MAX_BATCH);
        let too_long = &document["components"]["responses"]["UriTooLong"]["description"];
        assert!(
            too_long
                .as_str()
                .unwrap()
                .contains(&api::MAX_URI_BYTES.to_string()),
            "{too_long}"
        );
    }

    /// Every refusal code is among the documented error codes.
    #[test]
    fn every_refusal_code_is_documented() {
        let document = document();
        let codes =
            document["components"]["schemas"]["ErrorDetails"]["properties"]["code"]["description"]
                .as_str()
                .unwrap()
                .to_owned();
        // `would_block` is the embedded issuer's non-blocking answer: the
        // service's handlers wait for the mark instead, so never send it.
        let served = Refusal::CODES.into_iter().filter(|c| *c != "would_block");
        for code in served.chain(["timeout"]) {
            assert!(codes.contains(code), "{code} is not in {codes:?}");
        }
    }

    /// The served text is the document.
    #[test]
    fn the_text_is_the_document() {
        let served: Value = serde_json::from_str(document_text()).unwrap();
        assert_eq!(served, document());
        assert_eq!(served["openapi"], "3.1.0");
    }
}
