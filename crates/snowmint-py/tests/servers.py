"""Real servers and processes for the tests: an etcd server on free
loopback ports, and Python programs run as child processes.

A missing server fails the test and says how to install it; nothing is
skipped.
"""

import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import textwrap
import time
import urllib.request
from pathlib import Path

import pytest


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def wait_until(what: str, check, timeout: float = 30.0, every: float = 0.05):
    """Calls ``check`` until it returns something true; fails the test
    saying what it waited for after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    last = None
    while time.monotonic() < deadline:
        try:
            value = check()
            if value:
                return value
        except Exception as error:  # noqa: BLE001 - reported below
            last = error
        time.sleep(every)
    pytest.fail(f"waited {timeout} s for {what}" + (f" (last error: {last!r})" if last else ""))


class Etcd:
    """One etcd server on 127.0.0.1, in a temporary directory; stopped by
    ``stop``. ``pause``/``resume`` freeze and thaw it (SIGSTOP/SIGCONT)."""

    def __init__(self) -> None:
        binary = shutil.which("etcd")
        if binary is None:
            pytest.fail("etcd is not installed: apt-get install etcd-server (scripts/test does)")
        self.dir = tempfile.TemporaryDirectory(prefix="snowmint-py-etcd-")
        self.port = free_port()
        peer = free_port()
        self.url = f"etcd://127.0.0.1:{self.port}"
        self.log = open(Path(self.dir.name) / "etcd.log", "wb")
        self.process = subprocess.Popen(
            [
                binary,
                "--name", "test",
                "--data-dir", str(Path(self.dir.name) / "data"),
                "--listen-client-urls", f"http://127.0.0.1:{self.port}",
                "--advertise-client-urls", f"http://127.0.0.1:{self.port}",
                "--listen-peer-urls", f"http://127.0.0.1:{peer}",
                "--initial-advertise-peer-urls", f"http://127.0.0.1:{peer}",
                "--initial-cluster", f"test=http://127.0.0.1:{peer}",
            ],
            stdout=self.log,
            stderr=subprocess.STDOUT,
        )
        wait_until("etcd to answer /health", self._healthy)

    def _healthy(self) -> bool:
        if self.process.poll() is not None:
            pytest.fail(f"etcd exited with {self.process.returncode}: see {self.log.name}")
        with urllib.request.urlopen(f"http://127.0.0.1:{self.port}/health", timeout=1) as answer:
            return b'"true"' in answer.read()

    def pause(self) -> None:
        self.process.send_signal(signal.SIGSTOP)

    def resume(self) -> None:
        self.process.send_signal(signal.SIGCONT)

    def stop(self) -> None:
        self.resume()
        self.process.kill()
        self.process.wait(timeout=30)
        self.log.close()
        self.dir.cleanup()


@pytest.fixture
def etcd():
    server = Etcd()
    yield server
    server.stop()


def python_program(source: str, *args: str, env=None, prefix=()) -> subprocess.Popen:
    """Starts ``source`` (dedented) in a new Python process of this
    interpreter, with stdout and stderr piped. ``prefix`` goes before the
    interpreter (``faketime -f ...``)."""
    return subprocess.Popen(
        [*prefix, sys.executable, "-c", textwrap.dedent(source), *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, **(env or {})},
    )


def finish(process: subprocess.Popen, timeout: float = 120) -> str:
    """Waits for ``process``; fails the test with its stderr unless it
    exits with 0; returns its stdout."""
    try:
        out, err = process.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        process.kill()
        out, err = process.communicate()
        pytest.fail(f"a child process did not finish within {timeout} s:\n{err}")
    assert process.returncode == 0, f"exit {process.returncode}:\n{err}"
    return out
