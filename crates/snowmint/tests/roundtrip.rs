//! Property tests: every layout of every shape, every preset and every
//! encoding round-trips exactly.

use proptest::prelude::*;
use snowmint::{Encoding, Layout, Parts, Role, SnowflakeId, Unit, format_time, parse_time};

/// Any valid layout: 1 to 8 fields in any order, exactly one time field,
/// at most one sequence field, node and opaque fields, widths adding up to
/// at most 64 (63, 64 and 53 often), any unit from 1 µs to 1 s, and an
/// epoch that leaves room for the time field.
fn any_layout() -> impl Strategy<Value = Layout> {
    let units = prop_oneof![
        Just(1u32),
        Just(1000),
        Just(10_000),
        Just(1_000_000),
        1u32..=1_000_000,
    ];
    let totals = prop_oneof![Just(63u32), Just(64), Just(53), 1u32..=64];
    (
        1usize..=8,
        totals,
        units,
        0i64..=4_000_000_000_000,
        any::<u64>(),
    )
        .prop_filter_map("a valid layout", |(count, total, unit, epoch, seed)| {
            let mut rng = seed;
            let mut next = move |n: u64| {
                rng ^= rng << 13;
                rng ^= rng >> 7;
                rng ^= rng << 17;
                rng % n.max(1)
            };
            let time_at = next(count as u64) as usize;
            let sequence_at = next(count as u64 + 1) as usize; // == count: none
            // Cut `total` into `count` widths; the time field gets at least 1.
            let mut widths = vec![0u8; count];
            widths[time_at] = 1;
            for _ in 1..total {
                let at = next(count as u64) as usize;
                widths[at] += 1;
            }
            if sequence_at < count && sequence_at != time_at && widths[sequence_at] == 0 {
                widths[sequence_at] = 1;
            }
            let names: Vec<String> = (0..count).map(|i| format!("f{i}")).collect();
            let fields: Vec<(&str, Role, u8)> = (0..count)
                .map(|i| {
                    let role = if i == time_at {
                        Role::Time
                    } else if i == sequence_at {
                        Role::Sequence
                    } else if next(4) == 0 {
                        Role::Opaque
                    } else {
                        Role::Node
                    };
                    (names[i].as_str(), role, widths[i])
                })
                .collect();
            Layout::from_fields(epoch, Unit::from_micros(unit).ok()?, &fields).ok()
        })
}

fn any_preset() -> impl Strategy<Value = Layout> {
    prop::sample::select(
        Layout::presets()
            .iter()
            .map(|p| p.layout)
            .collect::<Vec<_>>(),
    )
}

fn any_encoding() -> impl Strategy<Value = Encoding> {
    prop::sample::select(Encoding::ALL.to_vec())
}

fn any_id() -> impl Strategy<Value = SnowflakeId> {
    any::<u64>().prop_map(SnowflakeId::from_u64)
}

/// An ID of `layout`: any value up to its largest.
fn id_in(layout: Layout) -> impl Strategy<Value = SnowflakeId> {
    (0..=layout.max_id().as_u64()).prop_map(SnowflakeId::from_u64)
}

/// Parts drawn inside a layout's ranges, field by field.
fn parts_in(layout: Layout) -> impl Strategy<Value = Parts> {
    let maxima: Vec<u64> = layout.fields().iter().map(|f| f.max()).collect();
    maxima
        .into_iter()
        .map(|max| 0..=max)
        .collect::<Vec<_>>()
        .prop_map(move |values| {
            let mut parts = layout.parts_at(layout.epoch_ms()).unwrap();
            for (field, value) in layout.fields().iter().zip(values) {
                parts.set(field.name(), value).unwrap();
            }
            parts
        })
}

/// The four fields of a Twitter ID.
fn twitter(parts: &Parts) -> (i64, u64, u64, u64) {
    let field = |name| parts.get(name).unwrap();
    (
        parts.time_ms(),
        field("datacenter"),
        field("machine"),
        field("sequence"),
    )
}

proptest! {
    #[test]
    fn every_id_of_any_layout_decodes_and_encodes_back(
        (layout, id) in any_layout().prop_flat_map(|l| (Just(l), id_in(l)))
    ) {
        let parts = layout.decode(id).unwrap();
        prop_assert_eq!(parts.id(), id);
        prop_assert_eq!(layout.timestamp_us(id), parts.time_us());
        prop_assert_eq!(layout.node_of(id), parts.node());
        let mut rebuilt = layout.parts_at_us(parts.time_us()).unwrap();
        for (field, value) in parts.values() {
            rebuilt.set(field.name(), value).unwrap();
        }
        prop_assert_eq!(rebuilt, parts);
    }

    #[test]
    fn ids_above_a_layout_do_not_decode(layout in any_layout(), id in any_id()) {
        prop_assert_eq!(layout.decode(id).is_ok(), id <= layout.max_id());
    }

    #[test]
    fn every_valid_parts_encode_and_decode_back(
        (layout, parts) in any_layout().prop_flat_map(|l| (Just(l), parts_in(l)))
    ) {
        let id = parts.id();
        prop_assert!(id <= layout.max_id());
        prop_assert_eq!(layout.decode(id).unwrap(), parts);
        prop_assert_eq!(layout.timestamp_us(id), parts.time_us());
    }

    #[test]
    fn every_layout_reads_back_from_its_text(layout in any_layout()) {
        prop_assert_eq!(layout.spec().parse::<Layout>().unwrap(), layout);
        prop_assert_eq!(layout.to_string().parse::<Layout>().unwrap(), layout);
    }

    #[test]
    fn a_node_is_its_node_fields_in_order(
        (layout, id) in any_layout().prop_flat_map(|l| (Just(l), id_in(l)))
    ) {
        let node = layout.node_of(id);
        let values: Vec<u64> = layout.node_values(node).map(|(_, v)| v).collect();
        prop_assert_eq!(layout.node(&values).unwrap(), node);
        prop_assert_eq!(layout.slot_of(node).unwrap(), node.slot());
        prop_assert!(node.slot() < layout.node_count() || layout.node_count() == u64::MAX);
        let parts = layout.decode(id).unwrap();
        for (field, value) in layout.node_values(node) {
            prop_assert_eq!(parts.get(field.name()), Some(value));
        }
    }

    #[test]
    fn every_preset_round_trips(
        (layout, id) in any_preset().prop_flat_map(|l| (Just(l), id_in(l)))
    ) {
        let parts = layout.decode(id).unwrap();
        prop_assert_eq!(parts.id(), id);
        prop_assert_eq!(layout.spec().parse::<Layout>().unwrap(), layout);
        prop_assert_eq!(layout.to_string().parse::<Layout>().unwrap(), layout);
    }

    #[test]
    fn twitter_encoding_matches_the_formula(parts in parts_in(Layout::TWITTER)) {
        let (ms, datacenter, machine, sequence) = twitter(&parts);
        let expected = ((ms - 1_288_834_974_657) as u64) << 22
            | datacenter << 17
            | machine << 12
            | sequence;
        prop_assert_eq!(parts.id().as_u64(), expected);
    }

    #[test]
    fn encoding_preserves_order(a in parts_in(Layout::TWITTER), b in parts_in(Layout::TWITTER)) {
        prop_assert_eq!(a.id().cmp(&b.id()), twitter(&a).cmp(&twitter(&b)));
    }

    #[test]
    fn every_encoding_round_trips(id in any_id(), encoding in any_encoding()) {
        let text = id.encode(encoding);
        prop_assert_eq!(SnowflakeId::parse(encoding, text.as_str()).unwrap(), id);
        prop_assert_eq!(text.to_string(), text.as_str());
    }

    #[test]
    fn decimal_matches_the_standard_library(id in any_id()) {
        prop_assert_eq!(id.to_string(), id.as_u64().to_string());
        prop_assert_eq!(id.encode(Encoding::Decimal).to_string(), id.as_u64().to_string());
        prop_assert_eq!(id.to_string().parse::<SnowflakeId>().unwrap(), id);
    }

    #[test]
    fn hex_matches_the_standard_library(id in any_id()) {
        prop_assert_eq!(id.encode(Encoding::Hex).to_string(), format!("{:016x}", id.as_u64()));
    }

    #[test]
    fn padded_encodings_sort_like_the_ids(a in any_id(), b in any_id()) {
        for encoding in [Encoding::Hex, Encoding::Base32] {
            let (x, y) = (a.encode(encoding), b.encode(encoding));
            prop_assert_eq!(x.as_str().cmp(y.as_str()), a.cmp(&b));
        }
    }

    #[test]
    fn numbers_above_64_bits_are_rejected_in_every_encoding(
        value in any::<u64>(), encoding in any_encoding()
    ) {
        // One more digit after any value above 2^64 / radix, or after the
        // largest value, passes 2^64-1.
        let big = value.max(u64::MAX / 10 + 1);
        let text = format!("{}{}", SnowflakeId::from_u64(big).encode(encoding), match encoding {
            Encoding::Base58 => "1",
            _ => "0",
        });
        prop_assert!(SnowflakeId::parse(encoding, &text).is_err(), "{} accepted", text);
    }

    #[test]
    fn no_text_makes_a_parser_panic(text in ".{0,30}", encoding in any_encoding()) {
        let _ = SnowflakeId::parse(encoding, &text);
        let _ = parse_time(&text);
        let _ = text.parse::<Layout>();
    }

    #[test]
    fn time_text_round_trips(ms in -62_135_596_800_000i64..=253_402_300_799_999) {
        // From 0001-01-01 to 9999-12-31: the RFC 3339 range.
        prop_assert_eq!(parse_time(&format_time(ms).to_string()).unwrap(), ms);
    }

    #[test]
    fn window_range_brackets_every_id_of_the_window(
        layout in prop::sample::select(vec![Layout::TWITTER, Layout::SONYFLAKE, Layout::BAIDU, Layout::DISCORD]),
        from_offset in 0i64..2_000_000_000_000, len in 0i64..100_000, seed in any::<u64>(),
    ) {
        // Anywhere in the layout's span, with room for the window and the
        // times around it.
        let span = layout.last_instant_ms() - layout.epoch_ms() - 300_000;
        let from = layout.epoch_ms() + 100_000 + from_offset % span;
        let to = from + len;
        let range = layout.id_range(from, to).unwrap();
        // An ID of a random time near the window, with random low bits.
        let time = from - 50_000 + (seed % 200_000) as i64;
        let mut parts = layout.parts_at(time).unwrap();
        for field in layout.fields().iter().filter(|f| f.role() != Role::Time) {
            parts.set(field.name(), seed.rotate_left(7) & field.max()).unwrap();
        }
        // Inside when its tick is the window's, or after.
        let inside = layout.timestamp_offset(from).unwrap() <= parts.ticks()
            && parts.ticks() <= layout.timestamp_offset(to).unwrap();
        prop_assert_eq!(range.contains(&parts.id()), inside);
    }
}

#[cfg(feature = "serde")]
mod serde_form {
    use super::*;

    proptest! {
        #[test]
        fn serializes_as_a_string_and_reads_strings_and_numbers(id in any_id()) {
            let json = serde_json::to_string(&id).unwrap();
            prop_assert_eq!(&json, &format!("\"{}\"", id.as_u64()));
            prop_assert_eq!(serde_json::from_str::<SnowflakeId>(&json).unwrap(), id);
            prop_assert_eq!(serde_json::from_str::<SnowflakeId>(&id.as_u64().to_string()).unwrap(), id);
        }
    }

    #[test]
    fn rejects_out_of_range_numbers_and_bad_strings() {
        for bad in [
            "-1",
            "18446744073709551616",
            "\"-1\"",
            "\"abc\"",
            "\"\"",
            "1.5",
            "null",
            "[]",
        ] {
            assert!(serde_json::from_str::<SnowflakeId>(bad).is_err(), "{bad}");
        }
    }

    /// Encodings are written by name and read as `FromStr` reads them.
    #[test]
    fn encodings_by_name() {
        for encoding in Encoding::ALL {
            let json = serde_json::to_string(&encoding).unwrap();
            assert_eq!(json, format!("\"{}\"", encoding.name()));
            assert_eq!(serde_json::from_str::<Encoding>(&json).unwrap(), encoding);
        }
        assert_eq!(
            serde_json::from_str::<Encoding>("\"HEX\"").unwrap(),
            Encoding::Hex
        );
        assert_eq!(
            serde_json::from_str::<Encoding>("\"dec\"").unwrap(),
            Encoding::Decimal
        );
        let err = serde_json::from_str::<Encoding>("\"base64\"").unwrap_err();
        assert!(
            err.to_string()
                .starts_with(&"base64".parse::<Encoding>().unwrap_err().to_string()),
            "{err}"
        );
    }
}
