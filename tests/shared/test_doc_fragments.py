"""The docstring fragments (:mod:`coalloc._shared.docs`): every placeholder in the sources
is filled at import, indented as written, and an unknown one is refused."""

import ast
import importlib
import inspect
import pathlib
import re

import pytest

from coalloc._shared import docs

SRC = pathlib.Path(docs.__file__).parents[1]
PLACEHOLDER = re.compile(r"^( *)%\((\w+)\)s$", re.MULTILINE)
SECTION = re.compile(r"^ *(Parameters|Returns|Raises|Attributes|Yields) *\n *-+ *$", re.MULTILINE)


def _placeholders():
    """``(module name, qualified name, fragment name, indentation, section)`` of every
    placeholder written in a docstring of the sources (read as text: an independent
    count)."""
    found = []
    for path in sorted(SRC.rglob("*.py")):
        tree = ast.parse(path.read_text())
        module = ".".join(("coalloc", *path.relative_to(SRC).with_suffix("").parts))
        module = module.removesuffix(".__init__")
        stack = [(tree, "")]
        while stack:
            node, prefix = stack.pop()
            for child in ast.iter_child_nodes(node):
                if isinstance(child, (ast.FunctionDef, ast.ClassDef, ast.AsyncFunctionDef)):
                    qual = f"{prefix}{child.name}"
                    doc = ast.get_docstring(child, clean=False) or ""
                    for m in PLACEHOLDER.finditer(doc):
                        heads = SECTION.findall(doc[: m.start()])
                        section = heads[-1] if heads else ""
                        found.append((module, qual, m.group(2), m.group(1), section))
                    stack.append((child, qual + "."))
    return found


def test_the_sources_use_the_fragments():
    names = {name for _, _, name, _, _ in _placeholders()}
    assert names == set(docs.FRAGMENTS), "every fragment is used, and only those exist"
    assert len(_placeholders()) >= 25


@pytest.mark.parametrize("module, qual, name, indent, section", _placeholders())
def test_every_placeholder_is_filled_at_import(module, qual, name, indent, section):
    obj = importlib.import_module(module)
    for part in qual.split("."):
        obj = getattr(obj, part)
    doc = obj.__doc__
    assert "%(" not in doc
    body = "\n".join(indent + line if line else "" for line in docs.FRAGMENTS[name].splitlines())
    assert body in doc
    # a fragment under Parameters documents parameters the function has (numpydoc's PR01
    # and PR02 check it again in the docs build, for the documented objects only)
    if section == "Parameters" and inspect.isfunction(obj):
        for line in docs.FRAGMENTS[name].splitlines():
            if " : " in line and not line.startswith(" "):
                assert line.split(" : ")[0] in inspect.signature(obj).parameters, line


def test_fill_indents_and_refuses_unknown_names():
    frags = {"a": "x : int\n    The x.\n\n    More."}
    assert docs.fill("Head\n\n        %(a)s\n", frags) == (
        "Head\n\n        x : int\n            The x.\n\n            More.\n"
    )
    assert docs.fill("a 10 %(a)s inline stays", frags) == "a 10 %(a)s inline stays"
    with pytest.raises(KeyError, match="nope"):
        docs.fill("    %(nope)s", frags)
