"""Workers of the multiprocessing tests (test_fork.py): importable by a
child that the ``spawn`` start method starts afresh.

The generator is chosen by environment variables, which spawned children
inherit: ``SNOWMINT_TEST_MODE`` is ``plain``, ``static`` (a fixed node
with ``SNOWMINT_TEST_STATE_DIR``) or ``claimed`` (a slot of
``SNOWMINT_TEST_COORDINATOR``).
"""

import os
from array import array
from pathlib import Path

import snowmint

#: The generator the parent made before starting its workers; a spawned
#: child starts with none and makes its own.
GENERATOR = None


def make():
    mode = os.environ["SNOWMINT_TEST_MODE"]
    if mode == "plain":
        return snowmint.Generator(datacenter=3, machine=3)
    if mode == "static":
        return snowmint.Generator(
            datacenter=3, machine=3, state_dir=os.environ["SNOWMINT_TEST_STATE_DIR"]
        )
    return snowmint.Generator.claim(
        os.environ["SNOWMINT_TEST_COORDINATOR"], fleet="mp", slots="0-15", claim_ttl="5s"
    )


def work(job):
    """Makes ``count`` IDs one call at a time into the file ``path``;
    answers ``"ok"`` or the refusal's class and message."""
    count, path = job
    try:
        generator = GENERATOR if GENERATOR is not None else make()
        ids = array("q", (generator.next_id() for _ in range(count)))
    except (snowmint.ForkError, snowmint.NodeInUseError) as error:
        return f"{type(error).__name__}: {error}"
    Path(path).write_bytes(ids.tobytes())
    return "ok"


def work_into(job, answer_path):
    """``work``, its answer written to the file ``answer_path``."""
    Path(answer_path).write_text(work(job))
