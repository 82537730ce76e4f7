//! The calculator's bodies: a decoded ID, the IDs of a time window, and
//! the description of a layout.

use serde::Serialize;
use snowmint::{Encoding, Layout, Role, SnowflakeId, format_time};
use utoipa::ToSchema;

use super::decimal_id;

/// Milliseconds in a mean Gregorian year (365.2425 days), the year of
/// [`LayoutDescription::years_left`].
pub const MS_PER_YEAR: f64 = 365.2425 * 86_400_000.0;

/// An ID and its fields, read with a layout (`GET /v1/ids/{id}`,
/// `GET /v1/encode`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct DecodedId {
    /// The ID.
    #[schema(schema_with = decimal_id)]
    pub id: SnowflakeId,
    /// Unix milliseconds.
    pub timestamp_ms: i64,
    /// RFC 3339, UTC, milliseconds.
    #[schema(examples("2023-11-14T22:13:20.000Z"))]
    pub time: String,
    /// The datacenter field: in other layouts, the node fields above the
    /// lowest one.
    pub datacenter: u64,
    /// The machine field: in other layouts, the lowest node field.
    pub machine: u64,
    /// The sequence field (0 in a layout without one).
    pub sequence: u64,
    /// Preset name or `T/D/M/S@EPOCH`.
    #[schema(examples("twitter"))]
    pub layout: String,
    /// The layout's epoch, Unix milliseconds.
    pub epoch_ms: i64,
    /// The ID in the other encodings.
    pub encodings: Encodings,
}

impl DecodedId {
    /// The fields of `id` in `layout`.
    ///
    /// # Examples
    ///
    /// ```
    /// use snowmint::{Layout, SnowflakeId};
    /// use snowmint_server::body::DecodedId;
    ///
    /// let id = SnowflakeId::from_u64(1724551110457221119);
    /// let decoded = DecodedId::new(&Layout::TWITTER, id)?;
    /// assert_eq!((decoded.datacenter, decoded.machine, decoded.sequence), (7, 13, 4095));
    /// assert_eq!(decoded.time, "2023-11-14T22:13:20.000Z");
    /// # Ok::<(), snowmint::Error>(())
    /// ```
    pub fn new(layout: &Layout, id: SnowflakeId) -> Result<DecodedId, snowmint::Error> {
        let parts = layout.decode(id)?;
        let (datacenter, machine) = layout.pair_of(parts.node());
        let sequence = layout
            .sequence_field()
            .map_or(0, |field| field.value_in(id.as_u64()));
        Ok(DecodedId {
            id,
            timestamp_ms: parts.time_ms(),
            time: parts.time().to_string(),
            datacenter,
            machine,
            sequence,
            layout: layout.to_string(),
            epoch_ms: layout.epoch_ms(),
            encodings: Encodings::new(id),
        })
    }
}

/// An ID in the encodings other than decimal.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct Encodings {
    /// Base 16, lower case, 16 digits.
    #[schema(examples("17eed6190fcedfff"))]
    pub hex: String,
    /// Crockford's base 32, upper case, 13 digits.
    #[schema(examples("1FVPP347WXQZZ"))]
    pub base32: String,
    /// Base 58, Bitcoin alphabet.
    #[schema(examples("51BRJMCGQge"))]
    pub base58: String,
}

impl Encodings {
    /// `id` in each encoding.
    pub fn new(id: SnowflakeId) -> Encodings {
        Encodings {
            hex: id.encode(Encoding::Hex).to_string(),
            base32: id.encode(Encoding::Base32).to_string(),
            base58: id.encode(Encoding::Base58).to_string(),
        }
    }
}

/// The smallest and largest ID of a time window (`GET /v1/range`), for
/// `WHERE id BETWEEN min AND max`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(as = Range)]
pub struct IdRange {
    /// Start of the window, Unix milliseconds.
    pub from_ms: i64,
    /// Start of the window: RFC 3339, UTC, milliseconds.
    #[schema(examples("2023-11-14T22:13:20.000Z"))]
    pub from: String,
    /// End of the window (inclusive), Unix milliseconds.
    pub to_ms: i64,
    /// End of the window: RFC 3339, UTC, milliseconds.
    #[schema(examples("2023-11-14T22:13:21.000Z"))]
    pub to: String,
    /// The smallest ID of the window.
    #[schema(schema_with = decimal_id)]
    pub min: SnowflakeId,
    /// The largest ID of the window.
    #[schema(schema_with = decimal_id)]
    pub max: SnowflakeId,
    /// Preset name or `T/D/M/S@EPOCH`.
    #[schema(examples("twitter"))]
    pub layout: String,
    /// The layout's epoch, Unix milliseconds.
    pub epoch_ms: i64,
}

impl IdRange {
    /// The window `from_ms ..= to_ms` of `layout`, whose IDs are `ids`.
    pub fn new(
        layout: &Layout,
        from_ms: i64,
        to_ms: i64,
        ids: std::ops::RangeInclusive<SnowflakeId>,
    ) -> IdRange {
        IdRange {
            from_ms,
            from: format_time(from_ms).to_string(),
            to_ms,
            to: format_time(to_ms).to_string(),
            min: *ids.start(),
            max: *ids.end(),
            layout: layout.to_string(),
            epoch_ms: layout.epoch_ms(),
        }
    }
}

/// A layout: field widths and shifts, epoch, capacity, last representable
/// instant and the years left until it (`GET /v1/layout`, and
/// `snowmint layout --format json`).
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(as = Layout)]
pub struct LayoutDescription {
    /// The preset's name, or the custom specification.
    #[schema(examples("twitter"))]
    pub layout: String,
    /// The full `T/D/M/S@EPOCH` specification, even for presets.
    #[schema(examples("41/5/5/12@1288834974657"))]
    pub spec: String,
    /// The epoch, Unix milliseconds.
    pub epoch_ms: i64,
    /// The epoch: RFC 3339, UTC, milliseconds.
    #[schema(examples("2010-11-04T01:42:54.657Z"))]
    pub epoch: String,
    /// Bits of the timestamp.
    #[schema(maximum = 63)]
    pub timestamp_bits: u8,
    /// Bits of the datacenter field.
    #[schema(maximum = 63)]
    pub datacenter_bits: u8,
    /// Bits of the machine field.
    #[schema(maximum = 63)]
    pub machine_bits: u8,
    /// Bits of the sequence.
    #[schema(maximum = 63)]
    pub sequence_bits: u8,
    /// Where the timestamp starts, counted from the lowest bit.
    #[schema(maximum = 63)]
    pub timestamp_shift: u8,
    /// Where the datacenter field starts.
    #[schema(maximum = 63)]
    pub datacenter_shift: u8,
    /// Where the machine field starts.
    #[schema(maximum = 63)]
    pub machine_shift: u8,
    /// The largest datacenter.
    pub max_datacenter: u64,
    /// The largest machine.
    pub max_machine: u64,
    /// The largest sequence number.
    pub max_sequence: u64,
    /// IDs one node can issue per millisecond.
    pub ids_per_ms: u64,
    /// Distinct (datacenter, machine) pairs.
    pub node_count: u64,
    /// The last instant an ID can hold, Unix milliseconds.
    pub last_instant_ms: i64,
    /// The last instant: RFC 3339, UTC, milliseconds.
    #[schema(examples("2080-07-10T17:30:30.208Z"))]
    pub last_instant: String,
    /// Mean Gregorian years from now until the last instant, to two
    /// decimals (negative once it has passed).
    pub years_left: f64,
    /// Each field from the highest bits down: name, width, shift and
    /// largest value.
    #[schema(inline)]
    pub fields: Vec<LayoutField>,
}

/// One field of a layout.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct LayoutField {
    /// The field's name as the family names it; `timestamp` for the time
    /// field.
    #[schema(examples("timestamp", "datacenter", "machine", "sequence"))]
    pub name: String,
    /// Its width in bits.
    #[schema(maximum = 63)]
    pub bits: u8,
    /// Where it starts, counted from the lowest bit.
    #[schema(maximum = 63)]
    pub shift: u8,
    /// Its largest value (for the timestamp: milliseconds since the epoch).
    pub max: u64,
}

impl LayoutDescription {
    /// `layout` as seen at `now_ms` (Unix ms; only "years left" depends on
    /// it).
    ///
    /// # Examples
    ///
    /// ```
    /// use snowmint::Layout;
    /// use snowmint_server::body::LayoutDescription;
    ///
    /// let twitter = LayoutDescription::new(&Layout::TWITTER, 1_700_000_000_000);
    /// assert_eq!(twitter.spec, "41/5/5/12@1288834974657");
    /// assert_eq!(twitter.last_instant, "2080-07-10T17:30:30.208Z");
    /// assert_eq!(twitter.years_left, 56.65);
    /// assert_eq!(twitter.fields[1].shift, 17);
    /// ```
    pub fn new(layout: &Layout, now_ms: i64) -> LayoutDescription {
        let last = layout.last_instant_ms();
        let years_left = (last - now_ms) as f64 / MS_PER_YEAR;
        let time = *layout.time_field();
        let sequence = layout.sequence_field().copied();
        // The two-number form of the node (see `Layout::node_from_pair`).
        let lowest = layout.node_fields().last().copied();
        let lowest_bits = lowest.map_or(0, |f| f.width());
        let upper_bits = layout.node_width() - lowest_bits;
        let mask = |bits: u8| {
            1u64.checked_shl(u32::from(bits))
                .map_or(u64::MAX, |b| b - 1)
        };
        LayoutDescription {
            layout: layout.to_string(),
            spec: layout.spec(),
            epoch_ms: layout.epoch_ms(),
            epoch: format_time(layout.epoch_ms()).to_string(),
            timestamp_bits: time.width(),
            datacenter_bits: upper_bits,
            machine_bits: lowest_bits,
            sequence_bits: sequence.map_or(0, |f| f.width()),
            timestamp_shift: time.shift(),
            datacenter_shift: lowest.map_or(0, |f| f.shift() + f.width()),
            machine_shift: lowest.map_or(0, |f| f.shift()),
            max_datacenter: mask(upper_bits),
            max_machine: mask(lowest_bits),
            max_sequence: sequence.map_or(0, |f| f.max()),
            ids_per_ms: layout.ids_per_second() / 1000,
            node_count: layout.node_count(),
            last_instant_ms: last,
            last_instant: format_time(last).to_string(),
            years_left: (years_left * 100.0).round() / 100.0,
            fields: layout
                .fields()
                .iter()
                .map(|field| LayoutField {
                    name: match field.role() {
                        Role::Time => "timestamp".to_owned(),
                        _ => field.name().to_owned(),
                    },
                    bits: field.width(),
                    shift: field.shift(),
                    max: field.max(),
                })
                .collect(),
        }
    }
}
