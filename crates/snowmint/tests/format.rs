//! The format: encoding, decoding, text forms and their boundaries, checked
//! against the specification's numbers and against the formula written out
//! independently here.

use snowmint::{
    Encoding, Error, Field, InvalidIdKind, Layout, Node, Parts, SnowflakeId, format_time,
    parse_time,
};

const TWITTER_EPOCH: i64 = 1_288_834_974_657;
const MAX_ID: u64 = (1 << 63) - 1;
const LAST_INSTANT: i64 = TWITTER_EPOCH + (1 << 41) - 1;

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
        Layout::TWITTER.encode(EXAMPLE).unwrap().as_u64(),
        EXAMPLE_ID
    );
    assert_eq!(formula(EXAMPLE), EXAMPLE_ID);
}

#[test]
fn worked_example_decodes_to_the_specified_parts() {
    let id: SnowflakeId = "1724551110457221119".parse().unwrap();
    assert_eq!(Layout::TWITTER.decode(id), EXAMPLE);
    // The intermediate values the specification lists.
    assert_eq!(EXAMPLE_ID & 0xfff, 4095);
    assert_eq!(EXAMPLE_ID >> 22, 411_165_025_343);
}

#[test]
fn twitter_is_the_default_layout_with_the_specified_widths() {
    let layout = Layout::default();
    assert_eq!(layout, Layout::TWITTER);
    assert_eq!(layout.epoch_ms(), TWITTER_EPOCH);
    assert_eq!(
        (
            layout.timestamp_bits(),
            layout.datacenter_bits(),
            layout.machine_bits(),
            layout.sequence_bits()
        ),
        (41, 5, 5, 12)
    );
    assert_eq!(
        (
            layout.timestamp_shift(),
            layout.datacenter_shift(),
            layout.machine_shift()
        ),
        (22, 17, 12)
    );
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
    // A real Discord ID (from Discord's developer documentation): created
    // 2016-04-30T11:18:25.796Z.
    let id: SnowflakeId = "175928847299117063".parse().unwrap();
    let p = Layout::DISCORD.decode(id);
    assert_eq!(
        format_time(p.timestamp_ms).to_string(),
        "2016-04-30T11:18:25.796Z"
    );
    assert_eq!((p.datacenter, p.machine, p.sequence), (1, 0, 7));
}

#[test]
fn every_field_at_its_maximum_and_one_past() {
    let max = parts(LAST_INSTANT, 31, 31, 4095);
    assert_eq!(Layout::TWITTER.encode(max).unwrap().as_u64(), MAX_ID);
    assert_eq!(formula(max), MAX_ID);

    let cases = [
        (Field::Datacenter, parts(TWITTER_EPOCH, 32, 0, 0), 32, 31),
        (Field::Machine, parts(TWITTER_EPOCH, 0, 32, 0), 32, 31),
        (
            Field::Sequence,
            parts(TWITTER_EPOCH, 0, 0, 4096),
            4096,
            4095,
        ),
        (
            Field::Datacenter,
            parts(TWITTER_EPOCH, u64::MAX, 0, 0),
            u64::MAX,
            31,
        ),
    ];
    for (field, input, value, max) in cases {
        let err = Layout::TWITTER.encode(input).unwrap_err();
        assert_eq!(err, Error::FieldOutOfRange { field, value, max });
        assert_eq!(
            err.to_string(),
            format!("{field} {value} is out of range (0..={max})")
        );
    }
}

#[test]
fn first_and_last_instant_are_accepted_and_their_neighbours_rejected() {
    assert_eq!(
        Layout::TWITTER
            .encode(parts(TWITTER_EPOCH, 0, 0, 0))
            .unwrap(),
        SnowflakeId::MIN
    );
    let before = Layout::TWITTER
        .encode(parts(TWITTER_EPOCH - 1, 0, 0, 0))
        .unwrap_err();
    assert_eq!(
        before.to_string(),
        "timestamp 1288834974656 is before the epoch 1288834974657 (valid: 1288834974657..=3487858230208)"
    );
    let after = Layout::TWITTER
        .encode(parts(LAST_INSTANT + 1, 0, 0, 0))
        .unwrap_err();
    assert!(
        matches!(after, Error::TimestampPastEnd { timestamp_ms, .. } if timestamp_ms == LAST_INSTANT + 1)
    );
    assert!(after.to_string().contains("3487858230209"));
    assert!(after.to_string().contains("3487858230208"));
    assert!(Layout::TWITTER.encode(parts(i64::MIN, 0, 0, 0)).is_err());
    assert!(Layout::TWITTER.encode(parts(i64::MAX, 0, 0, 0)).is_err());
}

#[test]
fn zero_and_the_largest_id_decode() {
    assert_eq!(
        Layout::TWITTER.decode(SnowflakeId::MIN),
        parts(TWITTER_EPOCH, 0, 0, 0)
    );
    assert_eq!(
        Layout::TWITTER.decode(SnowflakeId::MAX),
        parts(LAST_INSTANT, 31, 31, 4095)
    );
}

#[test]
fn decimal_text_boundaries() {
    assert_eq!("0".parse::<SnowflakeId>().unwrap().as_u64(), 0);
    assert_eq!(
        "9223372036854775807"
            .parse::<SnowflakeId>()
            .unwrap()
            .as_u64(),
        MAX_ID
    );
    assert_eq!("000042".parse::<SnowflakeId>().unwrap().as_u64(), 42);

    let out_of_range = [
        "9223372036854775808",
        "18446744073709551615",
        "18446744073709551616",
        "-1",
        "-9223372036854775808",
    ];
    for input in out_of_range {
        let err = input.parse::<SnowflakeId>().unwrap_err();
        assert!(
            matches!(
                err,
                Error::InvalidId {
                    kind: InvalidIdKind::OutOfRange,
                    ..
                }
            ),
            "{input}: {err:?}"
        );
        assert_eq!(
            err.to_string(),
            format!("ID {input} is out of range (0..=9223372036854775807)")
        );
    }

    let err = "".parse::<SnowflakeId>().unwrap_err();
    assert_eq!(
        err.to_string(),
        "ID is empty; expected a decimal integer in 0..=9223372036854775807"
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
            err,
            Error::InvalidId {
                input: input.to_owned(),
                encoding: Encoding::Decimal,
                kind: InvalidIdKind::InvalidDigit {
                    character,
                    position
                }
            },
            "{input:?}"
        );
        assert!(err.to_string().contains("0..=9223372036854775807"), "{err}");
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
    assert_eq!(SnowflakeId::try_from(MAX_ID).unwrap().as_u64(), MAX_ID);
    assert!(SnowflakeId::try_from(MAX_ID + 1).is_err());
    assert!(SnowflakeId::try_from(u64::MAX).is_err());
    assert_eq!(SnowflakeId::try_from(i64::MAX).unwrap().as_u64(), MAX_ID);
    assert_eq!(SnowflakeId::try_from(0i64).unwrap(), SnowflakeId::MIN);
    assert!(SnowflakeId::try_from(-1i64).is_err());
    assert!(SnowflakeId::try_from(i64::MIN).is_err());
    let id = SnowflakeId::from_u64(EXAMPLE_ID).unwrap();
    assert_eq!(u64::from(id), EXAMPLE_ID);
    assert_eq!(i64::from(id), EXAMPLE_ID as i64);
}

#[test]
fn ids_order_and_hash_by_value() {
    use std::collections::HashSet;
    let a = SnowflakeId::from_u64(1).unwrap();
    let b = SnowflakeId::from_u64(2).unwrap();
    assert!(a < b);
    let set: HashSet<_> = [a, b, SnowflakeId::from_u64(1).unwrap()]
        .into_iter()
        .collect();
    assert_eq!(set.len(), 2);
}

#[test]
fn text_encodings_of_known_values() {
    // Values worked out by hand from each alphabet's definition.
    let cases: [(u64, Encoding, &str); 9] = [
        (0, Encoding::Hex, "0000000000000000"),
        (MAX_ID, Encoding::Hex, "7fffffffffffffff"),
        (255, Encoding::Hex, "00000000000000ff"),
        (0, Encoding::Base32, "0000000000000"),
        (MAX_ID, Encoding::Base32, "7ZZZZZZZZZZZZ"),
        (32 * 10 + 31, Encoding::Base32, "00000000000AZ"),
        (0, Encoding::Base58, "1"),
        (57, Encoding::Base58, "z"),
        (58, Encoding::Base58, "21"),
    ];
    for (value, encoding, text) in cases {
        let id = SnowflakeId::from_u64(value).unwrap();
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
    let id = SnowflakeId::from_u64(0xabc).unwrap();
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
        (Encoding::Hex, "8000000000000000"),
        (Encoding::Hex, "10000000000000000"),
        (Encoding::Hex, "-1"),
        (Encoding::Hex, "0x"),
        (Encoding::Hex, "g"),
        (Encoding::Base32, "8000000000000"),
        (Encoding::Base32, "U"),
        (Encoding::Base32, "-1"),
        (Encoding::Base58, "0"),
        (Encoding::Base58, "O"),
        (Encoding::Base58, "l"),
        (Encoding::Base58, "NQm6nKp8qFD"),
    ];
    for (encoding, text) in rejected {
        let err = SnowflakeId::parse(encoding, text).unwrap_err();
        assert!(
            matches!(err, Error::InvalidId { .. }),
            "{text} in {encoding}: {err:?}"
        );
    }
    // The largest base58 value is accepted, one more is not.
    assert_eq!(
        SnowflakeId::parse(Encoding::Base58, "NQm6nKp8qFC").unwrap(),
        SnowflakeId::MAX
    );
    for encoding in Encoding::ALL {
        assert!(matches!(
            SnowflakeId::parse(encoding, ""),
            Err(Error::InvalidId {
                kind: InvalidIdKind::Empty,
                ..
            })
        ));
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
fn layouts_are_validated() {
    assert!(Layout::new(0, 41, 5, 5, 12).is_ok());
    assert!(Layout::new(0, 63 - 12, 0, 0, 12).is_ok());
    let rejected = [
        (0, 41, 5, 5, 11),             // 62 bits
        (0, 41, 5, 5, 13),             // 64 bits
        (0, 0, 26, 25, 12),            // no timestamp
        (0, 41, 11, 11, 0),            // no sequence
        (-1, 41, 5, 5, 12),            // before 1970
        (i64::MAX - 10, 41, 5, 5, 12), // last instant overflows
        (0, 255, 255, 255, 1),
    ];
    for (epoch, t, d, m, s) in rejected {
        let err = Layout::new(epoch, t, d, m, s).unwrap_err();
        assert!(
            matches!(err, Error::InvalidLayout { .. }),
            "{epoch} {t}/{d}/{m}/{s}: {err:?}"
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
        Layout::DISCORD
    );
    // The epoch may be written as RFC 3339: 2024-01-01 is 1704067200000.
    assert_eq!(
        "42/0/10/11@2024-01-01T00:00:00Z".parse::<Layout>().unwrap(),
        Layout::new(1_704_067_200_000, 42, 0, 10, 11).unwrap()
    );
    assert_eq!(
        "Discord@2015-01-01T00:00:00+00:00"
            .parse::<Layout>()
            .unwrap(),
        Layout::DISCORD
    );
    let custom: Layout = "39/0/8/16@0".parse().unwrap();
    assert_eq!(custom.ids_per_ms(), 1 << 16);
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
    let layout = Layout::new(1_600_000_000_000, 42, 0, 10, 11).unwrap();
    let p = parts(1_600_000_000_123, 0, 1023, 2047);
    let id = layout.encode(p).unwrap();
    assert_eq!(id.as_u64(), 123 << 21 | 1023 << 11 | 2047);
    assert_eq!(layout.decode(id), p);
    assert!(layout.encode(parts(1_600_000_000_123, 1, 0, 0)).is_err());
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

    assert_eq!(
        Layout::TWITTER.id_range(to, from).unwrap_err(),
        Error::EmptyWindow {
            from_ms: to,
            to_ms: from
        }
    );
    assert!(Layout::TWITTER.id_range(TWITTER_EPOCH - 1, from).is_err());
    assert!(Layout::TWITTER.id_range(from, LAST_INSTANT + 1).is_err());
    let all = Layout::TWITTER
        .id_range(TWITTER_EPOCH, LAST_INSTANT)
        .unwrap();
    assert_eq!(
        (*all.start(), *all.end()),
        (SnowflakeId::MIN, SnowflakeId::MAX)
    );
}

#[test]
fn slots_number_nodes_datacenter_major() {
    for slot in 0..1024 {
        let node = Layout::TWITTER.node_from_slot(slot).unwrap();
        assert_eq!(
            node,
            Node {
                datacenter: slot / 32,
                machine: slot % 32
            }
        );
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
        assert!(
            matches!(err, Error::InvalidTime { .. }),
            "{text:?}: {err:?}"
        );
        assert!(err.to_string().contains("RFC 3339"), "{err}");
    }
}
