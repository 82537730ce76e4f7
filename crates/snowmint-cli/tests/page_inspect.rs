//! The calculator page's reading of pasted text, in a real headless
//! Chromium against a real `snowmint serve`: a Discord message link read
//! with Discord's time first and its timestamp markup, a batch of 10,000
//! IDs as a sorted table with CSV, two IDs compared, a time zone picked,
//! and a shared link that restores the view, in English and Spanish; and
//! the known-answer vectors' texts, each token's top reading shown first.
//!
//! Expected times come from the families' published layouts (Discord's
//! documented ID 175928847299117063 is 2016-04-30T11:18:25.796Z; Twitter's
//! epoch is 1288834974657), never from the program.

#[allow(
    dead_code,
    reason = "the browser module serves several test files; this one uses part of it"
)]
mod browser;

use browser::{Browser, Options};
use serde_json::Value;

const TWITTER_EPOCH: u64 = 1_288_834_974_657;
/// Discord's documented ID, and its instant in Unix ms.
const DISCORD_ID: &str = "175928847299117063";
const DISCORD_MS: u64 = 1_462_015_105_796;
const DISCORD_TIME: &str = "2016-04-30T11:18:25.796Z";
const MESSAGE_LINK: &str =
    "https://discord.com/channels/81384788765712384/381887113391505410/175928847299117063";

/// What a reading card of the decode box shows: (family, plausibility, UTC).
async fn readings(page: &Browser, token: usize) -> Vec<(String, String, String)> {
    let script = format!(
        "return [...document.querySelectorAll('#decode-readings section.token')[{token}].querySelectorAll('.reading')]
           .map(r => [r.dataset.family, r.dataset.plausibility, r.querySelector('.time-utc').textContent])"
    );
    serde_json::from_value(page.js(&script).await).unwrap()
}

/// Paste a Discord message link: three tokens (server, channel, message),
/// each read as Discord alone; the message's time first, in UTC and in the
/// browser's zone (Madrid); Discord's markup in every style, each with a
/// copy button.
#[tokio::test]
async fn a_discord_message_link_reads_as_discord_first() {
    let page = Browser::open("inspect-link", Options::default()).await;
    page.fill("#decode-id", MESSAGE_LINK).await;
    page.wait_until(
        "three tokens read",
        "return document.querySelectorAll('#decode-readings section.token').length === 3",
    )
    .await;
    let message = readings(&page, 2).await;
    assert_eq!(
        message,
        [(
            "discord".to_owned(),
            "pinned".to_owned(),
            DISCORD_TIME.to_owned()
        )]
    );
    let context = page
        .text("#decode-readings section.token:nth-child(3) .context")
        .await;
    assert_eq!(context, "message in a Discord link");
    // 11:18:25.796 UTC is 13:18:25.796 in Madrid in summer.
    let zoned = page
        .text("#decode-readings section.token:nth-child(3) .time-zone")
        .await;
    assert!(zoned.contains("13:18:25.796"), "{zoned}");
    let relative = page
        .text("#decode-readings section.token:nth-child(3) .time-relative")
        .await;
    assert!(relative.ends_with("years ago"), "{relative}");

    // The markup of the message's time: every style Discord documents.
    let seconds = DISCORD_MS / 1000;
    let styles = page
        .js("return [...document.querySelectorAll('#decode-markup-rows li')].map(r => [r.dataset.style, r.querySelector('code').textContent, r.querySelector('button.copy').dataset.text])")
        .await;
    let styles: Vec<(String, String, String)> = serde_json::from_value(styles).unwrap();
    let letters: Vec<&str> = styles.iter().map(|s| s.0.as_str()).collect();
    assert_eq!(letters, ["t", "T", "d", "D", "f", "F", "s", "S", "R"]);
    for (style, code, copied) in &styles {
        assert_eq!(code, &format!("<t:{seconds}:{style}>"));
        assert_eq!(copied, code);
    }
    // As Discord shows it to a reader in Madrid with an en-US browser.
    let long_time = page
        .text("#decode-markup-rows li[data-style=T] .preview")
        .await;
    assert_eq!(long_time, "1:18:25 PM");
    page.screenshot("link").await;

    // A bare Discord ID is read as every preset: Twitter's and Discord's
    // readings both stay plausible, Twitter first, side by side with the
    // other plausible ones; the implausible (LinkedIn's in 1971...) are
    // folded below, and say so.
    page.fill("#decode-id", DISCORD_ID).await;
    page.wait_until(
        "one token with its readings",
        "const t = document.querySelectorAll('#decode-readings section.token'); return t.length === 1 && t[0].querySelectorAll('.reading').length >= 10",
    )
    .await;
    let bare = readings(&page, 0).await;
    let families: Vec<&str> = bare.iter().map(|r| r.0.as_str()).collect();
    assert_eq!(families[..2], ["twitter", "discord"], "{bare:?}");
    assert_eq!(bare[1].2, DISCORD_TIME);
    let folded: Vec<(String, String)> = serde_json::from_value(
        page.js("return [...document.querySelectorAll('#decode-readings details.implausible .reading')].map(r => [r.dataset.family, r.dataset.plausibility])")
            .await,
    )
    .unwrap();
    assert!(
        folded.iter().all(|(_, rank)| rank == "implausible"),
        "{folded:?}"
    );
    assert!(
        folded.iter().any(|(family, _)| family == "linkedin"),
        "{folded:?}"
    );
    let shown = bare.len() - folded.len();
    assert!(bare[..shown].iter().all(|r| r.1 == "plausible"), "{bare:?}");
    let summary = page
        .text("#decode-readings details.implausible summary")
        .await;
    assert!(
        summary.starts_with(&format!("Implausible readings ({})", folded.len())),
        "{summary}"
    );
    let open = page
        .js("return document.querySelector('#decode-readings details.implausible').open")
        .await;
    assert_eq!(open, Value::Bool(false));
    page.close().await;
}

/// 10,000 IDs, shuffled: the table has them all, sorted by time, with the
/// time between neighbours; the CSV link is there, and the CSV of the same
/// rows holds every ID with its time.
#[tokio::test]
async fn a_batch_of_ten_thousand_ids_is_a_sorted_table() {
    let page = Browser::open("inspect-batch", Options::default()).await;
    // One ID per second from 2023-11-14T22:13:20Z, in a shuffled order.
    let start_ms = 1_700_000_000_000u64;
    let mut order: Vec<u64> = (0..10_000).collect();
    let mut x = 0x2545_f491_4f6c_dd1du64;
    for i in (1..order.len()).rev() {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        order.swap(i, (x % (i as u64 + 1)) as usize);
    }
    let ids: Vec<String> = order
        .iter()
        .map(|i| (((start_ms + i * 1000 - TWITTER_EPOCH) << 22) | 4095).to_string())
        .collect();
    let text = ids.join("\n");
    page.js(&format!(
        "document.getElementById('batch-text').value = {}; return true",
        Value::from(text)
    ))
    .await;
    page.click("#batch-form button[type=submit]").await;
    page.wait_until(
        "10,000 rows",
        "return document.querySelectorAll('#batch-rows tr').length === 10000",
    )
    .await;
    let first = page.js("return [...document.querySelectorAll('#batch-rows tr')].slice(0, 2).map(r => [r.dataset.input, r.querySelector('.time-utc').textContent, r.querySelector('.delta').textContent])").await;
    let first: Vec<(String, String, String)> = serde_json::from_value(first).unwrap();
    let smallest = (((start_ms - TWITTER_EPOCH) << 22) | 4095).to_string();
    let smallest_id = smallest.clone();
    assert_eq!(
        first[0],
        (
            smallest,
            "2023-11-14T22:13:20.000Z".to_owned(),
            String::new()
        )
    );
    assert_eq!(first[1].1, "2023-11-14T22:13:21.000Z");
    assert_eq!(first[1].2, "1 second");
    let last = page.text("#batch-rows tr:last-child .time-utc").await;
    // The 10,000th second after the first.
    assert_eq!(last, "2023-11-15T00:59:59.000Z");
    let sorted = page
        .js("const t = [...document.querySelectorAll('#batch-rows .time-utc')].map(c => c.textContent); return t.every((v, i) => i === 0 || t[i - 1] <= v)")
        .await;
    assert_eq!(sorted, Value::Bool(true));
    assert_eq!(
        page.text("#batch-status").await,
        "10,000 IDs found, 10,000 with a time; sorted by time."
    );
    let link = page.js("const a = document.getElementById('batch-csv'); return [a.getAttribute('download'), a.href.startsWith('blob:')]").await;
    assert_eq!(link, serde_json::json!(["snowmint-ids.csv", true]));
    // The CSV the link holds: every row, sorted as the table.
    let csv = page
        .js("return fetch(document.getElementById('batch-csv').href).then(r => r.text())")
        .await;
    let csv = csv.as_str().unwrap().to_owned();
    let lines: Vec<&str> = csv.trim_end().split("\r\n").collect();
    assert_eq!(
        lines[0],
        "input,family,time,unix_ms,plausibility,since_previous_ms"
    );
    assert_eq!(lines.len(), 10_001);
    assert!(lines[1].starts_with(&format!("{smallest_id},twitter,2023-11-14T22:13:20.000Z,")));
    for line in &lines[1..] {
        let cells: Vec<&str> = line.split(',').collect();
        let id: u64 = cells[0].parse().unwrap();
        assert_eq!(cells[1], "twitter");
        assert_eq!(cells[3].parse::<u64>().unwrap(), (id >> 22) + TWITTER_EPOCH);
    }
    page.screenshot("table").await;
    page.close().await;
}

/// Two IDs compared: which is older, by how much, to the millisecond.
#[tokio::test]
async fn two_ids_compared() {
    let page = Browser::open("inspect-compare", Options::default()).await;
    page.fill("#compare-a", "1724551110457221119").await;
    page.fill("#compare-b", &format!("<@{DISCORD_ID}>")).await;
    // 1700000000000 - 1462015105796 = 237984894204 ms: 2754 days, 10 h,
    // 54 min, 54.204 s.
    page.wait_text(
        "#compare-verdict",
        "The second is older, by 2,754 days, 10 hours, 54 minutes, and 54.204 seconds.",
    )
    .await;
    assert_eq!(
        page.attr("#compare-verdict", "data-older").await.as_deref(),
        Some("b")
    );
    assert_eq!(
        page.text("#compare-exact").await,
        "Exactly 237,984,894,204 ms (237,984,894,204,000,000 ns)."
    );
    assert_eq!(
        page.text("#compare-b-read").await,
        format!("Read as discord: {DISCORD_TIME}")
    );
    page.choose("#lang", "es").await;
    page.wait_text(
        "#compare-verdict",
        "El segundo es más antiguo, por 2754 días, 10 horas, 54 minutos y 54,204 segundos.",
    )
    .await;
    page.screenshot("compared").await;
    page.close().await;
}

/// A zone picked moves every local time: the readings and the decoded ID.
#[tokio::test]
async fn a_time_zone_picked_moves_the_local_times() {
    let page = Browser::open("inspect-zone", Options::default()).await;
    page.fill("#decode-id", &format!("<@{DISCORD_ID}>")).await;
    page.wait_until(
        "a reading",
        "return document.querySelectorAll('#decode-readings .reading').length === 1",
    )
    .await;
    page.choose("#zone", "Asia/Tokyo").await;
    // 11:18:25.796 UTC is 20:18:25.796 in Tokyo.
    page.wait_until(
        "the reading in Tokyo's time",
        "return document.querySelector('#decode-readings .time-zone').textContent.includes('20:18:25.796')",
    )
    .await;
    let markup = page
        .text("#decode-markup-rows li[data-style=T] .preview")
        .await;
    assert_eq!(markup, "8:18:25 PM");
    page.fill("#decode-id", "1724551110457221119").await;
    // 22:13:20 UTC is 07:13:20 the next day in Tokyo.
    page.wait_until(
        "the decoded ID in Tokyo's time",
        "return document.getElementById('decode-local').textContent.includes('07:13:20.000')",
    )
    .await;
    let zones = page
        .js("return document.getElementById('zone').options.length")
        .await;
    assert!(zones.as_u64().unwrap() > 300, "{zones} zones");
    page.close().await;
}

/// The page's state lives in its link: opening the link restores the
/// text, the layout, the zone and the language, in English and Spanish.
#[tokio::test]
async fn a_shared_link_restores_the_view_in_both_languages() {
    let page = Browser::open("inspect-share", Options::default()).await;
    page.fill("#decode-id", MESSAGE_LINK).await;
    page.choose("#layout", "discord").await;
    page.choose("#zone", "America/New_York").await;
    page.wait_until(
        "the link to hold the zone",
        "return location.hash.includes('tz=America%2FNew_York') && location.hash.includes('layout=discord')",
    )
    .await;
    let shared = page
        .js("return location.href")
        .await
        .as_str()
        .unwrap()
        .to_owned();
    assert_eq!(
        page.attr("#share-link", "data-text").await.as_deref(),
        Some(shared.as_str())
    );

    for (lang, badge, title) in [
        ("en", "pinned", "Decode an ID"),
        ("es", "fijado", "Descifrar un ID"),
    ] {
        // Another visit: forget what this browser remembers, then open the
        // link (in one language, then the other).
        page.js("localStorage.clear(); return true").await;
        let link = shared.replace("lang=en", &format!("lang={lang}"));
        page.client.goto(&format!("{}/", page.base)).await.unwrap();
        page.client.goto(&link).await.unwrap();
        page.client.refresh().await.unwrap();
        page.wait_text("#decode-title", title).await;
        assert_eq!(
            page.js("return document.getElementById('decode-id').value")
                .await,
            MESSAGE_LINK
        );
        assert_eq!(
            page.js("return document.getElementById('layout').value")
                .await,
            "discord"
        );
        assert_eq!(
            page.js("return document.getElementById('zone').value")
                .await,
            "America/New_York"
        );
        page.wait_until(
            "the message read again",
            "return document.querySelectorAll('#decode-readings section.token').length === 3",
        )
        .await;
        assert_eq!(
            page.text("#decode-readings section.token:nth-child(3) .badge")
                .await,
            badge
        );
        // 11:18:25 UTC is 07:18:25 in New York in summer.
        let zoned = page
            .text("#decode-readings section.token:nth-child(3) .time-zone")
            .await;
        assert!(zoned.contains("07:18:25"), "{zoned}");
        page.screenshot(&format!("restored-{lang}")).await;
    }
    page.close().await;
}

/// On a node with bearer tokens (scope `issue`), reading text works, since
/// it issues nothing.
#[tokio::test]
async fn reading_text_works_beside_tokens() {
    let page = Browser::open(
        "inspect-tokens",
        Options {
            tokens: true,
            ..Options::default()
        },
    )
    .await;
    page.fill("#decode-id", MESSAGE_LINK).await;
    page.wait_until(
        "three tokens read",
        "return document.querySelectorAll('#decode-readings section.token').length === 3",
    )
    .await;
    assert_eq!(readings(&page, 2).await[0].2, DISCORD_TIME);
    page.close().await;
}

/// The known-answer vectors' texts (vectors/vectors.json, shared by every
/// front end's tests) pasted into the decode box: each token shown, in
/// order, with its top reading's family and UTC time first.
#[tokio::test]
async fn the_vectors_texts_read_on_the_page() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../vectors/vectors.json");
    let file: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    assert_eq!(file["version"], 1);
    let texts = file["texts"].as_array().unwrap();
    assert!(texts.len() >= 20, "{} texts", texts.len());
    let page = Browser::open("inspect-vectors", Options::default()).await;
    for entry in texts {
        let text = entry["text"].as_str().unwrap();
        let inputs: Vec<&str> = entry["tokens"]
            .as_array()
            .unwrap()
            .iter()
            .map(|token| token["input"].as_str().unwrap())
            .collect();
        let fill = format!(
            "const box = document.getElementById('decode-id'); box.value = {text}; box.dispatchEvent(new Event('input', {{ bubbles: true }}));",
            text = Value::from(text)
        );
        page.js(&fill).await;
        page.wait_until(
            &format!("the tokens of {text}"),
            &format!(
                "return JSON.stringify([...document.querySelectorAll('#decode-readings section.token')].map(s => s.dataset.input)) === {}",
                Value::from(serde_json::to_string(&inputs).unwrap())
            ),
        )
        .await;
        let shown: Vec<(String, String)> = serde_json::from_value(
            page.js("return [...document.querySelectorAll('#decode-readings section.token')].map(s => { const r = s.querySelector('.reading'); return [r.dataset.family, r.querySelector('.time-utc').textContent]; })")
                .await,
        )
        .unwrap();
        let expected: Vec<(String, String)> = entry["tokens"]
            .as_array()
            .unwrap()
            .iter()
            .map(|token| {
                let time = token["time"].as_str().unwrap_or("no time in it");
                (
                    token["family"].as_str().unwrap().to_owned(),
                    time.to_owned(),
                )
            })
            .collect();
        assert_eq!(shown, expected, "{text}");
    }
    page.close().await;
}
