//! Fields given by name, as front ends take them: the layout's own names
//! (Discord's `worker`, Sonyflake's `machine`), and the three names every
//! front end took before layouts had named fields.
//!
//! A name the layout has names that field. Otherwise:
//!
//! - `sequence` names the layout's sequence field (Discord's `increment`);
//! - `machine` names the lowest node field, and `datacenter` the node
//!   fields above it taken together: the two numbers of
//!   [`Layout::node_from_pair`].
//!
//! A field named twice (by its own name and by one of these) is an error,
//! and so, for a node, is a node field named by none.

use super::{Field, Layout, MAX_FIELDS, Node, Parts, Role};
use crate::error::{Error, Repr};
use crate::id::SnowflakeId;

/// What one given name sets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Target {
    /// The field at this index of the layout's table.
    Field(usize),
    /// The node fields above the lowest one, as one number.
    Upper,
    /// `machine` in a layout without node fields (only 0 fits).
    Lowest,
}

impl Layout {
    /// Whether `name` names something of this layout a caller can give
    /// (a field other than the time, or one of the names of the two-number
    /// node and of the sequence): what a front end accepts as a parameter.
    ///
    /// # Examples
    ///
    /// ```
    /// use snowmint::Layout;
    ///
    /// assert!(Layout::DISCORD.accepts_name("worker"));
    /// assert!(Layout::DISCORD.accepts_name("sequence")); // its increment
    /// assert!(!Layout::DISCORD.accepts_name("shard"));
    /// assert!(!Layout::TWITTER.accepts_name("time"));
    /// ```
    pub fn accepts_name(&self, name: &str) -> bool {
        self.target(name).is_some()
    }

    /// The largest value `name` takes (see
    /// [`accepts_name`](Layout::accepts_name)).
    ///
    /// # Errors
    ///
    /// A name the layout does not accept.
    ///
    /// # Examples
    ///
    /// ```
    /// use snowmint::Layout;
    ///
    /// assert_eq!(Layout::SONYFLAKE.max_of("machine")?, 65_535);
    /// assert_eq!(Layout::DISCORD.max_of("sequence")?, 4095);
    /// assert_eq!(Layout::SONYFLAKE.max_of("datacenter")?, 0);
    /// # Ok::<(), snowmint::Error>(())
    /// ```
    pub fn max_of(&self, name: &str) -> Result<u64, Error> {
        let (upper, lowest) = self.pair_max();
        Ok(
            match self.target(name).ok_or_else(|| self.unknown_field(name))? {
                Target::Field(at) => self.fields[at].max(),
                Target::Upper => upper,
                Target::Lowest => lowest,
            },
        )
    }

    /// Reads the value of `name` (see [`accepts_name`](Layout::accepts_name))
    /// from text, in its range.
    ///
    /// # Errors
    ///
    /// A name the layout does not accept, text that is not a number, or
    /// a number outside the range, naming the field.
    ///
    /// # Examples
    ///
    /// ```
    /// use snowmint::Layout;
    ///
    /// assert_eq!(Layout::SONYFLAKE.parse_named("machine", "513")?, 513);
    /// assert_eq!(
    ///     Layout::DISCORD.parse_named("datacenter", "32").unwrap_err().to_string(),
    ///     "worker 32 is out of range (0..=31)"
    /// );
    /// # Ok::<(), snowmint::Error>(())
    /// ```
    pub fn parse_named(&self, name: &str, text: &str) -> Result<u64, Error> {
        match self.target(name).ok_or_else(|| self.unknown_field(name))? {
            Target::Field(at) => self.parse_field(self.fields[at].name(), text),
            Target::Upper => crate::value::parse_bounded("datacenter", text, 0..=self.pair_max().0),
            Target::Lowest => crate::value::parse_bounded("machine", text, 0..=0),
        }
    }

    /// The ID of a time (Unix microseconds, rounded down to the layout's
    /// unit) and of fields given by name (see the module's rules: a
    /// field's own name, else `datacenter`, `machine`, `sequence`); every
    /// field not named is 0.
    ///
    /// # Errors
    ///
    /// A time outside the layout, a name the layout does not accept, a
    /// value too large for what it names (naming it), or one field named
    /// twice.
    ///
    /// # Examples
    ///
    /// ```
    /// use snowmint::Layout;
    ///
    /// // Discord's own names, or the three names of Twitter's fields.
    /// let named = [("worker", 1), ("process", 0), ("increment", 7)];
    /// let id = Layout::DISCORD.encode_named(1_462_015_105_796_000, &named)?;
    /// assert_eq!(id.as_u64(), 175928847299117063);
    /// let legacy = [("datacenter", 1), ("machine", 0), ("sequence", 7)];
    /// assert_eq!(Layout::DISCORD.encode_named(1_462_015_105_796_000, &legacy)?, id);
    /// assert_eq!(
    ///     Layout::DISCORD
    ///         .encode_named(1_462_015_105_796_000, &[("sequence", 1), ("increment", 2)])
    ///         .unwrap_err()
    ///         .to_string(),
    ///     "field increment is given twice (as sequence and as increment)"
    /// );
    /// # Ok::<(), snowmint::Error>(())
    /// ```
    pub fn encode_named(&self, time_us: i64, values: &[(&str, u64)]) -> Result<SnowflakeId, Error> {
        let ticks = self.ticks_at_us(time_us)?;
        let given = self.resolve(values)?;
        let mut set = self.apply(&given)?;
        set[usize::from(self.time)] = Some(ticks);
        Ok(Parts::from_values(*self, set.map(|value| value.unwrap_or(0))).id())
    }

    /// The node whose node fields are given by name (see the module's
    /// rules): every node field must be named, once.
    ///
    /// # Errors
    ///
    /// A name that is no node field (nor `datacenter` or `machine`), a
    /// value too large for what it names, a node field named twice, or one
    /// not named (naming it and its range).
    ///
    /// # Examples
    ///
    /// ```
    /// use snowmint::Layout;
    ///
    /// let node = Layout::SONYFLAKE.node_named(&[("machine", 513)])?;
    /// assert_eq!(node.slot(), 513);
    /// let node = Layout::DISCORD.node_named(&[("worker", 1), ("process", 2)])?;
    /// assert_eq!(node, Layout::DISCORD.node_named(&[("datacenter", 1), ("machine", 2)])?);
    /// assert_eq!(
    ///     Layout::TWITTER.node_named(&[("machine", 13)]).unwrap_err().to_string(),
    ///     "layout twitter needs datacenter (0..=31) to make a node"
    /// );
    /// assert_eq!(
    ///     Layout::SONYFLAKE.node_named(&[("sequence", 1)]).unwrap_err().to_string(),
    ///     "layout sonyflake has no node field \"sequence\" (its node fields: machine)"
    /// );
    /// # Ok::<(), snowmint::Error>(())
    /// ```
    pub fn node_named(&self, values: &[(&str, u64)]) -> Result<Node, Error> {
        let given = self.resolve(values)?;
        for &(target, _, name) in &given {
            if let Target::Field(at) = target
                && self.fields[at].role != Role::Node
            {
                let nodes: Vec<&str> = self.node_fields().map(Field::name).collect();
                return Err(Repr::UnknownNodeField {
                    name: crate::value::echo(name),
                    layout: self.to_string(),
                    known: if nodes.is_empty() {
                        "none".to_owned()
                    } else {
                        nodes.join(", ")
                    },
                }
                .into());
            }
        }
        let set = self.apply(&given)?;
        let mut slot = 0u64;
        for at in self.node_indices() {
            let field = self.fields[at];
            let Some(value) = set[at] else {
                return Err(Repr::MissingField {
                    field: field.name,
                    layout: self.to_string(),
                    max: field.max(),
                }
                .into());
            };
            slot = slot.checked_shl(u32::from(field.width)).unwrap_or(0) | value;
        }
        self.node_from_slot(slot)
    }

    /// The first node or sequence field (most significant first) that
    /// none of `names` sets (see the module's rules; names the layout
    /// does not accept are ignored): what a front end that needs every
    /// field given reports as missing.
    ///
    /// # Examples
    ///
    /// ```
    /// use snowmint::Layout;
    ///
    /// let missing = Layout::DISCORD.first_unnamed(&["worker", "sequence"]);
    /// assert_eq!(missing.map(|field| field.name()), Some("process"));
    /// assert_eq!(Layout::DISCORD.first_unnamed(&["datacenter", "machine", "sequence"]), None);
    /// assert_eq!(Layout::MASTODON.first_unnamed(&[]), None);
    /// ```
    pub fn first_unnamed(&self, names: &[&str]) -> Option<&Field> {
        let lowest = self.node_indices().last();
        let mut covered = [false; MAX_FIELDS];
        for target in names.iter().filter_map(|name| self.target(name)) {
            match target {
                Target::Field(at) => covered[at] = true,
                Target::Upper => {
                    for at in self.node_indices().filter(|&at| Some(at) != lowest) {
                        covered[at] = true;
                    }
                }
                Target::Lowest => {}
            }
        }
        self.fields()
            .iter()
            .enumerate()
            .find(|(at, field)| {
                matches!(field.role(), Role::Node | Role::Sequence) && !covered[*at]
            })
            .map(|(_, field)| field)
    }

    /// The value of each field the given values set, checked.
    fn apply(&self, given: &[(Target, u64, &str)]) -> Result<[Option<u64>; MAX_FIELDS], Error> {
        let mut set = [None; MAX_FIELDS];
        let lowest = self.node_indices().last();
        for &(target, value, _) in given {
            match target {
                Target::Field(at) => set[at] = Some(self.check_value(at, value)?),
                Target::Upper => {
                    // Checked as the pair's upper number, then shared out
                    // over the node fields above the lowest.
                    self.node_from_pair(value, 0)?;
                    let mut rest = value;
                    let upper = self.node_indices().filter(|&at| Some(at) != lowest);
                    for at in upper.collect::<Vec<_>>().into_iter().rev() {
                        let field = self.fields[at];
                        set[at] = Some(rest & field.max());
                        rest = rest.checked_shr(u32::from(field.width)).unwrap_or(0);
                    }
                }
                // A layout without node fields: only 0.
                Target::Lowest => {
                    self.node_from_pair(0, value)?;
                }
            }
        }
        Ok(set)
    }

    /// The indices of the node fields, most significant first.
    fn node_indices(&self) -> impl DoubleEndedIterator<Item = usize> + '_ {
        (0..self.len as usize).filter(|&at| self.fields[at].role == Role::Node)
    }

    /// What `name` sets, if anything.
    fn target(&self, name: &str) -> Option<Target> {
        if let Some(at) = self.fields().iter().position(|f| f.name() == name) {
            return (self.fields[at].role != Role::Time).then_some(Target::Field(at));
        }
        let lowest = self.node_indices().last();
        match name {
            "sequence" => self
                .sequence_field()
                .map(|_| Target::Field(self.sequence as usize)),
            "machine" => Some(match lowest {
                Some(at) => Target::Field(at),
                None => Target::Lowest,
            }),
            "datacenter" => {
                let mut above = self.node_indices().rev().skip(1);
                Some(match (above.next(), above.next()) {
                    (Some(at), None) => Target::Field(at),
                    _ => Target::Upper,
                })
            }
            _ => None,
        }
    }

    /// Each given value with what it sets, checked that no field is named
    /// twice.
    fn resolve<'n>(&self, values: &[(&'n str, u64)]) -> Result<Vec<(Target, u64, &'n str)>, Error> {
        let mut given: Vec<(Target, u64, &'n str)> = Vec::with_capacity(values.len());
        // Which fields are set, and by which name.
        let mut by: [Option<&str>; MAX_FIELDS] = [None; MAX_FIELDS];
        let lowest = self.node_indices().last();
        for &(name, value) in values {
            let target = self.target(name).ok_or_else(|| self.unknown_field(name))?;
            let covers: Vec<usize> = match target {
                Target::Field(at) => vec![at],
                Target::Upper => self
                    .node_indices()
                    .filter(|&at| Some(at) != lowest)
                    .collect(),
                Target::Lowest => lowest.into_iter().collect(),
            };
            for at in covers {
                if let Some(first) = by[at] {
                    return Err(Repr::FieldTwice {
                        field: self.fields[at].name,
                        first: crate::value::echo(first),
                        second: crate::value::echo(name),
                    }
                    .into());
                }
                by[at] = Some(name);
            }
            given.push((target, value, name));
        }
        Ok(given)
    }
}
