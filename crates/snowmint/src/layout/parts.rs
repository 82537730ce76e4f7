//! The fields of one ID, and the identity of a generating node.

use std::fmt;

use super::{Field, Layout, MAX_FIELDS, Role};
use crate::error::Error;
use crate::id::SnowflakeId;
use crate::time::{Rfc3339, format_time_us};

/// The fields of one ID of a layout: its time and the value of each field,
/// by the family's names.
///
/// Made by [`Layout::decode`], or by [`Layout::parts_at`] and then
/// [`set`](Parts::set) for encoding; every value it holds fits its field, so
/// [`id`](Parts::id) cannot fail.
///
/// # Examples
///
/// ```
/// use snowmint::{Layout, SnowflakeId};
///
/// let parts = Layout::DISCORD.decode(SnowflakeId::from_u64(175928847299117063))?;
/// assert_eq!(parts.time().to_string(), "2016-04-30T11:18:25.796Z");
/// assert_eq!((parts.get("worker"), parts.get("process"), parts.get("increment")), (Some(1), Some(0), Some(7)));
/// let named: Vec<(&str, u64)> = parts.values().map(|(f, v)| (f.name(), v)).collect();
/// assert_eq!(named, [("worker", 1), ("process", 0), ("increment", 7)]);
/// # Ok::<(), snowmint::Error>(())
/// ```
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct Parts {
    layout: Layout,
    /// Each field's value, by the layout's field index; the time field's is
    /// its tick count since the epoch.
    values: [u64; MAX_FIELDS],
}

impl Parts {
    pub(crate) fn new(layout: Layout, ticks: u64) -> Parts {
        let mut values = [0; MAX_FIELDS];
        values[usize::from(layout.time)] = ticks;
        Parts { layout, values }
    }

    pub(crate) fn from_values(layout: Layout, values: [u64; MAX_FIELDS]) -> Parts {
        Parts { layout, values }
    }

    /// The layout the parts belong to.
    pub fn layout(&self) -> &Layout {
        &self.layout
    }

    /// The tick count of the time field (since the epoch, in the layout's
    /// units).
    pub fn ticks(&self) -> u64 {
        self.values[usize::from(self.layout.time)]
    }

    /// When the ID was made, in Unix microseconds: the start of its tick.
    pub fn time_us(&self) -> i64 {
        self.layout.tick_start_us(self.ticks())
    }

    /// When the ID was made, in Unix milliseconds: the start of its tick,
    /// rounded towards the past for units finer than a millisecond.
    pub fn time_ms(&self) -> i64 {
        self.layout.tick_start_ms(self.ticks())
    }

    /// The time as RFC 3339, at the layout's precision: milliseconds for
    /// Twitter, hundredths for Sonyflake, seconds for Baidu.
    ///
    /// # Examples
    ///
    /// ```
    /// use snowmint::{Layout, SnowflakeId};
    ///
    /// let parts = Layout::SONYFLAKE.decode(SnowflakeId::from_u64(0x45eec4a4600041b))?;
    /// assert_eq!(parts.time().to_string(), "2020-08-12T17:35:29.98Z");
    /// # Ok::<(), snowmint::Error>(())
    /// ```
    pub fn time(&self) -> Rfc3339 {
        format_time_us(self.time_us(), self.layout.unit().digits())
    }

    /// The value of the field called `name`, if the layout has one.
    pub fn get(&self, name: &str) -> Option<u64> {
        let at = self.layout.fields().iter().position(|f| f.name() == name)?;
        Some(self.values[at])
    }

    /// Sets the field called `name` (the time field too, in ticks).
    ///
    /// # Errors
    ///
    /// A name the layout does not have, or a value too large for the field;
    /// the parts are left as they were.
    pub fn set(&mut self, name: &str, value: u64) -> Result<&mut Parts, Error> {
        let at = self.layout.index_of(name)?;
        self.values[at] = self.layout.check_value(at, value)?;
        Ok(self)
    }

    /// Sets the node fields to `node`'s values.
    ///
    /// # Errors
    ///
    /// A node beyond the layout's slots.
    pub fn set_node(&mut self, node: Node) -> Result<&mut Parts, Error> {
        self.layout.slot_of(node)?;
        let layout = self.layout;
        let mut values = layout.node_values(node);
        for (value, field) in self.values.iter_mut().zip(layout.fields()) {
            if field.role == Role::Node {
                *value = values.next().map_or(0, |(_, value)| value);
            }
        }
        Ok(self)
    }

    /// The node the parts name.
    pub fn node(&self) -> Node {
        self.layout.node_of(self.id())
    }

    /// Every field but the time field, with its value, most significant
    /// first: what a decoder shows beside the time.
    pub fn values(&self) -> impl Iterator<Item = (&Field, u64)> {
        self.fields().filter(|(field, _)| field.role != Role::Time)
    }

    /// Every field with its value, the time field included (as its tick
    /// count), most significant first.
    pub fn fields(&self) -> impl Iterator<Item = (&Field, u64)> {
        self.layout.fields().iter().zip(self.values)
    }

    /// The ID these parts make.
    pub fn id(&self) -> SnowflakeId {
        let raw = self
            .fields()
            .fold(0, |raw, (field, value)| raw | field.place(value));
        SnowflakeId::from_u64(raw)
    }
}

impl fmt::Debug for Parts {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut out = f.debug_struct("Parts");
        out.field("layout", &format_args!("{}", self.layout));
        out.field("time", &format_args!("{}", self.time()));
        for (field, value) in self.values() {
            out.field(field.name(), &value);
        }
        out.finish()
    }
}

/// A generating node: the values of a layout's node fields taken together,
/// most significant first, as one number, the node's *slot*.
///
/// For Twitter's layout the slot is `datacenter * 32 + machine`; for
/// Sonyflake it is the machine id. Fleets hand out slots; a node is
/// meaningful with its layout, which checks it ([`Layout::node`],
/// [`Layout::node_from_slot`]) and names its parts
/// ([`Layout::node_values`], [`Layout::describe`]).
///
/// # Examples
///
/// ```
/// use snowmint::{Layout, Node};
///
/// let node = Layout::TWITTER.node(&[1, 13])?;
/// assert_eq!(node, Node::from_slot(45));
/// assert_eq!(Layout::TWITTER.describe(node).to_string(), "datacenter 1 machine 13");
/// # Ok::<(), snowmint::Error>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, PartialOrd, Ord)]
pub struct Node {
    slot: u64,
}

impl Node {
    /// The node numbered `slot`, unchecked: a layout checks it when it is
    /// used ([`Layout::slot_of`]).
    pub const fn from_slot(slot: u64) -> Node {
        Node { slot }
    }

    /// The node's slot number.
    pub const fn slot(self) -> u64 {
        self.slot
    }
}
