//! The format: encoding, decoding, text forms and their boundaries, checked
//! against the specification's numbers and against the formula written out
//! independently here.

use snowmint::{
    Encoding, ErrorKind, InvalidIdKind, Layout, Node, Role, SnowflakeId, Unit, format_time,
    parse_time,
};

const TWITTER_EPOCH: i64 = 1_288_834_974_657;
const MAX_ID: u64 = (1 << 63) - 1;
const LAST_INSTANT: i64 = TWITTER_EPOCH + (1 << 41) - 1;

/// A Twitter ID's four fields, as these tests write them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Parts {
    timestamp_ms: i64,
    datacenter: u64,
    machine: u64,
    sequence: u64,
}

/// Encodes Twitter-shaped fields in `layout`.
fn encode(layout: Layout, p: Parts) -> Result<SnowflakeId, snowmint::Error> {
    layout.encode(
        p.timestamp_ms,
        &[
            ("datacenter", p.datacenter),
            ("machine", p.machine),
            ("sequence", p.sequence),
        ],
    )
}

/// Decodes an ID of a Twitter-shaped `layout` into its four fields.
fn decode(layout: Layout, id: SnowflakeId) -> Parts {
    let parts = layout.decode(id).unwrap();
    let field = |name| parts.get(name).unwrap();
    Parts {
        timestamp_ms: parts.time_ms(),
        datacenter: field("datacenter"),
        machine: field("machine"),
        sequence: field("sequence"),
    }
}

/// The specification's worked example.
const EXAMPLE_ID: u64 = 1_724_551_110_457_221_119;
const EXAMPLE: Parts = Parts {
    timestamp_ms: 1_700_000_000_000,
    datacenter: 7,
    machine: 13,
    sequence: 4095,
};

/// The Twitter formula, written out by hand.
fn formula(p: Parts) -> u64 {
    ((p.timestamp_ms - TWITTER_EPOCH) as u64) << 22
        | p.datacenter << 17
        | p.machine << 12
        | p.sequence
}

fn parts(timestamp_ms: i64, datacenter: u64, machine: u64, sequence: u64) -> Parts {
    Parts {
        timestamp_ms,
        datacenter,
        machine,
        sequence,
    }
}

#[test]
fn worked_example_encodes_to_the_specified_id() {
    assert_eq!(
        encode(Layout::TWITTER, EXAMPLE).unwrap().as_u64(),
        EXAMPLE_ID
    );
    assert_eq!(formula(EXAMPLE), EXAMPLE_ID);
}

#[test]
fn worked_example_decodes_to_the_specified_parts() {
    let id: SnowflakeId = "1724551110457221119".parse().unwrap();
    assert_eq!(decode(Layout::TWITTER, id), EXAMPLE);
    // The intermediate values the specification lists.
    assert_eq!(EXAMPLE_ID & 0xfff, 4095);
    assert_eq!(EXAMPLE_ID >> 22, 411_165_025_343);
}

#[test]
fn twitter_is_the_default_layout_with_the_specified_widths() {
    let layout = Layout::default();
    assert_eq!(layout, Layout::TWITTER);
    assert_eq!(layout.epoch_ms(), TWITTER_EPOCH);
    let fields: Vec<(&str, Role, u8, u8)> = layout
        .fields()
        .iter()
        .map(|f| (f.name(), f.role(), f.width(), f.shift()))
        .collect();
    assert_eq!(
        fields,
        [
            ("time", Role::Time, 41, 22),
            ("datacenter", Role::Node, 5, 17),
            ("machine", Role::Node, 5, 12),
            ("sequence", Role::Sequence, 12, 0)
        ]
    );
    assert_eq!((layout.bits(), layout.unit()), (63, Unit::MILLISECOND));
    assert_eq!(layout.last_instant_ms(), LAST_INSTANT);
    assert_eq!(
        format_time(layout.last_instant_ms()).to_string(),
        "2080-07-10T17:30:30.208Z"
    );
    assert_eq!(
        format_time(layout.epoch_ms()).to_string(),
        "2010-11-04T01:42:54.657Z"
    );
}

#[test]
fn discord_preset_has_discords_epoch() {
    assert_eq!(Layout::DISCORD.epoch_ms(), 1_420_070_400_000);
    assert_eq!(
        format_time(Layout::DISCORD.epoch_ms()).to_string(),
        "2015-01-01T00:00:00.000Z"
    );
}

#[test]
fn every_field_at_its_maximum_and_one_past() {
    let max = parts(LAST_INSTANT, 31, 31, 4095);
    assert_eq!(encode(Layout::TWITTER, max).unwrap().as_u64(), MAX_ID);
    assert_eq!(formula(max), MAX_ID);

    let cases = [
        ("datacenter", parts(TWITTER_EPOCH, 32, 0, 0), 32, 31),
        ("machine", parts(TWITTER_EPOCH, 0, 32, 0), 32, 31),
        ("sequence", parts(TWITTER_EPOCH, 0, 0, 4096), 4096, 4095),
        (
            "datacenter",
            parts(TWITTER_EPOCH, u64::MAX, 0, 0),
            u64::MAX,
            31,
        ),
    ];
    for (field, input, value, max) in cases {
        let err = encode(Layout::TWITTER, input).unwrap_err();
        assert_eq!(
            (err.kind(), err.field(), err.value()),
            (ErrorKind::OutOfRange, Some(field), Some(value.to_string()))
        );
        assert_eq!(
            err.to_string(),
            format!("{field} {value} is out of range (0..={max})")
        );
    }
}

#[test]
fn first_and_last_instant_are_accepted_and_their_neighbours_rejected() {
    assert_eq!(
        encode(Layout::TWITTER, parts(TWITTER_EPOCH, 0, 0, 0)).unwrap(),
        SnowflakeId::MIN
    );
    let before = encode(Layout::TWITTER, parts(TWITTER_EPOCH - 1, 0, 0, 0)).unwrap_err();
    assert_eq!(
        before.to_string(),
        "timestamp 1288834974656 is before the epoch 1288834974657 (valid: 1288834974657..=3487858230208)"
    );
    let after = encode(Layout::TWITTER, parts(LAST_INSTANT + 1, 0, 0, 0)).unwrap_err();
    assert_eq!(after.value(), Some((LAST_INSTANT + 1).to_string()));
    assert!(after.to_string().contains("3487858230209"));
    assert!(after.to_string().contains("3487858230208"));
    assert!(encode(Layout::TWITTER, parts(i64::MIN, 0, 0, 0)).is_err());
    assert!(encode(Layout::TWITTER, parts(i64::MAX, 0, 0, 0)).is_err());
}

#[test]
fn zero_and_the_largest_id_decode() {
    assert_eq!(
        decode(Layout::TWITTER, SnowflakeId::MIN),
        parts(TWITTER_EPOCH, 0, 0, 0)
    );
    assert_eq!(
        decode(Layout::TWITTER, SnowflakeId::from_u64(MAX_ID)),
        parts(LAST_INSTANT, 31, 31, 4095)
    );
    assert_eq!(Layout::TWITTER.max_id().as_u64(), MAX_ID);
    let above = Layout::TWITTER
        .decode(SnowflakeId::from_u64(MAX_ID + 1))
        .unwrap_err();
    assert_eq!(
        above.to_string(),
        "ID 9223372036854775808 is out of range for layout twitter (0..=9223372036854775807)"
    );
    assert_eq!(above.kind(), ErrorKind::OutOfRange);
}

#[test]
fn decimal_text_boundaries() {
    assert_eq!("0".parse::<SnowflakeId>().unwrap().as_u64(), 0);
    assert_eq!(
        "18446744073709551615"
            .parse::<SnowflakeId>()
            .unwrap()
            .as_u64(),
        u64::MAX
    );
    assert_eq!("000042".parse::<SnowflakeId>().unwrap().as_u64(), 42);

    let out_of_range = [
        "18446744073709551616",
        "99999999999999999999",
        "-1",
        "-9223372036854775808",
    ];
    for input in out_of_range {
        let err = input.parse::<SnowflakeId>().unwrap_err();
        assert_eq!(
            err.invalid_id(),
            Some(InvalidIdKind::OutOfRange),
            "{input}: {err:?}"
        );
        assert_eq!(
            err.to_string(),
            format!("ID {input} is out of range (0..=18446744073709551615)")
        );
    }

    let err = "".parse::<SnowflakeId>().unwrap_err();
    assert_eq!(
        err.to_string(),
        "ID is empty; expected a decimal integer in 0..=18446744073709551615"
    );

    for (input, character, position) in [
        ("+5", '+', 0),
        (" 5", ' ', 0),
        ("5 ", ' ', 1),
        ("12a4", 'a', 2),
        ("1_000", '_', 1),
        ("١٢", '١', 0),
        ("0x10", 'x', 1),
        ("-", '-', 0),
    ] {
        let err = input.parse::<SnowflakeId>().unwrap_err();
        assert_eq!(
            (err.invalid_id(), err.value()),
            (
                Some(InvalidIdKind::InvalidDigit {
                    character,
                    position
                }),
                Some(input.to_owned())
            ),
            "{input:?}"
        );
        assert!(
            err.to_string().contains("0..=18446744073709551615"),
            "{err}"
        );
    }
}

#[test]
fn long_bad_input_is_cut_in_the_message() {
    let input = "9".repeat(10_000);
    let message = input.parse::<SnowflakeId>().unwrap_err().to_string();
    assert!(message.len() < 200, "{message}");
    assert!(message.contains("out of range"));
}

#[test]
fn integer_conversions_are_checked() {
    assert_eq!(SnowflakeId::from(u64::MAX), SnowflakeId::MAX);
    assert_eq!(SnowflakeId::try_from(i64::MAX).unwrap().as_u64(), MAX_ID);
    assert_eq!(SnowflakeId::try_from(0i64).unwrap(), SnowflakeId::MIN);
    assert!(SnowflakeId::try_from(-1i64).is_err());
    assert!(SnowflakeId::try_from(i64::MIN).is_err());
    let id = SnowflakeId::from_u64(EXAMPLE_ID);
    assert_eq!(u64::from(id), EXAMPLE_ID);
    assert_eq!(i64::try_from(id).unwrap(), EXAMPLE_ID as i64);
    assert_eq!(
        i64::try_from(SnowflakeId::from_u64(MAX_ID)).unwrap(),
        i64::MAX
    );
    let err = i64::try_from(SnowflakeId::from_u64(MAX_ID + 1)).unwrap_err();
    assert_eq!(
        err.to_string(),
        "ID 9223372036854775808 is out of range (0..=9223372036854775807)"
    );
}

#[test]
fn ids_order_and_hash_by_value() {
    use std::collections::HashSet;
    let a = SnowflakeId::from_u64(1);
    let b = SnowflakeId::from_u64(2);
    assert!(a < b);
    let set: HashSet<_> = [a, b, SnowflakeId::from_u64(1)].into_iter().collect();
    assert_eq!(set.len(), 2);
}

#[test]
fn text_encodings_of_known_values() {
    // Values worked out by hand from each alphabet's definition.
    let cases: [(u64, Encoding, &str); 11] = [
        (0, Encoding::Hex, "0000000000000000"),
        (MAX_ID, Encoding::Hex, "7fffffffffffffff"),
        (u64::MAX, Encoding::Hex, "ffffffffffffffff"),
        (u64::MAX, Encoding::Base32, "FZZZZZZZZZZZZ"),
        (255, Encoding::Hex, "00000000000000ff"),
        (0, Encoding::Base32, "0000000000000"),
        (MAX_ID, Encoding::Base32, "7ZZZZZZZZZZZZ"),
        (32 * 10 + 31, Encoding::Base32, "00000000000AZ"),
        (0, Encoding::Base58, "1"),
        (57, Encoding::Base58, "z"),
        (58, Encoding::Base58, "21"),
    ];
    for (value, encoding, text) in cases {
        let id = SnowflakeId::from_u64(value);
        assert_eq!(id.encode(encoding).as_str(), text, "{value} in {encoding}");
        assert_eq!(
            SnowflakeId::parse(encoding, text).unwrap(),
            id,
            "{text} in {encoding}"
        );
    }
}

#[test]
fn text_encodings_accept_lenient_forms() {
    let id = SnowflakeId::from_u64(0xabc);
    for text in ["abc", "ABC", "0xabc", "0XABC", "0000abc"] {
        assert_eq!(
            SnowflakeId::parse(Encoding::Hex, text).unwrap(),
            id,
            "{text}"
        );
    }
    // Crockford: any case; I and L read as 1, O as 0.
    let one_zero = SnowflakeId::parse(Encoding::Base32, "10").unwrap();
    for text in ["10", "i0", "IO", "lo", "L0"] {
        assert_eq!(
            SnowflakeId::parse(Encoding::Base32, text).unwrap(),
            one_zero,
            "{text}"
        );
    }
}

#[test]
fn text_encodings_reject_bad_digits_and_overflow() {
    let rejected: [(Encoding, &str); 12] = [
        (Encoding::Hex, "10000000000000000"),
        (Encoding::Hex, "-1"),
        (Encoding::Hex, "0x"),
        (Encoding::Hex, "g"),
        (Encoding::Base32, "G000000000000"),
        (Encoding::Base32, "U"),
        (Encoding::Base32, "-1"),
        (Encoding::Base58, "0"),
        (Encoding::Base58, "O"),
        (Encoding::Base58, "l"),
        (Encoding::Base58, "jpXCZedGfVR"),
        (Encoding::Decimal, "18446744073709551616"),
    ];
    for (encoding, text) in rejected {
        let err = SnowflakeId::parse(encoding, text).unwrap_err();
        assert!(err.invalid_id().is_some(), "{text} in {encoding}: {err:?}");
    }
    // The largest base58 value is accepted, one more is not.
    assert_eq!(
        SnowflakeId::parse(Encoding::Base58, "jpXCZedGfVQ").unwrap(),
        SnowflakeId::MAX
    );
    for encoding in Encoding::ALL {
        assert_eq!(
            SnowflakeId::parse(encoding, "").unwrap_err().invalid_id(),
            Some(InvalidIdKind::Empty)
        );
    }
}

#[test]
fn encoding_names_round_trip() {
    for encoding in Encoding::ALL {
        assert_eq!(encoding.name().parse::<Encoding>().unwrap(), encoding);
    }
    assert!("base64".parse::<Encoding>().is_err());
}

#[test]
fn twitter_shaped_layouts_are_validated() {
    assert!(Layout::twitter_shape(0, [41, 5, 5, 12]).is_ok());
    assert!(Layout::twitter_shape(0, [63 - 12, 0, 0, 12]).is_ok());
    let rejected = [
        (0, [41, 5, 5, 11]),                    // 62 bits
        (0, [41, 5, 5, 13]),                    // 64 bits
        (0, [0, 26, 25, 12]),                   // no timestamp
        (0, [41, 11, 11, 0]),                   // no sequence
        (-1, [41, 5, 5, 12]),                   // before 1970
        (i64::MAX / 1000 - 10, [41, 5, 5, 12]), // last instant overflows
        (0, [62, 0, 0, 1]),                     // 146 million years of ms
        (0, [255, 255, 255, 1]),
    ];
    for (epoch, widths) in rejected {
        let err = Layout::twitter_shape(epoch, widths).unwrap_err();
        assert_eq!(
            err.kind(),
            ErrorKind::InvalidLayout,
            "{epoch} {widths:?}: {err:?}"
        );
    }
}

#[test]
fn layout_specs_parse_and_print() {
    assert_eq!("twitter".parse::<Layout>().unwrap(), Layout::TWITTER);
    assert_eq!("DISCORD".parse::<Layout>().unwrap(), Layout::DISCORD);
    assert_eq!("41/5/5/12".parse::<Layout>().unwrap(), Layout::TWITTER);
    assert_eq!(
        "twitter@1420070400000".parse::<Layout>().unwrap(),
        Layout::TWITTER.with_epoch(1_420_070_400_000).unwrap()
    );
    // The epoch may be written as RFC 3339: 2024-01-01 is 1704067200000.
    assert_eq!(
        "42/0/10/11@2024-01-01T00:00:00Z".parse::<Layout>().unwrap(),
        Layout::twitter_shape(1_704_067_200_000, [42, 0, 10, 11]).unwrap()
    );
    assert_eq!(
        "Discord@2015-01-01T00:00:00+00:00"
            .parse::<Layout>()
            .unwrap(),
        Layout::DISCORD
    );
    let custom: Layout = "39/0/8/16@0".parse().unwrap();
    assert_eq!(custom.ids_per_tick(), 1 << 16);
    assert_eq!(custom.node_count(), 256);
    assert_eq!(custom.to_string().parse::<Layout>().unwrap(), custom);
    for bad in [
        "",
        "snowflake",
        "41/5/5",
        "41/5/5/12/0",
        "41/5/5/x",
        "twitter@",
        "twitter@-5",
        "41/5/5/13",
        "@1",
    ] {
        assert!(bad.parse::<Layout>().is_err(), "{bad:?}");
    }
}

#[test]
fn custom_layout_encodes_with_its_own_shifts() {
    let layout = Layout::twitter_shape(1_600_000_000_000, [42, 0, 10, 11]).unwrap();
    let p = parts(1_600_000_000_123, 0, 1023, 2047);
    let id = encode(layout, p).unwrap();
    assert_eq!(id.as_u64(), 123 << 21 | 1023 << 11 | 2047);
    assert_eq!(decode(layout, id), p);
    assert!(encode(layout, parts(1_600_000_000_123, 1, 0, 0)).is_err());
}

#[test]
fn id_range_covers_exactly_the_window() {
    let from = 1_700_000_000_000;
    let to = 1_700_000_000_999;
    let range = Layout::TWITTER.id_range(from, to).unwrap();
    assert_eq!(range.start().as_u64(), formula(parts(from, 0, 0, 0)));
    assert_eq!(range.end().as_u64(), formula(parts(to, 31, 31, 4095)));
    // The neighbours just outside the window are outside the range.
    assert_eq!(
        range.start().as_u64() - 1,
        formula(parts(from - 1, 31, 31, 4095))
    );
    assert_eq!(range.end().as_u64() + 1, formula(parts(to + 1, 0, 0, 0)));
    // A one-millisecond window.
    let one = Layout::TWITTER.id_range(from, from).unwrap();
    assert_eq!(one.end().as_u64() - one.start().as_u64() + 1, 1 << 22);

    let empty = Layout::TWITTER.id_range(to, from).unwrap_err();
    assert_eq!(
        (empty.kind(), empty.value()),
        (ErrorKind::EmptyWindow, Some(to.to_string()))
    );
    assert!(Layout::TWITTER.id_range(TWITTER_EPOCH - 1, from).is_err());
    assert!(Layout::TWITTER.id_range(from, LAST_INSTANT + 1).is_err());
    let all = Layout::TWITTER
        .id_range(TWITTER_EPOCH, LAST_INSTANT)
        .unwrap();
    assert_eq!(
        (*all.start(), *all.end()),
        (SnowflakeId::MIN, Layout::TWITTER.max_id())
    );
}

#[test]
fn slots_number_nodes_datacenter_major() {
    for slot in 0..1024 {
        let node = Layout::TWITTER.node_from_slot(slot).unwrap();
        assert_eq!(node, Node::from_slot(slot));
        assert_eq!(Layout::TWITTER.node(&[slot / 32, slot % 32]).unwrap(), node);
        assert_eq!(Layout::TWITTER.slot_of(node).unwrap(), slot);
    }
    assert!(Layout::TWITTER.node_from_slot(1024).is_err());
}

#[test]
fn time_text_in_both_forms() {
    let cases = [
        ("1700000000000", 1_700_000_000_000),
        ("0", 0),
        ("-1", -1),
        ("2023-11-14T22:13:20Z", 1_700_000_000_000),
        ("2023-11-14T22:13:20.000Z", 1_700_000_000_000),
        ("2023-11-14t22:13:20z", 1_700_000_000_000),
        ("2023-11-14 22:13:20Z", 1_700_000_000_000),
        ("2023-11-14T22:13:20.1Z", 1_700_000_000_100),
        ("2023-11-14T22:13:20.123456789Z", 1_700_000_000_123),
        ("2023-11-15T03:43:20+05:30", 1_700_000_000_000),
        ("2023-11-14T17:13:20-05:00", 1_700_000_000_000),
        ("2010-11-04T01:42:54.657Z", TWITTER_EPOCH),
        ("2000-02-29T00:00:00Z", 951_782_400_000),
        ("1969-12-31T23:59:59.999Z", -1),
    ];
    for (text, ms) in cases {
        assert_eq!(parse_time(text).unwrap(), ms, "{text}");
    }
    for ms in [
        0,
        -1,
        1_700_000_000_000,
        TWITTER_EPOCH,
        LAST_INSTANT,
        951_782_400_000,
    ] {
        assert_eq!(parse_time(&format_time(ms).to_string()).unwrap(), ms);
    }
}

#[test]
fn bad_time_text_is_rejected_with_the_reason() {
    let rejected = [
        "",
        "-",
        "1e12",
        "99999999999999999999",
        "2023-11-14",
        "2023-11-14T22:13:20",
        "2023-13-01T00:00:00Z",
        "2023-02-29T00:00:00Z",
        "1900-02-29T00:00:00Z",
        "2023-11-14T24:00:00Z",
        "2023-11-14T22:60:00Z",
        "2023-11-14T22:13:60Z",
        "2023-11-14T22:13:20.Z",
        "2023-11-14T22:13:20+24:00",
        "2023-11-14T22:13:20+0100",
        "2023-11-14T22:13:20Z ",
        "23-11-14T22:13:20Z",
    ];
    for text in rejected {
        let err = parse_time(text).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::InvalidText, "{text:?}: {err:?}");
        assert!(err.to_string().contains("RFC 3339"), "{err}");
    }
}
