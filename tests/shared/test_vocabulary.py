"""One vocabulary in every family (issue 23 item 2): distinct class names, one gap formula
(results and the progress bar), ``time_limit`` on every method with one deadline rule, and
one kernel-choice check; and one vocabulary inside, not through wrappers (issue 36 item 5):
``solver`` is the integer-programming solver, ``backend`` only the kernels' choice,
``executor`` what runs a batch, ``time_limit`` the seconds, and an old spelling survives only
at the public boundary, hidden from signatures (see docs/architecture.md, "One vocabulary").
"""

from __future__ import annotations

import argparse
import ast
import importlib
import inspect
import io
import math
import pathlib
import pickle
import pkgutil
import re
import time

import numpy as np
import pytest

import coalloc
from coalloc import ctaap as ct
from coalloc import loadshare, testbed
from coalloc import taskmap as tm
from coalloc._shared import interrupt, params, progress
from coalloc._shared.family import families
from coalloc._shared.result import relative_gap

# --- small instances, one per family: its spec's example (issue 37: no hand-written list) --


def _taskmap():
    tasks = tm.TaskGraph([1.0, 2.0, 1.5], [[0, 4, 0], [4, 0, 1], [0, 1, 0]])
    res = tm.ResourceGraph.from_edges([0, 3.0, 5.0], [[0, 1], [0, 2]], [50.0, 50.0])
    return (lambda m, **kw: tm.solve(tasks, res, m, **kw)), "min"


def _maker(spec):
    """``make() -> (solve(method, **kw), the family's sense)`` on the spec's example; the
    sense is that of the default method's result (every method shares the family's result
    type); ``solve.instance`` is the example."""

    def make():
        inst = spec.example(seed=0)

        def solve(method, **kw):
            return inst.solve(method, **kw)

        solve.instance = inst
        return solve, type(inst.solve(seed=0)).sense

    return make


FAMILIES = {name: (_maker(spec), spec.kinds[0].METHODS) for name, spec in families().items()}
CASES = [(f, m) for f, (_, methods) in FAMILIES.items() for m in methods]


def _answer(result) -> dict:
    """What a result says about the problem (without timings and the limit it ran under)."""
    d = result.to_dict()
    d.pop("timings")
    d["params"].pop("time_limit", None)
    d["params"].pop("solver_time_limit", None)
    d["params"].pop("bound_tests", None)  # task mapping: the bound's cap, from the limit
    return d


# --- distinct names ------------------------------------------------------------------


def test_no_two_public_classes_of_the_package_share_a_name():
    owners: dict = {}
    for info in pkgutil.walk_packages(coalloc.__path__, "coalloc."):
        if "._reference" in info.name or info.name.endswith("__main__"):
            continue
        module = importlib.import_module(info.name)
        for obj in vars(module).values():
            if inspect.isclass(obj) and obj.__module__.startswith("coalloc."):
                if not obj.__name__.startswith("_"):
                    owners.setdefault(obj.__name__, set()).add(obj.__module__)
    shared = {name: mods for name, mods in owners.items() if len(mods) > 1}
    assert not shared, shared
    assert len(owners) > 40  # the scan saw the package


def test_old_class_names_are_aliases_of_the_new_ones():
    assert tm.MappingResult is tm.TaskMappingResult
    assert testbed.MappingResult is testbed.TestbedMappingResult
    assert testbed.VerifyReport is testbed.TestbedMappingReport
    assert ct.VerifyReport is ct.AssignmentReport is coalloc.VerifyReport
    assert testbed.SimulationResult is testbed.TestbedSimulationResult
    from coalloc.collective.simulate import SimulationResult

    assert SimulationResult.__name__ == "CollectiveSimulationResult"
    for family, name in [("ctaap", "CtaapInstance"), ("taskmap", "TaskMapInstance"),
                         ("collective", "CollectiveInstance"), ("testbed", "TestbedInstance"),
                         ("loadshare", "LoadShareInstance")]:  # fmt: skip
        module = getattr(coalloc, family)
        assert module.Instance is getattr(module, name)
    # every family's results live in its result.py
    assert tm.TaskMappingResult.__module__ == "coalloc.taskmap.result"
    assert loadshare.GapResult.__module__ == "coalloc.loadshare.result"
    assert loadshare.ShareResult.__module__ == "coalloc.loadshare.result"


# --- one gap formula ------------------------------------------------------------------


def _family_result_classes() -> dict:
    """Every public result class the package defines, by the family whose modules hold it:
    a subclass of :class:`coalloc.Result` or a class whose name ends in ``Result``."""
    from coalloc._shared.family import families

    found: dict = {}
    for family in families():
        package = importlib.import_module(f"coalloc.{family}")
        names = [package.__name__] + [
            info.name
            for info in pkgutil.walk_packages(package.__path__, f"{package.__name__}.")
            if "._reference" not in info.name
        ]
        for name in names:
            for obj in vars(importlib.import_module(name)).values():
                if not inspect.isclass(obj) or obj.__name__.startswith("_"):
                    continue
                if not obj.__module__.startswith(f"coalloc.{family}"):
                    continue  # the shared base, a library's class
                if issubclass(obj, coalloc.Result) or obj.__name__.endswith("Result"):
                    found.setdefault(family, set()).add(obj)
    return found


def test_every_family_result_class_is_defined_in_the_familys_result_module():
    found = _family_result_classes()
    outside = {
        f"{cls.__module__}.{cls.__qualname__}"
        for family, classes in found.items()
        for cls in classes
        if cls.__module__ != f"coalloc.{family}.result"
    }
    assert not outside, sorted(outside)
    # the scan saw every family's results, the moved ones among them
    assert set(found) == set(FAMILIES)
    names = {cls.__name__ for classes in found.values() for cls in classes}
    assert {"ExactMappingResult", "FlowInjectionResult", "CollectiveSimulationResult",
            "TestbedSimulationResult", "GapResult", "SolveResult"} <= names  # fmt: skip


def test_moved_result_classes_stay_importable_and_unpickle_from_their_old_modules():
    from coalloc.collective import result as cres
    from coalloc.collective import simulate as csim
    from coalloc.taskmap import clustering, exact
    from coalloc.taskmap import result as tres
    from coalloc.testbed import result as bres

    tsim = importlib.import_module("coalloc.testbed.simulate")
    pairs = [(exact, tres, "ExactMappingResult"), (clustering, tres, "FlowInjectionResult"),
             (csim, cres, "CollectiveSimulationResult"), (csim, cres, "SimulationResult"),
             (tsim, bres, "TestbedSimulationResult"), (tsim, bres, "SimulationResult")]  # fmt: skip
    for old, new, name in pairs:
        assert getattr(old, name) is getattr(new, name), name
    # a pickle written before the move names the old module: it still loads, to an equal result
    tasks = tm.TaskGraph([1.0, 2.0, 1.5], [[0, 4, 0], [4, 0, 1], [0, 1, 0]])
    res = tm.ResourceGraph.from_edges([0, 3.0, 5.0], [[0, 1], [0, 2]], [50.0, 50.0])
    sims = [
        (exact, tm.solve_exact_mapping(tasks, res)),
        (csim, csim.SimulationResult(records=[{"accepted": True, "delay": 2.0}])),
        (tsim, bres.TestbedSimulationResult(methods=["assign+"], arrivals=np.arange(3.0))),
    ]
    for old, obj in sims:
        data = pickle.dumps(obj, protocol=0)  # protocol 0 names a class as "module\nname"
        new_name = f"{type(obj).__module__}\n{type(obj).__name__}".encode()
        assert new_name in data
        data = data.replace(new_name, f"{old.__name__}\n{type(obj).__name__}".encode())
        back = pickle.loads(data)
        assert type(back) is type(obj)
        assert back.__dict__.keys() == obj.__dict__.keys()
        for key, value in obj.__dict__.items():
            if isinstance(value, np.ndarray):
                assert np.array_equal(getattr(back, key), value), key
            else:
                assert getattr(back, key) == value, key


def test_relative_gap_is_one_unit_free_formula():
    assert relative_gap(17.0, 20.0, sense="max") == pytest.approx(0.15)
    assert relative_gap(8.0, 6.0, sense="min") == pytest.approx(0.25)
    # the same gap whatever the unit (a utilisation factor, a count, a throughput)
    for scale in (1e-6, 1.0, 1e9):
        assert relative_gap(0.4 * scale, 0.5 * scale, sense="max") == pytest.approx(0.2)
    assert relative_gap(0.0, 0.0, sense="min") == 0.0
    assert relative_gap(5.0, 5.0 + 1e-12, sense="min") == 0.0  # a bound past the objective
    assert relative_gap(None, 1.0, sense="max") is None
    assert relative_gap(1.0, math.inf, sense="max") is None
    with pytest.raises(ValueError, match="sense"):
        relative_gap(1.0, 2.0, sense="up")


@pytest.mark.parametrize("family,method", CASES)
def test_every_result_gap_is_relative_gap_of_its_objective_and_bound(family, method):
    make, _ = FAMILIES[family]
    solve, sense = make()
    result = solve(method, seed=0)
    objective = result.objective
    assert result.sense == sense  # the direction the family documents
    if result.gap is None:
        assert result.bound is None or objective is None or not result.has_solution
    else:
        assert result.gap == relative_gap(objective, result.bound, sense=sense)


def test_ctaap_heuristic_with_a_bound_reports_the_shared_gap():
    r, o = ct.generators.random_instance(30, 3, edge_probability=0.5, seed=7)
    result = ct.solve(r, o, "greedy", seed=0, bound=True)
    assert result.bound is not None and result.gap is not None
    assert result.gap == relative_gap(result.n_allocated, result.bound, sense="max")


def test_the_progress_bar_prints_the_results_gap():
    for sense, inc, bound in (("max", 8.0, 10.0), ("min", 12.0, 9.0), ("max", 0.31, 0.5)):
        buf = io.StringIO()
        with progress.SolveProgress("X", sense=sense, time_limit=4.0, file=buf) as bar:
            bar.update(0.5, incumbent=inc, bound=bound)
        shown = f"gap {100 * relative_gap(inc, bound, sense=sense):.2f}%"
        assert shown in buf.getvalue(), (shown, buf.getvalue())


# --- time_limit everywhere, one deadline rule ---------------------------------------------


@pytest.mark.parametrize("family,method", CASES)
def test_every_method_takes_time_limit_and_refuses_a_bad_one(family, method):
    make, methods = FAMILIES[family]
    solve, _ = make()
    sig = inspect.signature(methods[method])
    assert "time_limit" in sig.parameters
    plain = solve(method, seed=0, time_limit=None)
    limited = solve(method, seed=0, time_limit=120.0)
    if getattr(methods[method], "anytime", False):  # improves until the limit (issue 29)
        assert limited.has_solution and limited.n_allocated >= plain.n_allocated
    else:  # a limit the call does not reach changes no answer
        assert _answer(limited) == _answer(plain)
    for bad in (-1.0, 0.0, math.nan, math.inf):
        with pytest.raises(ValueError, match="time_limit"):
            solve(method, seed=0, time_limit=bad)


@pytest.mark.parametrize("family,method", CASES)
def test_a_passed_deadline_stops_a_method_or_leaves_its_answer(family, method):
    make, methods = FAMILIES[family]
    solve, _ = make()
    plain = solve(method, seed=0)
    result = solve(method, seed=0, time_limit=1e-9)
    if result.params.get("time_limit") == 1e-9 and "time limit" in result.message:
        # stopped: the best answer so far (or none), whose status follows the one rule (an
        # incumbent that meets its bound is "optimal" even when stopped)
        assert result.status in ("time_limit", "optimal")
        assert result.has_solution or result.status == "time_limit"
    elif result.status == "time_limit" and plain.status != "time_limit":
        assert "time_limit" in result.params
    elif getattr(methods[method], "anytime", False):  # the default's answer, or better
        assert result.n_allocated >= plain.n_allocated and result.params["time_limit"] == 1e-9
    else:  # finished before its first poll of the deadline: the answer is unchanged
        assert _answer(result) == _answer(plain)


def test_mapper_heuristics_stop_at_a_passed_deadline_without_a_solution():
    # the task mapper's loops poll the deadline at every step: deterministic
    solve, _ = _taskmap()
    for method in ("base", "base+improve", "open", "open+improve"):
        result = solve(method, seed=3, time_limit=1e-9)
        assert result.status == "time_limit" and not result.has_solution
        assert result.seed == 3 and result.params["time_limit"] == 1e-9
        assert "time limit" in result.message
        tasks, res = (tm.TaskGraph([1.0, 2.0, 1.5], [[0, 4, 0], [4, 0, 1], [0, 1, 0]]),
                      tm.ResourceGraph.from_edges([0, 3.0, 5.0], [[0, 1], [0, 2]],
                                                  [50.0, 50.0]))  # fmt: skip
        assert not tm.Instance(tasks, res).verify(result).ok


def test_with_time_limit_counts_from_the_call_and_lets_outer_errors_through():
    calls = []

    def loop(n, *, seed=0):
        for i in range(n):
            calls.append(i)
            interrupt.check()
        return "done"

    timed = params.with_time_limit(loop, lambda *a, **stop: ("stopped", stop["time_limit"]))
    assert timed(3) == "done" and timed(3, time_limit=60) == "done"
    calls.clear()
    assert timed(10, time_limit=1e-9) == ("stopped", 1e-9)
    assert calls == [0]  # stopped at the first poll after the deadline
    # an outer scope's error (a batch's timeout, a cancel) is not turned into a result
    with interrupt.Scope() as outer:
        outer.cancel(KeyError("outer"))
        with pytest.raises(KeyError):
            timed(10, time_limit=60)
    assert "time_limit" in inspect.signature(timed).parameters


def test_deadline_is_the_one_rule():
    t0 = time.perf_counter()
    assert params.deadline(None, t0) is None
    assert params.deadline(2.0, t0) == t0 + 2.0
    assert params.expired(params.deadline(1e-9, t0 - 1.0))
    assert not params.expired(None) and params.remaining(None) is None
    for bad in (-1, 0, math.nan, math.inf, "5"):
        with pytest.raises(ValueError, match="time_limit"):
            params.deadline(bad)


# --- one kernel-choice check -------------------------------------------------------


@pytest.mark.slow
def test_one_kernel_choice_check_everywhere():
    assert params.check_backend("compiled") == "compiled"
    assert params.check_backend("numpy") == "numpy"
    assert params.check_backend("python") == "numpy"  # the testbed's older name
    calls = []
    for family, (make, methods) in FAMILIES.items():
        solve, _ = make()
        for method, func in methods.items():
            if "backend" not in inspect.signature(func).parameters or method == "exact":
                continue
            calls.append((family, method))
            with pytest.raises(ValueError) as err:
                solve(method, seed=0, backend="gpu")
            assert str(err.value) == (
                "backend must be one of ('compiled', 'numpy') (the compiled kernels or "
                "their NumPy twins), got 'gpu'"
            )
            a = solve(method, seed=0, backend="numpy")
            b = solve(method, seed=0, backend="compiled")
            assert np.array_equal(
                np.asarray(_answer(a).get("objective", 0)),
                np.asarray(_answer(b).get("objective", 0)),
            )
    assert {f for f, _ in calls} == {"ctaap", "collective", "testbed", "loadshare"}


# --- models stay read-only: caches beside them, never on them ------------------------


def _state(obj) -> dict:
    return {k: id(v) for k, v in vars(obj).items()}


@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_no_method_writes_onto_a_model_and_pickles_carry_no_cache(family):
    import pickle

    make, methods = FAMILIES[family]
    solve, _ = make()
    models = [part for part in solve.instance if hasattr(part, "__dict__")
              and type(part).__module__.startswith("coalloc.")]  # fmt: skip
    assert models
    before = [_state(m) for m in models]
    sizes = [len(pickle.dumps(m)) for m in models]
    for method in methods:
        if family == "collective" and method != "scan":
            continue  # a pool is mutable by design (reserve=True); scan covers the readers
        solve(method, seed=0)
    assert [_state(m) for m in models] == before
    assert [len(pickle.dumps(m)) for m in models] == sizes  # no warm cache travels


def test_cache_of_is_per_object_and_dies_with_it():
    import gc

    from coalloc._shared import caches

    class Model:
        pass

    a, b = Model(), Model()
    caches.cache_of(a)["x"] = 1
    assert caches.cache_of(a) == {"x": 1} and caches.cache_of(b) == {}
    key = id(a)
    assert caches._caches[key][1] == {"x": 1}
    del a
    gc.collect()
    # a's entry is gone (other tests' models may die in the same collection: count nothing
    # else); an object that reuses a's id later gets a fresh cache
    assert key not in caches._caches or caches._caches[key][1] == {}
    assert caches.cache_of(b) == {}


# --- one vocabulary inside (issue 36 item 5) ---------------------------------------------
#
# The referee here is the source itself: every file of the package is read, and each line
# that uses an old word in its old meaning is listed with its file and number, so that a
# failure says exactly where to look.

PACKAGE = pathlib.Path(coalloc.__file__).resolve().parent  # src/coalloc
CORE = PACKAGE.parent / "_core"  # the compiled sources, in a source checkout
SOLVERS = ("highs", "cbc", "cpsat")
EXECUTORS = ("threads", "processes", "serial")
_WORD = "(?:" + "|".join(SOLVERS + EXECUTORS) + ")"

#: The one place ``time_limit_s`` may survive: the call that maps the old keyword onto
#: ``time_limit`` at a public boundary (:func:`coalloc._shared.family.renamed_keyword`).
_TIME_LIMIT_S_SHIM = re.compile(
    r"""renamed_keyword\(.*["']time_limit_s["']\s*,\s*["']time_limit["']"""
)

#: ``backend`` (or a list of them) naming an integer-programming solver or a batch executor:
#: a keyword, a default, a comparison, a dict entry, a numpydoc line, a membership test, a
#: tuple of solvers called BACKENDS, or the runner's old import function.
_BACKEND_AS_SOLVER = [
    re.compile(rf"""\bbackends?\s*(?::\s*[\w\[\], .]+?\s*)?(?:=|==|!=)\s*\(?\s*["']{_WORD}["']"""),
    re.compile(rf"""["']{_WORD}["']\s*(?:==|!=)\s*\w*backend\b"""),
    re.compile(rf"""["']backend["']\s*:\s*["']{_WORD}["']"""),
    re.compile(rf"""\bbackends?\s*:\s*\{{\s*["']{_WORD}["']"""),  # numpydoc: {{"highs", ...}}
    re.compile(rf"""\bbackend\b["')\]]*\s+(?:not\s+)?in\s*[(\[{{]\s*["']{_WORD}["']"""),
    re.compile(r"""\bbackend\b["')\]]*\s+(?:not\s+)?in\s+\w*(?:SOLVERS|EXACT_BACKENDS)\b"""),
    re.compile(rf"""\b\w*BACKENDS\s*=\s*[(\[]\s*["']{_WORD}["']"""),
    re.compile(r"""\bSOLVERS\s+as\s+\w*BACKENDS\b"""),
    re.compile(r"""(?<!["'])\bimport_backend\b(?!["'\w])"""),
    re.compile(r"""\bchoice\(\s*backend\s*,\s*\w*(?:SOLVERS|EXACT_BACKENDS)\b"""),
]


#: The documented deprecation shims: functions whose text must name the old spellings
#: (their docstrings show them) and are exempt from the scans.
SHIMS = ("renamed_keyword", "_executor_keyword")


def _shim_lines(path) -> set:
    """Line numbers of the :data:`SHIMS` defined in ``path`` (a Python file)."""
    if path.suffix != ".py":
        return set()
    lines: set = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.FunctionDef) and node.name in SHIMS:
            lines.update(range(node.lineno, node.end_lineno + 1))
    return lines


def _source_files(*suffixes):
    roots = [PACKAGE] + ([CORE] if CORE.is_dir() else [])
    for root in roots:
        for path in sorted(root.rglob("*")):
            if path.is_file() and path.suffix in suffixes and "__pycache__" not in path.parts:
                yield path


def _where(path, number, line) -> str:
    return f"{path.relative_to(PACKAGE.parent)}:{number}: {line.strip()}"


def test_time_limit_s_appears_nowhere_but_in_one_documented_shim():
    hits, shims = [], []
    for path in _source_files(".py", ".pyx", ".pxd", ".h", ".hpp", ".cpp"):
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if re.search(r"\btime_limit_s\b", line):
                found = _where(path, number, line)
                (shims if _TIME_LIMIT_S_SHIM.search(line) else hits).append(found)
    assert not hits, "time_limit_s outside its one shim:\n" + "\n".join(hits)
    assert len(shims) <= 1, shims


def test_backend_never_names_a_solver_or_an_executor_in_the_package():
    hits = []
    for path in _source_files(".py", ".pyx"):
        shim = _shim_lines(path)
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if number not in shim and any(p.search(line) for p in _BACKEND_AS_SOLVER):
                hits.append(_where(path, number, line))
    assert not hits, "backend meaning a solver or an executor:\n" + "\n".join(hits)


def test_the_vocabulary_scan_finds_what_it_is_meant_to_find():
    # each old usage the scans must catch, and new ones they must let through
    old = [
        'run(backend="cbc")', "def exact(p, *, backend: str = 'highs'):", 'if backend == "cpsat":',
        '"cbc" != backend', '{"backend": "cpsat"}', '    backend : {"highs", "cbc"}',
        'if params.get("backend") in EXACT_BACKENDS:', 'backend in ("highs", "cbc")',
        'EXACT_BACKENDS = ("highs", "cbc", "cpsat")',
        "from .._shared.milp import SOLVERS as BACKENDS",
        "pkg = milp.import_backend(backend)", "checks.choice(backend, EXACT_BACKENDS, 'backend')",
        'solve_many(batch, backend="processes")', "BACKENDS = ('threads', 'processes', 'serial')",
    ]  # fmt: skip
    new = [
        "if backend in BACKENDS:",  # the kernels' list (coalloc._shared.params)
        'run(solver="cbc")', 'backend="numpy"', 'if solver == "cpsat":', '{"solver": "cpsat"}',
        'backend : {"compiled", "numpy"}', "pkg = milp.import_solver(solver)",
        'executor="processes"', 'BACKENDS = ("compiled", "numpy")',
        '    new = {"BACKENDS": "SOLVERS", "import_backend": "import_solver"}.get(name)',
        'warnings.warn("import_backend is deprecated: call import_solver")',
        "params.check_backend(backend)",
    ]  # fmt: skip
    assert [t for t in old if not any(p.search(t) for p in _BACKEND_AS_SOLVER)] == []
    assert [t for t in new if any(p.search(t) for p in _BACKEND_AS_SOLVER)] == []
    shim = 'assign = renamed_keyword(_assign, "time_limit_s", "time_limit")'
    assert _TIME_LIMIT_S_SHIM.search(shim)
    assert not _TIME_LIMIT_S_SHIM.search("def f(time_limit_s=None):")


def _public_modules():
    for info in pkgutil.walk_packages(coalloc.__path__, "coalloc."):
        parts = info.name.split(".")
        if any(p.startswith("_") for p in parts[1:]) or info.name.endswith("__main__"):
            continue  # private modules (the shared layer, the NumPy twins) have no boundary
        yield importlib.import_module(info.name)


def _deprecated_parameters(func, exact: bool = False) -> list:
    """The parameters of ``func``'s signature that carry an old spelling."""
    try:
        sig = inspect.signature(func)
    except (TypeError, ValueError):
        return []
    bad = []
    for name, p in sig.parameters.items():
        if name == "time_limit_s":
            bad.append(name)
        elif name == "backend" and (exact or (isinstance(p.default, str)
                                              and p.default in SOLVERS + EXECUTORS)):  # fmt: skip
            bad.append(name)
    return bad


def test_no_public_signature_or_all_shows_a_deprecated_name():
    hits = []
    for module in _public_modules():
        names = getattr(module, "__all__", None)
        if names is None:
            names = [n for n in vars(module) if not n.startswith("_")]
        for name in names:
            obj = getattr(module, name, None)
            if name in ("time_limit_s", "import_backend") or (
                "BACKENDS" in name and isinstance(obj, (tuple, list)) and obj
                and all(isinstance(v, str) and v in SOLVERS + EXECUTORS for v in obj)
            ):  # fmt: skip
                hits.append(f"{module.__name__}.{name} (in its public names)")
            targets = [obj] if callable(obj) and not inspect.isclass(obj) else []
            if inspect.isclass(obj) and obj.__module__.startswith("coalloc"):
                members = vars(obj).items()
                targets += [m for k, m in members if callable(m) and not k.startswith("_")]
                targets += [m for k, m in members if k == "__init__"]
            for func in targets:
                if getattr(func, "__module__", "").startswith("coalloc"):
                    where = f"{module.__name__}.{name}: {getattr(func, '__qualname__', name)}"
                    hits += [f"{where}({bad}=...)" for bad in _deprecated_parameters(func)]
    for family, (_, methods) in FAMILIES.items():  # every method of every family
        for method, func in methods.items():
            for bad in _deprecated_parameters(func, exact=method == "exact"):
                hits.append(f"coalloc.{family}.METHODS[{method!r}]({bad}=...)")
            if method == "exact" and "solver" not in inspect.signature(func).parameters:
                hits.append(f"coalloc.{family}.METHODS['exact'] takes no solver=")
    for func in (coalloc.solve_many, coalloc.solve_many_iter):
        hits += [f"{func.__name__}({bad}=...)" for bad in ("backend", "time_limit_s")
                 if bad in inspect.signature(func).parameters]  # fmt: skip
    assert not sorted(set(hits)), "\n".join(sorted(set(hits)))


def test_the_command_line_offers_no_deprecated_option():
    from coalloc.cli import build_parser

    def walk(parser, path=()):
        yield path, parser
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                for name, sub in action.choices.items():
                    yield from walk(sub, path + (name,))

    hits, solvers = [], 0
    for path, parser in walk(build_parser()):
        for action in parser._actions:
            shown = action.help is not argparse.SUPPRESS
            spelled = " ".join(action.option_strings)
            if action.dest == "time_limit_s" or "time-limit-s" in spelled:
                hits.append(f"coalloc {' '.join(path)} {action.option_strings}")
            if "--backend" in action.option_strings and shown and action.dest == "solver":
                hits.append(f"coalloc {' '.join(path)}: --backend shown as the solver")
            solvers += "--solver" in action.option_strings
    assert not hits, "\n".join(hits)
    assert solvers >= 5  # the scan saw the exact methods' options


@pytest.mark.parametrize("family,method", CASES)
def test_results_record_the_solver_as_solver_and_backend_only_as_the_kernels(family, method):
    make, _ = FAMILIES[family]
    solve, _ = make()
    result = solve(method, seed=0)
    params = result.to_dict()["params"]
    assert params.get("backend", "compiled") in ("compiled", "numpy"), params
    assert "time_limit_s" not in params, params
    if method == "exact":
        assert params.get("solver") in SOLVERS, params
