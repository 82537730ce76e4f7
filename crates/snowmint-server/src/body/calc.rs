//! The calculator's bodies: a decoded ID, the IDs of a time window, and
//! the description of a layout.

use serde::Serialize;
use snowmint::{Encoding, Field, Layout, SnowflakeId, format_time};
use utoipa::ToSchema;

use super::{decimal_id, one_of_names};

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
    /// The datacenter field.
    pub datacenter: u64,
    /// The machine field.
    pub machine: u64,
    /// The sequence field.
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
    /// let id = SnowflakeId::from_u64(1724551110457221119)?;
    /// let decoded = DecodedId::new(&Layout::TWITTER, id);
    /// assert_eq!((decoded.datacenter, decoded.machine, decoded.sequence), (7, 13, 4095));
    /// assert_eq!(decoded.time, "2023-11-14T22:13:20.000Z");
    /// # Ok::<(), snowmint::Error>(())
    /// ```
    pub fn new(layout: &Layout, id: SnowflakeId) -> DecodedId {
        let parts = layout.decode(id);
        DecodedId {
            id,
            timestamp_ms: parts.timestamp_ms,
            time: format_time(parts.timestamp_ms).to_string(),
            datacenter: parts.datacenter,
            machine: parts.machine,
            sequence: parts.sequence,
            layout: layout.to_string(),
            epoch_ms: layout.epoch_ms(),
            encodings: Encodings::new(id),
        }
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
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct LayoutField {
    /// `timestamp`, `datacenter`, `machine` or `sequence`.
    #[schema(schema_with = field_name)]
    pub name: &'static str,
    /// Its width in bits.
    #[schema(maximum = 63)]
    pub bits: u8,
    /// Where it starts, counted from the lowest bit.
    #[schema(maximum = 63)]
    pub shift: u8,
    /// Its largest value (for the timestamp: milliseconds since the epoch).
    pub max: u64,
}

/// The schema of a field's name.
fn field_name() -> utoipa::openapi::schema::ObjectBuilder {
    one_of_names(
        [
            Field::Timestamp,
            Field::Datacenter,
            Field::Machine,
            Field::Sequence,
        ]
        .map(Field::name),
        "The field.",
    )
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
        let field = |name: Field, bits: u8, shift: u8| LayoutField {
            name: name.name(),
            bits,
            shift,
            max: layout.max(name),
        };
        LayoutDescription {
            layout: layout.to_string(),
            spec: layout.spec(),
            epoch_ms: layout.epoch_ms(),
            epoch: format_time(layout.epoch_ms()).to_string(),
            timestamp_bits: layout.timestamp_bits(),
            datacenter_bits: layout.datacenter_bits(),
            machine_bits: layout.machine_bits(),
            sequence_bits: layout.sequence_bits(),
            timestamp_shift: layout.timestamp_shift(),
            datacenter_shift: layout.datacenter_shift(),
            machine_shift: layout.machine_shift(),
            max_datacenter: layout.max(Field::Datacenter),
            max_machine: layout.max(Field::Machine),
            max_sequence: layout.max(Field::Sequence),
            ids_per_ms: layout.ids_per_ms(),
            node_count: layout.node_count(),
            last_instant_ms: last,
            last_instant: format_time(last).to_string(),
            years_left: (years_left * 100.0).round() / 100.0,
            fields: vec![
                field(
                    Field::Timestamp,
                    layout.timestamp_bits(),
                    layout.timestamp_shift(),
                ),
                field(
                    Field::Datacenter,
                    layout.datacenter_bits(),
                    layout.datacenter_shift(),
                ),
                field(
                    Field::Machine,
                    layout.machine_bits(),
                    layout.machine_shift(),
                ),
                field(Field::Sequence, layout.sequence_bits(), 0),
            ],
        }
    }
}
