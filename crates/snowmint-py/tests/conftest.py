"""Shared fixtures of the Python package's tests.

The tests run against the installed package (scripts/test builds the wheel
and installs it into target/python/venv) and, where they compare, against
the real `snowmint` binary: $SNOWMINT_BIN, or target/release/snowmint or
target/debug/snowmint of this repository.
"""

import os
import random
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]


@pytest.fixture(scope="session")
def snowmint_bin() -> Path:
    """The path of the real `snowmint` command-line binary."""
    given = os.environ.get("SNOWMINT_BIN")
    candidates = [Path(given)] if given else [
        ROOT / "target" / "release" / "snowmint",
        ROOT / "target" / "debug" / "snowmint",
    ]
    for path in candidates:
        if path.is_file() and os.access(path, os.X_OK):
            return path
    pytest.fail(
        "the snowmint binary was not found at "
        + " or ".join(str(p) for p in candidates)
        + ": build it with `cargo build --release -p snowmint-cli`"
        " (or point SNOWMINT_BIN at it)"
    )


@pytest.fixture
def rng(request) -> random.Random:
    """A random generator with a seed printed on failure (set
    SNOWMINT_TEST_SEED to replay one)."""
    seed = int(os.environ.get("SNOWMINT_TEST_SEED", random.randrange(2**32)))
    request.node.user_properties.append(("seed", seed))
    print(f"random seed {seed} (replay with SNOWMINT_TEST_SEED={seed})")
    return random.Random(seed)


def run_cli(binary: Path, *args: str, input: str = "") -> subprocess.CompletedProcess:
    """Runs the binary with a deadline; fails the test if it does not end."""
    try:
        return subprocess.run(
            [str(binary), *args],
            input=input,
            capture_output=True,
            text=True,
            timeout=120,
        )
    except subprocess.TimeoutExpired:
        pytest.fail(f"snowmint {' '.join(args)} did not finish within 120 s")
