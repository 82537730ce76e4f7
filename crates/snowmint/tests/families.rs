//! Every preset against IDs its family published, or against an ID
//! computed here with the family's own formula (written out by hand from
//! its reference implementation, not with snowmint), each with where it
//! comes from; and the layout text's errors.

use snowmint::{ErrorKind, Layout, Role, SnowflakeId, Unit};

/// Decodes `id` in `layout` and checks its time (RFC 3339 at the layout's
/// precision) and its fields, by the family's names.
fn decodes(layout: Layout, id: u64, time: &str, fields: &[(&str, u64)]) {
    let parts = layout
        .decode(SnowflakeId::from_u64(id))
        .unwrap_or_else(|error| panic!("{layout}: {id}: {error}"));
    assert_eq!(parts.time().to_string(), time, "{layout}: {id}");
    let found: Vec<(&str, u64)> = parts.values().map(|(f, v)| (f.name(), v)).collect();
    assert_eq!(found, fields, "{layout}: {id}");
    // And back: the same fields make the same ID.
    let mut again = layout.parts_at_us(parts.time_us()).unwrap();
    for &(name, value) in fields {
        again.set(name, value).unwrap();
    }
    assert_eq!(again.id().as_u64(), id, "{layout}: encoding back");
}

/// Unix milliseconds of an RFC 3339 time.
fn ms(text: &str) -> i64 {
    snowmint::parse_time(text).unwrap()
}

#[test]
fn twitter_worked_example_and_published_tweets() {
    // The specification's worked example, both ways.
    decodes(
        Layout::TWITTER,
        1_724_551_110_457_221_119,
        "2023-11-14T22:13:20.000Z",
        &[("datacenter", 7), ("machine", 13), ("sequence", 4095)],
    );
    // Twitter's API reference, the Tweet object's example: id
    // 1050118621198921728, created_at "Wed Oct 10 20:19:24 +0000 2018"
    // (created_at has whole seconds).
    let tweet = Layout::TWITTER
        .decode(SnowflakeId::from_u64(1_050_118_621_198_921_728))
        .unwrap();
    assert!(
        tweet.time().to_string().starts_with("2018-10-10T20:19:24."),
        "{}",
        tweet.time()
    );
    // Google's unfurl, tests/unit/test_twitter.py: status
    // 1098230906194546688 is 2019-02-20 14:40:26.837.
    let status = Layout::TWITTER
        .decode(SnowflakeId::from_u64(1_098_230_906_194_546_688))
        .unwrap();
    assert_eq!(status.time().to_string(), "2019-02-20T14:40:26.837Z");
}

#[test]
fn discord_documented_example_and_ids_past_the_sign_bit() {
    // Discord's API reference, "Snowflakes": 175928847299117063 is
    // 2016-04-30 11:18:25.796 UTC, internal worker 1, process 0, increment 7.
    decodes(
        Layout::DISCORD,
        175_928_847_299_117_063,
        "2016-04-30T11:18:25.796Z",
        &[("worker", 1), ("process", 0), ("increment", 7)],
    );
    // Discord's IDs are unsigned: from 2084-09-06T15:47:35.552Z (2^41 ms
    // after its epoch) they have the top bit set, and decode as any other.
    decodes(
        Layout::DISCORD,
        1 << 63,
        "2084-09-06T15:47:35.552Z",
        &[("worker", 0), ("process", 0), ("increment", 0)],
    );
    decodes(
        Layout::DISCORD,
        u64::MAX,
        "2154-05-15T07:35:11.103Z",
        &[("worker", 31), ("process", 31), ("increment", 4095)],
    );
    // The same ID is not a Twitter ID.
    let error = Layout::TWITTER
        .decode(SnowflakeId::from_u64(1 << 63))
        .unwrap_err();
    assert_eq!(error.kind(), ErrorKind::OutOfRange);
}

#[test]
fn instagram_post_figures_and_a_public_media_id() {
    // "Sharding & IDs at Instagram": 41 bits of ms since the function's
    // epoch 1314220021721, 13 bits of logical shard, 10 of sequence. The
    // post's walk-through: 1387263000 ms into the epoch, user 31341 on
    // shard 31341 % 2000 = 1341, the table's 5001st row, 5001 % 1024 = 905.
    let id = (1_387_263_000u64 << 23) | (1341 << 10) | (5001 % 1024);
    let parts = Layout::INSTAGRAM.decode(SnowflakeId::from_u64(id)).unwrap();
    assert_eq!(parts.time_ms(), 1_314_220_021_721 + 1_387_263_000);
    assert_eq!(
        (parts.get("shard"), parts.get("sequence")),
        (Some(1341), Some(905))
    );
    // A public media ID whose post time its owner gave as
    // 2020-08-26T13:43:27Z (a Stack Overflow question on decoding them).
    let media = 2_384_288_897_814_875_714u64;
    decodes(
        Layout::INSTAGRAM,
        media,
        "2020-08-26T13:43:27.313Z",
        &[
            ("shard", (media >> 10) & 0x1fff),
            ("sequence", media & 0x3ff),
        ],
    );
}

#[test]
fn mastodon_documented_status() {
    // Mastodon's documentation, the Status entity's example: id
    // 103270115826048975, created_at 2019-12-08T03:48:33.901Z. The ID is
    // the insert's clock in ms shifted left 16, plus 16 bits of hashed
    // sequence (lib/mastodon/snowflake.rb): the same second.
    let id = 103_270_115_826_048_975u64;
    decodes(
        Layout::MASTODON,
        id,
        "2019-12-08T03:48:33.849Z",
        &[("sequence_data", id & 0xffff)],
    );
    assert_eq!(id >> 16, 1_575_776_913_849);
}

#[test]
fn sonyflake_v1_from_unfurl_and_v2_from_its_formula() {
    // Google's unfurl, tests/unit/test_sonyflake.py: 0x45eec4a4600041b is
    // machine 4.27 (the low bytes of an IP address: 4 * 256 + 27) at
    // 2020-08-12 17:35:29.98.
    decodes(
        Layout::SONYFLAKE,
        0x45e_ec4a_4600_041b,
        "2020-08-12T17:35:29.98Z",
        &[("sequence", 0), ("machine", 4 * 256 + 27)],
    );
    // sony/sonyflake/v2 Compose: elapsed 10 ms units since 2025-01-01 << 24
    // | sequence << 16 | machine.
    let elapsed = ((ms("2025-06-01T12:00:00.123Z") - ms("2025-01-01T00:00:00Z")) / 10) as u64;
    decodes(
        Layout::SONYFLAKE_V2,
        elapsed << 24 | 7 << 16 | 513,
        "2025-06-01T12:00:00.12Z",
        &[("sequence", 7), ("machine", 513)],
    );
}

#[test]
fn baidu_from_its_bits_allocator() {
    // DefaultUidGenerator: delta seconds since 2016-05-20 in UTC+8
    // (1463673600) << (22 + 13) | worker << 13 | sequence, sign bit 0.
    assert_eq!(
        snowmint::format_time(Layout::BAIDU.epoch_ms()).to_string(),
        "2016-05-19T16:00:00.000Z"
    );
    let delta = (ms("2020-01-01T00:00:00Z") / 1000 - 1_463_673_600) as u64;
    decodes(
        Layout::BAIDU,
        delta << 35 | 123_456 << 13 | 7,
        "2020-01-01T00:00:00Z",
        &[("worker_id", 123_456), ("sequence", 7)],
    );
    // Its 28 bits of seconds ran out in 2024, as its docs say.
    assert_eq!(
        snowmint::format_time(Layout::BAIDU.last_instant_ms()).to_string(),
        "2024-11-20T13:24:15.999Z"
    );
}

#[test]
fn hazelcast_tsid_yitter_cosid_and_leaf_from_their_formulas() {
    let at = ms("2024-03-01T10:20:30.456Z");
    // Hazelcast FlakeIdGenerator: (ms - 1514764800000) << 22 | sequence
    // << 16 | node id.
    let since = (at - 1_514_764_800_000) as u64;
    decodes(
        Layout::HAZELCAST,
        since << 22 | 63 << 16 | 65_535,
        "2024-03-01T10:20:30.456Z",
        &[("sequence", 63), ("node_id", 65_535)],
    );
    // TSID: (ms - 2020-01-01) << 22 | node << 12 | counter; its text is
    // Crockford base32 in 13 characters (tsid-creator's TsidTest:
    // 0xffffffffffffffff is "FZZZZZZZZZZZZ").
    let since = (at - 1_577_836_800_000) as u64;
    decodes(
        Layout::TSID,
        since << 22 | 1000 << 12 | 4000,
        "2024-03-01T10:20:30.456Z",
        &[("node", 1000), ("counter", 4000)],
    );
    assert_eq!(
        SnowflakeId::MAX.encode(snowmint::Encoding::Base32).as_str(),
        "FZZZZZZZZZZZZ"
    );
    // yitter/IdGenerator: (ms - 1582136402000) << (6 + 6) | worker << 6 |
    // sequence.
    let since = (at - 1_582_136_402_000) as u64;
    decodes(
        Layout::YITTER,
        since << 12 | 9 << 6 | 5,
        "2024-03-01T10:20:30.456Z",
        &[("worker_id", 9), ("sequence", 5)],
    );
    // CosId MillisecondSnowflakeId: (ms - 1577203200000) << 22 | machine
    // << 12 | sequence; its safe-JavaScript form << 12 | machine << 9.
    let since = (at - 1_577_203_200_000) as u64;
    decodes(
        Layout::COSID,
        since << 22 | 1023 << 12 | 4095,
        "2024-03-01T10:20:30.456Z",
        &[("machine", 1023), ("sequence", 4095)],
    );
    decodes(
        Layout::COSID_SAFE_JS,
        since << 12 | 7 << 9 | 511,
        "2024-03-01T10:20:30.456Z",
        &[("machine", 7), ("sequence", 511)],
    );
    // Meituan Leaf: (ms - twepoch) << 22 | workerId << 12 | sequence.
    let since = (at - 1_288_834_974_657) as u64;
    decodes(
        Layout::LEAF,
        since << 22 | 1000 << 12 | 99,
        "2024-03-01T10:20:30.456Z",
        &[("worker_id", 1000), ("sequence", 99)],
    );
}

#[test]
fn linkedin_and_tiktok_time_only() {
    // Google's unfurl, tests/unit/test_linkedin.py: message
    // 6685980502161199104 is 2020-07-06 18:59:31.226.
    let id = 6_685_980_502_161_199_104u64;
    decodes(
        Layout::LINKEDIN,
        id,
        "2020-07-06T18:59:31.226Z",
        &[("rest", id & 0x3f_ffff)],
    );
    // TikTok: the top 31 of 63 bits are Unix seconds (unfurl's
    // parse_tiktok.py). A public API response gives video
    // 7006694664724122881 a createTime of 1631373229; its ID's second is
    // the one before.
    let id = 7_006_694_664_724_122_881u64;
    decodes(
        Layout::TIKTOK,
        id,
        "2021-09-11T15:13:48Z",
        &[("rest", id & 0xffff_ffff)],
    );
    assert_eq!(
        Layout::TIKTOK.timestamp_ms(SnowflakeId::from_u64(id)) / 1000,
        1_631_373_228
    );
}

#[test]
fn js_safe_layouts_stay_below_2_to_the_53() {
    for layout in [Layout::COSID_SAFE_JS, Layout::SAFE_JS_10MS] {
        assert!(layout.is_js_safe(), "{layout}");
        assert_eq!(layout.max_id().as_u64(), (1 << 53) - 1, "{layout}");
        assert!(layout.is_mintable(), "{layout}");
    }
    // The 10 ms one lasts until 2199.
    let last = snowmint::format_time(Layout::SAFE_JS_10MS.last_instant_ms()).to_string();
    assert!(last.starts_with("2199-"), "{last}");
    assert_eq!(Layout::SAFE_JS_10MS.ids_per_second(), 25_600);
}

#[test]
fn at_least_fifteen_families_each_reading_back_from_its_name_and_text() {
    let presets = Layout::presets();
    assert!(presets.len() >= 15, "{}", presets.len());
    for preset in presets {
        assert_eq!(preset.name.parse::<Layout>().unwrap(), preset.layout);
        assert_eq!(
            preset.layout.spec().parse::<Layout>().unwrap(),
            preset.layout
        );
        assert_eq!(preset.layout.to_string(), preset.name);
        assert_eq!(preset.layout.name(), Some(preset.name));
    }
    let mintable: Vec<&str> = presets
        .iter()
        .filter(|p| !p.layout.is_mintable())
        .map(|p| p.name)
        .collect();
    assert_eq!(mintable, ["mastodon", "linkedin", "tiktok"]);
}

/// Each bad layout text with the message it gets: the field, the value and
/// the range, never a panic.
#[test]
fn bad_layout_texts_name_field_value_and_range() {
    let cases = [
        // Widths over 64 in all, and over 64 for one field.
        (
            "time:41/node:24",
            "invalid layout: the widths 41+24 add up to 65 bits (0..=64)",
        ),
        (
            "time:65",
            "invalid layout: field time width 65 is out of range (0..=64)",
        ),
        (
            "time:41/machine:999",
            "invalid layout: field machine width \"999\" is out of range (0..=64)",
        ),
        // Missing fields: no time field, an empty one, two of them.
        (
            "machine:10/sequence:12",
            "invalid layout: a layout needs a time field",
        ),
        (
            "time:0/sequence:12",
            "invalid layout: the time field needs at least 1 bit",
        ),
        (
            "time:20/t2:20:time",
            "invalid layout: 2 time fields (a layout has exactly 1)",
        ),
        (
            "time:20/sequence:4/seq2:4:sequence",
            "invalid layout: 2 sequence fields (a layout has at most 1)",
        ),
        // The same name twice: two fields that would overlap in meaning.
        (
            "time:20/machine:4/machine:4",
            "invalid layout: field \"machine\" is named twice",
        ),
        // Units: 0, over 1 s, not a unit.
        (
            "twitter,0ms",
            "invalid layout: unit 0ms is out of range (1us..=1s)",
        ),
        (
            "twitter,2s",
            "invalid layout: unit 2s is out of range (1us..=1s)",
        ),
        (
            "twitter,1.5ms",
            "invalid layout: unit \"1.5ms\" is not a unit (expected a whole number of us, ms or s in 1us..=1s, such as 1ms or 10ms)",
        ),
        // Names and roles.
        (
            "time:41/worker:10/sequence:12",
            "invalid layout: field \"worker\" needs a role (such as worker:10:node; roles: time, node, sequence, opaque)",
        ),
        (
            "time:41/worker:10:boss",
            "invalid layout: field worker role \"boss\" is not a role (expected time, node, sequence or opaque)",
        ),
        (
            "time:41/Machine:10",
            "invalid layout: field name \"Machine\" is not valid (expected 1 to 15 of a-z, 0-9 and _, starting with a letter)",
        ),
        (
            "time:41/machine",
            "invalid layout: field \"machine\" is not name:width or name:width:role (such as machine:10 or worker:5:node)",
        ),
        // The epoch.
        (
            "time:41@-5",
            "invalid layout: epoch -5 is before 1970-01-01 (0..)",
        ),
        // Twitter's shape must be Twitter's 63 bits.
        (
            "41/5/5/13",
            "invalid layout: widths 41+5+5+13 add up to 64 bits, not 63 (T/D/M/S is Twitter's 63-bit shape; name the fields, as in time:42/machine:10/sequence:12, for other totals)",
        ),
    ];
    for (text, message) in cases {
        let error = text.parse::<Layout>().unwrap_err();
        assert_eq!(error.to_string(), message, "{text}");
        assert_eq!(error.kind(), ErrorKind::InvalidLayout, "{text}");
    }
    let unknown = "snowflake9000".parse::<Layout>().unwrap_err();
    assert!(
        unknown.to_string().starts_with(
            "unknown layout \"snowflake9000\" (expected a preset (twitter, discord, instagram,"
        ),
        "{unknown}"
    );
}

#[test]
fn layouts_that_decode_but_cannot_mint_say_why() {
    let cases = [
        (
            "time:41/sequence:10/rest:12:opaque@0",
            "its field rest is opaque (it decodes only)",
        ),
        ("time:41@0", "it has no sequence field (it decodes only)"),
        (
            "sequence:12/time:41@0",
            "its time field lies below its sequence field sequence, so one node's IDs would not increase",
        ),
        (
            "time:52/sequence:12@0,1us",
            "its time and sequence fields are 64 bits together (a generator counts them in 63)",
        ),
    ];
    for (text, why) in cases {
        let layout: Layout = text.parse().unwrap();
        let error = layout.check_mintable().unwrap_err();
        assert!(error.to_string().ends_with(why), "{text}: {error}");
        assert!(layout.decode(SnowflakeId::from_u64(12345)).is_ok());
    }
}

#[test]
fn a_layout_of_any_order_unit_and_width_in_text_and_in_code() {
    let built = Layout::from_fields(
        0,
        Unit::from_micros(250).unwrap(),
        &[
            ("shard", Role::Node, 8),
            ("time", Role::Time, 40),
            ("counter", Role::Sequence, 10),
            ("noise", Role::Opaque, 6),
        ],
    )
    .unwrap();
    let read: Layout = "shard:8:node/time:40/counter:10:sequence/noise:6:opaque@0,250us"
        .parse()
        .unwrap();
    assert_eq!(read, built);
    assert_eq!(built.bits(), 64);
    assert_eq!(built.unit().digits(), 5);
    // A node field above the time field: a time window is no single range.
    assert_eq!(
        built.id_range(0, 10).unwrap_err().kind(),
        ErrorKind::InvalidLayout
    );
}
