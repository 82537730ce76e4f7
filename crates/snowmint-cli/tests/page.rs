//! The calculator page at `/`, in a real headless Chromium against a real
//! `snowmint serve`, driven as a person would: typing, choosing, clicking,
//! pressing keys, and reading what the page shows.
//!
//! Expected values come from the format's definition (Twitter epoch
//! 1288834974657; 41/5/5/12 bits) and the seed's worked example, never from
//! the program. Each test saves screenshots under `target/screenshots/`.

#[allow(
    dead_code,
    reason = "the browser module serves several test files; this one uses part of it"
)]
mod browser;

use browser::{Browser, DATACENTER, MACHINE, Options};
use fantoccini::key::Key;
use serde_json::Value;
use snowmint::{Layout, SnowflakeId};

const TWITTER_EPOCH: u64 = 1_288_834_974_657;
const DISCORD_EPOCH: u64 = 1_420_070_400_000;

/// The seed's worked example: unix ms 1700000000000, datacenter 7, machine
/// 13, sequence 4095.
const EXAMPLE_ID: &str = "1724551110457221119";
const EXAMPLE_MS: u64 = 1_700_000_000_000;
const EXAMPLE_TIME: &str = "2023-11-14T22:13:20.000Z";
/// The example's ID in hex: 1724551110457221119 = 0x17eed6190fcedfff.
const EXAMPLE_HEX: &str = "17eed6190fcedfff";

/// Paste the worked example, read every field off the page, and check the
/// picture of its bits field by field.
#[tokio::test]
async fn decodes_the_worked_example() {
    let page = Browser::open("decode", Options::default()).await;
    page.fill("#decode-id", EXAMPLE_ID).await;
    page.wait_text("#decode-sequence", "4095").await;

    assert_eq!(
        page.text("#decode-timestamp-ms").await,
        EXAMPLE_MS.to_string()
    );
    assert_eq!(page.text("#decode-utc").await, EXAMPLE_TIME);
    // The browser lives in Madrid: 22:13:20 UTC is 23:13:20 CET there.
    let local = page.text("#decode-local").await;
    assert!(
        local.contains("23:13:20.000") && local.contains("2023") && local.contains("14"),
        "{local}"
    );
    assert_eq!(page.text("#decode-datacenter").await, "7");
    assert_eq!(page.text("#decode-machine").await, "13");
    assert_eq!(page.text("#decode-sequence").await, "4095");
    assert_eq!(page.text("#decode-decimal").await, EXAMPLE_ID);
    assert_eq!(page.text("#decode-hex").await, EXAMPLE_HEX);

    // The picture: sign bit 0, then each field's bits, coloured and named.
    let expected_bits = [
        ("sign", "0".to_owned()),
        ("timestamp", format!("{:041b}", EXAMPLE_MS - TWITTER_EPOCH)),
        ("datacenter", format!("{:05b}", 7)),
        ("machine", format!("{:05b}", 13)),
        ("sequence", format!("{:012b}", 4095)),
    ];
    let mut all_bits = String::new();
    for (field, bits) in &expected_bits {
        let css = format!("#decode-bits .bit-field.{field}");
        assert_eq!(
            page.text(&format!("{css} .digits")).await,
            *bits,
            "{field} bits"
        );
        let label = page.text(&format!("{css} .name")).await;
        assert!(
            label.to_lowercase().contains(field),
            "{field} label: {label}"
        );
        all_bits.push_str(bits);
    }
    assert_eq!(all_bits.len(), 64);
    assert_eq!(
        all_bits,
        format!("{:064b}", EXAMPLE_ID.parse::<u64>().unwrap())
    );
    let colours = page
        .js("return [...document.querySelectorAll('#decode-bits .bit-field')].map(e => getComputedStyle(e).borderTopColor)")
        .await;
    let colours: Vec<&str> = colours
        .as_array()
        .unwrap()
        .iter()
        .filter_map(Value::as_str)
        .collect();
    let distinct: std::collections::BTreeSet<_> = colours.iter().collect();
    assert_eq!(
        (colours.len(), distinct.len()),
        (5, 5),
        "every field has its own colour: {colours:?}"
    );
    page.screenshot("decimal").await;

    // The same ID written in hex, with the selector.
    page.choose("#decode-encoding", "hex").await;
    page.fill("#decode-id", EXAMPLE_HEX).await;
    page.wait_text("#decode-decimal", EXAMPLE_ID).await;
    assert_eq!(page.text("#decode-sequence").await, "4095");

    // Nothing was fetched from anywhere but this server.
    let origins = page
        .js("return performance.getEntriesByType('resource').map(e => new URL(e.name).origin)")
        .await;
    for origin in origins.as_array().unwrap() {
        assert_eq!(
            origin.as_str(),
            Some(page.base.as_str()),
            "a request left the server"
        );
    }
    page.close().await;
}

/// Type the example's parts; the page shows the example's ID, and the
/// date picker moves to the same instant in local time.
#[tokio::test]
async fn encodes_the_worked_example_from_its_parts() {
    let page = Browser::open("encode", Options::default()).await;
    page.fill("#encode-timestamp", &EXAMPLE_MS.to_string())
        .await;
    page.fill("#encode-datacenter", "7").await;
    page.fill("#encode-machine", "13").await;
    page.fill("#encode-sequence", "4095").await;
    page.wait_text("#encode-id", EXAMPLE_ID).await;
    // Chromium leaves out a zero millisecond part.
    let picker = page
        .find("#encode-picker")
        .await
        .prop("value")
        .await
        .unwrap()
        .unwrap_or_default();
    assert_eq!(picker.trim_end_matches(".000"), "2023-11-14T23:13:20");
    page.screenshot("unix-ms").await;

    // RFC 3339 text gives the same ID.
    page.fill("#encode-sequence", "4094").await;
    page.wait_text("#encode-id", "1724551110457221118").await;
    page.fill("#encode-timestamp", EXAMPLE_TIME).await;
    page.fill("#encode-sequence", "4095").await;
    page.wait_text("#encode-id", EXAMPLE_ID).await;
    for field in ["timestamp", "datacenter", "machine", "sequence"] {
        assert_eq!(
            page.text(&format!("#encode-{field}-error")).await,
            "",
            "{field}"
        );
    }

    // A date picked in the picker (local time, Madrid) becomes Unix ms.
    page.fill("#encode-timestamp", "0").await;
    page.wait_until(
        "an error",
        "return document.getElementById('encode-timestamp-error').textContent !== ''",
    )
    .await;
    page.js("const picker = document.getElementById('encode-picker');
         picker.value = '2023-11-14T23:13:20.000';
         picker.dispatchEvent(new Event('input', { bubbles: true }));
         return true")
        .await;
    page.wait_text("#encode-id", EXAMPLE_ID).await;
    let text = page
        .find("#encode-timestamp")
        .await
        .prop("value")
        .await
        .unwrap();
    assert_eq!(text.as_deref(), Some("1700000000000"));
    assert_eq!(page.text("#encode-timestamp-error").await, "");

    // The copy button puts the ID on the clipboard: paste it into the
    // decoder and it decodes.
    page.click("#encode-result button.copy").await;
    page.wait_text("#encode-result button.copy", "Copied").await;
    let paste = format!("{}v", char::from(Key::Control));
    let input = page.find("#decode-id").await;
    input.clear().await.expect("clearing");
    input.send_keys(&paste).await.expect("pasting");
    page.wait_text("#decode-sequence", "4095").await;
    assert_eq!(
        input.prop("value").await.unwrap().as_deref(),
        Some(EXAMPLE_ID)
    );
    page.close().await;
}

/// A datacenter out of range: the API's message appears next to that
/// field, the field is marked invalid and points at the message, the other
/// fields stay clean, and fixing it clears it.
#[tokio::test]
async fn out_of_range_datacenter_is_shown_next_to_the_field() {
    let page = Browser::open("invalid", Options::default()).await;
    page.fill("#encode-timestamp", &EXAMPLE_MS.to_string())
        .await;
    page.fill("#encode-datacenter", "32").await;
    page.wait_text(
        "#encode-datacenter-error",
        "datacenter 32 is out of range (0..=31)",
    )
    .await;

    assert_eq!(
        page.attr("#encode-datacenter", "aria-invalid")
            .await
            .as_deref(),
        Some("true")
    );
    let described_by = page
        .attr("#encode-datacenter", "aria-describedby")
        .await
        .unwrap_or_default();
    assert!(
        described_by
            .split(' ')
            .any(|id| id == "encode-datacenter-error"),
        "{described_by}"
    );
    let beside = page
        .js("return document.getElementById('encode-datacenter-error').parentElement === document.getElementById('encode-datacenter').parentElement")
        .await;
    assert_eq!(
        beside,
        Value::Bool(true),
        "the message sits in the field's own box"
    );
    for field in ["timestamp", "machine", "sequence"] {
        assert_eq!(
            page.text(&format!("#encode-{field}-error")).await,
            "",
            "{field}"
        );
        assert_eq!(
            page.attr(&format!("#encode-{field}"), "aria-invalid").await,
            None,
            "{field}"
        );
    }
    assert_eq!(
        page.text("#encode-id").await,
        "",
        "no ID is shown for bad input"
    );
    page.screenshot("datacenter-32").await;

    page.fill("#encode-datacenter", "31").await;
    page.wait_text("#encode-datacenter-error", "").await;
    assert_eq!(page.attr("#encode-datacenter", "aria-invalid").await, None);
    page.close().await;
}

/// Ten fresh IDs from the node: distinct, increasing, and made by the node
/// the page names.
#[tokio::test]
async fn generates_ten_distinct_increasing_ids() {
    let page = Browser::open("generate", Options::default()).await;
    page.fill("#generate-count", "10").await;
    page.click("#generate-form button[type=submit]").await;
    page.wait_until(
        "ten IDs",
        "return document.querySelectorAll('#generate-list li').length === 10",
    )
    .await;

    let texts = page
        .js("return [...document.querySelectorAll('#generate-list li code')].map(e => e.textContent)")
        .await;
    let ids: Vec<u64> = texts
        .as_array()
        .unwrap()
        .iter()
        .map(|text| {
            text.as_str()
                .unwrap()
                .parse()
                .expect("an ID is a decimal number")
        })
        .collect();
    assert_eq!(ids.len(), 10);
    assert!(
        ids.windows(2).all(|pair| pair[0] < pair[1]),
        "not increasing: {ids:?}"
    );
    for id in &ids {
        let parts = Layout::TWITTER.decode(SnowflakeId::from_u64(*id)).unwrap();
        assert_eq!(
            (parts.get("datacenter"), parts.get("machine")),
            (Some(DATACENTER), Some(MACHINE)),
            "{id}"
        );
    }
    let node = page.text("#generate-node").await;
    assert!(
        node.contains(&format!("datacenter {DATACENTER}, machine {MACHINE}")),
        "{node}"
    );
    let copy_buttons = page
        .js("return document.querySelectorAll('#generate-list li button.copy').length")
        .await;
    assert_eq!(copy_buttons, Value::from(10));
    page.screenshot("ten").await;
    page.close().await;
}

/// Beside bearer tokens (scope `issue`), the calculator works as before,
/// since its endpoints stay open; generating, which issues IDs, says why
/// it cannot, in the page's language.
#[tokio::test]
async fn the_calculator_works_beside_tokens_and_generating_says_why_not() {
    let page = Browser::open(
        "tokens",
        Options {
            tokens: true,
            ..Options::default()
        },
    )
    .await;
    page.fill("#decode-id", EXAMPLE_ID).await;
    page.wait_text("#decode-sequence", "4095").await;
    assert_eq!(page.text("#decode-hex").await, EXAMPLE_HEX);
    page.fill("#generate-count", "10").await;
    page.click("#generate-form button[type=submit]").await;
    page.wait_text(
        "#generate-count-error",
        "this endpoint needs a bearer token: send Authorization: Bearer <token>",
    )
    .await;
    assert_eq!(
        page.js("return document.querySelectorAll('#generate-list li').length")
            .await,
        Value::from(0)
    );
    page.screenshot("generate-refused").await;
    page.choose("#lang", "es").await;
    page.wait_text(
        "#generate-count-error",
        "Este nodo pide un token (Authorization: Bearer) para emitir IDs, y esta página no lo envía.",
    )
    .await;
    page.close().await;
}

/// The layout selector applies to every part: the facts, decoding, and
/// the time window; and it is remembered.
#[tokio::test]
async fn layout_selector_is_shared_and_remembered() {
    let page = Browser::open("layout", Options::default()).await;
    page.fill("#decode-id", EXAMPLE_ID).await;
    page.wait_text("#decode-timestamp-ms", &EXAMPLE_MS.to_string())
        .await;
    page.fill("#range-from", "2023-11-14T22:00:00.000Z").await;
    page.fill("#range-to", "2023-11-14T23:00:00.000Z").await;
    let twitter_min = (EXAMPLE_MS - 800_000 - TWITTER_EPOCH) << 22;
    page.wait_text("#range-min", &twitter_min.to_string()).await;

    page.choose("#layout", "discord").await;
    // The same 41 bits of time, counted from Discord's epoch.
    let discord_ms = (EXAMPLE_ID.parse::<u64>().unwrap() >> 22) + DISCORD_EPOCH;
    page.wait_text("#decode-timestamp-ms", &discord_ms.to_string())
        .await;
    // Discord's fields by Discord's names.
    assert_eq!(page.text("#decode-field-increment").await, "4095");
    assert_eq!(page.text("#decode-field-worker").await, "7");
    assert_eq!(page.text("#decode-field-process").await, "13");
    let discord_min = (EXAMPLE_MS - 800_000 - DISCORD_EPOCH) << 22;
    page.wait_text("#range-min", &discord_min.to_string()).await;
    let epoch = page.text("#facts-epoch").await;
    assert!(
        epoch.contains("2015-01-01T00:00:00.000Z") && epoch.contains(&DISCORD_EPOCH.to_string()),
        "{epoch}"
    );
    assert!(page.text("#facts-layout").await.starts_with("discord"));
    page.screenshot("discord").await;

    page.client.refresh().await.expect("reloading");
    page.wait_text(
        "#facts-layout",
        &format!(
            "discord (time:42/worker:5:node/process:5:node/increment:12:sequence@{DISCORD_EPOCH})"
        ),
    )
    .await;
    page.close().await;
}

/// A first visit uses the node's own layout; a choice made afterwards is
/// remembered over it.
#[tokio::test]
async fn starts_in_the_nodes_own_layout() {
    let page = Browser::open(
        "node-layout",
        Options {
            layout: Some("discord"),
            ..Options::default()
        },
    )
    .await;
    page.wait_until(
        "the node's layout chosen",
        "return document.getElementById('layout').value === 'discord'",
    )
    .await;
    page.wait_until(
        "Discord's facts",
        "return document.getElementById('facts-layout').textContent.startsWith('discord')",
    )
    .await;
    // The example read with Discord's epoch and names.
    let discord_ms = (EXAMPLE_ID.parse::<u64>().unwrap() >> 22) + DISCORD_EPOCH;
    page.wait_text("#decode-timestamp-ms", &discord_ms.to_string())
        .await;
    page.choose("#layout", "sonyflake").await;
    page.client.refresh().await.expect("reloading");
    page.wait_until(
        "the remembered layout",
        "return document.getElementById('facts-layout').textContent.startsWith('sonyflake')",
    )
    .await;
    assert_eq!(
        page.js("return document.getElementById('layout').value")
            .await,
        "sonyflake"
    );
    page.close().await;
}

/// The layout selector offers every preset the binary knows (read from
/// `snowmint layout --list --format json`), and the decode card reads an
/// ID of another family by its own fields: Sonyflake's 39 bits of 10 ms
/// since 2014-09-01, 8-bit sequence and 16-bit machine in the low bits
/// (github.com/sony/sonyflake), and Discord's full 64 bits with no sign
/// bit in the picture.
#[tokio::test]
async fn every_family_is_offered_and_read_by_its_fields() {
    let listed = std::process::Command::new(env!("CARGO_BIN_EXE_snowmint"))
        .args(["layout", "--list", "--format", "json"])
        .output()
        .expect("snowmint layout --list");
    let listed: Value = serde_json::from_slice(&listed.stdout).unwrap();
    let presets: Vec<String> = listed
        .as_array()
        .unwrap()
        .iter()
        .map(|preset| preset["layout"].as_str().unwrap().to_owned())
        .collect();
    assert!(presets.len() >= 15, "{presets:?}");

    let page = Browser::open("families", Options::default()).await;
    let offered = page
        .js("return [...document.querySelectorAll('#layout option')].map(o => o.value)")
        .await;
    let offered: Vec<String> = offered
        .as_array()
        .unwrap()
        .iter()
        .map(|name| name.as_str().unwrap().to_owned())
        .collect();
    assert_eq!(offered, presets);

    // ticks = (1700000000000 - 1409529600000) / 10 = 29047040000.
    let sonyflake_id = ((29_047_040_000u64 << 24) | (3 << 16) | 513).to_string();
    page.choose("#layout", "sonyflake").await;
    page.fill("#decode-id", &sonyflake_id).await;
    page.wait_text("#decode-timestamp-ms", "1700000000000")
        .await;
    assert_eq!(page.text("#decode-utc").await, "2023-11-14T22:13:20.00Z");
    assert_eq!(page.text("#decode-machine").await, "513");
    assert_eq!(page.text("#decode-sequence").await, "3");
    page.wait_text(
        "#decode-bits .bit-field.machine .digits",
        &format!("{:016b}", 513),
    )
    .await;
    let widths = page
        .js("return [...document.querySelectorAll('#decode-bits .bit-field')].map(e => e.dataset.field + ':' + e.querySelector('.digits').textContent.length)")
        .await;
    assert_eq!(
        widths,
        serde_json::json!(["sign:1", "timestamp:39", "sequence:8", "machine:16"])
    );
    page.screenshot("sonyflake").await;

    // Discord's largest ID, past 2^63: every bit is a field's.
    page.choose("#layout", "discord").await;
    page.fill("#decode-id", "18446744073709551615").await;
    page.wait_text("#decode-field-worker", "31").await;
    assert_eq!(page.text("#decode-field-increment").await, "4095");
    let widths = page
        .js("return [...document.querySelectorAll('#decode-bits .bit-field')].map(e => e.dataset.field + ':' + e.querySelector('.digits').textContent.length)")
        .await;
    assert_eq!(
        widths,
        serde_json::json!(["timestamp:42", "worker:5", "process:5", "increment:12"])
    );
    page.close().await;
}

/// Switch to Spanish: labels, messages and errors change, the page says it
/// is Spanish, and the choice survives a reload.
#[tokio::test]
async fn speaks_spanish_when_asked_and_remembers_it() {
    let page = Browser::open("spanish", Options::default()).await;
    assert_eq!(page.text("#decode-title").await, "Decode an ID");
    page.choose("#lang", "es").await;
    page.wait_text("#decode-title", "Descifrar un ID").await;
    assert_eq!(page.attr("html", "lang").await.as_deref(), Some("es"));
    assert_eq!(
        page.text("label[for=encode-datacenter]").await,
        "Centro de datos"
    );
    assert_eq!(page.text("label[for=encode-machine]").await, "Máquina");
    assert_eq!(page.text("#generate-form button").await, "Generar");
    assert_eq!(page.text("#encode-datacenter-hint").await, "de 0 a 31");

    page.fill("#encode-timestamp", &EXAMPLE_MS.to_string())
        .await;
    page.fill("#encode-datacenter", "32").await;
    page.wait_text(
        "#encode-datacenter-error",
        "Centro de datos: 32 está fuera del rango (0..=31)",
    )
    .await;
    page.fill("#decode-id", "12x").await;
    page.wait_text(
        "#decode-id-error",
        "El ID «12x» no es un entero válido (se espera un entero en 0..=9223372036854775807)",
    )
    .await;
    page.screenshot("errors").await;

    // An error already shown follows the language back.
    page.choose("#lang", "en").await;
    page.wait_text(
        "#encode-datacenter-error",
        "datacenter 32 is out of range (0..=31)",
    )
    .await;
    page.choose("#lang", "es").await;
    page.client.refresh().await.expect("reloading");
    page.wait_text("#decode-title", "Descifrar un ID").await;
    page.close().await;
}

/// A browser that prefers Spanish gets Spanish without asking.
#[tokio::test]
async fn starts_in_the_browsers_language() {
    let options = Options {
        languages: "es-ES,es",
        ..Options::default()
    };
    let page = Browser::open("browser-spanish", options).await;
    page.wait_text("#decode-title", "Descifrar un ID").await;
    assert_eq!(
        page.js("return document.getElementById('lang').value")
            .await,
        "es"
    );
    page.screenshot("start").await;
    page.close().await;
}

/// On a 360-px-wide phone screen nothing sticks out sideways, with every
/// part of the page filled in.
#[tokio::test]
async fn fits_a_360_px_screen() {
    let page = Browser::open(
        "narrow",
        Options {
            window: (360, 800),
            ..Options::default()
        },
    )
    .await;
    page.client
        .set_window_rect(0, 0, 360, 800)
        .await
        .expect("resizing");
    let width = page.js("return document.documentElement.clientWidth").await;
    assert!(
        width.as_u64().is_some_and(|w| (320..=360).contains(&w)),
        "viewport width {width}"
    );

    page.fill("#decode-id", EXAMPLE_ID).await;
    page.wait_text("#decode-sequence", "4095").await;
    page.fill("#encode-datacenter", "32").await;
    page.wait_until(
        "an error",
        "return document.getElementById('encode-datacenter-error').textContent !== ''",
    )
    .await;
    page.fill("#generate-count", "3").await;
    page.click("#generate-form button[type=submit]").await;
    page.wait_until(
        "three IDs",
        "return document.querySelectorAll('#generate-list li').length === 3",
    )
    .await;
    page.click("#range-form button[type=submit]").await;
    page.wait_until(
        "a range",
        "return !document.getElementById('range-result').hidden",
    )
    .await;

    let overflow = page
        .js(r#"
            const width = document.documentElement.clientWidth;
            const wide = [...document.querySelectorAll('body *')]
                .filter(e => e.getClientRects().length > 0)
                .filter(e => e.getBoundingClientRect().right > width + 0.5)
                .map(e => e.id || e.className || e.tagName);
            return { width, scroll: document.documentElement.scrollWidth, wide };
        "#)
        .await;
    assert!(
        overflow["scroll"].as_u64() <= overflow["width"].as_u64()
            && overflow["wide"] == Value::Array(vec![]),
        "something is wider than the screen: {overflow}"
    );
    page.js("window.scrollTo(0, 0); return true").await;
    page.screenshot("top").await;
    page.fit_height(360).await;
    page.screenshot("full").await;
    page.close().await;
}

/// The page works from the keyboard alone: the first Tab reaches the skip
/// link, Enter follows it, typing and Enter decode, and Tab reaches the copy
/// button of the result of an encode.
#[tokio::test]
async fn works_with_the_keyboard_alone() {
    let page = Browser::open("keyboard", Options::default()).await;
    let unlabelled = page
        .js("return [...document.querySelectorAll('input, select')].filter(e => e.labels.length === 0).map(e => e.id)")
        .await;
    assert_eq!(unlabelled, Value::Array(vec![]), "inputs without a label");
    let tab = char::from(Key::Tab).to_string();
    let enter = char::from(Key::Enter).to_string();
    let body = page.find("body").await;
    body.send_keys(&tab).await.expect("Tab");
    let focused =
        || page.js("return document.activeElement.id || document.activeElement.className");
    assert_eq!(focused().await, "skip");
    // Tab onwards to the ID input, as a person would.
    let mut steps = 0;
    while focused().await != "decode-id" {
        page.client
            .active_element()
            .await
            .unwrap()
            .send_keys(&tab)
            .await
            .expect("Tab");
        steps += 1;
        assert!(steps < 10, "the ID input is not among the first tab stops");
    }
    let input = page.client.active_element().await.unwrap();
    input.send_keys(EXAMPLE_ID).await.expect("typing");
    input.send_keys(&enter).await.expect("Enter");
    page.wait_text("#decode-machine", "13").await;

    // A visible focus ring on the focused control.
    let outline = page
        .js("return getComputedStyle(document.activeElement).outlineStyle")
        .await;
    assert_eq!(outline, "solid");
    page.screenshot("focused").await;
    page.close().await;
}

/// Pictures of the whole page for the service guide: the worked example decoded,
/// built, ten new IDs and a time window. Saved as
/// `target/screenshots/readme-en.png`, `readme-es.png` and, on a phone
/// screen, `readme-es-phone.png`.
#[tokio::test]
async fn full_page_pictures() {
    let page = Browser::open("readme", Options::default()).await;
    page.fill("#decode-id", EXAMPLE_ID).await;
    page.fill("#encode-timestamp", EXAMPLE_TIME).await;
    page.fill("#encode-datacenter", "7").await;
    page.fill("#encode-machine", "13").await;
    page.fill("#encode-sequence", "4095").await;
    page.wait_text("#encode-id", EXAMPLE_ID).await;
    page.fill("#range-from", "2023-11-14T22:00:00.000Z").await;
    page.fill("#range-to", "2023-11-14T23:00:00.000Z").await;
    let (from_ms, to_ms) = (EXAMPLE_MS - 800_000, EXAMPLE_MS + 2_800_000);
    let min = (from_ms - TWITTER_EPOCH) << 22;
    let max = ((to_ms - TWITTER_EPOCH) << 22) | ((1 << 22) - 1);
    page.wait_text("#range-sql", &format!("WHERE id BETWEEN {min} AND {max}"))
        .await;
    page.click("#generate-form button[type=submit]").await;
    page.wait_until(
        "ten IDs",
        "return document.querySelectorAll('#generate-list li').length === 10",
    )
    .await;
    page.wait_text("#decode-sequence", "4095").await;
    page.fit_height(1280).await;
    page.screenshot("en").await;
    page.choose("#lang", "es").await;
    page.wait_text("#decode-title", "Descifrar un ID").await;
    page.fit_height(1280).await;
    page.screenshot("es").await;
    page.client
        .set_window_rect(0, 0, 360, 800)
        .await
        .expect("resizing");
    page.js("window.scrollTo(0, 0); return true").await;
    page.screenshot("es-phone").await;
    page.close().await;
}
