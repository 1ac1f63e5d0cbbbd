"""The one result contract of issue 36, checked by an independent referee on every family.

For every registered problem kind (:func:`coalloc._shared.family.problem_kinds`) and every
method of it, on small instances from the family's generators (and one infeasible or
unmappable case where a simple construction gives one), untimed, with a generous
``time_limit`` and with a tiny one, every result is judged here against the rule in
:mod:`coalloc._shared.result`'s docstring **recomputed from its definition** (this module
never calls ``settle``):

* the status is one of :data:`coalloc.STATUSES`, never ``error``;
* ``objective`` is set exactly when the result holds a solution, and a status that claims a
  solution (``optimal``, ``feasible``) has one, ``infeasible``/``no_solution`` never;
* ``bound`` and ``gap`` are finite or absent; ``infeasible``/``no_solution`` carry no bound;
* the bound is valid (not beaten by the objective) and the status is ``optimal`` exactly when
  the answer meets it: the gap recomputed from the formula ``max(0, +-(bound - objective)) /
  max(|objective|, |bound|)`` is at most the tolerance (:data:`OPTIMALITY_TOL`, or the
  method's ``mip_gap`` when larger), and ``gap`` is that number;
* ``time_limit`` only when a time limit was given; an untimed run on an infeasible instance
  ends ``infeasible`` or ``no_solution``;
* every result that holds a solution passes the family's ``verify``; no method's answer beats
  another method's proven optimum on the same instance; an untimed run repeated gives the
  same status, objective and bound (a bound is capped by counts, not by the clock);
* ``to_dict()`` names its bound and gap ``bound``/``gap`` (never ``lower_bound``/
  ``bound_gap``) with the result's values.

The command line is judged the same way: the status each family's solve command prints in
text mode (its headline and ``quality`` lines) is the status of the result it writes
(``-o FILE`` of the same run, or ``--json``), and it exits 0 exactly when that result holds
a solution.

The heavier parametrisations (exact methods, the generous limit, every method on the
command line) are marked ``slow``.
"""

from __future__ import annotations

import functools
import json
import math
import re
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, List, Optional

import numpy as np
import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

import coalloc
from coalloc import collective as co
from coalloc import ctaap as ct
from coalloc import loadshare as ls
from coalloc import taskmap as tm
from coalloc import testbed as tb
from coalloc._shared.family import problem_kinds
from coalloc.cli import main
from tests.strategies import (
    collective_instances,
    ctaap_instances,
    gap_instances,
    loadshare_problems,
    taskmap_instances,
    topology_pairs,
)

#: The referee's own tolerance: the documented one (1e-9, relative).
TOL = 1e-9

#: Limits every method runs under: untimed, a generous budget (an anytime method may use
#: all of it), a tiny one.
GENEROUS, TINY = 2.0, 1e-3
LIMITS = {"untimed": None, "generous": GENEROUS, "tiny": TINY}

#: The objective's direction per kind, from the families' definitions (not from the
#: results): tasks allocated (max), the bottleneck occupancy (min), the start of the
#: co-allocation (min: Cankar et al. seek the earliest), inter-switch bandwidth (min),
#: throughput (max); the GAP's is the ``sense`` it was solved with.
SENSES: Dict[str, Optional[str]] = {
    "ctaap": "max",
    "taskmap": "min",
    "collective": "min",
    "testbed": "min",
    "loadshare": "max",
    "gap": "min",
}

KINDS = {kind.kind: kind for kind in problem_kinds()}

STATUS_WORDS = {
    "optimal": r"\boptimal\b",
    "feasible": r"(?<![-\w])feasible\b",
    "infeasible": r"\binfeasible\b",
    "time_limit": r"\btime[ _]limit\b",
    "no_solution": r"\bno[ _]solution\b",
    "error": r"\berror\b",
}


# ------------------------------------------------------------------------ small instances


def _ctaap_random() -> Any:
    return ct.Instance(*ct.generators.random_instance(10, 3, edge_probability=0.5, seed=3))


def _ctaap_fig2() -> Any:
    return ct.Instance(*ct.generators.fig2(2, n_tasks=12, seed=1))


def _ctaap_nothing_fits() -> Any:
    """Every task needs more cpu than any machine has: no task can be allocated."""
    request = ct.Request({"cpu": [50.0, 60.0, 70.0]}, np.zeros((3, 3)))
    offer = ct.Offer({"cpu": [4.0, 8.0]}, [3, 2], [[10.0, 1.0], [1.0, 10.0]])
    return ct.Instance(request, offer)


def _taskmap_pipeline() -> Any:
    tasks = tm.generators.pipeline_task_graph(n_clusters=2, cluster_size=3, seed=1)
    resources = tm.generators.internet_resource_graph(
        n_wan=2, n_lan=2, children=(1, 2), lan_size=(2, 3), seed=1
    )
    return tm.Instance(tasks, resources)


def _taskmap_stencil() -> Any:
    resources = tm.generators.hierarchical_cluster(n_racks=2, nodes_per_rack=2, cores_per_node=2)
    return tm.Instance(tm.generators.stencil_task_graph((3, 3)), resources)


def _collective_random() -> Any:
    pool, request = co.generators.random_instance(8, 3, seed=1)
    return co.Instance(request, pool)


def _collective_table1() -> Any:
    pool = co.generators.table1_pool(12, n_slots=24, seed=2)
    return co.Instance(co.generators.section42_requests(pool, 1, 3, seed=2)[0][0], pool)


def _collective_too_many() -> Any:
    """A request for more nodes than the pool has (proven infeasible)."""
    pool, request = co.generators.random_instance(4, 2, seed=5)
    big = co.CollectiveRequest(
        request.duration, 6, request.earliest_start, request.latest_start, dict(request.minimum)
    )
    return co.Instance(big, pool)


def _testbed_lan() -> Any:
    return tb.Instance(tb.generators.lan(5), tb.generators.deterlab(12, 2, seed=1))


def _testbed_typed() -> Any:
    return tb.Instance(
        tb.generators.random_topology(7, seed=2), tb.generators.deterlab(16, 3, seed=2)
    )


def _testbed_too_big() -> Any:
    """Nine virtual nodes, five PCs: no mapping exists."""
    return tb.Instance(tb.generators.lan(9), tb.generators.deterlab(5, 1, seed=0))


def _loadshare_paper() -> Any:
    return ls.Instance(ls.generators.paper_setup(12, seed=1))


def _loadshare_hand() -> Any:
    capacity, sizes = [5.0, 5.0, 4.0], [4.0, 3.0, 3.0, 2.0, 1.0, 6.0]
    return ls.Instance(ls.LoadSharingProblem(capacity, sizes, [0, 0, 0, 1, 1, 2]))


def _gap_a() -> Any:
    return ls.generators.gap_instance("a", 3, 10, seed=0)


def _gap_d() -> Any:
    return ls.generators.gap_instance("d", 4, 12, seed=1)


def _gap_b() -> Any:
    """Type B (tight): the heuristic, untimed, ended ``time_limit`` on main at 8d3d5e2."""
    return ls.generators.gap_instance("b", 2, 5, seed=3)


def _gap_infeasible() -> Any:
    """Every item weighs more than every agent's capacity (assign_all: infeasible)."""
    cost = np.arange(12, dtype=float).reshape(3, 4)
    weight = np.full((3, 4), 9, dtype=np.int64)
    return ls.GapInstance(cost, weight, np.array([5, 6, 8], dtype=np.int64))


#: kind -> case -> (builder, infeasible): small instances from at least two generators, and
#: an infeasible or unmappable one where a simple construction gives it. The command line
#: runs on the first case of each kind.
CASES: Dict[str, Dict[str, tuple]] = {
    "ctaap": {
        "random": (_ctaap_random, False),
        "fig2": (_ctaap_fig2, False),
        "nothing_fits": (_ctaap_nothing_fits, False),
    },
    "taskmap": {"pipeline": (_taskmap_pipeline, False), "stencil": (_taskmap_stencil, False)},
    "collective": {
        "random": (_collective_random, False),
        "table1": (_collective_table1, False),
        "too_many_nodes": (_collective_too_many, True),
    },
    "testbed": {
        "lan": (_testbed_lan, False),
        "typed": (_testbed_typed, False),
        "too_big": (_testbed_too_big, True),
    },
    "loadshare": {"paper": (_loadshare_paper, False), "hand": (_loadshare_hand, False)},
    "gap": {
        "type_a": (_gap_a, False),
        "type_d": (_gap_d, False),
        "type_b": (_gap_b, False),
        "infeasible": (_gap_infeasible, True),
    },
}


@functools.cache
def instance(kind: str, case: str) -> Any:
    """The case as the kind's ``Instance`` (built once)."""
    return KINDS[kind].coerce(CASES[kind][case][0]())


def is_exact(kind: str, method: str) -> bool:
    return method in ("exact", "brute_force")


def _run(inst: Any, method: str, limit: Optional[float]) -> Any:
    params = {} if limit is None else {"time_limit": limit}
    return inst.solve(method, seed=0, **params)


@functools.cache
def solved(kind: str, case: str, method: str, limit_name: str) -> Any:
    """The result of a deterministic run (untimed or generous), computed once."""
    return _run(instance(kind, case), method, LIMITS[limit_name])


# ------------------------------------------------------------------------ the referee


def referee_gap(objective: float, bound: float, sense: str) -> float:
    """The documented gap formula, written out again."""
    if sense == "max":
        diff = bound - objective
    else:
        diff = objective - bound
    scale = max(abs(objective), abs(bound))
    return 0.0 if scale == 0 else max(0.0, diff) / scale


def _finite(x: Any) -> bool:
    try:
        return math.isfinite(float(x))
    except (TypeError, ValueError):
        return False


def violations(
    kind: str, inst: Any, result: Any, limit: Optional[float], infeasible: bool = False
) -> List[str]:
    """Every way ``result`` breaks the contract (empty: it keeps it)."""
    out: List[str] = []
    status = result.status
    if status not in coalloc.STATUSES:
        return [f"status {status!r} is not one of {coalloc.STATUSES}"]
    if status == "error":
        return [f"status 'error': {result.message}"]
    field_set = getattr(result, type(inst).SOLUTION_FIELD, None) is not None
    holds = bool(result.has_solution)
    objective, bound, gap = result.objective, result.bound, result.gap
    if holds != field_set:
        out.append(
            f"has_solution={holds} but the solution field "
            f"{type(inst).SOLUTION_FIELD!r} is {'set' if field_set else 'None'}"
        )
    if status in ("optimal", "feasible") and not holds:
        out.append(f"status {status!r} without a solution")
    if status in ("infeasible", "no_solution") and (holds or field_set):
        out.append(f"status {status!r} with a solution")
    if (objective is not None) != holds:
        out.append(f"objective={objective!r} with has_solution={holds}")
    if bound is not None and not _finite(bound):
        out.append(f"bound {bound!r} is not finite")
    if gap is not None and not _finite(gap):
        out.append(f"gap {gap!r} is not finite")
    if status in ("infeasible", "no_solution") and (bound is not None or gap is not None):
        out.append(f"status {status!r} with bound={bound!r}, gap={gap!r}")
    if status == "time_limit" and limit is None:
        out.append("status 'time_limit' from an untimed run")
    if infeasible and limit is None and status not in ("infeasible", "no_solution"):
        out.append(f"an infeasible instance, untimed, ends {status!r}")
    # the direction of the objective
    expected = SENSES.get(kind, getattr(type(result), "sense", None))
    if kind == "gap":
        expected = (result.params or {}).get("sense", getattr(result, "sense", "min"))
    sense = getattr(result, "sense", None)
    if sense not in ("min", "max"):
        out.append(f"no objective sense (result.sense={sense!r})")
        sense = expected
    elif expected is not None and sense != expected:
        out.append(f"result.sense={sense!r}, the family's objective is {expected!r}")
    # optimal iff the answer meets a valid bound
    params = result.params if isinstance(result.params, dict) else {}
    mip_gap = params.get("mip_gap")
    tol = TOL
    if isinstance(mip_gap, (int, float)) and not isinstance(mip_gap, bool):
        tol = max(tol, float(mip_gap))
    if holds and objective is not None and _finite(objective) and sense:
        if bound is not None and _finite(bound):
            objective, bound = float(objective), float(bound)
            scale = max(abs(objective), abs(bound), 1.0)
            beaten = bound < objective if sense == "max" else bound > objective
            if beaten and abs(bound - objective) > 1e-6 * scale:
                out.append(f"bound {bound:g} is beaten by the objective {objective:g} ({sense})")
            mine = referee_gap(objective, bound, sense)
            if (status == "optimal") != (mine <= tol):
                out.append(
                    f"status {status!r} with objective {objective:g}, bound "
                    f"{bound:g}: gap {mine:.3g} (tolerance {tol:g})"
                )
            if gap is None or abs(float(gap) - mine) > 1e-9:
                out.append(f"gap={gap!r}, the formula gives {mine!r}")
        else:
            if status == "optimal":
                out.append("status 'optimal' without a bound")
            if gap is not None:
                out.append(f"gap={gap!r} without a bound")
    elif status == "optimal":
        out.append("status 'optimal' without an objective")
    # the family's verifier
    try:
        report = inst.verify(result)
    except Exception as exc:  # noqa: BLE001 - the referee reports any failure
        out.append(f"verify raised {type(exc).__name__}: {exc}")
    else:
        if holds and not report.ok:
            out.append(f"verify fails: {' '.join(str(report).split())[:300]}")
        if not holds and report.ok:
            out.append("verify accepts a result without a solution")
    # the JSON fields
    try:
        data = result.to_dict()
        json.dumps(data)
    except Exception as exc:  # noqa: BLE001
        out.append(f"to_dict() raised {type(exc).__name__}: {exc}")
    else:
        for old in ("lower_bound", "bound_gap"):
            if old in data:
                out.append(f"to_dict() has {old!r} (the name is 'bound'/'gap')")
        if data.get("status") != status:
            out.append(f"to_dict()['status']={data.get('status')!r}, result {status!r}")
        for key, value in (
            ("objective", result.objective),
            ("bound", result.bound),
            ("gap", result.gap),
        ):
            got = data.get(key)
            if value is None and got is not None:
                out.append(f"to_dict()[{key!r}]={got!r} but result.{key} is None")
            if value is not None and (got is None or not _close(got, value)):
                out.append(f"to_dict()[{key!r}]={got!r} but result.{key}={value!r}")
    return out


def _close(a: Any, b: Any) -> bool:
    try:
        return math.isclose(float(a), float(b), rel_tol=1e-12, abs_tol=1e-12)
    except (TypeError, ValueError):
        return False


def _judge(
    kind: str, inst: Any, method: str, limit: Optional[float], result: Any, infeasible: bool = False
) -> None:
    found = violations(kind, inst, result, limit, infeasible)
    assert not found, (
        f"{kind}/{method} (time_limit={limit}) status={result.status!r}: " + "; ".join(found)
    )


# ------------------------------------------------------------- the referee judges itself


@dataclass
class _Toy(coalloc.Result):
    """A result of a toy maximisation (a solution is a list, its objective its sum)."""

    status: str = "feasible"
    message: str = ""
    method: str = "toy"
    solution: Optional[list] = None
    objective: Optional[float] = None
    bound: Optional[float] = None
    gap: Optional[float] = None
    seed: Optional[int] = 0
    params: dict = field(default_factory=dict)
    timings: dict = field(default_factory=dict)
    iterations: dict = field(default_factory=dict)
    sense = "max"

    def _holds_solution(self) -> bool:
        return self.solution is not None


class _ToyReport:
    def __init__(self, ok: bool) -> None:
        self.ok = ok

    def __str__(self) -> str:
        return "ok" if self.ok else "the objective is not the solution's sum"


class _ToyInstance:
    SOLUTION_FIELD = "solution"

    def verify(self, result: Any) -> Any:
        if result.solution is None:
            return _ToyReport(False)
        return _ToyReport(result.objective is not None and sum(result.solution) == result.objective)


GOOD = {
    "optimal": dict(status="optimal", solution=[2, 3], objective=5.0, bound=5.0, gap=0.0),
    "feasible": dict(status="feasible", solution=[2, 3], objective=5.0, bound=8.0, gap=0.375),
    "no bound": dict(status="feasible", solution=[2, 3], objective=5.0),
    "stopped": dict(status="time_limit", solution=[2], objective=2.0, bound=4.0, gap=0.5),
    "stopped empty": dict(status="time_limit"),
    "no_solution": dict(status="no_solution"),
    "infeasible": dict(status="infeasible"),
}
BAD = {
    "optimal under its bound": dict(
        status="optimal", solution=[2], objective=2.0, bound=4.0, gap=0.5
    ),
    "feasible at its bound": dict(
        status="feasible", solution=[2, 3], objective=5.0, bound=5.0, gap=0.0
    ),
    "optimal without a bound": dict(status="optimal", solution=[2, 3], objective=5.0),
    "objective missing": dict(status="feasible", solution=[2, 3]),
    "infinite bound": dict(status="time_limit", bound=float("inf")),
    "infeasible with a bound": dict(status="infeasible", bound=7.0),
    "infeasible with a solution": dict(status="infeasible", solution=[1], objective=1.0),
    "a wrong gap": dict(status="feasible", solution=[2, 3], objective=5.0, bound=8.0, gap=0.1),
    "a beaten bound": dict(status="optimal", solution=[2, 3], objective=5.0, bound=4.0, gap=0.0),
    "fails verify": dict(status="feasible", solution=[2, 3], objective=6.0, bound=8.0, gap=0.25),
    "unknown status": dict(status="done", solution=[2, 3], objective=5.0),
    "error": dict(status="error", message="boom"),
}


@pytest.mark.parametrize("name", sorted(GOOD))
def test_referee_accepts_what_keeps_the_rule(name):
    result = _Toy(**GOOD[name])
    assert violations("toy", _ToyInstance(), result, limit=1.0) == []


@pytest.mark.parametrize("name", sorted(BAD))
def test_referee_rejects_what_breaks_the_rule(name):
    result = _Toy(**BAD[name])
    assert violations("toy", _ToyInstance(), result, limit=1.0)


def test_referee_rejects_time_limit_without_a_limit_and_lower_bound_keys():
    stopped = _Toy(status="time_limit", solution=[2], objective=2.0)
    assert violations("toy", _ToyInstance(), stopped, limit=None)
    old = _Toy(status="feasible", solution=[2], objective=2.0)
    old._payload = lambda: {"lower_bound": 1.0}
    assert any("lower_bound" in v for v in violations("toy", _ToyInstance(), old, limit=None))
    nothing = _Toy(status="no_solution")
    assert violations("toy", _ToyInstance(), nothing, limit=None, infeasible=True) == []
    assert violations("toy", _ToyInstance(), _Toy(status="time_limit"), 1.0, infeasible=True) == []


# ------------------------------------------------------------------------ every method


def _method_cases():
    for kind, cls in KINDS.items():
        for case in CASES.get(kind, {}):
            for method in cls.methods:
                for name in LIMITS:
                    marks = []
                    if is_exact(kind, method) or name == "generous":
                        marks.append(pytest.mark.slow)
                    yield pytest.param(
                        kind, case, method, name, marks=marks, id=f"{kind}-{case}-{method}-{name}"
                    )


def test_every_kind_has_cases_and_a_sense():
    """The referee knows every registered kind (a new family needs cases here)."""
    assert set(KINDS) <= set(CASES), sorted(set(KINDS) - set(CASES))
    assert set(KINDS) <= set(SENSES), sorted(set(KINDS) - set(SENSES))
    for kind, cases in CASES.items():
        assert len(cases) >= 2, kind


@pytest.mark.parametrize("kind, case, method, limit_name", list(_method_cases()))
def test_result_keeps_the_contract(kind, case, method, limit_name):
    infeasible = CASES[kind][case][1]
    limit = LIMITS[limit_name]
    inst = instance(kind, case)
    if limit_name == "tiny":
        result = _run(inst, method, limit)
    else:
        result = solved(kind, case, method, limit_name)
    _judge(kind, inst, method, limit, result, infeasible)


def _repeat_params():
    for kind, cls in KINDS.items():
        for case in CASES.get(kind, {}):
            for method in cls.methods:
                marks = [pytest.mark.slow] if is_exact(kind, method) else []
                yield pytest.param(kind, case, method, marks=marks, id=f"{kind}-{case}-{method}")


@pytest.mark.parametrize("kind, case, method", list(_repeat_params()))
def test_untimed_result_reproduces(kind, case, method):
    """Same call, same answer: an untimed run's status, objective and bound do not depend
    on the clock (issue 36: a bound is capped by a count, never by time)."""
    first = solved(kind, case, method, "untimed")
    again = _run(instance(kind, case), method, None)
    got = [(r.status, r.objective, r.bound) for r in (first, again)]
    assert got[0] == got[1], f"{kind}/{case}/{method}: {got[0]} then {got[1]}"


#: Time limits that are never reached: past the C kernels' int64 nanoseconds (2**63 s, the
#: fuzzer's stop 58 finding was an OverflowError on 9223372036854775807), past a float's
#: nanoseconds (1e300 s), and a plain large one.
ASTRONOMICAL = (9223372036854775807, 1e300, 1e12)


@pytest.mark.slow
@pytest.mark.parametrize(
    "kind, case, method", [p for p in _repeat_params() if is_exact(*p.values[::2])]
)
def test_a_limit_never_reached_gives_the_untimed_answer(kind, case, method):
    """However large the limit (an int past 64 bits of nanoseconds, 1e300 s), an exact
    method runs as if untimed: the untimed status, objective and bound, never an overflow.
    (A heuristic's anytime search spends whatever time it is given, so only the exact
    methods, which stop at their proof, can be held to the untimed answer.)"""
    first = solved(kind, case, method, "untimed")
    for limit in ASTRONOMICAL:
        again = _run(instance(kind, case), method, limit)
        got = [(r.status, r.objective, r.bound) for r in (first, again)]
        assert got[0] == got[1], f"{kind}/{case}/{method} at {limit!r}: {got[1]} not {got[0]}"


@pytest.mark.slow
@pytest.mark.parametrize("kind, case", [(k, c) for k in KINDS for c in CASES.get(k, {})])
def test_no_answer_beats_a_proven_optimum(kind, case):
    """An ``optimal`` claim is a proof: no other method's verified answer is better."""
    inst = instance(kind, case)
    results = {m: solved(kind, case, m, "untimed") for m in KINDS[kind].methods}
    sense = SENSES[kind]
    for m, r in results.items():  # the result's own sense agrees with the family's
        assert getattr(r, "sense", None) in (None, sense), f"{kind}/{m}: sense {r.sense!r}"
    sign = 1.0 if sense == "max" else -1.0
    proven = {m: r for m, r in results.items() if r.status == "optimal"}
    for m, best in proven.items():
        for other, r in results.items():
            if r.has_solution and r.objective is not None and inst.verify(r).ok:
                assert sign * float(r.objective) <= sign * float(best.objective) + 1e-6 * max(
                    1.0, abs(float(best.objective))
                ), f"{kind}/{case}: {other} reaches {r.objective}, {m} 'proved' {best.objective}"


# ------------------------------------------------------------------- random instances

#: No shrinking: a failing example is reported as drawn (shrinking reruns every solver many
#: times, minutes on a shared machine); the seed printed reproduces it.
FAST = settings(
    max_examples=15,
    deadline=None,
    database=None,
    phases=(Phase.explicit, Phase.reuse, Phase.generate),
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)

STRATEGIES: Dict[str, Callable[[], Any]] = {
    "ctaap": lambda: ctaap_instances(max_tasks=7, max_clusters=3),
    "taskmap": lambda: taskmap_instances(max_tasks=6, max_nodes=5),
    "collective": lambda: collective_instances().map(lambda pr: (pr[1], pr[0])),
    "testbed": lambda: topology_pairs(max_pcs=8, max_switches=2),
    "loadshare": lambda: loadshare_problems(max_nodes=6, max_jobs=14),
    "gap": lambda: gap_instances(max_agents=3, max_items=6),
}


def _random_params():
    out = []
    for kind, cls in KINDS.items():
        for method in cls.methods:
            marks = [pytest.mark.slow] if is_exact(kind, method) else []
            out.append(pytest.param(kind, method, marks=marks, id=f"{kind}-{method}"))
    return out


@pytest.mark.parametrize("kind, method", _random_params())
def test_random_instances_keep_the_contract(kind, method):
    """Hypothesis-drawn instances, untimed or with a drawn limit (0.3 s is ample for them:
    an anytime method may run to its limit, so a larger one would cost seconds per draw)."""
    if kind not in STRATEGIES:
        pytest.fail(f"no strategy for kind {kind!r}")
    cls = KINDS[kind]

    @FAST
    @given(
        STRATEGIES[kind](),
        st.sampled_from([None, TINY, 0.05, 0.3]),
        st.integers(0, 3),
        st.sampled_from(["min", "max"]),
        st.booleans(),
    )
    def check(parts, limit, seed, sense, assign_all):
        inst = cls.coerce(parts)
        params = {} if limit is None else {"time_limit": limit}
        if kind == "gap":  # both directions, and items that may stay unassigned
            params.update(sense=sense, assign_all=assign_all)
        result = inst.solve(method, seed=seed, **params)
        if kind == "gap":
            assert result.sense == sense, f"gap/{method}: solved {sense}, says {result.sense}"
        _judge(kind, inst, method, limit, result)

    check()


# ------------------------------------------------------------------------ the command line


def _write_case(kind: str, inst: Any, tmp_path) -> List[str]:
    """The instance as the files of the family's solve command; the command's words."""
    if kind == "ctaap":
        path = tmp_path / "inst.json"
        ct.write_instance(path, *inst)
        return ["ctaap", "solve", str(path)]
    if kind == "taskmap":
        path = tmp_path / "inst.json"
        tm.io.write_instance(path, *inst)
        return ["taskmap", "map", str(path)]
    if kind == "collective":
        rp, pp = tmp_path / "request.json", tmp_path / "pool.json"
        co.io.write_request(rp, inst.request)
        co.io.write_pool(pp, inst.pool)
        return ["collective", "solve", str(rp), str(pp)]
    if kind == "testbed":
        tp, pp = tmp_path / "exp.top", tmp_path / "bed.ptop"
        tb.io.write_top(tp, inst.top)
        tb.io.write_ptop(pp, inst.ptop)
        return ["testbed", "assign", str(tp), str(pp)]
    if kind == "loadshare":
        path = tmp_path / "grid.json"
        ls.io.write_problem(path, inst.problem)
        return ["loadshare", "share", str(path)]
    if kind == "gap":
        path = tmp_path / "gap.txt"
        ls.io.write_gap(path, [inst.instance])
        return ["loadshare", "gap", str(path)]
    raise AssertionError(f"no command for kind {kind!r}")


#: Kinds whose solve command writes its result with ``-o FILE`` / prints it with ``--json``.
HAS_OUTPUT = {"ctaap", "taskmap", "collective", "loadshare", "gap"}
HAS_JSON = {"ctaap", "taskmap", "collective", "testbed", "loadshare"}


def _headline(text: str) -> List[str]:
    """The lines where a command states its outcome: the first line of its report, the
    ``quality`` and ``status`` lines, and a testbed command's ``#`` summary lines (assign's
    ``Nodes:`` and ``Edges:`` sections are the mapping, not a report)."""
    lines, inside = [], False
    for ln in text.splitlines():
        if re.match(r"^(Nodes|Edges):", ln):
            inside = True
        elif re.match(r"^End (Nodes|Edges)", ln):
            inside = False
        elif ln.strip() and not inside:
            lines.append(ln)
    out = [ln for ln in lines
           if re.match(r"^\s*#", ln) or re.match(r"^\s*(quality|status)\b", ln)]  # fmt: skip
    first = next((ln for ln in lines if not ln.startswith("#")), None)
    if first is not None and not re.match(r"^\s", first):
        out.insert(0, first)
    return out


def _printed_statuses(text: str) -> set:
    head = "\n".join(_headline(text))
    found = {s for s, rx in STATUS_WORDS.items() if re.search(rx, head)}
    # "infeasible" contains no standalone "feasible"; "no solution" no "time limit"
    return found


def _json_documents(text: str) -> List[dict]:
    text = text.strip()
    if not text:
        return []
    try:
        return [json.loads(text)]
    except json.JSONDecodeError:
        return [json.loads(ln) for ln in text.splitlines() if ln.strip().startswith("{")]


def _status_of(doc: Any) -> Optional[str]:
    if isinstance(doc, dict):
        if isinstance(doc.get("status"), str):
            return doc["status"]
        for key in ("result", "results"):
            if key in doc:
                return _status_of(doc[key])
    if isinstance(doc, list) and doc:
        return _status_of(doc[0])
    return None


def _holds_in(doc: dict, kind: str) -> bool:
    if isinstance(doc.get("result"), dict):
        doc = doc["result"]
    return doc.get(KINDS[kind].SOLUTION_FIELD) is not None


def _cli(argv: List[str], capsys) -> tuple:
    capsys.readouterr()
    try:
        rc = main(argv)
    except SystemExit as exc:  # argparse
        rc = exc.code
    cap = capsys.readouterr()
    return rc, cap.out, cap.err


def _cli_params():
    out = []
    for kind, cls in KINDS.items():
        for method in cls.methods:
            for name in ("untimed", "tiny"):
                slow = method != cls.DEFAULT_METHOD or is_exact(kind, method)
                marks = [pytest.mark.slow] if slow else []
                out.append(
                    pytest.param(kind, method, name, marks=marks, id=f"{kind}-{method}-{name}")
                )
    return out


def _cli_case(kind: str) -> str:
    """The small case the command line runs on (the first one)."""
    return next(iter(CASES[kind]))


@pytest.mark.parametrize("kind, method, limit_name", _cli_params())
def test_cli_prints_the_status_it_writes(kind, method, limit_name, tmp_path, capsys):
    """Text mode's status is the written result's; exit 0 exactly with a solution."""
    inst = instance(kind, _cli_case(kind))
    argv = _write_case(kind, inst, tmp_path) + ["--method", method, "--seed", "0"]
    if LIMITS[limit_name] is not None:
        argv += ["--time-limit", repr(LIMITS[limit_name])]
    problems = []
    # text mode, with the result written to a file in the same run where the command can
    out = tmp_path / "out.json"
    text_argv = argv + (["-o", str(out)] if kind in HAS_OUTPUT else [])
    rc, text, err = _cli(text_argv, capsys)
    printed = _printed_statuses(text)
    written = None
    if kind in HAS_OUTPUT:
        docs = _json_documents(out.read_text()) if out.exists() else []
        written = _status_of(docs[0]) if docs else None
        if written is None:
            problems.append(f"no status in the -o file (rc={rc}, stderr={err.strip()[:200]})")
        else:
            holds = _holds_in(docs[0], kind)
            if (rc == 0) != holds:
                problems.append(
                    f"exit {rc} with a written result that "
                    f"{'holds' if holds else 'holds no'} solution"
                )
    # --json mode (a second run: compared with text mode only where the run is untimed)
    if kind in HAS_JSON:
        jrc, jtext, jerr = _cli(argv + ["--json"], capsys)
        docs = _json_documents(jtext)
        jstatus = _status_of(docs[0]) if docs else None
        if jstatus is None:
            problems.append(f"no status in --json output (rc={jrc}, stderr={jerr.strip()[:200]})")
        else:
            for old in ("lower_bound", "bound_gap"):
                if old in docs[0]:
                    problems.append(f"--json has {old!r} (the name is 'bound'/'gap')")
            holds = _holds_in(docs[0], kind)
            if (jrc == 0) != holds:
                problems.append(
                    f"--json: exit {jrc} with a result that "
                    f"{'holds' if holds else 'holds no'} solution"
                )
            if written is None and LIMITS[limit_name] is None:
                written = jstatus
            elif written is not None and LIMITS[limit_name] is None and jstatus != written:
                problems.append(f"--json says {jstatus!r}, -o wrote {written!r}")
    if written is not None and printed != {written}:
        problems.append(
            f"text mode prints {sorted(printed) or 'no status'}, the result "
            f"is {written!r}: {' | '.join(_headline(text))[:300]}"
        )
    if written is None and not printed:
        problems.append(f"text mode prints no status: {' | '.join(_headline(text))[:300]}")
    assert not problems, f"{kind}/{method} ({limit_name}): " + "; ".join(problems)
