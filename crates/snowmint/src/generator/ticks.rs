//! From a clock reading to the layout's ticks, decided once when the
//! generator is built so that the hot path does the least for each unit.
//!
//! - 1 ms units (Twitter and most families): the reading in milliseconds
//!   minus the epoch, as it is: one subtraction, as before layouts had
//!   units.
//! - Units of whole milliseconds (10 ms, 1 s): milliseconds since the
//!   epoch, divided by the unit.
//! - Finer units (1 µs, 250 µs): microseconds since the epoch, divided.
//!
//! A tick starts at `epoch + ticks * unit` and an ID of tick `t` may be
//! made at any instant within it, so the durable high-water marks, which
//! count milliseconds, stay conservative whatever the unit:
//! [`Generator::last_timestamp_ms`](crate::Generator::last_timestamp_ms)
//! gives the millisecond the last tick used starts in, and
//! [`resume_after`](crate::GeneratorBuilder::resume_after) counts every
//! tick starting in or before the given millisecond as used.

use crate::layout::Layout;

/// How a generator turns a clock reading into ticks of its layout.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Ticks {
    /// Milliseconds since the epoch, as they are.
    Millis,
    /// Milliseconds since the epoch divided by the unit, in milliseconds.
    CoarseMillis(u64),
    /// Microseconds since the epoch divided by the unit, in microseconds.
    Micros(u64),
}

impl Ticks {
    pub(crate) fn of(layout: &Layout) -> Ticks {
        let micros = u64::from(layout.unit().as_micros());
        match micros {
            1000 => Ticks::Millis,
            _ if micros.is_multiple_of(1000) => Ticks::CoarseMillis(micros / 1000),
            _ => Ticks::Micros(micros),
        }
    }

    /// Whether the clock is read in milliseconds.
    pub(crate) const fn in_millis(self) -> bool {
        !matches!(self, Ticks::Micros(_))
    }
}

/// Which time a call takes IDs at: the clock's, or one the caller gives.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum At {
    /// What the generator's clock reads.
    Clock,
    /// Unix milliseconds.
    Ms(i64),
    /// Unix microseconds.
    Us(i64),
}

/// One clock reading in both units (for the slow paths and messages).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Reading {
    pub(crate) ms: i64,
    pub(crate) us: i64,
}

impl Reading {
    pub(crate) fn of_ms(ms: i64) -> Reading {
        Reading {
            ms,
            us: ms.saturating_mul(1000),
        }
    }

    pub(crate) fn of_us(us: i64) -> Reading {
        Reading {
            ms: us.div_euclid(1000),
            us,
        }
    }
}
