//! `snowmint decode`.
//!
//! IDs come from the arguments or, in bulk, from standard input, one per
//! line. Bulk mode runs in constant memory: lines are read out of a fixed
//! buffer (one longer than [`MAX_LINE`] is reported, not stored), records are
//! appended to one output buffer that is written out in big chunks, and
//! nothing is allocated per line. A bad line is reported on stderr with its
//! number; the others still go through, and the exit code says at the end
//! that something failed.

use std::io::{self, Write};
use std::process::ExitCode;

use std::ffi::OsStr;

use clap::Args;
use clap::builder::{PossibleValue, TypedValueParser};
use snowmint::{Encoding, Layout, SnowflakeId};

use crate::Global;
use crate::failure::{BAD_INPUT, exit_code};
use crate::lines::{CHUNK, LineSink, read_lines};
use crate::records::{RecordFormat, RecordWriter};
use crate::values::EncodingParser;

/// Longest line taken as a possible ID; anything longer is reported as bad
/// without being kept in memory.
const MAX_LINE: usize = 1024;

/// Arguments of `snowmint decode`.
#[derive(Debug, Args)]
#[command(after_help = "\
Examples:
  $ snowmint decode 1724551110457221119
  id          1724551110457221119
  timestamp   1700000000000
  time        2023-11-14T22:13:20.000Z
  datacenter  7
  machine     13
  sequence    4095

  $ snowmint decode --input hex --format csv --no-header 17eed6190fcedfff
  1724551110457221119,1700000000000,2023-11-14T22:13:20.000Z,7,13,4095

  $ snowmint decode --input auto --format csv --no-header 0x17EED6190FCEDFFF
  1724551110457221119,1700000000000,2023-11-14T22:13:20.000Z,7,13,4095

  $ snowmint decode 17eed6190fcedfff
  ? 2
  error: ID \"17eed6190fcedfff\" is not a decimal integer: 'e' at position 2; [..]

  $ snowmint decode --format json --output base58 1724551110457221119
  {\"id\":\"51BRJMCGQge\",\"timestamp_ms\":1700000000000,\"time\":\"2023-11-14T22:13:20.000Z\",\"datacenter\":7,\"machine\":13,\"sequence\":4095}

  $ grep -o 'order_id=[0-9]*' app.log | cut -d= -f2 \\
      | snowmint decode --format tsv
  id\ttimestamp_ms\ttime\tdatacenter\tmachine\tsequence
  1724551110457221119\t1700000000000\t2023-11-14T22:13:20.000Z\t7\t13\t4095
  1724551114651521024\t1700000001000\t2023-11-14T22:13:21.000Z\t7\t13\t0

  $ snowmint decode --layout discord 175928847299117063
  id          175928847299117063
  timestamp   1462015105796
  time        2016-04-30T11:18:25.796Z
  worker      1
  process     0
  increment   7

  $ snowmint decode --layout sonyflake 487328464240640513
  id          487328464240640513
  timestamp   1700000000000
  time        2023-11-14T22:13:20.00Z
  sequence    0
  machine     513

Fields are named as the layout's family names them (`snowmint layout --list`),
and the time written at its unit's precision (10 ms for Sonyflake).

Standard input is read when no ID is given, or where an ID is `-`: one ID per
line, blank lines skipped. A bad line is reported on stderr with its line
number and the rest still goes through; the exit code is then 2. An ID that
does not read in --input but reads in other encodings names them; --input auto
takes the one encoding an ID reads in, and refuses IDs that read in several.")]
pub struct DecodeArgs {
    /// IDs to decode; none, or `-`, reads one ID per line from standard
    /// input.
    #[arg(value_name = "ID", allow_negative_numbers = true)]
    ids: Vec<String>,
    /// How to write each decoded ID.
    #[arg(long, value_enum, default_value_t)]
    format: RecordFormat,
    /// The encoding the IDs are written in; auto takes the one encoding
    /// each ID is valid in, and refuses one valid in several.
    #[arg(long, value_name = "ENCODING", default_value = "decimal", value_parser = InputParser)]
    input: Input,
    /// The encoding to write the IDs in.
    #[arg(long, value_name = "ENCODING", default_value = "decimal", value_parser = EncodingParser)]
    output: Encoding,
    /// Leave out the header line of TSV and CSV.
    #[arg(long)]
    no_header: bool,
    /// `--layout` and `--epoch`.
    #[command(flatten)]
    pub global: Global,
}

/// Runs `snowmint decode`.
pub fn run(args: DecodeArgs, global: &Global) -> anyhow::Result<ExitCode> {
    let layout = global.layout()?;
    let mut decoder = Decoder {
        layout,
        input: args.input,
        hinted: false,
        records: RecordWriter::new(args.format, layout, args.output, !args.no_header),
        pending: Vec::with_capacity(CHUNK + MAX_LINE),
        out: io::stdout().lock(),
        seen: 0,
        failed: 0,
        code: BAD_INPUT,
    };
    if args.ids.is_empty() {
        read_lines(io::stdin().lock(), MAX_LINE, &mut decoder)?;
    }
    for text in &args.ids {
        if text == "-" {
            read_lines(io::stdin().lock(), MAX_LINE, &mut decoder)?;
        } else {
            decoder.decode_text(text, None)?;
        }
    }
    decoder.flush()?;

    if decoder.failed == 0 {
        return Ok(ExitCode::SUCCESS);
    }
    if decoder.seen > 1 {
        eprintln!(
            "error: {} of {} IDs could not be decoded",
            decoder.failed, decoder.seen
        );
    }
    Ok(ExitCode::from(decoder.code))
}

/// What `--input` names: an encoding, or `auto`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Input {
    /// Each ID in the one encoding it is valid in.
    Auto,
    /// Every ID in this encoding.
    Exactly(Encoding),
}

/// Reads `--input`: `auto`, or an encoding as [`EncodingParser`] reads it.
#[derive(Debug, Clone, Copy)]
struct InputParser;

impl TypedValueParser for InputParser {
    type Value = Input;

    fn parse_ref(
        &self,
        cmd: &clap::Command,
        arg: Option<&clap::Arg>,
        value: &OsStr,
    ) -> Result<Input, clap::Error> {
        if value.eq_ignore_ascii_case("auto") {
            return Ok(Input::Auto);
        }
        EncodingParser
            .parse_ref(cmd, arg, value)
            .map(Input::Exactly)
    }

    fn possible_values(&self) -> Option<Box<dyn Iterator<Item = PossibleValue> + '_>> {
        let auto = PossibleValue::new("auto").help("The one encoding the ID is valid in");
        Some(Box::new(
            EncodingParser
                .possible_values()
                .into_iter()
                .flatten()
                .chain([auto]),
        ))
    }
}

/// The state of one `decode` run.
struct Decoder<W: Write> {
    /// The layout the IDs are read in.
    layout: Layout,
    input: Input,
    /// Whether a bad ID was already told which encodings read it (once
    /// per run: a file of IDs in another encoding would say it per line).
    hinted: bool,
    records: RecordWriter,
    /// Records not yet written out.
    pending: Vec<u8>,
    out: W,
    /// IDs (non-blank lines and arguments) seen so far.
    seen: u64,
    /// How many of them could not be decoded.
    failed: u64,
    /// The exit code the failures call for (every one is bad input).
    code: u8,
}

impl<W: Write> Decoder<W> {
    /// Decodes one ID, from an argument or from line `line` of the input.
    #[inline]
    fn decode_text(&mut self, text: &str, line: Option<u64>) -> io::Result<()> {
        self.seen += 1;
        let encoding = match self.input {
            Input::Exactly(encoding) => encoding,
            Input::Auto => return self.decode_auto(text, line),
        };
        match self.layout.parse_id(encoding, text) {
            Ok(id) => self.write(id, line)?,
            Err(error) if !self.hinted => {
                let hint = readings_hint(text, encoding);
                self.hinted = !hint.is_empty();
                self.report(line, &format_args!("{error}{hint}"))?;
            }
            Err(error) => {
                self.code = exit_code(error.kind());
                self.report(line, &error)?;
            }
        }
        Ok(())
    }

    /// Decodes one ID in the one encoding it is valid in (`--input auto`).
    fn decode_auto(&mut self, text: &str, line: Option<u64>) -> io::Result<()> {
        let readings = SnowflakeId::readings(text).collect::<Vec<_>>();
        // Encodings that agree (`0` in decimal, hex and base32) are one
        // reading.
        let distinct = readings
            .iter()
            .map(|(_, id)| *id)
            .collect::<std::collections::BTreeSet<_>>();
        match distinct.len() {
            1 => self.write(readings[0].1, line),
            0 => self.report(
                line,
                &format_args!(
                    "ID {:?} is not valid in any encoding (expected 0..=18446744073709551615 in decimal, hex, base32 or base58)",
                    snowmint::value::echo(text)
                ),
            ),
            _ => {
                let names: Vec<&str> = readings.iter().map(|(e, _)| e.name()).collect();
                self.report(
                    line,
                    &format_args!(
                        "ID {:?} is valid in {}, as different IDs; say which with --input",
                        snowmint::value::echo(text),
                        list(&names, "and")
                    ),
                )
            }
        }
    }

    #[inline]
    fn write(&mut self, id: SnowflakeId, line: Option<u64>) -> io::Result<()> {
        if let Err(error) = self.records.write(id, &mut self.pending) {
            self.code = exit_code(error.kind());
            return self.report(line, &error);
        }
        if self.pending.len() >= CHUNK {
            self.flush()?;
        }
        Ok(())
    }

    #[inline]
    fn decode_line(&mut self, number: u64, line: Option<&[u8]>) -> io::Result<()> {
        let Some(line) = line else {
            self.seen += 1;
            return self.report(
                Some(number),
                &format_args!("longer than {MAX_LINE} bytes; expected one ID per line"),
            );
        };
        let line = line.trim_ascii();
        if line.is_empty() {
            return Ok(());
        }
        match std::str::from_utf8(line) {
            Ok(text) => self.decode_text(text, Some(number)),
            // Not text: let the parser point at the first character it
            // cannot read.
            Err(_) => self.decode_text(&String::from_utf8_lossy(line), Some(number)),
        }
    }

    /// Reports a bad ID on stderr, after what was decoded before it, so
    /// that a terminal shows both in the order of the input.
    #[cold]
    fn report(&mut self, line: Option<u64>, error: &dyn std::fmt::Display) -> io::Result<()> {
        self.failed += 1;
        self.flush()?;
        match line {
            Some(number) => eprintln!("error: line {number}: {error}"),
            None => eprintln!("error: {error}"),
        }
        Ok(())
    }

    fn flush(&mut self) -> io::Result<()> {
        self.out.write_all(&self.pending)?;
        self.pending.clear();
        self.out.flush()
    }
}

impl<W: Write> LineSink for Decoder<W> {
    #[inline]
    fn line(&mut self, number: u64, line: Option<&[u8]>) -> io::Result<()> {
        self.decode_line(number, line)
    }

    /// Shows what is decoded so far before a read that may block.
    fn idle(&mut self) -> io::Result<()> {
        self.flush()
    }
}

/// `; it reads as hex: --input hex` when `text`, not valid in `tried`,
/// is valid in other encodings; empty when it is valid in none.
fn readings_hint(text: &str, tried: Encoding) -> String {
    let names: Vec<&str> = SnowflakeId::readings(text)
        .filter(|(encoding, _)| *encoding != tried)
        .map(|(encoding, _)| encoding.name())
        .collect();
    match names.as_slice() {
        [] => String::new(),
        [one] => format!("; it reads as {one}: --input {one}"),
        several => format!(
            "; it reads as {}: say which with --input",
            list(several, "or")
        ),
    }
}

/// `a`, `a or b`, `a, b or c` (or with `and`).
fn list(names: &[&str], conjunction: &str) -> String {
    match names {
        [] => String::new(),
        [one] => (*one).to_owned(),
        [first @ .., last] => format!("{} {conjunction} {last}", first.join(", ")),
    }
}
