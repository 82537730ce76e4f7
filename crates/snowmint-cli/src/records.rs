//! Writing decoded IDs, fast: records are appended to one reused buffer,
//! with no formatting machinery on the hot path.
//!
//! `snowmint decode` is meant to chew through files of millions of IDs, so a
//! record is assembled byte by byte: the ID by the core's stack encoder,
//! numbers by the core's [`push_decimal`], and the time by the core's
//! [`Rfc3339::write_to`].

use clap::ValueEnum;
use snowmint::{Encoding, Layout, Rfc3339, SnowflakeId, format_time, push_decimal};

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

/// Column names, in order, for the header lines and the JSON keys.
const COLUMNS: [&str; 6] = [
    "id",
    "timestamp_ms",
    "time",
    "datacenter",
    "machine",
    "sequence",
];

/// The numbers of one record.
struct Row {
    timestamp_ms: i64,
    datacenter: u64,
    machine: u64,
    sequence: u64,
}

/// Writes decoded IDs in one format, appending to a buffer that the caller
/// sends out in big chunks.
pub struct RecordWriter {
    format: RecordFormat,
    layout: Layout,
    encoding: Encoding,
    /// Whether TSV and CSV start with the column names.
    header: bool,
    /// How many records were written, to separate text blocks.
    written: u64,
}

impl RecordWriter {
    /// A writer of `format` that decodes with `layout` and writes IDs in
    /// `encoding`.
    pub fn new(format: RecordFormat, layout: Layout, encoding: Encoding, header: bool) -> Self {
        RecordWriter {
            format,
            layout,
            encoding,
            header,
            written: 0,
        }
    }

    /// Appends one ID's record to `record`: its time, the node as two
    /// numbers (`datacenter` and `machine`: the node fields above the
    /// lowest one, and the lowest; see `Layout::node_from_pair`) and its
    /// sequence (0 in a layout without one).
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
        let (datacenter, machine) = self.layout.pair_of(decoded.node());
        let sequence = self
            .layout
            .sequence_field()
            .map_or(0, |f| f.value_in(id.as_u64()));
        let parts = Row {
            timestamp_ms: decoded.time_ms(),
            datacenter,
            machine,
            sequence,
        };
        let encoded = id.encode(self.encoding);
        let id_text = encoded.as_str().as_bytes();
        // Every timestamp a layout can decode is at or after its epoch,
        // which is at or after 1970: never negative.
        let timestamp_ms = parts.timestamp_ms.max(0) as u64;
        match self.format {
            RecordFormat::Text => {
                if self.written > 0 {
                    record.push(b'\n');
                }
                record.extend_from_slice(b"id          ");
                record.extend_from_slice(id_text);
                record.extend_from_slice(b"\ntimestamp   ");
                push_decimal(record, timestamp_ms);
                record.extend_from_slice(b"\ntime        ");
                push_time(record, parts.timestamp_ms);
                record.extend_from_slice(b"\ndatacenter  ");
                push_decimal(record, parts.datacenter);
                record.extend_from_slice(b"\nmachine     ");
                push_decimal(record, parts.machine);
                record.extend_from_slice(b"\nsequence    ");
                push_decimal(record, parts.sequence);
            }
            RecordFormat::Json => {
                // Every value is digits or an encoding's alphabet: nothing
                // to escape.
                record.extend_from_slice(b"{\"id\":\"");
                record.extend_from_slice(id_text);
                record.extend_from_slice(b"\",\"timestamp_ms\":");
                push_decimal(record, timestamp_ms);
                record.extend_from_slice(b",\"time\":\"");
                push_time(record, parts.timestamp_ms);
                record.extend_from_slice(b"\",\"datacenter\":");
                push_decimal(record, parts.datacenter);
                record.extend_from_slice(b",\"machine\":");
                push_decimal(record, parts.machine);
                record.extend_from_slice(b",\"sequence\":");
                push_decimal(record, parts.sequence);
                record.push(b'}');
            }
            RecordFormat::Tsv | RecordFormat::Csv => {
                let separator = self.separator();
                record.extend_from_slice(id_text);
                record.push(separator);
                push_decimal(record, timestamp_ms);
                record.push(separator);
                push_time(record, parts.timestamp_ms);
                record.push(separator);
                push_decimal(record, parts.datacenter);
                record.push(separator);
                push_decimal(record, parts.machine);
                record.push(separator);
                push_decimal(record, parts.sequence);
            }
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
        for (i, column) in COLUMNS.iter().enumerate() {
            if i > 0 {
                record.push(self.separator());
            }
            record.extend_from_slice(column.as_bytes());
        }
        record.push(b'\n');
    }
}

/// Appends `unix_ms` as RFC 3339 in UTC with milliseconds.
#[inline]
pub fn push_time(buf: &mut Vec<u8>, unix_ms: i64) {
    let mut text = [0; Rfc3339::MAX_LEN];
    buf.extend_from_slice(format_time(unix_ms).write_to(&mut text).as_bytes());
}
