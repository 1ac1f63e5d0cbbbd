"""The rules of the house (issue 11: "one house for five families"), as tests that can fail.

(a) A family (a subpackage of ``coalloc`` whose name starts with neither ``_`` nor is
    ``cli``) imports nothing from another family -- no private module or name, and no public
    name either -- nor from the top-level ``coalloc`` package (which aggregates the
    families), but for one door: a family's command-line module ``coalloc.<family>.cli``
    may import the command's common layer, ``coalloc.cli`` (its options, parsers and batch
    runner), as a family imports ``coalloc._shared``. The shared layer ``coalloc._shared``
    imports no family at all.
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
    if p.is_dir() and not p.name.startswith(("_", ".")) and p.name not in ("cli", "batch")
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
        if module == f"coalloc.{home}.cli" and (name + ".").startswith("coalloc.cli."):
            continue  # the family's command line and the command's common layer
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
    ("coalloc.ctaap.io", False, "from ..cli import _common", "top-level"),
    ("coalloc.ctaap.cli", False, "from .. import batch", "top-level"),
    ("coalloc.ctaap.cli", False, "from ..taskmap.cli import add_commands", "family 'taskmap'"),
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
    ("coalloc.ctaap.cli", False, "from ..cli import _common as common\nfrom ..cli.plot import x"),
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


def test_no_module_of_the_package_is_over_800_lines_without_its_reason():
    """The house: one idea per file; a module over about 800 lines says at its top why
    ("Why over 800 lines: ...") -- every family and the shared layer, not one family."""
    long = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        text = path.read_text(encoding="utf-8")
        doc = ast.get_docstring(ast.parse(text)) or ""
        if text.count("\n") > 800 and "over 800 lines" not in doc.lower():
            long[str(path.relative_to(PACKAGE))] = text.count("\n")
    assert not long, long


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


# ------------------------------------- (d) every compiled function: a twin and a parity test

#: Every public function (or class) of every compiled module (``family._module.name``) -> its
#: twin under ``<family>/_reference/`` (``module.name``). A new compiled function fails the
#: tests below until it is listed here with a twin that exists and a parity test in
#: ``tests/<family>/kernels/`` that calls both.
_TWINS = {
    "collective._search.block_maxima": "search.block_maxima",
    "collective._search.block_minima": "search.block_minima",
    "collective._search.block_screen": "search.block_screen",
    "collective._search.min_counts": "search.min_counts",
    "collective._search.bound_screen": "search.bound_screen",
    "collective._search.decrease_starts": "search.decrease_starts",
    "collective._search.phase5": "search.phase5",
    "collective._search.pruned_screen": "search.pruned_screen",
    "collective._search.scan_screen": "search.scan_screen",
    "collective._search.screen": "search.screen",
    "collective._search.select_and_swap": "search.select_and_swap",
    "collective._search.swap_search": "search.swap_search",
    "collective._search.weighted_screen": "search.weighted_screen",
    "collective._search.window_max": "search.window_max",
    "collective._search.window_max_rows": "search.window_max_rows",
    "collective._search.window_max_blocks": "search.window_max_blocks",
    "collective._search.window_screen": "search.window_screen",
    "ctaap._bmatching.BMatcher": "matching.b_matching_reference",
    "ctaap._bmatching.b_matching": "matching.b_matching_reference",
    "ctaap._cleanup.fill_free": "cleanup.fill_free_reference",
    "ctaap._cleanup.match_and_clean": "cleanup.match_and_clean_reference",
    "ctaap._localsearch.count_moves": "localsearch.find_moves_reference",
    "ctaap._localsearch.improve": "localsearch.improve_reference",
    "ctaap._localsearch.list_moves": "localsearch.find_moves_reference",
    "ctaap._softassign.compute_q": "softassign.compute_q_reference",
    "ctaap._softassign.edge_ranks": "softassign.edge_ranks_reference",
    "ctaap._softassign.graduated_assignment": "softassign.graduated_assignment_reference",
    "ctaap._softassign.sinkhorn": "softassign.sinkhorn_reference",
    "ctaap._softassign.softassign_exp": "softassign.softassign_exp_reference",
    "ctaap._violations.update_violations": "violations.update_violations_reference",
    "ctaap._violations.violation_counts": "violations.violation_counts_reference",
    "loadshare._dmcf.best_fit_decreasing": "dmcf.best_fit_decreasing",
    "loadshare._dmcf.first_fit_all": "dmcf.first_fit_all",
    "loadshare._dmcf.migrate": "dmcf.migrate",
    "loadshare._dmcf.size_order": "dmcf.size_order",
    "loadshare._gapls.tabu_search": "gapls.tabu_search",
    "loadshare._gapls.subgradient": "gapls.subgradient",
    "loadshare._gapls.shift_descent": "gapls.shift_descent",
    "loadshare._gapls.knapsack_lagrangian": "gapls.knapsack_lagrangian",
    "loadshare._gapsub.subgap_layers": "gapsub.subgap_layers",
    "loadshare._gapsub.knapsack_tables": "gapsub.knapsack_tables",
    "taskmap._flowinject.cluster": "flowinject.flow_injection_reference",
    "taskmap._multilevel.Level": "multilevel.Level",
    "taskmap._multilevel.apply_move": "multilevel.apply_move",
    "taskmap._multilevel.PairRoutes": "multilevel.PairRoutes",
    "taskmap._multilevel.bisect_small": "multilevel.bisect_small",
    "taskmap._multilevel.grow_fm": "multilevel.grow_fm",
    "taskmap._multilevel.hop_distances": "multilevel.hop_distances",
    "taskmap._multilevel.match_heavy": "multilevel.match_heavy",
    "taskmap._multilevel.pair_routes": "multilevel.pair_routes",
    "taskmap._multilevel.score_moves": "multilevel.score_moves",
    "taskmap._multilevel.expand": "refine.expand",
    "taskmap._multilevel.destinations": "refine.destinations",
    "taskmap._multilevel.best_move": "refine.best_move",
    "taskmap._multilevel.loads": "refine.loads",
    "taskmap._multilevel.cut_pass": "refine.cut_pass",
    "taskmap._multilevel.cross_gains": "refine.cross_gains",
    "taskmap._multilevel.bottleneck_tasks": "refine.bottleneck_tasks",
    "taskmap._multilevel.bisect_block": "refine.bisect_block",
    "taskmap._multilevel.link_pick": "refine.link_pick",
    "taskmap._multilevel.pick_move": "refine.pick_move",
    "taskmap._multilevel.swap_table": "refine.swap_table",
    "taskmap._multilevel.eject_screen": "refine.eject_screen",
    "taskmap._multilevel.sum_moves": "summoves.sum_moves",
    "taskmap._multilevel.swap_try": "summoves.swap_try",
    "taskmap._multilevel.swap_partners": "summoves.swap_partners",
    "taskmap._multilevel.eject_try": "summoves.eject_try",
    "taskmap._multilevel.swap_screen": "refine.swap_screen",
    "taskmap._occupancy.Pairs": "occupancy.Pairs",
    "taskmap._occupancy.Routes": "occupancy.Routes",
    "taskmap._occupancy.fill_prefix": "occupancy.fill_prefix",
    "taskmap._occupancy.link_loads": "occupancy.link_loads",
    "taskmap._occupancy.move": "occupancy.move",
    "taskmap._occupancy.place": "occupancy.place",
    "taskmap._occupancy.remove": "occupancy.remove",
    "taskmap._occupancy.route_uses": "occupancy.route_uses",
    "testbed._allocate.allocate_all": "allocate.allocate_all",
    "testbed._anneal.anneal": "anneal.anneal",
}
TWINS = {
    f"coalloc.{name}": f"coalloc.{name.split('.')[0]}._reference.{twin}"
    for name, twin in _TWINS.items()
}

#: Compiled functions whose twin is not (yet) exact. The b-matcher's twin is SciPy's
#: assignment solver: equal assignments where the optimum is unique (continuous weights,
#: ``test_b_matching_matches_twin``), equal objectives where optima tie. Making it exact
#: means porting the kernel's tie-breaking (condensed graph, Bellman-Ford, Dijkstra with
#: potentials) into the twin, which changes what ``backend="numpy"`` returns where optima
#: tie. (The local search's twin follows its kernel move for move since issue 23.)
#: Every entry must be a compiled function of TWINS.
NOT_EXACT = {
    "coalloc.ctaap._bmatching.BMatcher",
    "coalloc.ctaap._bmatching.b_matching",
}

TESTS = pathlib.Path(__file__).resolve().parents[1]


def compiled_functions():
    out = set()
    for name in COMPILED:
        mod = importlib.import_module(name)
        for attr, obj in vars(mod).items():
            if attr.startswith("_") or not callable(obj) or inspect.ismodule(obj):
                continue
            if getattr(obj, "__module__", name) in (name, None):
                out.add(f"{name}.{attr}")
    return out


def _aliases(nodes) -> dict:
    """Local name -> dotted name of the imports among ``nodes``."""
    out = {}
    for node in nodes:
        if isinstance(node, ast.Import):
            for a in node.names:
                out[a.asname or a.name.split(".")[0]] = a.name if a.asname else a.name.split(".")[0]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            for a in node.names:
                out[a.asname or a.name] = f"{node.module}.{a.name}"
    return out


def referenced_by_tests(path: pathlib.Path) -> list:
    """For each ``test_*`` function of a test file, the dotted names it uses (through the
    file's and its own imports: ``C.phase5`` with ``from coalloc.collective import _search
    as C`` is ``coalloc.collective._search.phase5``; in ``for mod in (C, R): mod.f()``,
    ``mod.f`` is both ``C.f`` and ``R.f``)."""
    tree = ast.parse(path.read_text())
    top = _aliases(tree.body)
    found = []
    for fn in tree.body:
        if not isinstance(fn, ast.FunctionDef) or not fn.name.startswith("test"):
            continue
        names = {k: {v} for k, v in {**top, **_aliases(ast.walk(fn))}.items()}
        for node in ast.walk(fn):  # loop variables over imported modules or functions
            if (
                isinstance(node, ast.For)
                and isinstance(node.target, ast.Name)
                and isinstance(node.iter, (ast.Tuple, ast.List))
            ):
                elts = [e.id for e in node.iter.elts if isinstance(e, ast.Name) and e.id in names]
                if elts:
                    names[node.target.id] = set().union(*(names[e] for e in elts))
        used = set()
        for node in ast.walk(fn):
            if isinstance(node, ast.Name) and node.id in names:
                used |= names[node.id]
            elif (
                isinstance(node, ast.Attribute)
                and isinstance(node.value, ast.Name)
                and node.value.id in names
            ):
                used |= {f"{base}.{node.attr}" for base in names[node.value.id]}
        found.append(used)
    return found


def test_every_compiled_function_is_listed_with_a_twin():
    functions = compiled_functions()
    assert len(functions) > len(COMPILED)  # the enumeration does see functions
    assert functions == set(TWINS), (
        f"not listed: {sorted(functions - set(TWINS))}; gone: {sorted(set(TWINS) - functions)}"
    )
    assert NOT_EXACT <= set(TWINS)


@pytest.mark.parametrize("name", sorted(TWINS))
def test_each_compiled_function_has_a_twin_and_a_parity_test(name):
    twin = TWINS[name]
    module, attr = twin.rsplit(".", 1)
    assert callable(getattr(importlib.import_module(module), attr, None)), f"no twin {twin}"
    family = name.split(".")[1]
    files = sorted((TESTS / family / "kernels").glob("test_*.py"))
    assert files, f"no parity tests under tests/{family}/kernels/"
    pairs = [used for path in files for used in referenced_by_tests(path)]
    assert any(name in used and twin in used for used in pairs), (
        f"no test in tests/{family}/kernels/ calls both {name} and its twin {twin}"
    )


def test_the_parity_checker_reads_aliases_and_local_imports(tmp_path):
    src = tmp_path / "test_x.py"
    src.write_text(
        "from coalloc.collective import _search as C\n"
        "import coalloc.ctaap._reference.cleanup as R\n"
        "def test_a():\n"
        "    from coalloc.testbed._anneal import anneal as compiled\n"
        "    C.phase5(1)\n    compiled()\n    R.fill_free_reference\n"
        "def test_b():\n    phase5 = 1\n"
        "def test_c():\n    for mod in (C, R):\n        mod.window_max()\n"
        "def helper():\n    C.screen()\n"
    )
    a, b, c = referenced_by_tests(src)
    assert {
        "coalloc.collective._search.phase5",
        "coalloc.testbed._anneal.anneal",
        "coalloc.ctaap._reference.cleanup.fill_free_reference",
    } <= a
    assert "coalloc.collective._search.screen" not in a and not b
    assert {
        "coalloc.collective._search.window_max",
        "coalloc.ctaap._reference.cleanup.window_max",
    } <= c


CORE = TESTS.parent / "src" / "_core"


def test_cython_modules_take_the_poll_and_the_generator_from_one_declaration():
    """The interrupt poll and the xoshiro generator are declared for Cython once, in
    ``include/coalloc/common/{interrupt,xoshiro}.pxd``; a ``.pyx`` cimports them."""
    pyx = sorted(CORE.glob("*/*.pyx"))
    assert len(pyx) >= 5, f"no Cython sources under {CORE}"
    for header in ("interrupt", "xoshiro"):
        assert (CORE / "include" / "coalloc" / "common" / f"{header}.pxd").is_file()
    for path in pyx:
        text = path.read_text()
        for header in ("coalloc/common/interrupt.h", "coalloc/common/xoshiro.hpp"):
            assert f'extern from "{header}"' not in text, f"{path.name} declares {header} again"
        if "Poll(" in text:
            assert "from coalloc.common.interrupt cimport" in text, path.name
