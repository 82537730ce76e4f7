//! The inspector end to end: every shape of input gives the expected top
//! reading, the ranking says why, and hostile text stays cheap and never
//! panics.

use proptest::prelude::*;
use snowmint::inspect::{Inspector, Plausibility, Token};

/// 2025-06-15T15:06:40Z: "now" for every test.
const NOW_MS: i64 = 1_750_000_000_000;

fn tokens(text: &str) -> Vec<Token> {
    Inspector::new(NOW_MS).inspect(text).collect()
}

/// The one token of `text`: its top reading's family, time and rank.
fn top(text: &str) -> (String, String, Plausibility) {
    let tokens = tokens(text);
    assert_eq!(tokens.len(), 1, "{text}: {tokens:#?}");
    let best = tokens[0]
        .best()
        .unwrap_or_else(|| panic!("{text}: no reading"));
    let time = best.time().map(|t| t.to_string()).unwrap_or_default();
    (best.family().to_owned(), time, best.plausibility())
}

#[test]
fn every_shape_of_input_has_its_top_reading() {
    use Plausibility::{Pinned, Plausible};
    // Times checked against each family's published layout by hand (the
    // vectors file holds the systematic cross-checks).
    let cases: &[(&str, &str, &str, Plausibility)] = &[
        // Discord's documentation: 175928847299117063 is 2016-04-30T11:18:25.796Z.
        (
            "<@175928847299117063>",
            "discord",
            "2016-04-30T11:18:25.796Z",
            Pinned,
        ),
        (
            "<@!175928847299117063>",
            "discord",
            "2016-04-30T11:18:25.796Z",
            Pinned,
        ),
        (
            "<#175928847299117063>",
            "discord",
            "2016-04-30T11:18:25.796Z",
            Pinned,
        ),
        (
            "<@&175928847299117063>",
            "discord",
            "2016-04-30T11:18:25.796Z",
            Pinned,
        ),
        (
            "<:snow:175928847299117063>",
            "discord",
            "2016-04-30T11:18:25.796Z",
            Pinned,
        ),
        (
            "<a:snow:175928847299117063>",
            "discord",
            "2016-04-30T11:18:25.796Z",
            Pinned,
        ),
        (
            "</ping:175928847299117063>",
            "discord",
            "2016-04-30T11:18:25.796Z",
            Pinned,
        ),
        (
            "<t:1462015105:R>",
            "discord-timestamp",
            "2016-04-30T11:18:25Z",
            Pinned,
        ),
        (
            "https://discord.com/channels/@me/175928847299117063",
            "discord",
            "2016-04-30T11:18:25.796Z",
            Pinned,
        ),
        (
            "https://cdn.discordapp.com/emojis/175928847299117063.png?size=48",
            "discord",
            "2016-04-30T11:18:25.796Z",
            Pinned,
        ),
        // 1724551110457221119 is DESIGN.md's worked example: 2023-11-14T22:13:20Z.
        (
            "https://x.com/jack/status/1724551110457221119",
            "twitter",
            "2023-11-14T22:13:20.000Z",
            Pinned,
        ),
        (
            "1724551110457221119",
            "twitter",
            "2023-11-14T22:13:20.000Z",
            Plausible,
        ),
        (
            "\"1724551110457221119\"",
            "twitter",
            "2023-11-14T22:13:20.000Z",
            Plausible,
        ),
        (
            "0x17eed6190fcedfff",
            "twitter",
            "2023-11-14T22:13:20.000Z",
            Plausible,
        ),
        // The ULID spec's example.
        (
            "01ARZ3NDEKTSV4RRFFQ69G5FAV",
            "ulid",
            "2016-07-30T23:54:10.259Z",
            Plausible,
        ),
        // RFC 9562's examples, one instant as versions 1, 6 and 7.
        (
            "C232AB00-9414-11EC-B3C8-9F6BDECED846",
            "uuid-v1",
            "2022-02-22T19:22:22.0000000Z",
            Plausible,
        ),
        (
            "1EC9414C-232A-6B00-B3C8-9F6BDECED846",
            "uuid-v6",
            "2022-02-22T19:22:22.0000000Z",
            Plausible,
        ),
        (
            "017F22E2-79B0-7CC3-98C4-DC0C0C07398F",
            "uuid-v7",
            "2022-02-22T19:22:22.000Z",
            Plausible,
        ),
        (
            "urn:uuid:017f22e2-79b0-7cc3-98c4-dc0c0c07398f",
            "uuid-v7",
            "2022-02-22T19:22:22.000Z",
            Plausible,
        ),
        // MongoDB's manual.
        (
            "ObjectId(\"507f1f77bcf86cd799439011\")",
            "objectid",
            "2012-10-17T21:13:27Z",
            Plausible,
        ),
        // Segment's README.
        (
            "0ujtsYcgvSTl8PAuAdqWYSMnLOv",
            "ksuid",
            "2017-10-10T04:00:47Z",
            Plausible,
        ),
        // The AT Protocol's TID specification.
        (
            "https://bsky.app/profile/jay.bsky.team/post/3jzfcijpj2z2a",
            "tid",
            "2023-06-30T15:03:01.887007Z",
            Pinned,
        ),
        (
            "at://did:plc:44ybard66vv44zksje25o7dz/app.bsky.feed.post/3jzfcijpj2z2a",
            "tid",
            "2023-06-30T15:03:01.887007Z",
            Pinned,
        ),
        (
            "https://misskey.io/notes/9gkl7xu1f4",
            "misskey-aid",
            "2023-06-29T10:49:20.137Z",
            Pinned,
        ),
        (
            "9gkl7xu1abcd0001",
            "misskey-aidx",
            "2023-06-29T10:49:20.137Z",
            Plausible,
        ),
        // tsid-creator's README.
        (
            "01226N0640J7Q",
            "tsid",
            "2020-04-15T20:22:07.665Z",
            Plausible,
        ),
    ];
    for &(text, family, time, rank) in cases {
        assert_eq!(
            top(text),
            (family.to_owned(), time.to_owned(), rank),
            "{text}"
        );
    }
}

#[test]
fn a_pre_snowflake_tweet_holds_no_time() {
    let (family, time, rank) = top("https://twitter.com/jack/status/20");
    assert_eq!(
        (family.as_str(), time.as_str(), rank),
        ("twitter", "", Plausibility::Pinned)
    );
    let token = &tokens("https://twitter.com/jack/status/20")[0];
    assert!(
        token.candidates()[0].why().contains("before 2010-11-04"),
        "{token:?}"
    );
}

#[test]
fn discord_ranks_above_twitter_only_when_twitter_is_implausible() {
    // A Discord ID of 2016 reads as a Twitter ID of 2012: both plausible,
    // Twitter first as the default family.
    let families = |text: &str| -> Vec<(String, Plausibility)> {
        tokens(text)[0]
            .candidates()
            .iter()
            .map(|r| (r.family().to_owned(), r.plausibility()))
            .collect()
    };
    // (The other presets follow, plausible or not by their own epochs.)
    assert_eq!(
        families("175928847299117063")[..2],
        [
            ("twitter".to_owned(), Plausibility::Plausible),
            ("discord".to_owned(), Plausibility::Plausible)
        ]
    );
    // Read as Twitter, a Discord ID is always later than Twitter's epoch
    // (Twitter's epoch is the earlier), so Twitter's reading of it turns
    // implausible only where it holds no time (below Snowflake's first ID)
    // or, with Discord's full 64 bits, where Twitter cannot read it.
    // A Twitter ID of 2023 reads as a Discord ID of 2028: in the future.
    let found = tokens("1724551110457221119");
    let discord = found[0]
        .candidates()
        .iter()
        .find(|r| r.family() == "discord")
        .unwrap();
    assert_eq!(
        (discord.family(), discord.plausibility()),
        ("discord", Plausibility::Implausible)
    );
    assert!(
        discord
            .why()
            .contains("in the future (now is 2025-06-15T15:06:40.000Z)"),
        "{}",
        discord.why()
    );
}

#[test]
fn implausible_readings_come_last_and_say_why() {
    // A ULID whose time is past now: implausible, and the only reading.
    let late = "7ZZZZZZZZZZZZZZZZZZZZZZZZZ";
    let token = &tokens(late)[0];
    let reading = token.best().unwrap();
    assert_eq!(reading.plausibility(), Plausibility::Implausible);
    assert!(
        reading
            .why()
            .starts_with("implausible: +010889-08-02T05:31:50.655Z is in the future"),
        "{}",
        reading.why()
    );
    // A 16-character hex word that is also a Misskey aidx: every reading
    // kept, ranked.
    let token = &tokens("9gkl7xu1abcd0001 17eed6190fcedfff")[1];
    let ranks: Vec<_> = token
        .candidates()
        .iter()
        .map(|r| r.plausibility())
        .collect();
    assert!(ranks.is_sorted());
    assert!(token.candidates().len() >= 2);
}

#[test]
fn random_uuids_hold_no_time_and_say_so() {
    let token = &tokens("550e8400-e29b-41d4-a716-446655440000")[0];
    let reading = token.best().unwrap();
    assert_eq!((reading.family(), reading.time()), ("uuid-v4", None));
    assert_eq!(reading.why(), "a version 4 UUID is random, with no time");
}

#[test]
fn fields_are_named_by_their_family() {
    let token = &tokens("<@175928847299117063>")[0];
    let discord = token.best().unwrap();
    let fields: Vec<_> = discord
        .fields()
        .iter()
        .map(|f| (f.name.as_ref(), f.value.to_string()))
        .collect();
    assert_eq!(
        fields,
        [
            ("id", "175928847299117063".to_owned()),
            ("worker", "1".to_owned()),
            ("process", "0".to_owned()),
            ("increment", "7".to_owned())
        ]
    );
}

#[cfg(feature = "serde")]
#[test]
fn tokens_serialize_as_the_json_contract() {
    let token = &tokens("x <@175928847299117063>")[0];
    let json = serde_json::to_value(token).unwrap();
    assert_eq!(json["input"], "175928847299117063");
    assert_eq!(json["context"], "user mention");
    assert_eq!(json["start"], 4);
    let candidate = &json["candidates"][0];
    assert_eq!(candidate["family"], "discord");
    assert_eq!(candidate["time"], "2016-04-30T11:18:25.796Z");
    assert_eq!(candidate["id"], "175928847299117063");
    assert_eq!(candidate["worker"], 1);
    assert_eq!(candidate["plausibility"], "pinned");
    assert_eq!(
        candidate["why"],
        "pinned: found as the user mention, so discord"
    );
}

/// Text that is mostly digits, 10 MB of it, in the shapes that cost a
/// tokenizer most: one number, numbers glued by separators, markup that
/// never closes.
#[test]
fn hostile_text_stays_linear_and_bounded() {
    let inspector = Inspector::new(NOW_MS);
    let ten_mb = 10 << 20;
    let one_number = "9".repeat(ten_mb);
    assert_eq!(inspector.inspect(&one_number).count(), 0);
    let glued = "1234567890123-".repeat(ten_mb / 14);
    // Read in parts: each 13-digit number is a token.
    assert_eq!(
        snowmint::inspect::scan(glued.as_bytes()).count(),
        ten_mb / 14
    );
    let opened = "<".repeat(ten_mb);
    assert_eq!(inspector.inspect(&opened).count(), 0);
    let markup = "<t:1".repeat(ten_mb / 4);
    assert_eq!(inspector.inspect(&markup).count(), 0);
    let link = format!("https://x.com/{}", "a/".repeat(ten_mb / 2));
    assert_eq!(inspector.inspect(&link).count(), 0);
}

proptest! {
    /// Any bytes: no panic, tokens in order within the text.
    #[test]
    fn any_bytes_read_without_panic(data in proptest::collection::vec(any::<u8>(), 0..512)) {
        let inspector = Inspector::new(NOW_MS);
        let mut end = 0;
        for token in inspector.inspect(&data) {
            let span = token.span();
            prop_assert!(span.start >= end && span.end <= data.len());
            prop_assert_eq!(&data[span.clone()], token.input().as_bytes());
            end = span.end;
        }
    }

    /// Text made of the pieces tokens are made of, so that the paths past
    /// the first character are reached.
    #[test]
    fn pieces_of_tokens_read_without_panic(pieces in proptest::collection::vec(
        prop::sample::select(vec![
            "<", ">", "@", "!", "&", "#", ":", "t:", "a:", "/", "-", "_", " ", "\n", "\"",
            "https://", "x.com/", "status", "discord.com/channels/", "@me", "cdn.discordapp.com/",
            "bsky.app/profile/", "post", "at://", "instagram.com/p/", "notes",
            "175928847299117063", "18446744073709551615", "99999999999999999999", "0x",
            "01ARZ3NDEKTSV4RRFFQ69G5FAV", "3jzfcijpj2z2a", "9gkl7xu1f4", "ffff", "Z", "é",
        ]),
        0..40,
    )) {
        let text = pieces.concat();
        let inspector = Inspector::new(NOW_MS);
        for token in inspector.inspect(&text) {
            prop_assert_eq!(&text[token.span()], token.input());
        }
    }
}
