"""The exact model's build looks at the clock at a bounded interval, and stays the same model.

Issue 36: the long rows (a trunk group's and a trunk's bandwidth) and the objective are
written straight into the CP-SAT proto, a slice at a time with a look at the clock between
two slices, where one ``WeightedSum``/``Minimize`` call could not look at it. The referee of
"the same model" is CP-SAT's own API: the model built through ``Add``/``AddExactlyOne``/
``Minimize`` (``_DIRECT = False``) and the one written into the proto must print the same
proto, variable for variable and row for row. The polling is judged by counts (how many
terms pass between two looks at the clock), never by the clock itself.
"""

from __future__ import annotations

import pytest

import coalloc.testbed as tb
from coalloc._shared.milp import MilpOutcome

pytest.importorskip("ortools")

from coalloc.testbed import exact as tx  # noqa: E402


def _captured(monkeypatch, pr, *, core: bool = False, limit=None) -> str:
    """The text of the proto of ``pr``'s exact model (the solve is replaced by a capture)."""
    seen: list = []

    def fake_run(cp, m, variables, **kw):
        seen.append(str(m.Proto()))
        return MilpOutcome(x=None, bound=None, status="time_limit", solver_status=-1,
                           message="captured", nodes=None, time_limit_hit=True,
                           infeasible=False, rows=0, time_limit=None)  # fmt: skip

    def fake_core(cp, m, present, deadline, seed):
        seen.append(str(m.Proto()))
        return None

    monkeypatch.setattr(tx, "run_cpsat", fake_run)
    monkeypatch.setattr(tx, "_core", fake_core)
    if core:
        tx.exact_core(pr, time_limit=1e6 if limit is None else limit)
    else:
        tx.exact_mapping(pr, time_limit=limit)
    assert len(seen) == 1
    return seen[0]


def _both(monkeypatch, pr, **kw) -> tuple:
    monkeypatch.setattr(tx, "_DIRECT", False)
    api = _captured(monkeypatch, pr, **kw)
    monkeypatch.setattr(tx, "_DIRECT", True)
    direct = _captured(monkeypatch, pr, **kw)
    return api, direct


def _parallel_trunks() -> tuple:
    # two parallel trunks (each link packed into one of them: the per-trunk rows), a pc
    # class of one node (x variables) and a class of several (n variables)
    text = ("node sw0 switch:1\nnode sw1 switch:1\nnode sw2 switch:1\n"
            "link t0 sw0 sw1 3000 0 0\nlink t1 sw0 sw1 2000 0 0\nlink t2 sw1 sw2 2500 0 0\n"
            "node a pc:1 A:1\n" + "".join(f"link a{i} a sw0 2000 0 0\n" for i in range(4)) +
            "".join(f"node b{i} pc:1 B:1\nlink lb{i} b{i} sw1 1000 0 0\n" for i in range(4)) +
            "".join(f"node c{i} pc:1\nlink lc{i} c{i} sw2 1000 0 0\n" for i in range(3)))
    top = tb.parse_top("node x A\n" + "".join(
        f"node y{i} B\nlink l{i} x y{i} {bw} 0 0\n" for i, bw in enumerate((1500, 1000, 700)))
        + "node z0 pc\nnode z1 pc\nlink m0 y0 z0 400 0 0\nlink m1 z0 z1 0 0 0\n")  # fmt: skip
    return tb.parse_ptop(text), top


INSTANCES = {
    "deterlab": lambda: (tb.generators.deterlab(60, 4, seed=3),
                         tb.generators.random_sparse(14, 2, seed=2)),
    "deterlab-dumbbell": lambda: (tb.generators.deterlab(40, 3, seed=1),
                                  tb.generators.dumbbell(4, 5)),
    "parallel-trunks": _parallel_trunks,
    "one-switch": lambda: (tb.generators.deterlab(20, 1, seed=1), tb.generators.ring(6)),
}


@pytest.mark.parametrize("name", sorted(INSTANCES))
def test_the_proto_written_model_is_the_api_built_model(monkeypatch, name):
    ptop, top = INSTANCES[name]()
    pr = tb.build_problem(top, ptop)
    api, direct = _both(monkeypatch, pr)
    assert "objective" in api  # (an objective was set: compared below with the rest)
    assert direct == api


def test_the_same_model_with_a_limit_and_in_the_core_model(monkeypatch):
    ptop, top = INSTANCES["deterlab"]()
    pr = tb.build_problem(top, ptop)
    api, direct = _both(monkeypatch, pr, limit=1e6)
    assert direct == api and "linear" in api
    api, direct = _both(monkeypatch, pr, core=True)  # exact_core: presence literals (negated)
    assert direct == api and "literals: -" in api


def test_flat_merges_drops_zeros_and_sorts_as_cp_sat_does():
    from ortools.sat.python import cp_model as cp

    m = cp.CpModel()
    xs = [m.NewBoolVar(f"x{i}") for i in range(5)]
    terms = [(xs[3], 2), (xs[1], 0), (xs[0], 4), (xs[3], 5), (xs[4], 1), (xs[2], -1), (xs[2], 1)]
    assert tx._flat(terms, lambda: None) == ([0, 3, 4], [4, 7, 1])
    m.Add(tx._weighted(cp, terms) <= 9)
    tx._at_most(cp, m, terms, 9, lambda: None)
    rows = m.Proto().constraints
    assert str(rows[0]) == str(rows[1])


def test_long_rows_and_the_objective_look_at_the_clock_between_slices(monkeypatch):
    from ortools.sat.python import cp_model as cp

    monkeypatch.setattr(tx, "PROTO_SLICE", 10)
    m = cp.CpModel()
    xs = [m.NewBoolVar(f"x{i}") for i in range(95)]
    terms = [(v, i + 1) for i, v in enumerate(xs)]
    looks = []
    tx._minimize(cp, m, terms, lambda: looks.append(len(m.Proto().objective.vars)))
    # _flat: one look per 10 terms and one after its sort; _put: one after each slice, so
    # the objective grows 10 terms between two looks
    assert looks[:11] == [0] * 11
    assert looks[11:] == list(range(10, 95, 10)) + [95]
    assert len(m.Proto().objective.vars) == 95

    class Stop(Exception):
        pass

    def stop_after(n):
        count = [0]

        def clock():
            count[0] += 1
            if count[0] > n:
                raise Stop

        return clock

    m2 = cp.CpModel()
    ys = [m2.NewBoolVar(f"y{i}") for i in range(95)]
    with pytest.raises(Stop):  # a deadline inside the row stops its writing there: the
        # 13th look (11 in _flat, then one per slice) comes after the second slice
        tx._at_most(cp, m2, [(v, 3) for v in ys], 50, stop_after(12))
    assert len(m2.Proto().constraints[0].linear.vars) == 20


def test_the_build_looks_at_the_clock_every_few_variables(monkeypatch):
    """Between two looks at the clock, the build creates a bounded number of variables (the
    800-node model's 35,410 ``new_bool_var`` calls took 40-120 us each under load)."""
    ptop, top = INSTANCES["deterlab"]()
    pr = tb.build_problem(top, ptop)
    import ortools.sat.python.cp_model as cpm

    created = [0]
    since = [0]
    most = [0]
    real = cpm.CpModel.new_bool_var

    def counted(self, name):
        created[0] += 1
        since[0] += 1
        most[0] = max(most[0], since[0])
        return real(self, name)

    monkeypatch.setattr(cpm.CpModel, "new_bool_var", counted)  # (NewBoolVar calls it)
    real_perf = tx.time.perf_counter

    class _Time:
        @staticmethod
        def perf_counter():
            since[0] = 0  # (every look at the clock reads it)
            return real_perf()

    monkeypatch.setattr(tx, "time", _Time)
    _captured(monkeypatch, pr, limit=1e6)
    assert created[0] > 300  # (the instance is not trivial)
    assert most[0] <= 3  # (a node's act-as-type variables, one per type it has)


@pytest.mark.parametrize("limit", [None, 1e6])
def test_the_collector_is_paused_during_the_build_only(monkeypatch, limit):
    """Under a limit the collector is off while the model is built, on during the solver's
    import (a fresh process's OR-Tools import left its objects to the build's collection:
    100-130 ms), and back on before the solver starts; without a limit it is never off."""
    import gc

    ptop, top = INSTANCES["deterlab"]()
    pr = tb.build_problem(top, ptop)
    seen = {}
    real_import, real_whole = tx.import_solver_until, tx._whole_node_classes

    def importing(solver, deadline):
        seen["import"] = gc.isenabled()
        return real_import(solver, deadline)

    def whole(p):
        seen["build"] = gc.isenabled()
        return real_whole(p)

    def fake_run(cp, m, variables, **kw):
        seen["solve"] = gc.isenabled()
        return MilpOutcome(x=None, bound=None, status="time_limit", solver_status=-1,
                           message="captured", nodes=None, time_limit_hit=True,
                           infeasible=False, rows=0, time_limit=None)  # fmt: skip

    monkeypatch.setattr(tx, "import_solver_until", importing)
    monkeypatch.setattr(tx, "_whole_node_classes", whole)
    monkeypatch.setattr(tx, "run_cpsat", fake_run)
    assert gc.isenabled()
    tx.exact_mapping(pr, time_limit=limit)
    assert seen == {"import": True, "build": limit is None, "solve": True}
    assert gc.isenabled()
