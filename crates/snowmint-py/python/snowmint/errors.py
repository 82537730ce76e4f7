"""The exceptions snowmint raises.

Their messages are those of snowmint's Rust core, the same the command line
and the HTTP service give: each names the field, the value found and the
valid range.

- ``SnowmintError``: the base of them all.
- ``InvalidValueError`` (also a ``ValueError``): a value that cannot be
  taken; ``field`` names it, ``value`` is what was given, ``min`` and
  ``max`` the valid range when it has one (else ``None``).

  - ``OutOfRangeError``: a number outside its range.
  - ``InvalidIdError``: text that is not an ID in its encoding.

- ``ClockBehindError``: the clock reads earlier than the last timestamp a
  generator used, and its policy refuses; ``last_ms`` and ``now_ms`` are
  both times.

>>> import snowmint
>>> try:
...     snowmint.Layout.TWITTER.encode(1700000000000, 7, 13, 4096)
... except snowmint.OutOfRangeError as error:
...     print(error.field, error.value, error.min, error.max)
...     print(error)
sequence 4096 0 4095
sequence 4096 is out of range (0..=4095)
"""

from datetime import datetime, timedelta, timezone
from typing import Any, Optional

__all__ = [
    "SnowmintError",
    "InvalidValueError",
    "OutOfRangeError",
    "InvalidIdError",
    "ClockBehindError",
]

_UNIX_EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)


class SnowmintError(Exception):
    """The base class of every error snowmint raises."""


class InvalidValueError(SnowmintError, ValueError):
    """A value snowmint cannot take.

    ``field`` names it (``"datacenter"``, ``"timestamp"``, ``"id"``,
    ``"layout"``, ``"policy"``...), ``value`` is what was given, and
    ``min`` and ``max`` are the valid range when the value is a number or
    a duration (``None`` otherwise).
    """

    field: str
    value: Any
    min: Any
    max: Any

    def __init__(
        self, message: str, field: str, value: Any, min: Any = None, max: Any = None
    ) -> None:
        super().__init__(message)
        self.field = field
        self.value = value
        self.min = min
        self.max = max

    def __reduce__(self):  # type: ignore[override]
        return (type(self), (str(self), self.field, self.value, self.min, self.max))


class OutOfRangeError(InvalidValueError):
    """A number outside its range: ``min <= value <= max`` does not hold.

    For a timestamp, ``min`` and ``max`` are the layout's epoch and last
    instant in Unix milliseconds. For a time window whose end comes before
    its start, ``field`` is ``"end"``, ``min`` the start and ``max`` is
    ``None``. In ``decode_many``, ``index`` says where in the column the
    value is.
    """

    index: Optional[int] = None


class InvalidIdError(InvalidValueError):
    """Text that is not an ID in its encoding (``value`` is the text; ``min``
    and ``max`` are 0 and 2**63 - 1)."""


class ClockBehindError(SnowmintError):
    """The clock reads earlier than the last timestamp the generator used,
    and the policy refuses to issue until it catches up.

    ``last_ms`` is the last timestamp used and ``now_ms`` what the clock
    read, both in Unix milliseconds; ``last_time`` and ``now_time`` are the
    same as aware datetimes, and ``behind_ms`` the gap.
    """

    last_ms: int
    now_ms: int

    def __init__(self, message: str, last_ms: int, now_ms: int) -> None:
        super().__init__(message)
        self.last_ms = last_ms
        self.now_ms = now_ms

    @property
    def behind_ms(self) -> int:
        """How far behind the clock is, in milliseconds."""
        return self.last_ms - self.now_ms

    @property
    def last_time(self) -> datetime:
        """The last timestamp used, as an aware datetime in UTC."""
        return _UNIX_EPOCH + timedelta(milliseconds=self.last_ms)

    @property
    def now_time(self) -> datetime:
        """What the clock read, as an aware datetime in UTC."""
        return _UNIX_EPOCH + timedelta(milliseconds=self.now_ms)

    def __reduce__(self):  # type: ignore[override]
        return (type(self), (str(self), self.last_ms, self.now_ms))
