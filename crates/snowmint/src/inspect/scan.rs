//! The tokenizer: finds every ID-like token in any text, in one pass.
//!
//! It works on bytes, so that any input (invalid UTF-8 included) is read
//! the same way; every token is ASCII. Its work is linear in the text and
//! its memory bounded by the longest link it reads ([`MAX_URL`]).
//!
//! What it finds, in the order it looks:
//!
//! 1. Discord's markup at a `<` (`markup.rs`): mentions, emoji, slash
//!    commands and `<t:…>` times.
//! 2. Links, at the start of a run of URL characters (`url.rs`): the
//!    host, or the path's shape, pins the family.
//! 3. Words, runs of `A-Z a-z 0-9 - _` (the alphabets of every family and
//!    a UUID's dashes): a word is read whole by its length and alphabet
//!    ([`classify`]); one that reads as nothing is read again in its parts
//!    between `-` and `_`.
//!
//! Short numbers and words without digits are everywhere in prose, so in
//! running text a decimal needs at least [`MIN_DIGITS`] digits and the
//! alphabets that spell English words (base58, base36, base62) need a
//! digit. A word that is its line's only content (past spaces and
//! quotes or brackets around it) is *standalone*: it was pasted to be read,
//! and those limits do not apply.

use std::collections::VecDeque;
use std::ops::Range;

use super::markup;
use super::strings::{
    Ksuid, MisskeyAid, MisskeyAidx, ObjectId, Tid, Tsid, Ulid, Uuid, UuidVariant,
};
use super::url;
use crate::encoding::Encoding;

/// The fewest digits a decimal in running text has to have to be read.
pub const MIN_DIGITS: usize = 12;

/// The longest run of URL characters read as a link; a longer one is read
/// as words.
pub const MAX_URL: usize = 4096;

/// The longest word read whole (a UUID's 36 characters).
const MAX_WORD: usize = 36;

/// How an integer was written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Written {
    /// Decimal digits.
    Decimal,
    /// Hex: `0x` and up to 16 digits, or exactly 16 digits.
    Hex,
    /// 13 Crockford base32 digits (snowmint's `base32`, TSID's text).
    Base32,
    /// Base58, Bitcoin's alphabet.
    Base58,
    /// An Instagram shortcode (base64 with `-` and `_`), from a link.
    Shortcode,
}

impl Written {
    /// Its name, for messages.
    pub const fn name(self) -> &'static str {
        match self {
            Written::Decimal => "decimal",
            Written::Hex => "hex",
            Written::Base32 => "base32",
            Written::Base58 => "base58",
            Written::Shortcode => "an Instagram shortcode",
        }
    }
}

/// What a token may be, as its text says (the readings come from these).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Shape {
    /// A 64-bit integer, read as every integer family.
    Integer {
        /// Its value.
        value: u64,
        /// How it was written.
        written: Written,
    },
    /// A ULID.
    Ulid(Ulid),
    /// A UUID.
    Uuid(Uuid),
    /// A MongoDB ObjectId.
    ObjectId(ObjectId),
    /// A KSUID.
    Ksuid(Ksuid),
    /// A Bluesky TID.
    Tid(Tid),
    /// A Misskey aid.
    MisskeyAid(MisskeyAid),
    /// A Misskey aidx.
    MisskeyAidx(MisskeyAidx),
    /// A TSID's 13 characters.
    Tsid(Tsid),
    /// Discord's `<t:unix[:style]>`: a time, not an ID.
    DiscordTime {
        /// Unix seconds.
        unix_seconds: i64,
        /// The style letter, if given.
        style: Option<char>,
    },
}

/// A token the tokenizer found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Found<'t> {
    /// Where it is in the text, in bytes.
    pub span: Range<usize>,
    /// Its text (ASCII).
    pub text: &'t str,
    /// Where it was found, when that says what it is.
    pub context: Option<&'static str>,
    /// The family the place it was found names (`twitter` for an x.com
    /// link, `discord` for a mention, `tid` for a Bluesky post).
    pub pin: Option<&'static str>,
    /// What its text may be; never empty.
    pub shapes: Vec<Shape>,
}

/// Finds the tokens of a text; see the module's docs.
///
/// # Examples
///
/// ```
/// use snowmint::inspect::scan;
///
/// let text = "see https://x.com/jack/status/20 and <@175928847299117063>";
/// let found: Vec<_> = scan(text.as_bytes()).map(|f| (f.text, f.pin)).collect();
/// assert_eq!(found, [("20", Some("twitter")), ("175928847299117063", Some("discord"))]);
/// ```
pub fn scan(text: &[u8]) -> Scanner<'_> {
    Scanner {
        text,
        at: 0,
        part_end: 0,
        line_end: 0,
        line: 0..0,
        started: false,
        next_close: None,
        pending: VecDeque::new(),
    }
}

/// The iterator [`scan`] returns.
#[derive(Debug, Clone)]
pub struct Scanner<'t> {
    text: &'t [u8],
    /// Where to look next.
    at: usize,
    /// The end of a word that read as nothing whole, read in parts up to
    /// here.
    part_end: usize,
    /// The end of the line `at` is in (its `\n` or the text's end).
    line_end: usize,
    /// The line's content past spaces, quotes and brackets: a word that is
    /// all of it is standalone.
    line: Range<usize>,
    started: bool,
    /// Where the next `>` at or after `at` is (the text's length for none),
    /// once looked for: markup is read only when one is near, so a text of
    /// many `<` costs no more than one pass.
    next_close: Option<usize>,
    /// Tokens of a link, handed out one by one.
    pending: VecDeque<Found<'t>>,
}

impl<'t> Iterator for Scanner<'t> {
    type Item = Found<'t>;

    fn next(&mut self) -> Option<Found<'t>> {
        loop {
            if let Some(found) = self.pending.pop_front() {
                return Some(found);
            }
            let text = self.text;
            let at = self.at;
            let &b = text.get(at)?;
            self.track_line();
            if at < self.part_end {
                if b.is_ascii_alphanumeric() {
                    let end = run(text, at, u8::is_ascii_alphanumeric);
                    self.at = end;
                    if let Some(found) = self.word(at..end, false) {
                        return Some(found);
                    }
                } else {
                    self.at += 1;
                }
                continue;
            }
            if b == b'<'
                && self.close_near(at)
                && let Some((found, end)) = markup::read(text, at)
            {
                self.at = end;
                return Some(found);
            }
            let after = |class: fn(&u8) -> bool| at == 0 || !class(&text[at - 1]);
            if is_url_char(&b) && after(is_url_char) {
                let end = run(text, at, is_url_char);
                if end - at <= MAX_URL
                    && let Some(tokens) = url::read(text, at..end)
                {
                    self.pending.extend(tokens);
                    self.at = end;
                    continue;
                }
            }
            if is_word_char(&b) && after(is_word_char) {
                let end = run(text, at, is_word_char);
                let standalone = at == self.line.start && end == self.line.end;
                if let Some(found) = self.word(at..end, standalone) {
                    self.at = end;
                    return Some(found);
                }
                if text[at..end].iter().any(|c| matches!(c, b'-' | b'_')) {
                    // Read again in parts, from here.
                    self.part_end = end;
                } else {
                    self.at = end;
                }
                continue;
            }
            self.at += 1;
        }
    }
}

impl<'t> Scanner<'t> {
    /// Moves the line to the one `at` is in: each line is looked at once.
    fn track_line(&mut self) {
        while !self.started || self.at >= self.line_end {
            let start = if self.started { self.line_end + 1 } else { 0 };
            self.started = true;
            let end = self.text[start.min(self.text.len())..]
                .iter()
                .position(|&b| b == b'\n')
                .map_or(self.text.len(), |p| start + p);
            self.line_end = end;
            self.line = trimmed(self.text, start..end);
        }
    }

    /// Whether a `>` follows `at` closely enough to end markup.
    fn close_near(&mut self, at: usize) -> bool {
        let close = match self.next_close {
            Some(close) if close >= at => close,
            _ => {
                let close = self.text[at..]
                    .iter()
                    .position(|&b| b == b'>')
                    .map_or(self.text.len(), |p| at + p);
                self.next_close = Some(close);
                close
            }
        };
        close < self.text.len() && close - at < markup::MAX_MARKUP
    }

    fn word(&self, span: Range<usize>, standalone: bool) -> Option<Found<'t>> {
        let bytes = &self.text[span.clone()];
        let shapes = classify(bytes, standalone);
        if shapes.is_empty() {
            return None;
        }
        Some(Found {
            text: ascii(bytes),
            span,
            context: None,
            pin: None,
            shapes,
        })
    }
}

/// The end of the run of `class` bytes from `at`.
pub(crate) fn run(text: &[u8], at: usize, class: fn(&u8) -> bool) -> usize {
    text[at..]
        .iter()
        .position(|b| !class(b))
        .map_or(text.len(), |p| at + p)
}

/// Bytes of the text known to be ASCII as a `str`.
pub(crate) fn ascii(bytes: &[u8]) -> &str {
    std::str::from_utf8(bytes).unwrap_or_default()
}

/// A character of a word: the alphabets of every family, and a UUID's
/// dashes.
fn is_word_char(b: &u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_')
}

/// A character of a link, as far as the tokenizer cares: no quotes,
/// brackets or spaces, which surround links in text.
pub(crate) fn is_url_char(b: &u8) -> bool {
    URL_CHARS[usize::from(*b)]
}

/// [`is_url_char`] for every byte: a lookup, since it is asked of nearly
/// every byte of a text.
const URL_CHARS: [bool; 256] = {
    let mut table = [false; 256];
    let mut b = 0;
    while b < 256 {
        let c = b as u8;
        table[b] = c.is_ascii_alphanumeric();
        b += 1;
    }
    let others = b"-._~:/?#@!$&*+,;=%";
    let mut at = 0;
    while at < others.len() {
        table[others[at] as usize] = true;
        at += 1;
    }
    table
};

/// The range of `line` past spaces, then past quotes and brackets around
/// what is left.
fn trimmed(text: &[u8], line: Range<usize>) -> Range<usize> {
    let (mut start, mut end) = (line.start, line.end);
    while start < end && text[start].is_ascii_whitespace() {
        start += 1;
    }
    while end > start && text[end - 1].is_ascii_whitespace() {
        end -= 1;
    }
    while end - start >= 2 {
        let pair = (text[start], text[end - 1]);
        let wraps = matches!(
            pair,
            (b'"', b'"')
                | (b'\'', b'\'')
                | (b'`', b'`')
                | (b'(', b')')
                | (b'[', b']')
                | (b'{', b'}')
        );
        if !wraps {
            break;
        }
        start += 1;
        end -= 1;
    }
    start..end
}

/// Every shape a word's text can be; see the module's docs for what a
/// standalone word may be besides.
///
/// # Examples
///
/// ```
/// use snowmint::inspect::{Shape, Written, classify};
///
/// let shapes = classify(b"175928847299117063", false);
/// assert_eq!(shapes, [Shape::Integer { value: 175928847299117063, written: Written::Decimal }]);
/// assert!(classify(b"2024", false).is_empty());
/// assert_eq!(classify(b"2024", true).len(), 1);
/// ```
pub fn classify(word: &[u8], standalone: bool) -> Vec<Shape> {
    let mut shapes = Vec::new();
    let len = word.len();
    if len == 0 || len > MAX_WORD {
        return shapes;
    }
    let text = ascii(word);
    let digits = word.iter().filter(|b| b.is_ascii_digit()).count();
    let all_digits = digits == len;
    // The alphabets that spell English words need a digit in running text.
    let wordy_ok = digits > 0 || standalone;
    if all_digits
        && (len >= MIN_DIGITS || standalone)
        && let Ok(value) = text.parse::<u64>()
    {
        shapes.push(Shape::Integer {
            value,
            written: Written::Decimal,
        });
    }
    // A `0x` that is not followed by hex is no hex prefix: Crockford base32
    // of a 64-bit integer below 2^60 starts with `0`, and may go on with
    // `X` (`0X4P5A9Y9BC00`).
    if let Some(hex) = text.strip_prefix("0x").or_else(|| text.strip_prefix("0X"))
        && (1..=16).contains(&hex.len())
        && let Ok(value) = u64::from_str_radix(hex, 16)
    {
        shapes.push(Shape::Integer {
            value,
            written: Written::Hex,
        });
        return shapes;
    }
    let all_hex = word.iter().all(u8::is_ascii_hexdigit);
    match len {
        36 => {
            if let Ok(uuid) = text.parse::<Uuid>() {
                shapes.push(Shape::Uuid(uuid));
            }
        }
        // Without dashes, only an RFC 9562 UUID of a known version: 32 hex
        // digits are as often a hash.
        32 => {
            if let Ok(uuid) = text.parse::<Uuid>()
                && uuid.variant() == UuidVariant::Rfc9562
                && (1..=8).contains(&uuid.version())
            {
                shapes.push(Shape::Uuid(uuid));
            }
        }
        27 if wordy_ok => {
            if let Ok(ksuid) = text.parse::<Ksuid>() {
                shapes.push(Shape::Ksuid(ksuid));
            }
        }
        26 => {
            if let Ok(ulid) = text.parse::<Ulid>() {
                shapes.push(Shape::Ulid(ulid));
            }
        }
        24 if all_hex => {
            if let Ok(id) = text.parse::<ObjectId>() {
                shapes.push(Shape::ObjectId(id));
            }
        }
        16 if !all_digits => {
            if all_hex && let Ok(value) = u64::from_str_radix(text, 16) {
                shapes.push(Shape::Integer {
                    value,
                    written: Written::Hex,
                });
            }
            if wordy_ok && let Ok(aidx) = text.parse::<MisskeyAidx>() {
                shapes.push(Shape::MisskeyAidx(aidx));
            }
        }
        13 if !all_digits => {
            if let Ok(tid) = text.parse::<Tid>() {
                shapes.push(Shape::Tid(tid));
            }
            if wordy_ok && let Ok(tsid) = text.parse::<Tsid>() {
                shapes.push(Shape::Tsid(tsid));
                // snowmint's own base32 is the same text.
                shapes.push(Shape::Integer {
                    value: tsid.as_u64(),
                    written: Written::Base32,
                });
            }
        }
        10 if !all_digits && wordy_ok => {
            if let Ok(aid) = text.parse::<MisskeyAid>() {
                shapes.push(Shape::MisskeyAid(aid));
            }
        }
        _ => {}
    }
    let base58_len = if standalone { 8..=11 } else { 10..=11 };
    if !all_digits
        && base58_len.contains(&len)
        && (digits > 0 || standalone)
        && word.iter().any(u8::is_ascii_alphabetic)
        && let Ok(value) = Encoding::Base58.parse_u64(text)
    {
        shapes.push(Shape::Integer {
            value,
            written: Written::Base58,
        });
    }
    shapes
}

#[cfg(test)]
mod tests {
    use super::*;

    fn texts(text: &str) -> Vec<&str> {
        scan(text.as_bytes()).map(|found| found.text).collect()
    }

    #[test]
    fn words_in_running_text() {
        assert_eq!(
            texts("id=1724551110457221119, ulid 01ARZ3NDEKTSV4RRFFQ69G5FAV; year 2024"),
            ["1724551110457221119", "01ARZ3NDEKTSV4RRFFQ69G5FAV"]
        );
        assert_eq!(texts("\"1724551110457221119\""), ["1724551110457221119"]);
        assert_eq!(texts("msg-1724551110457221119_x"), ["1724551110457221119"]);
        assert_eq!(
            texts("{550e8400-e29b-41d4-a716-446655440000}"),
            ["550e8400-e29b-41d4-a716-446655440000"]
        );
        assert_eq!(
            texts("the quick brown fox, everything, understand"),
            [] as [&str; 0]
        );
    }

    #[test]
    fn a_standalone_word_relaxes_the_limits() {
        assert_eq!(texts("  '42'  "), ["42"]);
        assert_eq!(texts("42 43"), [] as [&str; 0]);
        assert_eq!(texts("line one\n  [12345]\n"), ["12345"]);
    }

    #[test]
    fn spans_point_into_the_text() {
        let text = "é 1724551110457221119 é";
        for found in scan(text.as_bytes()) {
            assert_eq!(&text[found.span.clone()], found.text);
        }
    }

    #[test]
    fn url_characters_are_the_alphanumerics_and_the_marks() {
        for b in 0..=u8::MAX {
            let expected = b.is_ascii_alphanumeric() || b"-._~:/?#@!$&*+,;=%".contains(&b);
            assert_eq!(is_url_char(&b), expected, "{b}");
        }
    }

    #[test]
    fn base32_that_starts_with_0x_is_not_hex() {
        // 1050118621198921728 in Crockford base32, and in hex.
        let shapes = classify(b"0X4P5A9Y9BC00", false);
        assert!(shapes.contains(&Shape::Integer {
            value: 1_050_118_621_198_921_728,
            written: Written::Base32
        }));
        assert_eq!(
            classify(b"0xe92c5527c95b000", false),
            [Shape::Integer {
                value: 1_050_118_621_198_921_728,
                written: Written::Hex
            }]
        );
    }

    #[test]
    fn numbers_past_64_bits_are_not_integers() {
        assert!(classify(b"18446744073709551615", false).len() == 1);
        assert!(classify(b"18446744073709551616", false).is_empty());
        assert!(classify(b"123456789012345678901234567890", false).is_empty());
    }
}
