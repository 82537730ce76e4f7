"""Every example in the package's docstrings, in its README and in the
Python guide (docs/python.md) runs as a doctest."""

import doctest
import re
from pathlib import Path

import snowmint
import snowmint.errors

from conftest import ROOT

FLAGS = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE


def run(tests):
    runner = doctest.DocTestRunner(optionflags=FLAGS)
    examples = 0
    for test in tests:
        examples += len(test.examples)
        runner.run(test)
    results = runner.summarize(verbose=False)
    return examples, results.failed


def test_docstring_examples():
    finder = doctest.DocTestFinder()
    tests = []
    seen = set()
    for module in (snowmint, snowmint.errors):
        # module=False: also the objects of the compiled module, which
        # __init__ re-exports.
        for test in finder.find(module, module.__name__, module=False, globs=dict(vars(snowmint))):
            if test.examples and test.name not in seen:
                seen.add(test.name)
                tests.append(test)
    examples, failed = run(tests)
    assert failed == 0, "docstring examples failed (above)"
    names = {test.name.split(".")[-1] for test in tests}
    # Each documented object of the package has examples that ran.
    for name in ("Layout", "parse", "encode", "decode", "id_range", "Parts", "Generator",
                 "ManualClock", "decode_many", "Columns", "to_text", "from_text", "inspect"):
        assert name in names, f"no docstring examples found for {name}"
    assert examples >= 50, f"only {examples} docstring examples ran"


def python_session(path, minimum):
    """The ```python blocks of a document, run as one session, as a reader
    would type them."""
    blocks = re.findall(r"```python\n(.*?)```", path.read_text(), flags=re.S)
    assert blocks, f"{path} has no ```python block"
    parser = doctest.DocTestParser()
    session = parser.get_doctest("\n".join(blocks), {}, path.name, str(path), 0)
    examples, failed = run([session])
    assert failed == 0, f"the examples of {path} failed (above)"
    assert examples >= minimum, f"only {examples} examples of {path} ran"


def test_python_guide_examples():
    python_session(ROOT / "docs" / "python.md", 10)


def test_package_readme_examples():
    python_session(ROOT / "crates" / "snowmint-py" / "README.md", 3)


def test_repository_readme_examples():
    python_session(ROOT / "README.md", 1)
