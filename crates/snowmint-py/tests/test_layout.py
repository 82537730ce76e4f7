"""Encoding and decoding: the worked example of the format, both ways, and
round trips of random IDs against the real `snowmint` command line."""

import json
from datetime import datetime, timedelta, timezone

import pytest

import snowmint
from snowmint import Layout, Parts

from conftest import run_cli

# The worked example of the format (DESIGN.md): these numbers come from the
# specification, not from this package.
EXAMPLE_MS = 1700000000000
EXAMPLE_ID = 1724551110457221119
MAX_ID = 2**63 - 1


def test_worked_example_encodes():
    assert Layout.TWITTER.encode(EXAMPLE_MS, 7, 13, 4095) == EXAMPLE_ID
    assert (
        Layout.TWITTER.encode(
            timestamp=EXAMPLE_MS, datacenter=7, machine=13, sequence=4095
        )
        == EXAMPLE_ID
    )
    # The same instant as an aware datetime, in UTC and in another zone.
    utc = datetime(2023, 11, 14, 22, 13, 20, tzinfo=timezone.utc)
    tokyo = utc.astimezone(timezone(timedelta(hours=9)))
    assert Layout.TWITTER.encode(utc, 7, 13, 4095) == EXAMPLE_ID
    assert Layout.TWITTER.encode(tokyo, 7, 13, 4095) == EXAMPLE_ID
    # Microseconds are cut to the millisecond, towards the past.
    late = utc + timedelta(microseconds=999)
    assert Layout.TWITTER.encode(late, 7, 13, 4095) == EXAMPLE_ID
    early = utc - timedelta(microseconds=1)
    assert Layout.TWITTER.encode(early, 7, 13, 4095) == EXAMPLE_ID - (1 << 22)


def test_worked_example_decodes():
    parts = Layout.TWITTER.decode(EXAMPLE_ID)
    assert (parts.timestamp_ms, parts.datacenter, parts.machine, parts.sequence) == (
        EXAMPLE_MS,
        7,
        13,
        4095,
    )
    assert parts.time == datetime(2023, 11, 14, 22, 13, 20, tzinfo=timezone.utc)
    assert parts.time.tzinfo is timezone.utc
    assert parts == Parts(EXAMPLE_MS, 7, 13, 4095)
    assert hash(parts) == hash(Parts(EXAMPLE_MS, 7, 13, 4095))
    assert parts != Parts(EXAMPLE_MS, 7, 13, 4094)


def test_parts_are_frozen():
    parts = Layout.TWITTER.decode(EXAMPLE_ID)
    for name in ("timestamp_ms", "datacenter", "machine", "sequence", "time"):
        with pytest.raises(AttributeError):
            setattr(parts, name, 1)
    # What `case Parts(ms, datacenter, machine, sequence)` binds.
    assert tuple(getattr(parts, name) for name in Parts.__match_args__) == (
        EXAMPLE_MS,
        7,
        13,
        4095,
    )


def test_text_encodings_of_the_worked_example():
    # Hex: 16 digits; base32: Crockford, 13 digits; base58: Bitcoin's alphabet.
    assert snowmint.to_text(EXAMPLE_ID, "hex") == format(EXAMPLE_ID, "016x")
    assert snowmint.from_text(format(EXAMPLE_ID, "X"), "hex") == EXAMPLE_ID
    assert snowmint.from_text("0x" + format(EXAMPLE_ID, "x"), "hex") == EXAMPLE_ID
    assert snowmint.to_text(EXAMPLE_ID) == str(EXAMPLE_ID)
    assert snowmint.from_text(str(EXAMPLE_ID)) == EXAMPLE_ID
    crockford = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"
    digits, n = "", EXAMPLE_ID
    for _ in range(13):
        digits, n = crockford[n % 32] + digits, n // 32
    assert snowmint.to_text(EXAMPLE_ID, "base32") == digits
    assert snowmint.from_text(digits.lower(), "Base32") == EXAMPLE_ID


def test_presets():
    assert Layout.preset_names()[:2] == ["twitter", "discord"]
    assert len(Layout.preset_names()) >= 15
    assert Layout.parse("twitter") == Layout.TWITTER
    assert Layout.parse("DISCORD") == Layout.DISCORD
    assert Layout.parse("twitter@1420070400000").epoch_ms == Layout.DISCORD.epoch_ms
    assert Layout.TWITTER.epoch_ms == 1288834974657
    assert Layout.DISCORD.epoch_ms == 1420070400000
    assert Layout.TWITTER.last_instant_ms == 1288834974657 + 2**41 - 1
    assert Layout.TWITTER.name == "twitter"
    assert Layout.parse("41/5/5/12@0").name is None
    assert {Layout.TWITTER, Layout.parse("twitter")} == {Layout.TWITTER}
    assert repr(Layout.DISCORD) == "Layout.DISCORD"
    custom = Layout.parse("42/0/10/11@1600000000000")
    assert eval(repr(custom), {"Layout": Layout}) == custom


def test_pickle_round_trips():
    import pickle

    custom = Layout.parse("42/0/10/11@1600000000000")
    parts = Layout.TWITTER.decode(EXAMPLE_ID)
    assert pickle.loads(pickle.dumps(custom)) == custom
    assert pickle.loads(pickle.dumps(Layout.TWITTER)) == Layout.TWITTER
    assert pickle.loads(pickle.dumps(parts)) == parts


def random_ids(rng, count):
    """Random IDs over the whole range, with both ends."""
    return [0, MAX_ID] + [rng.randrange(MAX_ID + 1) for _ in range(count - 2)]


def utc_text(moment: datetime) -> str:
    """RFC 3339 in UTC with milliseconds, as the CLI writes it."""
    return moment.isoformat(timespec="milliseconds").replace("+00:00", "Z")


# The layouts whose IDs the four numbers of `Parts` describe whole, at
# millisecond precision.
LAYOUTS = ["twitter", "discord", "cosid", "leaf", "42/0/10/11@1600000000000", "39/3/7/14"]


@pytest.mark.parametrize("name", LAYOUTS)
def test_round_trips_against_the_cli(snowmint_bin, rng, name):
    """10,000 random IDs decode as `snowmint decode --format json` decodes
    them, and encode back to themselves."""
    layout = Layout.parse(name)
    ids = random_ids(rng, 10_000)
    done = run_cli(
        snowmint_bin,
        "decode",
        "--format",
        "json",
        "--layout",
        name,
        input="".join(f"{i}\n" for i in ids),
    )
    assert done.returncode == 0, done.stderr
    records = [json.loads(line) for line in done.stdout.splitlines()]
    assert len(records) == len(ids)
    for id, record in zip(ids, records):
        parts = layout.decode(id)
        assert record["id"] == str(id)
        assert parts.timestamp_ms == record["timestamp_ms"], id
        # The CLI names each field as the family does, in the layout's order.
        fields = {k: v for k, v in record.items() if k not in ("id", "timestamp_ms", "time")}
        assert list(layout.fields(id).items()) == list(fields.items()), id
        if parts.timestamp_ms <= 253402300799999:  # datetime ends in 9999
            assert utc_text(parts.time) == record["time"], id
        assert layout.encode(record["timestamp_ms"], **fields) == id
        assert layout.encode(parts.timestamp_ms, parts.datacenter, parts.machine, parts.sequence) == id


@pytest.mark.parametrize("encoding", ["decimal", "hex", "base32", "base58"])
def test_text_encodings_against_the_cli(snowmint_bin, rng, encoding):
    """10,000 random IDs are written as `snowmint decode --output ENCODING`
    writes them, and read back."""
    ids = random_ids(rng, 10_000)
    done = run_cli(
        snowmint_bin,
        "decode",
        "--format",
        "csv",
        "--no-header",
        "--output",
        encoding,
        input="".join(f"{i}\n" for i in ids),
    )
    assert done.returncode == 0, done.stderr
    texts = [line.split(",")[0] for line in done.stdout.splitlines()]
    assert len(texts) == len(ids)
    for id, text in zip(ids, texts):
        assert snowmint.to_text(id, encoding) == text
        assert snowmint.from_text(text, encoding) == id


@pytest.mark.parametrize("name", LAYOUTS)
def test_layout_properties_match_the_cli(snowmint_bin, name):
    done = run_cli(snowmint_bin, "layout", "--format", "json", "--layout", name)
    assert done.returncode == 0, done.stderr
    cli = json.loads(done.stdout)
    layout = Layout.parse(name)
    assert str(layout) == cli["layout"]
    for key in (
        "epoch_ms",
        "timestamp_bits",
        "datacenter_bits",
        "machine_bits",
        "sequence_bits",
        "ids_per_ms",
        "node_count",
        "last_instant_ms",
    ):
        assert getattr(layout, key) == cli[key], key
    assert Layout.parse(cli["spec"]) == layout


def test_id_range_matches_the_cli(snowmint_bin, rng):
    layout = Layout.TWITTER
    for _ in range(20):
        start = rng.randrange(layout.epoch_ms, layout.last_instant_ms + 1)
        end = rng.randrange(start, min(start + 10**9, layout.last_instant_ms) + 1)
        done = run_cli(
            snowmint_bin, "range", "--from", str(start), "--to", str(end), "--format", "json"
        )
        assert done.returncode == 0, done.stderr
        cli = json.loads(done.stdout)
        ids = layout.id_range(start, end)
        assert (ids[0], ids[-1]) == (int(cli["min"]), int(cli["max"]))
        assert layout.decode(ids[0]).timestamp_ms == start
        assert layout.decode(ids[-1]).timestamp_ms == end
        if ids[0] > 0:
            assert layout.decode(ids[0] - 1).timestamp_ms == start - 1
        if ids[-1] < MAX_ID:
            assert layout.decode(ids[-1] + 1).timestamp_ms == end + 1
    # The very last instant: the range ends at the largest ID.
    last = layout.id_range(layout.last_instant_ms, layout.last_instant_ms)
    assert last[-1] == MAX_ID
    start = datetime(2023, 11, 14, 22, 13, 20, tzinfo=timezone.utc)
    assert layout.id_range(start, start) == layout.id_range(EXAMPLE_MS, EXAMPLE_MS)


# discord.com/developers/docs/reference#snowflakes: 175928847299117063 is
# 2016-04-30T11:18:25.796Z, worker 1, process 0, increment 7.
DISCORD_EXAMPLE = 175928847299117063


def test_every_family_by_its_own_names():
    discord = Layout.DISCORD
    assert discord.fields(DISCORD_EXAMPLE) == {"worker": 1, "process": 0, "increment": 7}
    assert list(discord.fields(DISCORD_EXAMPLE)) == ["worker", "process", "increment"]
    assert discord.encode(1462015105796, worker=1, process=0, increment=7) == DISCORD_EXAMPLE
    # The Twitter-era names still work, positionally or not.
    assert discord.encode(1462015105796, 1, 0, 7) == DISCORD_EXAMPLE
    assert discord.encode(1462015105796, datacenter=1, increment=7) == DISCORD_EXAMPLE
    assert discord.field_names == ["time", "worker", "process", "increment"]
    # Sonyflake: 10 ms units, machine in the low 16 bits.
    sonyflake = Layout.parse("sonyflake")
    ticks = (1700000000000 - 1409529600000) // 10
    assert sonyflake.encode(1700000000005, machine=513) == (ticks << 24) | 513
    assert sonyflake.fields((ticks << 24) | 513) == {"sequence": 0, "machine": 513}
    assert sonyflake.decode((ticks << 24) | 513).timestamp_ms == 1700000000000
    assert sonyflake.unit == "10ms"
    instagram = Layout.parse("instagram")
    assert set(instagram.fields(0)) == {"shard", "sequence"}
    assert Layout.parse("cosid-safe-js").max_id == 2**53 - 1
    assert Layout.parse("cosid-safe-js").js_safe
    assert not Layout.parse("mastodon").mintable


def test_discord_ids_at_and_above_2_pow_63():
    parts = Layout.DISCORD.decode(2**63)
    assert parts.timestamp_ms == 1420070400000 + 2**41
    top = Layout.DISCORD.fields(2**64 - 1)
    assert top == {"worker": 31, "process": 31, "increment": 4095}
    assert Layout.DISCORD.max_id == 2**64 - 1
    with pytest.raises(snowmint.errors.OutOfRangeError) as raised:
        Layout.DISCORD.decode(2**64)
    assert "0..=18446744073709551615" in str(raised.value)
    with pytest.raises(snowmint.errors.OutOfRangeError):
        Layout.TWITTER.decode(2**63)


def test_bad_fields_name_field_value_and_range():
    with pytest.raises(snowmint.errors.OutOfRangeError) as raised:
        Layout.DISCORD.encode(1462015105796, worker=32)
    assert str(raised.value) == "worker 32 is out of range (0..=31)"
    assert (raised.value.field, raised.value.min, raised.value.max) == ("worker", 0, 31)
    with pytest.raises(snowmint.errors.OutOfRangeError) as raised:
        Layout.DISCORD.encode(1462015105796, worker=-1)
    assert str(raised.value) == "worker -1 is out of range (0..=31)"
    with pytest.raises(snowmint.errors.InvalidValueError) as raised:
        Layout.DISCORD.encode(1462015105796, shard=1)
    assert "shard" in str(raised.value) and "worker" in str(raised.value)
    with pytest.raises(snowmint.errors.InvalidValueError) as raised:
        Layout.DISCORD.encode(1462015105796, datacenter=1, worker=1)
    assert str(raised.value) == "field worker is given twice (as datacenter and as worker)"
