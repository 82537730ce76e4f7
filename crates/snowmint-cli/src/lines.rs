//! Standard input, one value or text per line, in constant memory: the
//! commands that read in bulk (`decode`, `inspect`) hand each line to a
//! [`LineSink`].
//!
//! Lines are read out of a fixed buffer; one longer than the reader's limit
//! is reported as too long, not stored. Before a read that may block (a
//! terminal, `tail -f`), the sink is told, so that it can show what it has.

use std::io::{self, BufRead, BufReader};

/// Input chunk size: big enough that system calls cost nothing next to the
/// work, small enough to stay in cache.
pub const CHUNK: usize = 64 * 1024;

/// What is done with each line.
pub trait LineSink {
    /// Line `number` (from 1): its bytes without the `\n`, or `None` when
    /// it was longer than the limit (and was not kept).
    fn line(&mut self, number: u64, line: Option<&[u8]>) -> io::Result<()>;

    /// The next read may block: write out what is pending.
    fn idle(&mut self) -> io::Result<()>;
}

/// Reads every line of `reader`, none kept longer than `max_line` bytes.
pub fn read_lines(
    reader: impl BufRead,
    max_line: usize,
    sink: &mut impl LineSink,
) -> io::Result<()> {
    let mut reader = BufReader::with_capacity(CHUNK, reader);
    // A line split across two reads of the buffer, kept here.
    let mut partial: Vec<u8> = Vec::with_capacity(max_line.min(CHUNK));
    let mut too_long = false;
    let mut number = 0u64;
    // Adds `bytes` to the partial line unless that makes it too long;
    // says whether it did.
    let keep = |partial: &mut Vec<u8>, bytes: &[u8]| {
        if partial.len() + bytes.len() > max_line {
            partial.clear();
            true
        } else {
            partial.extend_from_slice(bytes);
            false
        }
    };
    loop {
        if reader.buffer().is_empty() {
            sink.idle()?;
        }
        let available = match reader.fill_buf() {
            Ok(available) => available,
            Err(error) if error.kind() == io::ErrorKind::Interrupted => continue,
            Err(error) => return Err(error),
        };
        if available.is_empty() {
            if !partial.is_empty() || too_long {
                number += 1;
                sink.line(number, (!too_long).then_some(&partial[..]))?;
            }
            return Ok(());
        }
        match available.iter().position(|&b| b == b'\n') {
            Some(end) => {
                number += 1;
                if partial.is_empty() && !too_long {
                    let line = &available[..end];
                    sink.line(number, (line.len() <= max_line).then_some(line))?;
                } else {
                    too_long |= keep(&mut partial, &available[..end]);
                    sink.line(number, (!too_long).then_some(&partial[..]))?;
                    partial.clear();
                    too_long = false;
                }
                reader.consume(end + 1);
            }
            None => {
                too_long |= keep(&mut partial, available);
                let read = available.len();
                reader.consume(read);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Default)]
    struct Collect(Vec<(u64, Option<String>)>);

    impl LineSink for Collect {
        fn line(&mut self, number: u64, line: Option<&[u8]>) -> io::Result<()> {
            let line = line.map(|l| String::from_utf8_lossy(l).into_owned());
            self.0.push((number, line));
            Ok(())
        }

        fn idle(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn long_lines_are_reported_not_kept() {
        let long = "x".repeat(3 * CHUNK);
        let input = format!("a\n{long}\nbb\n{long}");
        let mut sink = Collect::default();
        read_lines(input.as_bytes(), 10, &mut sink).unwrap();
        let expected = [(1, Some("a")), (2, None), (3, Some("bb")), (4, None)];
        let expected: Vec<_> = expected
            .iter()
            .map(|(n, l)| (*n, l.map(str::to_owned)))
            .collect();
        assert_eq!(sink.0, expected);
    }

    #[test]
    fn a_line_as_long_as_the_limit_is_kept() {
        let mut sink = Collect::default();
        read_lines("12345\n123456\n".as_bytes(), 5, &mut sink).unwrap();
        assert_eq!(sink.0, [(1, Some("12345".to_owned())), (2, None)]);
    }
}
