//! Where `snowmint audit` reads IDs: files or standard input, one per line
//! or a column of CSV, or a PostgreSQL query's first column. Each value
//! is read by the core's parser; a negative integer (a signed column, such
//! as PostgreSQL's `bigint`, holding what a layout reads as a time before
//! its epoch) is kept as such, to be reported.

use std::fs::File;
use std::io::{self, BufRead, BufReader, Read};
use std::path::PathBuf;

use snowmint::{Encoding, SnowflakeId};

/// Bits of a row number given to the line: a source's rows are
/// `(source << LINE_BITS) | line`.
const LINE_BITS: u32 = 40;

/// Where IDs come from.
#[derive(Debug, Clone)]
pub enum Source {
    /// A file.
    File(PathBuf),
    /// Standard input.
    Stdin,
    /// A PostgreSQL query's first column.
    Postgres {
        /// The server, as the user gave it.
        url: snowmint_fleet::PostgresUrl,
        /// The query.
        query: String,
    },
}

impl Source {
    /// How a row of this source is named: `orders.csv:12`, `stdin:12`,
    /// `row 12`.
    pub fn row_name(&self, line: u64) -> String {
        match self {
            Source::File(path) => format!("{}:{line}", path.display()),
            Source::Stdin => format!("stdin:{line}"),
            Source::Postgres { .. } => format!("row {line}"),
        }
    }

    /// Its name in reports.
    pub fn name(&self) -> String {
        match self {
            Source::File(path) => path.display().to_string(),
            Source::Stdin => "stdin".to_owned(),
            Source::Postgres { url, query } => format!("{url}: {query}"),
        }
    }
}

/// A row number: the source's index and the line (or row) in it, from 1.
pub fn row(source: usize, line: u64) -> u64 {
    ((source as u64) << LINE_BITS) | line
}

/// The source index and line of a row number.
pub fn split_row(row: u64) -> (usize, u64) {
    ((row >> LINE_BITS) as usize, row & ((1 << LINE_BITS) - 1))
}

/// What a value read is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Value {
    /// An ID.
    Id(SnowflakeId),
    /// A negative integer: before the layout's epoch.
    Negative(i64),
}

/// Reads one value: an ID in decimal, or a negative integer.
pub fn parse_value(text: &str) -> Result<Value, String> {
    if let Some(digits) = text.strip_prefix('-')
        && !digits.is_empty()
        && digits.bytes().all(|b| b.is_ascii_digit())
        && let Ok(value) = text.parse::<i64>()
    {
        return Ok(Value::Negative(value));
    }
    SnowflakeId::parse(Encoding::Decimal, text)
        .map(Value::Id)
        .map_err(|error| error.to_string())
}

/// How lines are read.
#[derive(Debug, Clone)]
pub enum Shape {
    /// One ID per line; blank lines are skipped.
    Lines,
    /// One column of CSV.
    Csv {
        /// Its header's name, or its number from 1.
        column: Column,
        /// Whether the first line is a header (always, with a name).
        header: bool,
        /// The field separator.
        delimiter: u8,
    },
}

/// A CSV column.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Column {
    /// By its header's name.
    Named(String),
    /// By number, 1 for the first.
    Number(usize),
}

/// A line that holds no ID.
#[derive(Debug, Clone)]
pub struct BadLine {
    /// Its row number.
    pub row: u64,
    /// What it holds (cut to 100 characters).
    pub text: String,
    /// Why it is no ID.
    pub reason: String,
}

/// What reading does with each row.
pub trait Sink {
    /// A value read at `row`.
    fn value(&mut self, row: u64, value: Value) -> io::Result<()>;
    /// A line that holds no ID: `Err` stops the reading.
    fn bad(&mut self, line: BadLine) -> Result<(), String>;
}

/// Why reading stopped.
#[derive(Debug)]
pub enum Stop {
    /// A bad line, with `--skip-bad` not given: its message.
    Bad(String),
    /// A source could not be read.
    Io(String),
}

/// Reads source `index`, `reader`, as `shape` says, into `sink`.
pub fn read_text(
    index: usize,
    source: &Source,
    reader: impl Read,
    shape: &Shape,
    sink: &mut dyn Sink,
) -> Result<(), Stop> {
    let io = |error: io::Error| Stop::Io(format!("cannot read {}: {error}", source.name()));
    match shape {
        Shape::Lines => {
            let mut reader = BufReader::with_capacity(1 << 20, reader);
            let mut line = Vec::with_capacity(64);
            let mut number = 0u64;
            loop {
                line.clear();
                if reader.read_until(b'\n', &mut line).map_err(io)? == 0 {
                    return Ok(());
                }
                number += 1;
                value_at(index, number, &line, sink)?;
            }
        }
        Shape::Csv {
            column,
            header,
            delimiter,
        } => {
            let mut csv = csv::ReaderBuilder::new()
                .has_headers(*header || matches!(column, Column::Named(_)))
                .delimiter(*delimiter)
                .flexible(true)
                .from_reader(reader);
            let at = match column {
                Column::Number(number) => number - 1,
                Column::Named(name) => {
                    let headers = csv.byte_headers().map_err(|error| {
                        Stop::Io(format!("cannot read {}: {error}", source.name()))
                    })?;
                    let found = headers.iter().position(|field| field == name.as_bytes());
                    found.ok_or_else(|| {
                        let names: Vec<String> = headers
                            .iter()
                            .map(|field| format!("{:?}", String::from_utf8_lossy(field)))
                            .collect();
                        Stop::Bad(format!(
                            "{} has no column {name:?}; its header names {}",
                            source.name(),
                            names.join(", ")
                        ))
                    })?
                }
            };
            let mut record = csv::ByteRecord::new();
            loop {
                match csv.read_byte_record(&mut record) {
                    Ok(false) => return Ok(()),
                    Ok(true) => {}
                    Err(error) => {
                        let line = error.position().map_or(0, csv::Position::line);
                        let bad = BadLine {
                            row: row(index, line),
                            text: String::new(),
                            reason: format!("not CSV: {error}"),
                        };
                        sink.bad(bad).map_err(Stop::Bad)?;
                        continue;
                    }
                }
                let line = record.position().map_or(0, csv::Position::line);
                match record.get(at) {
                    Some(field) => value_at(index, line, field, sink)?,
                    None => {
                        let bad = BadLine {
                            row: row(index, line),
                            text: String::from_utf8_lossy(
                                &record.as_slice()[..record.as_slice().len().min(100)],
                            )
                            .into_owned(),
                            reason: format!("it has {} fields, no field {}", record.len(), at + 1),
                        };
                        sink.bad(bad).map_err(Stop::Bad)?;
                    }
                }
            }
        }
    }
}

/// Reads the value of `line` (a whole line, or a field), at line `number`
/// of source `index`.
fn value_at(index: usize, number: u64, line: &[u8], sink: &mut dyn Sink) -> Result<(), Stop> {
    let text = line.trim_ascii();
    if text.is_empty() {
        return Ok(());
    }
    let row = row(index, number);
    let parsed = std::str::from_utf8(text)
        .map_err(|_| "it is not UTF-8 text".to_owned())
        .and_then(parse_value);
    match parsed {
        Ok(value) => sink
            .value(row, value)
            .map_err(|error| Stop::Io(format!("cannot sort the IDs: {error}"))),
        Err(reason) => {
            let shown = String::from_utf8_lossy(&text[..text.len().min(100)]).into_owned();
            sink.bad(BadLine {
                row,
                text: shown,
                reason,
            })
            .map_err(Stop::Bad)
        }
    }
}

/// Opens a file or standard input.
pub fn open(source: &Source) -> Result<Box<dyn Read>, Stop> {
    match source {
        Source::File(path) => File::open(path)
            .map(|file| Box::new(file) as Box<dyn Read>)
            .map_err(|error| Stop::Io(format!("cannot open {}: {error}", path.display()))),
        Source::Stdin => Ok(Box::new(io::stdin().lock())),
        Source::Postgres { .. } => unreachable!("a query is not opened as a file"),
    }
}

/// Reads the COPY text of a query: rows come in chunks that may end in
/// the middle of a line; the first field of each row (up to a tab) is the
/// value, `\N` (NULL) a bad row.
#[cfg_attr(not(feature = "postgres"), allow(dead_code))]
pub struct CopyLines {
    index: usize,
    partial: Vec<u8>,
    rows: u64,
}

#[cfg_attr(not(feature = "postgres"), allow(dead_code))]
impl CopyLines {
    /// Rows of source `index`.
    pub fn new(index: usize) -> CopyLines {
        CopyLines {
            index,
            partial: Vec::new(),
            rows: 0,
        }
    }

    /// Takes the next chunk.
    pub fn feed(&mut self, mut chunk: &[u8], sink: &mut dyn Sink) -> Result<(), Stop> {
        while let Some(end) = chunk.iter().position(|b| *b == b'\n') {
            let (line, rest) = chunk.split_at(end);
            chunk = &rest[1..];
            if self.partial.is_empty() {
                self.row(line, sink)?;
            } else {
                let mut whole = std::mem::take(&mut self.partial);
                whole.extend_from_slice(line);
                self.row(&whole, sink)?;
            }
        }
        self.partial.extend_from_slice(chunk);
        Ok(())
    }

    /// The end of the copy: a last row without a line break.
    pub fn finish(mut self, sink: &mut dyn Sink) -> Result<(), Stop> {
        let rest = std::mem::take(&mut self.partial);
        if !rest.is_empty() {
            self.row(&rest, sink)?;
        }
        Ok(())
    }

    fn row(&mut self, line: &[u8], sink: &mut dyn Sink) -> Result<(), Stop> {
        self.rows += 1;
        let field = line.split(|b| *b == b'\t').next().unwrap_or_default();
        if field == b"\\N" {
            return sink
                .bad(BadLine {
                    row: row(self.index, self.rows),
                    text: "NULL".to_owned(),
                    reason: "the query's first column is NULL".to_owned(),
                })
                .map_err(Stop::Bad);
        }
        value_at(self.index, self.rows, field, sink)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Default)]
    struct Collect {
        values: Vec<(u64, Value)>,
        bad: Vec<BadLine>,
    }

    impl Sink for Collect {
        fn value(&mut self, row: u64, value: Value) -> io::Result<()> {
            self.values.push((row, value));
            Ok(())
        }
        fn bad(&mut self, line: BadLine) -> Result<(), String> {
            self.bad.push(line);
            Ok(())
        }
    }

    fn id(value: u64) -> Value {
        Value::Id(SnowflakeId::from_u64(value))
    }

    #[test]
    fn values_are_ids_or_negative_numbers() {
        assert_eq!(
            parse_value("1724551110457221119"),
            Ok(id(1_724_551_110_457_221_119))
        );
        assert_eq!(parse_value("-5"), Ok(Value::Negative(-5)));
        assert!(parse_value("-").is_err());
        assert!(parse_value("abc").unwrap_err().contains("abc"));
        assert!(parse_value("99999999999999999999").is_err());
    }

    #[test]
    fn lines_and_rows_are_numbered_from_one() {
        let source = Source::Stdin;
        let mut sink = Collect::default();
        let text = "7\n\n  8 \r\nnope\n9";
        read_text(2, &source, text.as_bytes(), &Shape::Lines, &mut sink).unwrap();
        let rows: Vec<(usize, u64)> = sink.values.iter().map(|(row, _)| split_row(*row)).collect();
        assert_eq!(rows, [(2, 1), (2, 3), (2, 5)]);
        assert_eq!(split_row(sink.bad[0].row), (2, 4));
        assert_eq!(sink.bad[0].text, "nope");
        assert_eq!(source.row_name(4), "stdin:4");
    }

    #[test]
    fn a_csv_column_by_name_or_number() {
        let source = Source::Stdin;
        let text = "order,id,note\na,7,\"x, y\"\nb,\"8\",z\nc\n";
        let shape = Shape::Csv {
            column: Column::Named("id".into()),
            header: false,
            delimiter: b',',
        };
        let mut sink = Collect::default();
        read_text(0, &source, text.as_bytes(), &shape, &mut sink).unwrap();
        let values: Vec<(u64, Value)> = sink.values.clone();
        assert_eq!(values, [(row(0, 2), id(7)), (row(0, 3), id(8))]);
        assert_eq!(sink.bad.len(), 1);
        assert_eq!(split_row(sink.bad[0].row).1, 4);
        assert!(
            sink.bad[0].reason.contains("no field 2"),
            "{}",
            sink.bad[0].reason
        );

        let missing = Shape::Csv {
            column: Column::Named("ids".into()),
            header: true,
            delimiter: b',',
        };
        let Err(Stop::Bad(message)) = read_text(
            0,
            &source,
            text.as_bytes(),
            &missing,
            &mut Collect::default(),
        ) else {
            panic!("a missing column was found");
        };
        assert_eq!(
            message,
            "stdin has no column \"ids\"; its header names \"order\", \"id\", \"note\""
        );

        let by_number = Shape::Csv {
            column: Column::Number(1),
            header: false,
            delimiter: b';',
        };
        let mut sink = Collect::default();
        read_text(0, &source, "5;x\n6;y\n".as_bytes(), &by_number, &mut sink).unwrap();
        assert_eq!(sink.values, [(row(0, 1), id(5)), (row(0, 2), id(6))]);
    }

    #[test]
    fn copy_text_is_read_across_chunks() {
        let mut lines = CopyLines::new(1);
        let mut sink = Collect::default();
        for chunk in ["12\tx\n1", "3\n\\N\n", "-4"] {
            lines.feed(chunk.as_bytes(), &mut sink).unwrap();
        }
        lines.finish(&mut sink).unwrap();
        assert_eq!(
            sink.values,
            [
                (row(1, 1), id(12)),
                (row(1, 2), id(13)),
                (row(1, 4), Value::Negative(-4))
            ]
        );
        assert_eq!(split_row(sink.bad[0].row), (1, 3));
        assert_eq!(sink.bad[0].text, "NULL");
    }
}
