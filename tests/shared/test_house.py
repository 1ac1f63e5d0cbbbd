"""The rules of the house (issue 11: "one house for five families"), as tests that can fail.

(a) A family (a subpackage of ``coalloc`` whose name starts with neither ``_`` nor is
    ``cli``) imports nothing from another family -- no private module or name, and no public
    name either -- nor from the top-level ``coalloc`` package (which aggregates the
    families). The shared layer ``coalloc._shared`` imports no family at all.
(b) Every family exports ``METHODS``, ``solve``, ``Instance`` and a ``verify...``
    function; every method returns a subclass of :class:`coalloc.Result` with every field
    of ``RESULT_FIELDS``, a status in ``STATUSES`` and a JSON-serialisable ``to_dict()``.
(c) Every compiled module lives inside its family package and has a pure-Python twin under
    ``<family>/_reference/`` that names it.
"""

from __future__ import annotations

import ast
import importlib
import inspect
import json
import pathlib

import pytest

import coalloc
from coalloc._shared.result import RESULT_FIELDS, STATUSES

PACKAGE = pathlib.Path(coalloc.__file__).resolve().parent
FAMILIES = sorted(
    p.name
    for p in PACKAGE.iterdir()
    if p.is_dir() and not p.name.startswith(("_", ".")) and p.name != "cli"
    if (p / "__init__.py").exists()
)
#: What setup.py builds: one compiled module coalloc.<family>.<stem> per source
#: src/_core/<family>/<stem>.{pyx,cpp} (no list of modules is written by hand anywhere).
CORE = pathlib.Path(__file__).resolve().parents[2] / "src" / "_core"
COMPILED = {
    f"coalloc.{src.parent.name}.{src.stem}"
    for src in [*CORE.glob("*/*.pyx"), *CORE.glob("*/*.cpp")]
    if src.parent.name != "include"
}
EXTENSION_SUFFIXES = (".so", ".pyd")


# ------------------------------------------------------------------ (a) the import checker


def module_name(path: pathlib.Path) -> tuple[str, bool]:
    """``("coalloc.a.b", is_package)`` of a source file of the package."""
    rel = path.relative_to(PACKAGE.parent).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        return ".".join(parts[:-1]), True
    return ".".join(parts), False


def _resolve(module: str, is_package: bool, level: int, target: str | None) -> str:
    if level == 0:
        return target or ""
    base = module.split(".") if is_package else module.split(".")[:-1]
    if level > 1:
        base = base[: len(base) - (level - 1)]
    return ".".join(base + ([target] if target else []))


def owner(name: str, families) -> str | None:
    """Which part of the package ``name`` (a module or ``module.attr``) belongs to.

    A family's name, ``"_shared"``, ``"top"`` (the top-level package, which aggregates the
    families, and its other modules such as ``batch`` and ``cli``), or None outside coalloc.
    """
    parts = name.split(".")
    if parts[0] != "coalloc":
        return None
    if len(parts) == 1:
        return "top"
    if parts[1] in families or parts[1] == "_shared":
        return parts[1]
    return "top"


def imported_names(tree: ast.AST, module: str, is_package: bool):
    """``(lineno, full name)`` of everything a module imports, relative imports resolved;
    ``importlib.import_module("...")`` calls with constant arguments count too."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield node.lineno, alias.name
        elif isinstance(node, ast.ImportFrom):
            target = _resolve(module, is_package, node.level, node.module)
            for alias in node.names:
                yield node.lineno, f"{target}.{alias.name}"
        elif isinstance(node, ast.Call):
            func = node.func
            name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
            args = node.args
            if name == "import_module" and args and isinstance(args[0], ast.Constant):
                spec = str(args[0].value)
                if spec.startswith("."):
                    level = len(spec) - len(spec.lstrip("."))
                    yield node.lineno, _resolve(module, True, level, spec.lstrip(".") or None)
                else:
                    yield node.lineno, spec


def house_violations(source: str, module: str, is_package: bool, families) -> list:
    """The rule (a) breaches of one module's source, as readable strings."""
    tree = ast.parse(source)
    parts = module.split(".")
    home = parts[1] if len(parts) > 1 else None
    if home not in families and home != "_shared":
        return []
    out = []
    for lineno, name in imported_names(tree, module, is_package):
        other = owner(name, families)
        if other is None or other == home or (other == "_shared" and home in families):
            continue
        private = [p for p in name.split(".")[2:] if p.startswith("_")]
        what = "private name" if private else "name"
        if home == "_shared":
            out.append(f"{module}:{lineno}: the shared layer imports {name} (from {other})")
        elif other == "top":
            out.append(f"{module}:{lineno}: imports {name} from the top-level package")
        else:
            out.append(f"{module}:{lineno}: imports {what} {name} of family {other!r}")
    return out


def test_there_are_families():
    assert {"ctaap", "taskmap"} <= set(FAMILIES)
    assert set(coalloc.FAMILIES) == set(FAMILIES)


def test_no_family_imports_another_and_shared_imports_none():
    checked, problems = 0, []
    for part in [*FAMILIES, "_shared"]:
        for path in sorted((PACKAGE / part).rglob("*.py")):
            module, is_package = module_name(path)
            problems += house_violations(path.read_text(), module, is_package, FAMILIES)
            checked += 1
    assert checked >= 20, f"only {checked} modules found under {PACKAGE}"
    assert not problems, "\n".join(problems)


BAD_SNIPPETS = [
    ("coalloc.taskmap.mapper", False, "from ..ctaap._bmatching import BMatcher", "private"),
    ("coalloc.taskmap.mapper", False, "from ..ctaap import solve", "family 'ctaap'"),
    ("coalloc.taskmap.mapper", False, "from .. import ctaap", "family 'ctaap'"),
    ("coalloc.taskmap", True, "from ..ctaap.model import _as_property_vectors", "private"),
    ("coalloc.ctaap.solver", False, "import coalloc.taskmap.model", "family 'taskmap'"),
    ("coalloc.ctaap.solver", False, "from coalloc import solve_many", "top-level"),
    ("coalloc.ctaap.io", False, "from ..taskmap.io import read_instance", "family 'taskmap'"),
    (
        "coalloc.ctaap.io",
        False,
        "import importlib\nimportlib.import_module('coalloc.taskmap._flowinject')",
        "private",
    ),
    ("coalloc.ctaap._reference.cleanup", False, "from ...taskmap import mapper", "taskmap"),
    ("coalloc._shared.milp", False, "from ..ctaap.result import SolveResult", "shared layer"),
    ("coalloc._shared", True, "from .. import batch", "shared layer"),
]


@pytest.mark.parametrize("module, is_package, source, words", BAD_SNIPPETS)
def test_the_checker_flags_bad_imports(module, is_package, source, words):
    problems = house_violations(source, module, is_package, FAMILIES)
    assert len(problems) == 1 and words in problems[0], problems


GOOD_SNIPPETS = [
    ("coalloc.taskmap.mapper", False, "from .._shared.result import Result"),
    ("coalloc.taskmap.mapper", False, "from .model import TaskGraph\nfrom . import _flowinject"),
    ("coalloc.ctaap", True, "from ._reference.cleanup import fill_free_reference"),
    ("coalloc.ctaap._reference.cleanup", False, "from .._bmatching import BMatcher"),
    ("coalloc._shared.milp", False, "from .jsonio import num\nimport numpy as np"),
    ("coalloc.taskmap", True, "import importlib\nimportlib.import_module('.generators', 'x')"),
]


@pytest.mark.parametrize("module, is_package, source", GOOD_SNIPPETS)
def test_the_checker_allows_own_family_and_shared_imports(module, is_package, source):
    assert house_violations(source, module, is_package, FAMILIES) == []


# ------------------------------------------------------------------ (b) what a family offers


@pytest.mark.parametrize("family", FAMILIES)
def test_family_exports(family):
    mod = importlib.import_module(f"coalloc.{family}")
    for name in ("METHODS", "solve", "Instance"):
        assert hasattr(mod, name), f"coalloc.{family} has no {name}"
    assert isinstance(mod.METHODS, dict) and mod.METHODS
    assert all(callable(f) for f in mod.METHODS.values())
    assert callable(mod.solve)
    verifiers = [n for n in mod.__all__ if n.startswith("verify") and callable(getattr(mod, n))]
    assert verifiers, f"coalloc.{family} exports no verify function"
    missing = [n for n in mod.__all__ if not hasattr(mod, n)]
    assert not missing, f"coalloc.{family}.__all__ names missing attributes {missing}"
    inst = mod.Instance
    assert inst.family == family
    assert tuple(inst.methods) == tuple(mod.METHODS)
    for name in ("solve", "verify", "check_params", "from_dict"):
        assert callable(getattr(inst, name, None)), f"{family}.Instance.{name}"
    assert isinstance(inst.format, str) and inst.format.startswith("coalloc.")


@pytest.mark.parametrize("family", FAMILIES)
def test_every_method_returns_a_result(family, request):
    """Every method of every family on the family's tiny instance (``<family>_tiny``)."""
    try:
        instance = request.getfixturevalue(f"{family}_tiny")
    except pytest.FixtureLookupError:
        pytest.fail(f"add a '{family}_tiny' fixture to tests/conftest.py for family {family!r}")
    mod = importlib.import_module(f"coalloc.{family}")
    assert isinstance(instance, mod.Instance)
    for method in mod.METHODS:
        result = instance.solve(method, seed=0)
        assert isinstance(result, coalloc.Result), (family, method, type(result))
        assert inspect.isclass(type(result)) and type(result) is not coalloc.Result
        missing = [f for f in RESULT_FIELDS if not hasattr(result, f)]
        assert not missing, f"{family}/{method}: result lacks {missing}"
        assert result.status in STATUSES, result.status
        assert result.success, (family, method, result.status, result.message)
        assert result.method == method
        assert isinstance(result.timings, dict) and "total" in result.timings
        data = result.to_dict()
        text = json.dumps(data, allow_nan=False)
        assert json.loads(text)["status"] == result.status
        assert json.loads(text)["method"] == method
        report = instance.verify(result)
        assert isinstance(report, coalloc.Report) and report.ok, (family, method, report)
        json.dumps(report.to_dict(), allow_nan=False)


# ------------------------------------------------------------------ (c) compiled modules


def compiled_files():
    return sorted(p for p in PACKAGE.rglob("*") if p.name.endswith(EXTENSION_SUFFIXES))


def test_compiled_modules_live_in_their_families():
    found = set()
    for path in compiled_files():
        rel = path.relative_to(PACKAGE)
        name = rel.name.split(".")[0]
        assert len(rel.parts) == 2 and rel.parts[0] in FAMILIES, (
            f"compiled module {rel} is not directly inside a family package"
        )
        assert name.startswith("_"), f"compiled module {rel} has a public name"
        found.add(f"coalloc.{rel.parts[0]}.{name}")
    assert found == COMPILED


@pytest.mark.parametrize("name", sorted(COMPILED))
def test_each_compiled_module_imports_and_has_a_twin(name):
    mod = importlib.import_module(name)
    path = pathlib.Path(mod.__file__).resolve()
    family = name.split(".")[1]
    assert path.parent == PACKAGE / family and path.name.endswith(EXTENSION_SUFFIXES)
    reference = PACKAGE / family / "_reference"
    twins = []
    for src in sorted(reference.glob("*.py")):
        doc = ast.get_docstring(ast.parse(src.read_text())) or ""
        first = doc.split("\n\n")[0]
        if name in first:
            twins.append(src)
    assert twins, f"no module under {family}/_reference/ names {name} in its docstring"
    for src in twins:
        twin = importlib.import_module(f"coalloc.{family}._reference.{src.stem}")
        fns = [n for n, f in vars(twin).items() if inspect.isfunction(f) or inspect.isclass(f)]
        assert fns, f"twin {src} defines nothing"


def test_every_package_folder_is_a_regular_package():
    """A folder of Python modules without ``__init__.py`` is a namespace package: relative
    imports inside it fail when the doctest collector (``ci/docs.sh``, ``--doctest-modules
    --pyargs coalloc``) imports its modules by path, as ``taskmap/_reference`` did."""
    missing = sorted(
        str(folder.relative_to(PACKAGE))
        for folder in [PACKAGE, *PACKAGE.rglob("*")]
        if folder.is_dir() and any(folder.glob("*.py")) and not (folder / "__init__.py").exists()
    )
    assert not missing, f"package folders without __init__.py: {missing}"
