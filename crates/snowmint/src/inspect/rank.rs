//! From what a token's text may be to its readings, ranked.
//!
//! - A token found where its family is named (a link's host, Discord's
//!   markup) is read as that family alone, and the reading is pinned.
//! - A time before the family began, or later than a day past now, makes
//!   a reading implausible, and its `why` says which.
//! - The rest are plausible, and all are shown; equals keep the catalog's
//!   order (`twitter` first), then the order of [`Shape`]s.

use std::borrow::Cow;

use super::Inspector;
use super::catalog::SnowflakeFamily;
use super::reading::{Field, Plausibility, Reading, Token};
use super::scan::{Found, Shape, Written};
use super::strings::{Since, TextFamily};
use super::time::{SECOND, Time};

/// How far past now a time may be and still be plausible: clocks that run
/// ahead, and a `now` read a little early.
pub const FUTURE_SLACK_MS: i64 = 86_400_000;

/// Twitter's last sequential ID, from before Snowflake (TweetedAt's
/// `pre_snowflake_last_tweet_id`): IDs below it hold no time.
pub const TWITTER_FIRST_SNOWFLAKE: u64 = 29_700_859_247;

impl Inspector {
    /// The readings of a token the tokenizer found, most plausible first.
    pub fn read(&self, found: &Found<'_>) -> Token {
        self.read_best(found, usize::MAX)
    }

    /// The `count` most plausible readings of a token the tokenizer found,
    /// most plausible first: what [`Inspector::read`] and then
    /// [`Token::keep_best`] give, but the readings left out are only
    /// ranked, their fields and explanations never written.
    ///
    /// # Examples
    ///
    /// ```
    /// use snowmint::inspect::{Inspector, scan};
    ///
    /// let inspector = Inspector::new(1_750_000_000_000);
    /// let found = scan(b"1724551110457221119").next().unwrap();
    /// let mut all = inspector.read(&found);
    /// all.keep_best(2);
    /// assert_eq!(inspector.read_best(&found, 2), all);
    /// ```
    pub fn read_best(&self, found: &Found<'_>, count: usize) -> Token {
        // An integer is read as each family of the catalog.
        let mut drafts = Vec::with_capacity(self.catalog.families().len() + found.shapes.len());
        for shape in &found.shapes {
            self.shape_drafts(found, shape, &mut drafts);
        }
        // A stable sort: equals keep the order they were made in.
        drafts.sort_by_key(|draft| draft.plausibility);
        drafts.truncate(count);
        Token {
            input: found.text.to_owned(),
            span: found.span.clone(),
            context: found.context,
            candidates: drafts.into_iter().map(|draft| self.finish(draft)).collect(),
        }
    }

    fn shape_drafts<'c>(&'c self, found: &Found<'_>, shape: &Shape, out: &mut Vec<Draft<'c>>) {
        let pin = found.pin;
        match shape {
            Shape::Integer { value, written } => {
                let pinned = pin.and_then(|name| self.catalog.family(name));
                let pinned_by = pinned.is_some().then_some(found.context).flatten();
                for family in self.catalog.families() {
                    if pinned.is_some_and(|pinned| pinned.name() != family.name()) {
                        continue;
                    }
                    // Twitter's sequential IDs from before Snowflake hold
                    // no time.
                    let time = if family.name() == "twitter" && *value < TWITTER_FIRST_SNOWFLAKE {
                        None
                    } else {
                        let Some(time) = family.read_time(*value) else {
                            continue;
                        };
                        Some(time)
                    };
                    let what = What::Integer {
                        family,
                        value: *value,
                        written: *written,
                    };
                    out.push(self.judge(
                        family.owned_name(),
                        time,
                        family.since(),
                        pinned_by,
                        what,
                    ));
                }
            }
            Shape::Ulid(id) => out.push(self.text_draft(found, id)),
            Shape::Uuid(id) => out.push(self.text_draft(found, id)),
            Shape::ObjectId(id) => out.push(self.text_draft(found, id)),
            Shape::Ksuid(id) => out.push(self.text_draft(found, id)),
            Shape::Tid(id) => out.push(self.text_draft(found, id)),
            Shape::MisskeyAid(id) => out.push(self.text_draft(found, id)),
            Shape::MisskeyAidx(id) => out.push(self.text_draft(found, id)),
            Shape::Tsid(id) => out.push(self.text_draft(found, id)),
            Shape::DiscordTime {
                unix_seconds,
                style,
            } => {
                let time = Time::from_unix_ns(i128::from(*unix_seconds) * SECOND as i128, SECOND);
                let (letter, name) = style_name(*style);
                out.push(Draft {
                    family: Cow::Borrowed("discord-timestamp"),
                    time: Some(time),
                    plausibility: Plausibility::Pinned,
                    since: None,
                    pinned_by: None,
                    odd: None,
                    what: What::Done {
                        fields: vec![
                            Field::text("style", letter.to_string()),
                            Field::text("style_name", name),
                        ],
                        why: "Discord's timestamp markup: a time, not an ID",
                    },
                });
            }
        }
    }

    fn text_draft<F: TextFamily>(&self, found: &Found<'_>, id: &F) -> Draft<'_> {
        let family = id.family();
        let pinned = found.pin == Some(family);
        let time = id.time();
        let note = if time.is_none() { id.timeless() } else { "" };
        let what = What::Text {
            fields: id.fields(),
            note,
        };
        self.judge(
            Cow::Borrowed(family),
            time,
            id.since(),
            pinned.then_some(found.context).flatten(),
            what,
        )
    }

    /// Ranks a reading: pinned by where it was found, else by its time
    /// against the family's life and now.
    fn judge<'c>(
        &self,
        family: Cow<'static, str>,
        time: Option<Time>,
        since: Since,
        pinned_by: Option<&'static str>,
        what: What<'c>,
    ) -> Draft<'c> {
        let odd = time.and_then(|time| {
            let ms = time.unix_ms();
            if ms < since.unix_ms {
                Some(Odd::Early)
            } else if ms > self.now_ms.saturating_add(FUTURE_SLACK_MS) {
                Some(Odd::Future)
            } else {
                None
            }
        });
        let plausibility = match (pinned_by, odd) {
            (Some(_), _) => Plausibility::Pinned,
            (None, Some(_)) => Plausibility::Implausible,
            (None, None) => Plausibility::Plausible,
        };
        Draft {
            family,
            time,
            plausibility,
            since: Some(since),
            pinned_by,
            odd,
            what,
        }
    }

    /// A ranked reading written out: its fields, and why it ranks where it
    /// does.
    fn finish(&self, draft: Draft<'_>) -> Reading {
        let Draft {
            family,
            time,
            plausibility,
            since,
            pinned_by,
            odd,
            what,
        } = draft;
        let mut why = String::with_capacity(WHY_CAPACITY);
        let fields = match what {
            What::Done { fields, why } => {
                return Reading {
                    family,
                    time,
                    fields,
                    plausibility,
                    why: why.to_owned(),
                };
            }
            What::Text { fields, note } => {
                why.push_str(note);
                fields
            }
            What::Integer {
                family,
                value,
                written,
            } => {
                let id = value.to_string();
                if written != Written::Decimal {
                    why.push_str(written.name());
                    why.push_str(" read as ");
                    why.push_str(&id);
                    why.push_str("; ");
                }
                let mut fields = Vec::with_capacity(1 + family.field_count());
                fields.push(Field::text("id", id));
                if time.is_none() {
                    why.push_str("below 29700859247, where Snowflake began (TweetedAt): a sequential ID from before 2010-11-04, which holds no time");
                } else {
                    family.read_fields(value, &mut fields);
                }
                fields
            }
        };
        if let Some(since) = since {
            self.explain(&mut why, &family, time, since, pinned_by, odd);
        }
        Reading {
            family,
            time,
            fields,
            plausibility,
            why,
        }
    }

    /// Adds to `why` what pinned the reading, or where its time falls
    /// against the family's life and now.
    fn explain(
        &self,
        why: &mut String,
        family: &str,
        time: Option<Time>,
        since: Since,
        pinned_by: Option<&'static str>,
        odd: Option<Odd>,
    ) {
        // Each part after the first is set off by "; ".
        let part = |why: &mut String, head: &[&str], tail: &[&str]| {
            if !why.is_empty() && !why.ends_with("; ") {
                why.push_str("; ");
            }
            for piece in head.iter().chain(tail) {
                why.push_str(piece);
            }
        };
        let mut time_buf = [0; Time::MAX_LEN];
        // What is wrong with the time, in pieces.
        let odd: Option<[&str; 6]> = match (odd, time) {
            (Some(Odd::Early), Some(time)) => {
                let time = time.write_to(&mut time_buf);
                Some([time, " is before ", family, " began (", since.what, ")"])
            }
            (Some(Odd::Future), Some(time)) => {
                let time = time.write_to(&mut time_buf);
                Some([
                    time,
                    " is in the future (now is ",
                    &self.now_text,
                    ")",
                    "",
                    "",
                ])
            }
            _ => None,
        };
        match (pinned_by, odd, time) {
            (Some(context), odd, _) => {
                part(
                    why,
                    &["pinned: found as the ", context, ", so ", family],
                    &[],
                );
                if let Some(odd) = odd {
                    part(why, &["though "], &odd);
                }
            }
            (None, Some(odd), _) => part(why, &["implausible: "], &odd),
            (None, None, Some(_)) => part(
                why,
                &[
                    "plausible: between when ",
                    family,
                    " began (",
                    since.what,
                    ") and now",
                ],
                &[],
            ),
            (None, None, None) => {}
        }
    }
}

/// Room for most explanations, so that one allocation holds them.
const WHY_CAPACITY: usize = 128;

/// A reading ranked but not yet written out.
struct Draft<'c> {
    family: Cow<'static, str>,
    time: Option<Time>,
    plausibility: Plausibility,
    /// When the family began; `None` where the explanation is fixed.
    since: Option<Since>,
    pinned_by: Option<&'static str>,
    odd: Option<Odd>,
    what: What<'c>,
}

/// What a time is odd for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Odd {
    /// Before the family began.
    Early,
    /// Later than a day past now.
    Future,
}

/// What a draft's fields and explanation are made from.
enum What<'c> {
    /// An integer read as a family of the catalog: its fields are read
    /// again when it is written out.
    Integer {
        family: &'c SnowflakeFamily,
        value: u64,
        written: Written,
    },
    /// A string family's reading, and why it has no time (or nothing).
    Text {
        fields: Vec<Field>,
        note: &'static str,
    },
    /// A reading with a fixed explanation.
    Done {
        fields: Vec<Field>,
        why: &'static str,
    },
}

/// A timestamp style's letter and Discord's name for it (`f` when none is
/// given).
fn style_name(style: Option<char>) -> (char, &'static str) {
    let letter = style.unwrap_or('f');
    let name = match letter {
        't' => "short time",
        'T' => "long time",
        'd' => "short date",
        'D' => "long date",
        'F' => "long date and time",
        's' => "short date, short time",
        'S' => "short date, medium time",
        'R' => "relative time",
        _ => "short date and time",
    };
    (letter, name)
}
