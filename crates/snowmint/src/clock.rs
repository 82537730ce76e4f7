//! Where time comes from.
//!
//! The generator reads time only through [`Clock`], so that tests can drive
//! it by hand ([`ManualClock`]) and services can shift it ([`OffsetClock`]).

use std::cell::Cell;
use std::sync::Arc;
use std::sync::atomic::{AtomicI64, Ordering};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// A source of wall-clock time in Unix milliseconds (and microseconds, for
/// layouts with units finer than a millisecond).
///
/// Implementations must be cheap: the generator reads the clock once per
/// ID, in milliseconds for layouts whose unit is a whole number of
/// milliseconds and in microseconds otherwise.
///
/// # Examples
///
/// ```
/// use snowmint::{Clock, SystemClock};
///
/// let now = SystemClock.now_ms();
/// assert!(now > 1_700_000_000_000);
/// ```
pub trait Clock: Send + Sync {
    /// Milliseconds since 1970-01-01T00:00:00Z.
    ///
    /// # Examples
    ///
    /// ```
    /// use snowmint::{Clock, ManualClock};
    ///
    /// assert_eq!(ManualClock::new(7).now_ms(), 7);
    /// ```
    fn now_ms(&self) -> i64;

    /// Microseconds since 1970-01-01T00:00:00Z. The default is
    /// [`now_ms`](Clock::now_ms) times 1000, for clocks that count
    /// milliseconds only: right, if coarse (a 1 µs layout on such a clock
    /// makes a millisecond's worth of IDs at the start of each
    /// millisecond).
    ///
    /// # Examples
    ///
    /// ```
    /// use snowmint::{Clock, ManualClock};
    ///
    /// let clock = ManualClock::new(7);
    /// clock.advance_us(5);
    /// assert_eq!((clock.now_ms(), clock.now_us()), (7, 7_005));
    /// ```
    fn now_us(&self) -> i64 {
        self.now_ms().saturating_mul(1000)
    }
}

/// The operating system's wall clock (`SystemTime`), which can step
/// backwards when NTP or a person corrects it.
///
/// # Examples
///
/// ```
/// use snowmint::{Clock, SystemClock};
///
/// let a = SystemClock.now_ms();
/// let b = SystemClock.now_ms();
/// assert!(b >= a - 1000); // usually b >= a; the wall clock may step back
/// ```
#[derive(Debug, Clone, Copy, Default)]
pub struct SystemClock;

impl Clock for SystemClock {
    #[inline]
    fn now_ms(&self) -> i64 {
        let now = SystemTime::now();
        let (start, end, ms) = LAST_MILLISECOND.get();
        if start <= now && now < end {
            ms
        } else {
            convert_and_remember(now)
        }
    }

    #[inline]
    fn now_us(&self) -> i64 {
        match SystemTime::now().duration_since(UNIX_EPOCH) {
            // Fits until the year 294,000.
            Ok(since) => since.as_micros() as i64,
            Err(before) => -(before.duration().as_micros() as i64),
        }
    }
}

thread_local! {
    /// The millisecond this thread's last clock reading fell in: its start,
    /// its end (exclusive) and its number.
    ///
    /// Turning a `SystemTime` into milliseconds goes through
    /// `duration_since`, which std does not inline even with link-time
    /// optimisation: it adds about 45% to a read in a default release
    /// build and about 10% with LTO, however the milliseconds are then
    /// computed. Comparing a reading with the bounds of the last
    /// millisecond inlines and adds 2–4% — and a busy generator reads
    /// the clock thousands of times within one millisecond (BENCHMARKS.md,
    /// "Reading the clock"). The clock is still read on every call, and the
    /// answer is exact: a reading outside the bounds, later or earlier, is
    /// converted.
    static LAST_MILLISECOND: Cell<(SystemTime, SystemTime, i64)> =
        const { Cell::new((UNIX_EPOCH, UNIX_EPOCH, 0)) };
}

/// Converts `now` to Unix milliseconds (rounding towards 1970) and, for
/// readings after 1970, remembers the bounds of that millisecond.
#[inline(never)]
fn convert_and_remember(now: SystemTime) -> i64 {
    match now.duration_since(UNIX_EPOCH) {
        Ok(since) => {
            // Fits until the year 292 million.
            let ms = since.as_millis() as i64;
            let start = UNIX_EPOCH.checked_add(Duration::from_millis(ms as u64));
            let end = start.and_then(|start| start.checked_add(Duration::from_millis(1)));
            if let (Some(start), Some(end)) = (start, end) {
                LAST_MILLISECOND.set((start, end, ms));
            }
            ms
        }
        Err(before) => -(before.duration().as_millis() as i64),
    }
}

/// A clock that only moves when told to; clones share the same time. It
/// counts microseconds; set and moved in milliseconds, or in microseconds
/// with the `_us` methods.
///
/// # Examples
///
/// ```
/// use snowmint::{Clock, ManualClock};
///
/// let clock = ManualClock::new(1_700_000_000_000);
/// let handle = clock.clone();
/// handle.advance(5);
/// assert_eq!(clock.now_ms(), 1_700_000_000_005);
/// handle.set(1_699_999_999_000); // backwards, like an NTP step
/// assert_eq!(clock.now_ms(), 1_699_999_999_000);
/// ```
#[derive(Debug, Clone, Default)]
pub struct ManualClock {
    now_us: Arc<AtomicI64>,
}

impl ManualClock {
    /// A clock that reads `now_ms` until changed.
    ///
    /// # Examples
    ///
    /// ```
    /// use snowmint::{Clock, ManualClock};
    ///
    /// assert_eq!(ManualClock::new(42).now_ms(), 42);
    /// ```
    pub fn new(now_ms: i64) -> ManualClock {
        ManualClock {
            now_us: Arc::new(AtomicI64::new(now_ms.saturating_mul(1000))),
        }
    }

    /// Sets the time, forwards or backwards.
    ///
    /// # Examples
    ///
    /// ```
    /// use snowmint::{Clock, ManualClock};
    ///
    /// let clock = ManualClock::new(100);
    /// clock.set(50);
    /// assert_eq!(clock.now_ms(), 50);
    /// ```
    pub fn set(&self, now_ms: i64) {
        self.set_us(now_ms.saturating_mul(1000));
    }

    /// Sets the time in microseconds, forwards or backwards.
    pub fn set_us(&self, now_us: i64) {
        // SeqCst: tests set the clock from one thread and expect every other
        // thread's next read to see it.
        self.now_us.store(now_us, Ordering::SeqCst);
    }

    /// Moves the time by `delta_ms` (negative moves it back).
    ///
    /// # Examples
    ///
    /// ```
    /// use snowmint::{Clock, ManualClock};
    ///
    /// let clock = ManualClock::new(100);
    /// clock.advance(-30);
    /// assert_eq!(clock.now_ms(), 70);
    /// ```
    pub fn advance(&self, delta_ms: i64) {
        self.advance_us(delta_ms.saturating_mul(1000));
    }

    /// Moves the time by `delta_us` microseconds (negative moves it back).
    pub fn advance_us(&self, delta_us: i64) {
        self.now_us.fetch_add(delta_us, Ordering::SeqCst);
    }
}

impl Clock for ManualClock {
    fn now_ms(&self) -> i64 {
        self.now_us().div_euclid(1000)
    }

    fn now_us(&self) -> i64 {
        self.now_us.load(Ordering::SeqCst)
    }
}

/// Another clock shifted by a fixed number of milliseconds.
///
/// Used to run a node whose clock is known to be off, for example in tests
/// of what happens when a node with a slow clock takes over a slot.
///
/// # Examples
///
/// ```
/// use snowmint::{Clock, ManualClock, OffsetClock};
///
/// let clock = OffsetClock::new(ManualClock::new(10_000), -3_000);
/// assert_eq!(clock.now_ms(), 7_000);
/// ```
#[derive(Debug, Clone, Default)]
pub struct OffsetClock<C> {
    inner: C,
    offset_ms: i64,
}

impl<C: Clock> OffsetClock<C> {
    /// `inner`'s time plus `offset_ms`.
    ///
    /// # Examples
    ///
    /// ```
    /// use snowmint::{Clock, OffsetClock, SystemClock};
    ///
    /// let behind = OffsetClock::new(SystemClock, -3_600_000);
    /// assert!(behind.now_ms() < SystemClock.now_ms());
    /// ```
    pub fn new(inner: C, offset_ms: i64) -> OffsetClock<C> {
        OffsetClock { inner, offset_ms }
    }

    /// The shift, in milliseconds.
    ///
    /// # Examples
    ///
    /// ```
    /// use snowmint::{OffsetClock, SystemClock};
    ///
    /// assert_eq!(OffsetClock::new(SystemClock, -5).offset_ms(), -5);
    /// ```
    pub fn offset_ms(&self) -> i64 {
        self.offset_ms
    }
}

impl<C: Clock> Clock for OffsetClock<C> {
    #[inline]
    fn now_ms(&self) -> i64 {
        self.inner.now_ms().saturating_add(self.offset_ms)
    }

    #[inline]
    fn now_us(&self) -> i64 {
        self.inner
            .now_us()
            .saturating_add(self.offset_ms.saturating_mul(1000))
    }
}

impl<C: Clock + ?Sized> Clock for Arc<C> {
    #[inline]
    fn now_ms(&self) -> i64 {
        (**self).now_ms()
    }

    #[inline]
    fn now_us(&self) -> i64 {
        (**self).now_us()
    }
}

impl<C: Clock + ?Sized> Clock for &C {
    #[inline]
    fn now_ms(&self) -> i64 {
        (**self).now_ms()
    }

    #[inline]
    fn now_us(&self) -> i64 {
        (**self).now_us()
    }
}

impl<C: Clock + ?Sized> Clock for Box<C> {
    #[inline]
    fn now_ms(&self) -> i64 {
        (**self).now_ms()
    }

    #[inline]
    fn now_us(&self) -> i64 {
        (**self).now_us()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn converted_now() -> i64 {
        SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .expect("the test machine's clock is after 1970")
            .as_millis() as i64
    }

    #[test]
    fn system_clock_agrees_with_a_fresh_conversion_across_ticks() {
        // Enough readings to cross many millisecond boundaries, so that the
        // remembered millisecond is both reused and replaced.
        let mut ticks = 0;
        let mut last = SystemClock.now_ms();
        while ticks < 20 {
            let before = converted_now();
            let reading = SystemClock.now_ms();
            let after = converted_now();
            assert!(
                before <= reading && reading <= after,
                "{before} <= {reading} <= {after}"
            );
            if reading != last {
                ticks += 1;
                last = reading;
            }
        }
    }

    #[test]
    fn system_clock_is_exact_at_millisecond_bounds() {
        let ms = 1_700_000_000_123;
        let start = UNIX_EPOCH + Duration::from_millis(ms as u64);
        let last_nanosecond = start + Duration::from_nanos(999_999);
        assert_eq!(convert_and_remember(last_nanosecond), ms);
        assert_eq!(
            LAST_MILLISECOND.get(),
            (start, start + Duration::from_millis(1), ms)
        );
        assert_eq!(
            convert_and_remember(start + Duration::from_millis(1)),
            ms + 1
        );
        assert_eq!(convert_and_remember(start), ms);
    }
}
