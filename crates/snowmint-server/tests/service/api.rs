//! Every endpoint and every error of the API, through the router without a
//! socket (`oneshot`), over a node with a real state file.

use std::collections::HashSet;
use std::sync::Arc;
use std::time::Duration;

use axum::body::Body;
use axum::http::{Request, StatusCode};
use snowmint::{Clock, ClockPolicy, Layout, ManualClock, SystemClock};
use snowmint_fleet::{MarkFile, SlotSource};
use snowmint_test_support::in_process::{
    Answer, NODE, Options, get, get_with, node, node_with, send,
};
use snowmint_test_support::temp::temp_dir;

const TWITTER_EPOCH: i64 = 1_288_834_974_657;
const T: i64 = 1_700_000_000_000;

/// The fields of a Twitter-layout ID, by the formula in README.md.
fn fields(id: u64) -> (i64, u64, u64, u64) {
    (
        (id >> 22) as i64 + TWITTER_EPOCH,
        (id >> 17) & 31,
        (id >> 12) & 31,
        id & 4095,
    )
}

fn id_of(body: &serde_json::Value) -> u64 {
    body["id"]
        .as_str()
        .expect("id is a string")
        .parse()
        .unwrap()
}

/// `/v1/id` answers `{"id":"..."}` with an ID of this node, and the bare
/// number for `Accept: text/plain`; each ID is larger than the last.
#[tokio::test]
async fn one_id_as_json_and_as_text() {
    let node = node().await;
    let before = SystemClock.now_ms();
    let answer = get(&node.app, "/v1/id").await;
    assert_eq!(answer.status, StatusCode::OK);
    assert_eq!(answer.content_type(), "application/json");
    let json = answer.json();
    assert_eq!(json.as_object().unwrap().len(), 1, "{json}");
    let first = id_of(&json);
    let (ts, datacenter, machine, _) = fields(first);
    assert_eq!((datacenter, machine), Layout::TWITTER.pair_of(NODE));
    assert!(
        ts >= before,
        "timestamp {ts} is before the request ({before})"
    );

    let answer = get_with(&node.app, "/v1/id", ("accept", "text/plain")).await;
    assert_eq!(answer.status, StatusCode::OK);
    assert!(answer.content_type().starts_with("text/plain"));
    let second: u64 = answer.body.parse().expect("a bare number");
    assert!(second > first);
}

/// An ID leaves only once the state file's mark covers its timestamp.
#[tokio::test]
async fn the_mark_on_disk_covers_every_id_handed_out() {
    let node = node().await;
    let file = MarkFile::for_node(node.dir.path(), Layout::TWITTER, NODE);
    assert_eq!(file.read().unwrap(), None);
    for _ in 0..3 {
        let id = id_of(&get(&node.app, "/v1/id").await.json());
        let mark = file.read().unwrap().expect("a mark after the first ID");
        assert!(
            fields(id).0 <= mark,
            "ID at {} above mark {mark}",
            fields(id).0
        );
    }
    let answer = get(&node.app, "/v1/ids?count=4096").await;
    let ids = answer.json()["ids"].as_array().unwrap().clone();
    let last: u64 = ids.last().unwrap().as_str().unwrap().parse().unwrap();
    assert!(fields(last).0 <= file.read().unwrap().unwrap());
}

/// `/v1/ids?count=N` gives N distinct, increasing IDs, as JSON or lines.
#[tokio::test]
async fn batches_of_ids() {
    let node = node().await;
    for count in [1usize, 2, 100, 4096] {
        let answer = get(&node.app, &format!("/v1/ids?count={count}")).await;
        assert_eq!(answer.status, StatusCode::OK, "{}", answer.body);
        assert_eq!(answer.content_type(), "application/json");
        let json = answer.json();
        assert_eq!(json.as_object().unwrap().len(), 1);
        let ids: Vec<u64> = json["ids"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_str().unwrap().parse().unwrap())
            .collect();
        assert_eq!(ids.len(), count);
        assert!(ids.windows(2).all(|w| w[0] < w[1]));
        assert!(
            ids.iter()
                .all(|&id| fields(id).1 == Layout::TWITTER.pair_of(NODE).0)
        );
    }
    let answer = get_with(&node.app, "/v1/ids?count=5", ("accept", "text/plain")).await;
    assert!(answer.content_type().starts_with("text/plain"));
    let lines: Vec<u64> = answer.body.lines().map(|l| l.parse().unwrap()).collect();
    assert_eq!(lines.len(), 5);
    assert!(lines.windows(2).all(|w| w[0] < w[1]));
}

/// Bad counts are 400 with the field and the range; never a 5xx.
#[tokio::test]
async fn bad_counts_name_the_field_and_the_range() {
    let node = node().await;
    for (query, code) in [
        ("count=0", "out_of_range"),
        ("count=-1", "out_of_range"),
        ("count=4097", "out_of_range"),
        ("count=18446744073709551616", "out_of_range"),
        ("count=99999999999999999999999999999", "out_of_range"),
        ("count=abc", "invalid_parameter"),
        ("count=", "invalid_parameter"),
        ("count=1.5", "invalid_parameter"),
        ("count=%20", "invalid_parameter"),
        ("count=1&count=2", "invalid_parameter"),
        ("", "missing_parameter"),
    ] {
        let answer = get(&node.app, &format!("/v1/ids?{query}")).await;
        let (got, field, message) = answer.error(StatusCode::BAD_REQUEST);
        assert_eq!(
            (got.as_str(), field.as_deref()),
            (code, Some("count")),
            "{query}"
        );
        if code != "invalid_parameter" || query != "count=1&count=2" {
            assert!(message.contains("1..=4096"), "{query}: {message}");
        }
    }
    let answer = get(&node.app, "/v1/ids?count=1&cout=5").await;
    let (code, field, message) = answer.error(StatusCode::BAD_REQUEST);
    assert_eq!(
        (code.as_str(), field.as_deref()),
        ("unknown_parameter", Some("cout"))
    );
    assert_eq!(message, "unknown parameter \"cout\" (expected count)");

    let answer = get(&node.app, "/v1/id?count=3").await;
    let (code, _, message) = answer.error(StatusCode::BAD_REQUEST);
    assert_eq!(code, "unknown_parameter");
    assert!(message.contains("takes no parameters"), "{message}");
}

/// `/v1/ids/{id}` decodes the worked example of README.md, in any encoding
/// and layout.
#[tokio::test]
async fn decode() {
    let node = node().await;
    let answer = get(&node.app, "/v1/ids/1724551110457221119").await;
    assert_eq!(answer.status, StatusCode::OK);
    let json = answer.json();
    assert_eq!(json["id"], "1724551110457221119");
    assert_eq!(json["timestamp_ms"], T);
    assert_eq!(json["time"], "2023-11-14T22:13:20.000Z");
    assert_eq!(
        (&json["datacenter"], &json["machine"], &json["sequence"]),
        (&7.into(), &13.into(), &4095.into())
    );
    assert_eq!(json["layout"], "twitter");
    assert_eq!(json["encodings"]["hex"], "17eed6190fcedfff");

    let hex = get(&node.app, "/v1/ids/17eed6190fcedfff?encoding=hex").await;
    assert_eq!(hex.json()["id"], "1724551110457221119");
    let base58 = json["encodings"]["base58"].as_str().unwrap();
    let back = get(&node.app, &format!("/v1/ids/{base58}?encoding=base58")).await;
    assert_eq!(back.json()["id"], "1724551110457221119");

    let discord = get(&node.app, "/v1/ids/1724551110457221119?layout=discord").await;
    let expected = (1_724_551_110_457_221_119u64 >> 22) as i64 + 1_420_070_400_000;
    assert_eq!(discord.json()["timestamp_ms"], expected);
    assert_eq!(discord.json()["layout"], "discord");
    let epoch0 = get(&node.app, "/v1/ids/4194304?epoch=0").await.json();
    assert_eq!(
        (&epoch0["timestamp_ms"], &epoch0["sequence"]),
        (&1.into(), &0.into())
    );
    let custom = get(&node.app, "/v1/ids/2049?layout=42/0/10/11@1600000000000").await;
    let custom = custom.json();
    assert_eq!(
        (&custom["machine"], &custom["sequence"]),
        (&1.into(), &1.into())
    );
    assert_eq!(custom["layout"], "42/0/10/11@1600000000000");
}

#[tokio::test]
async fn decode_errors() {
    let node = node().await;
    for (uri, code, field, needle) in [
        (
            "/v1/ids/abc",
            "invalid_parameter",
            "id",
            "0..=9223372036854775807",
        ),
        ("/v1/ids/-1", "out_of_range", "id", "-1 is out of range"),
        (
            "/v1/ids/9223372036854775808",
            "out_of_range",
            "id",
            "0..=9223372036854775807",
        ),
        ("/v1/ids/%FF", "invalid_parameter", "id", "ID in the path"),
        (
            "/v1/ids/12?encoding=base64",
            "invalid_parameter",
            "encoding",
            "base58",
        ),
        (
            "/v1/ids/12?layout=snowflake9000",
            "invalid_layout",
            "layout",
            "twitter, discord",
        ),
        (
            "/v1/ids/12?layout=41/5/5/13",
            "invalid_layout",
            "layout",
            "64 bits, not 63",
        ),
        (
            "/v1/ids/12?epoch=soon",
            "invalid_parameter",
            "epoch",
            "\"soon\"",
        ),
        (
            "/v1/ids/12?epoch=-1",
            "invalid_layout",
            "epoch",
            "before 1970",
        ),
        (
            "/v1/ids/12?epoch=9223372036854775807",
            "invalid_layout",
            "epoch",
            "overflows",
        ),
        (
            "/v1/ids/12?layout=x&layout=y",
            "invalid_parameter",
            "layout",
            "more than once",
        ),
    ] {
        let answer = get(&node.app, uri).await;
        let (got, got_field, message) = answer.error(StatusCode::BAD_REQUEST);
        assert_eq!(
            (got.as_str(), got_field.as_deref()),
            (code, Some(field)),
            "{uri}: {message}"
        );
        assert!(message.contains(needle), "{uri}: {message}");
    }
}

/// `/v1/encode` builds the worked example from Unix ms or RFC 3339.
#[tokio::test]
async fn encode() {
    let node = node().await;
    for timestamp in [
        "1700000000000",
        "2023-11-14T22:13:20Z",
        "2023-11-14T23:13:20.000%2B01:00",
    ] {
        let uri = format!("/v1/encode?timestamp={timestamp}&datacenter=7&machine=13&sequence=4095");
        let answer = get(&node.app, &uri).await;
        assert_eq!(answer.status, StatusCode::OK, "{}", answer.body);
        assert_eq!(answer.json()["id"], "1724551110457221119", "{timestamp}");
    }
    // Another layout's ranges apply: 10 machine bits.
    let answer = get(
        &node.app,
        "/v1/encode?timestamp=1700000000000&datacenter=0&machine=1000&sequence=0&layout=41/0/10/12",
    )
    .await;
    assert_eq!(answer.status, StatusCode::OK, "{}", answer.body);
    assert_eq!(answer.json()["machine"], 1000);
}

#[tokio::test]
async fn encode_errors_name_the_field_and_range() {
    let node = node().await;
    let base = [
        ("timestamp", "1700000000000"),
        ("datacenter", "7"),
        ("machine", "13"),
        ("sequence", "4095"),
    ];
    let with = |name: &str, value: Option<&str>| {
        let query: Vec<String> = base
            .iter()
            .filter_map(|(n, v)| match (*n == name, value) {
                (false, _) => Some(format!("{n}={v}")),
                (true, Some(value)) => Some(format!("{n}={value}")),
                (true, None) => None,
            })
            .collect();
        format!("/v1/encode?{}", query.join("&"))
    };
    for (field, value, code, message) in [
        (
            "datacenter",
            Some("32"),
            "out_of_range",
            "datacenter 32 is out of range (0..=31)",
        ),
        (
            "machine",
            Some("-3"),
            "out_of_range",
            "machine -3 is out of range (0..=31)",
        ),
        (
            "sequence",
            Some("4096"),
            "out_of_range",
            "sequence 4096 is out of range (0..=4095)",
        ),
        (
            "machine",
            Some("x"),
            "invalid_parameter",
            "machine \"x\" is not a number (expected an integer in 0..=31)",
        ),
        (
            "timestamp",
            Some("0"),
            "out_of_range",
            "timestamp 0 is before the epoch 1288834974657 (valid: 1288834974657..=3487858230208)",
        ),
        (
            "timestamp",
            Some("3487858230209"),
            "out_of_range",
            "timestamp 3487858230209 is past the last representable instant 3487858230208 (valid: 1288834974657..=3487858230208)",
        ),
        (
            "sequence",
            None,
            "missing_parameter",
            "parameter sequence is missing (an integer in 0..=4095)",
        ),
    ] {
        let answer = get(&node.app, &with(field, value)).await;
        let (got, got_field, got_message) = answer.error(StatusCode::BAD_REQUEST);
        assert_eq!((got.as_str(), got_field.as_deref()), (code, Some(field)));
        assert_eq!(got_message, message);
    }
    let answer = get(&node.app, &with("timestamp", Some("yesterday"))).await;
    let (code, field, message) = answer.error(StatusCode::BAD_REQUEST);
    assert_eq!(
        (code.as_str(), field.as_deref()),
        ("invalid_parameter", Some("timestamp"))
    );
    assert!(message.contains("RFC 3339"), "{message}");
}

/// Bad input also carries its facts apart from the message: the value as
/// given and the valid range, as strings (the page translates from them).
#[tokio::test]
async fn bad_input_errors_carry_the_value_and_the_range() {
    let node = node().await;
    let last_instant = TWITTER_EPOCH + (1 << 41) - 1;
    let max_id = ((1u64 << 63) - 1).to_string();
    let encode = "/v1/encode?timestamp=1700000000000&machine=13&sequence=4095&datacenter";
    for (uri, field, value, min, max) in [
        (
            format!("{encode}=32"),
            "datacenter",
            Some("32"),
            Some("0"),
            Some("31"),
        ),
        (
            format!("{encode}=x"),
            "datacenter",
            Some("x"),
            Some("0"),
            Some("31"),
        ),
        (
            format!("{encode}=-1"),
            "datacenter",
            Some("-1"),
            Some("0"),
            Some("31"),
        ),
        (
            "/v1/encode?timestamp=1700000000000&datacenter=1&machine=13".to_owned(),
            "sequence",
            None,
            Some("0"),
            Some("4095"),
        ),
        (
            "/v1/encode?timestamp=5&datacenter=1&machine=1&sequence=1".to_owned(),
            "timestamp",
            Some("5"),
            Some("1288834974657"),
            Some(&*last_instant.to_string()),
        ),
        (
            "/v1/encode?timestamp=soon&datacenter=1&machine=1&sequence=1".to_owned(),
            "timestamp",
            Some("soon"),
            None,
            None,
        ),
        (
            "/v1/ids?count=5000".to_owned(),
            "count",
            Some("5000"),
            Some("1"),
            Some("4096"),
        ),
        (
            "/v1/ids/12x".to_owned(),
            "id",
            Some("12x"),
            Some("0"),
            Some(&*max_id),
        ),
        (
            "/v1/ids/ffffffffffffffff?encoding=hex".to_owned(),
            "id",
            Some("ffffffffffffffff"),
            Some("0"),
            Some("7fffffffffffffff"),
        ),
        (
            "/v1/range?from=1700000000001&to=1700000000000".to_owned(),
            "from",
            Some("1700000000001"),
            None,
            Some("1700000000000"),
        ),
    ] {
        let answer = get(&node.app, &uri).await;
        let (_, got_field, _) = answer.error(StatusCode::BAD_REQUEST);
        assert_eq!(got_field.as_deref(), Some(field), "{uri}");
        let error = &answer.json()["error"];
        assert_eq!(error["value"].as_str(), value, "{uri}: {error}");
        assert_eq!(error["min"].as_str(), min, "{uri}: {error}");
        assert_eq!(error["max"].as_str(), max, "{uri}: {error}");
    }
}

/// `/v1/range` gives the smallest and largest ID of a window.
#[tokio::test]
async fn range() {
    let node = node().await;
    let answer = get(
        &node.app,
        "/v1/range?from=2023-11-14T22:13:20Z&to=1700000000999",
    )
    .await;
    assert_eq!(answer.status, StatusCode::OK, "{}", answer.body);
    let json = answer.json();
    let min = ((T - TWITTER_EPOCH) as u64) << 22;
    let max = ((T + 999 - TWITTER_EPOCH) as u64) << 22 | ((1 << 22) - 1);
    assert_eq!(json["min"], min.to_string());
    assert_eq!(json["max"], max.to_string());
    assert_eq!(
        (&json["from_ms"], &json["to_ms"]),
        (&T.into(), &(T + 999).into())
    );
    assert_eq!(json["to"], "2023-11-14T22:13:20.999Z");

    for (query, code, field) in [
        (
            "from=1700000000001&to=1700000000000",
            "empty_window",
            "from",
        ),
        ("to=1700000000000", "missing_parameter", "from"),
        ("from=1700000000000", "missing_parameter", "to"),
        ("from=1700000000000&to=3487858230209", "out_of_range", "to"),
        ("from=5&to=1700000000000", "out_of_range", "from"),
        ("from=noon&to=1700000000000", "invalid_parameter", "from"),
        (
            "from=2023-02-29T00:00:00Z&to=1700000000000",
            "invalid_parameter",
            "from",
        ),
    ] {
        let answer = get(&node.app, &format!("/v1/range?{query}")).await;
        let (got, got_field, _) = answer.error(StatusCode::BAD_REQUEST);
        assert_eq!(
            (got.as_str(), got_field.as_deref()),
            (code, Some(field)),
            "{query}"
        );
    }
}

/// `/v1/layout` describes presets and custom layouts.
#[tokio::test]
async fn layout() {
    let node = node().await;
    let json = get(&node.app, "/v1/layout").await.json();
    assert_eq!(json["layout"], "twitter");
    assert_eq!(json["spec"], "41/5/5/12@1288834974657");
    assert_eq!(json["epoch_ms"], TWITTER_EPOCH);
    assert_eq!(json["last_instant_ms"], TWITTER_EPOCH + (1i64 << 41) - 1);
    assert_eq!(json["last_instant"], "2080-07-10T17:30:30.208Z");
    assert_eq!(
        (&json["ids_per_ms"], &json["node_count"]),
        (&4096.into(), &1024.into())
    );
    assert_eq!(
        (
            &json["timestamp_shift"],
            &json["datacenter_shift"],
            &json["machine_shift"]
        ),
        (&22.into(), &17.into(), &12.into())
    );
    let years = json["years_left"].as_f64().unwrap();
    assert!(years > 0.0 && years < 70.0, "{years}");

    let json = get(&node.app, "/v1/layout?layout=discord").await.json();
    assert_eq!(
        (&json["layout"], &json["epoch_ms"]),
        (&"discord".into(), &1_420_070_400_000i64.into())
    );
    let json = get(
        &node.app,
        "/v1/layout?layout=42/0/10/11&epoch=1600000000000",
    )
    .await
    .json();
    assert_eq!(json["spec"], "42/0/10/11@1600000000000");
    assert_eq!(
        (&json["ids_per_ms"], &json["max_machine"]),
        (&2048.into(), &1023.into())
    );
    // The same facts field by field, as `snowmint layout --format json`
    // lists them: name, bits, shift, largest value.
    let fields: Vec<(&str, u64, u64, u64)> = json["fields"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            (
                f["name"].as_str().unwrap(),
                f["bits"].as_u64().unwrap(),
                f["shift"].as_u64().unwrap(),
                f["max"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        fields,
        [
            ("timestamp", 42, 21, (1 << 42) - 1),
            ("datacenter", 0, 21, 0),
            ("machine", 10, 11, 1023),
            ("sequence", 11, 0, 2047),
        ]
    );

    let answer = get(&node.app, "/v1/layout?layout=40/5/5/12").await;
    let (code, field, message) = answer.error(StatusCode::BAD_REQUEST);
    assert_eq!(
        (code.as_str(), field.as_deref()),
        ("invalid_layout", Some("layout"))
    );
    assert!(message.contains("add up to 62 bits, not 63"), "{message}");
}

/// `/v1/node`, `/healthz`, `/readyz` on a node that may issue.
#[tokio::test]
async fn node_health_and_readiness() {
    let node = node().await;
    let id = id_of(&get(&node.app, "/v1/id").await.json());
    let json = get(&node.app, "/v1/node").await.json();
    assert_eq!(json["state"], "active");
    assert_eq!(json["ready"], true);
    assert_eq!(json["source"], "static");
    assert_eq!(
        (&json["slot"], &json["datacenter"], &json["machine"]),
        (&103.into(), &3.into(), &7.into())
    );
    assert_eq!(json["generation"], 1);
    assert_eq!(json["clock_policy"], "refuse");
    assert_eq!(json["layout"], "twitter");
    let mark = json["high_water_mark_ms"].as_i64().unwrap();
    assert!(mark >= fields(id).0);
    let file = MarkFile::for_node(node.dir.path(), Layout::TWITTER, NODE);
    assert_eq!(json["state_file"], file.path().display().to_string());
    assert_eq!(Some(mark), file.read().unwrap());

    let health = get(&node.app, "/healthz").await;
    assert_eq!(
        (health.status, health.body.as_str()),
        (StatusCode::OK, "{\"status\":\"ok\"}")
    );
    let ready = get(&node.app, "/readyz").await;
    assert_eq!(
        (ready.status, ready.json()["status"].as_str()),
        (StatusCode::OK, Some("ready"))
    );
}

fn retry_after(answer: &Answer) -> u64 {
    let header: u64 = answer.headers["retry-after"]
        .to_str()
        .unwrap()
        .parse()
        .unwrap();
    assert_eq!(answer.json()["error"]["retry_after_s"], header);
    header
}

/// The clock set back: 503 with `Retry-After` from the gap, not ready,
/// counted; issuing resumes when the clock catches up.
#[tokio::test]
async fn clock_behind_is_503_until_it_catches_up() {
    let clock = ManualClock::new(T);
    let node = node_with(Options {
        clock: Arc::new(clock.clone()),
        ..Options::default()
    })
    .await;
    let first = id_of(&get(&node.app, "/v1/id").await.json());
    assert_eq!(fields(first).0, T);
    clock.set(T - 5_000);
    for uri in ["/v1/id", "/v1/ids?count=3", "/readyz"] {
        let answer = get(&node.app, uri).await;
        let (code, field, message) = answer.error(StatusCode::SERVICE_UNAVAILABLE);
        assert_eq!((code.as_str(), field), ("clock_behind", None), "{uri}");
        assert!(message.contains("5000 ms ahead"), "{message}");
        assert!(message.contains("2023-11-14T22:13:20.000Z"), "{message}");
        assert_eq!(retry_after(&answer), 6, "5001 ms, rounded up");
    }
    let node_json = get(&node.app, "/v1/node").await.json();
    assert_eq!(
        (&node_json["state"], &node_json["ready"]),
        (&"active".into(), &false.into())
    );
    let metrics = get(&node.app, "/metrics").await.body;
    assert_eq!(
        metric(
            &metrics,
            "snowmint_requests_refused_total{reason=\"clock_behind\"}"
        ),
        2.0
    );
    assert!(metric(&metrics, "snowmint_clock_regressions_total") >= 2.0);
    assert_eq!(metric(&metrics, "snowmint_node_ready"), 0.0);

    clock.set(T + 1);
    let next = id_of(&get(&node.app, "/v1/id").await.json());
    assert!(next > first);
    assert_eq!(get(&node.app, "/readyz").await.status, StatusCode::OK);
}

/// `borrow` keeps issuing from the last timestamp within its bound; `wait`
/// holds the request until the clock is back, and refuses past its bound.
#[tokio::test]
async fn borrow_and_wait_policies() {
    let clock = ManualClock::new(T);
    let node = node_with(Options {
        clock: Arc::new(clock.clone()),
        policy: ClockPolicy::Borrow {
            max_ahead: Duration::from_secs(2),
        },
        ..Options::default()
    })
    .await;
    let first = id_of(&get(&node.app, "/v1/id").await.json());
    clock.set(T - 10);
    let borrowed = id_of(&get(&node.app, "/v1/id").await.json());
    assert!(borrowed > first && fields(borrowed).0 == T);
    assert_eq!(get(&node.app, "/readyz").await.status, StatusCode::OK);
    clock.set(T - 5_000);
    let answer = get(&node.app, "/v1/id").await;
    assert_eq!(
        answer.error(StatusCode::SERVICE_UNAVAILABLE).0,
        "clock_behind"
    );

    let clock = ManualClock::new(T);
    let node = node_with(Options {
        clock: Arc::new(clock.clone()),
        policy: ClockPolicy::Wait {
            max: Duration::from_secs(30),
        },
        ..Options::default()
    })
    .await;
    let first = id_of(&get(&node.app, "/v1/id").await.json());
    clock.set(T - 200);
    let app = node.app.clone();
    let waiting = tokio::spawn(async move { get(&app, "/v1/id").await });
    tokio::time::sleep(Duration::from_millis(100)).await;
    assert!(
        !waiting.is_finished(),
        "the request should wait for the clock"
    );
    clock.set(T + 1);
    let answer = waiting.await.unwrap();
    assert_eq!(answer.status, StatusCode::OK, "{}", answer.body);
    assert!(id_of(&answer.json()) > first);
    // Beyond the bound: refused at once.
    clock.set(T - 60_000);
    let answer = get(&node.app, "/v1/id").await;
    assert_eq!(
        answer.error(StatusCode::SERVICE_UNAVAILABLE).0,
        "clock_behind"
    );
}

/// A mark in the state file ahead of the clock: nothing at or below it.
#[tokio::test]
async fn a_recorded_mark_ahead_of_the_clock_is_respected() {
    let dir = temp_dir("mark-ahead");
    MarkFile::for_node(dir.path(), Layout::TWITTER, NODE)
        .write(T + 1_000)
        .unwrap();
    let clock = ManualClock::new(T);
    let source =
        Arc::new(snowmint_fleet::StaticSource::new(snowmint::Layout::TWITTER, NODE).unwrap());
    let issuer = snowmint_server::Issuer::start(
        source,
        snowmint_server::IssuerOptions {
            layout: snowmint::Layout::TWITTER,
            clock_policy: ClockPolicy::Refuse,
            clock: Arc::new(clock.clone()),
            state_dir: dir.path().to_owned(),
            mark_step: Duration::from_secs(1),
        },
    )
    .await
    .unwrap();
    let app = snowmint_server::app(snowmint_server::AppState::new(issuer));
    let answer = get(&app, "/v1/id").await;
    assert_eq!(
        answer.error(StatusCode::SERVICE_UNAVAILABLE).0,
        "clock_behind"
    );
    assert_eq!(retry_after(&answer), 2, "1001 ms to wait");
    clock.set(T + 999);
    assert_eq!(
        get(&app, "/v1/id").await.status,
        StatusCode::SERVICE_UNAVAILABLE
    );
    clock.set(T + 1_001);
    let id = id_of(&get(&app, "/v1/id").await.json());
    assert_eq!(fields(id).0, T + 1_001);
}

/// A released (fenced) node refuses with 503 and says it is not ready.
#[tokio::test]
async fn no_claim_is_503() {
    let node = node().await;
    assert_eq!(get(&node.app, "/v1/id").await.status, StatusCode::OK);
    node.source.release().await;
    for uri in ["/v1/id", "/v1/ids?count=2", "/readyz"] {
        let answer = get(&node.app, uri).await;
        let (code, _, message) = answer.error(StatusCode::SERVICE_UNAVAILABLE);
        assert_eq!(code, "no_claim", "{uri}");
        assert!(message.contains("released at shutdown"), "{message}");
        assert_eq!(retry_after(&answer), 1);
    }
    let json = get(&node.app, "/v1/node").await.json();
    assert_eq!(
        (&json["state"], &json["datacenter"]),
        (&"fenced".into(), &serde_json::Value::Null)
    );
    assert_eq!(json["reason"], "released at shutdown");
    assert_eq!(get(&node.app, "/healthz").await.status, StatusCode::OK);
    let metrics = get(&node.app, "/metrics").await.body;
    assert_eq!(metric(&metrics, "snowmint_node_active"), 0.0);
    assert_eq!(metric(&metrics, "snowmint_node_slot"), -1.0);
    assert_eq!(
        metric(
            &metrics,
            "snowmint_requests_refused_total{reason=\"no_claim\"}"
        ),
        2.0
    );
}

/// When the mark cannot be written, no ID goes out.
#[tokio::test]
async fn an_unwritable_state_file_is_503() {
    let node = node().await;
    // The state directory turns into a file: every write fails.
    std::fs::remove_dir_all(node.dir.path()).unwrap();
    std::fs::write(node.dir.path(), "not a directory").unwrap();
    let answer = get(&node.app, "/v1/id").await;
    let (code, _, message) = answer.error(StatusCode::SERVICE_UNAVAILABLE);
    assert_eq!(code, "mark_unwritable");
    assert!(
        message.contains(&node.dir.path().display().to_string()),
        "{message}"
    );
    std::fs::remove_file(node.dir.path()).unwrap();
    std::fs::create_dir(node.dir.path()).unwrap();
    assert_eq!(get(&node.app, "/v1/id").await.status, StatusCode::OK);
}

/// A request that takes longer than the timeout is answered with 503.
#[tokio::test]
async fn slow_requests_time_out() {
    let clock = ManualClock::new(T);
    let node = node_with(Options {
        clock: Arc::new(clock.clone()),
        policy: ClockPolicy::Wait {
            max: Duration::from_secs(30),
        },
        timeout: Duration::from_millis(100),
    })
    .await;
    assert_eq!(get(&node.app, "/v1/id").await.status, StatusCode::OK);
    clock.set(T - 1_000);
    let answer = get(&node.app, "/v1/id").await;
    let (code, _, message) = answer.error(StatusCode::SERVICE_UNAVAILABLE);
    assert_eq!(code, "timeout");
    assert!(message.contains("100 ms"), "{message}");
    assert_eq!(retry_after(&answer), 1);
}

/// Unknown paths, other methods and oversized requests get the same JSON
/// error shape.
#[tokio::test]
async fn not_found_method_not_allowed_and_size_limits() {
    let node = node().await;
    let (code, ..) = get(&node.app, "/v2/id").await.error(StatusCode::NOT_FOUND);
    assert_eq!(code, "not_found");
    // The page's files are served; other names under it are not.
    let (code, ..) = get(&node.app, "/assets/missing.js")
        .await
        .error(StatusCode::NOT_FOUND);
    assert_eq!(code, "not_found");
    let post = send(
        &node.app,
        Request::post("/v1/id").body(Body::from("x")).unwrap(),
    )
    .await;
    let (code, _, message) = post.error(StatusCode::METHOD_NOT_ALLOWED);
    assert_eq!(code, "method_not_allowed");
    assert!(
        message.starts_with("POST is not allowed on /v1/id"),
        "{message}"
    );
    assert_eq!(post.headers["allow"], "GET,HEAD");

    let long = format!(
        "/v1/ids?count={}",
        "1".repeat(snowmint_server::MAX_URI_BYTES)
    );
    let (code, ..) = get(&node.app, &long).await.error(StatusCode::URI_TOO_LONG);
    assert_eq!(code, "uri_too_long");
    let big = send(
        &node.app,
        Request::get("/v1/id")
            .header(
                "content-length",
                (snowmint_server::MAX_BODY_BYTES + 1).to_string(),
            )
            .body(Body::empty())
            .unwrap(),
    )
    .await;
    assert_eq!(
        big.error(StatusCode::PAYLOAD_TOO_LARGE).0,
        "payload_too_large"
    );
}

/// `/metrics` counts IDs and batches as they are issued.
#[tokio::test]
async fn metrics_move_when_ids_are_issued() {
    let node = node().await;
    let text = get(&node.app, "/metrics").await;
    assert!(text.content_type().starts_with("text/plain"));
    assert_eq!(metric(&text.body, "snowmint_ids_issued_total"), 0.0);
    get(&node.app, "/v1/id").await;
    get(&node.app, "/v1/ids?count=10").await;
    get(&node.app, "/v1/ids?count=4096").await;
    let text = get(&node.app, "/metrics").await.body;
    assert_eq!(metric(&text, "snowmint_ids_issued_total"), 4107.0);
    assert_eq!(metric(&text, "snowmint_id_batch_size_count"), 2.0);
    assert_eq!(metric(&text, "snowmint_id_batch_size_sum"), 4106.0);
    assert_eq!(
        metric(&text, "snowmint_id_batch_size_bucket{le=\"16\"}"),
        1.0
    );
    assert_eq!(metric(&text, "snowmint_node_active"), 1.0);
    assert_eq!(metric(&text, "snowmint_node_slot"), 103.0);
    assert_eq!(metric(&text, "snowmint_claim_generation"), 1.0);
    let mark = MarkFile::for_node(node.dir.path(), Layout::TWITTER, NODE)
        .read()
        .unwrap()
        .unwrap();
    assert_eq!(metric(&text, "snowmint_high_water_mark_ms"), mark as f64);
    assert!(text.contains("# TYPE snowmint_sequence_exhaustion_waits_total counter"));
}

/// Many concurrent callers of one router get distinct IDs.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_callers_get_distinct_ids() {
    let node = node().await;
    let tasks: Vec<_> = (0..8)
        .map(|_| {
            let app = node.app.clone();
            tokio::spawn(async move {
                let mut ids = Vec::new();
                for _ in 0..50 {
                    ids.push(id_of(&get(&app, "/v1/id").await.json()));
                    let batch = get(&app, "/v1/ids?count=100").await.json();
                    ids.extend(
                        batch["ids"]
                            .as_array()
                            .unwrap()
                            .iter()
                            .map(|v| v.as_str().unwrap().parse::<u64>().unwrap()),
                    );
                }
                ids
            })
        })
        .collect();
    let mut seen = HashSet::new();
    for task in tasks {
        let ids = task.await.unwrap();
        assert!(
            ids.windows(2).all(|w| w[0] < w[1]),
            "each caller sees increasing IDs"
        );
        for id in ids {
            assert!(seen.insert(id), "duplicate {id}");
        }
    }
    assert_eq!(seen.len(), 8 * 50 * 101);
}

/// The value of a metric line `name value` in Prometheus text.
fn metric(text: &str, name: &str) -> f64 {
    text.lines()
        .find_map(|line| {
            let (key, value) = line.rsplit_once(' ')?;
            (key == name).then(|| value.parse().unwrap())
        })
        .unwrap_or_else(|| panic!("no metric {name} in:\n{text}"))
}

/// The calculator reads every family: Discord's IDs at and above 2^63
/// (as strings), fields named as the family names them, and encoding by
/// those names or by the Twitter-era three.
#[tokio::test]
async fn families_decode_and_encode_by_their_own_names() {
    let node = node().await;
    // discord.com/developers/docs/reference#snowflakes.
    let answer = get(&node.app, "/v1/ids/175928847299117063?layout=discord").await;
    assert_eq!(answer.status, StatusCode::OK, "{}", answer.body);
    let json = answer.json();
    assert_eq!(json["time"], "2016-04-30T11:18:25.796Z");
    assert_eq!(
        json["fields"],
        serde_json::json!({"worker": 1, "process": 0, "increment": 7})
    );
    assert_eq!(
        (json["datacenter"].clone(), json["sequence"].clone()),
        (1.into(), 7.into())
    );
    assert_eq!(json["unit"], "1ms");
    // 2^64 - 1: every field at its largest, the ID a string.
    let answer = get(&node.app, "/v1/ids/18446744073709551615?layout=discord").await;
    assert_eq!(answer.status, StatusCode::OK, "{}", answer.body);
    let json = answer.json();
    assert_eq!(json["id"], "18446744073709551615");
    assert_eq!(json["timestamp_ms"], 1_420_070_400_000i64 + (1 << 42) - 1);
    assert_eq!(
        json["fields"],
        serde_json::json!({"worker": 31, "process": 31, "increment": 4095})
    );
    // The Twitter layout refuses it, with its range.
    let answer = get(&node.app, "/v1/ids/9223372036854775808").await;
    let (code, field, _) = answer.error(StatusCode::BAD_REQUEST);
    assert_eq!(
        (code.as_str(), field.as_deref()),
        ("out_of_range", Some("id"))
    );

    for query in [
        "worker=1&process=0&increment=7",
        "datacenter=1&machine=0&sequence=7",
        "worker=1&machine=0&increment=7",
    ] {
        let uri = format!("/v1/encode?layout=discord&timestamp=1462015105796&{query}");
        let answer = get(&node.app, &uri).await;
        assert_eq!(answer.status, StatusCode::OK, "{uri}: {}", answer.body);
        assert_eq!(answer.json()["id"], "175928847299117063", "{uri}");
    }
    // Sonyflake: 10 ms units, machine in the low 16 bits.
    let answer = get(
        &node.app,
        "/v1/encode?layout=sonyflake&timestamp=2023-11-14T22:13:20.005Z&machine=513&sequence=0",
    )
    .await;
    assert_eq!(answer.status, StatusCode::OK, "{}", answer.body);
    let json = answer.json();
    let ticks = (1_700_000_000_000u64 - 1_409_529_600_000) / 10;
    assert_eq!(json["id"], ((ticks << 24) | 513).to_string());
    assert_eq!(json["time"], "2023-11-14T22:13:20.00Z");
    assert_eq!(
        json["fields"],
        serde_json::json!({"sequence": 0, "machine": 513})
    );

    let discord = "/v1/encode?layout=discord&timestamp=1462015105796";
    for (query, code, field, message) in [
        (
            "worker=32&process=0&increment=0",
            "out_of_range",
            "worker",
            "worker 32 is out of range (0..=31)",
        ),
        (
            "worker=1&increment=0",
            "missing_parameter",
            "process",
            "parameter process is missing (an integer in 0..=31)",
        ),
        (
            "worker=1&datacenter=1&process=0&increment=0",
            "invalid_fields",
            "worker",
            "field worker is given twice (as worker and as datacenter)",
        ),
        (
            "shard=1&worker=1&process=0&increment=0",
            "unknown_parameter",
            "shard",
            "unknown parameter \"shard\" (expected timestamp, layout, epoch, worker, process, increment, datacenter, machine, sequence)",
        ),
    ] {
        let answer = get(&node.app, &format!("{discord}&{query}")).await;
        let (got, got_field, got_message) = answer.error(StatusCode::BAD_REQUEST);
        assert_eq!(
            (got.as_str(), got_field.as_deref()),
            (code, Some(field)),
            "{query}"
        );
        assert_eq!(got_message, message, "{query}");
    }
    // The layout description names each field's role and the unit.
    let answer = get(&node.app, "/v1/layout?layout=sonyflake").await;
    let json = answer.json();
    assert_eq!(json["unit"], "10ms");
    assert_eq!(json["family"], "Sonyflake (sony/sonyflake v1)");
    let roles: Vec<(&str, &str)> = json["fields"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| (f["name"].as_str().unwrap(), f["role"].as_str().unwrap()))
        .collect();
    assert_eq!(
        roles,
        [
            ("timestamp", "time"),
            ("sequence", "sequence"),
            ("machine", "node")
        ]
    );
    assert_eq!(json["mintable"], true);
    assert_eq!(json["js_safe"], false);
}

/// No JSON number of the calculator passes 2^53 - 1, the largest integer
/// a JavaScript number holds: IDs are strings in every layout, and so is
/// any other value past it (only a field wider than 53 bits has one).
#[tokio::test]
async fn json_numbers_stay_javascript_safe() {
    const MAX_SAFE: u64 = (1 << 53) - 1;
    fn numbers(value: &serde_json::Value, found: &mut Vec<serde_json::Number>) {
        match value {
            serde_json::Value::Number(n) => found.push(n.clone()),
            serde_json::Value::Array(items) => items.iter().for_each(|v| numbers(v, found)),
            serde_json::Value::Object(map) => map.values().for_each(|v| numbers(v, found)),
            _ => {}
        }
    }
    let node = node().await;
    let mut uris = Vec::new();
    for preset in Layout::presets() {
        let name = preset.name;
        let max = preset.layout.max_id().as_u64();
        uris.push(format!("/v1/layout?layout={name}"));
        uris.push(format!("/v1/ids/{max}?layout={name}"));
        uris.push(format!("/v1/ids/0?layout={name}"));
    }
    // A custom layout with a 54-bit field: its values and largest value
    // are strings.
    let wide = "time:10/wide:54:opaque@0";
    uris.push(format!("/v1/layout?layout={wide}"));
    uris.push(format!("/v1/ids/18446744073709551615?layout={wide}"));
    for uri in &uris {
        let answer = get(&node.app, uri).await;
        assert_eq!(answer.status, StatusCode::OK, "{uri}: {}", answer.body);
        let json = answer.json();
        let mut found = Vec::new();
        numbers(&json, &mut found);
        for number in found {
            let fits = number.as_u64().is_some_and(|n| n <= MAX_SAFE)
                || number
                    .as_i64()
                    .is_some_and(|n| n.unsigned_abs() <= MAX_SAFE)
                || number.is_f64();
            assert!(fits, "{uri}: {number} in {json}");
        }
        if let Some(id) = json.get("id") {
            assert!(id.is_string(), "{uri}: {json}");
        }
    }
    let answer = get(
        &node.app,
        &format!("/v1/ids/18446744073709551615?layout={wide}"),
    )
    .await;
    let json = answer.json();
    assert_eq!(json["fields"]["wide"], "18014398509481983");
    assert_eq!(json["timestamp_ms"], 1023);
    let answer = get(&node.app, &format!("/v1/layout?layout={wide}")).await;
    assert_eq!(answer.json()["fields"][1]["max"], "18014398509481983");
    assert_eq!(answer.json()["fields"][1]["role"], "opaque");
}
