"""A fixed node with a state directory keeps the rules of ``snowmint
serve``: one process per node on a host, and a durable high-water mark
that a restart never issues at or below, even with the clock set back."""

import os
import shutil
import signal
import time

import pytest

from servers import finish, python_program, wait_until
from snowmint import ClockBehindError, Generator, Layout, NodeInUseError

HOLD = """
    import sys, time
    from snowmint import Generator
    generator = Generator(datacenter=4, machine=9, state_dir=sys.argv[1])
    ids = generator.next_ids(5000)
    print(ids[-1], flush=True)
    time.sleep(600)
"""


def test_a_second_process_on_the_node_is_refused_and_a_killed_one_leaves_no_lock(tmp_path):
    holder = python_program(HOLD, str(tmp_path))
    try:
        last = int(wait_until("the first process to issue", holder.stdout.readline))
        with pytest.raises(NodeInUseError) as refused:
            Generator(datacenter=4, machine=9, state_dir=tmp_path)
        error = refused.value
        assert error.pid == holder.pid
        assert error.lock_file.startswith(str(tmp_path))
        assert str(holder.pid) in str(error) and error.lock_file in str(error)
        # Another node in the same directory is no conflict.
        Generator(datacenter=4, machine=10, state_dir=tmp_path).close()
    finally:
        holder.send_signal(signal.SIGKILL)
        holder.wait(timeout=30)
    # kill -9 leaves no stale lock: the node starts at once, above the
    # mark the dead process left.
    generator = Generator(datacenter=4, machine=9, state_dir=tmp_path, policy="wait", max="3s")
    assert generator.next_id() > last
    assert generator.state["high_water_mark_ms"] > Layout.TWITTER.decode(last).timestamp_ms
    generator.close()


def faketime():
    binary = shutil.which("faketime")
    if binary is None:
        pytest.fail("libfaketime is not installed: apt-get install faketime (scripts/test does)")
    return binary


RESTART = """
    import sys
    from snowmint import ClockBehindError, Generator
    try:
        generator = Generator(datacenter=4, machine=9, state_dir=sys.argv[1])
        ids = generator.next_ids(1000)
        print("ids", min(ids), max(ids))
    except ClockBehindError as error:
        print("refused", error.last_ms, error.now_ms)
        print(error, file=sys.stderr)
"""


def test_a_restart_with_the_clock_set_back_issues_nothing_at_or_below_the_mark(tmp_path):
    holder = python_program(HOLD, str(tmp_path))
    last = int(wait_until("the first process to issue", holder.stdout.readline))
    holder.send_signal(signal.SIGKILL)
    holder.wait(timeout=30)
    mark_file = [p for p in tmp_path.iterdir() if p.suffix != ".lock"]
    assert mark_file, list(tmp_path.iterdir())
    # 5 s back: more than the 2 s a start waits out, so it refuses,
    # naming the mark and the clock.
    back = python_program(RESTART, str(tmp_path), prefix=(faketime(), "-f", "-5s"))
    out = finish(back)
    kind, first, second = out.split()
    assert kind == "refused", out
    assert int(first) > Layout.TWITTER.decode(last).timestamp_ms
    assert int(first) - int(second) > 4000
    # 1 s back: waited out, then every ID is above the dead process's last.
    back = python_program(RESTART, str(tmp_path), prefix=(faketime(), "-f", "-1s"))
    kind, low, high = finish(back).split()
    assert kind == "ids"
    assert int(low) > last


def test_the_mark_is_kept_ahead_of_the_ids(tmp_path):
    generator = Generator(datacenter=1, machine=1, state_dir=tmp_path)
    ids = generator.next_ids(10_000)
    state = generator.state
    assert state["state"] == "active" and state["source"] == "static"
    assert state["high_water_mark_ms"] >= Layout.TWITTER.decode(ids[-1]).timestamp_ms
    assert os.path.isfile(state["state_file"])
    generator.close()
    assert generator.state["state"] == "closed"
    with pytest.raises(Exception) as closed:
        generator.next_id()
    assert type(closed.value).__name__ == "FencedError"
    assert "closed" in str(closed.value)


def test_wrong_settings_are_clear_errors(tmp_path):
    with pytest.raises(TypeError, match="coordinator="):
        Generator(state_dir=tmp_path)
    with pytest.raises(TypeError, match="machine= is missing"):
        Generator(datacenter=1, state_dir=tmp_path)
    with pytest.raises(TypeError, match="not both"):
        Generator(datacenter=1, machine=1, coordinator="etcd://127.0.0.1:1")
    with pytest.raises(TypeError, match="coordinator= too"):
        Generator(datacenter=1, machine=1, slots="0-3")
    (tmp_path / "file").write_text("")
    with pytest.raises(OSError) as error:
        Generator(datacenter=1, machine=1, state_dir=tmp_path / "file")
    assert type(error.value).__name__ == "StateError"
    assert str(tmp_path / "file") in str(error.value)
