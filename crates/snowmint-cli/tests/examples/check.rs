//! Comparing what a command did with what its example shows.
//!
//! Output is compared exactly (with snapbox, which also reads trycmd's
//! `...` line as "any lines here"), except for the examples in
//! [`VARYING`], whose output changes with the clock: there both the real
//! output and the output shown must match the example's pattern, so that
//! the sample in the documentation is one the command could print.

use regex::Regex;
use snapbox::{Assert, Data};

use crate::transcript::Example;

/// What a command did.
#[derive(Debug)]
pub struct Outcome {
    /// Its exit code; `None` if a signal ended it.
    pub code: Option<i32>,
    /// Its standard output and standard error, interleaved as written.
    pub output: String,
}

/// The examples whose output depends on the clock, by command as shown,
/// with the pattern of that output. In a pattern, `[ID]` is a decimal ID,
/// `[BASE58]` an ID in base58, `[MS]` Unix milliseconds, `[TIME]` an RFC
/// 3339 UTC time with milliseconds, `[YEARS]` a number of years with two
/// decimals, `[..]` anything within a line; everything else stands for
/// itself.
pub const VARYING: &[(&str, &str)] = &[
    // snowmint --help, README.md
    (
        "snowmint generate --datacenter 1 --machine 2 --count 3",
        "[ID]\n[ID]\n[ID]",
    ),
    // snowmint encode --help
    (
        "snowmint encode --timestamp now --datacenter 0 --machine 0 --sequence 0",
        "[ID]",
    ),
    // snowmint generate --help
    ("snowmint generate --datacenter 1 --machine 2", "[ID]"),
    (
        "snowmint generate --datacenter 1 --machine 2 --count 3 --output base58",
        "[BASE58]\n[BASE58]\n[BASE58]",
    ),
    (
        "snowmint generate --layout sonyflake --machine 513",
        "[ID]",
    ),
    (
        "snowmint generate --layout discord --field worker=1 --field process=0",
        "[ID]",
    ),
    // docs/layouts.md
    (
        "snowmint generate --layout sonyflake --machine 513 --count 3",
        "[ID]\n[ID]\n[ID]",
    ),
    // snowmint range --help
    (
        "snowmint range --from 1700000000000 --to now",
        "\
from  2023-11-14T22:13:20.000Z
to    [TIME]
min   1724551110456246272
max   [ID]",
    ),
    // snowmint layout --help
    (
        "snowmint layout",
        "\
layout        twitter
epoch         1288834974657 (2010-11-04T01:42:54.657Z)
last instant  3487858230208 (2080-07-10T17:30:30.208Z)
years left    [YEARS]

field       bits  shift  max
timestamp     41     22  2199023255551 ms (69.7 years)
datacenter     5     17  31
machine        5     12  31
sequence      12      0  4095

nodes         1024 (datacenter x machine)
IDs per ms    4096 per node (4096000 per second)",
    ),
    (
        "snowmint layout --layout 42/0/10/11@2024-01-01T00:00:00Z",
        "\
layout        42/0/10/11@1704067200000
epoch         1704067200000 (2024-01-01T00:00:00.000Z)
last instant  6102113711103 (2163-05-15T07:35:11.103Z)
years left    [YEARS]

field       bits  shift  max
timestamp     42     21  4398046511103 ms (139.4 years)
datacenter     0     21  0
machine       10     11  1023
sequence      11      0  2047

nodes         1024 (datacenter x machine)
IDs per ms    2048 per node (2048000 per second)",
    ),
    // README.md, against the quick start's node (datacenter 3, machine 7)
    ("curl -s localhost:8080/v1/id", r#"{"id":"[ID]"}"#),
    (
        "curl -s -H 'Accept: text/plain' localhost:8080/v1/id | snowmint decode",
        "id          [ID]\ntimestamp   [MS]\ntime        [TIME]\ndatacenter  3\nmachine     7\nsequence    [..]",
    ),
    ("curl -s localhost:8080/api/snowflake/get/order", "[ID]"),
    // docs/service.md, against its node (datacenter 4, machine 2)
    ("curl -s localhost:8090/v1/id", r#"{"id":"[ID]"}"#),
    ("curl -s -H 'Accept: text/plain' localhost:8090/v1/id", "[ID]"),
    ("curl -s localhost:8090/api/snowflake/get/order", "[ID]"),
    (
        "curl -s 'localhost:8090/v1/ids?count=3'",
        r#"{"ids":["[ID]","[ID]","[ID]"]}"#,
    ),
    ("curl -s 'localhost:8090/v1/layout?layout=discord'", DISCORD),
    // docs/layouts.md
    (
        "snowmint layout --layout time:39/sequence:8/machine:16@2014-09-01T00:00:00Z,10ms",
        "\
layout        sonyflake
epoch         1409529600000 (2014-09-01T00:00:00.000Z)
last instant  6907087738879 (2188-11-16T03:28:58.879Z)
years left    [YEARS]

field       bits  shift  max
timestamp     39     24  549755813887 x 10ms (174.2 years)
sequence       8     16  255
machine       16      0  65535

nodes         65536 (machine)
IDs per ms    25 per node (25600 per second)",
    ),
    (
        "curl -s localhost:8090/v1/node",
        r#"{"state":"active","ready":true,"reason":null,"source":"static","slot":130,"datacenter":4,"machine":2,"generation":1,"claim_valid_for_ms":null,"claim_floor_ms":null,"claim_details":{},"layout":"twitter","spec":"41/5/5/12@1288834974657","epoch_ms":1288834974657,"clock_policy":"refuse","clock_max_ms":null,"clock_ms":[MS],"high_water_mark_ms":[MS],"high_water_mark":"[TIME]","last_timestamp_ms":[MS],"lead_ms":{"current":0.0,"max":0.0},"state_file":"/var/lib/snowmint/node-dc4-m2.mark","coordinator":null,"listeners":[{"name":"http","address":"[..]","tls":false,"client_certificates":false,"tokens":false,"open":true}]}"#,
    ),
    (
        "snowmint serve --datacenter 4 --machine 2 --state-dir /var/lib/snowmint --listen 127.0.0.1:0",
        "[..]Z  INFO snowmint_server::serve: snowmint serve [..] starting on 127.0.0.1:[..] as datacenter 4 (from --datacenter) machine 2 (from --machine), state directory /var/lib/snowmint (from --state-dir), layout twitter, clock policy refuse
error: datacenter 4 machine 2 is already being served from the state directory /var/lib/snowmint by process 4242, which holds the lock file /var/lib/snowmint/node-dc4-m2.lock; two processes issuing as one node would issue the same IDs, so this one will not. Stop process 4242, or give this one another node or another state directory",
    ),
    (
        "cat /var/lib/snowmint/node-dc4-m2.mark",
        "# snowmint high-water mark: no ID at or below this instant may be issued again
high_water_ms = [MS]
high_water = \"[TIME]\"",
    ),
];

/// The discord layout described in JSON, by `snowmint layout` and by
/// `GET /v1/layout` alike.
const DISCORD: &str = r#"{"layout":"discord","spec":"time:42/worker:5:node/process:5:node/increment:12:sequence@1420070400000","epoch_ms":1420070400000,"epoch":"2015-01-01T00:00:00.000Z","timestamp_bits":42,"datacenter_bits":5,"machine_bits":5,"sequence_bits":12,"timestamp_shift":22,"datacenter_shift":17,"machine_shift":12,"max_datacenter":31,"max_machine":31,"max_sequence":4095,"ids_per_ms":4096,"node_count":1024,"last_instant_ms":5818116911103,"last_instant":"2154-05-15T07:35:11.103Z","years_left":[YEARS],"fields":[{"name":"timestamp","bits":42,"shift":22,"max":4398046511103,"role":"time"},{"name":"worker","bits":5,"shift":17,"max":31,"role":"node"},{"name":"process","bits":5,"shift":12,"max":31,"role":"node"},{"name":"increment","bits":12,"shift":0,"max":4095,"role":"sequence"}],"family":"Discord snowflakes","unit":"1ms","unit_us":1000,"bits":64,"max_id":"18446744073709551615","js_safe":false,"ids_per_second":4096000,"mintable":true}"#;

/// Whether `example` did what it shows: its exit status, and its output
/// (exactly, or as its pattern says); else what differs.
pub fn check(example: &Example, outcome: &Outcome) -> Result<(), String> {
    let output = outcome.output.trim_end_matches('\n');
    if !example.status.matches(outcome.code) {
        return Err(format!(
            "exit status {:?}, shown {:?}; the output was:\n{output}",
            outcome.code, example.status
        ));
    }
    match pattern_of(&example.command) {
        Some(pattern) => {
            let regex = regex_of(pattern);
            if !regex.is_match(&example.output) {
                return Err(format!(
                    "the output shown does not have the shape of the real one \
                     (its pattern in check::VARYING):\n{}",
                    difference(&example.output, pattern)
                ));
            }
            if !regex.is_match(output) {
                return Err(format!(
                    "the output does not match its pattern in check::VARYING:\n{}",
                    difference(output, pattern)
                ));
            }
            Ok(())
        }
        None => Assert::new()
            .normalize_paths(false)
            .try_eq(
                Some(&"output"),
                Data::text(output.to_owned()),
                Data::text(example.output.clone()),
            )
            .map_err(|error| error.to_string()),
    }
}

/// The pattern of a command whose output changes with the clock.
pub fn pattern_of(command: &str) -> Option<&'static str> {
    VARYING
        .iter()
        .find(|(shown, _)| *shown == command)
        .map(|(_, pattern)| *pattern)
}

/// The whole-text regex of a pattern of [`VARYING`].
fn regex_of(pattern: &str) -> Regex {
    let hole = Regex::new(r"\[([A-Z0-9]+|\.\.)\]").unwrap();
    let mut regex = String::from("^");
    let mut rest = 0;
    for found in hole.captures_iter(pattern) {
        let whole = found.get(0).unwrap();
        regex.push_str(&regex::escape(&pattern[rest..whole.start()]));
        regex.push_str(match &found[1] {
            "ID" => "[0-9]{1,19}",
            "BASE58" => "[1-9A-HJ-NP-Za-km-z]{1,11}",
            "MS" => "[0-9]{13}",
            "TIME" => r"[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{3}Z",
            "YEARS" => r"[0-9]+\.[0-9]{2}",
            ".." => r"[^\n]*",
            other => panic!("check::VARYING: no hole [{other}] (see its doc comment)"),
        });
        rest = whole.end();
    }
    regex.push_str(&regex::escape(&pattern[rest..]));
    regex.push('$');
    Regex::new(&regex).unwrap()
}

/// snapbox's picture of how `actual` differs from `expected`.
fn difference(actual: &str, expected: &str) -> String {
    match Assert::new().normalize_paths(false).try_eq(
        Some(&"output"),
        Data::text(actual.to_owned()),
        Data::text(expected.to_owned()),
    ) {
        Ok(()) => format!("expected:\n{expected}\nfound:\n{actual}"),
        Err(error) => error.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::transcript::Status;

    fn example(command: &str, status: Status, output: &str) -> Example {
        Example {
            origin: "test".to_owned(),
            command: command.to_owned(),
            status,
            output: output.to_owned(),
        }
    }

    fn outcome(code: i32, output: &str) -> Outcome {
        Outcome {
            code: Some(code),
            output: output.to_owned(),
        }
    }

    /// A changed line or status, a missing line or an extra one fails.
    #[test]
    fn exact_output_and_status() {
        let shown = example("snowmint x", Status::Code(0), "a\nb");
        assert!(check(&shown, &outcome(0, "a\nb\n")).is_ok());
        assert!(check(&shown, &outcome(0, "a\nc\n")).is_err());
        assert!(check(&shown, &outcome(0, "a\n")).is_err());
        assert!(check(&shown, &outcome(0, "a\nb\nc\n")).is_err());
        assert!(check(&shown, &outcome(2, "a\nb\n")).is_err());
        let elided = example("snowmint x", Status::Code(2), "error: a\n...");
        assert!(check(&elided, &outcome(2, "error: a\n\nUsage: x\n")).is_ok());
        assert!(check(&elided, &outcome(2, "error: b\n\nUsage: x\n")).is_err());
    }

    /// Both the real output and the sample shown must fit the pattern.
    #[test]
    fn varying_output_fits_its_pattern() {
        let command = "snowmint range --from 1700000000000 --to now";
        let sample = "from  2023-11-14T22:13:20.000Z\nto    2024-06-01T12:00:00.000Z\n\
                      min   1724551110456246272\nmax   1796874333193240575";
        let shown = example(command, Status::Code(0), sample);
        let real = "from  2023-11-14T22:13:20.000Z\nto    2026-12-01T13:21:25.657Z\n\
                    min   1724551110456246272\nmax   2127754946416738303\n";
        assert!(check(&shown, &outcome(0, real)).is_ok());
        let wrong_min = real.replace("min   1724551110456246272", "min   1724551110456246273");
        assert!(check(&shown, &outcome(0, &wrong_min)).is_err());
        let not_a_time = real.replace("2026-12-01T13:21:25.657Z", "2026-12-01");
        assert!(check(&shown, &outcome(0, &not_a_time)).is_err());
        let bad_sample = example(command, Status::Code(0), "from  then");
        assert!(check(&bad_sample, &outcome(0, real)).is_err());
    }
}
