"""No ID twice across a fork: a generator made before ``os.fork()`` (what
``gunicorn --preload``, uWSGI and ``multiprocessing`` with ``fork`` do)
is refused in the child when its node is fixed, and claims a slot of its
own in the child when it is claimed. Before this rule, 4 children of one
``Generator(datacenter=2, machine=5)`` issued 282,690 duplicates out of
800,000."""

import multiprocessing
import os
from array import array
from pathlib import Path

import pytest

import mp_workers
from servers import etcd  # noqa: F401 - a fixture
from snowmint import ForkError, Generator, Layout, NodeInUseError

CHILDREN = 4
PER_CHILD = 200_000


def run_processes(method, jobs, tmp_path):
    """Runs ``mp_workers.work`` once per job, each in a process of its own
    started by ``method``; returns their answers."""
    context = multiprocessing.get_context(method)
    processes = [
        context.Process(target=mp_workers.work_into, args=(job, str(tmp_path / f"{i}.answer")))
        for i, job in enumerate(jobs)
    ]
    for process in processes:
        process.start()
    for process in processes:
        process.join(timeout=300)
        assert process.exitcode == 0, f"a worker exited with {process.exitcode}"
    return [(tmp_path / f"{i}.answer").read_text() for i in range(len(jobs))]


def fork_children(generator, tmp_path):
    """Forks CHILDREN children, each making PER_CHILD IDs with
    ``generator`` one call at a time; returns each child's IDs, or the
    ForkError message it got."""
    pids = []
    for index in range(CHILDREN):
        pid = os.fork()
        if pid == 0:  # the child: never returns into pytest
            status = 0
            try:
                ids = array("q", (generator.next_id() for _ in range(PER_CHILD)))
                (tmp_path / f"{index}.ids").write_bytes(ids.tobytes())
            except ForkError as error:
                (tmp_path / f"{index}.err").write_text(str(error))
                status = 3
            except BaseException as error:  # noqa: BLE001 - reported by the parent
                (tmp_path / f"{index}.err").write_text(f"{type(error).__name__}: {error}")
                status = 4
            os._exit(status)
        pids.append(pid)
    results = []
    for index, pid in enumerate(pids):
        _, status = os.waitpid(pid, 0)
        code = os.waitstatus_to_exitcode(status)
        if code == 0:
            results.append(array("q", (tmp_path / f"{index}.ids").read_bytes()).tolist())
        elif code == 3:
            results.append(ForkError((tmp_path / f"{index}.err").read_text()))
        else:
            pytest.fail(f"child {index} exited with {code}: {(tmp_path / f'{index}.err').read_text()}")
    return results


def test_a_fixed_node_is_refused_in_every_forked_child(tmp_path):
    generator = Generator(datacenter=2, machine=5)
    before = generator.next_id()
    results = fork_children(generator, tmp_path)
    assert all(isinstance(result, ForkError) for result in results), results
    message = str(results[0])
    assert "fork" in message and "Generator.claim" in message and "own node" in message
    # The parent keeps issuing.
    assert generator.next_id() > before


def test_a_fixed_node_with_a_state_dir_is_refused_in_every_forked_child(tmp_path):
    generator = Generator(datacenter=2, machine=5, state_dir=tmp_path / "state")
    before = generator.next_id()
    results = fork_children(generator, tmp_path)
    assert all(isinstance(result, ForkError) for result in results), results
    assert generator.next_id() > before
    assert generator.state["state"] == "active"
    generator.close()


def test_a_claimed_generator_claims_a_slot_per_forked_child(etcd, tmp_path):  # noqa: F811
    generator = Generator.claim(
        etcd.url, fleet="fork", slots="0-15", claim_ttl="5s", state_dir=tmp_path / "state"
    )
    parent_node = generator.node
    first = generator.next_ids(1000)
    results = fork_children(generator, tmp_path)
    after = [generator.next_id() for _ in range(PER_CHILD)]
    every = first + after
    child_nodes = []
    for result in results:
        assert isinstance(result, list), result
        assert len(result) == PER_CHILD
        decoded = {(p.datacenter, p.machine) for p in map(Layout.TWITTER.decode, (result[0], result[-1]))}
        assert len(decoded) == 1, f"a child's IDs came from two nodes: {decoded}"
        child_nodes.append(decoded.pop())
        every += result
    assert len(every) == len(set(every)), f"{len(every) - len(set(every))} duplicate IDs"
    assert len(set(child_nodes)) == CHILDREN, child_nodes
    assert parent_node not in child_nodes
    # The parent still holds its own slot.
    assert generator.node == parent_node
    assert {(p.datacenter, p.machine) for p in map(Layout.TWITTER.decode, after)} == {parent_node}
    generator.close()


@pytest.mark.parametrize("method", ["fork", "spawn"])
def test_multiprocessing_plain_and_fixed_nodes(method, tmp_path, monkeypatch):
    """Workers with the parent's generator: with ``fork`` each
    worker's copy is refused (ForkError); with ``spawn`` each worker makes
    its own from the same settings, and a node with a state directory is
    refused (NodeInUseError) while the parent holds it."""
    monkeypatch.setenv("SNOWMINT_TEST_MODE", "static")
    monkeypatch.setenv("SNOWMINT_TEST_STATE_DIR", str(tmp_path / "state"))
    mp_workers.GENERATOR = mp_workers.make()
    try:
        jobs = [(10_000, str(tmp_path / f"{i}.ids")) for i in range(CHILDREN)]
        answers = run_processes(method, jobs, tmp_path)
    finally:
        mp_workers.GENERATOR.close()
        mp_workers.GENERATOR = None
    expected = "ForkError" if method == "fork" else "NodeInUseError"
    assert all(answer.startswith(expected) for answer in answers), answers
    if method == "spawn":
        assert f"process {os.getpid()}" in answers[0] or str(os.getpid()) in answers[0], answers[0]


@pytest.mark.parametrize("method", ["fork", "spawn"])
def test_multiprocessing_claimed(method, etcd, tmp_path, monkeypatch):  # noqa: F811
    """Workers with a claimed generator: each worker issues from a
    slot of its own, with both start methods, and no ID repeats."""
    monkeypatch.setenv("SNOWMINT_TEST_MODE", "claimed")
    monkeypatch.setenv("SNOWMINT_TEST_COORDINATOR", etcd.url)
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "xdg"))
    mp_workers.GENERATOR = mp_workers.make()
    parent_node = mp_workers.GENERATOR.node
    try:
        jobs = [(50_000, str(tmp_path / f"{i}.ids")) for i in range(CHILDREN)]
        answers = run_processes(method, jobs, tmp_path)
        parent_ids = [mp_workers.GENERATOR.next_id() for _ in range(50_000)]
    finally:
        mp_workers.GENERATOR.close()
        mp_workers.GENERATOR = None
    assert answers == ["ok"] * CHILDREN, answers
    every = list(parent_ids)
    held = []  # per child: its one node, and the first and last ID it issued
    for _, path in jobs:
        ids = array("q", Path(path).read_bytes()).tolist()
        nodes = {(p.datacenter, p.machine) for p in map(Layout.TWITTER.decode, ids)}
        assert len(nodes) == 1, nodes
        held.append((nodes.pop(), min(ids), max(ids)))
        every += ids
    assert len(every) == len(set(every)), f"{len(every) - len(set(every))} duplicate IDs"
    assert parent_node not in {node for node, _, _ in held}, (held, parent_node)
    # A slot of its own while it runs: two workers on one node held it one
    # after the other (a worker that ended released it, and a later one,
    # started late on a loaded machine, claimed it again), never at once.
    for i, (node, first, last) in enumerate(held):
        for other, other_first, other_last in held[i + 1 :]:
            if node == other:
                assert last < other_first or other_last < first, held
