//! One field of a layout: its name, what it means ([`Role`]), its width
//! and where it sits.

use std::fmt;

/// The longest field name, in bytes.
pub const MAX_NAME_LEN: usize = 15;

/// What a field means to a generator.
///
/// # Examples
///
/// ```
/// use snowmint::{Layout, Role};
///
/// let roles: Vec<Role> = Layout::SONYFLAKE.fields().iter().map(|f| f.role()).collect();
/// assert_eq!(roles, [Role::Time, Role::Sequence, Role::Node]);
/// assert_eq!(Role::Opaque.name(), "opaque");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Role {
    /// When the ID was made, in the layout's units since its epoch. Every
    /// layout has exactly one.
    Time,
    /// Part of the node's identity: the node fields together, most
    /// significant first, are the node's *slot*.
    Node,
    /// The per-tick counter of one node. A layout has at most one.
    Sequence,
    /// Bits with no meaning to a generator (a hash, random bits, bits a
    /// family does not publish): they decode as a plain number and a layout
    /// with such a field cannot mint.
    Opaque,
}

impl Role {
    /// Every role, in the order [`Role::name`] lists them.
    pub const ALL: [Role; 4] = [Role::Time, Role::Node, Role::Sequence, Role::Opaque];

    /// The role's name as the layout text writes it: `time`, `node`,
    /// `sequence` or `opaque`.
    pub const fn name(self) -> &'static str {
        match self {
            Role::Time => "time",
            Role::Node => "node",
            Role::Sequence => "sequence",
            Role::Opaque => "opaque",
        }
    }
}

impl fmt::Display for Role {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A field's name, stored inline so that a [`Layout`](crate::Layout) stays
/// `Copy`: 1 to 15 bytes of `a-z`, `0-9` and `_`, starting with a letter.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub(crate) struct Name {
    len: u8,
    bytes: [u8; MAX_NAME_LEN],
}

impl Name {
    /// `text` as a name, if it is one.
    pub(crate) const fn new(text: &str) -> Option<Name> {
        let input = text.as_bytes();
        if input.is_empty() || input.len() > MAX_NAME_LEN || !input[0].is_ascii_lowercase() {
            return None;
        }
        let mut bytes = [0; MAX_NAME_LEN];
        let mut at = 0;
        while at < input.len() {
            let b = input[at];
            if !(b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_') {
                return None;
            }
            bytes[at] = b;
            at += 1;
        }
        Some(Name {
            len: input.len() as u8,
            bytes,
        })
    }

    /// A name known to be valid (presets); fails the build if it is not.
    pub(crate) const fn known(text: &str) -> Name {
        match Name::new(text) {
            Some(name) => name,
            None => panic!("not a field name"),
        }
    }

    pub(crate) fn as_str(&self) -> &str {
        // Only ASCII is ever stored.
        std::str::from_utf8(&self.bytes[..usize::from(self.len)]).unwrap_or_default()
    }

    pub(crate) const fn eq_const(&self, other: &Name) -> bool {
        if self.len != other.len {
            return false;
        }
        let mut at = 0;
        while at < MAX_NAME_LEN {
            if self.bytes[at] != other.bytes[at] {
                return false;
            }
            at += 1;
        }
        true
    }
}

impl fmt::Display for Name {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl fmt::Debug for Name {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self.as_str(), f)
    }
}

/// One field of a [`Layout`](crate::Layout): its name (the family's own),
/// its [`Role`], its width in bits and its shift (how far above bit 0 it
/// sits).
///
/// # Examples
///
/// ```
/// use snowmint::{Layout, Role};
///
/// let machine = Layout::SONYFLAKE.field("machine").unwrap();
/// assert_eq!((machine.role(), machine.width(), machine.shift()), (Role::Node, 16, 0));
/// assert_eq!(machine.max(), 65_535);
/// assert_eq!(machine.value_in(0x0102_0304), 0x0304);
/// ```
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct Field {
    pub(crate) name: Name,
    pub(crate) role: Role,
    pub(crate) width: u8,
    pub(crate) shift: u8,
}

impl Field {
    /// The field's name, as the family names it (`machine`, `worker`,
    /// `shard`...).
    pub fn name(&self) -> &str {
        self.name.as_str()
    }

    /// What the field means.
    pub const fn role(&self) -> Role {
        self.role
    }

    /// Its width in bits (0 for an empty node field).
    pub const fn width(&self) -> u8 {
        self.width
    }

    /// How far above bit 0 the field sits.
    pub const fn shift(&self) -> u8 {
        self.shift
    }

    /// The largest value the field holds: 2^width - 1.
    pub const fn max(&self) -> u64 {
        mask(self.width)
    }

    /// The field's value in the raw ID `raw`.
    #[inline]
    pub const fn value_in(&self, raw: u64) -> u64 {
        // A shift of 64 happens only for an empty field at the very top,
        // whose value is 0 anyway.
        if self.shift >= 64 {
            0
        } else {
            (raw >> self.shift) & mask(self.width)
        }
    }

    /// `value` moved into place (the caller has checked it fits).
    #[inline]
    pub(crate) const fn place(&self, value: u64) -> u64 {
        if self.shift >= 64 {
            0
        } else {
            value << self.shift
        }
    }
}

impl fmt::Debug for Field {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}:{}", self.name, self.width, self.role)
    }
}

/// The largest value of `width` bits.
#[inline]
pub(crate) const fn mask(width: u8) -> u64 {
    if width >= 64 {
        u64::MAX
    } else {
        (1u64 << width) - 1
    }
}
