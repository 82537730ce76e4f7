//! Which bits of an ID mean what: the epoch and the four field widths.

use std::fmt;
use std::ops::RangeInclusive;
use std::str::FromStr;

use crate::error::{Error, Field, echo};
use crate::id::SnowflakeId;

/// The fields of an ID, as plain numbers.
///
/// `timestamp_ms` is in Unix milliseconds (not relative to the epoch), so a
/// `Parts` means the same instant whatever the layout.
///
/// # Examples
///
/// ```
/// use snowmint::{Layout, Parts};
///
/// let parts = Parts { timestamp_ms: 1_700_000_000_000, datacenter: 7, machine: 13, sequence: 4095 };
/// let id = Layout::TWITTER.encode(parts)?;
/// assert_eq!(id.as_u64(), 1724551110457221119);
/// assert_eq!(Layout::TWITTER.decode(id), parts);
/// # Ok::<(), snowmint::Error>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct Parts {
    /// When the ID was made, in milliseconds since 1970-01-01T00:00:00Z.
    pub timestamp_ms: i64,
    /// The datacenter id.
    pub datacenter: u64,
    /// The machine id within the datacenter.
    pub machine: u64,
    /// The sequence number within the millisecond.
    pub sequence: u64,
}

/// The pair that tells one generating node from another.
///
/// Fleets number nodes with a single *slot*: `datacenter << machine_bits |
/// machine`, which for the Twitter layout is `datacenter * 32 + machine`.
///
/// # Examples
///
/// ```
/// use snowmint::{Layout, Node};
///
/// let node = Layout::TWITTER.node_from_slot(45)?;
/// assert_eq!(node, Node { datacenter: 1, machine: 13 });
/// assert_eq!(Layout::TWITTER.slot_of(node)?, 45);
/// # Ok::<(), snowmint::Error>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, PartialOrd, Ord)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct Node {
    /// The datacenter id.
    pub datacenter: u64,
    /// The machine id.
    pub machine: u64,
}

/// An ID format: an epoch and the widths of the four fields.
///
/// From the most significant bit down, an ID is `0` (sign), timestamp,
/// datacenter, machine, sequence. A layout is validated when it is built:
///
/// - the four widths add up to 63;
/// - the timestamp and the sequence fields have at least one bit (the
///   datacenter and machine fields may be empty);
/// - the epoch is at or after 1970-01-01 and the last instant fits an `i64`.
///
/// [`Layout::TWITTER`] is the default; [`Layout::DISCORD`] has the same widths
/// and Discord's epoch (2015-01-01).
///
/// # Examples
///
/// ```
/// use snowmint::Layout;
///
/// let layout = Layout::TWITTER;
/// assert_eq!(layout.epoch_ms(), 1288834974657);
/// assert_eq!(layout.last_instant_ms(), 1288834974657 + (1 << 41) - 1);
///
/// let custom = Layout::new(1_600_000_000_000, 42, 0, 10, 11)?;
/// assert_eq!(custom.ids_per_ms(), 2048);
/// assert!(Layout::new(0, 41, 5, 5, 13).is_err()); // 64 bits
/// # Ok::<(), snowmint::Error>(())
/// ```
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct Layout {
    epoch_ms: i64,
    timestamp_bits: u8,
    datacenter_bits: u8,
    machine_bits: u8,
    sequence_bits: u8,
}

/// Twitter's epoch, 2010-11-04T01:42:54.657Z, in Unix milliseconds.
///
/// ```
/// assert_eq!(snowmint::format_time(snowmint::TWITTER_EPOCH_MS).to_string(), "2010-11-04T01:42:54.657Z");
/// ```
pub const TWITTER_EPOCH_MS: i64 = 1_288_834_974_657;
/// Discord's epoch, 2015-01-01T00:00:00Z, in Unix milliseconds.
///
/// ```
/// assert_eq!(snowmint::format_time(snowmint::DISCORD_EPOCH_MS).to_string(), "2015-01-01T00:00:00.000Z");
/// ```
pub const DISCORD_EPOCH_MS: i64 = 1_420_070_400_000;

/// The named layouts, for lookup by name.
const PRESETS: [(&str, Layout); 2] = [("twitter", Layout::TWITTER), ("discord", Layout::DISCORD)];

impl Layout {
    /// Twitter's layout: 41-bit timestamp, 5-bit datacenter, 5-bit machine,
    /// 12-bit sequence, epoch 1288834974657.
    ///
    /// # Examples
    ///
    /// ```
    /// use snowmint::Layout;
    ///
    /// assert_eq!(Layout::TWITTER.to_string(), "twitter");
    /// assert_eq!(Layout::TWITTER.node_count(), 1024);
    /// ```
    pub const TWITTER: Layout = Layout {
        epoch_ms: TWITTER_EPOCH_MS,
        timestamp_bits: 41,
        datacenter_bits: 5,
        machine_bits: 5,
        sequence_bits: 12,
    };

    /// Discord's layout: Twitter's widths with the epoch 1420070400000.
    ///
    /// # Examples
    ///
    /// ```
    /// use snowmint::{Layout, SnowflakeId};
    ///
    /// let id: SnowflakeId = "175928847299117063".parse()?;
    /// assert_eq!(Layout::DISCORD.timestamp_ms(id), 1462015105796); // 2016-04-30T11:18:25.796Z
    /// # Ok::<(), snowmint::Error>(())
    /// ```
    pub const DISCORD: Layout = Layout {
        epoch_ms: DISCORD_EPOCH_MS,
        ..Layout::TWITTER
    };

    /// Builds and validates a layout.
    ///
    /// # Examples
    ///
    /// ```
    /// use snowmint::Layout;
    ///
    /// assert_eq!(Layout::new(1288834974657, 41, 5, 5, 12)?, Layout::TWITTER);
    /// let err = Layout::new(0, 41, 5, 17, 0).unwrap_err();
    /// assert_eq!(err.to_string(), "invalid layout: the sequence field needs at least 1 bit");
    /// # Ok::<(), snowmint::Error>(())
    /// ```
    pub fn new(
        epoch_ms: i64,
        timestamp_bits: u8,
        datacenter_bits: u8,
        machine_bits: u8,
        sequence_bits: u8,
    ) -> Result<Layout, Error> {
        let invalid = |reason: String| Err(Error::InvalidLayout { reason });
        let total = u32::from(timestamp_bits)
            + u32::from(datacenter_bits)
            + u32::from(machine_bits)
            + u32::from(sequence_bits);
        if total != 63 {
            return invalid(format!(
                "widths {timestamp_bits}+{datacenter_bits}+{machine_bits}+{sequence_bits} add up to {total} bits, not 63"
            ));
        }
        if timestamp_bits == 0 {
            return invalid("the timestamp field needs at least 1 bit".into());
        }
        if sequence_bits == 0 {
            return invalid("the sequence field needs at least 1 bit".into());
        }
        if epoch_ms < 0 {
            return invalid(format!("epoch {epoch_ms} is before 1970-01-01 (0..)"));
        }
        let max_offset = (1i64 << timestamp_bits) - 1;
        if epoch_ms.checked_add(max_offset).is_none() {
            return invalid(format!(
                "epoch {epoch_ms} plus {timestamp_bits} bits of milliseconds overflows a 64-bit timestamp"
            ));
        }
        Ok(Layout {
            epoch_ms,
            timestamp_bits,
            datacenter_bits,
            machine_bits,
            sequence_bits,
        })
    }

    /// The same widths with another epoch.
    ///
    /// # Examples
    ///
    /// ```
    /// use snowmint::Layout;
    ///
    /// assert_eq!(Layout::TWITTER.with_epoch(1420070400000)?, Layout::DISCORD);
    /// # Ok::<(), snowmint::Error>(())
    /// ```
    pub fn with_epoch(self, epoch_ms: i64) -> Result<Layout, Error> {
        Layout::new(
            epoch_ms,
            self.timestamp_bits,
            self.datacenter_bits,
            self.machine_bits,
            self.sequence_bits,
        )
    }

    /// Looks a preset up by name (`twitter`, `discord`; any case).
    ///
    /// # Examples
    ///
    /// ```
    /// use snowmint::Layout;
    ///
    /// assert_eq!(Layout::preset("Discord")?, Layout::DISCORD);
    /// assert!(Layout::preset("instagram").is_err());
    /// # Ok::<(), snowmint::Error>(())
    /// ```
    pub fn preset(name: &str) -> Result<Layout, Error> {
        PRESETS
            .iter()
            .find(|(preset, _)| preset.eq_ignore_ascii_case(name))
            .map(|&(_, layout)| layout)
            .ok_or_else(|| Error::UnknownLayout { name: echo(name) })
    }

    /// The names of the presets.
    ///
    /// # Examples
    ///
    /// ```
    /// assert!(snowmint::Layout::preset_names().any(|n| n == "twitter"));
    /// ```
    pub fn preset_names() -> impl Iterator<Item = &'static str> {
        PRESETS.iter().map(|(name, _)| *name)
    }

    /// The preset's name if this layout is one, else `None`.
    ///
    /// # Examples
    ///
    /// ```
    /// use snowmint::Layout;
    ///
    /// assert_eq!(Layout::DISCORD.name(), Some("discord"));
    /// assert_eq!(Layout::TWITTER.with_epoch(0)?.name(), None);
    /// # Ok::<(), snowmint::Error>(())
    /// ```
    pub fn name(&self) -> Option<&'static str> {
        PRESETS
            .iter()
            .find(|(_, layout)| layout == self)
            .map(|(name, _)| *name)
    }

    /// The layout spelled out as `T/D/M/S@EPOCH` (epoch in Unix
    /// milliseconds), presets included: one text for each layout, however
    /// it was written. [`Display`](fmt::Display) writes a preset's name
    /// instead.
    ///
    /// # Examples
    ///
    /// ```
    /// use snowmint::Layout;
    ///
    /// assert_eq!(Layout::TWITTER.spec(), "41/5/5/12@1288834974657");
    /// assert_eq!(Layout::TWITTER.to_string(), "twitter");
    /// let spelled: Layout = "41/5/5/12@2010-11-04T01:42:54.657Z".parse()?;
    /// assert_eq!(spelled.spec(), Layout::TWITTER.spec());
    /// # Ok::<(), snowmint::Error>(())
    /// ```
    pub fn spec(&self) -> String {
        format!(
            "{}/{}/{}/{}@{}",
            self.timestamp_bits,
            self.datacenter_bits,
            self.machine_bits,
            self.sequence_bits,
            self.epoch_ms
        )
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

    /// Width of the timestamp field, in bits.
    ///
    /// # Examples
    ///
    /// ```
    /// assert_eq!(snowmint::Layout::TWITTER.timestamp_bits(), 41);
    /// ```
    pub const fn timestamp_bits(&self) -> u8 {
        self.timestamp_bits
    }

    /// Width of the datacenter field, in bits.
    ///
    /// # Examples
    ///
    /// ```
    /// assert_eq!(snowmint::Layout::TWITTER.datacenter_bits(), 5);
    /// ```
    pub const fn datacenter_bits(&self) -> u8 {
        self.datacenter_bits
    }

    /// Width of the machine field, in bits.
    ///
    /// # Examples
    ///
    /// ```
    /// assert_eq!(snowmint::Layout::TWITTER.machine_bits(), 5);
    /// ```
    pub const fn machine_bits(&self) -> u8 {
        self.machine_bits
    }

    /// Width of the sequence field, in bits.
    ///
    /// # Examples
    ///
    /// ```
    /// assert_eq!(snowmint::Layout::TWITTER.sequence_bits(), 12);
    /// ```
    pub const fn sequence_bits(&self) -> u8 {
        self.sequence_bits
    }

    /// How far the timestamp field is shifted left.
    ///
    /// # Examples
    ///
    /// ```
    /// assert_eq!(snowmint::Layout::TWITTER.timestamp_shift(), 22);
    /// ```
    pub const fn timestamp_shift(&self) -> u8 {
        self.datacenter_bits + self.machine_bits + self.sequence_bits
    }

    /// How far the datacenter field is shifted left.
    ///
    /// # Examples
    ///
    /// ```
    /// assert_eq!(snowmint::Layout::TWITTER.datacenter_shift(), 17);
    /// ```
    pub const fn datacenter_shift(&self) -> u8 {
        self.machine_bits + self.sequence_bits
    }

    /// How far the machine field is shifted left.
    ///
    /// # Examples
    ///
    /// ```
    /// assert_eq!(snowmint::Layout::TWITTER.machine_shift(), 12);
    /// ```
    pub const fn machine_shift(&self) -> u8 {
        self.sequence_bits
    }

    /// The largest value of a field (the timestamp as an offset from the
    /// epoch).
    ///
    /// # Examples
    ///
    /// ```
    /// use snowmint::{Field, Layout};
    ///
    /// assert_eq!(Layout::TWITTER.max(Field::Datacenter), 31);
    /// assert_eq!(Layout::TWITTER.max(Field::Sequence), 4095);
    /// assert_eq!(Layout::TWITTER.max(Field::Timestamp), (1 << 41) - 1);
    /// ```
    pub const fn max(&self, field: Field) -> u64 {
        let bits = match field {
            Field::Timestamp => self.timestamp_bits,
            Field::Datacenter => self.datacenter_bits,
            Field::Machine => self.machine_bits,
            Field::Sequence => self.sequence_bits,
        };
        (1u64 << bits) - 1
    }

    /// How many IDs one node can make per millisecond: 2^sequence_bits.
    ///
    /// # Examples
    ///
    /// ```
    /// assert_eq!(snowmint::Layout::TWITTER.ids_per_ms(), 4096);
    /// ```
    pub const fn ids_per_ms(&self) -> u64 {
        1 << self.sequence_bits
    }

    /// How many distinct nodes the layout has room for:
    /// 2^(datacenter_bits + machine_bits).
    ///
    /// # Examples
    ///
    /// ```
    /// assert_eq!(snowmint::Layout::TWITTER.node_count(), 1024);
    /// ```
    pub const fn node_count(&self) -> u64 {
        1 << (self.datacenter_bits + self.machine_bits)
    }

    /// The last instant an ID can carry, in Unix milliseconds:
    /// epoch + 2^timestamp_bits - 1.
    ///
    /// # Examples
    ///
    /// ```
    /// // 2080-07-10T17:30:30.208Z
    /// assert_eq!(snowmint::Layout::TWITTER.last_instant_ms(), 3487858230208);
    /// ```
    pub const fn last_instant_ms(&self) -> i64 {
        // Cannot overflow: checked in `new`.
        self.epoch_ms + self.max(Field::Timestamp) as i64
    }

    /// The offset of `timestamp_ms` from the epoch, if the layout can hold it.
    ///
    /// # Examples
    ///
    /// ```
    /// use snowmint::Layout;
    ///
    /// assert_eq!(Layout::TWITTER.timestamp_offset(1288834974658)?, 1);
    /// assert!(Layout::TWITTER.timestamp_offset(0).is_err());
    /// # Ok::<(), snowmint::Error>(())
    /// ```
    #[inline]
    pub fn timestamp_offset(&self, timestamp_ms: i64) -> Result<u64, Error> {
        if timestamp_ms < self.epoch_ms {
            Err(Error::TimestampBeforeEpoch {
                timestamp_ms,
                epoch_ms: self.epoch_ms,
                last_ms: self.last_instant_ms(),
            })
        } else if timestamp_ms > self.last_instant_ms() {
            Err(Error::TimestampPastEnd {
                timestamp_ms,
                epoch_ms: self.epoch_ms,
                last_ms: self.last_instant_ms(),
            })
        } else {
            // Non-negative and below 2^timestamp_bits: checked just above.
            Ok((timestamp_ms - self.epoch_ms) as u64)
        }
    }

    /// Reads the value of an ID field (datacenter, machine, sequence) from
    /// text, checking it against this layout's range; see
    /// [`parse_bounded`](crate::value::parse_bounded) for the rules.
    ///
    /// # Examples
    ///
    /// ```
    /// use snowmint::{Field, Layout};
    ///
    /// assert_eq!(Layout::TWITTER.parse_field(Field::Machine, "13")?, 13);
    /// assert_eq!(
    ///     Layout::TWITTER.parse_field(Field::Datacenter, "32").unwrap_err().to_string(),
    ///     "datacenter 32 is out of range (0..=31)"
    /// );
    /// assert_eq!(
    ///     Layout::TWITTER.parse_field(Field::Sequence, "x").unwrap_err().to_string(),
    ///     "sequence \"x\" is not a number (expected an integer in 0..=4095)"
    /// );
    /// # Ok::<(), snowmint::Error>(())
    /// ```
    pub fn parse_field(&self, field: Field, text: &str) -> Result<u64, Error> {
        crate::value::parse_bounded(field.name(), text, 0..=self.max(field))
    }

    fn check(&self, field: Field, value: u64) -> Result<u64, Error> {
        let max = self.max(field);
        if value > max {
            Err(Error::FieldOutOfRange { field, value, max })
        } else {
            Ok(value)
        }
    }

    /// The datacenter and machine bits of a node, in place, ready to be
    /// OR-ed into IDs.
    ///
    /// # Examples
    ///
    /// ```
    /// use snowmint::{Layout, Node};
    ///
    /// let bits = Layout::TWITTER.node_bits(Node { datacenter: 7, machine: 13 })?;
    /// assert_eq!(bits, (7 << 17) | (13 << 12));
    /// assert!(Layout::TWITTER.node_bits(Node { datacenter: 0, machine: 32 }).is_err());
    /// # Ok::<(), snowmint::Error>(())
    /// ```
    pub fn node_bits(&self, node: Node) -> Result<u64, Error> {
        let datacenter = self.check(Field::Datacenter, node.datacenter)?;
        let machine = self.check(Field::Machine, node.machine)?;
        Ok(datacenter << self.datacenter_shift() | machine << self.machine_shift())
    }

    /// Encodes the fields into an ID, rejecting any field out of range.
    ///
    /// # Examples
    ///
    /// ```
    /// use snowmint::{Layout, Parts};
    ///
    /// let parts = Parts { timestamp_ms: 1_700_000_000_000, datacenter: 7, machine: 13, sequence: 4095 };
    /// assert_eq!(Layout::TWITTER.encode(parts)?.as_u64(), 1724551110457221119);
    ///
    /// let late = Parts { sequence: 4096, ..parts };
    /// assert_eq!(
    ///     Layout::TWITTER.encode(late).unwrap_err().to_string(),
    ///     "sequence 4096 is out of range (0..=4095)"
    /// );
    /// # Ok::<(), snowmint::Error>(())
    /// ```
    pub fn encode(&self, parts: Parts) -> Result<SnowflakeId, Error> {
        let offset = self.timestamp_offset(parts.timestamp_ms)?;
        let node = self.node_bits(Node {
            datacenter: parts.datacenter,
            machine: parts.machine,
        })?;
        let sequence = self.check(Field::Sequence, parts.sequence)?;
        Ok(SnowflakeId::from_raw(
            offset << self.timestamp_shift() | node | sequence,
        ))
    }

    /// Decodes an ID into its fields. Every ID decodes.
    ///
    /// # Examples
    ///
    /// ```
    /// use snowmint::{Layout, SnowflakeId};
    ///
    /// let parts = Layout::TWITTER.decode(SnowflakeId::from_u64(1724551110457221119)?);
    /// assert_eq!(parts.timestamp_ms, 1_700_000_000_000);
    /// assert_eq!((parts.datacenter, parts.machine, parts.sequence), (7, 13, 4095));
    /// # Ok::<(), snowmint::Error>(())
    /// ```
    pub const fn decode(&self, id: SnowflakeId) -> Parts {
        let raw = id.as_u64();
        Parts {
            timestamp_ms: self.timestamp_ms(id),
            datacenter: (raw >> self.datacenter_shift()) & self.max(Field::Datacenter),
            machine: (raw >> self.machine_shift()) & self.max(Field::Machine),
            sequence: raw & self.max(Field::Sequence),
        }
    }

    /// Just the timestamp of an ID, in Unix milliseconds.
    ///
    /// # Examples
    ///
    /// ```
    /// use snowmint::{Layout, SnowflakeId};
    ///
    /// assert_eq!(Layout::TWITTER.timestamp_ms(SnowflakeId::MIN), 1288834974657);
    /// ```
    pub const fn timestamp_ms(&self, id: SnowflakeId) -> i64 {
        // The offset has at most 62 bits and epoch + offset was checked in
        // `new` to fit an i64.
        self.epoch_ms + (id.as_u64() >> self.timestamp_shift()) as i64
    }

    /// The node that made an ID.
    ///
    /// # Examples
    ///
    /// ```
    /// use snowmint::{Layout, Node, SnowflakeId};
    ///
    /// let id = SnowflakeId::from_u64(1724551110457221119)?;
    /// assert_eq!(Layout::TWITTER.node_of(id), Node { datacenter: 7, machine: 13 });
    /// # Ok::<(), snowmint::Error>(())
    /// ```
    pub const fn node_of(&self, id: SnowflakeId) -> Node {
        let parts = self.decode(id);
        Node {
            datacenter: parts.datacenter,
            machine: parts.machine,
        }
    }

    /// The smallest and the largest ID whose timestamp lies in
    /// `from_ms ..= to_ms` (Unix milliseconds), so that
    /// `WHERE id BETWEEN start AND end` selects what was made in the window.
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
            return Err(Error::EmptyWindow { from_ms, to_ms });
        }
        let low_bits = (1u64 << self.timestamp_shift()) - 1;
        Ok(SnowflakeId::from_raw(start << self.timestamp_shift())
            ..=SnowflakeId::from_raw(end << self.timestamp_shift() | low_bits))
    }

    /// The node numbered `slot`, where slot = datacenter << machine_bits |
    /// machine (datacenter * 32 + machine for the Twitter layout).
    ///
    /// # Examples
    ///
    /// ```
    /// use snowmint::{Layout, Node};
    ///
    /// assert_eq!(Layout::TWITTER.node_from_slot(1023)?, Node { datacenter: 31, machine: 31 });
    /// assert_eq!(
    ///     Layout::TWITTER.node_from_slot(1024).unwrap_err().to_string(),
    ///     "slot 1024 is out of range (0..=1023)"
    /// );
    /// # Ok::<(), snowmint::Error>(())
    /// ```
    pub fn node_from_slot(&self, slot: u64) -> Result<Node, Error> {
        if slot >= self.node_count() {
            return Err(Error::SlotOutOfRange {
                slot,
                max: self.node_count() - 1,
            });
        }
        Ok(Node {
            datacenter: slot >> self.machine_bits,
            machine: slot & self.max(Field::Machine),
        })
    }

    /// The slot number of a node (see [`Layout::node_from_slot`]).
    ///
    /// # Examples
    ///
    /// ```
    /// use snowmint::{Layout, Node};
    ///
    /// assert_eq!(Layout::TWITTER.slot_of(Node { datacenter: 3, machine: 7 })?, 103);
    /// # Ok::<(), snowmint::Error>(())
    /// ```
    pub fn slot_of(&self, node: Node) -> Result<u64, Error> {
        Ok(self.node_bits(node)? >> self.sequence_bits)
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

/// Writes the preset name when the layout is a preset, else the custom
/// specification `T/D/M/S@EPOCH` that [`FromStr`] reads back.
impl fmt::Display for Layout {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.name() {
            Some(name) => f.write_str(name),
            None => f.write_str(&self.spec()),
        }
    }
}

/// Reads a layout: a preset name (`twitter`, `discord`, in any case) or
/// custom widths `T/D/M/S` (with the Twitter epoch), either optionally
/// followed by `@EPOCH`, the epoch in Unix milliseconds or RFC 3339 (read by
/// [`parse_epoch`](crate::parse_epoch)).
///
/// # Examples
///
/// ```
/// use snowmint::Layout;
///
/// assert_eq!("twitter".parse::<Layout>()?, Layout::TWITTER);
/// assert_eq!("twitter@1420070400000".parse::<Layout>()?, Layout::DISCORD);
/// assert_eq!("twitter@2015-01-01T00:00:00Z".parse::<Layout>()?, Layout::DISCORD);
/// let custom: Layout = "42/0/10/11@1600000000000".parse()?;
/// assert_eq!(custom.to_string(), "42/0/10/11@1600000000000");
/// assert_eq!(
///     "twitter@soon".parse::<Layout>().unwrap_err().to_string(),
///     "invalid layout: epoch \"soon\" is not valid: the year needs 4 digits \
///      (expected Unix milliseconds such as 1700000000000, or RFC 3339 such as 2023-11-14T22:13:20.000Z)"
/// );
/// # Ok::<(), snowmint::Error>(())
/// ```
impl FromStr for Layout {
    type Err = Error;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let unknown = || Error::UnknownLayout { name: echo(s) };
        let (base, epoch) = match s.split_once('@') {
            Some((base, epoch)) => {
                // Said as a fault of the layout, so that a layout's errors
                // all read (and are classed) alike.
                let epoch =
                    crate::time::parse_epoch(epoch).map_err(|error| Error::InvalidLayout {
                        reason: error.to_string(),
                    })?;
                (base, Some(epoch))
            }
            None => (s, None),
        };
        let layout = if base.contains('/') {
            let mut widths = [0u8; 4];
            let mut fields = base.split('/');
            for width in &mut widths {
                *width = fields
                    .next()
                    .and_then(parse_small_decimal)
                    .and_then(|w| u8::try_from(w).ok())
                    .ok_or_else(unknown)?;
            }
            if fields.next().is_some() {
                return Err(unknown());
            }
            let [t, d, m, q] = widths;
            Layout::new(TWITTER_EPOCH_MS, t, d, m, q)?
        } else {
            Layout::preset(base)?
        };
        match epoch {
            Some(epoch) => layout.with_epoch(epoch),
            None => Ok(layout),
        }
    }
}

/// Digits only, at most 18 of them (so that the value fits an `i64`).
fn parse_small_decimal(text: &str) -> Option<i64> {
    if text.is_empty() || text.len() > 18 || !text.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    text.parse().ok()
}
