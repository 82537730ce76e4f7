"""snowmint.__version__ is the version the installed distribution
declares (maturin takes it from the crate), as PEP 396 and tools expect."""

import importlib.metadata
import re

import snowmint


def test_version_is_the_distributions():
    assert snowmint.__version__ == importlib.metadata.version("snowmint")


def test_version_is_a_release_number():
    assert re.fullmatch(r"\d+\.\d+\.\d+([-.+].*)?", snowmint.__version__), snowmint.__version__
