//! Discord's message markup (its developer documentation, "Message
//! Formatting"): mentions, emoji and commands carry IDs; `<t:…>` carries
//! a time.
//!
//! | markup | token |
//! |---|---|
//! | `<@ID>`, `<@!ID>` | a user |
//! | `<#ID>` | a channel |
//! | `<@&ID>` | a role |
//! | `<:NAME:ID>`, `<a:NAME:ID>` | a custom emoji, animated with `a` |
//! | `</NAME:ID>` (a name of up to three words) | a slash command |
//! | `<t:UNIX>`, `<t:UNIX:STYLE>` | a time in Unix seconds, not an ID |

use super::scan::{Found, Shape, Written, ascii};

/// The longest markup read: a command of three 32-character words and a
/// 20-digit ID fit.
pub(crate) const MAX_MARKUP: usize = 128;

/// The timestamp styles Discord documents: `t T d D f F s S R`.
pub const TIMESTAMP_STYLES: &str = "tTdDfFsSR";

/// Reads markup at `at` (a `<`); the token and where the markup ends.
pub(crate) fn read(text: &[u8], at: usize) -> Option<(Found<'_>, usize)> {
    let window = &text[at..text.len().min(at + MAX_MARKUP)];
    let close = window.iter().position(|&b| b == b'>')?;
    let inner = &window[1..close];
    let end = at + close + 1;
    let (kind, rest): (Kind, &[u8]) = match inner {
        [b'@', b'!', rest @ ..] => (Kind::Id("user mention"), rest),
        [b'@', b'&', rest @ ..] => (Kind::Id("role mention"), rest),
        [b'@', rest @ ..] => (Kind::Id("user mention"), rest),
        [b'#', rest @ ..] => (Kind::Id("channel mention"), rest),
        [b't', b':', rest @ ..] => (Kind::Time, rest),
        [b'a', b':', rest @ ..] => (
            Kind::Id("animated custom emoji"),
            named(rest, is_emoji_char)?,
        ),
        [b':', rest @ ..] => (Kind::Id("custom emoji"), named(rest, is_emoji_char)?),
        [b'/', rest @ ..] => (
            Kind::Id("slash command mention"),
            named(rest, is_command_char)?,
        ),
        _ => return None,
    };
    let start = end - 1 - rest.len();
    match kind {
        Kind::Id(context) => {
            let value = digits(rest)?;
            let found = Found {
                text: ascii(rest),
                span: start..end - 1,
                context: Some(context),
                pin: Some("discord"),
                shapes: vec![Shape::Integer {
                    value,
                    written: Written::Decimal,
                }],
            };
            Some((found, end))
        }
        Kind::Time => {
            let (number, style) = match rest {
                [number @ .., b':', style] => (number, Some(char::from(*style))),
                number => (number, None),
            };
            if style.is_some_and(|style| !TIMESTAMP_STYLES.contains(style)) {
                return None;
            }
            let (negative, magnitude) = match number {
                [b'-', magnitude @ ..] => (true, magnitude),
                magnitude => (false, magnitude),
            };
            let magnitude = i64::try_from(digits(magnitude)?).ok()?;
            let unix_seconds = if negative { -magnitude } else { magnitude };
            let found = Found {
                text: ascii(&text[at..end]),
                span: at..end,
                context: Some("Discord timestamp markup"),
                pin: None,
                shapes: vec![Shape::DiscordTime {
                    unix_seconds,
                    style,
                }],
            };
            Some((found, end))
        }
    }
}

enum Kind {
    /// An ID, and what it names.
    Id(&'static str),
    /// `<t:…>`.
    Time,
}

/// `NAME:REST`, with a name of 1 to 100 characters of `class`; REST.
fn named(text: &[u8], class: fn(u8) -> bool) -> Option<&[u8]> {
    let colon = text.iter().position(|&b| b == b':')?;
    let name = &text[..colon];
    (!name.is_empty() && name.iter().all(|&b| class(b))).then_some(&text[colon + 1..])
}

fn is_emoji_char(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_' || b == b'~'
}

/// Slash command names are words of letters, digits, `-` and `_`; a
/// subcommand follows after a space.
fn is_command_char(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b' ')
}

/// 1 to 20 ASCII digits that fit 64 bits.
fn digits(text: &[u8]) -> Option<u64> {
    if text.is_empty() || text.len() > 20 || !text.iter().all(u8::is_ascii_digit) {
        return None;
    }
    ascii(text).parse().ok()
}

#[cfg(test)]
mod tests {
    use super::super::scan::{Shape, scan};

    fn tokens(text: &str) -> Vec<(&str, Option<&str>)> {
        scan(text.as_bytes())
            .map(|found| (found.text, found.context))
            .collect()
    }

    #[test]
    fn every_mention() {
        let id = "175928847299117063";
        for (markup, context) in [
            (format!("<@{id}>"), "user mention"),
            (format!("<@!{id}>"), "user mention"),
            (format!("<#{id}>"), "channel mention"),
            (format!("<@&{id}>"), "role mention"),
            (format!("<:snowflake:{id}>"), "custom emoji"),
            (format!("<a:snow_flake:{id}>"), "animated custom emoji"),
            (format!("</ping:{id}>"), "slash command mention"),
            (format!("</admin ban user:{id}>"), "slash command mention"),
        ] {
            assert_eq!(
                tokens(&format!("hi {markup}!")),
                [(id, Some(context))],
                "{markup}"
            );
        }
    }

    #[test]
    fn timestamps() {
        let found: Vec<_> = scan(b"at <t:1462015105:R> or <t:-1> or <t:1:x>").collect();
        assert_eq!(found.len(), 2);
        assert_eq!(found[0].text, "<t:1462015105:R>");
        assert_eq!(
            found[0].shapes,
            [Shape::DiscordTime {
                unix_seconds: 1_462_015_105,
                style: Some('R')
            }]
        );
        assert_eq!(
            found[1].shapes,
            [Shape::DiscordTime {
                unix_seconds: -1,
                style: None
            }]
        );
    }

    #[test]
    fn broken_markup_is_text() {
        assert_eq!(
            tokens("<@abc> <@> <:x:> <@175928847299117063"),
            [("175928847299117063", None)]
        );
        assert_eq!(tokens(&format!("<@{}>", "1".repeat(21))), []);
    }
}
