"""Twitter-style Snowflake IDs, by snowmint's Rust core.

A Snowflake ID is a 63-bit integer made of, from the most significant bit
down, a timestamp (milliseconds since an epoch), a datacenter, a machine
and a sequence number. ``Layout`` says which bits mean what and encodes
and decodes; ``Generator`` makes IDs for one node; ``decode_many`` decodes
a column at once; ``to_text`` and ``from_text`` write and read the hex,
base32 and base58 forms; ``inspect`` reads the IDs of any text (links,
mentions, every family of ID), each with its readings ranked.

>>> import snowmint
>>> snowmint.Layout.TWITTER.encode(1700000000000, datacenter=7, machine=13, sequence=4095)
1724551110457221119
>>> snowmint.Layout.TWITTER.decode(1724551110457221119)
Parts(timestamp_ms=1700000000000, datacenter=7, machine=13, sequence=4095)
>>> generator = snowmint.Generator(datacenter=7, machine=13)
>>> generator.next_id() < generator.next_id()
True

``__version__`` is the package's version, the Rust crates' own.
"""

from ._snowmint import (
    MAX_ID,
    __version__,
    Columns,
    Generator,
    Layout,
    ManualClock,
    Parts,
    Reading,
    Token,
    decode_many,
    __version__,
    from_text,
    inspect,
    to_text,
)
from .errors import (
    ClockBehindError,
    FencedError,
    ForkError,
    InvalidIdError,
    InvalidValueError,
    NodeInUseError,
    OutOfRangeError,
    RefusedError,
    SnowmintError,
    StateError,
)

__all__ = [
    "MAX_ID",
    "Columns",
    "Generator",
    "Layout",
    "ManualClock",
    "Parts",
    "Reading",
    "Token",
    "decode_many",
    "from_text",
    "inspect",
    "to_text",
    "ClockBehindError",
    "FencedError",
    "ForkError",
    "InvalidIdError",
    "InvalidValueError",
    "NodeInUseError",
    "OutOfRangeError",
    "RefusedError",
    "SnowmintError",
    "StateError",
    "__version__",
]
