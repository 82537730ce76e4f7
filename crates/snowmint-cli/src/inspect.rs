//! `snowmint inspect`.
//!
//! Each argument is a text; with none, or where one is `-`, standard input
//! is read one text per line, in constant memory (a line longer than
//! [`MAX_TEXT`] bytes is reported, not kept). Every ID-like token of a text
//! is written with its readings, most plausible first: aligned lines for
//! people, or one JSON object per token.

use std::io::{self, Write};
use std::process::ExitCode;

use clap::Args;
use snowmint::inspect::{Catalog, FieldValue, Inspector, MAX_TEXT, Time, Token};

use crate::Global;
use crate::failure::BAD_INPUT;
use crate::lines::{CHUNK, LineSink, read_lines};
use crate::values::{self, Format};

/// Arguments of `snowmint inspect`.
#[derive(Debug, Args)]
#[command(after_help = "\
Examples:
  $ snowmint inspect --now 2025-06-15T00:00:00Z '<@175928847299117063>'
  175928847299117063  user mention
    discord  2016-04-30T11:18:25.796Z  pinned
             worker 1, process 0, increment 7
             pinned: found as the user mention, so discord

  $ snowmint inspect --now 2025-06-15T00:00:00Z --top 2 1724551110457221119
  1724551110457221119
    twitter    2023-11-14T22:13:20.000Z  plausible
               datacenter 7, machine 13, sequence 4095
               plausible: between when twitter began (2010-11-04, Twitter's
               Snowflake epoch) and now
    instagram  2018-02-28T07:22:14.392Z  plausible
               shard 5047, sequence 1023
               plausible: between when instagram began (2011-08-24, Instagram's
               epoch) and now

  $ echo 'log: req 01ARZ3NDEKTSV4RRFFQ69G5FAV ok' | snowmint inspect
  01ARZ3NDEKTSV4RRFFQ69G5FAV
    ulid  2016-07-30T23:54:10.259Z  plausible
          randomness d6764c61efb99302bd5b
          plausible: between when ulid began (2016, when the spec was published)
          and now

  $ snowmint inspect --format json \\
      https://discord.com/channels/@me/381887113391505410/382016263479541760
  {\"input\":\"381887113391505410\",\"context\":\"channel in a Discord link\",[..]\"}]}
  {\"input\":\"382016263479541760\",\"context\":\"message in a Discord link\",[..]\"}]}

Tokens are links (x.com and twitter.com posts, discord.com links, Discord's
CDN, Mastodon posts, bsky.app posts and at:// URIs, Instagram posts and reels,
Misskey notes), Discord's markup (<@id>, <@!id>, <#id>, <@&id>, <:name:id>,
<a:name:id>, </command:id>, and <t:unix[:style]>, a time), integers (decimal,
0x hex or 16 hex digits, 13 Crockford base32, 10 or 11 base58), and ULID, UUID,
MongoDB ObjectId, KSUID, Bluesky TID, Misskey aid and aidx, TSID.

In running text a decimal needs 12 digits and the alphabets that spell words
need a digit; a line that is only the token (past spaces and quotes) is read
whatever its length.

A reading is pinned when the place the token was found names its family (the
link's host, Discord's markup); implausible when its time falls before its
family began or more than a day after --now. JSON has one object per token:
{\"input\", \"context\", \"start\", \"end\", \"candidates\": [{\"family\", \"time\",
<fields>, \"plausibility\", \"why\"}]}, with \"line\" for standard input; IDs and
numbers past 2^53 are strings. An integer is read as every preset
(twitter, discord, instagram, mastodon, sonyflake, sonyflake-v2, baidu,
hazelcast, tsid, yitter, cosid, cosid-safe-js, leaf, linkedin, tiktok,
safe-js-10ms), its time at the family's unit and its fields by the family's
names, unless --layout names one; --top 1 keeps each token's best reading.

Standard input is read when no text is given, or where a text is `-`: one text
per line. A line longer than 1 MiB is reported on stderr with its number and
the rest still goes through (exit code 2). No token in any text: exit code 1.
--layout reads integers as that layout only; without it, as every preset.")]
pub struct InspectArgs {
    /// Texts to read IDs out of; none, or `-`, reads one text per line from
    /// standard input.
    #[arg(value_name = "TEXT", allow_hyphen_values = true)]
    texts: Vec<String>,
    /// Text for people, or one JSON object per token.
    #[arg(long, value_enum, default_value_t)]
    format: Format,
    /// When "now" is, for judging times in the future: Unix milliseconds,
    /// RFC 3339, or `now` (the clock).
    #[arg(
        long,
        value_name = "T",
        default_value = "now",
        allow_negative_numbers = true
    )]
    now: String,
    /// Keep each token's N most plausible readings (1..=64); all by
    /// default.
    #[arg(long, value_name = "N")]
    top: Option<String>,
    /// `--layout` and `--epoch`.
    #[command(flatten)]
    pub global: Global,
}

/// Runs `snowmint inspect`.
pub fn run(args: InspectArgs, global: &Global) -> anyhow::Result<ExitCode> {
    let now_ms = values::instant("now", &args.now)?;
    let catalog = match global.layout_flag() {
        // The layout asked for, alone, under its preset's name.
        Some(_) => {
            let layout = global.layout()?;
            Catalog::from_layouts([(layout.name().unwrap_or("custom"), layout)])
        }
        None => Catalog::presets(),
    };
    let top = match &args.top {
        Some(text) => values::bounded("top", text, 1..=MAX_TOP)?,
        None => MAX_TOP,
    };
    let mut writer = Writer {
        inspector: Inspector::with_catalog(catalog, now_ms),
        // At most MAX_TOP, so within usize.
        top: top as usize,
        format: args.format,
        pending: Vec::with_capacity(CHUNK * 2),
        scratch: Scratch::default(),
        out: io::stdout().lock(),
        found: 0,
        too_long: 0,
    };
    if args.texts.is_empty() {
        read_lines(io::stdin().lock(), MAX_TEXT, &mut writer)?;
    }
    for text in &args.texts {
        if text == "-" {
            read_lines(io::stdin().lock(), MAX_TEXT, &mut writer)?;
        } else if text.len() > MAX_TEXT {
            writer.too_long(None)?;
        } else {
            writer.text(text.as_bytes(), None)?;
        }
    }
    writer.flush()?;
    if writer.too_long > 0 {
        return Ok(ExitCode::from(BAD_INPUT));
    }
    if writer.found == 0 {
        eprintln!("snowmint inspect: no ID-like token found");
        return Ok(ExitCode::FAILURE);
    }
    Ok(ExitCode::SUCCESS)
}

/// The most readings `--top` may ask for (as `/v1/inspect`'s `top=`):
/// more than any token has.
const MAX_TOP: u64 = 64;

/// The state of one `inspect` run.
struct Writer<W: Write> {
    inspector: Inspector,
    /// How many readings of each token to write.
    top: usize,
    format: Format,
    /// Output not yet written out.
    pending: Vec<u8>,
    /// Buffers the text output reuses from token to token.
    scratch: Scratch,
    out: W,
    /// Tokens found so far.
    found: u64,
    /// Lines refused for their length.
    too_long: u64,
}

impl<W: Write> Writer<W> {
    /// Writes the tokens of one text (line `line` of standard input).
    fn text(&mut self, text: &[u8], line: Option<u64>) -> io::Result<()> {
        for token in self.inspector.inspect_best(text, self.top) {
            self.found += 1;
            match self.format {
                Format::Text => write_text(&token, &mut self.scratch, &mut self.pending),
                Format::Json => write_json(&token, line, &mut self.pending),
            }
            if self.pending.len() >= CHUNK {
                flush(&mut self.out, &mut self.pending)?;
            }
        }
        Ok(())
    }

    #[cold]
    fn too_long(&mut self, line: Option<u64>) -> io::Result<()> {
        self.too_long += 1;
        self.flush()?;
        let which = line.map_or_else(|| "a text".to_owned(), |n| format!("line {n}"));
        eprintln!(
            "error: {which} is longer than {MAX_TEXT} bytes (0..={MAX_TEXT}); split it into lines"
        );
        Ok(())
    }

    fn flush(&mut self) -> io::Result<()> {
        flush(&mut self.out, &mut self.pending)
    }
}

/// Writes out what is pending.
fn flush(out: &mut impl Write, pending: &mut Vec<u8>) -> io::Result<()> {
    out.write_all(pending)?;
    pending.clear();
    out.flush()
}

impl<W: Write> LineSink for Writer<W> {
    fn line(&mut self, number: u64, line: Option<&[u8]>) -> io::Result<()> {
        match line {
            Some(text) => self.text(text, Some(number)),
            None => self.too_long(Some(number)),
        }
    }

    fn idle(&mut self) -> io::Result<()> {
        self.flush()
    }
}

/// One JSON object on a line: the core's form of a token, with the line of
/// standard input it was on as its last key.
///
/// Written here byte for byte as `serde_json` writes the core's `Serialize`
/// form (a test compares the two), without going through it: every token
/// of a file goes out this way, and `serde_json`'s escaping looks at each
/// byte on its own while the texts here almost never need any.
fn write_json(token: &Token, line: Option<u64>, out: &mut Vec<u8>) {
    let mut digits = [0; 20];
    out.extend_from_slice(b"{\"input\":");
    json_str(token.input(), out);
    out.extend_from_slice(b",\"context\":");
    match token.context() {
        Some(context) => json_str(context, out),
        None => out.extend_from_slice(b"null"),
    }
    let span = token.span();
    out.extend_from_slice(b",\"start\":");
    out.extend_from_slice(itoa(span.start as u64, &mut digits).as_bytes());
    out.extend_from_slice(b",\"end\":");
    out.extend_from_slice(itoa(span.end as u64, &mut digits).as_bytes());
    out.extend_from_slice(b",\"candidates\":[");
    let mut time_buf = [0; Time::MAX_LEN];
    for (at, reading) in token.candidates().iter().enumerate() {
        if at > 0 {
            out.push(b',');
        }
        out.extend_from_slice(b"{\"family\":");
        json_str(reading.family(), out);
        out.extend_from_slice(b",\"time\":");
        match reading.time() {
            Some(time) => json_str(time.write_to(&mut time_buf), out),
            None => out.extend_from_slice(b"null"),
        }
        for field in reading.fields() {
            out.push(b',');
            json_str(&field.name, out);
            out.push(b':');
            match &field.value {
                FieldValue::Number(n) => out.extend_from_slice(itoa(*n, &mut digits).as_bytes()),
                FieldValue::Text(text) => json_str(text, out),
            }
        }
        out.extend_from_slice(b",\"plausibility\":");
        json_str(reading.plausibility().name(), out);
        out.extend_from_slice(b",\"why\":");
        json_str(reading.why(), out);
        out.push(b'}');
    }
    out.push(b']');
    if let Some(line) = line {
        out.extend_from_slice(b",\"line\":");
        out.extend_from_slice(itoa(line, &mut digits).as_bytes());
    }
    out.extend_from_slice(b"}\n");
}

/// `text` as a JSON string, escaped as `serde_json` escapes: `"`, `\\`
/// and the control characters below U+0020 (`\b \t \n \f \r` by their
/// letters, the others as `\u00xx`), nothing else.
fn json_str(text: &str, out: &mut Vec<u8>) {
    out.push(b'"');
    let bytes = text.as_bytes();
    if !needs_escape(bytes) {
        out.extend_from_slice(bytes);
    } else {
        for &b in bytes {
            match b {
                b'"' => out.extend_from_slice(b"\\\""),
                b'\\' => out.extend_from_slice(b"\\\\"),
                0x08 => out.extend_from_slice(b"\\b"),
                b'\t' => out.extend_from_slice(b"\\t"),
                b'\n' => out.extend_from_slice(b"\\n"),
                0x0c => out.extend_from_slice(b"\\f"),
                b'\r' => out.extend_from_slice(b"\\r"),
                0..0x20 => {
                    const HEX: &[u8; 16] = b"0123456789abcdef";
                    out.extend_from_slice(b"\\u00");
                    out.push(HEX[usize::from(b >> 4)]);
                    out.push(HEX[usize::from(b & 15)]);
                }
                _ => out.push(b),
            }
        }
    }
    out.push(b'"');
}

/// `n` in decimal, written into `buf`, two digits at a time.
fn itoa(mut n: u64, buf: &mut [u8; 20]) -> &str {
    const PAIRS: &[u8; 200] = b"\
        0001020304050607080910111213141516171819\
        2021222324252627282930313233343536373839\
        4041424344454647484950515253545556575859\
        6061626364656667686970717273747576777879\
        8081828384858687888990919293949596979899";
    let mut at = buf.len();
    while n >= 100 {
        let pair = (n % 100) as usize * 2;
        n /= 100;
        at -= 2;
        buf[at..at + 2].copy_from_slice(&PAIRS[pair..pair + 2]);
    }
    if n >= 10 {
        at -= 2;
        buf[at..at + 2].copy_from_slice(&PAIRS[n as usize * 2..n as usize * 2 + 2]);
    } else {
        at -= 1;
        buf[at] = b'0' + n as u8;
    }
    std::str::from_utf8(&buf[at..]).unwrap_or_default()
}

/// Whether any byte of `bytes` is escaped in JSON (`"`, `\\`, or below
/// 0x20), looked at eight bytes at a time.
fn needs_escape(bytes: &[u8]) -> bool {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGHS: u64 = 0x8080_8080_8080_8080;
    // Whether a byte of `x` is below `n` (n <= 0x80): the high bit of that
    // byte of (x - n) & !x is set, and none is set where no byte is below.
    let below = |x: u64, n: u8| x.wrapping_sub(ONES * u64::from(n)) & !x & HIGHS;
    let mut chunks = bytes.chunks_exact(8);
    for chunk in &mut chunks {
        let mut word = [0; 8];
        word.copy_from_slice(chunk);
        let x = u64::from_le_bytes(word);
        let found = below(x, 0x20)
            | below(x ^ (ONES * u64::from(b'"')), 1)
            | below(x ^ (ONES * u64::from(b'\\')), 1);
        if found != 0 {
            return true;
        }
    }
    chunks
        .remainder()
        .iter()
        .any(|&b| b < 0x20 || b == b'"' || b == b'\\')
}

/// The width the text output's explanations are wrapped at.
const WIDTH: usize = 80;

/// Hands `emit` the lines of `text` of at most `width` characters, broken
/// at spaces (a longer word gets a line of its own).
fn wrap<'a>(text: &'a str, width: usize, mut emit: impl FnMut(&'a str)) {
    let mut rest = text.trim();
    while rest.len() > width {
        let cut = rest[..=width].rfind(' ').or_else(|| rest.find(' '));
        let Some(cut) = cut else { break };
        emit(rest[..cut].trim_end());
        rest = rest[cut..].trim_start();
    }
    if !rest.is_empty() {
        emit(rest);
    }
}

/// What the text output of one token is assembled in, kept from token to
/// token so that its memory is reused.
#[derive(Default)]
struct Scratch {
    /// The readings' times (or "no time"), one after another.
    times: String,
    /// Where each reading's time ends in `times`.
    time_ends: Vec<usize>,
    /// One reading's fields.
    fields: String,
}

/// A block per token: its text and where it was found, then a line per
/// reading (family, time, rank, fields) and its why under it, in columns.
fn write_text(token: &Token, scratch: &mut Scratch, out: &mut Vec<u8>) {
    out.extend_from_slice(token.input().as_bytes());
    if let Some(context) = token.context() {
        out.extend_from_slice(b"  ");
        out.extend_from_slice(context.as_bytes());
    }
    out.push(b'\n');
    let Scratch {
        times,
        time_ends,
        fields,
    } = scratch;
    times.clear();
    time_ends.clear();
    let mut family = 0;
    for reading in token.candidates() {
        family = family.max(reading.family().len());
        match reading.time() {
            Some(time) => times.push_str(time.write_to(&mut [0; Time::MAX_LEN])),
            None => times.push_str("no time"),
        }
        time_ends.push(times.len());
    }
    let mut start = 0;
    let mut time = 0;
    for &end in time_ends.iter() {
        time = time.max(end - start);
        start = end;
    }
    // Fields and the why go under the time, wrapped to fit 80 columns.
    let indent = family + 4;
    let room = WIDTH.saturating_sub(indent).max(20);
    let pad = |out: &mut Vec<u8>, width: usize| out.resize(out.len() + width, b' ');
    let mut start = 0;
    for (reading, &end) in token.candidates().iter().zip(time_ends.iter()) {
        let (name, at) = (reading.family(), &times[start..end]);
        start = end;
        out.extend_from_slice(b"  ");
        out.extend_from_slice(name.as_bytes());
        pad(out, family - name.len() + 2);
        out.extend_from_slice(at.as_bytes());
        pad(out, time - at.len() + 2);
        out.extend_from_slice(reading.plausibility().name().as_bytes());
        out.push(b'\n');
        fields.clear();
        // An integer's decimal value only where it was written otherwise.
        let shown = reading.fields().iter().filter(|field| {
            !(field.name == "id"
                && matches!(&field.value, FieldValue::Text(id) if id == token.input()))
        });
        for field in shown {
            if !fields.is_empty() {
                fields.push_str(", ");
            }
            fields.push_str(&field.name);
            fields.push(' ');
            match &field.value {
                FieldValue::Number(n) => fields.push_str(itoa(*n, &mut [0; 20])),
                FieldValue::Text(text) => fields.push_str(text),
            }
        }
        let mut line = |line: &str| {
            pad(out, indent);
            out.extend_from_slice(line.as_bytes());
            out.push(b'\n');
        };
        wrap(fields, room, &mut line);
        wrap(reading.why(), room, &mut line);
    }
    if token.candidates().is_empty() {
        out.extend_from_slice(b"  (no family reads it)\n");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The JSON written by hand is `serde_json`'s of the core's form, byte
    /// for byte, with and without the line.
    #[test]
    fn json_is_serde_jsons_form() {
        #[derive(serde::Serialize)]
        struct Located<'a> {
            #[serde(flatten)]
            token: &'a Token,
            #[serde(skip_serializing_if = "Option::is_none")]
            line: Option<u64>,
        }
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../vectors/vectors.json");
        let file: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
        let mut texts: Vec<String> = file["texts"]
            .as_array()
            .unwrap()
            .iter()
            .map(|entry| entry["text"].as_str().unwrap().to_owned())
            .collect();
        texts.extend(
            file["vectors"]
                .as_array()
                .unwrap()
                .iter()
                .map(|vector| vector["input"].as_str().unwrap().to_owned()),
        );
        texts.push(
            "https://twitter.com/jack/status/20 0x14 <t:-62135596800:F> 18446744073709551615"
                .to_owned(),
        );
        let inspector = Inspector::new(1_750_000_000_000);
        let custom = Inspector::with_catalog(
            Catalog::from_layouts([("mine", "41/5/5/12@1600000000000".parse().unwrap())]),
            1_750_000_000_000,
        );
        let mut tokens = 0;
        for text in &texts {
            for token in inspector.inspect(text).chain(custom.inspect(text)) {
                for line in [None, Some(0), Some(u64::MAX)] {
                    let mut ours = Vec::new();
                    write_json(&token, line, &mut ours);
                    let mut theirs = serde_json::to_vec(&Located {
                        token: &token,
                        line,
                    })
                    .unwrap();
                    theirs.push(b'\n');
                    assert_eq!(
                        String::from_utf8(ours).unwrap(),
                        String::from_utf8(theirs).unwrap()
                    );
                }
                tokens += 1;
            }
        }
        assert!(tokens > 200, "{tokens} tokens");
    }

    #[test]
    fn numbers_are_written_in_decimal() {
        for n in [
            0,
            1,
            9,
            10,
            42,
            99,
            100,
            101,
            999,
            1000,
            12345,
            u64::MAX / 7,
            u64::MAX,
        ] {
            assert_eq!(itoa(n, &mut [0; 20]), n.to_string());
        }
    }

    #[test]
    fn escapes_are_found_at_every_place() {
        for len in 1..20 {
            for at in 0..len {
                for b in 0..=u8::MAX {
                    let mut bytes = vec![b'a'; len];
                    bytes[at] = b;
                    let expected = b < 0x20 || b == b'"' || b == b'\\';
                    assert_eq!(needs_escape(&bytes), expected, "{bytes:?}");
                }
            }
        }
    }

    /// Strings are escaped as `serde_json` escapes them.
    #[test]
    fn strings_escape_as_serde_json_does() {
        let mut every: String = (0..128u8).map(char::from).collect();
        every.push_str("é €😀 \u{7f}\u{2028}");
        for text in [every.as_str(), "", "plain", "a\"b\\c", "\n", "\u{1f}x"] {
            let mut ours = Vec::new();
            json_str(text, &mut ours);
            assert_eq!(ours, serde_json::to_vec(text).unwrap(), "{text:?}");
        }
    }

    #[test]
    fn text_blocks_align_their_columns() {
        let inspector = Inspector::new(1_750_000_000_000);
        let token = inspector.inspect("1724551110457221119").next().unwrap();
        let mut out = Vec::new();
        write_text(&token, &mut Scratch::default(), &mut out);
        let text = String::from_utf8(out).unwrap();
        let lines: Vec<_> = text.lines().collect();
        assert_eq!(lines[0], "1724551110457221119");
        fn words(line: &str) -> Vec<&str> {
            line.split_whitespace().collect()
        }
        assert_eq!(
            words(lines[1]),
            ["twitter", "2023-11-14T22:13:20.000Z", "plausible"]
        );
        // The time column starts where the fields' lines are indented, in
        // every reading (the family column is as wide as its widest name).
        let column = lines[1].find("2023-").unwrap();
        assert!(column > "  twitter ".len(), "{text}");
        assert_eq!(
            lines[2],
            format!(
                "{}datacenter 7, machine 13, sequence 4095",
                " ".repeat(column)
            )
        );
        let discord = lines
            .iter()
            .position(|l| l.starts_with("  discord "))
            .unwrap();
        assert_eq!(
            words(lines[discord]),
            ["discord", "2028-01-11T20:30:25.343Z", "implausible"]
        );
        assert_eq!(lines[discord].find("2028-"), Some(column), "{text}");
        assert!(text.lines().all(|line| line.len() <= WIDTH), "{text}");
    }
}
