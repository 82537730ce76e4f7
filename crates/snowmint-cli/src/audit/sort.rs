//! The IDs that appear more than once, found in bounded memory.
//!
//! Every (ID, row) pair goes into a buffer of a fixed size; a full buffer
//! is sorted and written to a file of its own (a run); at the end the runs
//! and the last buffer are merged, in ID order, and equal IDs meet. Memory
//! is the buffer and one read buffer per run, whatever the input's size;
//! disk is 16 bytes per ID past the first buffer.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::fs::File;
use std::io::{self, BufReader, BufWriter, Read, Write};
use std::path::PathBuf;

use tempfile::TempDir;

/// The bytes a pair takes, in memory and on disk.
const PAIR: usize = 16;

/// The most rows of one ID kept for the report (every row is counted).
pub const ROWS_KEPT: usize = 100;

/// Gathers (ID, row) pairs and finds the IDs seen twice.
pub struct Sorter {
    buffer: Vec<(u64, u64)>,
    capacity: usize,
    /// Where runs go: `--temp-dir`, else the system's temporary directory.
    root: Option<PathBuf>,
    /// The runs' directory, made at the first spill; removed with them.
    dir: Option<TempDir>,
    runs: Vec<PathBuf>,
}

impl Sorter {
    /// A sorter that keeps at most `memory_limit` bytes of pairs in
    /// memory, spilling under `root`.
    pub fn new(memory_limit: u64, root: Option<PathBuf>) -> Sorter {
        let capacity = (memory_limit as usize / PAIR).max(1);
        Sorter {
            // Reserved once: growing by doubling would hold the old and the
            // new buffer at once, half again past the limit.
            buffer: Vec::with_capacity(capacity),
            capacity,
            root,
            dir: None,
            runs: Vec::new(),
        }
    }

    /// Adds the ID `id`, read at `row`.
    pub fn push(&mut self, id: u64, row: u64) -> io::Result<()> {
        if self.buffer.len() == self.capacity {
            self.spill()?;
        }
        self.buffer.push((id, row));
        Ok(())
    }

    /// How many runs went to disk.
    pub fn runs(&self) -> usize {
        self.runs.len()
    }

    /// Sorts the buffer and writes it out as a run.
    fn spill(&mut self) -> io::Result<()> {
        self.buffer.sort_unstable();
        if self.dir.is_none() {
            let mut builder = tempfile::Builder::new();
            builder.prefix("snowmint-audit-");
            self.dir = Some(match &self.root {
                Some(root) => builder.tempdir_in(root),
                None => builder.tempdir(),
            }?);
        }
        let dir = self
            .dir
            .as_ref()
            .map(TempDir::path)
            .unwrap_or_else(|| unreachable!());
        let path = dir.join(format!("run-{}", self.runs.len()));
        let mut out = BufWriter::with_capacity(1 << 20, File::create(&path)?);
        for (id, row) in self.buffer.drain(..) {
            out.write_all(&id.to_le_bytes())?;
            out.write_all(&row.to_le_bytes())?;
        }
        // Read back by this process only: flushed, not synced.
        out.flush()?;
        self.runs.push(path);
        Ok(())
    }

    /// Calls `each` with every ID seen more than once, in ID order: the
    /// ID, its first rows (at most [`ROWS_KEPT`], in row order), and how
    /// many rows it was seen at.
    pub fn duplicates(mut self, mut each: impl FnMut(u64, &[u64], u64)) -> io::Result<()> {
        self.buffer.sort_unstable();
        if self.runs.is_empty() {
            let mut at = 0;
            while at < self.buffer.len() {
                let id = self.buffer[at].0;
                let end = at + self.buffer[at..].partition_point(|(other, _)| *other == id);
                if end - at > 1 {
                    let rows: Vec<u64> = self.buffer[at..end.min(at + ROWS_KEPT)]
                        .iter()
                        .map(|(_, row)| *row)
                        .collect();
                    each(id, &rows, (end - at) as u64);
                }
                at = end;
            }
            return Ok(());
        }
        let mut sources: Vec<Source> = self
            .runs
            .iter()
            .map(|path| {
                File::open(path).map(|file| Source::Run(BufReader::with_capacity(1 << 16, file)))
            })
            .collect::<io::Result<_>>()?;
        let memory = std::mem::take(&mut self.buffer);
        sources.push(Source::Memory(memory.into_iter()));
        let mut heap = BinaryHeap::new();
        for (index, source) in sources.iter_mut().enumerate() {
            if let Some((id, row)) = source.next()? {
                heap.push(Reverse((id, row, index)));
            }
        }
        let mut current: Option<(u64, Vec<u64>, u64)> = None;
        while let Some(Reverse((id, row, index))) = heap.pop() {
            if let Some(next) = sources[index].next()? {
                heap.push(Reverse((next.0, next.1, index)));
            }
            match &mut current {
                Some((seen, rows, count)) if *seen == id => {
                    if rows.len() < ROWS_KEPT {
                        rows.push(row);
                    }
                    *count += 1;
                }
                _ => {
                    if let Some((seen, rows, count)) = current.take()
                        && count > 1
                    {
                        each(seen, &rows, count);
                    }
                    current = Some((id, vec![row], 1));
                }
            }
        }
        if let Some((seen, rows, count)) = current
            && count > 1
        {
            each(seen, &rows, count);
        }
        Ok(())
    }
}

/// A sorted stream of pairs: a run on disk, or the last buffer.
enum Source {
    Run(BufReader<File>),
    Memory(std::vec::IntoIter<(u64, u64)>),
}

impl Source {
    fn next(&mut self) -> io::Result<Option<(u64, u64)>> {
        match self {
            Source::Memory(pairs) => Ok(pairs.next()),
            Source::Run(reader) => {
                let mut bytes = [0u8; PAIR];
                match reader.read_exact(&mut bytes) {
                    Ok(()) => {
                        let (id, row) = bytes.split_at(8);
                        let word = |half: &[u8]| {
                            u64::from_le_bytes(half.try_into().unwrap_or_else(|_| unreachable!()))
                        };
                        Ok(Some((word(id), word(row))))
                    }
                    Err(error) if error.kind() == io::ErrorKind::UnexpectedEof => Ok(None),
                    Err(error) => Err(error),
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every duplicate, with its rows, in ID order.
    fn found(sorter: Sorter) -> Vec<(u64, Vec<u64>, u64)> {
        let mut found = Vec::new();
        sorter
            .duplicates(|id, rows, count| found.push((id, rows.to_vec(), count)))
            .unwrap();
        found
    }

    /// The same pairs give the same duplicates whether they fit in memory
    /// or are spilled in many runs.
    #[test]
    fn spilled_and_in_memory_agree() {
        let pairs: Vec<(u64, u64)> = (0..10_000u64)
            .map(|row| ((row * 7_919) % 9_001, row))
            .collect();
        let mut memory = Sorter::new(1 << 30, None);
        let mut spilled = Sorter::new(16 * 1_000, None);
        for &(id, row) in &pairs {
            memory.push(id, row).unwrap();
            spilled.push(id, row).unwrap();
        }
        assert_eq!(memory.runs(), 0);
        assert_eq!(spilled.runs(), 9);
        let (a, b) = (found(memory), found(spilled));
        assert_eq!(a, b);
        // 10,000 rows over 9,001 IDs: 999 IDs twice.
        assert_eq!(a.len(), 999);
        assert!(
            a.iter()
                .all(|(_, rows, count)| rows.len() == 2 && *count == 2)
        );
        assert!(a.iter().all(|(_, rows, _)| rows[0] < rows[1]));
    }

    /// An ID seen very often keeps its first rows and counts them all.
    #[test]
    fn many_copies_are_counted_and_capped() {
        let mut sorter = Sorter::new(16 * 64, None);
        for row in 0..1_000 {
            sorter.push(42, row).unwrap();
        }
        sorter.push(7, 5_000).unwrap();
        let found = found(sorter);
        assert_eq!(found.len(), 1);
        let (id, rows, count) = &found[0];
        assert_eq!((*id, rows.len(), *count), (42, ROWS_KEPT, 1_000));
    }
}
