//! The calculator functions (decode, encode, to_timestamp, from_timestamp,
//! id_range) on a real server: the worked example both ways, agreement with
//! the real CLI over random IDs, and every function's out-of-range input.

mod common;

use std::io::Write;
use std::process::{Command, Stdio};

use common::{TWITTER_EPOCH_MS, bigint, failure, server, snowmint_bin};

/// The worked example of the format: 1700000000000 ms, datacenter 7,
/// machine 13, sequence 4095 is ID 1724551110457221119, and back.
#[tokio::test]
async fn the_worked_example_both_ways() {
    let (_server, client) = server(&[]).await;
    let id = bigint(
        &client,
        "SELECT snowmint.encode(to_timestamp(1700000000), 7, 13, 4095)",
    )
    .await;
    assert_eq!(id, 1_724_551_110_457_221_119);

    let row = client
        .query_one(
            "SELECT id, (extract(epoch FROM time) * 1000)::bigint, timestamp_ms, datacenter, machine, sequence
             FROM snowmint.decode(1724551110457221119)",
            &[],
        )
        .await
        .expect("decode");
    assert_eq!(row.get::<_, i64>(0), 1_724_551_110_457_221_119);
    assert_eq!(row.get::<_, i64>(1), 1_700_000_000_000);
    assert_eq!(row.get::<_, i64>(2), 1_700_000_000_000);
    assert_eq!(row.get::<_, i32>(3), 7);
    assert_eq!(row.get::<_, i32>(4), 13);
    assert_eq!(row.get::<_, i32>(5), 4095);

    let same_time = client
        .query_one(
            "SELECT snowmint.to_timestamp(1724551110457221119) = to_timestamp(1700000000)",
            &[],
        )
        .await
        .expect("to_timestamp");
    assert!(same_time.get::<_, bool>(0));

    // The smallest ID of that millisecond, and the window of it.
    let first = (1_700_000_000_000 - TWITTER_EPOCH_MS) << 22;
    assert_eq!(
        bigint(
            &client,
            "SELECT snowmint.from_timestamp('2023-11-14T22:13:20.000999Z')"
        )
        .await,
        first
    );
    let range = client
        .query_one(
            "SELECT min, max FROM snowmint.id_range('2023-11-14T22:13:20Z', '2023-11-14T22:13:20.0005Z')",
            &[],
        )
        .await
        .expect("id_range");
    assert_eq!(range.get::<_, i64>(0), first);
    assert_eq!(range.get::<_, i64>(1), first | ((1 << 22) - 1));
}

/// Layouts by name and by spec: discord is the twitter widths with epoch
/// 1420070400000, however it is written.
#[tokio::test]
async fn layouts_by_name_and_by_spec_agree() {
    let (_server, client) = server(&[]).await;
    let discord_first = (1_700_000_000_000_i64 - 1_420_070_400_000) << 22;
    for layout in ["discord", "Discord", "41/5/5/12@1420070400000"] {
        let sql = format!("SELECT snowmint.from_timestamp(to_timestamp(1700000000), '{layout}')");
        assert_eq!(bigint(&client, &sql).await, discord_first, "{layout}");
    }
    let row = client
        .query_one(
            "SELECT timestamp_ms, datacenter, machine, sequence
             FROM snowmint.decode(snowmint.encode(to_timestamp(1700000000), 1, 2, 3, '41/5/5/12@1420070400000'), 'discord')",
            &[],
        )
        .await
        .expect("decode in discord");
    assert_eq!(row.get::<_, i64>(0), 1_700_000_000_000);
    assert_eq!(
        (
            row.get::<_, i32>(1),
            row.get::<_, i32>(2),
            row.get::<_, i32>(3)
        ),
        (1, 2, 3)
    );
}

/// Every family by its own names: `decode_fields` takes a `numeric` (a
/// Discord ID at or above 2^63 does not fit a `bigint`) and answers the
/// fields as `jsonb`; `encode_fields` takes them so and answers a
/// `numeric`.
#[tokio::test]
async fn families_by_their_own_names() {
    let (_server, client) = server(&[]).await;
    // discord.com/developers/docs/reference#snowflakes.
    let row = client
        .query_one(
            "SELECT id::text, timestamp_ms, fields::text,
                    time = '2016-04-30T11:18:25.796Z'::timestamptz
             FROM snowmint.decode_fields(175928847299117063, 'discord')",
            &[],
        )
        .await
        .expect("decode_fields");
    assert_eq!(row.get::<_, String>(0), "175928847299117063");
    assert_eq!(row.get::<_, i64>(1), 1_462_015_105_796);
    assert_eq!(
        row.get::<_, String>(2),
        r#"{"worker": 1, "process": 0, "increment": 7}"#
    );
    assert!(row.get::<_, bool>(3));
    // 2^64 - 1 and 2^63: past any bigint, every field at its largest.
    let row = client
        .query_one(
            "SELECT id::text, timestamp_ms, fields->>'increment'
             FROM snowmint.decode_fields(18446744073709551615, 'discord')",
            &[],
        )
        .await
        .expect("decode_fields of 2^64-1");
    assert_eq!(row.get::<_, String>(0), "18446744073709551615");
    assert_eq!(row.get::<_, i64>(1), 1_420_070_400_000 + (1 << 42) - 1);
    assert_eq!(row.get::<_, String>(2), "4095");
    let row = client
        .query_one(
            "SELECT timestamp_ms FROM snowmint.decode_fields(9223372036854775808, 'discord')",
            &[],
        )
        .await
        .expect("decode_fields of 2^63");
    assert_eq!(row.get::<_, i64>(0), 1_420_070_400_000 + (1 << 41));
    // Sonyflake: 10 ms units, machine in the low 16 bits.
    let ticks = (1_700_000_000_000u64 - 1_409_529_600_000) / 10;
    let row = client
        .query_one(
            "SELECT snowmint.encode_fields('2023-11-14T22:13:20.005Z', '{\"machine\": 513}', 'sonyflake')::text",
            &[],
        )
        .await
        .expect("encode_fields");
    assert_eq!(row.get::<_, String>(0), ((ticks << 24) | 513).to_string());
    let row = client
        .query_one(
            "SELECT snowmint.encode_fields('2016-04-30T11:18:25.796Z', '{\"worker\": 1, \"increment\": 7}', 'discord')::text",
            &[],
        )
        .await
        .expect("encode_fields in discord");
    assert_eq!(row.get::<_, String>(0), "175928847299117063");
    for (sql, state, says) in [
        (
            "SELECT * FROM snowmint.decode_fields(18446744073709551616, 'discord')",
            "22003",
            &["18446744073709551616", "0..=18446744073709551615"][..],
        ),
        (
            "SELECT * FROM snowmint.decode_fields(9223372036854775808)",
            "22003",
            &["0..=9223372036854775807"][..],
        ),
        (
            "SELECT * FROM snowmint.decode_fields(1.5, 'discord')",
            "22P02",
            &["1.5"][..],
        ),
        (
            "SELECT snowmint.encode_fields(now(), '{\"worker\": 32}', 'discord')",
            "22003",
            &["worker 32", "0..=31"][..],
        ),
        (
            "SELECT snowmint.encode_fields(now(), '{\"shard\": 1}', 'discord')",
            "22023",
            &["shard", "worker, process, increment"][..],
        ),
        (
            "SELECT snowmint.encode_fields(now(), '[1]', 'discord')",
            "22023",
            &["[1]", "JSON object"][..],
        ),
    ] {
        let (got_state, message) = failure(&client, sql).await;
        assert_eq!(got_state, state, "{sql}: {message}");
        for needle in says {
            assert!(message.contains(needle), "{sql}: {message}");
        }
    }
}

/// IDs spread over all of 0 ..= 2^63-1, from a fixed seed (splitmix64).
fn random_ids(count: usize, mut seed: u64) -> Vec<i64> {
    (0..count)
        .map(|_| {
            seed = seed.wrapping_add(0x9E37_79B9_7F4A_7C15);
            let mut z = seed;
            z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
            ((z ^ (z >> 31)) >> 1) as i64
        })
        .collect()
}

/// What `snowmint decode --format json` says of `ids`, one JSON value per
/// ID.
fn cli_decode(ids: &[i64], layout: &str) -> Vec<serde_json::Value> {
    let bin = snowmint_bin();
    let mut child = Command::new(&bin)
        .args(["decode", "--format", "json", "--layout", layout])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|error| panic!("cannot run {}: {error}", bin.display()));
    let input: String = ids.iter().map(|id| format!("{id}\n")).collect();
    let mut stdin = child.stdin.take().expect("stdin");
    let writer = std::thread::spawn(move || stdin.write_all(input.as_bytes()));
    let output = child.wait_with_output().expect("snowmint decode");
    writer.join().expect("writer").expect("write IDs");
    assert!(
        output.status.success(),
        "snowmint decode failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    let text = String::from_utf8(output.stdout).expect("UTF-8");
    let values: Vec<serde_json::Value> = match serde_json::from_str(&text) {
        Ok(serde_json::Value::Array(values)) => values,
        _ => text
            .lines()
            .filter(|line| !line.trim().is_empty())
            .map(|line| serde_json::from_str(line).expect("a JSON line"))
            .collect(),
    };
    assert_eq!(values.len(), ids.len(), "one JSON value per ID");
    values
}

/// For 10,000 random IDs (and 1,000 more in the discord layout),
/// `decode_fields` in SQL says what the CLI's `decode --format json` says,
/// fields named as the family names them; `decode` gives the same time.
#[tokio::test]
async fn decode_agrees_with_the_cli() {
    let (_server, client) = server(&[]).await;
    for (layout, count, seed) in [("twitter", 10_000, 15), ("discord", 1_000, 16)] {
        let ids = random_ids(count, seed);
        let rows = client
            .query(
                "SELECT d.id::text, d.timestamp_ms,
                        to_char(d.time AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS.MS\"Z\"'),
                        d.fields::text, o.timestamp_ms
                 FROM unnest($1::bigint[]) WITH ORDINALITY AS u(x, n),
                      snowmint.decode_fields(u.x, $2) AS d, snowmint.decode(u.x, $2) AS o
                 ORDER BY u.n",
                &[&ids, &layout],
            )
            .await
            .expect("decode in SQL");
        let cli = cli_decode(&ids, layout);
        assert_eq!(rows.len(), ids.len());
        for ((row, json), id) in rows.iter().zip(&cli).zip(&ids) {
            let mut sql = serde_json::json!({
                "id": row.get::<_, String>(0),
                "timestamp_ms": row.get::<_, i64>(1),
                "time": row.get::<_, String>(2),
            });
            let fields: serde_json::Value =
                serde_json::from_str(&row.get::<_, String>(3)).expect("jsonb");
            for (name, value) in fields.as_object().expect("an object") {
                sql[name] = value.clone();
            }
            assert_eq!(&sql, json, "{layout} ID {id}");
            assert_eq!(
                row.get::<_, i64>(4),
                row.get::<_, i64>(1),
                "{layout} ID {id}"
            );
        }
    }
}

/// Every function, given a value outside its range, raises an SQL error
/// with SQLSTATE 22003 or 22023 whose message names the value and the
/// range; the connection lives on.
#[tokio::test]
async fn out_of_range_input_is_a_clear_sql_error() {
    let (_server, client) = server(&[]).await;
    let cases: &[(&str, &str, &[&str])] = &[
        (
            "SELECT * FROM snowmint.decode(-1)",
            "22003",
            &["ID -1", "0..=9223372036854775807"],
        ),
        (
            "SELECT * FROM snowmint.decode(1, 'nonsense')",
            "22023",
            &["layout", "nonsense"],
        ),
        (
            "SELECT snowmint.to_timestamp(-9223372036854775808)",
            "22003",
            &["ID -9223372036854775808", "0..=9223372036854775807"],
        ),
        (
            "SELECT snowmint.to_timestamp(1, '40/5/5/12')",
            "22023",
            &["layout", "63"],
        ),
        (
            "SELECT snowmint.from_timestamp('2000-01-01T00:00:00Z')",
            "22003",
            &["946684800000", "1288834974657"],
        ),
        (
            "SELECT snowmint.from_timestamp('2100-01-01T00:00:00Z')",
            "22003",
            &["4102444800000", "..="],
        ),
        (
            "SELECT snowmint.from_timestamp('infinity')",
            "22003",
            &["time infinity"],
        ),
        (
            "SELECT * FROM snowmint.id_range('-infinity', now())",
            "22003",
            &["from_time -infinity"],
        ),
        (
            "SELECT * FROM snowmint.id_range('2024-01-02Z', '2024-01-01Z')",
            "22023",
            &["1704153600000", "1704067200000"],
        ),
        (
            "SELECT * FROM snowmint.id_range('2024-01-01Z', '2090-01-01Z')",
            "22003",
            &["3786912000000", "..="],
        ),
        (
            "SELECT snowmint.encode(to_timestamp(1700000000), 32, 0, 0)",
            "22003",
            &["datacenter 32", "0..=31"],
        ),
        (
            "SELECT snowmint.encode(to_timestamp(1700000000), 0, -1, 0)",
            "22003",
            &["machine -1", "0..=31"],
        ),
        (
            "SELECT snowmint.encode(to_timestamp(1700000000), 0, 0, 4096)",
            "22003",
            &["sequence 4096", "0..=4095"],
        ),
        (
            "SELECT snowmint.encode(to_timestamp(1700000000), 0, 0, 0, '31/10/10/11')",
            "22023",
            &["layout", "63"],
        ),
        (
            // A valid layout whose 31-bit timestamp ends in December 2010.
            "SELECT snowmint.encode(to_timestamp(1700000000), 0, 0, 0, '31/10/10/12')",
            "22003",
            &["1700000000000", "1288834974657..=1290982458304"],
        ),
        (
            "SELECT snowmint.encode('1999-12-31T23:59:59.999Z', 0, 0, 0)",
            "22003",
            &["946684799999", "1288834974657"],
        ),
    ];
    for (sql, code, words) in cases {
        let (got_code, message) = failure(&client, sql).await;
        assert_eq!(&got_code, code, "{sql}: {message}");
        for word in *words {
            assert!(message.contains(word), "{sql}: {message:?} lacks {word:?}");
        }
    }
    assert_eq!(
        bigint(&client, "SELECT 41::bigint").await,
        41,
        "the connection lives on"
    );
}
