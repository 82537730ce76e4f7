//! The known-answer vectors (vectors/vectors.json) through the core's
//! inspector: every vector's family reads its input at its time with its
//! fields, and every text's tokens read as their top families. The file
//! itself is checked against its sources by `vectors_sources.rs`.

use std::path::Path;

use serde_json::Value;
use snowmint::inspect::{FieldValue, Inspector, Reading};

/// The file every front end's tests read.
fn vectors() -> Value {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../vectors/vectors.json");
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|err| panic!("cannot read {}: {err}", path.display()));
    let file: Value = serde_json::from_str(&text).expect("vectors.json is JSON");
    assert_eq!(file["format"], "snowmint-vectors");
    assert_eq!(file["version"], 1, "a version this test knows");
    file
}

fn inspector() -> Inspector {
    Inspector::new(1_750_000_000_000)
}

/// A reading's fields as the vectors write them.
fn field_json(value: &FieldValue) -> Value {
    match value {
        FieldValue::Number(n) => Value::from(*n),
        FieldValue::Text(text) => Value::from(text.as_str()),
    }
}

fn time_json(reading: &Reading) -> Value {
    reading
        .time()
        .map_or(Value::Null, |time| Value::from(time.to_string()))
}

#[test]
fn every_vector_reads_as_its_family() {
    let file = vectors();
    let inspector = inspector();
    let list = file["vectors"].as_array().expect("a list of vectors");
    // The floor: at least 500 vectors over at least 15 families,
    // and the counts the file states are the vectors it holds.
    assert!(list.len() >= 500, "{} vectors", list.len());
    let mut counts = std::collections::BTreeMap::<&str, u64>::new();
    for vector in list {
        *counts
            .entry(vector["family"].as_str().unwrap_or("?"))
            .or_default() += 1;
    }
    assert!(counts.len() >= 15, "{} families: {counts:?}", counts.len());
    let stated: std::collections::BTreeMap<&str, u64> = file["counts"]
        .as_object()
        .expect("counts")
        .iter()
        .map(|(family, count)| (family.as_str(), count.as_u64().expect("a count")))
        .collect();
    assert_eq!(stated, counts, "the file's counts");
    // Every preset of the core has vectors of its own.
    for preset in snowmint::Layout::presets() {
        assert!(
            counts.get(preset.name).is_some_and(|&n| n >= 15),
            "{}: {:?} vectors",
            preset.name,
            counts.get(preset.name)
        );
    }
    let mut failures = Vec::new();
    for vector in list {
        let input = vector["input"].as_str().expect("an input");
        let family = vector["family"].as_str().expect("a family");
        let tokens: Vec<_> = inspector.inspect(input).collect();
        let Some(reading) = tokens
            .iter()
            .find(|token| token.input() == input)
            .and_then(|token| token.candidates().iter().find(|r| r.family() == family))
        else {
            failures.push(format!("{family} {input}: no such reading in {tokens:?}"));
            continue;
        };
        if time_json(reading) != vector["time"] {
            failures.push(format!(
                "{family} {input}: time {} (expected {})",
                time_json(reading),
                vector["time"]
            ));
        }
        for (name, expected) in vector["fields"].as_object().expect("fields") {
            let got = reading.field(name).map(field_json);
            if got.as_ref() != Some(expected) {
                failures.push(format!(
                    "{family} {input}: {name} {got:?} (expected {expected})"
                ));
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} vectors failed:\n{}",
        failures.len(),
        list.len(),
        failures.join("\n")
    );
}

#[test]
fn every_text_reads_as_its_top_families() {
    let file = vectors();
    let inspector = inspector();
    for entry in file["texts"].as_array().expect("a list of texts") {
        let text = entry["text"].as_str().expect("a text");
        let tokens: Vec<_> = inspector.inspect(text).collect();
        let expected = entry["tokens"].as_array().expect("tokens");
        assert_eq!(tokens.len(), expected.len(), "{text}: {tokens:#?}");
        for (token, expected) in tokens.iter().zip(expected) {
            let best = token
                .best()
                .unwrap_or_else(|| panic!("{text}: {token:?} has no reading"));
            assert_eq!(token.input(), expected["input"], "{text}");
            assert_eq!(best.family(), expected["family"], "{text}: {token:#?}");
            assert_eq!(time_json(best), expected["time"], "{text}");
        }
    }
}
