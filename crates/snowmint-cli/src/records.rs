//! Writing decoded IDs, fast: records are appended to one reused buffer,
//! with no formatting machinery on the hot path.
//!
//! `snowmint decode` is meant to chew through files of millions of IDs, so a
//! record is assembled byte by byte: the ID by the core's stack encoder,
//! numbers by the core's [`push_decimal`], and the time by the core's
//! [`Rfc3339::write_to`].

use clap::ValueEnum;
use snowmint::{Encoding, Field, Layout, Rfc3339, Role, SnowflakeId, push_decimal};

/// How decoded IDs are written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, ValueEnum)]
pub enum RecordFormat {
    /// A block of aligned lines per ID, for people.
    #[default]
    Text,
    /// One JSON object per line; the ID as a string.
    Json,
    /// Tab-separated values, with a header line.
    Tsv,
    /// Comma-separated values, with a header line.
    Csv,
}

/// The columns before the fields, in order, for the header lines and the
/// JSON keys.
const FIRST_COLUMNS: [&str; 3] = ["id", "timestamp_ms", "time"];

/// The width of a label in the text format, at least: `datacenter` and a
/// space, as before layouts had named fields.
const LABEL_WIDTH: usize = 12;

/// One field of the layout other than the time, ready to write: where its
/// bits lie, and what comes before its value in each format.
struct Column {
    shift: u32,
    mask: u64,
    /// `\nNAME    ` (text), `,"NAME":` (JSON), or the separator (TSV, CSV).
    prefix: Vec<u8>,
}

/// Writes decoded IDs in one format, appending to a buffer that the caller
/// sends out in big chunks.
///
/// Every field of the layout but the time is a column, named as the family
/// names it (Twitter's `datacenter`, `machine`, `sequence`; Discord's
/// `worker`, `process`, `increment`), and the time is written at the
/// layout's precision.
pub struct RecordWriter {
    format: RecordFormat,
    layout: Layout,
    encoding: Encoding,
    /// The layout's fields other than the time, most significant first.
    columns: Vec<Column>,
    /// `\ntimestamp   ` and `\ntime        `, padded for the text format.
    text_labels: [Vec<u8>; 3],
    /// Whether TSV and CSV start with the column names.
    header: bool,
    /// How many records were written, to separate text blocks.
    written: u64,
}

impl RecordWriter {
    /// A writer of `format` that decodes with `layout` and writes IDs in
    /// `encoding`.
    pub fn new(format: RecordFormat, layout: Layout, encoding: Encoding, header: bool) -> Self {
        let fields: Vec<&Field> = layout
            .fields()
            .iter()
            .filter(|field| field.role() != Role::Time)
            .collect();
        let width = fields
            .iter()
            .map(|field| field.name().len() + 2)
            .max()
            .unwrap_or(0)
            .max(LABEL_WIDTH);
        let label = |name: &str, first: bool| {
            let mut text = Vec::with_capacity(width + 1);
            if !first {
                text.push(b'\n');
            }
            text.extend_from_slice(format!("{name:<width$}").as_bytes());
            text
        };
        let separator = if format == RecordFormat::Csv {
            b','
        } else {
            b'\t'
        };
        let columns = fields
            .iter()
            .map(|field| Column {
                shift: u32::from(field.shift()),
                mask: field.max(),
                prefix: match format {
                    RecordFormat::Text => label(field.name(), false),
                    // A field's name is a letter then letters, digits and
                    // `_`: nothing to escape.
                    RecordFormat::Json => format!(",\"{}\":", field.name()).into_bytes(),
                    RecordFormat::Tsv | RecordFormat::Csv => vec![separator],
                },
            })
            .collect();
        RecordWriter {
            format,
            layout,
            encoding,
            columns,
            text_labels: [
                label("id", true),
                label("timestamp", false),
                label("time", false),
            ],
            header,
            written: 0,
        }
    }

    /// Appends one ID's record to `record`: its time, and the value of
    /// every other field.
    ///
    /// # Errors
    ///
    /// An ID above the layout's largest; nothing is appended.
    #[inline]
    pub fn write(&mut self, id: SnowflakeId, record: &mut Vec<u8>) -> Result<(), snowmint::Error> {
        let decoded = self.layout.decode(id)?;
        if self.written == 0 && self.header {
            self.write_header(record);
        }
        let raw = id.as_u64();
        let encoded = id.encode(self.encoding);
        let id_text = encoded.as_str().as_bytes();
        // Every timestamp a layout can decode is at or after its epoch,
        // which is at or after 1970: never negative.
        let timestamp_ms = decoded.time_ms().max(0) as u64;
        let mut time = [0; Rfc3339::MAX_LEN];
        let time = decoded.time().write_to(&mut time).as_bytes();
        match self.format {
            RecordFormat::Text => {
                if self.written > 0 {
                    record.push(b'\n');
                }
                let [id_label, timestamp_label, time_label] = &self.text_labels;
                record.extend_from_slice(id_label);
                record.extend_from_slice(id_text);
                record.extend_from_slice(timestamp_label);
                push_decimal(record, timestamp_ms);
                record.extend_from_slice(time_label);
                record.extend_from_slice(time);
            }
            RecordFormat::Json => {
                // Every value is digits or an encoding's alphabet: nothing
                // to escape.
                record.extend_from_slice(b"{\"id\":\"");
                record.extend_from_slice(id_text);
                record.extend_from_slice(b"\",\"timestamp_ms\":");
                push_decimal(record, timestamp_ms);
                record.extend_from_slice(b",\"time\":\"");
                record.extend_from_slice(time);
                record.push(b'"');
            }
            RecordFormat::Tsv | RecordFormat::Csv => {
                let separator = self.separator();
                record.extend_from_slice(id_text);
                record.push(separator);
                push_decimal(record, timestamp_ms);
                record.push(separator);
                record.extend_from_slice(time);
            }
        }
        for column in &self.columns {
            record.extend_from_slice(&column.prefix);
            push_decimal(record, (raw >> column.shift) & column.mask);
        }
        if self.format == RecordFormat::Json {
            record.push(b'}');
        }
        record.push(b'\n');
        self.written += 1;
        Ok(())
    }

    fn separator(&self) -> u8 {
        if self.format == RecordFormat::Csv {
            b','
        } else {
            b'\t'
        }
    }

    fn write_header(&self, record: &mut Vec<u8>) {
        if !matches!(self.format, RecordFormat::Tsv | RecordFormat::Csv) {
            return;
        }
        let fields = self
            .layout
            .fields()
            .iter()
            .filter(|field| field.role() != Role::Time)
            .map(Field::name);
        for (i, column) in FIRST_COLUMNS.into_iter().chain(fields).enumerate() {
            if i > 0 {
                record.push(self.separator());
            }
            record.extend_from_slice(column.as_bytes());
        }
        record.push(b'\n');
    }
}
