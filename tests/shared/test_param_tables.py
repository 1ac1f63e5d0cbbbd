"""The parameter tables (:mod:`coalloc._shared.constraints`): declared once, for every method.

Every family declares, per method, what each parameter takes. These tests hold the tables to
the methods: every keyword a method takes is declared, every declared name is taken, every
default satisfies its entry, and every value the table refuses (derived from the table by
:func:`~coalloc._shared.constraints.invalid_values`) is refused by ``check_params`` (before
a batch starts) and by the family's solve (at the call), with the parameter named.
"""

from __future__ import annotations

import inspect
import warnings

import pytest

import coalloc
from coalloc._shared.constraints import (
    NO_VALIDATION,
    InvalidParameterError,
    describe,
    invalid_values,
    validate,
)
from coalloc._shared.family import problem_kinds


def _example(kind):
    """A small instance of each problem kind."""
    import coalloc.collective as co
    import coalloc.ctaap as ct
    import coalloc.loadshare as ls
    import coalloc.taskmap as tm
    import coalloc.testbed as tb

    if kind.kind == "ctaap":
        return ct.Instance(*ct.generators.fig2(2, n_tasks=8, seed=1))
    if kind.kind == "taskmap":
        tasks = tm.TaskGraph([1.0, 2.0, 1.5], [[0, 4, 0], [4, 0, 1], [0, 1, 0]])
        res = tm.ResourceGraph.from_edges([0, 3.0, 5.0], [[0, 1], [0, 2]], [50.0, 50.0])
        return tm.Instance(tasks, res)
    if kind.kind == "collective":
        pool = co.ResourcePool([[4.0, 8.0], [2.0, 2.0], [1.0, 4.0]], ["cores", "ram"])
        req = co.CollectiveRequest(3600, 2, minimum={"cores": 1, "ram": 1}, total={"ram": 6})
        return co.Instance(pool, req)
    if kind.kind == "testbed":
        ptop = tb.parse_ptop("node sw switch:1\nnode a pc:1\nnode b pc:1\n"
                             "link la a sw 100 0 0\nlink lb b sw 100 0 0")  # fmt: skip
        return tb.Instance(tb.parse_top("node x pc\nnode y pc\nlink l x y 100 0 0"), ptop)
    if kind.kind == "loadshare":
        return ls.Instance(ls.LoadSharingProblem([10, 10, 10], [8, 7, 6, 3], [0, 0, 0, 1]))
    if kind.kind == "gap":
        return ls.GapProblem(ls.GapInstance([[1, 3], [2, 1]], [[2, 2], [2, 2]], [2, 2]))
    raise AssertionError(f"no example of {kind.kind}")  # a new kind: add its example


def _methods():
    return [(kind, method) for kind in problem_kinds() for method in kind.methods]


def _keywords(kind, method):
    """The keyword parameters a method takes (not the problem, not the seed), and whether it
    also takes any keyword (``**schedule``)."""
    sig = inspect.signature(kind.METHODS[method])
    params = list(sig.parameters.values())[len(kind._fields):]
    keyword = (inspect.Parameter.KEYWORD_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    named = {p.name: p for p in params if p.kind in keyword and p.name != "seed"}
    return named, any(p.kind is p.VAR_KEYWORD for p in params)


def _cases():
    out = []
    for kind, method in _methods():
        for name, entry in kind.PARAMS[method].items():
            values = invalid_values(entry)
            if values:
                out.append(pytest.param(kind, method, name, values,
                                        id=f"{kind.kind}-{method}-{name}"))  # fmt: skip
    for kind in problem_kinds():
        for name, entry in kind.SOLVE_PARAMS.items():
            out.append(pytest.param(kind, kind.DEFAULT_METHOD, name, invalid_values(entry),
                                    id=f"{kind.kind}-solve-{name}"))  # fmt: skip
    return out


@pytest.mark.parametrize("kind, method", _methods(),
                         ids=[f"{k.kind}-{m}" for k, m in _methods()])  # fmt: skip
def test_every_keyword_is_declared_once(kind, method):
    """The table names exactly the keywords the method takes, and its defaults satisfy it."""
    table = kind.PARAMS[method]
    named, any_keyword = _keywords(kind, method)
    assert set(named) <= set(table), f"undeclared: {sorted(set(named) - set(table))}"
    if not any_keyword:
        assert set(table) <= set(named), f"not taken: {sorted(set(table) - set(named))}"
    for name, p in named.items():
        if p.default is not p.empty:
            validate(table, {name: p.default})  # a default is a valid value


@pytest.mark.parametrize("kind, method, name, values", _cases())
def test_a_refused_value_is_refused_before_any_work(kind, method, name, values):
    """Every value the table refuses: ``check_params`` refuses it (a batch does not start)
    and so does the family's solve, with the parameter named in the message."""
    instance = _example(kind)
    for value in values:
        with pytest.raises((ValueError, TypeError), match=name):
            kind.check_params(method, {name: value})
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)
            with pytest.raises(InvalidParameterError, match=name):
                instance.solve(method, seed=0, **{name: value})


def test_the_tables_use_known_constraints():
    """Every entry is a list of constraints (or NO_VALIDATION) with a description."""
    for kind, method in _methods():
        for name, entry in {**kind.PARAMS[method], **kind.SOLVE_PARAMS}.items():
            assert entry == NO_VALIDATION or isinstance(entry, list), (kind.kind, method, name)
            assert describe(entry)


def test_a_batch_refuses_a_bad_value_before_it_starts():
    """``solve_many`` checks the values of every parameter before the first solve."""
    instance = _example(problem_kinds("ctaap")[0])
    with pytest.raises(ValueError, match="restarts"):
        coalloc.solve_many([instance, instance], method="greedy", restarts=0)


@pytest.mark.parametrize("command", ["solve", "solve-batch"])
def test_the_command_line_refuses_a_bad_value_with_the_table_message(tmp_path, capsys, command):
    """``-p KEY=VALUE`` goes through the same table: exit 2, the parameter named, no output."""
    import coalloc.ctaap as ct
    from coalloc.cli import main

    path, out = tmp_path / "i.json", tmp_path / "out.jsonl"
    ct.io.write_instance(str(path), *ct.generators.fig2(2, n_tasks=8, seed=1))
    args = ["ctaap", command, str(path), "--method", "greedy", "-p", "restarts=0"]
    assert main(args + (["-o", str(out)] if command == "solve-batch" else [])) == 2
    assert "restarts must be an integer in [1, inf), got 0" in capsys.readouterr().err
    assert not out.exists()
