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
            # a path below the family: "explain_allocation", "bounds.lp_bound"
            where, _, name = f"{family}.{fname}".rpartition(".")
            func = getattr(importlib.import_module(f"coalloc.{where}"), name)
            out.append((func, table))
    return out


FUNCTIONS = _functions()


def test_there_are_function_tables():
    assert sorted(f.__name__ for f, _ in FUNCTIONS) == [
        "capped_clique", "cluster_set_bound", "communication_cost", "explain_allocation",
        "explain_gap", "explain_mapping", "explain_request", "explain_share", "flow_injection",
        "initial_coalitions", "instance_to_dict", "job_order", "lp_bound", "processor_order",
        "read_gap_file", "task_graph_to_dict", "verify_coallocation",
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
    """Every family whose generators take parameters declares them (the GAP's generator
    keeps its table in ``loadshare/gap/generators.py``; the family's module holds it too)."""
    declared = {fam for fam, _, _ in GENERATOR_TABLES}
    assert declared == set(families())
    assert len(GENERATOR_TABLES) >= 8
    assert ("loadshare", "generate_gap") in {(fam, f.__name__) for fam, f, _ in GENERATOR_TABLES}


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


# ------------------------------------------------------- the generate commands' options

def _declared_generate_options():
    """``coalloc FAMILY generate``'s options -> the generator entries they feed
    ``(generator, parameter)``, as each family's spec declares them (issue 37: the options
    are built from the declaration, :func:`coalloc.cli._generate.generate_options`): the
    first is the one the option's type is made from, the others must agree with it
    (ctaap's ``--n-tasks`` feeds fig2 and fig3)."""
    from coalloc.cli._generate import generate_options

    out = {}
    for fam, spec in families().items():
        for flag, fed in generate_options(spec.generate).items():
            out[(fam, flag)] = list(dict.fromkeys((g.__name__, p) for _, g, p, _ in fed))
    return out


GENERATE_OPTIONS = _declared_generate_options()

#: generate options no generator table holds, and why (what types them instead).
GENERATE_UNTABLED = {
    ("loadshare", "--count"): "how many instances are written: no generator parameter",
}


def _generate_parsers():
    import argparse

    from coalloc.cli import build_parser

    def sub(parser):
        (action,) = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
        return action.choices

    top = build_parser()
    return {fam: sub(sub(top)[fam])["generate"] for fam in families()}


GENERATE_PARSERS = _generate_parsers()


def _generate_value_options():
    """``(family, flag, action)`` of every option of a generate command that takes a value,
    but ``--seed`` (the seed policy's) and ``-o`` (where to write)."""
    out = []
    for fam, parser in GENERATE_PARSERS.items():
        for a in parser._actions:
            if a.option_strings and a.nargs != 0 and a.dest not in ("seed", "output"):
                out.append((fam, a.option_strings[-1], a))
    return out


def _entry(family, generator, param):
    return importlib.import_module(f"coalloc.{family}.generators").GENERATORS[generator][param]


def test_every_generate_option_is_typed_from_a_generator_table():
    """Each option's type holds its first entry's very constraints (not a copy typed by
    hand), the entries it also feeds say the same, and its help gives the range."""
    from coalloc._shared.constraints import describe
    from coalloc.cli import _common as common

    found = _generate_value_options()
    assert {(f, o) for f, o, _ in found} == set(GENERATE_OPTIONS) | set(GENERATE_UNTABLED)
    for fam, flag, action in found:
        if (fam, flag) in GENERATE_UNTABLED:
            assert not isinstance(action.type, common._TableValue), (fam, flag)
            continue
        entries = [_entry(fam, g, p) for g, p in GENERATE_OPTIONS[(fam, flag)]]
        assert isinstance(action.type, common._TableValue), (fam, flag)
        kept = [c for c in entries[0] if c is not None]
        assert len(action.type.constraints) == len(kept)
        assert all(a is b for a, b in zip(action.type.constraints, kept)), (fam, flag)
        assert {describe(e) for e in entries} == {describe(entries[0])}, (fam, flag)
        if isinstance(action.type, common._TableWord):
            assert sorted(action.choices) == sorted(entries[0][0].options)
        else:
            assert describe(entries[0]) in action.help, (fam, flag)
        # the default is one the generators take
        if action.default is not None:
            for e in entries:
                check_value(action.default, action.type.name, e)


def _generate_refused_cases():
    """``(family, flag, text)``: every value a fed generator entry refuses that a command
    line can say (its numbers, ``nan`` among them; a word, for an entry of words: a string
    or ``True`` is refused by the API for its type, but ``"1"`` is a number on a command
    line), and ``2.5`` for an integer entry: derived from the tables."""
    from numbers import Integral

    from coalloc._shared.constraints import Interval

    out = []
    for (fam, flag), fed in GENERATE_OPTIONS.items():
        for g, p in fed:
            entry = _entry(fam, g, p)
            numeric = any(isinstance(c, Interval) for c in entry)
            for bad in invalid_values(entry):
                if isinstance(bad, (int, float)) and not isinstance(bad, bool):
                    out.append((fam, flag, repr(bad)))
                elif isinstance(bad, str) and not numeric:
                    out.append((fam, flag, bad))
            if any(isinstance(c, Interval) and c.kind is Integral for c in entry):
                out.append((fam, flag, "2.5"))
    return sorted(set(out))


GENERATE_REFUSED = _generate_refused_cases()


def test_the_generate_refused_cases_cover_every_tabled_option():
    assert {(f, o) for f, o, _ in GENERATE_REFUSED} == set(GENERATE_OPTIONS)


@pytest.mark.parametrize("family,flag,text", GENERATE_REFUSED,
                         ids=[f"{f} {o}={t}" for f, o, t in GENERATE_REFUSED])  # fmt: skip
def test_a_generate_option_refuses_what_its_tables_refuse(family, flag, text, capsys, tmp_path):
    """Refused by argparse (exit 2, one line) with the table's message, before anything is
    generated or written."""
    from coalloc.cli import main

    out = tmp_path / "x.json"
    positional = {"ctaap": ["fig2"], "collective": ["pool"], "loadshare": ["paper"],
                  "taskmap": [], "testbed": ["deterlab"]}[family]  # fmt: skip
    with pytest.raises(SystemExit) as exc:
        main([family, "generate", *positional, f"{flag}={text}", "-o", str(out)])
    err = capsys.readouterr().err
    assert exc.value.code == 2, err
    lines = err.splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"coalloc: error: {family} generate: "), err
    name = GENERATE_PARSERS[family]._option_string_actions[flag].type.name
    assert f"argument {flag}: {name} must be" in lines[0], err
    assert not out.exists()
