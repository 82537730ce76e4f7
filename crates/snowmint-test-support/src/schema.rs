//! Checking JSON values against the OpenAPI document's schemas: the subset
//! of JSON Schema the document uses (types, one of several plain types,
//! `null` as OpenAPI 3.1 writes it
//! (a second type, or a `oneOf` alternative) or as 3.0 did (`nullable`),
//! `allOf`, `enum`, bounds, required and undocumented keys, local `$ref`s).
//!
//! Used by the service's conformance test and the `snowmint` binary's
//! fleet tests.

use serde_json::{Map, Value};

/// Follows a local `$ref`.
pub fn resolve<'a>(document: &'a Value, value: &'a Value) -> &'a Value {
    match value.get("$ref").and_then(Value::as_str) {
        Some(reference) => {
            let pointer = reference
                .strip_prefix('#')
                .unwrap_or_else(|| panic!("non-local $ref {reference}"));
            let target = document
                .pointer(pointer)
                .unwrap_or_else(|| panic!("dangling $ref {reference}"));
            resolve(document, target)
        }
        None => value,
    }
}

/// Whether `schema` (resolved) lets a value be `null`.
fn allows_null(document: &Value, schema: &Value) -> bool {
    let alternatives = schema.get("oneOf").or_else(|| schema.get("anyOf"));
    schema["nullable"] == true
        || schema["type"] == "null"
        || schema["type"]
            .as_array()
            .is_some_and(|types| types.iter().any(|t| t == "null"))
        || alternatives
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .any(|alternative| allows_null(document, resolve(document, alternative)))
}

/// Checks `value` against the subset of JSON Schema the document uses;
/// `at` names the value in panic messages.
pub fn check(document: &Value, schema: &Value, value: &Value, at: &str) {
    let schema = resolve(document, schema);
    if value.is_null() {
        assert!(
            allows_null(document, schema),
            "{at}: null where not nullable"
        );
        return;
    }
    // A non-null value of a `oneOf` with `null`: the other alternative.
    if let Some(alternatives) = schema.get("oneOf").or_else(|| schema.get("anyOf")) {
        let others: Vec<&Value> = alternatives
            .as_array()
            .unwrap()
            .iter()
            .filter(|alternative| resolve(document, alternative)["type"] != "null")
            .collect();
        assert_eq!(
            others.len(),
            1,
            "{at}: unsupported alternatives {alternatives}"
        );
        return check(document, others[0], value, at);
    }
    for part in schema["allOf"].as_array().into_iter().flatten() {
        check(document, part, value, at);
    }
    if let Some(options) = schema.get("enum").and_then(Value::as_array) {
        assert!(options.contains(value), "{at}: {value} not in {options:?}");
    }
    let number = |v: &Value| v.as_f64().unwrap();
    if let Some(min) = schema.get("minimum") {
        assert!(number(value) >= number(min), "{at}: {value} < {min}");
    }
    if let Some(max) = schema.get("maximum") {
        assert!(number(value) <= number(max), "{at}: {value} > {max}");
    }
    // `["integer", "null"]`: the type besides null; `["integer",
    // "string"]` (a field of any family): one of the plain types.
    let kind = match &schema["type"] {
        Value::Array(types) => {
            let others: Vec<&Value> = types.iter().filter(|t| *t != "null").collect();
            if others.len() > 1 {
                let plain = |t: &Value| match t.as_str() {
                    Some("string") => value.is_string(),
                    Some("integer") => value.is_i64() || value.is_u64(),
                    Some("number") => value.is_number(),
                    Some("boolean") => value.is_boolean(),
                    _ => panic!("{at}: unsupported types {types:?}"),
                };
                assert!(
                    others.into_iter().any(plain),
                    "{at}: {value} is none of {types:?}"
                );
                return;
            }
            others[0].as_str()
        }
        kind => kind.as_str(),
    };
    match kind {
        Some("object") => {
            let object = value
                .as_object()
                .unwrap_or_else(|| panic!("{at}: not an object"));
            let empty = Map::new();
            let properties = schema["properties"].as_object().unwrap_or(&empty);
            for required in schema["required"].as_array().into_iter().flatten() {
                let key = required.as_str().unwrap();
                assert!(object.contains_key(key), "{at}: missing {key}");
            }
            for (key, item) in object {
                match (properties.get(key), &schema["additionalProperties"]) {
                    (Some(property), _) => check(document, property, item, &format!("{at}.{key}")),
                    (None, Value::Bool(false)) => panic!("{at}: undocumented key {key}"),
                    (None, Value::Object(_)) => {
                        check(document, &schema["additionalProperties"], item, at)
                    }
                    (None, _) => {}
                }
            }
        }
        Some("array") => {
            let array = value
                .as_array()
                .unwrap_or_else(|| panic!("{at}: not an array"));
            for (i, item) in array.iter().enumerate() {
                check(document, &schema["items"], item, &format!("{at}[{i}]"));
            }
        }
        Some("string") => assert!(value.is_string(), "{at}: {value} is not a string"),
        Some("integer") => assert!(
            value.is_i64() || value.is_u64(),
            "{at}: {value} is not an integer"
        ),
        Some("number") => assert!(value.is_number(), "{at}: {value} is not a number"),
        Some("boolean") => assert!(value.is_boolean(), "{at}: {value} is not a boolean"),
        None => {}
        Some(other) => panic!("{at}: unexpected type {other}"),
    }
}
