//! `snowmint inspect`, the real binary: the known-answer vectors
//! (vectors/vectors.json) read through it, standard input line by line,
//! and hostile input (10 MB on one line, invalid UTF-8) answered with a
//! clear error and bounded work.

use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};

use serde_json::Value;

/// "Now" for every run: 2025-06-15T15:06:40Z.
const NOW: &str = "1750000000000";

struct Run {
    code: i32,
    stdout: String,
    stderr: String,
}

/// Runs `snowmint inspect --now NOW ARGS`, with `stdin` as its input.
fn inspect(args: &[&str], stdin: &[u8]) -> Run {
    let mut child = Command::new(env!("CARGO_BIN_EXE_snowmint"))
        .env_remove("SNOWMINT_LAYOUT")
        .env_remove("SNOWMINT_EPOCH")
        .args(["inspect", "--now", NOW])
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the snowmint binary runs");
    let mut input = child.stdin.take().unwrap();
    let data = stdin.to_vec();
    let writer = std::thread::spawn(move || {
        // The reader may stop early; a closed pipe is not this test's error.
        let _ = input.write_all(&data);
    });
    let output = child.wait_with_output().unwrap();
    writer.join().unwrap();
    Run {
        code: output.status.code().unwrap_or(-1),
        stdout: String::from_utf8(output.stdout).expect("UTF-8 output"),
        stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
    }
}

fn json_lines(stdout: &str) -> Vec<Value> {
    stdout
        .lines()
        .map(|line| serde_json::from_str(line).unwrap_or_else(|e| panic!("{e}: {line}")))
        .collect()
}

fn vectors() -> Value {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../vectors/vectors.json");
    let file: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    assert_eq!(file["version"], 1);
    file
}

/// Every vector, one per line on standard input in one run: each line's
/// token has the vector's family among its readings, at its time, with its
/// fields.
#[test]
fn every_vector_through_the_command() {
    let file = vectors();
    let list = file["vectors"].as_array().unwrap();
    let stdin: String = list
        .iter()
        .map(|v| format!("{}\n", v["input"].as_str().unwrap()))
        .collect();
    let run = inspect(&["--format", "json"], stdin.as_bytes());
    assert_eq!(run.code, 0, "{}", run.stderr);
    let tokens = json_lines(&run.stdout);
    let mut failures = Vec::new();
    for (number, vector) in list.iter().enumerate() {
        let line = number as u64 + 1;
        let family = &vector["family"];
        let reading = tokens
            .iter()
            .filter(|t| t["line"] == line && t["input"] == vector["input"])
            .flat_map(|t| t["candidates"].as_array().unwrap())
            .find(|c| &c["family"] == family);
        let Some(reading) = reading else {
            failures.push(format!(
                "line {line}: no {family} reading of {}",
                vector["input"]
            ));
            continue;
        };
        if reading["time"] != vector["time"] {
            failures.push(format!(
                "line {line}: time {} (expected {})",
                reading["time"], vector["time"]
            ));
        }
        for (name, value) in vector["fields"].as_object().unwrap() {
            if &reading[name] != value {
                failures.push(format!(
                    "line {line}: {name} {} (expected {value})",
                    reading[name]
                ));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// Every text of the vectors, as an argument: its tokens in order, each
/// with its top reading.
#[test]
fn every_text_through_the_command() {
    let file = vectors();
    let texts = file["texts"].as_array().unwrap();
    let args: Vec<&str> = texts.iter().map(|t| t["text"].as_str().unwrap()).collect();
    let mut all = vec!["--format", "json"];
    all.extend(&args);
    let run = inspect(&all, b"");
    assert_eq!(run.code, 0, "{}", run.stderr);
    let tokens = json_lines(&run.stdout);
    let expected: Vec<&Value> = texts
        .iter()
        .flat_map(|t| t["tokens"].as_array().unwrap())
        .collect();
    assert_eq!(tokens.len(), expected.len(), "{}", run.stdout);
    for (token, expected) in tokens.iter().zip(expected) {
        assert_eq!(token["input"], expected["input"]);
        assert_eq!(
            token["candidates"][0]["family"], expected["family"],
            "{token}"
        );
        assert_eq!(token["candidates"][0]["time"], expected["time"], "{token}");
    }
}

#[test]
fn text_output_ranks_and_says_why() {
    let run = inspect(
        &["https://x.com/jack/status/1724551110457221119 and 1724551110457221119"],
        b"",
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    let out = &run.stdout;
    assert!(out.starts_with("1724551110457221119  post in an X/Twitter link\n  twitter  2023-11-14T22:13:20.000Z  pinned\n"), "{out}");
    // The bare number: Twitter first, Discord's reading of it in the
    // future and last.
    let bare = &out[out.find("\n1724551110457221119\n").expect("the bare token")..];
    // Columns are as wide as the widest family name and time.
    let line = |family: &str, time: &str, rank: &str| {
        bare.lines()
            .position(|line| {
                line.split_whitespace().collect::<Vec<_>>() == [family, time, rank]
                    && line.starts_with(&format!("  {family} "))
            })
            .unwrap_or_else(|| panic!("no {family} {time} {rank} line in {bare}"))
    };
    let twitter = line("twitter", "2023-11-14T22:13:20.000Z", "plausible");
    let discord = line("discord", "2028-01-11T20:30:25.343Z", "implausible");
    assert!(twitter < discord, "{bare}");
    // Sonyflake's time in its 10 ms units, and LinkedIn's (milliseconds
    // since 1970) implausible before LinkedIn began.
    line("sonyflake", "2047-03-29T03:16:03.35Z", "implausible");
    let words = bare.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(
        words.contains("is before linkedin began (2003-05-05, LinkedIn's launch)"),
        "{bare}"
    );
    assert!(bare.contains("is in the future (now is\n"), "{bare}");
}

/// --top N keeps each token's N most plausible readings, the first N of
/// the full answer; 0 and 65 are refused with the range.
#[test]
fn top_keeps_the_most_plausible_readings() {
    let text = "<@175928847299117063> 1724551110457221119";
    let all = json_lines(&inspect(&["--format", "json", text], b"").stdout);
    let bare = all[1]["candidates"].as_array().unwrap();
    assert!(bare.len() > 2, "{bare:?}");
    let top = json_lines(&inspect(&["--format", "json", "--top", "2", text], b"").stdout);
    assert_eq!(top[0]["candidates"].as_array().unwrap().len(), 1);
    assert_eq!(top[1]["candidates"].as_array().unwrap()[..], bare[..2]);
    for bad in ["0", "65"] {
        let run = inspect(&["--top", bad, text], b"");
        assert_eq!(run.code, 2, "{}", run.stderr);
        assert!(
            run.stderr
                .contains(&format!("top {bad} is out of range (1..=64)")),
            "{}",
            run.stderr
        );
    }
}

#[test]
fn layout_reads_integers_as_that_family_alone() {
    let run = inspect(
        &[
            "--layout",
            "discord",
            "--format",
            "json",
            "175928847299117063",
        ],
        b"",
    );
    let tokens = json_lines(&run.stdout);
    let families: Vec<_> = tokens[0]["candidates"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["family"].clone())
        .collect();
    assert_eq!(families, ["discord"]);
}

#[test]
fn nothing_found_exits_with_one() {
    let run = inspect(&["nothing here, 2024"], b"");
    assert_eq!((run.code, run.stdout.as_str()), (1, ""));
    assert_eq!(run.stderr, "snowmint inspect: no ID-like token found\n");
}

/// 10 MB on one line, then a good line: the long line is refused by
/// number (not read into memory), the good one still read; exit code 2.
#[test]
fn a_line_past_the_bound_is_reported_and_the_rest_goes_through() {
    let mut stdin = vec![b'7'; 10 << 20];
    stdin.extend_from_slice(b"\n<@175928847299117063>\n");
    let run = inspect(&["--format", "json"], &stdin);
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert_eq!(
        run.stderr,
        "error: line 1 is longer than 1048576 bytes (0..=1048576); split it into lines\n"
    );
    let tokens = json_lines(&run.stdout);
    assert_eq!(tokens.len(), 1);
    assert_eq!(tokens[0]["line"], 2);
    assert_eq!(tokens[0]["candidates"][0]["family"], "discord");
}

/// 10 MB of digits in many lines, and bytes that are not UTF-8: read
/// without error, the tokens around the bad bytes found.
#[test]
fn hostile_lines_are_read_without_error() {
    let mut stdin = Vec::new();
    while stdin.len() < 10 << 20 {
        stdin.extend_from_slice(b"9999999999999999999999999999 12 34 -- 5678\n");
    }
    stdin.extend_from_slice(b"\xff\xfe 1724551110457221119 \xc3\x28 <t:1462015105>\n");
    let run = inspect(&["--format", "json"], &stdin);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let tokens = json_lines(&run.stdout);
    let inputs: Vec<_> = tokens
        .iter()
        .map(|t| t["input"].as_str().unwrap())
        .collect();
    assert_eq!(inputs, ["1724551110457221119", "<t:1462015105>"]);
}
