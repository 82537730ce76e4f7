//! Writing decoded IDs, fast: records are appended to one reused buffer,
//! with no formatting machinery on the hot path.
//!
//! `snowmint decode` is meant to chew through files of millions of IDs, so a
//! record is assembled byte by byte: the ID by the core's stack encoder,
//! numbers by [`push_decimal`], and the time by [`TimeWriter`], which keeps
//! the date of the last day it wrote (IDs in a file are mostly from the same
//! day) and asks the core's calendar only when the day changes.

use std::io::Write;

use clap::ValueEnum;
use snowmint::{Encoding, Layout, SnowflakeId};

const MS_PER_DAY: i64 = 86_400_000;

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
    time: TimeWriter,
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
            time: TimeWriter::default(),
        }
    }

    /// Appends one ID's record to `record`.
    #[inline]
    pub fn write(&mut self, id: SnowflakeId, record: &mut Vec<u8>) {
        if self.written == 0 && self.header {
            self.write_header(record);
        }
        let parts = self.layout.decode(id);
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
                self.time.push(record, parts.timestamp_ms);
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
                self.time.push(record, parts.timestamp_ms);
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
                self.time.push(record, parts.timestamp_ms);
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

/// Appends `value` in decimal.
#[inline]
pub fn push_decimal(buf: &mut Vec<u8>, mut value: u64) {
    let mut digits = [0u8; 20];
    let mut at = digits.len();
    loop {
        at -= 1;
        digits[at] = b'0' + (value % 10) as u8;
        value /= 10;
        if value == 0 {
            break;
        }
    }
    buf.extend_from_slice(&digits[at..]);
}

/// Writes instants as RFC 3339 in UTC with milliseconds, the same text as
/// [`snowmint::format_time`], remembering the date of the last day seen.
#[derive(Debug)]
pub struct TimeWriter {
    /// Days since 1970-01-01 of `date`.
    day: i64,
    /// That day as `YYYY-MM-DD` (or with an extended year), from the core.
    date: Vec<u8>,
}

impl Default for TimeWriter {
    fn default() -> Self {
        TimeWriter {
            // No day: the first instant fills the cache.
            day: i64::MIN,
            date: Vec::with_capacity(24),
        }
    }
}

impl TimeWriter {
    /// Appends `unix_ms` as RFC 3339.
    #[inline]
    pub fn push(&mut self, buf: &mut Vec<u8>, unix_ms: i64) {
        let day = unix_ms.div_euclid(MS_PER_DAY);
        if day != self.day {
            self.remember(day);
        }
        let ms_of_day = unix_ms.rem_euclid(MS_PER_DAY) as u64;
        let (hour, minute) = (ms_of_day / 3_600_000, ms_of_day / 60_000 % 60);
        let (second, milli) = (ms_of_day / 1000 % 60, ms_of_day % 1000);
        buf.extend_from_slice(&self.date);
        buf.extend_from_slice(&[
            b'T',
            b'0' + (hour / 10) as u8,
            b'0' + (hour % 10) as u8,
            b':',
            b'0' + (minute / 10) as u8,
            b'0' + (minute % 10) as u8,
            b':',
            b'0' + (second / 10) as u8,
            b'0' + (second % 10) as u8,
            b'.',
            b'0' + (milli / 100) as u8,
            b'0' + (milli / 10 % 10) as u8,
            b'0' + (milli % 10) as u8,
            b'Z',
        ]);
    }

    #[cold]
    fn remember(&mut self, day: i64) {
        self.date.clear();
        // Writing to a Vec cannot fail.
        let _ = write!(self.date, "{}", snowmint::format_time(day * MS_PER_DAY));
        let date_len = self
            .date
            .iter()
            .position(|&b| b == b'T')
            .unwrap_or(self.date.len());
        self.date.truncate(date_len);
        self.day = day;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn time_writer_matches_the_core_across_days_and_years() {
        let mut writer = TimeWriter::default();
        let mut buf = Vec::new();
        // A spread of instants, with repeats of a day and jumps between days,
        // from 1970 through the end of the 41-bit range and beyond 9999.
        let mut instants: Vec<i64> = (0..2000)
            .map(|i| i * 9_876_543_211 % 4_000_000_000_000)
            .collect();
        instants.extend([
            0,
            86_399_999,
            86_400_000,
            1_700_000_000_000,
            3_487_858_230_208,
        ]);
        instants.push(253_402_300_800_000); // the year 10000
        for unix_ms in instants {
            buf.clear();
            writer.push(&mut buf, unix_ms);
            assert_eq!(
                std::str::from_utf8(&buf).unwrap(),
                snowmint::format_time(unix_ms).to_string()
            );
        }
    }

    #[test]
    fn decimals() {
        for value in [0, 7, 10, 4095, 1_700_000_000_000, u64::MAX] {
            let mut buf = Vec::new();
            push_decimal(&mut buf, value);
            assert_eq!(buf, value.to_string().as_bytes());
        }
    }
}
