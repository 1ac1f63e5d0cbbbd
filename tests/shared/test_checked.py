"""The constraint table is the one place a method's parameter values are checked
(issue 37 item 4): a method called directly, past its family's solve, refuses what its
table refuses (``@checked``), the relations between parameters are the tables' too, and a
public function with its own table (``FUNCTIONS``) is held to it as a method is.
"""

from __future__ import annotations

import importlib
import inspect

import pytest

from coalloc._shared.constraints import (
    AnyGiven,
    InvalidParameterError,
    NotBelow,
    Predicate,
    check_value,
    invalid_values,
)
from coalloc._shared.family import families
from coalloc.testing import _instances


def direct_cases():
    """``(kind, method, parameter, bad value)`` of every registered method, every value its
    table refuses (the 816 values of ``check_family``'s bad-value check, and the GAP's)."""
    out = []
    for spec in families().values():
        for inst in _instances(spec):
            kind = type(inst)
            for method, table in kind.PARAMS.items():
                for param, constraints in table.items():
                    for bad in invalid_values(constraints):
                        out.append((inst, method, param, bad))
    return out


CASES = direct_cases()


def test_the_cases_cover_every_family():
    assert {type(inst).family for inst, *_ in CASES} == set(families())
    assert len(CASES) > 800


def test_every_method_called_directly_refuses_what_its_table_refuses():
    """``kind.METHODS[method](*problem, name=bad)``, the method itself, without the family's
    solve in front: refused before any work, the parameter named."""
    missed = []
    for inst, method, param, bad in CASES:
        kind = type(inst)
        try:
            kind.METHODS[method](*inst, seed=0, **{param: bad})
        except (ValueError, TypeError) as exc:
            if param not in str(exc):
                missed.append((kind.kind, method, param, bad, str(exc)[:80]))
        else:
            missed.append((kind.kind, method, param, bad, "accepted"))
    assert not missed, missed


def _constraint_modules():
    return [importlib.import_module(f"coalloc.{name}.constraints") for name in families()]


def _functions():
    out = []
    for mod in _constraint_modules():
        for fname, table in getattr(mod, "FUNCTIONS", {}).items():
            family = mod.__name__.split(".")[1]
            func = getattr(importlib.import_module(f"coalloc.{family}"), fname)
            out.append((func, table))
    return out


FUNCTIONS = _functions()


def test_there_are_function_tables():
    assert sorted(f.__name__ for f, _ in FUNCTIONS) == [
        "explain_allocation", "explain_gap", "explain_mapping", "explain_request",
        "explain_share", "flow_injection",
    ]  # fmt: skip


@pytest.mark.parametrize("func,table", FUNCTIONS, ids=[f.__name__ for f, _ in FUNCTIONS])
def test_a_function_table_names_its_keywords_and_its_defaults_pass(func, table):
    sig = inspect.signature(func)
    keywords = {n for n, p in sig.parameters.items()
                if p.default is not inspect.Parameter.empty} - {"seed"}  # fmt: skip
    assert set(table) == keywords
    for name in table:
        check_value(sig.parameters[name].default, name, table[name])


@pytest.mark.parametrize("func,table", FUNCTIONS, ids=[f.__name__ for f, _ in FUNCTIONS])
def test_a_function_refuses_what_its_table_refuses(func, table):
    """Refused before the function reads its problem (None here)."""
    params = inspect.signature(func).parameters.values()
    required = [p for p in params if p.default is p.empty and p.kind is not p.VAR_KEYWORD]
    for name, constraints in table.items():
        for bad in invalid_values(constraints):
            with pytest.raises(InvalidParameterError, match=f"^{name} must be"):
                func(*[None] * len(required), **{name: bad})


def test_the_relations_are_checked_at_the_call():
    import coalloc.collective as co
    import coalloc.ctaap as ct
    from coalloc.collective._spec import example as collective_example
    from coalloc.ctaap.anytime import solve_anytime

    request, offer = ct.generators.fig2(1, seed=1)
    with pytest.raises(InvalidParameterError, match="anytime search needs time_limit or rounds"):
        solve_anytime(request, offer)
    with pytest.raises(InvalidParameterError, match="annealing steps; at most"):
        ct.solve_ctaap(request, offer, beta_r=1 + 1e-12)
    inst = collective_example(seed=0)
    with pytest.raises(InvalidParameterError, match=r"m_max must be >= m_init \(5\), got 4"):
        co.cankar(*inst, m_init=5, m_max=4)
    # equal is fine, and so is m_max left to its default (8 * m_init)
    assert co.cankar(*inst, m_init=2, m_max=2).status
    assert co.cankar(*inst, m_init=2).status


def test_a_tables_relations_are_refused_before_a_batch_starts():
    from coalloc.collective._spec import example as collective_example
    from coalloc.ctaap._spec import example as ctaap_example

    cankar_kind = type(collective_example(seed=0))
    with pytest.raises(InvalidParameterError, match="m_max must be >= m_init"):
        cankar_kind.check_params("cankar", {"m_init": 5, "m_max": 4})
    cankar_kind.check_params("cankar", {"m_max": 4})  # m_init's default: checked at the call
    ctaap_kind = type(ctaap_example(seed=0))
    with pytest.raises(InvalidParameterError, match="annealing steps; at most"):
        ctaap_kind.check_params("ctaap", {"beta0": 1.0, "beta_f": 10.0, "beta_r": 1 + 1e-12})


def test_the_relation_types():
    get = {"a": None, "b": 2, "lo": 1, "hi": 3}.get
    assert AnyGiven("a", "b", why="it").check(get) is None
    assert AnyGiven("a", "c", why="it").check(get) == "it needs a or c (both None)"
    assert NotBelow("hi", "lo").check(get) is None
    assert NotBelow("lo", "hi").check(get) == "lo must be >= hi (3), got 1"
    assert NotBelow("a", "hi").check(get) is None  # None: the default applies
    assert Predicate(("a", "b"), lambda a, b: False, "never").check(get) is None  # a None
    r = Predicate(("lo", "hi"), lambda lo, hi: hi - lo < 2, "hi={hi} is far from lo={lo}")
    assert r.check(get) == "hi=3 is far from lo=1"


# ------------------------------------------------------------------------ the generators


def _generator_tables():
    """``(family, function, table)`` of every generator a family declares in its
    ``generators.GENERATORS`` (the generators' tables, as the methods' ``PARAMS``)."""
    out = []
    for name in families():
        mod = importlib.import_module(f"coalloc.{name}.generators")
        for fname, table in getattr(mod, "GENERATORS", {}).items():
            out.append((name, getattr(mod, fname), table))
    return out


GENERATOR_TABLES = _generator_tables()
_GEN_IDS = [f"{fam}.{f.__name__}" for fam, f, _ in GENERATOR_TABLES]


def test_the_generators_tables_are_declared():
    """Every family whose generators take parameters declares them; the families still
    checking imperatively are named here (the GAP's generators belong to ``loadshare/gap``)."""
    declared = {fam for fam, _, _ in GENERATOR_TABLES}
    assert declared == set(families())
    assert len(GENERATOR_TABLES) >= 7


@pytest.mark.parametrize("family,func,table", GENERATOR_TABLES, ids=_GEN_IDS)
def test_a_generator_table_names_its_parameters_and_its_defaults_pass(family, func, table):
    """The table declares every parameter but the seed (the seed policy's) and the models
    a generator reads (``pool``); every default satisfies it."""
    sig = inspect.signature(func)
    models = {"pool"}
    assert set(table) == set(sig.parameters) - {"seed"} - models, family
    for name, p in sig.parameters.items():
        if name in table and p.default is not p.empty:
            check_value(p.default, name, table[name])


def _generator_bad_cases():
    out = []
    for fam, func, table in GENERATOR_TABLES:
        for name, constraints in table.items():
            for bad in invalid_values(constraints):
                out.append((fam, func, name, bad))
    return out


def test_every_generator_refuses_what_its_table_refuses():
    """Each value ``invalid_values`` derives from a generator's table, passed by keyword
    before the other arguments (left None: never read, the value is refused first), is
    refused with the parameter named."""
    cases = _generator_bad_cases()
    assert len(cases) > 60
    missed = []
    for fam, func, name, bad in cases:
        params = inspect.signature(func).parameters.values()
        required = [p.name for p in params if p.default is p.empty and p.name != name]
        try:
            func(**{name: bad}, **{r: None for r in required})
        except InvalidParameterError as exc:
            if not str(exc).startswith(f"{name} must be"):
                missed.append((fam, func.__name__, name, bad, str(exc)[:80]))
        else:
            missed.append((fam, func.__name__, name, bad, "accepted"))
    assert not missed, missed


@pytest.mark.parametrize("func,kwargs,message", [
    ("coalloc.ctaap.generators.random_instance", {"capacity_range": (3, 1)}, "capacity_range"),
    ("coalloc.ctaap.generators.random_instance", {"capacity_range": (1.5, 2)}, "capacity_range"),
    ("coalloc.collective.generators.table1_pool", {"load": (0, 3.5)}, "load must be"),
    ("coalloc.loadshare.generators.paper_setup", {"job_size": (5, 1)}, "job_size must be"),
    ("coalloc.loadshare.generators.paper_setup", {"heavy": (1.0,)}, "heavy must be"),
    ("coalloc.taskmap.generators.geometric_task_graph", {"n_tasks": (10, 5)}, "n_tasks must be"),
    ("coalloc.taskmap.generators.geometric_task_graph", {"compute": (1.0, 2.0, 3.0)}, "compute"),
    ("coalloc.taskmap.generators.stencil_task_graph", {"shape": (0, 3)}, "shape must be"),
    ("coalloc.taskmap.generators.internet_resource_graph", {"capacity": (0.0, 1.0)}, "capacity"),
])  # fmt: skip
def test_a_generators_pair_relations_are_refused(func, kwargs, message):
    """The pairs (ranges, distributions' parameters) are relations of their tables."""
    module, name = func.rsplit(".", 1)
    gen = getattr(importlib.import_module(module), name)
    args = [5, 2] if "ctaap" in module else []
    with pytest.raises(InvalidParameterError, match=message):
        gen(*args, **kwargs)
