//! What people are told about `snowmint serve`'s settings is what the code
//! declares and does: `serve --help` and the service guide's settings table are
//! checked against each setting's one declaration
//! (`snowmint_server::config::Setting::spec`), and the declared ranges are
//! the ones the real binary enforces.

use std::time::Duration;

use snowmint_server::config::{DefaultValue, Range, Setting};
use snowmint_test_support::binary::run_to_end;
use snowmint_test_support::temp::temp_dir;

/// The `snowmint` binary under test.
const SNOWMINT: &str = env!("CARGO_BIN_EXE_snowmint");

/// The settings people are shown.
fn shown() -> impl Iterator<Item = Setting> {
    Setting::ALL.iter().copied().filter(|s| !s.is_hidden())
}

/// The settings given as flags (a password is not: it comes from the
/// environment or a file).
fn shown_flags() -> impl Iterator<Item = Setting> {
    shown().filter(|s| s.spec().flag)
}

/// `snowmint serve --help` as the real binary prints it.
fn serve_help() -> String {
    let home = temp_dir("settings-help");
    let output = snowmint_test_support::binary::command(SNOWMINT, home.path(), &["--help"], &[])
        .output()
        .expect("running snowmint serve --help");
    assert!(output.status.success(), "snowmint serve --help failed");
    String::from_utf8(output.stdout).unwrap()
}

/// The options of a help text, each with its wrapped lines joined: `--listen
/// <ADDR> Address to listen on, ...`.
fn help_entries(help: &str) -> Vec<String> {
    let mut entries: Vec<String> = Vec::new();
    for line in help.lines() {
        // The examples under the options are no option's help.
        if line == "Examples:" {
            break;
        }
        let trimmed = line.trim_start();
        let indent = line.len() - trimmed.len();
        if trimmed.is_empty() || indent == 0 {
            continue;
        }
        // An option starts shallow (`  -h, --help`, `      --listen`); its
        // help continues, wrapped, much deeper.
        if trimmed.starts_with('-') && indent <= 6 {
            entries.push(trimmed.to_owned());
        } else if let Some(last) = entries.last_mut() {
            last.push(' ');
            last.push_str(trimmed);
        }
    }
    entries
        .into_iter()
        .map(|entry| entry.split_whitespace().collect::<Vec<_>>().join(" "))
        .collect()
}

/// What the help says of `setting`: its flag, its value, and its help with
/// environment variable, default and range.
fn expected_entry(setting: Setting) -> String {
    let value = match setting.spec().form.value_name() {
        Some(name) => format!(" <{name}>"),
        None => String::new(),
    };
    format!("{}{value} {}", setting.flag(), setting.help_line())
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
}

/// Every setting's flag in `serve --help` says what its declaration says,
/// and the help shows no other setting.
#[test]
fn serve_help_shows_each_setting_as_declared() {
    let help = serve_help();
    let entries = help_entries(&help);
    for setting in shown_flags() {
        let expected = expected_entry(setting);
        assert!(
            entries.contains(&expected),
            "serve --help does not show {} as declared:\nexpected: {expected}\nhelp:\n{help}",
            setting.flag()
        );
    }
    for entry in &entries {
        let flag = entry.split_whitespace().next().unwrap();
        // --check (and its --offline) is what serve does with the
        // settings, not one of them.
        if ["-h,", "-V,", "--check", "--offline"].contains(&flag) {
            continue;
        }
        assert!(
            shown_flags().any(|s| s.flag() == flag),
            "serve --help shows {flag}, which is not a declared setting"
        );
    }
    for setting in Setting::ALL.iter().filter(|s| s.is_hidden()) {
        assert!(
            !help.contains(&setting.flag()),
            "{} is hidden but serve --help shows it",
            setting.flag()
        );
    }
}

/// The service guide's table of settings, made from the declarations.
fn expected_table() -> String {
    let code = |text: &str| format!("`{text}`");
    let mut table = String::from(
        "| flag | environment | file key | default | range |\n|---|---|---|---|---|\n",
    );
    for setting in shown() {
        let spec = setting.spec();
        let flag = match spec.form.value_name() {
            _ if !spec.flag => String::new(),
            Some(name) => code(&format!("{} {name}", setting.flag())),
            None => code(&setting.flag()),
        };
        let key = if spec.in_file {
            code(setting.key())
        } else {
            String::new()
        };
        let default = match spec.default {
            DefaultValue::Value(text) => code(text),
            DefaultValue::Unset(meaning) => meaning.to_owned(),
        };
        let range = match spec.range {
            Some(range @ (Range::Durations { .. } | Range::Integers { .. })) => {
                code(&range.to_string())
            }
            Some(Range::Described(text)) => text.to_owned(),
            None => String::new(),
        };
        table.push_str(&format!(
            "| {flag} | {} | {key} | {default} | {range} |\n",
            code(&setting.env()),
        ));
    }
    table
}

/// The service guide's table of settings ("Configuration") is the one the
/// declarations make.
#[test]
fn the_guides_table_is_the_declared_settings() {
    let guide = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../docs/service.md"
    ))
    .expect("reading docs/service.md");
    let start = guide
        .find("| flag | environment | file key |")
        .expect("docs/service.md has no settings table (| flag | environment | file key | ...)");
    let table: String = guide[start..]
        .lines()
        .take_while(|line| line.starts_with('|'))
        .map(|line| format!("{line}\n"))
        .collect();
    let expected = expected_table();
    assert!(
        table == expected,
        "docs/service.md's settings table differs from the declarations; it should read:\n\n{expected}\nit reads:\n\n{table}"
    );
}

/// Text just outside a declared range, on either side where there is one.
fn outside(range: Range) -> Vec<String> {
    let ms = |d: Duration| format!("{}ms", d.as_millis());
    match range {
        Range::Durations { min, max } => {
            let mut values = vec![ms(max + Duration::from_millis(1))];
            if let Some(below) = min.checked_sub(Duration::from_millis(1)) {
                values.push(ms(below));
            }
            values
        }
        Range::Integers { min, max } => vec![(max + 1).to_string(), (min - 1).to_string()],
        Range::Described(_) => Vec::new(),
    }
}

/// The real binary refuses a value just outside each declared range, with
/// exit code 2 and a message naming that range and the flag.
#[test]
fn declared_ranges_are_the_ones_enforced() {
    let home = temp_dir("settings-ranges");
    let mut checked = 0;
    for &setting in Setting::ALL {
        let Some(range) = setting.spec().range else {
            continue;
        };
        for value in outside(range) {
            let arg = format!("{}={value}", setting.flag());
            let (status, _, stderr) = run_to_end(SNOWMINT, home.path(), &[&arg], &[]);
            assert_eq!(status.code(), Some(2), "serve {arg}: {stderr}");
            let range = format!("({range})");
            assert!(
                stderr.contains(&range) && stderr.contains(&format!("(from {})", setting.flag())),
                "serve {arg} should name the range {range} and the flag: {stderr}"
            );
            checked += 1;
        }
    }
    // clock_max, mark_wait_max, mark_step, request_timeout, claim_ttl and
    // clock_offset_ms are declared with numeric ranges.
    assert!(checked >= 9, "only {checked} values checked");
}
