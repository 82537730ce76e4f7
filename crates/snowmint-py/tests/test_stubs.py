"""The type stubs (_snowmint.pyi) describe the compiled module as it is:
the same classes, functions, methods, properties and parameter names."""

import ast
import inspect
import sys
from pathlib import Path

import snowmint
from snowmint import _snowmint

STUB = Path(snowmint.__file__).with_name("_snowmint.pyi")


def stub_tree():
    assert STUB.is_file(), f"the wheel has no stubs at {STUB}"
    return ast.parse(STUB.read_text())


def parameters(node):
    args = node.args
    names = [a.arg for a in args.posonlyargs + args.args + args.kwonlyargs]
    # `*args` and `**kwargs` are parameters too, as inspect lists them.
    names += [a.arg for a in (args.vararg, args.kwarg) if a is not None]
    return [n for n in names if n not in ("self", "cls")]


def runtime_parameters(obj):
    return [
        name
        for name in inspect.signature(obj).parameters
        if name not in ("self", "cls", "$self", "$cls")
    ]


def test_every_public_name_has_a_stub_and_every_stub_a_name():
    tree = stub_tree()
    stubbed = set()
    for node in tree.body:
        if isinstance(node, (ast.ClassDef, ast.FunctionDef)):
            stubbed.add(node.name)
        elif isinstance(node, ast.AnnAssign) and not node.target.id.startswith("_"):
            stubbed.add(node.target.id)
    public = {name for name in vars(_snowmint) if not name.startswith("_")}
    assert stubbed == public


def test_functions_and_methods_match():
    tree = stub_tree()
    checked = 0
    for node in tree.body:
        if isinstance(node, ast.FunctionDef):
            assert parameters(node) == runtime_parameters(getattr(_snowmint, node.name)), node.name
            checked += 1
        if not isinstance(node, ast.ClassDef):
            continue
        cls = getattr(_snowmint, node.name)
        members = {}
        for item in node.body:
            if isinstance(item, ast.FunctionDef):
                members[item.name] = item
            elif isinstance(item, ast.AnnAssign):
                members[item.target.id] = item
        runtime = {
            name
            for name in dir(cls)
            if not name.startswith("_") or name in ("__match_args__",)
        }
        assert {n for n in members if not n.startswith("__") or n == "__match_args__"} == runtime, node.name
        for name, item in members.items():
            if not isinstance(item, ast.FunctionDef):
                continue
            decorators = {ast.unparse(d) for d in item.decorator_list}
            value = inspect.getattr_static(cls, name)
            if "property" in decorators:
                assert type(value).__name__ == "getset_descriptor", f"{node.name}.{name}"
            elif name == "__new__":
                if sys.version_info < (3, 10):
                    # PyO3 gives classes a text signature from Python 3.10 on.
                    continue
                assert parameters(item) == runtime_parameters(cls), node.name
            elif name not in ("__eq__", "__hash__", "__len__"):
                assert parameters(item) == runtime_parameters(getattr(cls, name)), f"{node.name}.{name}"
                assert ("staticmethod" in decorators) == isinstance(value, staticmethod), name
            checked += 1
    assert checked >= 30
