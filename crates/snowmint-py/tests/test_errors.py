"""Each bad input raises the right exception, with the right fields, and
with the message the real `snowmint` command line gives for the same
value (both come from the Rust core)."""

import pickle
from datetime import datetime, timedelta, timezone

import pytest

import snowmint
from snowmint import (
    ClockBehindError,
    Generator,
    InvalidIdError,
    InvalidValueError,
    Layout,
    ManualClock,
    OutOfRangeError,
    SnowmintError,
)

from conftest import run_cli

T = 1700000000000
TWITTER_EPOCH = 1288834974657
TWITTER_LAST = TWITTER_EPOCH + 2**41 - 1
MAX_ID = 2**63 - 1


def cli_message(binary, *args):
    """The first line of the CLI's error for `args`, without `error: `."""
    done = run_cli(binary, *args)
    assert done.returncode == 2, (args, done.stdout, done.stderr)
    assert done.stdout == "", "nothing on stdout for a bad value"
    first = done.stderr.splitlines()[0]
    assert first.startswith("error: "), first
    return first[len("error: ") :]


def encode_args(timestamp, datacenter, machine, sequence, *extra):
    return (
        "encode",
        "--timestamp",
        str(timestamp),
        "--datacenter",
        str(datacenter),
        "--machine",
        str(machine),
        "--sequence",
        str(sequence),
        *extra,
    )


def check(error, cls, field, value, min, max):
    assert type(error) is cls
    assert isinstance(error, ValueError) and isinstance(error, SnowmintError)
    assert (error.field, error.value, error.min, error.max) == (field, value, min, max)
    # Pickling keeps the class, the message and the fields.
    copy = pickle.loads(pickle.dumps(error))
    assert type(copy) is cls and str(copy) == str(error)
    assert (copy.field, copy.value, copy.min, copy.max) == (field, value, min, max)


# (timestamp, datacenter, machine, sequence, field, value, min, max)
ENCODE_OUT_OF_RANGE = [
    (0, 0, 0, 0, "timestamp", 0, TWITTER_EPOCH, TWITTER_LAST),
    (TWITTER_EPOCH - 1, 0, 0, 0, "timestamp", TWITTER_EPOCH - 1, TWITTER_EPOCH, TWITTER_LAST),
    (TWITTER_LAST + 1, 0, 0, 0, "timestamp", TWITTER_LAST + 1, TWITTER_EPOCH, TWITTER_LAST),
    (-5, 0, 0, 0, "timestamp", -5, TWITTER_EPOCH, TWITTER_LAST),
    (T, 32, 0, 0, "datacenter", 32, 0, 31),
    (T, -1, 0, 0, "datacenter", -1, 0, 31),
    (T, 2**64, 0, 0, "datacenter", 2**64, 0, 31),
    (T, 0, 32, 0, "machine", 32, 0, 31),
    (T, 0, -7, 0, "machine", -7, 0, 31),
    (T, 0, 0, 4096, "sequence", 4096, 0, 4095),
    (T, 0, 0, -1, "sequence", -1, 0, 4095),
    (T, 0, 0, 10**30, "sequence", 10**30, 0, 4095),
]


@pytest.mark.parametrize("ts, dc, m, seq, field, value, lo, hi", ENCODE_OUT_OF_RANGE)
def test_encode_out_of_range(snowmint_bin, ts, dc, m, seq, field, value, lo, hi):
    with pytest.raises(OutOfRangeError) as caught:
        Layout.TWITTER.encode(ts, dc, m, seq)
    check(caught.value, OutOfRangeError, field, value, lo, hi)
    assert str(caught.value) == cli_message(snowmint_bin, *encode_args(ts, dc, m, seq))


def test_encode_in_a_custom_layout_checks_its_ranges(snowmint_bin):
    layout = Layout.parse("42/0/10/11")
    with pytest.raises(OutOfRangeError) as caught:
        layout.encode(T, 1, 0, 0)
    check(caught.value, OutOfRangeError, "datacenter", 1, 0, 0)
    assert str(caught.value) == cli_message(
        snowmint_bin, *encode_args(T, 1, 0, 0, "--layout", "42/0/10/11")
    )
    with pytest.raises(OutOfRangeError) as caught:
        layout.encode(T, 0, 1024, 2048)
    check(caught.value, OutOfRangeError, "machine", 1024, 0, 1023)


def test_encode_timestamp_beyond_64_bits():
    with pytest.raises(OutOfRangeError) as caught:
        Layout.TWITTER.encode(2**70, 0, 0, 0)
    check(caught.value, OutOfRangeError, "timestamp", 2**70, TWITTER_EPOCH, TWITTER_LAST)
    assert str(caught.value) == (
        f"timestamp {2**70} is out of range ({TWITTER_EPOCH}..={TWITTER_LAST})"
    )


def test_encode_datetime_out_of_range_and_naive():
    early = datetime(2001, 1, 1, tzinfo=timezone.utc)
    with pytest.raises(OutOfRangeError) as caught:
        Layout.TWITTER.encode(early, 0, 0, 0)
    check(caught.value, OutOfRangeError, "timestamp", 978307200000, TWITTER_EPOCH, TWITTER_LAST)
    naive = datetime(2023, 11, 14, 22, 13, 20)
    with pytest.raises(InvalidValueError) as caught:
        Layout.TWITTER.encode(naive, 0, 0, 0)
    check(caught.value, InvalidValueError, "timestamp", naive, None, None)
    assert "has no time zone" in str(caught.value)


def test_wrong_types_are_type_errors():
    for call in (
        lambda: Layout.TWITTER.encode("1700000000000", 0, 0, 0),
        lambda: Layout.TWITTER.encode(1.5, 0, 0, 0),
        lambda: Layout.TWITTER.encode(T, "1", 0, 0),
        lambda: Layout.TWITTER.decode("1724551110457221119"),
        lambda: Layout.TWITTER.decode(1.0),
        lambda: snowmint.from_text(5),
        lambda: Layout.parse(5),
        lambda: Generator(datacenter=0, machine=0, max=2.5),
        lambda: snowmint.decode_many(5),
        lambda: snowmint.decode_many([1, "2"]),
    ):
        with pytest.raises(TypeError):
            call()


@pytest.mark.parametrize("id", [-1, -(2**63), 2**63, 2**64, 10**40])
def test_decode_out_of_range(snowmint_bin, id):
    with pytest.raises(OutOfRangeError) as caught:
        Layout.TWITTER.decode(id)
    check(caught.value, OutOfRangeError, "id", id, 0, MAX_ID)
    assert str(caught.value) == cli_message(snowmint_bin, "decode", str(id))
    with pytest.raises(OutOfRangeError) as caught:
        snowmint.to_text(id, "hex")
    check(caught.value, OutOfRangeError, "id", id, 0, MAX_ID)


@pytest.mark.parametrize(
    "text, encoding",
    [
        ("zz", "hex"),
        ("", "hex"),
        ("0x", "hex"),
        ("8000000000000000", "hex"),
        ("12a", "decimal"),
        ("-1", "decimal"),
        ("9223372036854775808", "decimal"),
        ("U", "base32"),
        ("0OIl", "base58"),
        (" 1", "decimal"),
    ],
)
def test_text_that_is_not_an_id(snowmint_bin, text, encoding):
    with pytest.raises(InvalidIdError) as caught:
        snowmint.from_text(text, encoding)
    check(caught.value, InvalidIdError, "id", text, 0, MAX_ID)
    # The command line goes on to name the other encodings the text reads
    # in ("; it reads as hex: say which with --input"), a hint of its own;
    # the message before it is the core's, as Python's is.
    cli = cli_message(snowmint_bin, "decode", "--input", encoding, "--", text)
    assert str(caught.value) == cli.split("; it reads as ")[0]


def test_unknown_encoding(snowmint_bin):
    for call in (lambda: snowmint.to_text(1, "b64"), lambda: snowmint.from_text("1", "b64")):
        with pytest.raises(InvalidValueError) as caught:
            call()
        check(caught.value, InvalidValueError, "encoding", "b64", None, None)
        assert cli_message(snowmint_bin, "decode", "--input", "b64", "1").endswith(
            str(caught.value)
        )


@pytest.mark.parametrize(
    "text", ["x", "41/5/5/13", "twitter@soon", "41/5/5/12/0", "0/5/5/53", ""]
)
def test_bad_layouts(snowmint_bin, text):
    with pytest.raises(InvalidValueError) as caught:
        Layout.parse(text)
    check(caught.value, InvalidValueError, "layout", text, None, None)
    if text:
        assert str(caught.value) == cli_message(snowmint_bin, "layout", "--layout", text)


def test_empty_time_window(snowmint_bin):
    with pytest.raises(OutOfRangeError) as caught:
        Layout.TWITTER.id_range(T + 1, T)
    check(caught.value, OutOfRangeError, "end", T, T + 1, None)
    assert str(caught.value) == cli_message(
        snowmint_bin, "range", "--from", str(T + 1), "--to", str(T)
    )
    with pytest.raises(OutOfRangeError) as caught:
        Layout.TWITTER.id_range(0, T)
    check(caught.value, OutOfRangeError, "timestamp", 0, TWITTER_EPOCH, TWITTER_LAST)


def test_generator_arguments(snowmint_bin):
    with pytest.raises(OutOfRangeError) as caught:
        Generator(datacenter=32, machine=0)
    check(caught.value, OutOfRangeError, "datacenter", 32, 0, 31)
    assert str(caught.value) == cli_message(snowmint_bin, "generate", "--datacenter", "32", "--machine", "0")
    with pytest.raises(OutOfRangeError) as caught:
        Generator(datacenter=0, machine=-1)
    check(caught.value, OutOfRangeError, "machine", -1, 0, 31)
    with pytest.raises(InvalidValueError) as caught:
        Generator(datacenter=0, machine=0, policy="sometimes")
    check(caught.value, InvalidValueError, "policy", "sometimes", None, None)
    assert str(caught.value) == (
        'unknown clock policy "sometimes" (expected refuse, wait or borrow)'
    )
    day = timedelta(days=1)
    for bound in ("25h", timedelta(hours=25), timedelta(seconds=-1)):
        with pytest.raises(OutOfRangeError) as caught:
            Generator(datacenter=0, machine=0, policy="wait", max=bound)
        check(caught.value, OutOfRangeError, "max", bound, timedelta(0), day)
        assert str(caught.value).endswith("is out of range (0..=24h)")
    with pytest.raises(InvalidValueError) as caught:
        Generator(datacenter=0, machine=0, policy="borrow", max="2")
    check(caught.value, InvalidValueError, "max", "2", None, None)
    generator = Generator(datacenter=0, machine=0)
    for count in (-1, 1_000_001, 2**80):
        with pytest.raises(OutOfRangeError) as caught:
            generator.next_ids(count)
        check(caught.value, OutOfRangeError, "count", count, 0, 1_000_000)


def test_clock_behind_carries_both_times():
    clock = ManualClock(T)
    generator = Generator(datacenter=1, machine=2, clock=clock)
    generator.next_id()
    clock.set(T - 1000)
    with pytest.raises(ClockBehindError) as caught:
        generator.next_id()
    error = caught.value
    assert not isinstance(error, ValueError) and isinstance(error, SnowmintError)
    assert (error.last_ms, error.now_ms, error.behind_ms) == (T, T - 1000, 1000)
    assert error.last_time == datetime(2023, 11, 14, 22, 13, 20, tzinfo=timezone.utc)
    assert error.now_time == datetime(2023, 11, 14, 22, 13, 19, tzinfo=timezone.utc)
    assert str(error) == (
        "clock moved backwards: it reads 1699999999000 but IDs were already issued "
        "at 1700000000000 (1000 ms behind); refusing until it catches up"
    )
    copy = pickle.loads(pickle.dumps(error))
    assert (type(copy), copy.last_ms, copy.now_ms, str(copy)) == (
        ClockBehindError,
        T,
        T - 1000,
        str(error),
    )


def test_generator_past_the_last_instant():
    clock = ManualClock(TWITTER_LAST + 1)
    generator = Generator(datacenter=0, machine=0, clock=clock)
    with pytest.raises(OutOfRangeError) as caught:
        generator.next_id()
    check(caught.value, OutOfRangeError, "timestamp", TWITTER_LAST + 1, TWITTER_EPOCH, TWITTER_LAST)
