//! `snowmint.inspect(text)` on a real server: the known-answer vectors
//! (vectors/vectors.json) read through it, its rows' ranking and times, and
//! texts past its bounds refused with SQLSTATE 22003 naming the bound.

mod common;

use std::path::Path;

use common::{failure, server};
use serde_json::Value;

/// "Now" for every call: 2025-06-15T15:06:40Z.
const NOW: &str = "2025-06-15T15:06:40Z";

fn vectors() -> Value {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../vectors/vectors.json");
    let file: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    assert_eq!(file["version"], 1);
    file
}

/// A row: (token, input, rank, family, time_text, plausibility, fields).
type Row = (i32, String, i32, String, Option<String>, String, Value);

/// The rows of `text`.
async fn rows_of(client: &tokio_postgres::Client, text: &str) -> Vec<Row> {
    client
        .query(
            "SELECT token, input, rank, family, time_text, plausibility, fields::text
             FROM snowmint.inspect($1, $2::text::timestamptz)",
            &[&text, &NOW],
        )
        .await
        .unwrap_or_else(|error| panic!("{}", common::described(&error)))
        .iter()
        .map(|row| {
            let fields: String = row.get(6);
            (
                row.get(0),
                row.get(1),
                row.get(2),
                row.get(3),
                row.get(4),
                row.get(5),
                serde_json::from_str(&fields).unwrap(),
            )
        })
        .collect()
}

#[tokio::test]
async fn every_vector_and_text() {
    let (_server, client) = server(&[]).await;
    let file = vectors();
    let list = file["vectors"].as_array().unwrap();
    let text: String = list
        .iter()
        .map(|v| format!("{}\n", v["input"].as_str().unwrap()))
        .collect();
    let rows = rows_of(&client, &text).await;
    for (number, vector) in list.iter().enumerate() {
        let token = number as i32 + 1;
        let row = rows
            .iter()
            .find(|r| r.0 == token && r.3 == vector["family"].as_str().unwrap())
            .unwrap_or_else(|| {
                panic!(
                    "no {} row for token {token} ({})",
                    vector["family"], vector["input"]
                )
            });
        assert_eq!(row.1, vector["input"].as_str().unwrap());
        assert_eq!(row.4.as_deref(), vector["time"].as_str(), "{row:?}");
        for (name, value) in vector["fields"].as_object().unwrap() {
            assert_eq!(&row.6[name], value, "{name} of {row:?}");
        }
    }
    for entry in file["texts"].as_array().unwrap() {
        let text = entry["text"].as_str().unwrap();
        let best: Vec<_> = rows_of(&client, text)
            .await
            .into_iter()
            .filter(|r| r.2 == 1)
            .collect();
        let expected = entry["tokens"].as_array().unwrap();
        assert_eq!(best.len(), expected.len(), "{text}: {best:?}");
        for (row, expected) in best.iter().zip(expected) {
            assert_eq!(row.1, expected["input"].as_str().unwrap());
            assert_eq!(row.3, expected["family"].as_str().unwrap(), "{text}");
            assert_eq!(row.4.as_deref(), expected["time"].as_str(), "{text}");
        }
    }
}

/// Rows are ranked within each token, the `timestamptz` is the reading's
/// time to the microsecond, and `layout` reads integers as it alone.
#[tokio::test]
async fn rows_rank_and_carry_times() {
    let (_server, client) = server(&[]).await;
    let rows = client
        .query(
            "SELECT token, rank, family, plausibility, time = '2023-11-14T22:13:20Z'::timestamptz, why
             FROM snowmint.inspect('x https://x.com/jack/status/1724551110457221119 1724551110457221119', $1::text::timestamptz)
             ORDER BY token, rank",
            &[&NOW],
        )
        .await
        .unwrap();
    let got: Vec<(i32, i32, String, String, Option<bool>)> = rows
        .iter()
        .map(|r| (r.get(0), r.get(1), r.get(2), r.get(3), r.get(4)))
        .collect();
    assert_eq!(
        got[..2],
        [
            (1, 1, "twitter".to_owned(), "pinned".to_owned(), Some(true)),
            (
                2,
                1,
                "twitter".to_owned(),
                "plausible".to_owned(),
                Some(true)
            ),
        ]
    );
    // The bare number is read as every preset, ranked 1, 2, 3...; the
    // implausible readings (Discord's, in 2028) come last and say why.
    let bare: Vec<_> = got.iter().filter(|row| row.0 == 2).collect();
    assert!(bare.len() >= 10, "{got:?}");
    assert!(
        bare.iter()
            .enumerate()
            .all(|(at, row)| row.1 == at as i32 + 1),
        "{got:?}"
    );
    let implausible: Vec<bool> = bare.iter().map(|row| row.3 == "implausible").collect();
    assert!(implausible.is_sorted(), "{got:?}");
    let discord = got
        .iter()
        .position(|row| row.2 == "discord")
        .expect("Discord's reading");
    assert_eq!(got[discord].3, "implausible");
    assert_eq!(got[discord].4, Some(false));
    assert!(rows[discord].get::<_, String>(5).contains("in the future"));
    // Leaf counts from Twitter's epoch: the same instant.
    assert!(
        got.iter().any(|row| row.2 == "leaf" && row.4 == Some(true)),
        "{got:?}"
    );
    // A TID's microseconds survive in timestamptz.
    let tid = client
        .query_one(
            "SELECT time = '2023-06-30T15:03:01.887007Z'::timestamptz FROM snowmint.inspect('3jzfcijpj2z2a')",
            &[],
        )
        .await
        .unwrap();
    assert!(tid.get::<_, bool>(0));
    // A ULID far past timestamptz's years has its text and no timestamptz.
    let far = client
        .query_one(
            "SELECT time, time_text FROM snowmint.inspect('7ZZZZZZZZZZZZZZZZZZZZZZZZZ')",
            &[],
        )
        .await
        .unwrap();
    assert_eq!(
        far.get::<_, Option<String>>(1).as_deref(),
        Some("+010889-08-02T05:31:50.655Z")
    );
    let families: Vec<String> = client
        .query(
            "SELECT family FROM snowmint.inspect('175928847299117063', layout => 'discord')",
            &[],
        )
        .await
        .unwrap()
        .iter()
        .map(|r| r.get(0))
        .collect();
    assert_eq!(families, ["discord"]);
    let none = client
        .query("SELECT * FROM snowmint.inspect('nothing here')", &[])
        .await
        .unwrap();
    assert!(none.is_empty());
}

#[tokio::test]
async fn bounds_are_named() {
    let (_server, client) = server(&[]).await;
    let (code, message) = failure(
        &client,
        "SELECT * FROM snowmint.inspect(repeat(' ', 1048577))",
    )
    .await;
    assert_eq!(
        (code.as_str(), message.as_str()),
        ("22003", "text length 1048577 is out of range (0..=1048576)")
    );
    let (code, message) = failure(
        &client,
        "SELECT * FROM snowmint.inspect(repeat(E'1724551110457221119\\n', 10001))",
    )
    .await;
    assert_eq!(
        (code.as_str(), message.as_str()),
        ("22003", "token count 10001+ is out of range (0..=10000)")
    );
    let (code, _) = failure(
        &client,
        "SELECT * FROM snowmint.inspect('1', layout => 'nope')",
    )
    .await;
    assert_eq!(code, "22023");
}
