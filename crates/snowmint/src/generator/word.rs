//! The state word a generator owns by default.

use std::ops::Deref;

#[cfg(loom)]
use loom::sync::atomic::AtomicU64;
#[cfg(not(loom))]
use std::sync::atomic::AtomicU64;

/// The state word a [`Generator`](crate::Generator) owns, the default: an
/// `AtomicU64` alone on its cache line. See
/// [`GeneratorBuilder::build_on`](crate::GeneratorBuilder::build_on) for a
/// generator over a word of the caller's.
#[derive(Debug)]
pub struct OwnWord(CachePadded<AtomicU64>);

impl OwnWord {
    pub(crate) fn new(value: u64) -> OwnWord {
        OwnWord(CachePadded(AtomicU64::new(value)))
    }
}

impl Deref for OwnWord {
    type Target = AtomicU64;

    fn deref(&self) -> &AtomicU64 {
        &self.0
    }
}

/// Keeps a value on its own cache line (128 bytes covers the adjacent-line
/// prefetch of x86 and the line size of recent ARM cores).
#[derive(Debug, Default)]
#[repr(align(128))]
struct CachePadded<T>(T);

impl<T> Deref for CachePadded<T> {
    type Target = T;

    fn deref(&self) -> &T {
        &self.0
    }
}
