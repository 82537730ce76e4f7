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
use snowmint::inspect::{Catalog, FieldValue, Inspector, MAX_TEXT, Token};

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
    out: W,
    /// Tokens found so far.
    found: u64,
    /// Lines refused for their length.
    too_long: u64,
}

impl<W: Write> Writer<W> {
    /// Writes the tokens of one text (line `line` of standard input).
    fn text(&mut self, text: &[u8], line: Option<u64>) -> io::Result<()> {
        for mut token in self.inspector.inspect(text) {
            self.found += 1;
            token.keep_best(self.top);
            match self.format {
                Format::Text => write_text(&token, &mut self.pending),
                Format::Json => write_json(&token, line, &mut self.pending)?,
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
/// standard input it was on.
fn write_json(token: &Token, line: Option<u64>, out: &mut Vec<u8>) -> io::Result<()> {
    #[derive(serde::Serialize)]
    struct Located<'a> {
        #[serde(flatten)]
        token: &'a Token,
        #[serde(skip_serializing_if = "Option::is_none")]
        line: Option<u64>,
    }
    serde_json::to_writer(&mut *out, &Located { token, line })?;
    out.push(b'\n');
    Ok(())
}

/// The width the text output's explanations are wrapped at.
const WIDTH: usize = 80;

/// `text` in lines of at most `width` characters, broken at spaces (a
/// longer word gets a line of its own).
fn wrap(text: &str, width: usize) -> Vec<&str> {
    let mut lines = Vec::new();
    let mut rest = text.trim();
    while rest.len() > width {
        let cut = rest[..=width].rfind(' ').or_else(|| rest.find(' '));
        let Some(cut) = cut else { break };
        lines.push(rest[..cut].trim_end());
        rest = rest[cut..].trim_start();
    }
    if !rest.is_empty() {
        lines.push(rest);
    }
    lines
}

/// A block per token: its text and where it was found, then a line per
/// reading (family, time, rank, fields) and its why under it, in columns.
fn write_text(token: &Token, out: &mut Vec<u8>) {
    out.extend_from_slice(token.input().as_bytes());
    if let Some(context) = token.context() {
        out.extend_from_slice(b"  ");
        out.extend_from_slice(context.as_bytes());
    }
    out.push(b'\n');
    let rows: Vec<[String; 4]> = token
        .candidates()
        .iter()
        .map(|reading| {
            let time = reading
                .time()
                .map_or_else(|| "no time".to_owned(), |t| t.to_string());
            let fields = reading
                .fields()
                .iter()
                // An integer's decimal value only where it was written
                // otherwise.
                .filter(|field| {
                    !(field.name == "id"
                        && matches!(&field.value, FieldValue::Text(id) if id == token.input()))
                })
                .map(|field| format!("{} {}", field.name, field.value))
                .collect::<Vec<_>>()
                .join(", ");
            [
                reading.family().to_owned(),
                time,
                reading.plausibility().to_string(),
                fields,
            ]
        })
        .collect();
    let width = |column: usize| rows.iter().map(|row| row[column].len()).max().unwrap_or(0);
    let (family, time) = (width(0), width(1));
    // Fields and the why go under the time, wrapped to fit 80 columns.
    let indent = " ".repeat(family + 4);
    let room = WIDTH.saturating_sub(indent.len()).max(20);
    for (row, reading) in rows.iter().zip(token.candidates()) {
        let line = format!("  {:family$}  {:time$}  {}\n", row[0], row[1], row[2]);
        out.extend_from_slice(line.as_bytes());
        for line in wrap(&row[3], room)
            .into_iter()
            .chain(wrap(reading.why(), room))
        {
            out.extend_from_slice(indent.as_bytes());
            out.extend_from_slice(line.as_bytes());
            out.push(b'\n');
        }
    }
    if token.candidates().is_empty() {
        out.extend_from_slice(b"  (no family reads it)\n");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_blocks_align_their_columns() {
        let inspector = Inspector::new(1_750_000_000_000);
        let token = inspector.inspect("1724551110457221119").next().unwrap();
        let mut out = Vec::new();
        write_text(&token, &mut out);
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
