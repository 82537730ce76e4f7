"""The generator from Python: its rules (the Rust generator's, which it
runs), its thread safety, and that it lets other threads run while it
waits."""

import subprocess
import sys
import threading
import textwrap
from datetime import timedelta

import pytest

from snowmint import ClockBehindError, Generator, Layout, ManualClock

T = 1700000000000


def test_four_threads_share_a_generator():
    """4 Python threads x 250,000 IDs: all distinct, each thread's
    increasing, all of the generator's node."""
    generator = Generator(datacenter=7, machine=13)
    per_thread = 250_000
    results = [None] * 4
    failures = []

    def work(slot):
        try:
            results[slot] = [generator.next_id() for _ in range(per_thread)]
        except BaseException as error:  # reported by the main thread
            failures.append(error)

    threads = [threading.Thread(target=work, args=(slot,)) for slot in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=300)
        assert not thread.is_alive(), "a generating thread did not finish within 300 s"
    assert not failures, failures
    for ids in results:
        assert len(ids) == per_thread
        assert all(a < b for a, b in zip(ids, ids[1:])), "a thread's IDs went down"
    everything = [id for ids in results for id in ids]
    assert len(set(everything)) == 4 * per_thread, "an ID was issued twice"
    for id in everything[:: 997]:
        parts = Layout.TWITTER.decode(id)
        assert (parts.datacenter, parts.machine) == (7, 13)


def test_batches_are_increasing_and_continue_single_calls():
    generator = Generator(datacenter=1, machine=2, layout=Layout.DISCORD)
    first = generator.next_id()
    batch = generator.next_ids(20_000)
    last = generator.next_id()
    assert len(batch) == 20_000
    assert first < batch[0] and batch[-1] < last
    assert all(a < b for a, b in zip(batch, batch[1:]))
    assert generator.next_ids(0) == []
    assert Layout.DISCORD.decode(last).machine == 2
    assert generator.layout == Layout.DISCORD


def test_sequence_counts_up_and_restarts_on_a_hand_clock():
    clock = ManualClock(T)
    generator = Generator(datacenter=3, machine=4, clock=clock)
    ids = generator.next_ids(4096)
    assert [Layout.TWITTER.decode(i).sequence for i in ids] == list(range(4096))
    assert {Layout.TWITTER.decode(i).timestamp_ms for i in ids} == {T}
    clock.advance(1)
    next = Layout.TWITTER.decode(generator.next_id())
    assert (next.timestamp_ms, next.sequence) == (T + 1, 0)


def test_sonyflake_counts_256_a_tick_of_10_ms_and_machine_alone_names_the_node(tmp_path):
    """Sonyflake (sony/sonyflake v1): 10 ms ticks since 2014-09-01, an
    8-bit sequence and the 16-bit machine, its one node field."""
    sonyflake = Layout.parse("sonyflake")
    clock = ManualClock(T + 7)
    generator = Generator(machine=513, layout=sonyflake, clock=clock)
    ids = generator.next_ids(256)
    tick = (T - 1409529600000) // 10
    assert ids == [(tick << 24) | (sequence << 16) | 513 for sequence in range(256)]
    clock.advance(10)
    assert generator.next_id() == ((tick + 1) << 24) | 513
    # With a state directory too: the node's lock and mark, on the real clock.
    with Generator(machine=65535, layout=sonyflake, state_dir=tmp_path) as durable:
        more = durable.next_ids(600)
    assert all(a < b for a, b in zip(more, more[1:]))
    assert {id & 0xFFFF for id in more} == {65535}
    # A layout with two node fields still needs both.
    with pytest.raises(TypeError, match="datacenter= is missing"):
        Generator(machine=1, layout=Layout.DISCORD)
    with pytest.raises(Exception, match="machine 65536 is out of range"):
        Generator(machine=65536, layout=sonyflake)


def test_a_node_of_several_slots_issues_all_of_them_each_tick_in_order():
    """slots_per_node=K: the node holds slots node .. node+K, and each
    tick holds every ID of all K, increasing (Twitter: slot 6's sequence,
    then slot 7's; Sonyflake: each sequence number across the machines)."""
    clock = ManualClock(T)
    twitter = Generator(datacenter=0, machine=6, slots_per_node=2, clock=clock)
    ids = twitter.next_ids(8192)
    parts = [Layout.TWITTER.decode(i) for i in ids]
    assert ids == sorted(set(ids))
    assert {p.timestamp_ms for p in parts} == {T}
    assert [(p.machine, p.sequence) for p in parts] == [
        (machine, sequence) for machine in (6, 7) for sequence in range(4096)
    ]
    assert twitter.state["slots"] == 2 and twitter.state["slot"] == 6
    clock.advance(1)
    first = Layout.TWITTER.decode(twitter.next_id())
    assert (first.timestamp_ms, first.machine, first.sequence) == (T + 1, 6, 0)

    sonyflake = Layout.parse("sonyflake")
    eight = Generator(machine=8, layout=sonyflake, slots_per_node=8, clock=ManualClock(T))
    ids = eight.next_ids(2048)
    tick = (T - 1409529600000) // 10
    assert ids == [(tick << 24) | (sequence << 16) | machine
                   for sequence in range(256) for machine in range(8, 16)]

    with pytest.raises(Exception, match=r"slots per node 3 is not valid: a node holds a power of two of slots, 1 to 1024"):
        Generator(datacenter=0, machine=0, slots_per_node=3)
    with pytest.raises(Exception, match=r"slots 1022\.\.=1025 run past the last slot 1023"):
        Generator(datacenter=31, machine=30, slots_per_node=4)
    with pytest.raises(Exception, match="slots_per_node"):
        Generator(datacenter=0, machine=0, slots_per_node=-1)


def test_a_durable_node_of_two_slots_locks_and_marks_both(tmp_path):
    """With a state directory the node of slots 6-7 holds both slots'
    locks and writes both marks; a node on slot 7 alone is refused while it
    runs, and resumes after its mark once it is closed."""
    with Generator(datacenter=0, machine=6, slots_per_node=2, state_dir=tmp_path) as pair:
        assert pair.state["slots"] == 2
        ids = pair.next_ids(20000)
        assert {Layout.TWITTER.decode(i).machine for i in ids} <= {6, 7}
        with pytest.raises(Exception, match="slot 7|machine 7|dc0-m7"):
            Generator(datacenter=0, machine=7, state_dir=tmp_path)
    assert sorted(p.name for p in tmp_path.glob("*.mark")) == ["node-dc0-m6.mark", "node-dc0-m7.mark"]
    with Generator(datacenter=0, machine=7, state_dir=tmp_path) as single:
        assert Layout.TWITTER.decode(single.next_id()).timestamp_ms > Layout.TWITTER.decode(ids[-1]).timestamp_ms


def test_refuse_until_the_clock_catches_up():
    clock = ManualClock(T)
    generator = Generator(datacenter=0, machine=0, clock=clock)
    assert generator.policy == "refuse" and generator.max is None
    before = generator.next_id()
    clock.set(T - 1)
    with pytest.raises(ClockBehindError) as caught:
        generator.next_id()
    assert (caught.value.last_ms, caught.value.now_ms) == (T, T - 1)
    clock.set(T)
    after = generator.next_id()
    assert after > before and Layout.TWITTER.decode(after).sequence == 1


def test_borrow_runs_ahead_within_its_bound():
    clock = ManualClock(T)
    generator = Generator(datacenter=0, machine=0, policy="borrow", max="50ms", clock=clock)
    assert generator.max == timedelta(milliseconds=50)
    before = generator.next_id()
    clock.set(T - 50)
    borrowed = generator.next_id()
    assert borrowed > before and Layout.TWITTER.decode(borrowed).timestamp_ms == T
    clock.set(T - 51)
    with pytest.raises(ClockBehindError):
        generator.next_id()


def test_wait_refuses_past_its_bound():
    clock = ManualClock(T)
    generator = Generator(datacenter=0, machine=0, policy="wait", max="10ms", clock=clock)
    generator.next_id()
    clock.set(T - 11)
    with pytest.raises(ClockBehindError) as caught:
        generator.next_id()
    assert (caught.value.last_ms, caught.value.now_ms) == (T, T - 11)


def run_child(script: str) -> str:
    """Runs `script` in a child interpreter, so that a waiting thread that
    kept the interpreter lock makes the child hang, and this test fail on
    its deadline, rather than hanging the test process."""
    try:
        done = subprocess.run(
            [sys.executable, "-c", textwrap.dedent(script)],
            capture_output=True,
            text=True,
            timeout=60,
        )
    except subprocess.TimeoutExpired:
        pytest.fail("the child interpreter hung for 60 s: a waiting call kept the interpreter lock")
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_exhaustion_lets_go_of_the_interpreter_while_waiting():
    """next_id waits for the next millisecond when this one is used up; the
    main thread runs Python meanwhile and moves the hand clock."""
    out = run_child(
        """
        import threading, time
        from snowmint import Generator, Layout, ManualClock

        T = 1700000000000
        clock = ManualClock(T)
        generator = Generator(datacenter=0, machine=0, clock=clock)
        generator.next_ids(4096)          # all of millisecond T
        got = []
        waiter = threading.Thread(target=lambda: got.append(generator.next_id()))
        waiter.start()
        loops = 0
        deadline = time.monotonic() + 0.3
        while time.monotonic() < deadline:
            loops += 1
        assert waiter.is_alive() and not got, "next_id returned without a new millisecond"
        clock.advance(1)
        waiter.join(timeout=30)
        assert not waiter.is_alive(), "next_id did not return after the clock moved"
        parts = Layout.TWITTER.decode(got[0])
        assert (parts.timestamp_ms, parts.sequence) == (T + 1, 0), parts
        print("ran", loops, "loops while the other thread waited")
        """
    )
    assert out.startswith("ran ")


def test_wait_lets_go_of_the_interpreter_while_waiting_out_a_regression():
    """A `wait` generator whose hand clock is behind waits in next_id; the
    main thread runs meanwhile and moves the clock forward."""
    out = run_child(
        """
        import threading
        from datetime import timedelta
        from snowmint import Generator, Layout, ManualClock

        T = 1700000000000
        clock = ManualClock(T)
        generator = Generator(datacenter=0, machine=0, policy="wait",
                              max=timedelta(seconds=60), clock=clock)
        generator.next_id()
        clock.set(T - 20)
        got = []
        waiter = threading.Thread(target=lambda: got.append(generator.next_id()))
        waiter.start()
        waiter.join(timeout=0.3)
        assert waiter.is_alive() and not got, "next_id returned while the clock was behind"
        clock.set(T + 5)
        waiter.join(timeout=30)
        assert not waiter.is_alive(), "next_id did not return after the clock caught up"
        assert Layout.TWITTER.decode(got[0]).timestamp_ms == T + 5
        print("waited")
        """
    )
    assert out.strip() == "waited"


def test_next_ids_lets_go_of_the_interpreter():
    """A batch that needs the hand clock to move finishes when the main
    thread moves it; each millisecond it used holds 4,096 IDs."""
    out = run_child(
        """
        import threading, time
        from collections import Counter
        from snowmint import Generator, Layout, ManualClock

        T = 1700000000000
        clock = ManualClock(T)
        generator = Generator(datacenter=0, machine=0, clock=clock)
        got = []
        batch = threading.Thread(target=lambda: got.append(generator.next_ids(3 * 4096)))
        batch.start()
        deadline = time.monotonic() + 30
        while batch.is_alive() and time.monotonic() < deadline:
            batch.join(timeout=0.02)
            clock.advance(1)
        assert not batch.is_alive(), "next_ids did not finish while the clock moved"
        stamps = [Layout.TWITTER.decode(i).timestamp_ms for i in got[0]]
        assert stamps == sorted(stamps)
        assert set(Counter(stamps).values()) == {4096}, Counter(stamps)
        assert len(stamps) == 3 * 4096
        print("batched")
        """
    )
    assert out.strip() == "batched"


def test_repr_and_properties():
    generator = Generator(datacenter=5, machine=6, policy="wait", max="1.5s")
    assert (generator.datacenter, generator.machine, generator.policy) == (5, 6, "wait")
    assert generator.max == timedelta(milliseconds=1500)
    assert repr(generator) == (
        "Generator(datacenter=5, machine=6, layout=Layout.TWITTER, policy='wait', max='1500ms')"
    )
    with pytest.raises(TypeError):
        Generator(5, 6)  # the node is named, never positional
