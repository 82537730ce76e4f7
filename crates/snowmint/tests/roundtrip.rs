//! Property tests: every layout and every encoding round-trips exactly.

use proptest::prelude::*;
use snowmint::{Encoding, Layout, Parts, SnowflakeId, format_time, parse_time};

/// Any valid layout: four widths adding up to 63 with non-empty timestamp
/// and sequence fields, and an epoch that leaves room for the timestamp.
fn any_layout() -> impl Strategy<Value = Layout> {
    (1u8..=62, 0u8..=61, 0u8..=61, 0i64..=4_000_000_000_000).prop_filter_map(
        "widths must add up to 63",
        |(t, d, m, epoch)| {
            let s = 63i16 - i16::from(t) - i16::from(d) - i16::from(m);
            let s = u8::try_from(s).ok().filter(|&s| s >= 1)?;
            Layout::new(epoch, t, d, m, s).ok()
        },
    )
}

fn any_encoding() -> impl Strategy<Value = Encoding> {
    prop::sample::select(Encoding::ALL.to_vec())
}

fn any_id() -> impl Strategy<Value = SnowflakeId> {
    (0..=SnowflakeId::MAX.as_u64()).prop_map(|v| SnowflakeId::from_u64(v).unwrap())
}

/// Fields drawn inside a layout's ranges.
fn parts_in(layout: Layout) -> impl Strategy<Value = Parts> {
    let max = |bits: u8| (1u64 << bits) - 1;
    (
        0..=max(layout.timestamp_bits()),
        0..=max(layout.datacenter_bits()),
        0..=max(layout.machine_bits()),
        0..=max(layout.sequence_bits()),
    )
        .prop_map(move |(offset, datacenter, machine, sequence)| Parts {
            timestamp_ms: layout.epoch_ms() + offset as i64,
            datacenter,
            machine,
            sequence,
        })
}

proptest! {
    #[test]
    fn every_id_decodes_and_encodes_back(layout in any_layout(), id in any_id()) {
        let parts = layout.decode(id);
        prop_assert_eq!(layout.encode(parts).unwrap(), id);
    }

    #[test]
    fn every_valid_parts_encode_and_decode_back(
        (layout, parts) in any_layout().prop_flat_map(|l| (Just(l), parts_in(l)))
    ) {
        let id = layout.encode(parts).unwrap();
        prop_assert_eq!(layout.decode(id), parts);
        prop_assert_eq!(layout.timestamp_ms(id), parts.timestamp_ms);
    }

    #[test]
    fn twitter_encoding_matches_the_formula(
        parts in parts_in(Layout::TWITTER)
    ) {
        let expected = ((parts.timestamp_ms - 1_288_834_974_657) as u64) << 22
            | parts.datacenter << 17
            | parts.machine << 12
            | parts.sequence;
        prop_assert_eq!(Layout::TWITTER.encode(parts).unwrap().as_u64(), expected);
    }

    #[test]
    fn encoding_preserves_order(a in parts_in(Layout::TWITTER), b in parts_in(Layout::TWITTER)) {
        let key = |p: &Parts| (p.timestamp_ms, p.datacenter, p.machine, p.sequence);
        let ids = (Layout::TWITTER.encode(a).unwrap(), Layout::TWITTER.encode(b).unwrap());
        prop_assert_eq!(ids.0.cmp(&ids.1), key(&a).cmp(&key(&b)));
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
    fn ids_above_the_range_are_rejected_in_every_encoding(
        value in (1u64 << 63)..=u64::MAX, encoding in any_encoding()
    ) {
        let text = match encoding {
            Encoding::Decimal => value.to_string(),
            Encoding::Hex => format!("{value:x}"),
            // No standard formatter for these: one more digit after the
            // largest ID multiplies it past 2^63-1.
            Encoding::Base32 => format!("{}0", SnowflakeId::MAX.encode(Encoding::Base32)),
            Encoding::Base58 => format!("{}1", SnowflakeId::MAX.encode(Encoding::Base58)),
        };
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
        from in 1_288_834_974_657i64..3_000_000_000_000, len in 0i64..100_000, id_parts in parts_in(Layout::TWITTER)
    ) {
        let to = from + len;
        let range = Layout::TWITTER.id_range(from, to).unwrap();
        let id = Layout::TWITTER.encode(id_parts).unwrap();
        let inside = (from..=to).contains(&id_parts.timestamp_ms);
        prop_assert_eq!(range.contains(&id), inside);
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
            "9223372036854775808",
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
