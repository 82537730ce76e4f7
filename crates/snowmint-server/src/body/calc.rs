//! The calculator's bodies: a decoded ID, the IDs of a time window, and
//! the description of a layout.

use serde::Serialize;
use snowmint::{Encoding, Layout, Role, SnowflakeId, format_time};
use utoipa::ToSchema;

use super::decimal_id;

/// Milliseconds in a mean Gregorian year (365.2425 days), the year of
/// [`LayoutDescription::years_left`].
pub const MS_PER_YEAR: f64 = 365.2425 * 86_400_000.0;

/// The largest integer a JavaScript number holds exactly, 2^53 - 1: every
/// JSON parser of a browser reads numbers into one, and rounds a larger
/// one silently.
pub const MAX_SAFE_INTEGER: u64 = (1 << 53) - 1;

/// A count or field value in JSON: a number up to
/// [`MAX_SAFE_INTEGER`], a decimal string above it (as IDs always are).
/// Only a field wider than 53 bits, in a layout given as text, reaches
/// the string form; every preset's values are numbers.
fn js_u64<S: serde::Serializer>(value: &u64, serializer: S) -> Result<S::Ok, S::Error> {
    if *value <= MAX_SAFE_INTEGER {
        serializer.serialize_u64(*value)
    } else {
        serializer.collect_str(value)
    }
}

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
    /// RFC 3339, UTC, at the layout's precision (milliseconds for
    /// Twitter, hundredths of a second for Sonyflake, seconds for Baidu).
    #[schema(examples("2023-11-14T22:13:20.000Z"))]
    pub time: String,
    /// The datacenter field: in other layouts, the node fields above the
    /// lowest one (`fields` names each field as the family does).
    #[serde(serialize_with = "js_u64")]
    pub datacenter: u64,
    /// The machine field: in other layouts, the lowest node field.
    #[serde(serialize_with = "js_u64")]
    pub machine: u64,
    /// The sequence field (0 in a layout without one).
    #[serde(serialize_with = "js_u64")]
    pub sequence: u64,
    /// Preset name or `T/D/M/S@EPOCH`.
    #[schema(examples("twitter"))]
    pub layout: String,
    /// The layout's epoch, Unix milliseconds.
    pub epoch_ms: i64,
    /// The ID in the other encodings.
    pub encodings: Encodings,
    /// Every field but the time, by the family's names for them, most
    /// significant first: `datacenter`, `machine`, `sequence` for
    /// Twitter; `worker`, `process`, `increment` for Discord; `shard`,
    /// `sequence` for Instagram.
    pub fields: NamedFields,
    /// The unit of the layout's time: `time` has its precision.
    #[schema(examples("1ms", "10ms", "1s"))]
    pub unit: String,
}

/// Field values by name, in the layout's order.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct NamedFields(pub Vec<(String, u64)>);

impl NamedFields {
    /// The value of the field called `name`.
    pub fn get(&self, name: &str) -> Option<u64> {
        self.0.iter().find(|(n, _)| n == name).map(|(_, v)| *v)
    }
}

impl Serialize for NamedFields {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut map = serializer.serialize_map(Some(self.0.len()))?;
        /// One value, as `js_u64` writes it.
        struct Value(u64);
        impl Serialize for Value {
            fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                js_u64(&self.0, serializer)
            }
        }
        for (name, value) in &self.0 {
            map.serialize_entry(name, &Value(*value))?;
        }
        map.end()
    }
}

impl utoipa::PartialSchema for NamedFields {
    fn schema() -> utoipa::openapi::RefOr<utoipa::openapi::schema::Schema> {
        use utoipa::openapi::schema::{AdditionalProperties, ObjectBuilder, Type};
        ObjectBuilder::new()
            .additional_properties(Some(AdditionalProperties::RefOr(
                ObjectBuilder::new()
                    .schema_type(Type::Integer)
                    .minimum(Some(0))
                    .into(),
            )))
            .examples([serde_json::json!({"datacenter": 7, "machine": 13, "sequence": 4095})])
            .into()
    }
}

impl ToSchema for NamedFields {}

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
            fields: NamedFields(
                parts
                    .values()
                    .map(|(field, value)| (field.name().to_owned(), value))
                    .collect(),
            ),
            unit: layout.unit().to_string(),
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
    #[serde(serialize_with = "js_u64")]
    pub max_datacenter: u64,
    /// The largest machine.
    #[serde(serialize_with = "js_u64")]
    pub max_machine: u64,
    /// The largest sequence number.
    #[serde(serialize_with = "js_u64")]
    pub max_sequence: u64,
    /// IDs one node can issue per millisecond.
    #[serde(serialize_with = "js_u64")]
    pub ids_per_ms: u64,
    /// Distinct (datacenter, machine) pairs.
    #[serde(serialize_with = "js_u64")]
    pub node_count: u64,
    /// The last instant an ID can hold, Unix milliseconds.
    pub last_instant_ms: i64,
    /// The last instant: RFC 3339, UTC, milliseconds.
    #[schema(examples("2080-07-10T17:30:30.208Z"))]
    pub last_instant: String,
    /// Mean Gregorian years from now until the last instant, to two
    /// decimals (negative once it has passed).
    pub years_left: f64,
    /// Each field from the highest bits down: name, role, width, shift
    /// and largest value.
    #[schema(inline)]
    pub fields: Vec<LayoutField>,
    /// The family a preset describes, and its reference; absent for a
    /// layout that is no preset.
    #[schema(examples("Twitter Snowflake (the default)"))]
    pub family: Option<String>,
    /// How long one tick of the time field lasts: `1ms`, `10ms`, `1s`,
    /// `1us`...
    #[schema(examples("1ms"))]
    pub unit: String,
    /// The unit in microseconds (1 ..= 1000000).
    #[schema(minimum = 1, maximum = 1_000_000)]
    pub unit_us: u32,
    /// The bits the fields take: IDs lie in 0 ..= 2^bits-1.
    #[schema(maximum = 64)]
    pub bits: u8,
    /// The largest ID of the layout.
    #[schema(schema_with = decimal_id)]
    pub max_id: SnowflakeId,
    /// Whether every ID of the layout is below 2^53, so that a JavaScript
    /// number holds it exactly.
    pub js_safe: bool,
    /// IDs one node can issue per second (sequence values per tick times
    /// ticks per second; 0 for a layout snowmint cannot mint).
    #[serde(serialize_with = "js_u64")]
    pub ids_per_second: u64,
    /// Whether snowmint can mint IDs of the layout (it has a sequence
    /// field below the time, and no opaque field), or only read them.
    pub mintable: bool,
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
    /// Its largest value (for the timestamp: ticks of the unit since the
    /// epoch).
    #[serde(serialize_with = "js_u64")]
    pub max: u64,
    /// What it holds: `time`, `node` (the slot is the node fields, most
    /// significant first), `sequence` or `opaque` (bits snowmint gives no
    /// meaning, such as a hash).
    #[schema(examples("time", "node", "sequence", "opaque"))]
    pub role: String,
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
            ids_per_ms: if layout.is_mintable() {
                layout.ids_per_second() / 1000
            } else {
                0
            },
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
                    role: field.role().name().to_owned(),
                })
                .collect(),
            family: Layout::presets()
                .iter()
                .find(|preset| preset.layout == *layout)
                .map(|preset| preset.family.to_owned()),
            unit: layout.unit().to_string(),
            unit_us: layout.unit().as_micros(),
            bits: layout.bits(),
            max_id: layout.max_id(),
            js_safe: layout.is_js_safe(),
            ids_per_second: if layout.is_mintable() {
                layout.ids_per_second()
            } else {
                0
            },
            mintable: layout.is_mintable(),
        }
    }
}
