"""A generator whose node is a slot claimed from a real etcd: it holds a
slot of the range, releases it on close, and stops issuing (FencedError)
before a claim it cannot confirm could be handed on."""

import os
import signal
import time
from array import array

import pytest

from servers import etcd, finish, python_program, wait_until  # noqa: F401
from snowmint import FencedError, Generator, InvalidValueError, Layout


def test_a_claimed_generator_holds_a_slot_and_releases_it(etcd, tmp_path):  # noqa: F811
    with Generator.claim(etcd.url, fleet="one", slots="5-5", state_dir=tmp_path) as generator:
        assert generator.node == (0, 5)
        state = generator.state
        assert state["state"] == "active" and state["source"] == "etcd"
        assert state["slot"] == 5 and state["generation"] >= 1
        ids = generator.next_ids(5000)
        assert {Layout.TWITTER.decode(i).machine for i in ids} == {5}
    # Released at once: the only slot is free again for another process,
    # which issues above what this one issued.
    other = python_program(
        """
        import sys
        from snowmint import Generator
        g = Generator.claim(sys.argv[1], fleet="one", slots="5-5", state_dir=sys.argv[2], wait="5s")
        print(g.next_id())
        g.close()
        """,
        etcd.url,
        str(tmp_path / "other"),
    )
    assert int(finish(other)) > ids[-1]


def test_a_claimed_generator_of_two_slots_holds_an_aligned_block(etcd, tmp_path):  # noqa: F811
    """slots_per_node=2 in slots 4-7: the claim is a block of two, 4-5 or
    6-7, held and released together; its IDs carry only those machines,
    and a second generator takes the other block, never a slot of the
    first."""
    first = Generator.claim(etcd.url, fleet="pairs", slots="4-7", slots_per_node=2,
                            state_dir=tmp_path / "a")
    second = Generator.claim(etcd.url, fleet="pairs", slots="4-7", slots_per_node=2,
                             state_dir=tmp_path / "b")
    blocks = []
    for generator in (first, second):
        state = generator.state
        assert state["slots"] == 2 and state["slot"] in (4, 6), state
        blocks.append(state["slot"])
        machines = {Layout.TWITTER.decode(i).machine for i in generator.next_ids(20000)}
        assert machines <= {state["slot"], state["slot"] + 1}, machines
    assert sorted(blocks) == [4, 6]
    # No block is left: a third waits, and is refused after its wait.
    with pytest.raises(FencedError):
        Generator.claim(etcd.url, fleet="pairs", slots="4-7", slots_per_node=2,
                        state_dir=tmp_path / "c", wait="1s")
    first.close()
    third = Generator.claim(etcd.url, fleet="pairs", slots="4-7", slots_per_node=2,
                            state_dir=tmp_path / "c", wait="5s")
    assert third.state["slot"] == blocks[0]
    third.close()
    second.close()
    with pytest.raises(InvalidValueError, match="no aligned block of 4"):
        Generator.claim(etcd.url, fleet="pairs", slots="4-6", slots_per_node=4, wait="1s")


def test_a_second_generator_waits_for_a_free_slot_and_says_why(etcd, tmp_path):  # noqa: F811
    first = Generator.claim(etcd.url, fleet="full", slots="1-1", state_dir=tmp_path / "a")
    with pytest.raises(FencedError) as refused:
        Generator.claim(etcd.url, fleet="full", slots="1-1", state_dir=tmp_path / "b", wait="1s")
    assert "1s" in str(refused.value) or "1 s" in str(refused.value)
    first.close()


def test_bad_coordinator_urls_never_show_the_password(tmp_path):
    for url in ["etcd://root:s3cr3t-pw@", "zk://root:s3cr3t-pw@:x", "nope://root:s3cr3t-pw@host"]:
        with pytest.raises(InvalidValueError) as error:
            Generator.claim(url, state_dir=tmp_path, wait="1s")
        assert "s3cr3t-pw" not in str(error.value), str(error.value)
        assert "s3cr3t-pw" not in repr(error.value.value)


WRITER = """
    import sys, time
    from array import array
    from snowmint import FencedError, Generator, RefusedError
    generator = Generator.claim(sys.argv[1], fleet="fence", slots=sys.argv[2], claim_ttl="3s",
                                state_dir=sys.argv[3], wait="30s")
    print("node", *generator.node, flush=True)
    ids = array("q")
    fenced_at = None
    resumed_at = None
    end = time.monotonic() + float(sys.argv[4])
    while time.monotonic() < end:
        try:
            ids.append(generator.next_id())
            if fenced_at is not None and resumed_at is None:
                resumed_at = time.monotonic()
                print("resumed", *generator.node, flush=True)
        except FencedError as error:
            if fenced_at is None:
                fenced_at = time.monotonic()
                print("fenced", error.code, flush=True)
            time.sleep(0.01)
        except RefusedError as error:
            # Before the claim runs out, the mark's write may be what
            # fails first (mark_unwritable): refused all the same.
            time.sleep(0.01)
    open(sys.argv[5], "wb").write(ids.tobytes())
    print("done", len(ids), flush=True)
"""


def test_a_lost_claim_is_fenced_before_its_ttl_and_resumes(etcd, tmp_path):  # noqa: F811
    """etcd is paused past the TTL: the holder raises FencedError before
    the TTL ends, a second process takes the slot once etcd answers again,
    the first resumes on another slot, and no ID repeats."""
    a = python_program(WRITER, etcd.url, "7-8", str(tmp_path / "a"), "14", str(tmp_path / "a.ids"))
    line = wait_until("the first writer to claim", a.stdout.readline).split()
    assert line[0] == "node", line
    a_node = (int(line[1]), int(line[2]))
    slot = a_node[0] * 32 + a_node[1]
    # The second writer wants exactly the first one's slot.
    b = python_program(WRITER, etcd.url, f"{slot}-{slot}", str(tmp_path / "b"), "14", str(tmp_path / "b.ids"))
    time.sleep(1.0)
    paused_at = time.monotonic()
    etcd.pause()
    fenced = wait_until("the first writer to be fenced", a.stdout.readline, timeout=10).split()
    fenced_after = time.monotonic() - paused_at
    assert fenced[0] == "fenced" and fenced[1] == "no_claim", fenced
    # Before the 3 s TTL could end on etcd's clock.
    assert fenced_after < 3.0, fenced_after
    time.sleep(6.0 - fenced_after)
    etcd.resume()
    resumed = wait_until("the first writer to issue again", a.stdout.readline, timeout=20).split()
    assert resumed[0] == "resumed", resumed
    out_b = finish(b, timeout=60)
    finish(a, timeout=60)
    assert out_b.startswith("node"), out_b
    b_node = tuple(int(v) for v in out_b.split()[1:3])
    assert b_node == a_node
    ids_a = array("q", (tmp_path / "a.ids").read_bytes()).tolist()
    ids_b = array("q", (tmp_path / "b.ids").read_bytes()).tolist()
    assert ids_a and ids_b
    every = ids_a + ids_b
    assert len(every) == len(set(every)), f"{len(every) - len(set(every))} duplicate IDs"
    print(f"fenced {fenced_after:.2f} s after the pause; {len(ids_a)} + {len(ids_b)} IDs, 0 duplicates")
