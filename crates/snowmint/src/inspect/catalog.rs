//! The families of integer IDs the inspector reads a number as: a name and
//! a layout each, taken from the core's presets.

use std::borrow::Cow;

use super::reading::Field;
use super::strings::{Since, date_ms};
use super::time::{MICROSECOND, Time};
use crate::id::SnowflakeId;
use crate::layout::{Layout, Role};

/// One integer family: a name and its layout.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SnowflakeFamily {
    name: Cow<'static, str>,
    layout: Layout,
    since: Since,
    /// The names of the fields a reading shows (every field but the time,
    /// of a width above 0, most significant first), borrowed from the
    /// presets' layouts where a preset has the name: a reading's fields
    /// are then made without copying their names.
    field_names: Vec<Cow<'static, str>>,
}

impl SnowflakeFamily {
    /// A family named `name` whose IDs have `layout`.
    ///
    /// When the family began (what makes an earlier time implausible) is
    /// known for the presets; any other family began at its epoch.
    pub fn new(name: impl Into<Cow<'static, str>>, layout: Layout) -> SnowflakeFamily {
        let name = name.into();
        let since = known_since(&name).unwrap_or(Since {
            unix_ms: layout.epoch_ms(),
            what: "its epoch",
        });
        let field_names = layout
            .fields()
            .iter()
            .filter(|field| field.role() != Role::Time && field.width() > 0)
            .map(|field| static_name(field.name()))
            .collect();
        SnowflakeFamily {
            name,
            layout,
            since,
            field_names,
        }
    }

    /// The family's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Its layout.
    pub fn layout(&self) -> &Layout {
        &self.layout
    }

    pub(crate) fn since(&self) -> Since {
        self.since
    }

    pub(crate) fn owned_name(&self) -> Cow<'static, str> {
        self.name.clone()
    }

    /// When `id` was made in this family's layout, at its unit, or `None`
    /// when the ID is beyond the layout's largest.
    pub(crate) fn read_time(&self, id: u64) -> Option<Time> {
        let parts = self.layout.decode(SnowflakeId::from_u64(id)).ok()?;
        let unit_ns = u64::from(self.layout.unit().as_micros()) * MICROSECOND;
        Some(Time::from_unix_ns(
            i128::from(parts.time_us()) * i128::from(MICROSECOND),
            unit_ns,
        ))
    }

    /// Pushes the fields of `id` in this family's layout onto `fields`:
    /// the layout's own, named as the family names them (Discord's
    /// worker, process and increment). An ID beyond the layout's largest
    /// has none.
    pub(crate) fn read_fields(&self, id: u64, fields: &mut Vec<Field>) {
        let Ok(parts) = self.layout.decode(SnowflakeId::from_u64(id)) else {
            return;
        };
        let values = parts.values().filter(|(field, _)| field.width() > 0);
        for ((_, value), name) in values.zip(&self.field_names) {
            fields.push(Field::number(name.clone(), value));
        }
    }

    /// How many fields [`SnowflakeFamily::read_fields`] pushes.
    pub(crate) fn field_count(&self) -> usize {
        self.field_names.len()
    }
}

/// A field's name, borrowed from a preset's layout when one has it.
fn static_name(name: &str) -> Cow<'static, str> {
    Layout::presets()
        .iter()
        .flat_map(|preset| preset.layout.fields())
        .map(|field| field.name())
        .find(|known| *known == name)
        .map_or_else(|| Cow::Owned(name.to_owned()), Cow::Borrowed)
}

/// When the families snowmint knows by name began: their first IDs in the
/// wild, or the epoch where that is when they began. Every preset is here
/// (a test checks it), so that no preset falls back to "its epoch" where
/// the epoch says nothing (LinkedIn's and TikTok's are 1970's).
fn known_since(name: &str) -> Option<Since> {
    let (unix_ms, what) = match name {
        "twitter" => (
            crate::layout::TWITTER_EPOCH_MS,
            "2010-11-04, Twitter's Snowflake epoch",
        ),
        "discord" => (
            crate::layout::DISCORD_EPOCH_MS,
            "2015-01-01, Discord's epoch",
        ),
        "instagram" => (1_314_220_021_721, "2011-08-24, Instagram's epoch"),
        "mastodon" => (date_ms(2016, 3, 16), "2016-03-16, Mastodon's first release"),
        "sonyflake" => (date_ms(2014, 9, 1), "2014-09-01, Sonyflake's epoch"),
        "sonyflake-v2" => (
            date_ms(2025, 1, 1),
            "2025-01-01, Sonyflake v2's default start",
        ),
        "baidu" => (
            1_463_673_600_000,
            "2016-05-20 in UTC+8, uid-generator's epoch",
        ),
        "hazelcast" => (
            date_ms(2018, 1, 1),
            "2018-01-01, Hazelcast's Flake ID epoch",
        ),
        "tsid" => (date_ms(2020, 1, 1), "2020-01-01, TSID's epoch"),
        "yitter" => (1_582_136_402_000, "2020-02-20, yitter/IdGenerator's epoch"),
        "cosid" | "cosid-safe-js" => (1_577_203_200_000, "2019-12-25 in UTC+8, CosId's epoch"),
        "leaf" => (
            date_ms(2017, 1, 1),
            "2017, when Meituan published Leaf, on Twitter's epoch",
        ),
        "linkedin" => (date_ms(2003, 5, 5), "2003-05-05, LinkedIn's launch"),
        "tiktok" => (
            date_ms(2016, 9, 1),
            "2016-09, when ByteDance launched Douyin, TikTok's origin",
        ),
        "safe-js-10ms" => (date_ms(2025, 1, 1), "2025-01-01, the layout's epoch"),
        _ => return None,
    };
    Some(Since { unix_ms, what })
}

/// The integer families an inspector reads numbers as, in the order equal
/// readings are ranked.
///
/// # Examples
///
/// ```
/// use snowmint::Layout;
/// use snowmint::inspect::Catalog;
///
/// let names: Vec<_> = Catalog::presets().families().map(|f| f.name().to_owned()).collect();
/// assert_eq!(names[..2], ["twitter", "discord"]);
///
/// let mine = Catalog::from_layouts([("mine", "41/5/5/12@1600000000000".parse::<Layout>()?)]);
/// assert_eq!(mine.families().count(), 1);
/// # Ok::<(), snowmint::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Catalog {
    families: Vec<SnowflakeFamily>,
}

impl Catalog {
    /// Every preset of the core, in its order (`twitter` first).
    pub fn presets() -> Catalog {
        Catalog::from_layouts(
            Layout::preset_names().filter_map(|name| Some((name, Layout::preset(name).ok()?))),
        )
    }

    /// The families named here, in this order.
    pub fn from_layouts<N: Into<Cow<'static, str>>>(
        layouts: impl IntoIterator<Item = (N, Layout)>,
    ) -> Catalog {
        Catalog {
            families: layouts
                .into_iter()
                .map(|(name, layout)| SnowflakeFamily::new(name, layout))
                .collect(),
        }
    }

    /// The families, in order.
    pub fn families(&self) -> impl ExactSizeIterator<Item = &SnowflakeFamily> {
        self.families.iter()
    }

    /// A family by name.
    pub fn family(&self, name: &str) -> Option<&SnowflakeFamily> {
        self.families.iter().find(|family| family.name == name)
    }
}

impl Default for Catalog {
    fn default() -> Catalog {
        Catalog::presets()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_preset_knows_when_it_began_and_not_before_its_epoch() {
        for preset in Layout::presets() {
            let since = known_since(preset.name)
                .unwrap_or_else(|| panic!("{} has no date it began", preset.name));
            assert!(
                since.unix_ms >= preset.layout.epoch_ms(),
                "{} began before its epoch",
                preset.name
            );
        }
    }
}
