//! The families snowmint knows by name.
//!
//! Each preset says in its docs where its figures come from. The figures
//! were read from each family's reference implementation or its own
//! publication; where sources disagree, the docs say which was chosen and
//! why. `tests/families.rs` checks each against an ID from the family's
//! publications or one computed with the family's own formula.

use super::{Layout, Role, Unit};

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

const MS: Unit = Unit::MILLISECOND;
const TIME: Role = Role::Time;
const NODE: Role = Role::Node;
const SEQUENCE: Role = Role::Sequence;
const OPAQUE: Role = Role::Opaque;

impl Layout {
    /// Twitter's Snowflake, the default: 63 bits, `time` 41 | `datacenter`
    /// 5 | `machine` 5 | `sequence` 12, milliseconds since 1288834974657
    /// (2010-11-04T01:42:54.657Z). From the announcement of Snowflake and
    /// its original implementation (twitter-archive/snowflake), which
    /// leaves the sign bit of a signed 64-bit integer clear.
    ///
    /// # Examples
    ///
    /// ```
    /// use snowmint::Layout;
    ///
    /// assert_eq!(Layout::TWITTER.to_string(), "twitter");
    /// assert_eq!(Layout::TWITTER.spec(), "41/5/5/12@1288834974657");
    /// assert_eq!(Layout::TWITTER.node_count(), 1024);
    /// ```
    pub const TWITTER: Layout = Layout::known(
        TWITTER_EPOCH_MS,
        MS,
        &[
            ("time", TIME, 41),
            ("datacenter", NODE, 5),
            ("machine", NODE, 5),
            ("sequence", SEQUENCE, 12),
        ],
    );

    /// Discord's snowflakes: all 64 bits, `time` 42 | `worker` 5 |
    /// `process` 5 | `increment` 12, milliseconds since 2015-01-01. From
    /// Discord's API reference, which names the fields (internal worker
    /// and process ids, and an increment counted per process) and
    /// publishes the example 175928847299117063. Discord types them as
    /// unsigned 64-bit integers, so an ID at or above 2^63 (from 2084-09
    /// on) is still valid.
    pub const DISCORD: Layout = Layout::known(
        DISCORD_EPOCH_MS,
        MS,
        &[
            ("time", TIME, 42),
            ("worker", NODE, 5),
            ("process", NODE, 5),
            ("increment", SEQUENCE, 12),
        ],
    );

    /// Instagram's IDs: 64 bits, `time` 41 | `shard` 13 | `sequence` 10,
    /// milliseconds since 1314220021721 (2011-08-24T21:07:01.721Z). From
    /// the engineering post "Sharding & IDs at Instagram" (2012): a
    /// PL/pgSQL function computes each ID inside its logical shard.
    ///
    /// The post's prose walks through an example with an epoch of
    /// 2011-01-01, while its function uses 1314220021721, and decoders in
    /// the wild use either (or the Unix epoch). This preset takes the
    /// function's value: it is what the production code ran, and public
    /// media IDs whose posting time is known decode to that time with it
    /// (2384288897814875714 was posted 2020-08-26T13:43:27Z and decodes to
    /// 13:43:27.313; with 2011-01-01 it would land in January 2020).
    pub const INSTAGRAM: Layout = Layout::known(
        1_314_220_021_721,
        MS,
        &[
            ("time", TIME, 41),
            ("shard", NODE, 13),
            ("sequence", SEQUENCE, 10),
        ],
    );

    /// Mastodon's IDs: `time` 48 | `sequence_data` 16, milliseconds since
    /// the Unix epoch. From Mastodon's `lib/mastodon/snowflake.rb`: the low
    /// 16 bits are a hash of the table name, a secret and the time, plus
    /// the table's sequence, so that they are unique within a millisecond
    /// without revealing a count; snowmint reads them as an opaque number
    /// and cannot mint this layout. (Rows made with a given creation time
    /// get random low bits and a time rounded to the second plus random
    /// milliseconds.)
    pub const MASTODON: Layout =
        Layout::known(0, MS, &[("time", TIME, 48), ("sequence_data", OPAQUE, 16)]);

    /// Sonyflake (sony/sonyflake, v1): 63 bits, `time` 39 | `sequence` 8 |
    /// `machine` 16, in units of 10 ms since 2014-09-01T00:00:00Z. The
    /// machine id is at the bottom, below the sequence; by default it is
    /// the low 16 bits of the host's private IPv4 address. A node makes at
    /// most 256 IDs per 10 ms, 25,600 per second, for 174 years.
    pub const SONYFLAKE: Layout = Layout::known(
        1_409_529_600_000,
        Unit::TEN_MILLISECONDS,
        &[
            ("time", TIME, 39),
            ("sequence", SEQUENCE, 8),
            ("machine", NODE, 16),
        ],
    );

    /// Sonyflake v2 (sony/sonyflake/v2, 2025) with its defaults: the same
    /// 39 | 8 | 16 bits and 10 ms units as v1, from 2025-01-01T00:00:00Z.
    /// v2 lets each deployment choose the sequence and machine widths, the
    /// unit (1 ms or more) and the start; write them as a layout text, or
    /// change the unit with `sonyflake-v2,1ms`.
    pub const SONYFLAKE_V2: Layout = Layout::known(
        1_735_689_600_000,
        Unit::TEN_MILLISECONDS,
        &[
            ("time", TIME, 39),
            ("sequence", SEQUENCE, 8),
            ("machine", NODE, 16),
        ],
    );

    /// Baidu's uid-generator (`DefaultUidGenerator`): 63 bits (a sign bit
    /// kept 0), `time` 28 | `worker_id` 22 | `sequence` 13, in seconds
    /// since 2016-05-20.
    ///
    /// The epoch is 2016-05-20 in China Standard Time (UTC+8), that is
    /// 2016-05-19T16:00:00Z = 1463673600000: the generator's default is
    /// that constant, written beside the date in its source. (A date given
    /// by configuration is read in the JVM's default time zone, which on
    /// Baidu's servers is UTC+8 as well.) Its 28 bits of seconds last 8.5
    /// years, to 2024-11-20; deployments since widen the time field.
    pub const BAIDU: Layout = Layout::known(
        1_463_673_600_000,
        Unit::SECOND,
        &[
            ("time", TIME, 28),
            ("worker_id", NODE, 22),
            ("sequence", SEQUENCE, 13),
        ],
    );

    /// Hazelcast's Flake ID generator (`FlakeIdGeneratorConfig` defaults):
    /// 63 bits, `time` 41 | `sequence` 6 | `node_id` 16, milliseconds since
    /// 2018-01-01T00:00:00Z. The node id (assigned by the cluster) is at
    /// the bottom; a member makes 64 IDs per millisecond.
    pub const HAZELCAST: Layout = Layout::known(
        1_514_764_800_000,
        MS,
        &[
            ("time", TIME, 41),
            ("sequence", SEQUENCE, 6),
            ("node_id", NODE, 16),
        ],
    );

    /// TSID (f4b6a3/tsid-creator, `TsidFactory` defaults): 64 bits, `time`
    /// 42 | `node` 10 | `counter` 12, milliseconds since
    /// 2020-01-01T00:00:00Z. Its text form is the 13-character Crockford
    /// base32 snowmint calls `base32`. The reference factory starts each
    /// millisecond's counter at a random value; snowmint's generator starts
    /// it at 0, which is a TSID all the same.
    pub const TSID: Layout = Layout::known(
        1_577_836_800_000,
        MS,
        &[
            ("time", TIME, 42),
            ("node", NODE, 10),
            ("counter", SEQUENCE, 12),
        ],
    );

    /// yitter/IdGenerator with its default options: `time` 51 |
    /// `worker_id` 6 | `sequence` 6, milliseconds since 1582136402000
    /// (2020-02-20 02:20:02 in UTC+8). The time field takes whatever the
    /// 63 bits leave. The reference reserves sequence values 0 to 4 for
    /// IDs it makes while the clock is back; snowmint's generator refuses
    /// (or waits) instead and uses the whole sequence.
    pub const YITTER: Layout = Layout::known(
        1_582_136_402_000,
        MS,
        &[
            ("time", TIME, 51),
            ("worker_id", NODE, 6),
            ("sequence", SEQUENCE, 6),
        ],
    );

    /// CosId's `MillisecondSnowflakeId` defaults (Ahoo-Wang/CosId): 63
    /// bits, `time` 41 | `machine` 10 | `sequence` 12, milliseconds since
    /// 1577203200000 (2019-12-24T16:00:00Z, midnight of 2019-12-25 in
    /// UTC+8).
    pub const COSID: Layout = Layout::known(
        1_577_203_200_000,
        MS,
        &[
            ("time", TIME, 41),
            ("machine", NODE, 10),
            ("sequence", SEQUENCE, 12),
        ],
    );

    /// CosId's `SafeJavaScriptSnowflakeId.ofMillisecond`: 53 bits, so every
    /// ID is a safe JavaScript number, `time` 41 | `machine` 3 | `sequence`
    /// 9, milliseconds since CosId's epoch, 2019-12-24T16:00:00Z. 8 nodes,
    /// 512,000 IDs per second each, until 2089. (Some CosId releases passed
    /// the epoch in seconds to this millisecond generator, a bug CosId has
    /// since fixed; this preset follows the fixed, documented form.)
    pub const COSID_SAFE_JS: Layout = Layout::known(
        1_577_203_200_000,
        MS,
        &[
            ("time", TIME, 41),
            ("machine", NODE, 3),
            ("sequence", SEQUENCE, 9),
        ],
    );

    /// Meituan's Leaf, snowflake mode (`SnowflakeIDGenImpl`): 63 bits,
    /// `time` 41 | `worker_id` 10 | `sequence` 12, milliseconds since
    /// Twitter's epoch, with worker ids handed out through ZooKeeper. (Leaf
    /// starts each millisecond's sequence at a random value below 100; any
    /// value decodes.)
    pub const LEAF: Layout = Layout::known(
        TWITTER_EPOCH_MS,
        MS,
        &[
            ("time", TIME, 41),
            ("worker_id", NODE, 10),
            ("sequence", SEQUENCE, 12),
        ],
    );

    /// LinkedIn's activity, post and message IDs: 63 bits whose top 41 are
    /// milliseconds since the Unix epoch; the low 22 bits are not
    /// published, so they decode as an opaque `rest` and this layout cannot
    /// mint. The reading was found by taking post IDs apart
    /// (Ollie-Boyd/Linkedin-post-timestamp-extractor) and is the one
    /// Google's URL forensics tool unfurl uses.
    pub const LINKEDIN: Layout = Layout::known(0, MS, &[("time", TIME, 41), ("rest", OPAQUE, 22)]);

    /// TikTok's video and comment IDs: 63 bits whose top 31 are seconds
    /// since the Unix epoch; the low 32 bits are not published (an opaque
    /// `rest`), so this layout only decodes. The reading is the one of
    /// Google's unfurl and of the public TikTok timestamp tools.
    pub const TIKTOK: Layout =
        Layout::known(0, Unit::SECOND, &[("time", TIME, 31), ("rest", OPAQUE, 32)]);

    /// snowmint's JavaScript-safe layout for a long life: 53 bits, `time`
    /// 39 | `machine` 6 | `sequence` 8, in units of 10 ms since
    /// 2025-01-01T00:00:00Z. Every ID is below 2^53, so a JSON number
    /// carries it unrounded to any JavaScript client, for 174 years (until
    /// 2199); 64 nodes of 25,600 IDs per second each. Sonyflake's unit and
    /// span, in Twitter's field order.
    pub const SAFE_JS_10MS: Layout = Layout::known(
        1_735_689_600_000,
        Unit::TEN_MILLISECONDS,
        &[
            ("time", TIME, 39),
            ("machine", NODE, 6),
            ("sequence", SEQUENCE, 8),
        ],
    );
}

/// A named layout and where it comes from; see [`Layout::presets`].
///
/// # Examples
///
/// ```
/// use snowmint::Layout;
///
/// let sonyflake = Layout::presets().iter().find(|p| p.name == "sonyflake").unwrap();
/// assert_eq!(sonyflake.layout, Layout::SONYFLAKE);
/// assert_eq!(sonyflake.family, "Sonyflake (sony/sonyflake v1)");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct Preset {
    /// The name it is read by (`sonyflake`).
    pub name: &'static str,
    /// The layout.
    pub layout: Layout,
    /// The family, as people know it, and its reference.
    pub family: &'static str,
}

const fn preset(name: &'static str, layout: Layout, family: &'static str) -> Preset {
    Preset {
        name,
        layout,
        family,
    }
}

/// Every preset, in the order they are listed.
pub(crate) const PRESETS: [Preset; 16] = [
    preset(
        "twitter",
        Layout::TWITTER,
        "Twitter Snowflake (the default)",
    ),
    preset("discord", Layout::DISCORD, "Discord snowflakes"),
    preset(
        "instagram",
        Layout::INSTAGRAM,
        "Instagram (Sharding & IDs at Instagram)",
    ),
    preset(
        "mastodon",
        Layout::MASTODON,
        "Mastodon (lib/mastodon/snowflake.rb)",
    ),
    preset(
        "sonyflake",
        Layout::SONYFLAKE,
        "Sonyflake (sony/sonyflake v1)",
    ),
    preset(
        "sonyflake-v2",
        Layout::SONYFLAKE_V2,
        "Sonyflake v2 defaults (sony/sonyflake/v2)",
    ),
    preset(
        "baidu",
        Layout::BAIDU,
        "Baidu uid-generator (DefaultUidGenerator)",
    ),
    preset(
        "hazelcast",
        Layout::HAZELCAST,
        "Hazelcast Flake ID generator",
    ),
    preset(
        "tsid",
        Layout::TSID,
        "TSID (f4b6a3/tsid-creator, TsidFactory)",
    ),
    preset("yitter", Layout::YITTER, "yitter/IdGenerator defaults"),
    preset("cosid", Layout::COSID, "CosId MillisecondSnowflakeId"),
    preset(
        "cosid-safe-js",
        Layout::COSID_SAFE_JS,
        "CosId SafeJavaScriptSnowflakeId",
    ),
    preset("leaf", Layout::LEAF, "Meituan Leaf, snowflake mode"),
    preset(
        "linkedin",
        Layout::LINKEDIN,
        "LinkedIn post and activity IDs (time only)",
    ),
    preset("tiktok", Layout::TIKTOK, "TikTok video IDs (time only)"),
    preset(
        "safe-js-10ms",
        Layout::SAFE_JS_10MS,
        "snowmint's JavaScript-safe layout, 10 ms units",
    ),
];

impl Layout {
    /// Every preset, with its name and family, in the order they are
    /// listed (`twitter` first).
    ///
    /// # Examples
    ///
    /// ```
    /// use snowmint::Layout;
    ///
    /// assert!(Layout::presets().len() >= 15);
    /// assert_eq!(Layout::presets()[0].layout, Layout::TWITTER);
    /// ```
    pub fn presets() -> &'static [Preset] {
        &PRESETS
    }

    /// Looks a preset up by name, in any case.
    ///
    /// # Errors
    ///
    /// A name that is no preset, listing the presets.
    ///
    /// # Examples
    ///
    /// ```
    /// use snowmint::Layout;
    ///
    /// assert_eq!(Layout::preset("Sonyflake")?, Layout::SONYFLAKE);
    /// assert!(Layout::preset("snowflake9000").is_err());
    /// # Ok::<(), snowmint::Error>(())
    /// ```
    pub fn preset(name: &str) -> Result<Layout, crate::Error> {
        PRESETS
            .iter()
            .find(|preset| preset.name.eq_ignore_ascii_case(name))
            .map(|preset| preset.layout)
            .ok_or_else(|| super::text::unknown(name))
    }

    /// The names of the presets.
    ///
    /// # Examples
    ///
    /// ```
    /// assert!(snowmint::Layout::preset_names().any(|n| n == "cosid-safe-js"));
    /// ```
    pub fn preset_names() -> impl Iterator<Item = &'static str> {
        PRESETS.iter().map(|preset| preset.name)
    }

    /// The preset's name if this layout is one (the same fields, names
    /// included, unit and epoch), else `None`.
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
            .find(|preset| preset.layout == *self)
            .map(|preset| preset.name)
    }
}
