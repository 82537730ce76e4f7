//! The calculator page as a newcomer first meets it, in a real headless
//! Chromium against a real `snowmint serve`: the decode box holds the
//! worked example, decoded, before anything is typed; an ID written in
//! another encoding is met with the "Written in" choice that reads it; the
//! New IDs card says what Generate will do before it is pressed.
//!
//! Expected values come from the format's definition (Twitter epoch
//! 1288834974657; 41/5/5/12 bits) and the seed's worked example.

#[allow(
    dead_code,
    reason = "the browser module serves several test files; this one uses part of it"
)]
mod browser;

use browser::{Browser, Options};

const TWITTER_EPOCH: u64 = 1_288_834_974_657;
const EXAMPLE_ID: &str = "1724551110457221119";
/// The example in hex: 1724551110457221119 = 0x17eed6190fcedfff.
const EXAMPLE_HEX: &str = "17eed6190fcedfff";

/// An ID by the format's definition.
fn id(unix_ms: u64, datacenter: u64, machine: u64, sequence: u64) -> u64 {
    ((unix_ms - TWITTER_EPOCH) << 22) | (datacenter << 17) | (machine << 12) | sequence
}

/// Opened and left alone, the page shows the worked example decoded;
/// another ID typed in its place is decoded in turn.
#[tokio::test]
async fn the_decode_box_starts_with_the_worked_example_decoded() {
    let page = Browser::open("first-hour-decode", Options::default()).await;
    let input = page.find("#decode-id").await;
    assert_eq!(
        input.prop("value").await.unwrap().as_deref(),
        Some(EXAMPLE_ID)
    );
    page.wait_text("#decode-sequence", "4095").await;
    assert_eq!(page.text("#decode-utc").await, "2023-11-14T22:13:20.000Z");
    assert_eq!(page.text("#decode-datacenter").await, "7");
    assert_eq!(page.text("#decode-machine").await, "13");
    page.screenshot("example").await;

    let other = id(1_700_000_001_000, 1, 2, 3).to_string();
    page.fill("#decode-id", &other).await;
    page.wait_text("#decode-decimal", &other).await;
    assert_eq!(page.text("#decode-sequence").await, "3");
    assert_eq!(page.text("#decode-machine").await, "2");
    page.close().await;
}

/// An ID written in hex while "Written in" says decimal: the error names
/// hex, and a button sets the choice that reads it, in English and
/// Spanish; pressing it decodes the ID.
#[tokio::test]
async fn an_id_in_another_encoding_is_met_with_the_choice_that_reads_it() {
    let page = Browser::open("first-hour-suggest", Options::default()).await;
    page.wait_text("#decode-sequence", "4095").await;
    page.fill("#decode-id", EXAMPLE_HEX).await;
    page.wait_text("#decode-suggest", "It reads as hex: Read it as hex")
        .await;
    let error = page.text("#decode-id-error").await;
    assert!(error.contains("is not a decimal integer"), "{error}");
    // The old answer is gone: nothing shown belongs to another ID.
    assert_eq!(page.text("#decode-result").await, "");

    page.choose("#lang", "es").await;
    page.wait_text(
        "#decode-suggest",
        "Se lee en hexadecimal: Leerlo en hexadecimal",
    )
    .await;
    page.screenshot("suggestion-es").await;
    page.choose("#lang", "en").await;

    page.click("#decode-suggest button.suggestion").await;
    page.wait_text("#decode-decimal", EXAMPLE_ID).await;
    let chosen = page
        .find("#decode-encoding")
        .await
        .prop("value")
        .await
        .unwrap();
    assert_eq!(chosen.as_deref(), Some("hex"));
    assert_eq!(page.text("#decode-suggest").await, "");
    assert_eq!(page.text("#decode-id-error").await, "");
    page.close().await;
}

/// Before Generate is pressed, its card says what pressing it does; once
/// IDs are shown, that text gives way to them.
#[tokio::test]
async fn the_empty_new_ids_card_says_what_generate_does() {
    let page = Browser::open("first-hour-generate", Options::default()).await;
    let empty = page.text("#generate-empty").await;
    assert!(
        empty.starts_with("Generate asks this node for that many new IDs"),
        "{empty}"
    );
    page.choose("#lang", "es").await;
    let vacia = page.text("#generate-empty").await;
    assert!(vacia.starts_with("Generar pide a este nodo"), "{vacia}");
    page.choose("#lang", "en").await;

    page.fill("#generate-count", "2").await;
    page.click("#generate-form button[type=submit]").await;
    page.wait_until(
        "two new IDs",
        "return document.querySelectorAll('#generate-list li').length === 2",
    )
    .await;
    assert_eq!(page.text("#generate-empty").await, "");
    page.close().await;
}
