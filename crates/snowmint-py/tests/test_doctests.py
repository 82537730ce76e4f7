"""Every example in the package's docstrings, and the Python examples of
the repository's README, run as doctests."""

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
                 "ManualClock", "decode_many", "Columns", "to_text", "from_text"):
        assert name in names, f"no docstring examples found for {name}"
    assert examples >= 50, f"only {examples} docstring examples ran"


def test_readme_python_examples():
    readme = (ROOT / "README.md").read_text()
    section = readme.split("\n## Python\n", 1)
    assert len(section) == 2, "README.md has no '## Python' section"
    body = section[1].split("\n## ", 1)[0]
    blocks = re.findall(r"```python\n(.*?)```", body, flags=re.S)
    assert blocks, "the README's Python section has no ```python block"
    parser = doctest.DocTestParser()
    # The blocks run as one session, as a reader would type them.
    session = parser.get_doctest("\n".join(blocks), {}, "README.md Python section", str(ROOT / "README.md"), 0)
    examples, failed = run([session])
    assert failed == 0, "README examples failed (above)"
    assert examples >= 10, f"only {examples} README examples ran"
