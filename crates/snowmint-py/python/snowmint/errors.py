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

- ``RefusedError``: a generator may not issue now; ``code`` says why
  (``"no_claim"``, ``"clock_behind"``, ``"mark_unwritable"``...) and
  ``retry_after`` when to try again, in seconds.

  - ``ClockBehindError``: the clock reads earlier than the last timestamp
    a generator used (or than its high-water mark), and its policy
    refuses; ``last_ms`` and ``now_ms`` are both times.
  - ``FencedError``: a claimed generator holds no slot now (claiming,
    its claim lost or unconfirmed, closed).

- ``ForkError`` (also a ``RuntimeError``): a generator made before
  ``os.fork()`` was used in the child, where it would repeat the parent's
  IDs.
- ``NodeInUseError``: another process on this host issues as the node
  from the same ``state_dir``; ``pid`` and ``lock_file`` name it.
- ``StateError`` (also an ``OSError``): the state directory or file
  cannot be used.

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
    "RefusedError",
    "ClockBehindError",
    "FencedError",
    "ForkError",
    "NodeInUseError",
    "StateError",
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


class RefusedError(SnowmintError):
    """The generator may not issue an ID now, for a reason that passes.

    ``code`` names the reason (``"no_claim"``, ``"not_ready"``,
    ``"clock_behind"``, ``"mark_unwritable"``, ``"clock_out_of_range"``,
    ``"would_block"``, ``"closed"``), as ``snowmint serve`` names it in its
    503 answers; ``retry_after`` is how long it is expected to last, in
    seconds.
    """

    code: str
    retry_after: float

    def __init__(self, message: str, code: str, retry_after: float) -> None:
        super().__init__(message)
        self.code = code
        self.retry_after = retry_after

    def __reduce__(self):  # type: ignore[override]
        return (type(self), (str(self), self.code, self.retry_after))


class FencedError(RefusedError):
    """A claimed generator holds no slot now: it is still claiming, its
    claim was lost or could not be confirmed before its deadline, or it was
    closed. No ID of it can collide with the slot's next holder; issuing
    resumes once a slot is held again.
    """


class ForkError(SnowmintError, RuntimeError):
    """A generator made before ``os.fork()`` was used in the child.

    The child's copy would make the same IDs as the parent's. Make each
    worker's generator after the fork (``gunicorn``'s ``post_fork`` hook,
    or at the first request), each with its own node or ``state_dir``, or
    use ``Generator.claim``, whose copies each claim a slot of their own.
    """


class NodeInUseError(SnowmintError):
    """Another process on this host issues as the node from the same
    ``state_dir``: ``pid`` is its process id (``None`` if it could not be
    read) and ``lock_file`` the lock it holds. The lock goes when that
    process ends, however it ends.
    """

    pid: Optional[int]
    lock_file: str

    def __init__(self, message: str, pid: Optional[int], lock_file: str) -> None:
        super().__init__(message)
        self.pid = pid
        self.lock_file = lock_file

    def __reduce__(self):  # type: ignore[override]
        return (type(self), (str(self), self.pid, self.lock_file))


class StateError(SnowmintError, OSError):
    """The state directory or a state file cannot be used; the message says
    which and why."""


class ClockBehindError(RefusedError):
    """The clock reads earlier than the last timestamp the generator used,
    and the policy refuses to issue until it catches up.

    ``last_ms`` is the last timestamp used and ``now_ms`` what the clock
    read, both in Unix milliseconds; ``last_time`` and ``now_time`` are the
    same as aware datetimes, and ``behind_ms`` the gap.
    """

    last_ms: int
    now_ms: int

    def __init__(self, message: str, last_ms: int, now_ms: int) -> None:
        super().__init__(message, "clock_behind", max(last_ms - now_ms, 0) / 1000 + 0.001)
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
