//! Every generator in the comparison, behind one small interface.
//!
//! Thread-safe generators implement [`Shared`] and are driven through a
//! shared reference by every thread. Generators that need `&mut self`
//! implement [`Unshared`]: one thread drives them directly, two threads share
//! them behind a `Mutex`, which is what a user of such a crate has to do.

use std::sync::Mutex;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use ferroid::generator::AtomicSnowflakeGenerator;
use ferroid::id::SnowflakeTwitterId;
use ferroid::time::{MonotonicClock, TWITTER_EPOCH, TimeSource};
use snowmint::{Generator, Layout, Node};

/// Twitter's epoch as the unsigned milliseconds the peers take.
const TWITTER_EPOCH_MS: u64 = snowmint::TWITTER_EPOCH_MS as u64;

/// What the table says about a contender, besides its measurements.
#[derive(Debug, Clone, Copy)]
pub struct Spec {
    /// Crate and generator, as the table names it.
    pub name: &'static str,
    /// Whether one generator can be shared between threads as it is.
    pub thread_safe: bool,
    /// Whether every call reads the clock (if not, timestamps can lag the
    /// wall clock).
    pub reads_clock_every_call: bool,
    /// Length of one timestamp unit in milliseconds (sonyflake: 10).
    pub unit_ms: u64,
    /// The most IDs the layout allows per timestamp unit.
    pub ids_per_unit: u64,
    /// Where the timestamp field starts in the ID.
    pub timestamp_shift: u32,
    /// The layout's epoch, in Unix milliseconds.
    pub epoch_ms: u64,
    /// Whether making one starts a thread that runs until the process ends
    /// (ferroid's ticking clock). Such contenders are measured after all
    /// the others, so that their thread never runs beside anyone else.
    pub starts_a_thread: bool,
}

impl Spec {
    /// The layout's own ceiling, in IDs per second.
    pub fn ceiling_per_second(&self) -> f64 {
        self.ids_per_unit as f64 * 1000.0 / self.unit_ms as f64
    }

    /// The timestamp field of `id`, in the contender's units.
    pub fn timestamp_of(&self, id: u64) -> u64 {
        id >> self.timestamp_shift
    }

    /// The instant the timestamp unit of `id` starts, in Unix nanoseconds.
    pub fn unit_start_ns(&self, id: u64) -> u64 {
        (self.epoch_ms + self.timestamp_of(id) * self.unit_ms) * 1_000_000
    }

    /// The system clock now, in the contender's timestamp units.
    pub fn timestamp_now(&self) -> u64 {
        (unix_ms() - self.epoch_ms) / self.unit_ms
    }
}

/// The system clock in Unix milliseconds.
pub fn unix_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .expect("the system clock is after 1970")
        .as_millis() as u64
}

/// The system clock in Unix nanoseconds.
pub fn unix_ns() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .expect("the system clock is after 1970")
        .as_nanos() as u64
}

/// A generator that threads share by reference.
pub trait Shared: Sync {
    /// The next ID, as the integer the crate hands out.
    fn next_id(&self) -> u64;
}

/// A generator that needs exclusive access for each ID.
pub trait Unshared: Send {
    /// The next ID, as the integer the crate hands out.
    fn next_id(&mut self) -> u64;
}

impl<G: Unshared> Shared for Mutex<G> {
    #[inline]
    fn next_id(&self) -> u64 {
        self.lock()
            .expect("no thread panics holding the lock")
            .next_id()
    }
}

impl Shared for Generator {
    #[inline]
    fn next_id(&self) -> u64 {
        Generator::next_id(self)
            .expect("the system clock is inside the layout and does not step back")
            .as_u64()
    }
}

/// snowmint's generator on the system clock, default layout and policy.
pub fn snowmint() -> Generator {
    Generator::new(Layout::TWITTER, Node::from_slot(33)).expect("node 1/1 fits the Twitter layout")
}

/// The [`Spec`] of [`snowmint()`].
pub const SNOWMINT: Spec = Spec {
    name: "snowmint `Generator`",
    thread_safe: true,
    reads_clock_every_call: true,
    unit_ms: 1,
    ids_per_unit: 4096,
    timestamp_shift: 22,
    epoch_ms: TWITTER_EPOCH_MS,
    starts_a_thread: false,
};

impl Unshared for snowflake::SnowflakeIdGenerator {
    #[inline]
    fn next_id(&mut self) -> u64 {
        self.real_time_generate() as u64
    }
}

/// rs-snowflake's generator, driven through `real_time_generate` (the call
/// that reads the clock every time; `generate` reads it once per 4096 IDs).
pub fn rs_snowflake() -> snowflake::SnowflakeIdGenerator {
    let epoch = UNIX_EPOCH + Duration::from_millis(TWITTER_EPOCH_MS);
    snowflake::SnowflakeIdGenerator::with_epoch(1, 1, epoch)
}

/// The [`Spec`] of [`rs_snowflake`].
pub const RS_SNOWFLAKE: Spec = Spec {
    name: "rs-snowflake `real_time_generate`",
    thread_safe: false,
    reads_clock_every_call: true,
    unit_ms: 1,
    ids_per_unit: 4096,
    timestamp_shift: 22,
    epoch_ms: TWITTER_EPOCH_MS,
    starts_a_thread: false,
};

/// rs-snowflake's generator driven through `lazy_generate`, which reads the
/// clock only when it is made and then moves to the next millisecond after
/// every 4096 IDs, however fast they are asked for: it borrows future time.
/// Measured for its lead alone (its rate is not bounded by the clock, and
/// its IDs are not kept).
#[derive(Debug)]
pub struct Lazy(pub snowflake::SnowflakeIdGenerator);

impl Unshared for Lazy {
    #[inline]
    fn next_id(&mut self) -> u64 {
        self.0.lazy_generate() as u64
    }
}

/// [`rs_snowflake`] for `lazy_generate`.
pub fn rs_snowflake_lazy() -> Lazy {
    Lazy(rs_snowflake())
}

/// The [`Spec`] of [`rs_snowflake_lazy`].
pub const RS_SNOWFLAKE_LAZY: Spec = Spec {
    name: "rs-snowflake `lazy_generate`",
    thread_safe: false,
    reads_clock_every_call: false,
    ..RS_SNOWFLAKE
};

impl Shared for snowflake_me::Snowflake {
    #[inline]
    fn next_id(&self) -> u64 {
        snowflake_me::Snowflake::next_id(self)
            .expect("the system clock is inside the layout")
            .as_u64()
    }
}

/// snowflake_me's lock-free generator, default layout and drift strategy.
pub fn snowflake_me() -> snowflake_me::Snowflake {
    snowflake_me::Snowflake::builder()
        .start_time(snowmint::TWITTER_EPOCH_MS)
        .data_center_id(&|| Ok(1))
        .machine_id(&|| Ok(1))
        .finalize()
        .expect("node 1/1 fits the default layout")
}

/// The [`Spec`] of [`snowflake_me()`].
pub const SNOWFLAKE_ME: Spec = Spec {
    name: "snowflake_me `Snowflake`",
    thread_safe: true,
    reads_clock_every_call: true,
    unit_ms: 1,
    ids_per_unit: 4096,
    timestamp_shift: 22,
    epoch_ms: TWITTER_EPOCH_MS,
    starts_a_thread: false,
};

/// A ferroid time source that reads the system clock on every call, as
/// snowmint's `SystemClock` does. ferroid ships only `MonotonicClock`, whose
/// readings come from a background thread that ticks once per millisecond.
#[derive(Debug, Clone, Copy)]
pub struct SystemTimeSource;

impl TimeSource<u64> for SystemTimeSource {
    #[inline]
    fn current_millis(&self) -> u64 {
        let since = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .expect("the system clock is after 1970");
        since.as_millis() as u64 - TWITTER_EPOCH.as_millis() as u64
    }
}

impl<T: TimeSource<u64> + Sync> Shared for AtomicSnowflakeGenerator<SnowflakeTwitterId, T> {
    #[inline]
    fn next_id(&self) -> u64 {
        // ferroid asks the caller how to wait: 0 means "retry now" (a lost
        // race), more means the millisecond is used up.
        AtomicSnowflakeGenerator::next_id(self, |units| {
            if units > 0 {
                std::thread::yield_now();
            }
        })
        .to_raw()
    }
}

/// ferroid's lock-free generator reading the system clock on every call.
pub fn ferroid_system() -> AtomicSnowflakeGenerator<SnowflakeTwitterId, SystemTimeSource> {
    AtomicSnowflakeGenerator::new(33, SystemTimeSource)
}

/// The [`Spec`] of [`ferroid_system`].
pub const FERROID_SYSTEM: Spec = Spec {
    name: "ferroid `AtomicSnowflakeGenerator`, system clock",
    thread_safe: true,
    reads_clock_every_call: true,
    unit_ms: 1,
    ids_per_unit: 4096,
    timestamp_shift: 22,
    epoch_ms: TWITTER_EPOCH_MS,
    starts_a_thread: false,
};

/// ferroid's lock-free generator on its own `MonotonicClock`.
pub fn ferroid_monotonic() -> AtomicSnowflakeGenerator<SnowflakeTwitterId, MonotonicClock> {
    AtomicSnowflakeGenerator::new(33, MonotonicClock::with_epoch(TWITTER_EPOCH))
}

/// The [`Spec`] of [`ferroid_monotonic`].
pub const FERROID_MONOTONIC: Spec = Spec {
    name: "ferroid `AtomicSnowflakeGenerator`, `MonotonicClock`",
    thread_safe: true,
    reads_clock_every_call: false,
    unit_ms: 1,
    ids_per_unit: 4096,
    timestamp_shift: 22,
    epoch_ms: TWITTER_EPOCH_MS,
    starts_a_thread: true,
};

impl Shared for snowflaked::sync::Generator {
    #[inline]
    fn next_id(&self) -> u64 {
        self.generate::<u64>()
    }
}

/// snowflaked's thread-safe generator (feature `sync`).
pub fn snowflaked() -> snowflaked::sync::Generator {
    let epoch = UNIX_EPOCH + Duration::from_millis(TWITTER_EPOCH_MS);
    snowflaked::sync::Generator::builder()
        .instance(33)
        .epoch(epoch)
        .build()
}

/// The [`Spec`] of [`snowflaked()`].
pub const SNOWFLAKED: Spec = Spec {
    name: "snowflaked `sync::Generator`",
    thread_safe: true,
    reads_clock_every_call: true,
    unit_ms: 1,
    ids_per_unit: 4096,
    timestamp_shift: 22,
    epoch_ms: TWITTER_EPOCH_MS,
    starts_a_thread: false,
};

impl Shared for sonyflake::Sonyflake {
    #[inline]
    fn next_id(&self) -> u64 {
        sonyflake::Sonyflake::next_id(self)
            .expect("the system clock is inside the layout")
            .to_u64()
    }
}

/// sonyflake's generator (a `Mutex` inside), default start time.
pub fn sonyflake() -> sonyflake::Sonyflake {
    sonyflake::Sonyflake::builder()
        .machine_id(&|| Ok(33))
        .finalize()
        .expect("machine 33 is valid")
}

/// The [`Spec`] of [`sonyflake()`]: 10 ms units and an 8-bit sequence, so its
/// own ceiling is 25,600 IDs/s.
pub const SONYFLAKE: Spec = Spec {
    name: "sonyflake `Sonyflake`",
    thread_safe: true,
    reads_clock_every_call: true,
    unit_ms: 10,
    ids_per_unit: 256,
    timestamp_shift: 24,
    // 2014-09-01T00:00:00Z, sonyflake's default start time.
    epoch_ms: 1_409_529_600_000,
    starts_a_thread: false,
};

impl Unshared for idgenerator::CoreIdGenerator {
    #[inline]
    fn next_id(&mut self) -> u64 {
        idgenerator::CoreIdGenerator::next_id(self) as u64
    }
}

/// The epoch of [`yitter()`]: idgenerator's default base time,
/// 2020-02-20T02:20:02Z, in Unix ms.
const YITTER_EPOCH_MS: u64 = 1_582_136_402_000;

/// idgenerator's `CoreIdGenerator`, yitter's "drift" algorithm in Rust, with
/// yitter's own default widths (6 worker bits, 6 sequence bits, of which
/// 0-4 are reserved: 59 IDs per millisecond) rather than the crate's (8
/// and 8), and its default of at most 2000 milliseconds borrowed ahead of
/// the clock ("overcost") before it waits for the clock. Making one sleeps
/// 500 ms (the crate does, for its `method` 1).
pub fn yitter() -> idgenerator::CoreIdGenerator {
    let mut generator = idgenerator::CoreIdGenerator::default();
    generator
        .init(
            idgenerator::IdGeneratorOptions::new()
                .base_time(YITTER_EPOCH_MS as i64)
                .worker_id(33)
                .worker_id_bit_len(6)
                .seq_bit_len(6),
        )
        .expect("worker 33 of 6 bits, 6 sequence bits and a past base time are valid");
    generator
}

/// The [`Spec`] of [`yitter()`].
pub const YITTER: Spec = Spec {
    name: "idgenerator `CoreIdGenerator` (yitter's drift algorithm)",
    thread_safe: false,
    reads_clock_every_call: true,
    unit_ms: 1,
    ids_per_unit: 59,
    timestamp_shift: 12,
    epoch_ms: YITTER_EPOCH_MS,
    starts_a_thread: false,
};

/// Every contender, in the order the tables list them.
pub const ALL: [&Spec; 8] = [
    &SNOWMINT,
    &FERROID_SYSTEM,
    &SNOWFLAKE_ME,
    &SNOWFLAKED,
    &RS_SNOWFLAKE,
    &SONYFLAKE,
    &YITTER,
    &FERROID_MONOTONIC,
];
