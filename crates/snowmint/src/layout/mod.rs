//! Which bits of an ID mean what: a family's fields, its time unit and its
//! epoch.
//!
//! A [`Layout`] is the validated description and what it computes:
//! encoding, decoding, slots and ranges. It is made of named [`Field`]s,
//! each with a [`Role`] (time, node, sequence, or opaque bits with no
//! generator meaning), a time [`Unit`] saying how long one tick of the time
//! field lasts, and an epoch. Decoding an ID gives its [`Parts`], the
//! fields by the family's names; a [`Node`] is a generating node's
//! identity, its node fields taken together as one slot. A layout is
//! written and read as text (`FromStr`, `Display`, [`Layout::spec`]), and
//! the presets name the families snowmint knows, each with where its
//! figures come from.

use std::fmt;
use std::ops::RangeInclusive;

use crate::error::{Error, Label, Repr};
use crate::id::SnowflakeId;

mod field;
mod named;
mod parts;
mod presets;
mod text;
mod unit;

pub use field::{Field, MAX_NAME_LEN, Role};
pub(crate) use field::{Name, mask};
pub use parts::{Node, Parts};
pub use presets::{DISCORD_EPOCH_MS, Preset, TWITTER_EPOCH_MS};
pub use unit::Unit;

/// The most fields a layout can have.
pub const MAX_FIELDS: usize = 8;

/// `sequence` when a layout has no sequence field.
const NONE: u8 = u8::MAX;

/// The slot of an unused entry of the field table.
const EMPTY: Field = Field {
    name: Name::known("unused"),
    role: Role::Opaque,
    width: 0,
    shift: 0,
};

/// An ID format: which bits mean what, in what unit, from what epoch.
///
/// A layout describes IDs as `u64`s made of up to eight named fields, from
/// the most significant bit down, each with a [`Role`]:
///
/// - one **time** field counts ticks of the layout's [`Unit`] (1 µs to
///   1 s) since its epoch;
/// - **node** fields (none, one or more) hold the generating node's
///   identity; together, most significant first, they are its *slot*;
/// - at most one **sequence** field counts IDs within a tick on one node;
/// - **opaque** fields hold bits a generator gives no meaning (a hash,
///   random bits, bits a family does not publish).
///
/// The widths add up to at most 64. Bits above the fields are reserved and
/// always 0: a 63-bit layout such as Twitter's keeps the sign bit of an
/// `i64` clear, a 53-bit one keeps every ID a safe JavaScript number.
/// [`max_id`](Layout::max_id) is the largest ID.
///
/// A layout can **mint** (a [`Generator`](crate::Generator) can make its
/// IDs) when it has a sequence field, its time field lies above it (so a
/// node's IDs increase), and it has no opaque bits; any layout decodes.
///
/// A layout is validated when it is built and is `Copy` (about 170 bytes):
/// it is passed by value everywhere. [`Layout::TWITTER`] is the default;
/// the other presets are listed by [`Layout::presets`].
///
/// # Examples
///
/// ```
/// use snowmint::{Layout, Role, Unit};
///
/// let layout = Layout::TWITTER;
/// assert_eq!(layout.epoch_ms(), 1288834974657);
/// assert_eq!(layout.last_instant_ms(), 1288834974657 + (1 << 41) - 1);
/// assert_eq!(layout.max_id().as_u64(), (1 << 63) - 1);
///
/// let sonyflake = Layout::SONYFLAKE;
/// assert_eq!(sonyflake.unit(), Unit::TEN_MILLISECONDS);
/// assert_eq!(sonyflake.ids_per_second(), 25_600);
/// assert_eq!(sonyflake.node_count(), 65_536);
///
/// let custom = Layout::from_fields(
///     0,
///     Unit::SECOND,
///     &[("time", Role::Time, 32), ("shard", Role::Node, 16), ("counter", Role::Sequence, 16)],
/// )?;
/// assert_eq!(custom.spec(), "time:32/shard:16:node/counter:16:sequence@0,1s");
/// # Ok::<(), snowmint::Error>(())
/// ```
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct Layout {
    epoch_ms: i64,
    unit: Unit,
    fields: [Field; MAX_FIELDS],
    len: u8,
    bits: u8,
    /// Index of the time field.
    time: u8,
    /// Index of the sequence field, or [`NONE`].
    sequence: u8,
}

/// What is wrong with a set of fields, found by [`assemble`] (a `const fn`,
/// so that presets are checked when the crate is built).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Problem {
    NoFields,
    TooManyFields(usize),
    BadName(usize),
    DuplicateName(usize),
    Width(usize, u8),
    TooWide(u32),
    TimeFields(usize),
    EmptyTime,
    SequenceFields(usize),
    EmptySequence,
    EpochBefore1970,
    TooLong,
}

/// Builds and checks a layout; the one place its rules are enforced.
const fn assemble(
    epoch_ms: i64,
    unit: Unit,
    specs: &[(&str, Role, u8)],
) -> Result<Layout, Problem> {
    let len = specs.len();
    if len == 0 {
        return Err(Problem::NoFields);
    }
    if len > MAX_FIELDS {
        return Err(Problem::TooManyFields(len));
    }
    let mut fields = [EMPTY; MAX_FIELDS];
    let mut total: u32 = 0;
    let mut at = 0;
    while at < len {
        let (text, role, width) = specs[at];
        let Some(name) = Name::new(text) else {
            return Err(Problem::BadName(at));
        };
        let mut before = 0;
        while before < at {
            if fields[before].name.eq_const(&name) {
                return Err(Problem::DuplicateName(at));
            }
            before += 1;
        }
        if width > 64 {
            return Err(Problem::Width(at, width));
        }
        total += width as u32;
        fields[at] = Field {
            name,
            role,
            width,
            shift: 0,
        };
        at += 1;
    }
    if total > 64 {
        return Err(Problem::TooWide(total));
    }
    // Shifts, from the least significant field up.
    let mut shift: u32 = 0;
    let mut at = len;
    while at > 0 {
        at -= 1;
        fields[at].shift = shift as u8;
        shift += fields[at].width as u32;
    }
    let (mut time, mut times, mut sequence, mut sequences) = (0, 0, NONE, 0);
    let mut at = 0;
    while at < len {
        match fields[at].role {
            Role::Time => {
                time = at as u8;
                times += 1;
            }
            Role::Sequence => {
                sequence = at as u8;
                sequences += 1;
            }
            Role::Node | Role::Opaque => {}
        }
        at += 1;
    }
    if times != 1 {
        return Err(Problem::TimeFields(times));
    }
    if fields[time as usize].width == 0 {
        return Err(Problem::EmptyTime);
    }
    if sequences > 1 {
        return Err(Problem::SequenceFields(sequences));
    }
    if sequence != NONE && fields[sequence as usize].width == 0 {
        return Err(Problem::EmptySequence);
    }
    if epoch_ms < 0 {
        return Err(Problem::EpochBefore1970);
    }
    // The end of the last tick, in microseconds, must fit an i64, so that
    // every instant of the layout does (and milliseconds with it).
    let ticks = mask(fields[time as usize].width) as i128 + 1;
    let end_us = epoch_ms as i128 * 1000 + ticks * unit.as_micros() as i128 - 1;
    if end_us > i64::MAX as i128 {
        return Err(Problem::TooLong);
    }
    Ok(Layout {
        epoch_ms,
        unit,
        fields,
        len: len as u8,
        bits: total as u8,
        time,
        sequence,
    })
}

impl Layout {
    /// A layout made at build time (the presets); fails the build if the
    /// fields break a rule.
    pub(crate) const fn known(epoch_ms: i64, unit: Unit, specs: &[(&str, Role, u8)]) -> Layout {
        match assemble(epoch_ms, unit, specs) {
            Ok(layout) => layout,
            Err(_) => panic!("an invalid preset"),
        }
    }

    /// Builds and validates a layout from its epoch (Unix milliseconds),
    /// its unit and its fields as `(name, role, width)`, most significant
    /// first.
    ///
    /// The rules: 1 to 8 fields with distinct names (1 to 15 of `a-z`,
    /// `0-9`, `_`, starting with a letter) and widths adding up to at most
    /// 64; exactly one time field, at least 1 bit wide; at most one
    /// sequence field, at least 1 bit wide; an epoch at or after 1970, and
    /// the last tick's end within the range of `i64` microseconds (about
    /// the year 294,000).
    ///
    /// # Errors
    ///
    /// An invalid-layout error naming the field, the value and the range.
    ///
    /// # Examples
    ///
    /// ```
    /// use snowmint::{Layout, Role, Unit};
    ///
    /// let layout = Layout::from_fields(
    ///     1_409_529_600_000,
    ///     Unit::TEN_MILLISECONDS,
    ///     &[("time", Role::Time, 39), ("sequence", Role::Sequence, 8), ("machine", Role::Node, 16)],
    /// )?;
    /// assert_eq!(layout, Layout::SONYFLAKE);
    ///
    /// let err = Layout::from_fields(0, Unit::MILLISECOND, &[("time", Role::Time, 41), ("node", Role::Node, 24)])
    ///     .unwrap_err();
    /// assert_eq!(err.to_string(), "invalid layout: the widths 41+24 add up to 65 bits (0..=64)");
    /// # Ok::<(), snowmint::Error>(())
    /// ```
    pub fn from_fields(
        epoch_ms: i64,
        unit: Unit,
        fields: &[(&str, Role, u8)],
    ) -> Result<Layout, Error> {
        assemble(epoch_ms, unit, fields).map_err(|problem| explain(problem, epoch_ms, fields))
    }

    /// A layout of Twitter's shape: `time`, `datacenter`, `machine` and
    /// `sequence` fields of the given widths (adding up to 63), in
    /// milliseconds since `epoch_ms`: what the text `T/D/M/S@EPOCH` reads.
    ///
    /// # Examples
    ///
    /// ```
    /// use snowmint::Layout;
    ///
    /// assert_eq!(Layout::twitter_shape(1288834974657, [41, 5, 5, 12])?, Layout::TWITTER);
    /// let err = Layout::twitter_shape(0, [41, 5, 17, 0]).unwrap_err();
    /// assert_eq!(err.to_string(), "invalid layout: the sequence field needs at least 1 bit");
    /// # Ok::<(), snowmint::Error>(())
    /// ```
    pub fn twitter_shape(epoch_ms: i64, widths: [u8; 4]) -> Result<Layout, Error> {
        let [t, d, m, s] = widths;
        let total = u32::from(t) + u32::from(d) + u32::from(m) + u32::from(s);
        if total != 63 {
            return Err(invalid(format!(
                "widths {t}+{d}+{m}+{s} add up to {total} bits, not 63 (T/D/M/S is Twitter's 63-bit shape; \
                 name the fields, as in time:42/machine:10/sequence:12, for other totals)"
            )));
        }
        if t == 0 {
            return Err(invalid(
                "the timestamp field needs at least 1 bit".to_owned(),
            ));
        }
        Layout::from_fields(
            epoch_ms,
            Unit::MILLISECOND,
            &[
                ("time", Role::Time, t),
                ("datacenter", Role::Node, d),
                ("machine", Role::Node, m),
                ("sequence", Role::Sequence, s),
            ],
        )
    }

    /// The same fields and unit with another epoch.
    ///
    /// # Examples
    ///
    /// ```
    /// use snowmint::Layout;
    ///
    /// assert_eq!(Layout::TWITTER.with_epoch(1420070400000)?.spec(), "41/5/5/12@1420070400000");
    /// # Ok::<(), snowmint::Error>(())
    /// ```
    pub fn with_epoch(self, epoch_ms: i64) -> Result<Layout, Error> {
        self.rebuilt(epoch_ms, self.unit)
    }

    /// The same fields and epoch with another unit.
    ///
    /// # Examples
    ///
    /// ```
    /// use snowmint::{Layout, Unit};
    ///
    /// let fine = Layout::SONYFLAKE_V2.with_unit(Unit::MILLISECOND)?;
    /// assert_eq!(fine.ids_per_second(), 256_000);
    /// # Ok::<(), snowmint::Error>(())
    /// ```
    pub fn with_unit(self, unit: Unit) -> Result<Layout, Error> {
        self.rebuilt(self.epoch_ms, unit)
    }

    fn rebuilt(&self, epoch_ms: i64, unit: Unit) -> Result<Layout, Error> {
        let specs: Vec<(&str, Role, u8)> = self
            .fields()
            .iter()
            .map(|f| (f.name(), f.role, f.width))
            .collect();
        Layout::from_fields(epoch_ms, unit, &specs)
    }

    /// The epoch, in Unix milliseconds.
    ///
    /// # Examples
    ///
    /// ```
    /// assert_eq!(snowmint::Layout::DISCORD.epoch_ms(), 1420070400000);
    /// ```
    pub const fn epoch_ms(&self) -> i64 {
        self.epoch_ms
    }

    /// The epoch, in Unix microseconds.
    pub const fn epoch_us(&self) -> i64 {
        // Checked in `assemble` to fit.
        self.epoch_ms * 1000
    }

    /// How long one tick of the time field lasts.
    pub const fn unit(&self) -> Unit {
        self.unit
    }

    /// The fields, most significant first.
    ///
    /// # Examples
    ///
    /// ```
    /// let names: Vec<&str> = snowmint::Layout::DISCORD.fields().iter().map(|f| f.name()).collect();
    /// assert_eq!(names, ["time", "worker", "process", "increment"]);
    /// ```
    pub fn fields(&self) -> &[Field] {
        &self.fields[..usize::from(self.len)]
    }

    /// The field called `name`, if the layout has one.
    ///
    /// # Examples
    ///
    /// ```
    /// use snowmint::Layout;
    ///
    /// assert_eq!(Layout::INSTAGRAM.field("shard").map(|f| f.width()), Some(13));
    /// assert!(Layout::INSTAGRAM.field("machine").is_none());
    /// ```
    pub fn field(&self, name: &str) -> Option<&Field> {
        self.fields().iter().find(|f| f.name() == name)
    }

    /// The index of the field called `name`.
    pub(crate) fn index_of(&self, name: &str) -> Result<usize, Error> {
        self.fields()
            .iter()
            .position(|f| f.name() == name)
            .ok_or_else(|| self.unknown_field(name))
    }

    pub(crate) fn unknown_field(&self, name: &str) -> Error {
        let names: Vec<&str> = self.fields().iter().map(Field::name).collect();
        Repr::UnknownField {
            name: crate::value::echo(name),
            layout: self.to_string(),
            known: names.join(", "),
        }
        .into()
    }

    /// The time field.
    pub const fn time_field(&self) -> &Field {
        &self.fields[self.time as usize]
    }

    /// The sequence field, if the layout has one.
    pub const fn sequence_field(&self) -> Option<&Field> {
        if self.sequence == NONE {
            None
        } else {
            Some(&self.fields[self.sequence as usize])
        }
    }

    /// The node fields, most significant first.
    ///
    /// # Examples
    ///
    /// ```
    /// let names: Vec<&str> = snowmint::Layout::TWITTER.node_fields().map(|f| f.name()).collect();
    /// assert_eq!(names, ["datacenter", "machine"]);
    /// ```
    pub fn node_fields(&self) -> impl DoubleEndedIterator<Item = &Field> + Clone {
        self.fields().iter().filter(|f| f.role == Role::Node)
    }

    /// How many bits the IDs use: the fields' widths added up (63 for
    /// Twitter, 64 for Discord, 53 for a JavaScript-safe layout).
    pub const fn bits(&self) -> u8 {
        self.bits
    }

    /// The largest ID of the layout: 2^bits - 1.
    ///
    /// # Examples
    ///
    /// ```
    /// use snowmint::Layout;
    ///
    /// assert_eq!(Layout::TWITTER.max_id().as_u64(), i64::MAX as u64);
    /// assert_eq!(Layout::DISCORD.max_id().as_u64(), u64::MAX);
    /// assert_eq!(Layout::COSID_SAFE_JS.max_id().as_u64(), (1 << 53) - 1);
    /// ```
    pub const fn max_id(&self) -> SnowflakeId {
        SnowflakeId::from_u64(mask(self.bits))
    }

    /// Whether every ID of the layout is a safe JavaScript number (below
    /// 2^53), so that a JSON number carries it unrounded.
    pub const fn is_js_safe(&self) -> bool {
        self.bits <= 53
    }

    /// How many IDs one node can make in one tick: 2^sequence width (1
    /// without a sequence field).
    ///
    /// # Examples
    ///
    /// ```
    /// assert_eq!(snowmint::Layout::TWITTER.ids_per_tick(), 4096);
    /// ```
    pub const fn ids_per_tick(&self) -> u64 {
        match self.sequence_field() {
            Some(field) => mask(field.width).saturating_add(1),
            None => 1,
        }
    }

    /// How many IDs one node can make per second, at most.
    ///
    /// # Examples
    ///
    /// ```
    /// use snowmint::Layout;
    ///
    /// assert_eq!(Layout::TWITTER.ids_per_second(), 4_096_000);
    /// assert_eq!(Layout::BAIDU.ids_per_second(), 8192);
    /// ```
    pub const fn ids_per_second(&self) -> u64 {
        let per_second = self.ids_per_tick() as u128 * 1_000_000 / self.unit.as_micros() as u128;
        if per_second > u64::MAX as u128 {
            u64::MAX
        } else {
            per_second as u64
        }
    }

    /// How many bits the node fields have together.
    pub fn node_width(&self) -> u8 {
        self.node_fields().map(|f| f.width).sum()
    }

    /// How many distinct nodes (slots) the layout has room for:
    /// 2^(node widths). Saturates at `u64::MAX` for a 64-bit node, which
    /// only a layout that cannot mint has.
    ///
    /// # Examples
    ///
    /// ```
    /// use snowmint::Layout;
    ///
    /// assert_eq!(Layout::TWITTER.node_count(), 1024);
    /// assert_eq!(Layout::BAIDU.node_count(), 1 << 22);
    /// assert_eq!(Layout::MASTODON.node_count(), 1);
    /// ```
    pub fn node_count(&self) -> u64 {
        mask(self.node_width()).saturating_add(1)
    }

    /// The largest offset of the time field, in ticks.
    pub(crate) const fn max_ticks(&self) -> u64 {
        mask(self.time_field().width)
    }

    /// The start of tick `ticks`, in Unix microseconds (any tick of the
    /// time field: checked in `assemble` to fit).
    #[inline]
    pub(crate) const fn tick_start_us(&self, ticks: u64) -> i64 {
        self.epoch_us() + (ticks as i64).wrapping_mul(self.unit.as_micros() as i64)
    }

    /// The start of tick `ticks`, in Unix milliseconds (rounded towards
    /// the past for units finer than a millisecond).
    #[inline]
    pub(crate) const fn tick_start_ms(&self, ticks: u64) -> i64 {
        if self.unit.as_micros() == 1000 {
            self.epoch_ms + ticks as i64
        } else {
            self.tick_start_us(ticks).div_euclid(1000)
        }
    }

    /// The last instant the layout covers, in Unix milliseconds: the last
    /// millisecond of its last tick.
    ///
    /// # Examples
    ///
    /// ```
    /// use snowmint::Layout;
    ///
    /// // 2080-07-10T17:30:30.208Z
    /// assert_eq!(Layout::TWITTER.last_instant_ms(), 3487858230208);
    /// // The last 10 ms tick of Sonyflake ends 9 ms after it starts.
    /// assert_eq!(Layout::SONYFLAKE.last_instant_ms(), 1409529600000 + ((1 << 39) - 1) * 10 + 9);
    /// ```
    pub const fn last_instant_ms(&self) -> i64 {
        self.last_instant_us().div_euclid(1000)
    }

    /// The last instant the layout covers, in Unix microseconds: the last
    /// microsecond of its last tick.
    pub const fn last_instant_us(&self) -> i64 {
        self.tick_start_us(self.max_ticks()) + (self.unit.as_micros() as i64 - 1)
    }

    /// The tick `time_us` (Unix microseconds) falls in, if the layout
    /// holds it.
    ///
    /// # Errors
    ///
    /// Before the epoch or past the last instant, naming both ends (in
    /// milliseconds).
    #[inline]
    pub fn ticks_at_us(&self, time_us: i64) -> Result<u64, Error> {
        let since = time_us.checked_sub(self.epoch_us()).filter(|&d| d >= 0);
        match since {
            None => Err(self.before_epoch(time_us.div_euclid(1000))),
            Some(since) => {
                let ticks = since as u64 / u64::from(self.unit.as_micros());
                if ticks > self.max_ticks() {
                    Err(self.past_end(time_us.div_euclid(1000)))
                } else {
                    Ok(ticks)
                }
            }
        }
    }

    /// The tick `timestamp_ms` (Unix milliseconds) falls in, if the layout
    /// holds it: its offset from the epoch in the layout's units.
    ///
    /// # Errors
    ///
    /// Before the epoch or past the last instant, naming both ends.
    ///
    /// # Examples
    ///
    /// ```
    /// use snowmint::Layout;
    ///
    /// assert_eq!(Layout::TWITTER.timestamp_offset(1288834974658)?, 1);
    /// assert_eq!(Layout::SONYFLAKE.timestamp_offset(1409529600019)?, 1);
    /// assert!(Layout::TWITTER.timestamp_offset(0).is_err());
    /// # Ok::<(), snowmint::Error>(())
    /// ```
    #[inline]
    pub fn timestamp_offset(&self, timestamp_ms: i64) -> Result<u64, Error> {
        if self.unit.as_micros() == 1000 {
            if timestamp_ms < self.epoch_ms {
                Err(self.before_epoch(timestamp_ms))
            } else if timestamp_ms > self.last_instant_ms() {
                Err(self.past_end(timestamp_ms))
            } else {
                // Non-negative and within the time field: checked above.
                Ok((timestamp_ms - self.epoch_ms) as u64)
            }
        } else {
            match timestamp_ms.checked_mul(1000) {
                Some(us) => self.ticks_at_us(us),
                None if timestamp_ms < 0 => Err(self.before_epoch(timestamp_ms)),
                None => Err(self.past_end(timestamp_ms)),
            }
        }
    }

    pub(crate) fn before_epoch(&self, timestamp_ms: i64) -> Error {
        Repr::TimestampBeforeEpoch {
            timestamp_ms,
            epoch_ms: self.epoch_ms,
            last_ms: self.last_instant_ms(),
        }
        .into()
    }

    pub(crate) fn past_end(&self, timestamp_ms: i64) -> Error {
        Repr::TimestampPastEnd {
            timestamp_ms,
            epoch_ms: self.epoch_ms,
            last_ms: self.last_instant_ms(),
        }
        .into()
    }

    /// Reads the value of the field called `name` from text, checking it
    /// against the field's range; see
    /// [`parse_bounded`](crate::value::parse_bounded) for the rules.
    ///
    /// # Errors
    ///
    /// A field the layout does not have, text that is not a number, or a
    /// number outside the field's range, each naming the field.
    ///
    /// # Examples
    ///
    /// ```
    /// use snowmint::Layout;
    ///
    /// assert_eq!(Layout::TWITTER.parse_field("machine", "13")?, 13);
    /// assert_eq!(
    ///     Layout::TWITTER.parse_field("datacenter", "32").unwrap_err().to_string(),
    ///     "datacenter 32 is out of range (0..=31)"
    /// );
    /// assert_eq!(
    ///     Layout::TWITTER.parse_field("sequence", "x").unwrap_err().to_string(),
    ///     "sequence \"x\" is not a number (expected an integer in 0..=4095)"
    /// );
    /// assert_eq!(
    ///     Layout::TWITTER.parse_field("shard", "1").unwrap_err().to_string(),
    ///     "layout twitter has no field \"shard\" (its fields: time, datacenter, machine, sequence)"
    /// );
    /// # Ok::<(), snowmint::Error>(())
    /// ```
    pub fn parse_field(&self, name: &str, text: &str) -> Result<u64, Error> {
        let field = self.fields[self.index_of(name)?];
        crate::value::parse_labelled(Label::Field(field.name), text, 0..=field.max())
    }

    /// Checks `value` against the field at `index`.
    pub(crate) fn check_value(&self, index: usize, value: u64) -> Result<u64, Error> {
        let field = self.fields[index];
        if value > field.max() {
            Err(Repr::FieldOutOfRange {
                field: field.name,
                value,
                max: field.max(),
            }
            .into())
        } else {
            Ok(value)
        }
    }

    /// The node whose node fields hold `values`, most significant first
    /// (for Twitter: datacenter, then machine).
    ///
    /// # Errors
    ///
    /// A value that does not fit its field (naming it), or a count of
    /// values other than the layout's node fields.
    ///
    /// # Examples
    ///
    /// ```
    /// use snowmint::Layout;
    ///
    /// let node = Layout::TWITTER.node(&[1, 13])?;
    /// assert_eq!(node.slot(), 45);
    /// assert_eq!(Layout::SONYFLAKE.node(&[513])?.slot(), 513);
    /// assert_eq!(
    ///     Layout::TWITTER.node(&[32, 0]).unwrap_err().to_string(),
    ///     "datacenter 32 is out of range (0..=31)"
    /// );
    /// # Ok::<(), snowmint::Error>(())
    /// ```
    pub fn node(&self, values: &[u64]) -> Result<Node, Error> {
        let count = self.node_fields().count();
        if values.len() != count {
            let names: Vec<&str> = self.node_fields().map(Field::name).collect();
            return Err(invalid(format!(
                "a node of layout {self} is {count} values ({}), not {}",
                names.join(", "),
                values.len()
            )));
        }
        let mut slot = 0u64;
        for (field, &value) in self.node_fields().zip(values) {
            if value > field.max() {
                return Err(Repr::FieldOutOfRange {
                    field: field.name,
                    value,
                    max: field.max(),
                }
                .into());
            }
            slot = slot.checked_shl(u32::from(field.width)).unwrap_or(0) | value;
        }
        Ok(Node::from_slot(slot))
    }

    /// The node numbered `slot`: its node fields' values, most significant
    /// first, concatenated (`datacenter * 32 + machine` for Twitter).
    ///
    /// # Errors
    ///
    /// A slot at or past [`node_count`](Layout::node_count).
    ///
    /// # Examples
    ///
    /// ```
    /// use snowmint::Layout;
    ///
    /// assert_eq!(Layout::TWITTER.node_from_slot(1023)?.slot(), 1023);
    /// assert_eq!(
    ///     Layout::TWITTER.node_from_slot(1024).unwrap_err().to_string(),
    ///     "slot 1024 is out of range (0..=1023)"
    /// );
    /// # Ok::<(), snowmint::Error>(())
    /// ```
    pub fn node_from_slot(&self, slot: u64) -> Result<Node, Error> {
        let max = mask(self.node_width());
        if slot > max {
            return Err(Repr::SlotOutOfRange { slot, max }.into());
        }
        Ok(Node::from_slot(slot))
    }

    /// Checks that one node may hold the `count` slots `first .. first +
    /// count` of this layout, as
    /// [`GeneratorBuilder::slots`](crate::GeneratorBuilder::slots) needs:
    /// the layout can mint, `count` is a power of two it has room for, the
    /// block ends at or before the last slot, and (for more than one slot)
    /// the node fields sit side by side below the time field.
    ///
    /// # Errors
    ///
    /// Of kind [`OutOfRange`](crate::ErrorKind::OutOfRange) for the count
    /// or the block, [`InvalidLayout`](crate::ErrorKind::InvalidLayout) for
    /// the layout.
    ///
    /// # Examples
    ///
    /// ```
    /// use snowmint::Layout;
    ///
    /// assert!(Layout::TWITTER.check_slot_block(1020, 4).is_ok());
    /// assert!(Layout::SONYFLAKE.check_slot_block(0, 8).is_ok());
    /// assert_eq!(
    ///     Layout::TWITTER.check_slot_block(1022, 4).unwrap_err().to_string(),
    ///     "slots 1022..=1025 run past the last slot 1023 (slots are 0..=1023)"
    /// );
    /// assert_eq!(
    ///     Layout::TWITTER.check_slot_block(0, 6).unwrap_err().to_string(),
    ///     "slots per node 6 is not valid: a node holds a power of two of slots, 1 to 1024 in this layout (1, 2, 4, 8, ...)"
    /// );
    /// let apart: Layout = "time:41/datacenter:5/sequence:12/machine:5".parse()?;
    /// assert!(apart.check_slot_block(0, 1).is_ok());
    /// assert_eq!(
    ///     apart.check_slot_block(0, 2).unwrap_err().to_string(),
    ///     "invalid layout: layout time:41/datacenter:5/sequence:12/machine:5@1288834974657 keeps its node fields \
    ///      datacenter and machine apart, \
    ///      so a node cannot hold several slots (its slots would not be consecutive IDs); use one slot per node"
    /// );
    /// # Ok::<(), snowmint::Error>(())
    /// ```
    pub fn check_slot_block(&self, first: u64, count: u64) -> Result<(), Error> {
        crate::generator::SlotBlock::of(self, first, count).map(drop)
    }

    /// The slot of `node`, checked against the layout.
    ///
    /// # Examples
    ///
    /// ```
    /// use snowmint::Layout;
    ///
    /// let node = Layout::TWITTER.node(&[3, 7])?;
    /// assert_eq!(Layout::TWITTER.slot_of(node)?, 103);
    /// # Ok::<(), snowmint::Error>(())
    /// ```
    pub fn slot_of(&self, node: Node) -> Result<u64, Error> {
        self.node_from_slot(node.slot()).map(Node::slot)
    }

    /// Each node field with its value in `node`, most significant first.
    ///
    /// # Examples
    ///
    /// ```
    /// use snowmint::Layout;
    ///
    /// let node = Layout::TWITTER.node(&[3, 7])?;
    /// let values: Vec<(&str, u64)> =
    ///     Layout::TWITTER.node_values(node).map(|(f, v)| (f.name(), v)).collect();
    /// assert_eq!(values, [("datacenter", 3), ("machine", 7)]);
    /// # Ok::<(), snowmint::Error>(())
    /// ```
    pub fn node_values(&self, node: Node) -> impl Iterator<Item = (&Field, u64)> {
        let slot = node.slot();
        let mut below: u32 = self.node_fields().map(|f| u32::from(f.width)).sum();
        self.node_fields().map(move |field| {
            below -= u32::from(field.width);
            let value = slot.checked_shr(below).unwrap_or(0) & field.max();
            (field, value)
        })
    }

    /// The node written for people: each node field and its value
    /// (`datacenter 3 machine 7`, `machine 513`), or `node 0` for a layout
    /// without node fields.
    ///
    /// # Examples
    ///
    /// ```
    /// use snowmint::Layout;
    ///
    /// let node = Layout::SONYFLAKE.node(&[513])?;
    /// assert_eq!(Layout::SONYFLAKE.describe(node).to_string(), "machine 513");
    /// # Ok::<(), snowmint::Error>(())
    /// ```
    pub fn describe(&self, node: Node) -> impl fmt::Display + '_ {
        NodeText { layout: self, node }
    }

    /// The node given as two numbers, as settings from before layouts had
    /// named fields give it: `lowest` for the lowest node field and `upper`
    /// for the node fields above it taken together. For Twitter's layout
    /// that is (datacenter, machine); for Sonyflake's, (0, machine).
    ///
    /// # Errors
    ///
    /// A number too large for its part, named after the field (or, for
    /// the upper part of a layout with no single field above the lowest,
    /// `datacenter`).
    ///
    /// # Examples
    ///
    /// ```
    /// use snowmint::Layout;
    ///
    /// assert_eq!(Layout::TWITTER.node_from_pair(1, 13)?, Layout::TWITTER.node(&[1, 13])?);
    /// assert_eq!(Layout::SONYFLAKE.node_from_pair(0, 513)?.slot(), 513);
    /// assert_eq!(
    ///     Layout::SONYFLAKE.node_from_pair(1, 0).unwrap_err().to_string(),
    ///     "datacenter 1 is out of range (0..=0)"
    /// );
    /// # Ok::<(), snowmint::Error>(())
    /// ```
    pub fn node_from_pair(&self, upper: u64, lowest: u64) -> Result<Node, Error> {
        let lowest_field = self.node_fields().last().copied();
        let lowest_width = lowest_field.map_or(0, |f| f.width);
        let lowest_max = mask(lowest_width);
        if lowest > lowest_max {
            return Err(Repr::FieldOutOfRange {
                field: lowest_field.map_or(Name::known("machine"), |f| f.name),
                value: lowest,
                max: lowest_max,
            }
            .into());
        }
        let upper_max = mask(self.node_width() - lowest_width);
        if upper > upper_max {
            let mut above = self.node_fields().rev().skip(1);
            let name = match (above.next(), above.next()) {
                (Some(field), None) => field.name,
                _ => Name::known("datacenter"),
            };
            return Err(Repr::FieldOutOfRange {
                field: name,
                value: upper,
                max: upper_max,
            }
            .into());
        }
        let slot = upper.checked_shl(u32::from(lowest_width)).unwrap_or(0) | lowest;
        Ok(Node::from_slot(slot))
    }

    /// The two numbers of [`node_from_pair`](Layout::node_from_pair):
    /// (the node fields above the lowest, the lowest).
    ///
    /// # Examples
    ///
    /// ```
    /// use snowmint::{Layout, Node};
    ///
    /// assert_eq!(Layout::TWITTER.pair_of(Node::from_slot(45)), (1, 13));
    /// assert_eq!(Layout::SONYFLAKE.pair_of(Node::from_slot(513)), (0, 513));
    /// ```
    pub fn pair_of(&self, node: Node) -> (u64, u64) {
        let lowest = self.node_fields().last().map_or(0, |f| f.width);
        let upper = node.slot().checked_shr(u32::from(lowest)).unwrap_or(0);
        (upper, node.slot() & mask(lowest))
    }

    /// The ID of a time (Unix milliseconds), the node as two numbers (see
    /// [`node_from_pair`](Layout::node_from_pair)) and a sequence (which
    /// must be 0 in a layout without one): the four numbers of Twitter's
    /// fields, for any layout, as settings and calculators from before
    /// layouts had named fields give them.
    ///
    /// # Errors
    ///
    /// A time outside the layout or a number too large for its part, named
    /// after the field.
    ///
    /// # Examples
    ///
    /// ```
    /// use snowmint::Layout;
    ///
    /// let id = Layout::TWITTER.encode_pair(1_700_000_000_000, 7, 13, 4095)?;
    /// assert_eq!(id.as_u64(), 1724551110457221119);
    /// let id = Layout::SONYFLAKE.encode_pair(1_700_000_000_000, 0, 513, 3)?;
    /// assert_eq!(Layout::SONYFLAKE.decode(id)?.get("machine"), Some(513));
    /// # Ok::<(), snowmint::Error>(())
    /// ```
    pub fn encode_pair(
        &self,
        time_ms: i64,
        datacenter: u64,
        machine: u64,
        sequence: u64,
    ) -> Result<SnowflakeId, Error> {
        let node = self.node_from_pair(datacenter, machine)?;
        let mut parts = self.parts_at(time_ms)?;
        parts.set_node(node)?;
        match self.sequence_field() {
            Some(field) => {
                let name = field.name;
                parts.set(name.as_str(), sequence)?;
            }
            None => {
                crate::value::check_bounded("sequence", sequence, 0..=0)?;
            }
        }
        Ok(parts.id())
    }

    /// The largest values of the two numbers of
    /// [`node_from_pair`](Layout::node_from_pair).
    ///
    /// # Examples
    ///
    /// ```
    /// use snowmint::Layout;
    ///
    /// assert_eq!(Layout::TWITTER.pair_max(), (31, 31));
    /// assert_eq!(Layout::SONYFLAKE.pair_max(), (0, 65_535));
    /// ```
    pub fn pair_max(&self) -> (u64, u64) {
        let lowest = self.node_fields().last().map_or(0, |f| f.width);
        (mask(self.node_width() - lowest), mask(lowest))
    }

    /// The node fields of `node`, in place, ready to be OR-ed into IDs.
    ///
    /// # Errors
    ///
    /// A node beyond the layout's slots.
    pub fn node_bits(&self, node: Node) -> Result<u64, Error> {
        self.slot_of(node)?;
        Ok(self
            .node_values(node)
            .fold(0, |bits, (field, value)| bits | field.place(value)))
    }

    /// Whether a generator can make IDs of this layout; see
    /// [`check_mintable`](Layout::check_mintable).
    ///
    /// # Examples
    ///
    /// ```
    /// use snowmint::Layout;
    ///
    /// assert!(Layout::SONYFLAKE.is_mintable());
    /// assert!(!Layout::MASTODON.is_mintable());
    /// ```
    pub fn is_mintable(&self) -> bool {
        self.check_mintable().is_ok()
    }

    /// Checks that a generator can make IDs of this layout: it has a
    /// sequence field, the time field lies above it (so that one node's IDs
    /// increase), no field is opaque (a generator would not know what to
    /// put there), and the time and sequence fields are at most 63 bits
    /// together (the generator's state word counts them).
    ///
    /// # Errors
    ///
    /// An invalid-layout error saying which rule the layout breaks.
    ///
    /// # Examples
    ///
    /// ```
    /// use snowmint::Layout;
    ///
    /// assert_eq!(
    ///     Layout::LINKEDIN.check_mintable().unwrap_err().to_string(),
    ///     "invalid layout: layout linkedin cannot mint: it has no sequence field (it decodes only)"
    /// );
    /// ```
    pub fn check_mintable(&self) -> Result<(), Error> {
        self.sequence_to_mint().map(drop)
    }

    /// The sequence field, if the layout can mint (see
    /// [`check_mintable`](Layout::check_mintable)).
    pub(crate) fn sequence_to_mint(&self) -> Result<Field, Error> {
        let cannot = |why: String| Err(invalid(format!("layout {self} cannot mint: {why}")));
        let Some(sequence) = self.sequence_field() else {
            return cannot("it has no sequence field (it decodes only)".to_owned());
        };
        if let Some(opaque) = self
            .fields()
            .iter()
            .find(|f| f.role == Role::Opaque && f.width > 0)
        {
            return cannot(format!(
                "its field {} is opaque (it decodes only)",
                opaque.name
            ));
        }
        if self.time_field().shift < sequence.shift {
            return cannot(format!(
                "its time field lies below its sequence field {}, so one node's IDs would not increase",
                sequence.name
            ));
        }
        let state = u32::from(self.time_field().width) + u32::from(sequence.width);
        if state > 63 {
            return cannot(format!(
                "its time and sequence fields are {state} bits together (a generator counts them in 63)"
            ));
        }
        Ok(*sequence)
    }

    /// Whether `other` makes the same IDs: for every time both hold, the
    /// same time, node and sequence give the same ID in both. That is the
    /// same epoch and unit and the same fields at the same places with the
    /// same roles, whatever they are called; the time field's width may
    /// differ when it is the top field of both (a wider one only adds
    /// later times, above every ID of the narrower). Fleets compare
    /// layouts this way, so that nodes of either may share one fleet.
    ///
    /// # Examples
    ///
    /// ```
    /// use snowmint::Layout;
    ///
    /// let renamed: Layout = "time:42/datacenter:5/machine:5/sequence:12@2015-01-01T00:00:00Z".parse()?;
    /// assert!(renamed.same_ids_as(&Layout::DISCORD));
    /// assert_ne!(renamed, Layout::DISCORD); // the names differ
    /// // Discord's IDs as a 63-bit layout: the same IDs until 2084, when
    /// // the narrower one ends.
    /// let narrow: Layout = "41/5/5/12@1420070400000".parse()?;
    /// assert!(narrow.same_ids_as(&Layout::DISCORD));
    /// assert!(!Layout::TWITTER.same_ids_as(&Layout::DISCORD)); // other epochs
    /// # Ok::<(), snowmint::Error>(())
    /// ```
    pub fn same_ids_as(&self, other: &Layout) -> bool {
        let top_time = |layout: &Layout| layout.time == 0;
        self.epoch_ms == other.epoch_ms
            && self.unit == other.unit
            && self.len == other.len
            && self.fields().iter().zip(other.fields()).all(|(a, b)| {
                let widths_agree = a.width == b.width
                    || (a.role == Role::Time && top_time(self) && top_time(other));
                a.role == b.role && a.shift == b.shift && widths_agree
            })
    }

    /// Checks that `id` is an ID of this layout: at most
    /// [`max_id`](Layout::max_id).
    ///
    /// # Errors
    ///
    /// An out-of-range error giving the layout's range.
    ///
    /// # Examples
    ///
    /// ```
    /// use snowmint::{Layout, SnowflakeId};
    ///
    /// let big = SnowflakeId::from_u64(1 << 63);
    /// assert!(Layout::DISCORD.check_id(big).is_ok());
    /// assert_eq!(
    ///     Layout::TWITTER.check_id(big).unwrap_err().to_string(),
    ///     "ID 9223372036854775808 is out of range for layout twitter (0..=9223372036854775807)"
    /// );
    /// ```
    #[inline]
    pub fn check_id(&self, id: SnowflakeId) -> Result<SnowflakeId, Error> {
        if id.as_u64() > mask(self.bits) {
            Err(Repr::IdOutOfLayout {
                id,
                layout: self.to_string(),
                max: mask(self.bits),
            }
            .into())
        } else {
            Ok(id)
        }
    }

    /// Reads ID text in `encoding` as an ID of this layout: at most
    /// [`max_id`](Layout::max_id), with messages that give the layout's
    /// range.
    ///
    /// # Errors
    ///
    /// Text that is no number in the encoding, or a number above the
    /// layout's largest ID.
    ///
    /// # Examples
    ///
    /// ```
    /// use snowmint::{Encoding, Layout};
    ///
    /// assert_eq!(Layout::TWITTER.parse_id(Encoding::Decimal, "42")?.as_u64(), 42);
    /// assert_eq!(
    ///     Layout::TWITTER.parse_id(Encoding::Decimal, "9223372036854775808").unwrap_err().to_string(),
    ///     "ID 9223372036854775808 is out of range (0..=9223372036854775807)"
    /// );
    /// assert_eq!(
    ///     Layout::COSID_SAFE_JS.parse_id(Encoding::Hex, "zz").unwrap_err().to_string(),
    ///     "ID \"zz\" is not a hex integer: 'z' at position 0; expected a hex integer in 0..=001fffffffffffff"
    /// );
    /// assert!(Layout::DISCORD.parse_id(Encoding::Decimal, "9223372036854775808").is_ok());
    /// # Ok::<(), snowmint::Error>(())
    /// ```
    pub fn parse_id(&self, encoding: crate::Encoding, text: &str) -> Result<SnowflakeId, Error> {
        let max = mask(self.bits);
        let with_max = |error: Error| match *error.0 {
            Repr::InvalidId {
                input,
                encoding,
                kind,
                ..
            } => Error::from(Repr::InvalidId {
                input,
                encoding,
                kind,
                max,
            }),
            other => Error::from(other),
        };
        let id = SnowflakeId::parse(encoding, text).map_err(with_max)?;
        if id.as_u64() > max {
            return Err(with_max(Error::invalid_id_text(
                text,
                encoding,
                crate::InvalidIdKind::OutOfRange,
            )));
        }
        Ok(id)
    }

    /// The tick count an ID carries (its time field). Bits above the
    /// layout are ignored; [`decode`](Layout::decode) checks them.
    #[inline]
    pub const fn ticks_of(&self, id: SnowflakeId) -> u64 {
        self.time_field().value_in(id.as_u64())
    }

    /// When an ID was made, in Unix milliseconds: the start of its tick
    /// (rounded towards the past for units finer than a millisecond). Bits
    /// above the layout are ignored; [`decode`](Layout::decode) checks
    /// them.
    ///
    /// # Examples
    ///
    /// ```
    /// use snowmint::{Layout, SnowflakeId};
    ///
    /// assert_eq!(Layout::TWITTER.timestamp_ms(SnowflakeId::MIN), 1288834974657);
    /// let id = SnowflakeId::from_u64(175928847299117063);
    /// assert_eq!(Layout::DISCORD.timestamp_ms(id), 1462015105796); // 2016-04-30T11:18:25.796Z
    /// ```
    #[inline]
    pub const fn timestamp_ms(&self, id: SnowflakeId) -> i64 {
        self.tick_start_ms(self.ticks_of(id))
    }

    /// When an ID was made, in Unix microseconds: the start of its tick.
    #[inline]
    pub const fn timestamp_us(&self, id: SnowflakeId) -> i64 {
        self.tick_start_us(self.ticks_of(id))
    }

    /// The node that made an ID (its node fields). Bits above the layout
    /// are ignored; [`decode`](Layout::decode) checks them.
    ///
    /// # Examples
    ///
    /// ```
    /// use snowmint::{Layout, SnowflakeId};
    ///
    /// let id = SnowflakeId::from_u64(1724551110457221119);
    /// assert_eq!(Layout::TWITTER.node_of(id), Layout::TWITTER.node(&[7, 13])?);
    /// # Ok::<(), snowmint::Error>(())
    /// ```
    pub fn node_of(&self, id: SnowflakeId) -> Node {
        let raw = id.as_u64();
        Node::from_slot(self.node_fields().fold(0, |slot, field| {
            slot.checked_shl(u32::from(field.width)).unwrap_or(0) | field.value_in(raw)
        }))
    }

    /// The fields of a time and of named values, all checked: `time_ms`
    /// (Unix milliseconds) goes in the time field, rounded down to the
    /// layout's unit; every field not named is 0.
    ///
    /// # Errors
    ///
    /// A time outside the layout, a name the layout does not have, or a
    /// value too large for its field.
    ///
    /// # Examples
    ///
    /// ```
    /// use snowmint::Layout;
    ///
    /// let id = Layout::TWITTER.encode(
    ///     1_700_000_000_000,
    ///     &[("datacenter", 7), ("machine", 13), ("sequence", 4095)],
    /// )?;
    /// assert_eq!(id.as_u64(), 1724551110457221119);
    /// assert_eq!(
    ///     Layout::TWITTER
    ///         .encode(1_700_000_000_000, &[("sequence", 4096)])
    ///         .unwrap_err()
    ///         .to_string(),
    ///     "sequence 4096 is out of range (0..=4095)"
    /// );
    /// # Ok::<(), snowmint::Error>(())
    /// ```
    pub fn encode(&self, time_ms: i64, fields: &[(&str, u64)]) -> Result<SnowflakeId, Error> {
        let mut parts = self.parts_at(time_ms)?;
        for &(name, value) in fields {
            parts.set(name, value)?;
        }
        Ok(parts.id())
    }

    /// The parts of an ID made at `time_ms` (Unix milliseconds, rounded
    /// down to the layout's unit), every other field 0; set them with
    /// [`Parts::set`].
    ///
    /// # Errors
    ///
    /// A time outside the layout.
    ///
    /// # Examples
    ///
    /// ```
    /// use snowmint::Layout;
    ///
    /// let mut parts = Layout::SONYFLAKE.parts_at(1_700_000_000_005)?;
    /// parts.set("machine", 513)?.set("sequence", 2)?;
    /// assert_eq!(parts.time_ms(), 1_700_000_000_000);
    /// assert_eq!(Layout::SONYFLAKE.decode(parts.id())?, parts);
    /// # Ok::<(), snowmint::Error>(())
    /// ```
    pub fn parts_at(&self, time_ms: i64) -> Result<Parts, Error> {
        let ticks = self.timestamp_offset(time_ms)?;
        Ok(Parts::new(*self, ticks))
    }

    /// [`parts_at`](Layout::parts_at) for a time in Unix microseconds.
    ///
    /// # Errors
    ///
    /// A time outside the layout.
    pub fn parts_at_us(&self, time_us: i64) -> Result<Parts, Error> {
        let ticks = self.ticks_at_us(time_us)?;
        Ok(Parts::new(*self, ticks))
    }

    /// Decodes an ID into its fields.
    ///
    /// # Errors
    ///
    /// An ID above the layout's [`max_id`](Layout::max_id) (a Discord ID
    /// read as Twitter's, for example); every ID up to it decodes.
    ///
    /// # Examples
    ///
    /// ```
    /// use snowmint::{Layout, SnowflakeId};
    ///
    /// let parts = Layout::TWITTER.decode(SnowflakeId::from_u64(1724551110457221119))?;
    /// assert_eq!(parts.time_ms(), 1_700_000_000_000);
    /// assert_eq!(parts.get("machine"), Some(13));
    /// # Ok::<(), snowmint::Error>(())
    /// ```
    #[inline]
    pub fn decode(&self, id: SnowflakeId) -> Result<Parts, Error> {
        self.check_id(id)?;
        let raw = id.as_u64();
        let mut values = [0; MAX_FIELDS];
        for (value, field) in values.iter_mut().zip(self.fields()) {
            *value = field.value_in(raw);
        }
        Ok(Parts::from_values(*self, values))
    }

    /// The smallest and the largest ID whose time lies in
    /// `from_ms ..= to_ms` (Unix milliseconds), so that
    /// `WHERE id BETWEEN start AND end` selects what was made in the
    /// window.
    ///
    /// # Errors
    ///
    /// A time outside the layout, `from_ms` after `to_ms`, or a layout
    /// whose time field is not its top field (its IDs of a window are not
    /// one range of numbers).
    ///
    /// # Examples
    ///
    /// ```
    /// use snowmint::Layout;
    ///
    /// let range = Layout::TWITTER.id_range(1_700_000_000_000, 1_700_000_000_999)?;
    /// assert_eq!(range.start().as_u64(), 1724551110456246272);
    /// assert_eq!(range.end().as_u64(), 1724551114650550271);
    /// assert!(Layout::TWITTER.id_range(2, 1).is_err());
    /// # Ok::<(), snowmint::Error>(())
    /// ```
    pub fn id_range(&self, from_ms: i64, to_ms: i64) -> Result<RangeInclusive<SnowflakeId>, Error> {
        let start = self.timestamp_offset(from_ms)?;
        let end = self.timestamp_offset(to_ms)?;
        if from_ms > to_ms {
            return Err(Repr::EmptyWindow { from_ms, to_ms }.into());
        }
        let time = self.time_field();
        if let Some(above) = self.fields()[..usize::from(self.time)]
            .iter()
            .find(|f| f.width > 0)
        {
            return Err(invalid(format!(
                "the IDs of a time window are not one range in layout {self}: its field {} lies above its time field",
                above.name
            )));
        }
        let below = mask(time.shift);
        Ok(SnowflakeId::from_u64(time.place(start))
            ..=SnowflakeId::from_u64(time.place(end) | below))
    }
}

impl Default for Layout {
    fn default() -> Self {
        Layout::TWITTER
    }
}

impl fmt::Debug for Layout {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Layout({self})")
    }
}

/// What [`Layout::describe`] writes.
struct NodeText<'a> {
    layout: &'a Layout,
    node: Node,
}

impl fmt::Display for NodeText<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut any = false;
        for (field, value) in self.layout.node_values(self.node) {
            if any {
                f.write_str(" ")?;
            }
            write!(f, "{} {value}", field.name)?;
            any = true;
        }
        if !any {
            write!(f, "node {}", self.node.slot())?;
        }
        Ok(())
    }
}

pub(crate) fn invalid(reason: String) -> Error {
    Repr::InvalidLayout { reason }.into()
}

/// The message for a [`Problem`] found in `fields`.
fn explain(problem: Problem, epoch_ms: i64, fields: &[(&str, Role, u8)]) -> Error {
    let name = |at: usize| crate::value::echo(fields[at].0);
    invalid(match problem {
        Problem::NoFields => "a layout needs at least a time field".to_owned(),
        Problem::TooManyFields(count) => {
            format!("{count} fields is out of range (1..={MAX_FIELDS})")
        }
        Problem::BadName(at) => format!(
            "field name {:?} is not valid (expected 1 to {MAX_NAME_LEN} of a-z, 0-9 and _, starting with a letter)",
            name(at)
        ),
        Problem::DuplicateName(at) => format!("field {:?} is named twice", name(at)),
        Problem::Width(at, width) => {
            format!("field {} width {width} is out of range (0..=64)", name(at))
        }
        Problem::TooWide(total) => {
            let widths: Vec<String> = fields.iter().map(|f| f.2.to_string()).collect();
            format!(
                "the widths {} add up to {total} bits (0..=64)",
                widths.join("+")
            )
        }
        Problem::TimeFields(0) => "a layout needs a time field".to_owned(),
        Problem::TimeFields(count) => format!("{count} time fields (a layout has exactly 1)"),
        Problem::EmptyTime => "the time field needs at least 1 bit".to_owned(),
        Problem::SequenceFields(count) => {
            format!("{count} sequence fields (a layout has at most 1)")
        }
        Problem::EmptySequence => "the sequence field needs at least 1 bit".to_owned(),
        Problem::EpochBefore1970 => format!("epoch {epoch_ms} is before 1970-01-01 (0..)"),
        Problem::TooLong => format!(
            "epoch {epoch_ms} plus the time field's span overflows a 64-bit count of microseconds (about the year 294,000)"
        ),
    })
}
