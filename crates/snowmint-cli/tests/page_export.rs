//! The calculator page written by `snowmint page --export DIR` and opened
//! from disk (`file://`) in a real headless Chromium, with no node running:
//! it decodes, encodes, inspects a Discord message link, reads a batch of
//! IDs, and a permalink restores the view, all with the npm package's
//! reader bundled into it; the Generate card says it needs a node. The
//! export command's own refusals are checked too.
//!
//! Expected values come from the formats' definitions (Twitter epoch
//! 1288834974657, 41/5/5/12 bits; Discord's documented ID
//! 175928847299117063 is 2016-04-30T11:18:25.796Z), never from the program.

#[allow(
    dead_code,
    reason = "the browser module serves several test files; this one uses part of it"
)]
mod browser;

use std::process::Command;

use browser::{Browser, Options};
use serde_json::Value;

const TWITTER_EPOCH: u64 = 1_288_834_974_657;
const EXAMPLE_ID: &str = "1724551110457221119";
const EXAMPLE_TIME: &str = "2023-11-14T22:13:20.000Z";
const DISCORD_TIME: &str = "2016-04-30T11:18:25.796Z";
const MESSAGE_LINK: &str =
    "https://discord.com/channels/81384788765712384/381887113391505410/175928847299117063";

/// The page from disk decodes the worked example (with its bits), builds
/// it back from its parts, and reads a Discord message link.
#[tokio::test]
async fn decodes_encodes_and_inspects_from_disk() {
    let page = Browser::open_export("export-decode", Options::default()).await;
    assert!(page.base.starts_with("file://"), "{}", page.base);
    assert_eq!(page.js("return location.protocol").await, "file:");
    page.fill("#decode-id", EXAMPLE_ID).await;
    page.wait_text("#decode-sequence", "4095").await;
    assert_eq!(page.text("#decode-utc").await, EXAMPLE_TIME);
    assert_eq!(page.text("#decode-timestamp-ms").await, "1700000000000");
    assert_eq!(page.text("#decode-datacenter").await, "7");
    assert_eq!(page.text("#decode-machine").await, "13");
    assert_eq!(page.text("#decode-hex").await, "17eed6190fcedfff");
    let timestamp_bits = page.text("#decode-bits .bit-field.timestamp .digits").await;
    assert_eq!(
        timestamp_bits,
        format!("{:041b}", 1_700_000_000_000 - TWITTER_EPOCH)
    );
    assert_eq!(page.text("#facts-widths").await, "41 / 5 / 5 / 12");

    // A hex ID in the decimal box: the choice that reads it is offered.
    page.fill("#decode-id", "17eed6190fcedfff").await;
    page.wait_until(
        "the hex suggestion",
        "return !document.getElementById('decode-suggest').hidden",
    )
    .await;
    page.click("#decode-suggest button.suggestion").await;
    page.wait_text("#decode-decimal", EXAMPLE_ID).await;
    page.choose("#decode-encoding", "decimal").await;

    // Built from its parts.
    page.fill("#encode-timestamp", "1700000000000").await;
    page.fill("#encode-datacenter", "7").await;
    page.fill("#encode-machine", "13").await;
    page.fill("#encode-sequence", "4095").await;
    page.wait_text("#encode-id", EXAMPLE_ID).await;
    // An out-of-range field is refused next to it, as a node refuses it.
    page.fill("#encode-datacenter", "32").await;
    page.wait_text(
        "#encode-datacenter-error",
        "datacenter 32 is out of range (0..=31)",
    )
    .await;

    // Discord's layout: its fields by its names.
    page.choose("#layout", "discord").await;
    page.fill("#decode-id", "175928847299117063").await;
    page.wait_until(
        "Discord's worker shown",
        "return document.getElementById('decode-field-worker')?.textContent === '1'",
    )
    .await;
    assert_eq!(page.text("#decode-field-increment").await, "7");
    assert_eq!(page.text("#decode-utc").await, DISCORD_TIME);

    // A message link: three tokens, the message read as Discord, pinned.
    page.fill("#decode-id", MESSAGE_LINK).await;
    page.wait_until(
        "three tokens read",
        "return document.querySelectorAll('#decode-readings section.token').length === 3",
    )
    .await;
    let message = page
        .js("const r = document.querySelectorAll('#decode-readings section.token')[2].querySelector('.reading'); return [r.dataset.family, r.dataset.plausibility, r.querySelector('.time-utc').textContent]")
        .await;
    assert_eq!(
        message,
        serde_json::json!(["discord", "pinned", DISCORD_TIME])
    );
    assert_eq!(
        page.text("#decode-readings section.token:nth-child(3) .context")
            .await,
        "message in a Discord link"
    );
    let markup = page
        .js("return document.querySelector('#decode-markup-rows li[data-style=R] code').textContent")
        .await;
    assert_eq!(markup, "<t:1462015105:R>");

    // Nothing was fetched from a server: every file came from disk.
    let schemes = page
        .js("return performance.getEntriesByType('resource').map(e => new URL(e.name).protocol)")
        .await;
    for scheme in schemes.as_array().unwrap() {
        assert_eq!(scheme.as_str(), Some("file:"), "a request left the disk");
    }
    page.screenshot("decode").await;
    page.close().await;
}

/// A batch of IDs read from disk: sorted by time, with the time between
/// neighbours.
#[tokio::test]
async fn a_batch_is_read_from_disk() {
    let page = Browser::open_export("export-batch", Options::default()).await;
    // Three IDs one second apart (datacenter 0, machine 0, sequence 0),
    // given out of order.
    let id = |unix_ms: u64| ((unix_ms - TWITTER_EPOCH) << 22).to_string();
    let text = [
        id(1_700_000_002_000),
        id(1_700_000_000_000),
        id(1_700_000_001_000),
    ]
    .join("\n");
    page.js(&format!(
        "document.getElementById('batch-text').value = {}; return true",
        Value::from(text)
    ))
    .await;
    page.click("#batch-form button[type=submit]").await;
    page.wait_until(
        "three rows",
        "return document.querySelectorAll('#batch-rows tr').length === 3",
    )
    .await;
    let rows = page
        .js("return [...document.querySelectorAll('#batch-rows tr')].map(r => [r.dataset.input, r.querySelector('.time-utc').textContent, r.querySelector('.delta').textContent])")
        .await;
    let rows: Vec<(String, String, String)> = serde_json::from_value(rows).unwrap();
    assert_eq!(
        rows,
        [
            (
                id(1_700_000_000_000),
                "2023-11-14T22:13:20.000Z".to_owned(),
                String::new()
            ),
            (
                id(1_700_000_001_000),
                "2023-11-14T22:13:21.000Z".to_owned(),
                "1 second".to_owned()
            ),
            (
                id(1_700_000_002_000),
                "2023-11-14T22:13:22.000Z".to_owned(),
                "1 second".to_owned()
            ),
        ]
    );
    assert_eq!(
        page.text("#batch-status").await,
        "3 IDs found, 3 with a time; sorted by time."
    );
    page.close().await;
}

/// The page's link restores its view from disk too, in either language.
#[tokio::test]
async fn a_permalink_restores_the_view_from_disk() {
    let page = Browser::open_export("export-share", Options::default()).await;
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
    assert!(shared.starts_with("file://"), "{shared}");
    page.js("localStorage.clear(); return true").await;
    let link = shared.replace("lang=en", "lang=es");
    page.client.goto("about:blank").await.unwrap();
    page.client.goto(&link).await.unwrap();
    page.wait_text("#decode-title", "Descifrar un ID").await;
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
        "fijado"
    );
    // 11:18:25.796 UTC is 07:18:25.796 in New York in summer (written
    // with a decimal comma in Spanish).
    let zoned = page
        .text("#decode-readings section.token:nth-child(3) .time-zone")
        .await;
    assert!(zoned.contains("07:18:25,796"), "{zoned}");
    page.close().await;
}

/// With no node, the Generate card says it needs one, in both languages,
/// and its button asks nothing.
#[tokio::test]
async fn generate_says_it_needs_a_node() {
    let page = Browser::open_export("export-generate", Options::default()).await;
    let said = page.text("#generate-nodeless").await;
    assert!(
        said.starts_with("New IDs come from a node, and this page was opened from disk"),
        "{said}"
    );
    assert_eq!(page.text("#generate-empty").await, "");
    assert_eq!(
        page.js("return document.querySelector('#generate-form button[type=submit]').disabled")
            .await,
        Value::Bool(true)
    );
    page.choose("#lang", "es").await;
    let dicho = page.text("#generate-nodeless").await;
    assert!(
        dicho.starts_with("Los IDs nuevos los crea un nodo"),
        "{dicho}"
    );
    assert!(
        page.js("return document.querySelector('footer').hidden")
            .await
            .as_bool()
            .unwrap()
    );
    page.screenshot("generate").await;
    page.close().await;
}

/// `snowmint page --export` refuses a directory that holds files unless
/// `--force`, and a file in place of the directory.
#[test]
fn export_refuses_a_directory_with_files_unless_forced() {
    let home = snowmint_test_support::temp::temp_dir("page-export-refusal");
    let dir = home.path().join("page");
    let export = |extra: &[&str]| {
        Command::new(env!("CARGO_BIN_EXE_snowmint"))
            .arg("page")
            .arg("--export")
            .arg(&dir)
            .args(extra)
            .output()
            .expect("running snowmint page")
    };
    let first = export(&[]);
    assert!(first.status.success(), "{first:?}");
    assert_eq!(
        std::fs::read(dir.join("index.html")).unwrap(),
        snowmint_server::page::ASSETS[0].body
    );
    assert!(dir.join("assets/page.js").is_file());

    std::fs::write(dir.join("notes.txt"), "mine").unwrap();
    let refused = export(&[]);
    assert_eq!(refused.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert!(
        stderr.starts_with(&format!(
            "error: {} is not empty: give a new or empty directory, or --force",
            dir.display()
        )),
        "{stderr}"
    );
    let forced = export(&["--force"]);
    assert!(forced.status.success(), "{forced:?}");
    assert_eq!(
        std::fs::read_to_string(dir.join("notes.txt")).unwrap(),
        "mine"
    );

    let file = home.path().join("a-file");
    std::fs::write(&file, "x").unwrap();
    let refused = Command::new(env!("CARGO_BIN_EXE_snowmint"))
        .args(["page", "--export"])
        .arg(&file)
        .output()
        .unwrap();
    assert_eq!(refused.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&refused.stderr).contains("is not a directory"),
        "{refused:?}"
    );
}
