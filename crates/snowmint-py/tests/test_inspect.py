"""snowmint.inspect: the known-answer vectors (vectors/vectors.json) read
through it, its arguments, and texts past its bounds refused by name."""

import json
from datetime import datetime, timezone

import pytest

import snowmint
from snowmint import OutOfRangeError

from conftest import ROOT

NOW = 1750000000000  # 2025-06-15T15:06:40Z


def vectors():
    data = json.loads((ROOT / "vectors" / "vectors.json").read_text())
    assert data["version"] == 1
    return data


def test_every_vector():
    data = vectors()
    text = "".join(v["input"] + "\n" for v in data["vectors"])
    tokens = snowmint.inspect(text, now=NOW)
    assert len(tokens) == len(data["vectors"])
    for token, vector in zip(tokens, data["vectors"]):
        assert token.input == vector["input"]
        reading = next(r for r in token.candidates if r.family == vector["family"])
        assert reading.time == vector["time"], token
        for name, value in vector["fields"].items():
            assert reading.fields[name] == value, (name, token)
            assert reading.to_dict()[name] == value


def test_every_text():
    for entry in vectors()["texts"]:
        tokens = snowmint.inspect(entry["text"], now=NOW)
        assert len(tokens) == len(entry["tokens"]), entry["text"]
        for token, expected in zip(tokens, entry["tokens"]):
            best = token.candidates[0]
            assert (token.input, best.family, best.time) == (
                expected["input"],
                expected["family"],
                expected["time"],
            )


def test_ranking_times_and_dicts():
    tokens = snowmint.inspect("https://x.com/jack/status/1724551110457221119 1724551110457221119", now=NOW)
    link, bare = tokens
    assert link.context == "post in an X/Twitter link"
    assert [r.plausibility for r in link.candidates] == ["pinned"]
    # Every preset reads it: Twitter's reading first, Discord's (in 2028)
    # among the implausible ones, which all come last.
    ranks = [(r.family, r.plausibility) for r in bare.candidates]
    assert ranks[0] == ("twitter", "plausible")
    assert len(ranks) >= 10
    implausible = [r.plausibility == "implausible" for r in bare.candidates]
    assert implausible == sorted(implausible), ranks
    discord = next(r for r in bare.candidates if r.family == "discord")
    assert discord.plausibility == "implausible"
    assert "in the future" in discord.why
    # Sonyflake's reading is at its unit, 10 ms, with Sonyflake's fields.
    sonyflake = next(r for r in bare.candidates if r.family == "sonyflake")
    assert sonyflake.time == "2047-03-29T03:16:03.35Z"
    assert sonyflake.to_dict()["machine"] == 57343
    twitter = bare.candidates[0]
    assert twitter.unix_ns == 1700000000000 * 1000000
    assert twitter.datetime == datetime(2023, 11, 14, 22, 13, 20, tzinfo=timezone.utc)
    assert json.loads(json.dumps(bare.to_dict()))["candidates"][0]["datacenter"] == 7
    assert (bare.start, bare.end) == (46, 65)
    # A random UUID holds no time.
    uuid = snowmint.inspect("550e8400-e29b-41d4-a716-446655440000")[0].candidates[0]
    assert (uuid.family, uuid.time, uuid.unix_ns, uuid.datetime) == ("uuid-v4", None, None, None)


def test_now_layout_and_bytes():
    # With now in 2020, a 2023 tweet is in the future.
    aware = datetime(2020, 1, 1, tzinfo=timezone.utc)
    candidates = snowmint.inspect("1724551110457221119", now=aware)[0].candidates
    reading = next(r for r in candidates if r.family == "twitter")
    assert reading.plausibility == "implausible"
    alone = snowmint.inspect("175928847299117063", layout=snowmint.Layout.DISCORD)[0]
    assert [r.family for r in alone.candidates] == ["discord"]
    tokens = snowmint.inspect(b"\xff 1724551110457221119 \xfe")
    assert [t.input for t in tokens] == ["1724551110457221119"]
    with pytest.raises(TypeError, match="text must be str or bytes, not int"):
        snowmint.inspect(12)


def test_bounds_are_named():
    with pytest.raises(OutOfRangeError, match=r"^text length 1048577 is out of range \(0..=1048576\)$") as error:
        snowmint.inspect(" " * (1048576 + 1))
    assert (error.value.value, error.value.max) == (1048577, 1048576)
    with pytest.raises(OutOfRangeError, match=r"token count 10001\+ is out of range"):
        snowmint.inspect("1724551110457221119\n" * 10001)
    assert len(snowmint.inspect("1724551110457221119\n" * 10000)) == 10000
