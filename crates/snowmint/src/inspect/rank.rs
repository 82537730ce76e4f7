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
use super::reading::{Field, Plausibility, Reading, Token};
use super::scan::{Found, Shape, Written};
use super::strings::{Since, TextFamily};
use super::time::{SECOND, Time};
use crate::time::format_time;

/// How far past now a time may be and still be plausible: clocks that run
/// ahead, and a `now` read a little early.
pub const FUTURE_SLACK_MS: i64 = 86_400_000;

/// Twitter's last sequential ID, from before Snowflake (TweetedAt's
/// `pre_snowflake_last_tweet_id`): IDs below it hold no time.
pub const TWITTER_FIRST_SNOWFLAKE: u64 = 29_700_859_247;

impl Inspector {
    /// The readings of a token the tokenizer found, most plausible first.
    pub fn read(&self, found: &Found<'_>) -> Token {
        let mut candidates = Vec::new();
        for shape in &found.shapes {
            self.shape_readings(found, shape, &mut candidates);
        }
        // A stable sort: equals keep the order they were made in.
        candidates.sort_by_key(|reading| reading.plausibility);
        Token {
            input: found.text.to_owned(),
            span: found.span.clone(),
            context: found.context,
            candidates,
        }
    }

    fn shape_readings(&self, found: &Found<'_>, shape: &Shape, out: &mut Vec<Reading>) {
        let pin = found.pin;
        match shape {
            Shape::Integer { value, written } => {
                let pinned = pin.and_then(|name| self.catalog.family(name));
                for family in self.catalog.families() {
                    if pinned.is_some_and(|pinned| pinned.name() != family.name()) {
                        continue;
                    }
                    let read_as = match written {
                        Written::Decimal => Cow::Borrowed(""),
                        written => Cow::Owned(format!("{} read as {value}; ", written.name())),
                    };
                    let mut fields = vec![Field::text("id", value.to_string())];
                    let (time, why) = if family.name() == "twitter"
                        && *value < TWITTER_FIRST_SNOWFLAKE
                    {
                        let why = "below 29700859247, where Snowflake began (TweetedAt): a sequential ID from before 2010-11-04, which holds no time";
                        (None, why.to_owned())
                    } else {
                        let Some((time, family_fields)) = family.read(*value) else {
                            continue;
                        };
                        fields.extend(family_fields);
                        (Some(time), String::new())
                    };
                    let reading = self.judge(
                        family.owned_name(),
                        time,
                        fields,
                        family.since(),
                        pinned.is_some().then_some(found.context).flatten(),
                        &format!("{read_as}{why}"),
                    );
                    out.push(reading);
                }
            }
            Shape::Ulid(id) => out.push(self.text_reading(found, id)),
            Shape::Uuid(id) => out.push(self.text_reading(found, id)),
            Shape::ObjectId(id) => out.push(self.text_reading(found, id)),
            Shape::Ksuid(id) => out.push(self.text_reading(found, id)),
            Shape::Tid(id) => out.push(self.text_reading(found, id)),
            Shape::MisskeyAid(id) => out.push(self.text_reading(found, id)),
            Shape::MisskeyAidx(id) => out.push(self.text_reading(found, id)),
            Shape::Tsid(id) => out.push(self.text_reading(found, id)),
            Shape::DiscordTime {
                unix_seconds,
                style,
            } => {
                let time = Time::from_unix_ns(i128::from(*unix_seconds) * SECOND as i128, SECOND);
                let (letter, name) = style_name(*style);
                out.push(Reading {
                    family: Cow::Borrowed("discord-timestamp"),
                    time: Some(time),
                    fields: vec![
                        Field::text("style", letter.to_string()),
                        Field::text("style_name", name),
                    ],
                    plausibility: Plausibility::Pinned,
                    why: "Discord's timestamp markup: a time, not an ID".to_owned(),
                });
            }
        }
    }

    fn text_reading<F: TextFamily>(&self, found: &Found<'_>, id: &F) -> Reading {
        let family = id.family();
        let pinned = found.pin == Some(family);
        let time = id.time();
        let note = if time.is_none() { id.timeless() } else { "" };
        self.judge(
            Cow::Borrowed(family),
            time,
            id.fields(),
            id.since(),
            pinned.then_some(found.context).flatten(),
            note,
        )
    }

    /// Ranks a reading: pinned by where it was found, else by its time
    /// against the family's life and now.
    fn judge(
        &self,
        family: Cow<'static, str>,
        time: Option<Time>,
        fields: Vec<Field>,
        since: Since,
        pinned_by: Option<&'static str>,
        note: &str,
    ) -> Reading {
        let mut why = String::from(note);
        let mut push = |part: &str| {
            if !why.is_empty() && !why.ends_with("; ") {
                why.push_str("; ");
            }
            why.push_str(part);
        };
        let odd = time.and_then(|time| self.oddity(&family, time, since));
        let plausibility = match (pinned_by, &odd, time) {
            (Some(context), odd, _) => {
                push(&format!("pinned: found as the {context}, so {family}"));
                if let Some(odd) = odd {
                    push(&format!("though {odd}"));
                }
                Plausibility::Pinned
            }
            (None, Some(odd), _) => {
                push(&format!("implausible: {odd}"));
                Plausibility::Implausible
            }
            (None, None, Some(_)) => {
                push(&format!(
                    "plausible: between when {family} began ({}) and now",
                    since.what
                ));
                Plausibility::Plausible
            }
            (None, None, None) => Plausibility::Plausible,
        };
        Reading {
            family,
            time,
            fields,
            plausibility,
            why,
        }
    }

    /// What is wrong with a time for a family, if anything.
    fn oddity(&self, family: &str, time: Time, since: Since) -> Option<String> {
        let ms = time.unix_ms();
        if ms < since.unix_ms {
            Some(format!("{time} is before {family} began ({})", since.what))
        } else if ms > self.now_ms.saturating_add(FUTURE_SLACK_MS) {
            Some(format!(
                "{time} is in the future (now is {})",
                format_time(self.now_ms)
            ))
        } else {
            None
        }
    }
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
