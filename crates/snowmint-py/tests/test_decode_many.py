"""decode_many agrees with decode on a million random IDs, from a list,
from array('q') and array('Q'), and from NumPy; its columns reach NumPy
without a copy."""

import os
import sys
from array import array

import pytest

import snowmint
from snowmint import Layout, OutOfRangeError

MAX_ID = 2**63 - 1
COUNT = 1_000_000


def numpy_or_skip():
    """NumPy if installed. scripts/test installs it and sets
    SNOWMINT_REQUIRE_NUMPY=1, which turns its absence into a failure."""
    try:
        import numpy
    except ImportError:
        if os.environ.get("SNOWMINT_REQUIRE_NUMPY") == "1":
            pytest.fail("numpy is not installed: pip install numpy (scripts/test does)")
        pytest.skip("numpy is not installed")
    return numpy


@pytest.fixture(scope="module")
def ids():
    import random

    seed = int(os.environ.get("SNOWMINT_TEST_SEED", random.randrange(2**32)))
    print(f"random seed {seed} (replay with SNOWMINT_TEST_SEED={seed})")
    rng = random.Random(seed)
    return [0, MAX_ID] + [rng.randrange(MAX_ID + 1) for _ in range(COUNT - 2)]


def narrowest(bits):
    """The format of the smallest unsigned type of ``bits`` bits."""
    for format, size in (("B", 1), ("H", 2), ("I", 4)):
        if bits <= size * 8:
            return format, size
    return "Q", 8


def expected_formats(layout, int64=False):
    """The column formats decode_many promises: int64 timestamps, and the
    smallest unsigned type of each other field's width (Twitter: uint8
    datacenter and machine, uint16 sequence), or int64 throughout."""
    if int64:
        return [("q", 8)] * 4
    return [("q", 8)] + [narrowest(bits) for bits in (layout.datacenter_bits, layout.machine_bits, layout.sequence_bits)]


def assert_agrees(columns, ids, layout, int64=False):
    assert len(columns) == len(ids)
    names = ("timestamp_ms", "datacenter", "machine", "sequence")
    for name, (format, size) in zip(names, expected_formats(layout, int64)):
        column = getattr(columns, name)
        assert (column.format, column.itemsize, column.ndim) == (format, size, 1), name
        assert len(column) == len(ids)
    decoded = [layout.decode(i) for i in ids]
    assert columns.timestamp_ms.tolist() == [p.timestamp_ms for p in decoded]
    assert columns.datacenter.tolist() == [p.datacenter for p in decoded]
    assert columns.machine.tolist() == [p.machine for p in decoded]
    assert columns.sequence.tolist() == [p.sequence for p in decoded]


# Twitter's and Discord's widths, and the other families' (1/2/1, 1/2/2,
# 1/4/2 bytes), each with code of its own.
@pytest.mark.parametrize(
    "name",
    ["twitter", "discord", "42/0/10/11@1600000000000", "sonyflake", "instagram", "tsid", "baidu", "hazelcast"],
)
def test_from_a_list(ids, name):
    layout = Layout.parse(name)
    assert_agrees(layout.decode_many(ids), ids, layout)


def test_twitter_columns_are_int64_uint8_uint8_uint16():
    columns = snowmint.decode_many([1724551110457221119])
    formats = [getattr(columns, n).format for n in ("timestamp_ms", "datacenter", "machine", "sequence")]
    assert formats == ["q", "B", "B", "H"]


@pytest.mark.parametrize("name", ["twitter", "42/0/10/11@1600000000000", "39/12/0/12"])
def test_int64_keeps_four_int64_columns(ids, name):
    layout = Layout.parse(name)
    assert_agrees(layout.decode_many(ids[:10_000], int64=True), ids[:10_000], layout, int64=True)
    assert_agrees(layout.decode_many(ids[:10_000]), ids[:10_000], layout)


def test_out_buffers_are_written_and_reused(ids):
    count = 50_000
    part = ids[:count]
    out = [array("q", bytes(8 * (count + 5))), array("B", bytes(count + 5)),
           array("B", bytes(count + 5)), array("H", bytes(2 * (count + 5)))]
    for round in range(2):
        columns = snowmint.decode_many(part, out=out)
        assert_agrees(columns, part, Layout.TWITTER)
        # The columns are views of the caller's buffers, which hold the
        # answer (and nothing past it).
        assert out[3][:count].tolist() == columns.sequence.tolist()
        assert out[0][count:].tolist() == [0] * 5
        part = ids[count:2 * count]
    # By name, and wide buffers are fine.
    by_name = {"timestamp_ms": array("q", bytes(8 * 3)), "datacenter": array("q", bytes(8 * 3)),
               "machine": array("H", bytes(2 * 3)), "sequence": array("I", bytes(4 * 3))}
    snowmint.decode_many(ids[:3], out=by_name)
    assert by_name["sequence"].tolist() == [Layout.TWITTER.decode(i).sequence for i in ids[:3]]


def test_out_buffers_that_cannot_hold_the_answer_are_refused():
    ids = [1724551110457221119] * 4
    ok = lambda: [array("q", bytes(32)), array("B", bytes(4)), array("B", bytes(4)), array("H", bytes(8))]
    too_short = ok()
    too_short[2] = array("B", bytes(3))
    with pytest.raises(TypeError, match=r"holds 3 items; 4 IDs need 4"):
        snowmint.decode_many(ids, out=too_short)
    too_narrow = ok()
    too_narrow[3] = array("B", bytes(4))
    with pytest.raises(TypeError, match="cannot hold every 12-bit value"):
        snowmint.decode_many(ids, out=too_narrow)
    signed_byte = ok()
    signed_byte[0] = array("i", bytes(16))
    with pytest.raises(TypeError, match="timestamp_ms"):
        snowmint.decode_many(ids, out=signed_byte)
    with pytest.raises(TypeError, match="not both"):
        snowmint.decode_many(ids, out=ok(), int64=True)
    with pytest.raises(TypeError, match="four buffers"):
        snowmint.decode_many(ids, out=ok()[:3])
    with pytest.raises(TypeError, match="writable"):
        snowmint.decode_many(ids, out=[bytes(32), *ok()[1:]])


def test_from_arrays(ids):
    assert_agrees(snowmint.decode_many(array("q", ids)), ids, Layout.TWITTER)
    assert_agrees(snowmint.decode_many(array("Q", ids), Layout.DISCORD), ids, Layout.DISCORD)


def test_from_other_iterables():
    ids = [1724551110457221119, 5, 0]
    assert_agrees(snowmint.decode_many(tuple(ids)), ids, Layout.TWITTER)
    assert_agrees(snowmint.decode_many(iter(ids)), ids, Layout.TWITTER)
    assert_agrees(snowmint.decode_many(range(1000, 1100)), list(range(1000, 1100)), Layout.TWITTER)
    assert len(snowmint.decode_many([])) == 0
    assert snowmint.decode_many(array("q")).sequence.tolist() == []


def test_from_numpy(ids):
    np = numpy_or_skip()
    for dtype in ("int64", "uint64", "<i8", ">i8", ">u8"):
        column = np.array(ids, dtype=dtype)
        assert_agrees(snowmint.decode_many(column), ids, Layout.TWITTER)
    # A strided view is read in its order.
    every_third = np.array(ids, dtype=np.int64)[::3]
    assert_agrees(snowmint.decode_many(every_third), ids[::3], Layout.TWITTER)


def test_with_numpy_loaded_the_columns_are_numpy_memory(ids):
    """With NumPy imported, new columns live in one NumPy array (which the
    kernel backs with huge pages): written a step at a time, every step
    lands in its place, and a bad ID in a later step is reported at its
    own index."""
    np = numpy_or_skip()
    columns = snowmint.decode_many(np.array(ids, dtype=np.int64))
    for name in ("timestamp_ms", "datacenter", "machine", "sequence"):
        assert isinstance(getattr(columns, name).obj, np.ndarray), name
    assert_agrees(columns, ids, Layout.TWITTER)
    wide = snowmint.decode_many(np.array(ids[:100_000], dtype=np.int64), int64=True)
    assert_agrees(wide, ids[:100_000], Layout.TWITTER, int64=True)
    bad = np.array(ids[:100_000], dtype=np.int64)
    bad[70_001] = -5
    with pytest.raises(OutOfRangeError) as caught:
        snowmint.decode_many(bad)
    assert (caught.value.value, caught.value.index) == (-5, 70_001)


def test_without_numpy_the_columns_are_a_bytearray():
    """Without NumPy, new columns live in one bytearray, decoded in place;
    checked in a child interpreter that cannot import NumPy, on IDs across
    several steps."""
    import subprocess

    script = (
        "import sys, random; sys.modules['numpy'] = None\n"
        "import snowmint\n"
        "rng = random.Random(5)\n"
        "ids = [rng.randrange(2**63) for _ in range(100_000)]\n"
        "c = snowmint.decode_many(ids)\n"
        "assert type(c.timestamp_ms.obj) is bytearray, type(c.timestamp_ms.obj)\n"
        "parts = [snowmint.Layout.TWITTER.decode(i) for i in ids]\n"
        "assert c.timestamp_ms.tolist() == [p.timestamp_ms for p in parts]\n"
        "assert c.datacenter.tolist() == [p.datacenter for p in parts]\n"
        "assert c.machine.tolist() == [p.machine for p in parts]\n"
        "assert c.sequence.tolist() == [p.sequence for p in parts]\n"
        "print('agree')\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "agree"


def test_columns_reach_numpy_without_a_copy():
    np = numpy_or_skip()
    columns = snowmint.decode_many([1724551110457221119, 175928847299117063])
    timestamps = np.asarray(columns.timestamp_ms)
    assert timestamps.dtype == np.int64
    assert timestamps.tolist() == [1700000000000, 175928847299117063 // 2**22 + 1288834974657]
    # The array is a view of the column's memory: a write shows through.
    timestamps[0] = 42
    assert columns.timestamp_ms[0] == 42
    sequence = np.frombuffer(columns.sequence, dtype=np.uint16)
    sequence[1] = 7
    assert columns.sequence.tolist()[1] == 7
    assert np.asarray(columns.datacenter).dtype == np.uint8
    assert np.asarray(columns.sequence).dtype == np.uint16


def test_columns_reach_pandas_without_a_copy():
    numpy_or_skip()
    try:
        import pandas as pd
    except ImportError:
        if os.environ.get("SNOWMINT_REQUIRE_NUMPY") == "1":
            pytest.fail("pandas is not installed: pip install pandas (scripts/test does)")
        pytest.skip("pandas is not installed")
    import numpy as np

    columns = snowmint.decode_many([1724551110457221118, 1724551110457221119])
    frame = pd.DataFrame({k: np.asarray(v) for k, v in columns.to_dict().items()}, copy=False)
    assert list(frame.columns) == ["timestamp_ms", "datacenter", "machine", "sequence"]
    assert frame["sequence"].tolist() == [4094, 4095]
    series = pd.Series(np.asarray(columns.machine), copy=False)
    assert np.shares_memory(series.to_numpy(), np.asarray(columns.machine))
    assert np.shares_memory(frame["timestamp_ms"].to_numpy(), np.asarray(columns.timestamp_ms))


@pytest.mark.parametrize(
    "column, index, value",
    [
        ([1, 2, -3], 2, -3),
        ([2**63], 0, 2**63),
        (array("q", [5, -1]), 1, -1),
        (array("Q", [0, 0, 2**64 - 1]), 2, 2**64 - 1),
    ],
)
def test_an_id_out_of_range_is_reported_with_its_index(column, index, value):
    with pytest.raises(OutOfRangeError) as caught:
        snowmint.decode_many(column)
    error = caught.value
    assert (error.field, error.value, error.min, error.max, error.index) == (
        "id",
        value,
        0,
        MAX_ID,
        index,
    )
    assert str(error) == f"ID {value} is out of range (0..={MAX_ID}) (at index {index})"


def test_buffers_that_are_not_64_bit_integers_are_refused():
    for column in (array("i", [1, 2]), array("d", [1.0]), b"12345678", bytearray(16)):
        with pytest.raises(TypeError, match="64-bit integers"):
            snowmint.decode_many(column)
    # Raw bytes go through when cast.
    raw = array("q", [1724551110457221119]).tobytes()
    assert snowmint.decode_many(memoryview(raw).cast("q")).machine.tolist() == [13]
    two_d = memoryview(array("q", [1, 2, 3, 4]).tobytes()).cast("q", (2, 2))
    with pytest.raises(TypeError, match="one-dimensional"):
        snowmint.decode_many(two_d)


def test_numpy_is_not_needed():
    """The package imports and decodes without NumPy (checked in a child
    interpreter that cannot import it)."""
    import subprocess

    script = (
        "import sys; sys.modules['numpy'] = None\n"
        "import snowmint\n"
        "c = snowmint.decode_many([1724551110457221119])\n"
        "print(c.sequence.tolist())\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[4095]"
