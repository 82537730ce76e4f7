//! Runs the real `snowmint` binary and checks what it prints and how it
//! exits.
//!
//! Expected IDs are computed here from the format's definition (Twitter
//! epoch 1288834974657, shifts 22/17/12) or are published facts (the seed's
//! worked example, Discord's documented example), never copied from the
//! program's output.

use std::io::{BufRead, BufReader, Read, Write};
use std::process::{Command, Output, Stdio};
use std::sync::mpsc;
use std::thread;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

const TWITTER_EPOCH: u64 = 1_288_834_974_657;
const DISCORD_EPOCH: u64 = 1_420_070_400_000;
const MAX_ID: u64 = (1 << 63) - 1;

/// The seed's worked example.
const EXAMPLE_ID: u64 = 1_724_551_110_457_221_119;
const EXAMPLE_MS: u64 = 1_700_000_000_000;
/// 1700000000000 ms after 1970 in RFC 3339.
const EXAMPLE_TIME: &str = "2023-11-14T22:13:20.000Z";

/// The definition of the default layout.
fn twitter_id(unix_ms: u64, datacenter: u64, machine: u64, sequence: u64) -> u64 {
    ((unix_ms - TWITTER_EPOCH) << 22) | (datacenter << 17) | (machine << 12) | sequence
}

fn snowmint() -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_snowmint"));
    // The environment must not pick a layout for the tests; `generate`
    // keeps its node locks and marks in a state directory of this test
    // run, not in the user's.
    let state = std::env::temp_dir().join(format!("snowmint-cli-tests-{}", std::process::id()));
    command
        .env_remove("SNOWMINT_LAYOUT")
        .env_remove("SNOWMINT_EPOCH")
        .env_remove("SNOWMINT_STATE_DIR")
        .env("XDG_STATE_HOME", state);
    command
}

/// What a finished run left behind.
struct Run {
    code: i32,
    stdout: String,
    stderr: String,
}

impl Run {
    fn first_error_line(&self) -> &str {
        self.stderr.lines().next().unwrap_or("")
    }

    /// Asserts that the run was rejected as bad input: exit code 2, nothing
    /// on stdout, and a first stderr line that contains each of `names`.
    fn assert_bad_input(&self, names: &[&str]) {
        assert_eq!(self.code, 2, "exit code; stderr: {}", self.stderr);
        assert_eq!(self.stdout, "", "stdout of a failed run");
        let first = self.first_error_line();
        assert!(first.starts_with("error: "), "first line: {first:?}");
        for name in names {
            assert!(first.contains(name), "{name:?} not in {first:?}");
        }
    }

    fn assert_ok(&self) {
        assert_eq!(self.code, 0, "exit code; stderr: {}", self.stderr);
        assert_eq!(self.stderr, "", "stderr of a successful run");
    }
}

fn finish(output: Output) -> Run {
    Run {
        code: output
            .status
            .code()
            .expect("exited normally, not by a signal"),
        stdout: String::from_utf8(output.stdout).expect("stdout is UTF-8"),
        stderr: String::from_utf8(output.stderr).expect("stderr is UTF-8"),
    }
}

fn run(args: &[&str]) -> Run {
    finish(
        snowmint()
            .args(args)
            .stdin(Stdio::null())
            .output()
            .expect("run snowmint"),
    )
}

fn run_with_stdin(args: &[&str], input: Vec<u8>) -> Run {
    let mut child = snowmint()
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn snowmint");
    let mut stdin = child.stdin.take().expect("stdin");
    let writer = thread::spawn(move || {
        let _ = stdin.write_all(&input);
    });
    let output = child.wait_with_output().expect("wait for snowmint");
    writer.join().expect("stdin writer");
    finish(output)
}

fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .expect("clock after 1970")
        .as_millis() as u64
}

fn json(line: &str) -> serde_json::Value {
    serde_json::from_str(line).unwrap_or_else(|e| panic!("not JSON ({e}): {line:?}"))
}

/// Writes `value` in base `alphabet.len()`, at least `width` digits: an
/// encoder independent of the program's.
fn base_n(mut value: u64, alphabet: &[u8], width: usize) -> String {
    let radix = alphabet.len() as u64;
    let mut digits = Vec::new();
    while value > 0 || digits.len() < width.max(1) {
        digits.push(alphabet[(value % radix) as usize]);
        value /= radix;
    }
    digits.reverse();
    String::from_utf8(digits).unwrap()
}

const CROCKFORD: &[u8] = b"0123456789ABCDEFGHJKMNPQRSTVWXYZ";
const BASE58: &[u8] = b"123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz";

// ---------------------------------------------------------------- encode

/// The worked example encodes to the seed's ID, from Unix milliseconds and
/// from RFC 3339 with and without a fraction, in any offset.
#[test]
fn encode_worked_example() {
    assert_eq!(twitter_id(EXAMPLE_MS, 7, 13, 4095), EXAMPLE_ID);
    for timestamp in [
        "1700000000000",
        "2023-11-14T22:13:20Z",
        "2023-11-14T22:13:20.000Z",
        "2023-11-14T23:13:20+01:00",
        "2023-11-14T17:43:20.0009-04:30",
    ] {
        let out = run(&[
            "encode",
            "--timestamp",
            timestamp,
            "--datacenter",
            "7",
            "--machine",
            "13",
            "--sequence",
            "4095",
        ]);
        out.assert_ok();
        assert_eq!(out.stdout, format!("{EXAMPLE_ID}\n"), "{timestamp}");
    }
}

/// `--output` writes the ID in the other encodings.
#[test]
fn encode_other_encodings() {
    let expected = [
        ("hex", format!("{EXAMPLE_ID:016x}")),
        ("base32", base_n(EXAMPLE_ID, CROCKFORD, 13)),
        ("base58", base_n(EXAMPLE_ID, BASE58, 1)),
    ];
    for (encoding, text) in expected {
        let out = run(&[
            "encode",
            "--timestamp=1700000000000",
            "--datacenter=7",
            "--machine=13",
            "--sequence=4095",
            "--output",
            encoding,
        ]);
        out.assert_ok();
        assert_eq!(out.stdout.trim_end(), text, "{encoding}");
    }
}

/// The edges of every field encode: the smallest and the largest value.
#[test]
fn encode_field_edges() {
    let last_ms = TWITTER_EPOCH + (1 << 41) - 1;
    for (ms, dc, m, seq) in [(TWITTER_EPOCH, 0, 0, 0), (last_ms, 31, 31, 4095)] {
        let out = run(&[
            "encode",
            "--timestamp",
            &ms.to_string(),
            "--datacenter",
            &dc.to_string(),
            "--machine",
            &m.to_string(),
            "--sequence",
            &seq.to_string(),
        ]);
        out.assert_ok();
        assert_eq!(out.stdout, format!("{}\n", twitter_id(ms, dc, m, seq)));
    }
    assert_eq!(twitter_id(last_ms, 31, 31, 4095), MAX_ID);
}

fn encode_with(field: &str, value: &str) -> Run {
    let mut args = vec![
        ("--timestamp", "1700000000000"),
        ("--datacenter", "7"),
        ("--machine", "13"),
        ("--sequence", "4095"),
    ];
    for arg in &mut args {
        if arg.0.trim_start_matches('-') == field {
            arg.1 = value;
        }
    }
    let mut command = vec!["encode"];
    for (flag, value) in &args {
        command.extend([*flag, *value]);
    }
    run(&command)
}

/// Each field out of range is rejected with its name, the value and the
/// valid range; negative numbers are values, not flags.
#[test]
fn encode_rejects_each_field_out_of_range() {
    encode_with("datacenter", "32").assert_bad_input(&["datacenter 32", "0..=31"]);
    encode_with("datacenter", "-1").assert_bad_input(&["datacenter -1", "0..=31"]);
    encode_with("machine", "32").assert_bad_input(&["machine 32", "0..=31"]);
    encode_with("machine", "-7").assert_bad_input(&["machine -7", "0..=31"]);
    encode_with("sequence", "4096").assert_bad_input(&["sequence 4096", "0..=4095"]);
    encode_with("sequence", "99999999999999999999999")
        .assert_bad_input(&["sequence 99999999999999999999999", "0..=4095"]);
    encode_with("datacenter", "seven").assert_bad_input(&["datacenter", "seven", "0..=31"]);
    encode_with("machine", "").assert_bad_input(&["machine", "0..=31"]);
}

/// Timestamps before the epoch and past the last instant are rejected with
/// the valid range; so is text that is not a time.
#[test]
fn encode_rejects_timestamps_outside_the_layout() {
    let last_ms = TWITTER_EPOCH + (1 << 41) - 1;
    let range = format!("{TWITTER_EPOCH}..={last_ms}");
    let before = (TWITTER_EPOCH - 1).to_string();
    encode_with("timestamp", &before).assert_bad_input(&[&before, "epoch", &range]);
    let after = (last_ms + 1).to_string();
    encode_with("timestamp", &after).assert_bad_input(&[&after, &range]);
    encode_with("timestamp", "-5").assert_bad_input(&["-5", &range]);
    encode_with("timestamp", "1970-01-01T00:00:00Z").assert_bad_input(&["timestamp 0", &range]);
    encode_with("timestamp", "2023-02-29T00:00:00Z").assert_bad_input(&["2023-02-29T00:00:00Z"]);
    encode_with("timestamp", "yesterday").assert_bad_input(&["yesterday", "RFC 3339"]);
}

// ---------------------------------------------------------------- decode

/// One ID decodes into a block with every field, the time as RFC 3339 UTC
/// with milliseconds.
#[test]
fn decode_worked_example() {
    let out = run(&["decode", &EXAMPLE_ID.to_string()]);
    out.assert_ok();
    let fields: Vec<(&str, &str)> = out
        .stdout
        .lines()
        .map(|line| line.split_once(' ').expect("name and value"))
        .map(|(name, value)| (name, value.trim()))
        .collect();
    assert_eq!(
        fields,
        [
            ("id", EXAMPLE_ID.to_string().as_str()),
            ("timestamp", EXAMPLE_MS.to_string().as_str()),
            ("time", EXAMPLE_TIME),
            ("datacenter", "7"),
            ("machine", "13"),
            ("sequence", "4095"),
        ]
    );
}

/// Several IDs on the command line give several blocks, in order.
#[test]
fn decode_several_arguments() {
    let first = twitter_id(TWITTER_EPOCH, 0, 0, 0);
    let out = run(&["decode", &first.to_string(), &EXAMPLE_ID.to_string()]);
    out.assert_ok();
    let blocks: Vec<&str> = out.stdout.split("\n\n").collect();
    assert_eq!(blocks.len(), 2);
    assert!(blocks[0].starts_with(&format!("id          {first}\n")));
    assert!(blocks[0].contains("time        2010-11-04T01:42:54.657Z"));
    assert!(blocks[1].starts_with(&format!("id          {EXAMPLE_ID}\n")));
}

/// JSON output, parsed back, has every field, the ID as a string.
#[test]
fn decode_json_parsed_back_field_by_field() {
    let ids = [
        (EXAMPLE_MS, 7, 13, 4095),
        (TWITTER_EPOCH, 0, 0, 0),
        (TWITTER_EPOCH + (1 << 41) - 1, 31, 31, 4095),
        (1_600_000_000_123, 30, 1, 17),
    ];
    let args: Vec<String> = ids
        .iter()
        .map(|&(ms, dc, m, seq)| twitter_id(ms, dc, m, seq).to_string())
        .collect();
    let mut command = vec!["decode", "--format", "json"];
    command.extend(args.iter().map(String::as_str));
    let out = run(&command);
    out.assert_ok();
    let lines: Vec<&str> = out.stdout.lines().collect();
    assert_eq!(lines.len(), ids.len());
    for (line, &(ms, dc, m, seq)) in lines.iter().zip(&ids) {
        let value = json(line);
        assert_eq!(value["id"], twitter_id(ms, dc, m, seq).to_string());
        assert_eq!(value["timestamp_ms"], ms);
        assert_eq!(value["datacenter"], dc);
        assert_eq!(value["machine"], m);
        assert_eq!(value["sequence"], seq);
        assert_eq!(value.as_object().unwrap().len(), 6, "{line}");
    }
    assert_eq!(json(lines[0])["time"], EXAMPLE_TIME);
    assert_eq!(json(lines[1])["time"], "2010-11-04T01:42:54.657Z");
    assert_eq!(json(lines[2])["time"], "2080-07-10T17:30:30.208Z");
    assert_eq!(json(lines[3])["time"], "2020-09-13T12:26:40.123Z");
}

/// TSV and CSV have a header (unless --no-header) and one row per ID.
#[test]
fn decode_tsv_and_csv() {
    let id = EXAMPLE_ID.to_string();
    let row = |sep: &str| [&id, "1700000000000", EXAMPLE_TIME, "7", "13", "4095"].join(sep);
    let header = |sep: &str| {
        [
            "id",
            "timestamp_ms",
            "time",
            "datacenter",
            "machine",
            "sequence",
        ]
        .join(sep)
    };
    let out = run(&["decode", "--format", "tsv", &id]);
    out.assert_ok();
    assert_eq!(out.stdout, format!("{}\n{}\n", header("\t"), row("\t")));
    let out = run(&["decode", "--format", "csv", &id, &id]);
    out.assert_ok();
    assert_eq!(
        out.stdout,
        format!("{}\n{}\n{}\n", header(","), row(","), row(","))
    );
    let out = run(&["decode", "--format", "csv", "--no-header", &id]);
    out.assert_ok();
    assert_eq!(out.stdout, format!("{}\n", row(",")));
}

/// `--input` reads hex, base32 and base58; `--output` writes them.
#[test]
fn decode_other_encodings() {
    let texts = [
        ("hex", format!("{EXAMPLE_ID:016x}")),
        ("hex", format!("0x{EXAMPLE_ID:X}")),
        ("base32", base_n(EXAMPLE_ID, CROCKFORD, 13)),
        ("base32", base_n(EXAMPLE_ID, CROCKFORD, 13).to_lowercase()),
        ("base58", base_n(EXAMPLE_ID, BASE58, 1)),
    ];
    for (encoding, text) in &texts {
        let out = run(&["decode", "--input", encoding, "--format", "json", text]);
        out.assert_ok();
        let value = json(out.stdout.trim_end());
        assert_eq!(value["id"], EXAMPLE_ID.to_string(), "{encoding} {text}");
        assert_eq!(value["timestamp_ms"], EXAMPLE_MS);
    }
    let out = run(&[
        "decode",
        "--output",
        "base58",
        "--format",
        "csv",
        "--no-header",
        &EXAMPLE_ID.to_string(),
    ]);
    out.assert_ok();
    assert!(
        out.stdout
            .starts_with(&format!("{},", base_n(EXAMPLE_ID, BASE58, 1)))
    );
}

/// Negative, too large, non-digit and empty IDs are rejected, naming the
/// value and the range; `-1` is a value, not a flag.
#[test]
fn decode_rejects_bad_ids() {
    let range = "0..=9223372036854775807";
    run(&["decode", "-1"]).assert_bad_input(&["-1", range]);
    run(&["decode", "-9223372036854775808"]).assert_bad_input(&["-9223372036854775808", range]);
    run(&["decode", "9223372036854775808"]).assert_bad_input(&["9223372036854775808", range]);
    run(&["decode", "18446744073709551616"]).assert_bad_input(&["18446744073709551616", range]);
    run(&["decode", "12a4"]).assert_bad_input(&["12a4", "'a'", range]);
    run(&["decode", " 1"]).assert_bad_input(&["\" 1\"", range]);
    run(&["decode", ""]).assert_bad_input(&["empty", range]);
    run(&["decode", "--input", "hex", "8000000000000000"])
        .assert_bad_input(&["8000000000000000", "7fffffffffffffff"]);
}

/// The largest ID decodes.
#[test]
fn decode_the_largest_id() {
    let out = run(&["decode", "--format", "json", &MAX_ID.to_string()]);
    out.assert_ok();
    let value = json(out.stdout.trim_end());
    assert_eq!(value["timestamp_ms"], TWITTER_EPOCH + (1 << 41) - 1);
    assert_eq!(value["sequence"], 4095);
}

/// A bad line in the middle of a stream is reported with its line number;
/// every good line still comes out, in order; the exit code says it failed.
#[test]
fn bulk_decode_with_a_bad_line_in_the_middle() {
    let ids: Vec<u64> = (0..2000)
        .map(|i| twitter_id(EXAMPLE_MS + i * 37, i % 32, (i / 32) % 32, i % 4096))
        .collect();
    let mut input = String::new();
    for (i, id) in ids.iter().enumerate() {
        if i == 1000 {
            input.push_str("not-an-id\n"); // line 1001
            input.push('\n'); // blank lines are skipped
            input.push_str("  \r\n");
        }
        input.push_str(&id.to_string());
        // Windows line ends and surrounding blanks are tolerated.
        input.push_str(if i % 2 == 0 { "\n" } else { " \r\n" });
    }
    let out = run_with_stdin(
        &["decode", "--format", "tsv", "--no-header"],
        input.into_bytes(),
    );
    assert_eq!(out.code, 2, "stderr: {}", out.stderr);
    let first = out.first_error_line();
    assert!(first.contains("line 1001"), "{first}");
    assert!(first.contains("not-an-id"), "{first}");
    assert!(first.contains("0..=9223372036854775807"), "{first}");
    let decoded: Vec<u64> = out
        .stdout
        .lines()
        .map(|line| line.split('\t').next().unwrap().parse().unwrap())
        .collect();
    assert_eq!(decoded, ids);
    for (line, i) in out.stdout.lines().zip(0u64..) {
        let fields: Vec<&str> = line.split('\t').collect();
        assert_eq!(fields[1], (EXAMPLE_MS + i * 37).to_string());
        assert_eq!(fields[3], (i % 32).to_string());
        assert_eq!(fields[4], ((i / 32) % 32).to_string());
        assert_eq!(fields[5], (i % 4096).to_string());
    }
}

/// `-` reads standard input in the middle of the arguments; a last line
/// without a newline counts.
#[test]
fn bulk_decode_from_dash_and_unterminated_last_line() {
    let input = format!("{}\n{}", twitter_id(EXAMPLE_MS, 1, 1, 1), EXAMPLE_ID);
    let out = run_with_stdin(
        &["decode", "--format", "json", "0", "-", "1"],
        input.into_bytes(),
    );
    out.assert_ok();
    let ids: Vec<String> = out
        .stdout
        .lines()
        .map(|line| json(line)["id"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(
        ids,
        [
            "0".to_owned(),
            twitter_id(EXAMPLE_MS, 1, 1, 1).to_string(),
            EXAMPLE_ID.to_string(),
            "1".to_owned()
        ]
    );
}

/// Each kind of bad line in bulk: negative, too large, non-digits, too long,
/// not UTF-8; all reported by line, none printed.
#[test]
fn bulk_decode_reports_every_bad_line() {
    let mut input = Vec::new();
    input.extend_from_slice(b"-1\n9223372036854775808\n12x\n");
    input.extend_from_slice(&[b'7'; 5000]);
    input.extend_from_slice(b"\n\xff\xfe\n1\n");
    let out = run_with_stdin(&["decode", "--format", "csv", "--no-header"], input);
    assert_eq!(out.code, 2);
    let errors: Vec<&str> = out.stderr.lines().collect();
    assert!(
        errors[0].starts_with("error: line 1: ID -1 is out of range"),
        "{errors:?}"
    );
    assert!(errors[1].starts_with("error: line 2: ID 9223372036854775808 is out of range"));
    assert!(errors[2].starts_with("error: line 3: ID \"12x\""));
    assert!(errors[3].starts_with("error: line 4: "), "{errors:?}");
    assert!(errors[4].starts_with("error: line 5: "), "{errors:?}");
    assert!(errors[5].contains("5 of 6"), "{errors:?}");
    assert_eq!(
        out.stdout,
        "1,1288834974657,2010-11-04T01:42:54.657Z,0,0,1\n"
    );
}

/// Records come out as lines come in, not at the end of the input: the
/// command works at the end of `tail -f`.
#[test]
fn bulk_decode_streams_line_by_line() {
    let mut child = snowmint()
        .args(["decode", "--format", "json"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn snowmint");
    let mut stdin = child.stdin.take().unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let (sent, received) = mpsc::channel();
    let reader = thread::spawn(move || {
        for _ in 0..2 {
            let mut line = String::new();
            stdout.read_line(&mut line).unwrap();
            sent.send(line).unwrap();
        }
    });
    for id in [EXAMPLE_ID, 42] {
        writeln!(stdin, "{id}").unwrap();
        stdin.flush().unwrap();
        // stdin stays open: the answer must come anyway. The long wait only
        // keeps a broken build from hanging the suite.
        let line = received
            .recv_timeout(Duration::from_secs(60))
            .expect("a record before the input ends");
        assert_eq!(json(&line)["id"], id.to_string());
    }
    drop(stdin);
    reader.join().unwrap();
    assert!(child.wait().unwrap().success());
}

// ---------------------------------------------------------------- pipes and I/O

/// `generate --count 100000000 | head -1` ends quietly and successfully
/// when the reader goes away.
#[test]
fn closed_pipe_is_not_an_error_for_generate() {
    let mut child = snowmint()
        .args(["generate", "--datacenter", "1", "--machine", "2"])
        .args(["--count", "100000000"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn snowmint");
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let mut first = String::new();
    stdout.read_line(&mut first).unwrap();
    assert!(first.trim_end().parse::<u64>().is_ok(), "{first:?}");
    drop(stdout);
    let mut stderr = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut stderr)
        .unwrap();
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(0), "stderr: {stderr}");
    assert_eq!(stderr, "");
}

/// The same for bulk decode: the reader leaves after the first record.
#[test]
fn closed_pipe_is_not_an_error_for_decode() {
    let mut child = snowmint()
        .args(["decode", "--format", "tsv"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn snowmint");
    let mut stdin = child.stdin.take().unwrap();
    let writer = thread::spawn(move || {
        let line = format!("{EXAMPLE_ID}\n");
        for _ in 0..2_000_000 {
            if stdin.write_all(line.as_bytes()).is_err() {
                break; // snowmint has gone, as it should
            }
        }
    });
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let mut header = String::new();
    stdout.read_line(&mut header).unwrap();
    assert!(header.starts_with("id\t"));
    drop(stdout);
    let mut stderr = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut stderr)
        .unwrap();
    let status = child.wait().unwrap();
    writer.join().unwrap();
    assert_eq!(status.code(), Some(0), "stderr: {stderr}");
    assert_eq!(stderr, "");
}

/// A failure that is not the input's fault (a full disk) exits with 1.
#[test]
fn write_failure_exits_with_one() {
    let full = std::fs::OpenOptions::new()
        .write(true)
        .open("/dev/full")
        .expect("/dev/full exists on Linux");
    let output = snowmint()
        .args([
            "generate",
            "--datacenter",
            "0",
            "--machine",
            "0",
            "--count",
            "100000",
        ])
        .stdout(full)
        .output()
        .unwrap();
    let stderr = String::from_utf8(output.stderr).unwrap();
    assert_eq!(output.status.code(), Some(1), "stderr: {stderr}");
    assert!(stderr.starts_with("error: "), "{stderr}");
}

// ---------------------------------------------------------------- generate

/// Generated IDs are unique, strictly increasing, carry the node, and come
/// from the real clock.
#[test]
fn generate_unique_and_increasing() {
    let before = now_ms();
    let out = run(&[
        "generate",
        "--datacenter",
        "21",
        "--machine",
        "9",
        "--count",
        "20000",
    ]);
    let after = now_ms();
    out.assert_ok();
    let ids: Vec<u64> = out.stdout.lines().map(|l| l.parse().unwrap()).collect();
    assert_eq!(ids.len(), 20000);
    assert!(ids.windows(2).all(|w| w[0] < w[1]), "strictly increasing");
    for &id in &ids {
        assert!(id <= MAX_ID);
        assert_eq!((id >> 17) & 31, 21, "datacenter of {id}");
        assert_eq!((id >> 12) & 31, 9, "machine of {id}");
        let ms = (id >> 22) + TWITTER_EPOCH;
        assert!(
            (before..=after).contains(&ms),
            "{ms} not in {before}..={after}"
        );
    }
}

/// The default count is one; `--output` and `--layout` apply.
#[test]
fn generate_defaults_and_options() {
    let out = run(&["generate", "--datacenter", "0", "--machine", "0"]);
    out.assert_ok();
    assert_eq!(out.stdout.lines().count(), 1);

    let before = now_ms();
    let out = run(&[
        "generate",
        "--layout",
        "discord",
        "--datacenter",
        "3",
        "--machine",
        "4",
        "-n",
        "5",
        "--output",
        "hex",
    ]);
    let after = now_ms();
    out.assert_ok();
    let ids: Vec<u64> = out
        .stdout
        .lines()
        .map(|l| {
            assert_eq!(l.len(), 16, "{l}");
            u64::from_str_radix(l, 16).unwrap()
        })
        .collect();
    assert_eq!(ids.len(), 5);
    for id in ids {
        let ms = (id >> 22) + DISCORD_EPOCH;
        assert!((before..=after).contains(&ms));
        assert_eq!((id >> 17) & 31, 3);
    }

    let out = run(&[
        "generate",
        "--datacenter",
        "0",
        "--machine",
        "0",
        "--count",
        "0",
    ]);
    out.assert_ok();
    assert_eq!(out.stdout, "");
}

/// A Sonyflake node of eight slots (machines 8 to 15) fills each 10 ms
/// tick with 8 × 256 IDs, eight times one slot's ceiling: each sequence
/// number in every machine, lowest first, before the next; no ID twice.
#[test]
fn a_sonyflake_node_of_eight_slots_fills_its_ticks_eight_times_over() {
    let out = run(&[
        "generate",
        "--layout",
        "sonyflake",
        "--machine",
        "8",
        "--slots-per-node",
        "8",
        "--count",
        "20000",
    ]);
    out.assert_ok();
    let ids: Vec<u64> = out.stdout.lines().map(|l| l.parse().unwrap()).collect();
    assert_eq!(ids.len(), 20_000);
    assert!(ids.windows(2).all(|w| w[0] < w[1]), "strictly increasing");
    // Sonyflake: time above bit 24, the sequence in bits 16..24, the
    // machine in the low 16 bits.
    let order: Vec<(u64, u64)> = (0..256)
        .flat_map(|sequence| (8..16).map(move |machine| (sequence, machine)))
        .collect();
    let mut per_tick = std::collections::BTreeMap::<u64, Vec<(u64, u64)>>::new();
    for &id in &ids {
        per_tick
            .entry(id >> 24)
            .or_default()
            .push(((id >> 16) & 0xff, id & 0xffff));
    }
    for (tick, pairs) in &per_tick {
        assert_eq!(pairs[..], order[..pairs.len()], "tick {tick}");
    }
    // A tick the run spent whole is full: 2048, where one slot holds 256.
    let full = per_tick.values().filter(|p| p.len() == 2048).count();
    assert!(
        full >= 1,
        "ticks: {:?}",
        per_tick.values().map(Vec::len).collect::<Vec<_>>()
    );

    run(&[
        "generate",
        "--layout",
        "sonyflake",
        "--machine",
        "8",
        "--slots-per-node",
        "3",
    ])
    .assert_bad_input(&[
        "slots per node 3 is not valid: a node holds a power of two of slots, 1 to 65536",
    ]);
    run(&[
        "generate",
        "--layout",
        "sonyflake",
        "--machine",
        "65534",
        "--slots-per-node",
        "4",
    ])
    .assert_bad_input(&["slots 65534..=65537 run past the last slot 65535"]);
}

/// Other families mint by their own field names: Sonyflake's one node
/// field is `machine` (16 bits, in the low bits), its time counts 10 ms
/// ticks since 2014-09-01 and its sequence holds 256 IDs a tick
/// (github.com/sony/sonyflake, v1).
#[test]
fn generate_in_sonyflake_by_its_field_names() {
    const SONYFLAKE_EPOCH_MS: u64 = 1_409_529_600_000;
    let before = now_ms();
    let out = run(&[
        "generate",
        "--layout",
        "sonyflake",
        "--machine",
        "513",
        "--count",
        "1000",
    ]);
    let after = now_ms();
    out.assert_ok();
    let ids: Vec<u64> = out.stdout.lines().map(|l| l.parse().unwrap()).collect();
    assert_eq!(ids.len(), 1000);
    assert!(ids.windows(2).all(|w| w[0] < w[1]), "strictly increasing");
    let mut per_tick = std::collections::BTreeMap::<u64, Vec<u64>>::new();
    for &id in &ids {
        assert!(id < 1 << 63, "{id} has the sign bit");
        assert_eq!(id & 0xffff, 513, "machine of {id}");
        let tick = id >> 24;
        let ms = tick * 10 + SONYFLAKE_EPOCH_MS;
        // The tick holding `before` starts up to 9 ms before it.
        assert!(
            (before - before % 10..=after).contains(&ms),
            "{ms} not in {before}..={after}"
        );
        per_tick.entry(tick).or_default().push((id >> 16) & 0xff);
    }
    // 1,000 IDs need at least 4 ticks of 256; each tick's sequence counts
    // from 0 without a gap.
    assert!(per_tick.len() >= 4, "{} ticks", per_tick.len());
    for (tick, sequence) in &per_tick {
        let expected: Vec<u64> = (0..sequence.len() as u64).collect();
        assert_eq!(sequence, &expected, "sequence of tick {tick}");
    }

    // Discord's node fields by their names, or by the two legacy names.
    let by_name = run(&[
        "generate",
        "--layout",
        "discord",
        "--field",
        "worker=5",
        "--field",
        "process=6",
    ]);
    by_name.assert_ok();
    let id: u64 = by_name.stdout.trim().parse().unwrap();
    assert_eq!(((id >> 17) & 31, (id >> 12) & 31), (5, 6));

    // Every node field must be given, by a name the layout has.
    run(&["generate", "--layout", "discord", "--field", "worker=3"])
        .assert_bad_input(&["needs process (0..=31)"]);
    let missing = run(&["generate", "--layout", "discord", "--field", "worker=3"]);
    assert!(
        missing
            .stderr
            .contains("--field worker=N --field process=N"),
        "{}",
        missing.stderr
    );
    run(&["generate", "--layout", "sonyflake", "--machine", "65536"])
        .assert_bad_input(&["machine 65536", "0..=65535"]);
    run(&["generate", "--layout", "sonyflake", "--field", "worker=1"])
        .assert_bad_input(&["worker"]);
    run(&["generate", "--layout", "mastodon", "--machine", "0"]).assert_bad_input(&["mastodon"]);
}

/// Bad nodes and counts are rejected with their ranges.
#[test]
fn generate_rejects_bad_arguments() {
    let generate = |dc: &str, m: &str, count: &str| {
        run(&[
            "generate",
            "--datacenter",
            dc,
            "--machine",
            m,
            "--count",
            count,
        ])
    };
    generate("32", "0", "1").assert_bad_input(&["datacenter 32", "0..=31"]);
    generate("0", "32", "1").assert_bad_input(&["machine 32", "0..=31"]);
    generate("-1", "0", "1").assert_bad_input(&["datacenter -1", "0..=31"]);
    generate("0", "0", "-1").assert_bad_input(&["count -1", "0..=18446744073709551615"]);
    generate("0", "0", "many").assert_bad_input(&["count", "many"]);
    // An epoch in the future leaves the clock before it.
    run(&[
        "generate",
        "--epoch",
        "4000000000000",
        "--datacenter",
        "0",
        "--machine",
        "0",
    ])
    .assert_bad_input(&["before the epoch 4000000000000"]);
    let missing = run(&["generate", "--datacenter", "0"]);
    assert_eq!(missing.code, 2);
    assert!(missing.stderr.contains("--machine"));
}

// ---------------------------------------------------------------- range

/// The range of a window is [its first millisecond with all other bits 0,
/// its last millisecond with all other bits 1].
#[test]
fn range_of_a_window() {
    let to_ms = EXAMPLE_MS + 999;
    let min = (EXAMPLE_MS - TWITTER_EPOCH) << 22;
    let max = ((to_ms - TWITTER_EPOCH) << 22) | ((1 << 22) - 1);
    let out = run(&[
        "range",
        "--from",
        "2023-11-14T22:13:20Z",
        "--to",
        "2023-11-14T22:13:20.999Z",
    ]);
    out.assert_ok();
    assert_eq!(
        out.stdout,
        format!("from  {EXAMPLE_TIME}\nto    2023-11-14T22:13:20.999Z\nmin   {min}\nmax   {max}\n")
    );
    assert!(min <= EXAMPLE_ID && EXAMPLE_ID <= max);

    let out = run(&[
        "range",
        "--from",
        &EXAMPLE_MS.to_string(),
        "--to",
        &to_ms.to_string(),
        "--format",
        "json",
    ]);
    out.assert_ok();
    let value = json(out.stdout.trim_end());
    assert_eq!(value["min"], min.to_string());
    assert_eq!(value["max"], max.to_string());
    assert_eq!(value["from_ms"], EXAMPLE_MS);
    assert_eq!(value["to_ms"], to_ms);
    assert_eq!(value["from"], EXAMPLE_TIME);
    assert_eq!(value["to"], "2023-11-14T22:13:20.999Z");
}

/// --cursor: the IDs just outside the window, for Discord's `after=` and
/// `before=`; none past the layout's first and last ID.
#[test]
fn range_cursors() {
    let to_ms = EXAMPLE_MS + 999;
    let min = (EXAMPLE_MS - TWITTER_EPOCH) << 22;
    let max = ((to_ms - TWITTER_EPOCH) << 22) | ((1 << 22) - 1);
    let window = [
        "range",
        "--from",
        "1700000000000",
        "--to",
        "1700000000999",
        "--cursor",
    ];
    let out = run(&window);
    out.assert_ok();
    assert_eq!(
        out.stdout,
        format!(
            "from    {EXAMPLE_TIME}\nto      2023-11-14T22:13:20.999Z\nmin     {min}\nmax     {max}\nafter   {}\nbefore  {}\n",
            min - 1,
            max + 1
        )
    );
    // Discord's documented ID lies in the window of its millisecond, in
    // Discord's layout: after < ID < before.
    let out = run(&[
        "range",
        "--layout",
        "discord",
        "--from",
        "1462015105796",
        "--to",
        "1462015105796",
        "--cursor",
        "--format",
        "json",
    ]);
    out.assert_ok();
    let value = json(out.stdout.trim_end());
    let (after, before): (u64, u64) = (
        value["after"].as_str().unwrap().parse().unwrap(),
        value["before"].as_str().unwrap().parse().unwrap(),
    );
    assert!(after < 175_928_847_299_117_063 && 175_928_847_299_117_063 < before);
    assert_eq!(before - after, (1 << 22) + 1);
    // The first and the last millisecond of the layout: nothing outside.
    let last_ms = TWITTER_EPOCH + (1 << 41) - 1;
    let out = run(&[
        "range",
        "--from",
        &TWITTER_EPOCH.to_string(),
        "--to",
        &last_ms.to_string(),
        "--cursor",
        "--format",
        "json",
    ]);
    out.assert_ok();
    let value = json(out.stdout.trim_end());
    assert_eq!(
        (value["after"].clone(), value["before"].clone()),
        (serde_json::Value::Null, serde_json::Value::Null)
    );
    assert_eq!(value["max"], MAX_ID.to_string());
    // Discord's IDs are unsigned 64-bit: the millisecond whose IDs begin at
    // 2^63 (2^41 ms after Discord's epoch, in 2084) has its cursors on
    // either side of 2^63, and the layout's last millisecond no `before`.
    let at_2_63 = DISCORD_EPOCH + (1 << 41);
    let discord = |from: u64, to: u64| {
        let out = run(&[
            "range",
            "--layout",
            "discord",
            "--from",
            &from.to_string(),
            "--to",
            &to.to_string(),
            "--cursor",
            "--format",
            "json",
        ]);
        out.assert_ok();
        json(out.stdout.trim_end())
    };
    let value = discord(at_2_63, at_2_63);
    assert_eq!(value["min"], (1u64 << 63).to_string());
    assert_eq!(value["after"], ((1u64 << 63) - 1).to_string());
    assert_eq!(value["before"], ((1u64 << 63) + (1 << 22)).to_string());
    let last = DISCORD_EPOCH + (1 << 42) - 1;
    let value = discord(last, last);
    assert_eq!(value["max"], u64::MAX.to_string());
    assert_eq!(value["before"], serde_json::Value::Null);
}

/// --prefixes: decimal prefixes whose IDs are exactly the window's, each
/// block `prefix` followed by any digits up to the IDs' length, in order,
/// none of which could be shortened by one digit.
#[test]
fn range_prefixes_cover_the_window_exactly() {
    for (from, to) in [
        ("2023-11-14T22:13:20Z", "2023-11-14T22:13:20.999Z"),
        ("2023-11-14T22:13:00Z", "2023-11-14T22:13:59.999Z"),
        ("2010-11-04T01:42:54.657Z", "2010-11-04T01:42:56.000Z"),
    ] {
        let out = run(&[
            "range",
            "--from",
            from,
            "--to",
            to,
            "--prefixes",
            "--format",
            "json",
        ]);
        out.assert_ok();
        let value = json(out.stdout.trim_end());
        let min: u128 = value["min"].as_str().unwrap().parse().unwrap();
        let max: u128 = value["max"].as_str().unwrap().parse().unwrap();
        let mut next = min;
        for prefix in value["prefixes"].as_array().unwrap() {
            let text = prefix["prefix"].as_str().unwrap();
            let digits = prefix["digits"].as_u64().unwrap() as u32;
            let free = digits - text.len() as u32;
            let first = text.parse::<u128>().unwrap() * 10u128.pow(free);
            assert_eq!(first, next, "{from}: {prefix}");
            assert_eq!(first.to_string().len() as u32, digits);
            next = first + 10u128.pow(free);
            // Its parent (one digit less) would reach outside the window.
            if text.len() > 1 {
                let parent = first / 10u128.pow(free + 1) * 10u128.pow(free + 1);
                assert!(
                    parent < min || parent + 10u128.pow(free + 1) - 1 > max,
                    "{text} is not the shortest"
                );
            }
        }
        assert_eq!(next, max + 1, "{from}..{to}");
    }
    let out = run(&[
        "range",
        "--from",
        "2023-11-14T22:13:20Z",
        "--to",
        "2023-11-14T22:13:20.999Z",
        "--prefixes",
    ]);
    out.assert_ok();
    assert!(
        out.stdout
            .contains("\nprefix  172455111045624628 (19 digits)\n"),
        "{}",
        out.stdout
    );
}

/// A window outside the layout, or backwards, is rejected.
#[test]
fn range_rejects_bad_windows() {
    let last_ms = TWITTER_EPOCH + (1 << 41) - 1;
    let range = format!("{TWITTER_EPOCH}..={last_ms}");
    run(&[
        "range",
        "--from",
        "2000-01-01T00:00:00Z",
        "--to",
        "1700000000000",
    ])
    .assert_bad_input(&["946684800000", &range]);
    run(&["range", "--from", "1700000000000", "--to", "3487858230209"])
        .assert_bad_input(&["3487858230209", &range]);
    run(&["range", "--from", "1700000000001", "--to", "1700000000000"])
        .assert_bad_input(&["1700000000001", "1700000000000"]);
    run(&["range", "--from", "soon", "--to", "1700000000000"]).assert_bad_input(&["soon"]);
}

// ---------------------------------------------------------------- layout

/// The layout's description, as JSON, matches the format's definition.
#[test]
fn layout_json() {
    let out = run(&["layout", "--format", "json"]);
    out.assert_ok();
    let value = json(out.stdout.trim_end());
    let last_ms = TWITTER_EPOCH + (1 << 41) - 1;
    assert_eq!(value["layout"], "twitter");
    assert_eq!(value["epoch_ms"], TWITTER_EPOCH);
    assert_eq!(value["epoch"], "2010-11-04T01:42:54.657Z");
    assert_eq!(value["last_instant_ms"], last_ms);
    assert_eq!(value["last_instant"], "2080-07-10T17:30:30.208Z");
    assert_eq!(value["node_count"], 1024);
    assert_eq!(value["ids_per_ms"], 4096);
    let fields: Vec<(String, u64, u64, u64)> = value["fields"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            (
                f["name"].as_str().unwrap().to_owned(),
                f["bits"].as_u64().unwrap(),
                f["shift"].as_u64().unwrap(),
                f["max"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        fields,
        [
            ("timestamp".to_owned(), 41, 22, (1 << 41) - 1),
            ("datacenter".to_owned(), 5, 17, 31),
            ("machine".to_owned(), 5, 12, 31),
            ("sequence".to_owned(), 12, 0, 4095),
        ]
    );
    let years_left = (last_ms - now_ms()) as f64 / (365.2425 * 86_400_000.0);
    let reported = value["years_left"].as_f64().unwrap();
    assert!(
        (reported - years_left).abs() < 0.02,
        "{reported} vs {years_left}"
    );
    // The service's `/v1/layout` shape: the flat facts as well, and exactly
    // the keys its OpenAPI document lists for a layout.
    assert_eq!(value["spec"], format!("41/5/5/12@{TWITTER_EPOCH}"));
    assert_eq!(
        [
            &value["timestamp_bits"],
            &value["datacenter_bits"],
            &value["machine_bits"],
            &value["sequence_bits"],
            &value["timestamp_shift"],
            &value["datacenter_shift"],
            &value["machine_shift"],
            &value["max_datacenter"],
            &value["max_machine"],
            &value["max_sequence"],
        ],
        [41, 5, 5, 12, 22, 17, 12, 31, 31, 4095]
            .map(serde_json::Value::from)
            .each_ref()
    );
    let document = snowmint_server::openapi::document();
    let documented: std::collections::BTreeSet<&str> = document["components"]["schemas"]["Layout"]
        ["properties"]
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    let printed = value
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    assert_eq!(documented, printed);
}

/// The text form names the same facts for people.
#[test]
fn layout_text() {
    let out = run(&["layout"]);
    out.assert_ok();
    for expected in [
        "layout        twitter",
        "epoch         1288834974657 (2010-11-04T01:42:54.657Z)",
        "last instant  3487858230208 (2080-07-10T17:30:30.208Z)",
        "years left",
        "timestamp     41     22  2199023255551",
        "datacenter     5     17  31",
        "machine        5     12  31",
        "sequence      12      0  4095",
        "nodes         1024",
        "IDs per ms    4096",
    ] {
        assert!(
            out.stdout.contains(expected),
            "{expected:?} in\n{}",
            out.stdout
        );
    }
}

// ---------------------------------------------------------------- layouts and epochs

/// Discord's documented example decodes with `--layout discord`, and with
/// the Discord epoch given by `--epoch` (in milliseconds or RFC 3339).
#[test]
fn discord_layout_and_custom_epoch() {
    // discord.com/developers/docs/reference#snowflakes: 175928847299117063 is
    // 2016-04-30 11:18:25.796 UTC, worker 1, process 0, increment 7.
    let discord_ms = 1_462_015_105_796u64;
    let expect = |out: Run| {
        out.assert_ok();
        let value = json(out.stdout.trim_end());
        assert_eq!(value["timestamp_ms"], discord_ms);
        assert_eq!(value["time"], "2016-04-30T11:18:25.796Z");
        assert_eq!(value["datacenter"], 1);
        assert_eq!(value["machine"], 0);
        assert_eq!(value["sequence"], 7);
    };
    // With the preset, the fields are named as Discord names them.
    let expect_discord = |out: Run| {
        out.assert_ok();
        let value = json(out.stdout.trim_end());
        assert_eq!(value["timestamp_ms"], discord_ms);
        assert_eq!(value["time"], "2016-04-30T11:18:25.796Z");
        assert_eq!(value["worker"], 1);
        assert_eq!(value["process"], 0);
        assert_eq!(value["increment"], 7);
        assert_eq!(value.get("datacenter"), None);
    };
    let id = "175928847299117063";
    expect_discord(run(&[
        "decode", "--layout", "discord", "--format", "json", id,
    ]));
    // --layout belongs to the command that reads IDs, not before it.
    let before = run(&["--layout", "discord", "decode", "--format", "json", id]);
    assert_eq!(before.code, 2, "{}", before.stderr);
    assert!(
        before.stderr.contains("'decode --layout' exists"),
        "{}",
        before.stderr
    );
    expect(run(&[
        "decode",
        "--epoch",
        &DISCORD_EPOCH.to_string(),
        "--format",
        "json",
        id,
    ]));
    expect(run(&[
        "decode",
        "--epoch",
        "2015-01-01T00:00:00Z",
        "--format",
        "json",
        id,
    ]));
    expect_discord(finish(
        snowmint()
            .env("SNOWMINT_LAYOUT", "discord")
            .args(["decode", "--format", "json", id])
            .output()
            .unwrap(),
    ));

    let out = run(&[
        "encode",
        "--layout",
        "discord",
        "--timestamp",
        "1462015105796",
        "--datacenter",
        "1",
        "--machine",
        "0",
        "--sequence",
        "7",
    ]);
    out.assert_ok();
    assert_eq!(out.stdout.trim_end(), id);
}

// ---------------------------------------------------------------- families

/// The presets the issue names, at least: `layout --list` shows each.
const FAMILIES: [&str; 16] = [
    "twitter",
    "discord",
    "instagram",
    "mastodon",
    "sonyflake",
    "sonyflake-v2",
    "baidu",
    "hazelcast",
    "tsid",
    "yitter",
    "cosid",
    "cosid-safe-js",
    "leaf",
    "linkedin",
    "tiktok",
    "safe-js-10ms",
];

/// `layout --list` names every family with its fields, unit, epoch, last
/// year, whether it mints and whether it is JavaScript-safe.
#[test]
fn layout_list_text() {
    let out = run(&["layout", "--list"]);
    out.assert_ok();
    for name in FAMILIES {
        assert!(
            out.stdout
                .lines()
                .any(|line| line.starts_with(&format!("{name}: "))),
            "{name} in\n{}",
            out.stdout
        );
    }
    // Sonyflake v1 (sony/sonyflake): 39 bits of 10 ms since 2014-09-01
    // last 2^39 * 10 ms = 174.2 years; 8 sequence bits, 16 machine bits.
    // Mastodon's low 16 bits are a hash: read, never minted.
    for expected in [
        "sonyflake: Sonyflake (sony/sonyflake v1)\n  time:39 sequence:8 machine:16\n  10ms since 2014-09-01T00:00:00.000Z until 2188; mints; not JS-safe\n",
        "discord: Discord snowflakes\n  time:42 worker:5 process:5 increment:12\n",
        "\n  1ms since 1970-01-01T00:00:00.000Z until 10889; reads only; not JS-safe\n",
        "cosid-safe-js: CosId SafeJavaScriptSnowflakeId\n  time:41 machine:3 sequence:9\n  1ms since 2019-12-24T16:00:00.000Z until 2089; mints; JS-safe\n",
    ] {
        assert!(
            out.stdout.contains(expected),
            "{expected:?} in\n{}",
            out.stdout
        );
    }
    let out = run(&["layout", "--list", "--layout", "discord"]);
    assert_eq!(out.code, 2, "{}", out.stderr);
    assert!(out.stderr.contains("--list"), "{}", out.stderr);
}

/// `layout --list --format json`: one description per preset, with the
/// fields by name and role, the unit, the largest ID and the two flags.
#[test]
fn layout_list_json() {
    let out = run(&["layout", "--list", "--format", "json"]);
    out.assert_ok();
    let value = json(out.stdout.trim_end());
    let presets = value.as_array().expect("an array");
    let names: Vec<&str> = presets
        .iter()
        .map(|preset| preset["layout"].as_str().unwrap())
        .collect();
    assert_eq!(names, FAMILIES);
    let by_name = |name: &str| &presets[FAMILIES.iter().position(|n| *n == name).unwrap()];
    let discord = by_name("discord");
    let fields: Vec<(&str, &str, u64)> = discord["fields"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            (
                f["name"].as_str().unwrap(),
                f["role"].as_str().unwrap(),
                f["bits"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        fields,
        [
            ("timestamp", "time", 42),
            ("worker", "node", 5),
            ("process", "node", 5),
            ("increment", "sequence", 12)
        ]
    );
    // Discord's IDs use all 64 bits.
    assert_eq!(discord["bits"], 64);
    assert_eq!(discord["max_id"], "18446744073709551615");
    assert_eq!(discord["mintable"], true);
    let sonyflake = by_name("sonyflake");
    assert_eq!(sonyflake["unit"], "10ms");
    assert_eq!(sonyflake["unit_us"], 10_000);
    // 256 sequence values per 10 ms tick.
    assert_eq!(sonyflake["ids_per_second"], 25_600);
    let safe = by_name("cosid-safe-js");
    assert_eq!(safe["js_safe"], true);
    assert_eq!(safe["max_id"], "9007199254740991");
    let mastodon = by_name("mastodon");
    assert_eq!(mastodon["mintable"], false);
    assert_eq!(mastodon["fields"][1]["role"], "opaque");
    let baidu = by_name("baidu");
    assert_eq!(baidu["unit"], "1s");
}

/// Discord IDs at and above 2^63 decode, with Discord's names; the
/// Twitter layout refuses them, naming its range.
#[test]
fn discord_ids_above_2_pow_63() {
    // 2^63: time 2^41 ms after 2015-01-01, every other field 0.
    let out = run(&[
        "decode",
        "--layout",
        "discord",
        "--format",
        "json",
        "9223372036854775808",
        "18446744073709551615",
    ]);
    out.assert_ok();
    let lines: Vec<serde_json::Value> = out.stdout.lines().map(json).collect();
    assert_eq!(lines[0]["id"], "9223372036854775808");
    assert_eq!(lines[0]["timestamp_ms"], 1_420_070_400_000u64 + (1 << 41));
    assert_eq!(lines[0]["worker"], 0);
    assert_eq!(lines[1]["worker"], 31);
    assert_eq!(lines[1]["process"], 31);
    assert_eq!(lines[1]["increment"], 4095);
    assert_eq!(
        lines[1]["timestamp_ms"],
        1_420_070_400_000u64 + (1 << 42) - 1
    );
    let out = run(&["decode", "9223372036854775808"]);
    out.assert_bad_input(&["9223372036854775808", "0..=9223372036854775807"]);
}

/// `encode --field` takes the family's names; a name the layout lacks, a
/// value out of range and a field named twice are each a clear error.
#[test]
fn encode_fields_by_the_familys_names() {
    let discord = run(&[
        "encode",
        "--layout",
        "discord",
        "--timestamp",
        "2016-04-30T11:18:25.796Z",
        "--field",
        "worker=1",
        "--field",
        "process=0",
        "--field",
        "increment=7",
    ]);
    discord.assert_ok();
    assert_eq!(discord.stdout.trim_end(), "175928847299117063");
    // Sonyflake: 10 ms units, so 5 ms into a tick is the tick's start.
    let out = run(&[
        "encode",
        "--layout",
        "sonyflake",
        "--timestamp",
        "2023-11-14T22:13:20.005Z",
        "--machine",
        "513",
    ]);
    out.assert_ok();
    // (1700000000000 - 1409529600000) / 10 ticks, shifted past 24 bits.
    let ticks = (1_700_000_000_000u64 - 1_409_529_600_000) / 10;
    assert_eq!(out.stdout.trim_end(), ((ticks << 24) | 513).to_string());
    let decoded = run(&[
        "decode",
        "--layout",
        "sonyflake",
        "--format",
        "json",
        out.stdout.trim_end(),
    ]);
    decoded.assert_ok();
    let value = json(decoded.stdout.trim_end());
    assert_eq!(value["machine"], 513);
    assert_eq!(value["time"], "2023-11-14T22:13:20.00Z");

    let base = [
        "encode",
        "--layout",
        "discord",
        "--timestamp",
        "1462015105796",
    ];
    let with = |extra: &[&str]| run(&[&base[..], extra].concat());
    with(&["--field", "shard=1"]).assert_bad_input(&["shard", "worker", "process", "increment"]);
    with(&["--field", "worker=32"]).assert_bad_input(&["worker 32", "0..=31"]);
    with(&["--field", "worker=1", "--datacenter", "2"]).assert_bad_input(&["worker", "twice"]);
    with(&["--field", "worker"]).assert_bad_input(&["NAME=VALUE"]);
}

/// Unknown layouts and impossible epochs are usage errors.
#[test]
fn bad_layouts_and_epochs() {
    let out = run(&["layout", "--layout", "snowflake9000"]);
    out.assert_bad_input(&["snowflake9000", "twitter", "discord"]);
    let out = run(&["layout", "--epoch", "-5"]);
    out.assert_bad_input(&["epoch -5"]);
    let out = run(&["layout", "--layout", "41/5/5/13"]);
    out.assert_bad_input(&["41+5+5+13", "63"]);
}

// ---------------------------------------------------------------- help and completions

/// Every command has help with examples.
#[test]
fn help_for_every_command_has_examples() {
    for command in [
        &[][..],
        &["encode"],
        &["decode"],
        &["generate"],
        &["range"],
        &["layout"],
        &["page"],
        &["completions"],
    ] {
        let mut args = command.to_vec();
        args.push("--help");
        let out = run(&args);
        out.assert_ok();
        assert!(
            out.stdout.contains("Examples:"),
            "{args:?}:\n{}",
            out.stdout
        );
        // --layout is the commands' that read or make IDs, not the
        // top level's, page's or completions' (the top level's examples
        // show it on `decode`).
        let reads_ids = !matches!(command, [] | ["completions"] | ["page"]);
        assert_eq!(out.stdout.contains("--layout <"), reads_ids, "{args:?}");
    }
}

/// Completion scripts for bash, zsh and fish name the commands.
#[test]
fn completions() {
    for (shell, marker) in [
        ("bash", "complete -F"),
        ("zsh", "#compdef snowmint"),
        ("fish", "complete -c snowmint"),
    ] {
        let out = run(&["completions", shell]);
        out.assert_ok();
        assert!(out.stdout.contains(marker), "{shell}");
        for command in ["encode", "decode", "generate", "range", "layout"] {
            assert!(out.stdout.contains(command), "{shell}: {command}");
        }
    }
    let out = run(&["completions", "tcsh"]);
    assert_eq!(out.code, 2);
    assert!(out.stderr.contains("tcsh"));
}

/// `--layout` and `--epoch` belong to the commands that read or make IDs:
/// `probe`, `page` and `completions` neither list them nor take them, and
/// the others do, after their name.
#[test]
fn only_the_commands_that_read_or_make_ids_take_a_layout() {
    for command in ["probe", "page", "completions"] {
        let help = run(&[command, "--help"]);
        help.assert_ok();
        for flag in ["--layout", "--epoch"] {
            assert!(!help.stdout.contains(flag), "{command} --help lists {flag}");
        }
        let refused = run(&[command, "--layout", "discord", "bash"]);
        assert_eq!(refused.code, 2, "{command}: {}", refused.stderr);
        assert!(
            refused.stderr.contains("unexpected argument '--layout'"),
            "{command}: {}",
            refused.stderr
        );
    }
    for command in [
        "encode", "decode", "generate", "range", "layout", "serve", "whois",
    ] {
        let help = run(&[command, "--help"]);
        help.assert_ok();
        for flag in ["--layout", "--epoch"] {
            assert!(help.stdout.contains(flag), "{command} --help lacks {flag}");
        }
    }
    let decoded = run(&["decode", "--layout", "discord", "175928847299117063"]);
    decoded.assert_ok();
    assert!(
        decoded.stdout.contains("2016-04-30T11:18:25.796Z"),
        "{}",
        decoded.stdout
    );
}
