//! Links whose host, or whose path's shape, says which family their IDs
//! are: the host pins the family.
//!
//! | link | tokens | family |
//! |---|---|---|
//! | `x.com` or `twitter.com` (and their `mobile.`, `www.` and embed mirrors): `/USER/status/ID`, `/i/web/status/ID` | the post | `twitter` |
//! | `discord.com` (`ptb.`, `canary.`, `discordapp.com`): `/channels/SERVER/CHANNEL/MESSAGE`, `@me` for direct messages | each ID, the last being the message | `discord` |
//! | Discord's CDN (`cdn.discordapp.com`, `media.discordapp.net`): `/attachments/CHANNEL/ID/…`, `/emojis/ID.png`, `/avatars/USER/…` | each ID | `discord` |
//! | any host: `/@USER/ID`, `/web/statuses/ID`, `/users/USER/statuses/ID`, `/api/v1/statuses/ID` | the status | `mastodon` |
//! | `bsky.app`: `/profile/HANDLE/post/TID`; `at://AUTHORITY/COLLECTION/TID` | the record key | `tid` |
//! | `instagram.com`: `/p/CODE`, `/reel/CODE`, `/tv/CODE` | the shortcode, read as the media ID | `instagram` |
//! | any host: `/notes/ID` | the note | Misskey's (`misskey-aid`, `misskey-aidx`) |

use std::ops::Range;

use super::scan::{Found, Shape, Written, ascii, classify};

/// Reads the run of URL characters `run` of `text` as a link; `None` when
/// it is not one whose IDs are known (its words are then read as any
/// text's).
pub(crate) fn read(text: &[u8], run: Range<usize>) -> Option<Vec<Found<'_>>> {
    let mut end = run.end;
    // Punctuation that ends a sentence is not part of the link.
    while end > run.start && b".,;:!?'*".contains(&text[end - 1]) {
        end -= 1;
    }
    let link = Link::new(text, run.start..end)?;
    let mut found = Vec::new();
    link.tokens(&mut found);
    (!found.is_empty()).then_some(found)
}

/// A link cut into host and path segments.
struct Link<'t> {
    text: &'t [u8],
    /// `at://` rather than `http(s)://` or no scheme.
    at_uri: bool,
    /// The host, lower-cased, without `www.` and a port.
    host: String,
    /// The path's segments, as ranges of the text.
    segments: Vec<Range<usize>>,
}

impl<'t> Link<'t> {
    fn new(text: &'t [u8], span: Range<usize>) -> Option<Link<'t>> {
        let bytes = &text[span.clone()];
        let scheme = |prefix: &[u8]| {
            bytes.len() > prefix.len() && bytes[..prefix.len()].eq_ignore_ascii_case(prefix)
        };
        let (at_uri, skip) = if scheme(b"https://") {
            (false, 8)
        } else if scheme(b"http://") {
            (false, 7)
        } else if scheme(b"at://") {
            (true, 5)
        } else {
            (false, 0)
        };
        let start = span.start + skip;
        let rest = &text[start..span.end];
        let host_len = rest.iter().position(|&b| b == b'/')?;
        let host = &rest[..host_len];
        if !at_uri {
            // A domain: letters, digits, dots and dashes, with a dot and a
            // port at most.
            let name = host.split(|&b| b == b':').next().unwrap_or_default();
            let domain = !name.is_empty()
                && name.contains(&b'.')
                && name
                    .iter()
                    .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'-'));
            if !domain || (skip == 0 && !name.contains(&b'.')) {
                return None;
            }
        }
        let mut host = ascii(host).to_ascii_lowercase();
        if let Some(colon) = host.find(':')
            && !at_uri
        {
            host.truncate(colon);
        }
        for prefix in ["www.", "mobile.", "m."] {
            if let Some(rest) = host.strip_prefix(prefix) {
                host = rest.to_owned();
            }
        }
        // The path ends at the query or the fragment.
        let path_start = start + host_len;
        let path_end = text[path_start..span.end]
            .iter()
            .position(|&b| b == b'?' || b == b'#')
            .map_or(span.end, |p| path_start + p);
        let mut segments = Vec::new();
        let mut at = path_start;
        while at < path_end {
            let end = text[at + 1..path_end]
                .iter()
                .position(|&b| b == b'/')
                .map_or(path_end, |p| at + 1 + p);
            if end > at + 1 {
                segments.push(at + 1..end);
            }
            at = end;
        }
        Some(Link {
            text,
            at_uri,
            host,
            segments,
        })
    }

    fn segment(&self, index: usize) -> Option<&'t str> {
        let range = self.segments.get(index)?;
        Some(ascii(&self.text[range.clone()]))
    }

    fn is(&self, index: usize, name: &str) -> bool {
        self.segment(index)
            .is_some_and(|segment| segment.eq_ignore_ascii_case(name))
    }

    fn host_is(&self, domains: &[&str]) -> bool {
        domains.iter().any(|domain| {
            self.host == *domain
                || self
                    .host
                    .strip_suffix(domain)
                    .is_some_and(|sub| sub.ends_with('.'))
        })
    }

    fn tokens(&self, found: &mut Vec<Found<'t>>) {
        if self.at_uri {
            // at://AUTHORITY/COLLECTION/RKEY: the record key of most
            // collections (posts, likes, reposts) is a TID.
            if self.segments.len() >= 2 {
                self.text_token(1, "tid", "record key of an at:// URI", found);
            }
        } else if self.host_is(&[
            "x.com",
            "twitter.com",
            "fxtwitter.com",
            "vxtwitter.com",
            "fixupx.com",
            "fixvx.com",
            "nitter.net",
        ]) {
            // `/USER/status/ID`, `/i/status/ID`, `/i/web/status/ID`.
            let at = if self.is(0, "i") && self.is(1, "web") {
                2
            } else {
                1
            };
            if self.is(at, "status") || self.is(at, "statuses") {
                self.number(at + 1, "twitter", "post in an X/Twitter link", found);
            }
        } else if self.host_is(&["discordapp.net", "cdn.discordapp.com", "cdn.discord.com"]) {
            self.discord_cdn(found);
        } else if self.host_is(&["discord.com", "discordapp.com"]) {
            if self.is(0, "channels") {
                let server = !self.is(1, "@me");
                if server {
                    self.number(1, "discord", "server in a Discord link", found);
                }
                self.number(2, "discord", "channel in a Discord link", found);
                self.number(3, "discord", "message in a Discord link", found);
            }
        } else if self.host_is(&["bsky.app"]) {
            if self.is(0, "profile") && self.is(2, "post") {
                self.text_token(3, "tid", "post in a Bluesky link", found);
            }
        } else if self.host_is(&["instagram.com", "instagr.am"]) {
            let kinds = ["p", "reel", "reels", "tv"];
            let at = (0..self.segments.len().min(2))
                .find(|&i| kinds.iter().any(|kind| self.is(i, kind)));
            if let Some(at) = at {
                self.shortcode(at + 1, found);
            }
        } else {
            self.any_host(found);
        }
    }

    /// The paths Mastodon and Misskey use on every host they run on.
    fn any_host(&self, found: &mut Vec<Found<'t>>) {
        let user = |i: usize| {
            self.segment(i)
                .is_some_and(|s| s.starts_with('@') && s.len() > 1)
        };
        let status_at = if user(0) && self.segments.len() == 2 {
            Some(1)
        } else if self.is(0, "web") && (user(1) || self.is(1, "statuses")) {
            Some(2)
        } else if (self.is(0, "users") || (self.is(0, "api") && self.is(1, "v1")))
            && self.is(2, "statuses")
        {
            Some(3)
        } else {
            None
        };
        if let Some(at) = status_at {
            self.number(at, "mastodon", "post in a Mastodon link", found);
        } else if self.is(0, "notes") && self.segments.len() == 2 {
            let range = self.segments[1].clone();
            let word = &self.text[range.clone()];
            let shapes = classify(word, true);
            let pin = match word.len() {
                10 => "misskey-aid",
                16 => "misskey-aidx",
                _ => return,
            };
            if !shapes.is_empty() {
                found.push(Found {
                    text: ascii(word),
                    span: range,
                    context: Some("note in a Misskey link"),
                    pin: Some(pin),
                    shapes,
                });
            }
        }
    }

    /// Every ID of a CDN path, named by the segment before it.
    fn discord_cdn(&self, found: &mut Vec<Found<'t>>) {
        let kind = self.segment(0).unwrap_or_default().to_ascii_lowercase();
        for index in 1..self.segments.len() {
            let context = match (kind.as_str(), index) {
                ("attachments" | "ephemeral-attachments", 1) => "channel in a Discord CDN link",
                ("attachments" | "ephemeral-attachments", 2) => "attachment in a Discord CDN link",
                ("emojis", _) => "emoji in a Discord CDN link",
                ("stickers", _) => "sticker in a Discord CDN link",
                ("avatars" | "users", 1) => "user in a Discord CDN link",
                ("icons" | "splashes" | "banners" | "guilds", 1) => {
                    "server or user in a Discord CDN link"
                }
                _ => "ID in a Discord CDN link",
            };
            // `/emojis/ID.png`: the ID is the name before the extension.
            let range = self.segments[index].clone();
            let digits = self.text[range.clone()]
                .iter()
                .take_while(|b| b.is_ascii_digit())
                .count();
            let rest = &self.text[range.start + digits..range.end];
            if (15..=20).contains(&digits) && (rest.is_empty() || rest[0] == b'.') {
                self.push_number(range.start..range.start + digits, "discord", context, found);
            }
        }
    }

    /// The segment `index`, if it is all digits of a 64-bit number.
    fn number(
        &self,
        index: usize,
        family: &'static str,
        context: &'static str,
        found: &mut Vec<Found<'t>>,
    ) {
        if let Some(range) = self.segments.get(index) {
            self.push_number(range.clone(), family, context, found);
        }
    }

    fn push_number(
        &self,
        range: Range<usize>,
        family: &'static str,
        context: &'static str,
        found: &mut Vec<Found<'t>>,
    ) {
        let text = ascii(&self.text[range.clone()]);
        if !text.bytes().all(|b| b.is_ascii_digit()) {
            return;
        }
        let Ok(value) = text.parse::<u64>() else {
            return;
        };
        found.push(Found {
            text,
            span: range,
            context: Some(context),
            pin: Some(family),
            shapes: vec![Shape::Integer {
                value,
                written: Written::Decimal,
            }],
        });
    }

    /// The segment `index`, read as a word, pinned to a text family.
    fn text_token(
        &self,
        index: usize,
        family: &'static str,
        context: &'static str,
        found: &mut Vec<Found<'t>>,
    ) {
        let Some(range) = self.segments.get(index).cloned() else {
            return;
        };
        let word = &self.text[range.clone()];
        let shapes = classify(word, true);
        if !shapes.is_empty() {
            found.push(Found {
                text: ascii(word),
                span: range,
                context: Some(context),
                pin: Some(family),
                shapes,
            });
        }
    }

    /// An Instagram shortcode: base64 (`A-Z a-z 0-9 - _`) of the media ID.
    fn shortcode(&self, index: usize, found: &mut Vec<Found<'t>>) {
        let Some(range) = self.segments.get(index).cloned() else {
            return;
        };
        let code = &self.text[range.clone()];
        if code.is_empty() || code.len() > 11 {
            return;
        }
        let mut value: u64 = 0;
        for &b in code {
            let digit = match b {
                b'A'..=b'Z' => b - b'A',
                b'a'..=b'z' => b - b'a' + 26,
                b'0'..=b'9' => b - b'0' + 52,
                b'-' => 62,
                b'_' => 63,
                _ => return,
            };
            match value
                .checked_mul(64)
                .and_then(|v| v.checked_add(u64::from(digit)))
            {
                Some(v) => value = v,
                None => return,
            }
        }
        found.push(Found {
            text: ascii(code),
            span: range,
            context: Some("post in an Instagram link"),
            pin: Some("instagram"),
            shapes: vec![Shape::Integer {
                value,
                written: Written::Shortcode,
            }],
        });
    }
}

#[cfg(test)]
mod tests {
    use super::super::scan::scan;

    fn tokens(text: &str) -> Vec<(&str, Option<&str>, Option<&str>)> {
        scan(text.as_bytes())
            .map(|found| (found.text, found.pin, found.context))
            .collect()
    }

    #[test]
    fn twitter_links() {
        for link in [
            "https://x.com/jack/status/20",
            "https://twitter.com/jack/status/20?s=20",
            "x.com/jack/status/20/photo/1",
            "https://mobile.twitter.com/i/web/status/20.",
            "https://fxtwitter.com/jack/statuses/20",
        ] {
            assert_eq!(
                tokens(link),
                [("20", Some("twitter"), Some("post in an X/Twitter link"))],
                "{link}"
            );
        }
        assert_eq!(tokens("https://x.com/jack/likes"), []);
    }

    #[test]
    fn discord_links() {
        let link =
            "https://discord.com/channels/81384788765712384/381887113391505410/382016263479541760";
        let found = tokens(link);
        assert_eq!(found.len(), 3);
        assert_eq!(found[2].0, "382016263479541760");
        assert_eq!(found[2].2, Some("message in a Discord link"));
        let dm =
            tokens("https://canary.discord.com/channels/@me/381887113391505410/382016263479541760");
        assert_eq!(dm.len(), 2);
        assert_eq!(dm[0].2, Some("channel in a Discord link"));
        let cdn = tokens(
            "https://cdn.discordapp.com/attachments/381887113391505410/1125458424339771474/image.png?ex=1",
        );
        assert_eq!(
            cdn.iter().map(|t| t.2.unwrap()).collect::<Vec<_>>(),
            [
                "channel in a Discord CDN link",
                "attachment in a Discord CDN link"
            ]
        );
        let emoji = tokens("https://cdn.discordapp.com/emojis/393852367751086090.png");
        assert_eq!(emoji[0].0, "393852367751086090");
    }

    #[test]
    fn mastodon_bluesky_instagram_misskey() {
        let mastodon = tokens("https://mastodon.social/@Gargron/109287326541397004");
        assert_eq!(
            mastodon,
            [(
                "109287326541397004",
                Some("mastodon"),
                Some("post in a Mastodon link")
            )]
        );
        assert_eq!(
            tokens("https://mastodon.social/web/statuses/109287326541397004")[0].1,
            Some("mastodon")
        );
        let bsky = tokens("https://bsky.app/profile/jay.bsky.team/post/3jzfcijpj2z2a");
        assert_eq!(
            bsky,
            [("3jzfcijpj2z2a", Some("tid"), Some("post in a Bluesky link"))]
        );
        let at = tokens("at://did:plc:44ybard66vv44zksje25o7dz/app.bsky.feed.post/3jzfcijpj2z2a");
        assert_eq!(at[0].1, Some("tid"));
        let instagram = tokens("https://www.instagram.com/p/CK1JqHqFVOy/");
        assert_eq!(
            instagram,
            [(
                "CK1JqHqFVOy",
                Some("instagram"),
                Some("post in an Instagram link")
            )]
        );
        assert_eq!(
            tokens("https://misskey.io/notes/9gkl7xu1f4")[0].1,
            Some("misskey-aid")
        );
    }

    #[test]
    fn other_links_are_read_as_words() {
        assert_eq!(
            tokens("https://example.com/items/1724551110457221119"),
            [("1724551110457221119", None, None)]
        );
    }
}
