"""Real ``gunicorn --preload`` with 4 sync workers serving ``next_id()``
from a generator made when the app is imported, in the master, before
the workers are forked: the case that fills other projects' issue
trackers with duplicate IDs. With a fixed node every worker answers
ForkError (a 500) and no ID goes out twice; with a slot claimed from etcd
each worker claims its own slot and every ID is distinct."""

import os
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from servers import etcd, free_port, wait_until  # noqa: F401
from snowmint import Layout

APP = '''
import os
import snowmint

if os.environ["SNOWMINT_TEST_MODE"] == "static":
    generator = snowmint.Generator(datacenter=6, machine=6)
else:
    generator = snowmint.Generator.claim(
        os.environ["SNOWMINT_TEST_COORDINATOR"], fleet="gunicorn", slots="0-15",
        claim_ttl="5s", state_dir=os.environ["SNOWMINT_TEST_STATE_DIR"])


def app(environ, start_response):
    try:
        body = str(generator.next_id()).encode()
        status = "200 OK"
    except snowmint.ForkError as error:
        body = ("ForkError: " + str(error)).encode()
        status = "500 Internal Server Error"
    start_response(status, [("Content-Type", "text/plain"), ("Content-Length", str(len(body)))])
    return [body]
'''

SECONDS = 4
CLIENTS = 8


def gunicorn_binary() -> str:
    path = Path(sys.executable).with_name("gunicorn")
    if not path.is_file():
        pytest.fail(f"gunicorn is not installed in {path.parent}: crates/snowmint-py/install installs it from PyPI")
    return str(path)


def serve(mode, tmp_path, env):
    (tmp_path / "idapp.py").write_text(APP)
    port = free_port()
    process = subprocess.Popen(
        [gunicorn_binary(), "--preload", "--workers", "4", "--worker-class", "sync",
         "--bind", f"127.0.0.1:{port}", "--chdir", str(tmp_path), "--log-level", "warning",
         "idapp:app"],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env={**os.environ, "SNOWMINT_TEST_MODE": mode, **env},
    )

    def answers():
        if process.poll() is not None:
            pytest.fail(f"gunicorn exited with {process.returncode}:\n{process.stdout.read()}")
        with socket.create_connection(("127.0.0.1", port), timeout=1):
            return True

    wait_until("gunicorn to listen", answers, timeout=60)
    return process, port


def hammer(port):
    """CLIENTS threads sending requests for SECONDS; returns (status, body)
    of every answer."""
    results = []
    lock = threading.Lock()
    end = time.monotonic() + SECONDS

    def client():
        mine = []
        while time.monotonic() < end:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=10) as answer:
                    mine.append((answer.status, answer.read().decode()))
            except urllib.error.HTTPError as error:
                mine.append((error.code, error.read().decode()))
        with lock:
            results.extend(mine)

    threads = [threading.Thread(target=client) for _ in range(CLIENTS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=SECONDS + 60)
    return results


def stop(process):
    process.terminate()
    try:
        process.wait(timeout=30)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


def test_gunicorn_preload_with_a_fixed_node_refuses_in_every_worker(tmp_path):
    process, port = serve("static", tmp_path, {})
    try:
        results = hammer(port)
    finally:
        stop(process)
    assert results, "no answer at all"
    statuses = {status for status, _ in results}
    assert statuses == {500}, statuses
    assert all(body.startswith("ForkError: ") for _, body in results)
    print(f"{len(results)} requests, every one ForkError (500), 0 IDs issued")


def test_gunicorn_preload_with_a_claimed_slot_issues_distinct_ids(etcd, tmp_path):  # noqa: F811
    process, port = serve(
        "claimed",
        tmp_path,
        {"SNOWMINT_TEST_COORDINATOR": etcd.url, "SNOWMINT_TEST_STATE_DIR": str(tmp_path / "state")},
    )
    try:
        results = hammer(port)
    finally:
        stop(process)
    assert results, "no answer at all"
    assert {status for status, _ in results} == {200}, [r for r in results if r[0] != 200][:3]
    ids = [int(body) for _, body in results]
    assert len(ids) == len(set(ids)), f"{len(ids) - len(set(ids))} duplicate IDs"
    nodes = {(p.datacenter, p.machine) for p in map(Layout.TWITTER.decode, ids)}
    assert len(nodes) == 4, f"IDs came from {len(nodes)} slots: {sorted(nodes)}"
    print(f"{len(ids)} IDs from {len(nodes)} slots, 0 duplicates")
