"""``coalloc.taskmap.solve``: one entry point for every mapping method, and :class:`Instance`."""

from __future__ import annotations

import functools
import inspect
import time
from time import process_time
from typing import Any, Callable, Dict, NamedTuple, Optional

from .._shared.constraints import check_value, validate
from .._shared.family import FamilyInstance, renamed_keyword
from .._shared.params import check_method, timed_method
from .._shared.result import relative_gap, settle
from .._shared.seeding import check_seed
from .blasthreads import with_blas_threads
from .bounds import (
    BOUND_SHARE,
    FULL_MARGIN,
    USUAL_TESTS,
    bound_tests,
    lower_bound,
    seconds_per_test,
    timed_bound,
)
from .constraints import PARAMS, SOLVE_PARAMS
from .exact import solve_exact_mapping
from .jobpack import pack_in_spare_time
from .mapper import METHODS as VARIANTS
from .mapper import MappingResult, map_tasks
from .model import ResourceGraph, TaskGraph
from .multilevel import map_multilevel
from .portfolio import layers_in_spare_time, map_portfolio, sum_in_spare_time
from .result import stopped_result
from .verify import MappingReport, verify_mapping

__all__ = ["solve", "METHODS", "DEFAULT_METHOD", "Instance"]


def _variant(name: str) -> Callable[..., MappingResult]:
    def run(task_graph, resource_graph, *, seed=0, **params):
        return map_tasks(task_graph, resource_graph, method=name, seed=seed, **params)

    run.__signature__ = _signature_without_method()  # type: ignore[attr-defined]
    run.__name__ = f"map_tasks[{name}]"
    run.__doc__ = f":func:`map_tasks` with ``method={name!r}``."
    return run


def _signature_without_method() -> inspect.Signature:
    sig = inspect.signature(map_tasks)
    return sig.replace(parameters=[p for n, p in sig.parameters.items() if n != "method"])


def _exact(task_graph, resource_graph, *, seed=None, **params):
    if seed is not None:  # the MILP back-ends here are deterministic and take no seed
        check_seed(seed)
    return solve_exact_mapping(task_graph, resource_graph, **params)


_exact.__signature__ = inspect.signature(solve_exact_mapping)  # type: ignore[attr-defined]


#: ``_timed(func, name)``: a method taking ``time_limit`` (the shared wrapper).
_timed = functools.partial(timed_method, stopped=stopped_result)


#: Registered methods: the portfolio (the default, issue 36), the multilevel bottleneck
#: mapper (issue 26), the four variants of section 5.2 (the paper's reference, unchanged)
#: and the exact MILP.
METHODS: Dict[str, Callable[..., MappingResult]] = {
    "portfolio": map_portfolio,  # takes time_limit itself
    "multilevel": _timed(map_multilevel, "multilevel"),
    **{name: _timed(_variant(name), name) for name in VARIANTS},
    "exact": renamed_keyword(_exact, "backend", "solver"),  # solver="highs"|"cbc"|"cpsat"
}
#: The method :func:`solve` uses when none is named: the portfolio
#: (:func:`~coalloc.taskmap.portfolio.map_portfolio`): the multilevel mapper, which beats the
#: paper's variants and Scotch, KaHIP and METIS on the maximum occupancy
#: (``bench/taskmap/vs_peers.py``) and runs the paper's ``open+improve`` first on up to 300
#: tasks, then the exact MILP on tiny instances, one incumbent shared
#: (``bench/taskmap/budget.py``).
DEFAULT_METHOD = "portfolio"


@with_blas_threads
def solve(
    task_graph: TaskGraph,
    resource_graph: ResourceGraph,
    method: str = DEFAULT_METHOD,
    *,
    seed: Optional[int] = 0,
    bound: bool = True,
    **params: Any,
) -> MappingResult:
    """Map ``task_graph`` onto ``resource_graph`` with any method of the family.

    Every method takes ``time_limit`` (seconds, default None): at the deadline it returns
    the best mapping it had found, with status ``"time_limit"`` (or no mapping, when it had
    found none). The result's status follows the one rule of
    :func:`coalloc._shared.result.settle`: ``"optimal"`` when the maximum occupancy meets a
    proven lower bound (the exact solver's, or :func:`~coalloc.taskmap.bounds.lower_bound`
    with ``bound=True``), ``"feasible"`` for a mapping of a method that ended by itself,
    ``"time_limit"`` when the budget ended it.

    Parameters
    ----------
    task_graph : TaskGraph
    resource_graph : ResourceGraph
    method : str, default "portfolio"
        ``"portfolio"`` (:func:`~coalloc.taskmap.portfolio.map_portfolio`: the
        multilevel mapper with the paper's start, and the exact MILP on tiny instances),
        ``"multilevel"`` (:func:`~coalloc.taskmap.multilevel.map_multilevel`),
        ``"open+improve"``, ``"open"``, ``"base+improve"``, ``"base"`` (the heuristics of
        Taura & Chien, :func:`map_tasks`) or ``"exact"`` (:func:`solve_exact_mapping`).
    seed : int, optional
        Seed of the clustering or of the matching (the exact method is deterministic).
    bound : bool, default True
        Attach a proven lower bound on the optimal maximum occupancy and the gap:
        :func:`~coalloc.taskmap.bounds.lower_bound` (a function of the graphs: the same on
        any machine, cheap beside any mapper), or the exact solver's bound when that is
        higher. ``coalloc taskmap map`` does the same by default (``--no-bound``: False).
        With a ``time_limit`` the bound's full tests are capped by
        :func:`~coalloc.taskmap.bounds.bound_tests` (a quarter of the limit at a predicted
        cost per test: a count, so the bound is still the same on any machine;
        ``params["bound_tests"]``); the method runs first, on the limit less the predicted
        time of those tests (at most ``USUAL_TESTS`` of them), then the bound. With a
        ``time_limit``, the default method and a gap over 10 % on a task graph of jobs
        (pipelines), the rest of the limit goes to
        :func:`~coalloc.taskmap.jobpack.pack_jobs` from the answer
        (:func:`~coalloc.taskmap.jobpack.pack_in_spare_time`); untimed calls never run it.
    **params
        Parameters of the method.

    Returns
    -------
    MappingResult
        :class:`ExactMappingResult` for ``"exact"``.

    Examples
    --------
    >>> import coalloc.taskmap as tm
    >>> tasks, res = tm.generators.section51(n_tasks=12, seed=1)  # doctest: +SKIP
    >>> tm.solve(tasks, res, seed=0).max_occupancy > 0  # doctest: +SKIP
    True
    """
    t0, cpu0 = time.perf_counter(), process_time()
    check_method(method, METHODS)
    check_value(bound, "bound", SOLVE_PARAMS["bound"])
    validate(PARAMS[method], params)
    limit = params.get("time_limit")
    tests = None  # untimed: the bound uncapped
    first = None  # timed: the bound's first part (no full test), computed before the method
    if limit is not None:
        left, tests, first = _timed_start(task_graph, resource_graph, float(limit), t0, bound,
                                          cpu0)
        params = {**params, "time_limit": left}
    result = METHODS[method](task_graph, resource_graph, seed=check_seed(seed), **params)
    if limit is not None:
        result.params["time_limit"] = limit  # the caller's limit, which the call kept
    if tests is not None:
        result.params["bound_tests"] = tests
    if bound:
        if tests is None:
            cheap = lower_bound(task_graph, resource_graph)
        else:
            cheap, cut = first
            if tests > 0 and not cut:  # the count, and no test started after the caller's
                # deadline: the tests kept back are a prediction, and a cold first call under
                # load ran 3-10 times slower (0.104-0.155 s at T = 0.05 s, 0.57 s at 0.5 s;
                # h50tmap). Not after a first part cut short: it kept no star phase, and the
                # second would rebuild the star tables unpolled (stencil27 20x20x8 onto a
                # dragonfly of 144 at T = 5 s: 1.3-2.0 s from 4.0 s, the call 5.3-6.2 s; h55late)
                full, cut = timed_bound(task_graph, resource_graph, tests, t0 + float(limit))
                cheap = max(cheap, full)  # (the same first part unless a deadline cut one)
            if cut:
                result.message = f"{result.message}; the bound's tests cut short by the deadline"
        if result.mapping is not None:  # never above the answer (the exact bound is capped)
            cheap = min(cheap, float(result.max_occupancy))
        result.bound = cheap if result.bound is None else max(float(result.bound), cheap)
        result.params["bound"] = True
    if method == DEFAULT_METHOD and limit is not None:  # a stopped answer's sum step (h54tsum)
        # at the call's pace so far: its unpolled set-up and update run that slowly (h56late)
        pace = (time.perf_counter() - t0) / max(process_time() - cpu0, 1e-3)
        layers_in_spare_time(task_graph, resource_graph, result, t0 + float(limit), pace)
        sum_in_spare_time(task_graph, resource_graph, result, t0 + float(limit), pace)
    if result.mapping is not None and result.bound is not None:
        result.gap = relative_gap(result.max_occupancy, result.bound, sense="min")
        if method == DEFAULT_METHOD and limit is not None:
            # the default ended early with a gap over 10 % on jobs (pipelines): the rest of
            # the caller's budget goes to packing the jobs jointly (issue 40 item 2)
            pack_in_spare_time(task_graph, resource_graph, result, t0 + float(limit))
            result.gap = relative_gap(result.max_occupancy, result.bound, sense="min")
    return settle(result)


#: The seconds a timed call keeps back after its method per task and task pair, at most
#: :data:`POST_SHARE` of the limit: the method's stop comes after its current step (a
#: split of the recursive bisection, a refinement pass: up to 77 ms past the deadline on
#: 4,096 tasks under a load of 6), then its answer's build (up to 34 ms) and the status
#: rule, all within ``T + max(0.05, 0.05 T)`` (``bench/taskmap/timed_phases.py``)
POST_SECONDS, POST_SHARE = 5e-6, 0.1

#: True (the default): the keep for the method's stop (:data:`POST_SECONDS`, capped at
#: :data:`POST_SHARE`) is multiplied by the call's pace so far (wall / CPU seconds since
#: the call began, measured after the bound's first part; 1 to :data:`KEEP_PACE_MAX`):
#: the stop's unpolled step and the answer's build run as slowly as the call does, and
#: under a 1/8 CPU share a fixed keep left calls 7-12 ms past the allowance at ``T`` = 1 s
#: (h57fast). The CPU kept is the same as at a normal pace. False: the fixed keep.
PACED_KEEP = True
#: The largest pace :data:`PACED_KEEP` believes, and the CPU seconds the call must have
#: used for its pace to be measured (below: a pace of 1)
KEEP_PACE_MAX, KEEP_PACE_CPU = 4.0, 2e-3
#: The pace :data:`POST_SECONDS` was measured at (a load of 5-6: 2 wall seconds a CPU
#: second): the keep grows with the pace above it only
KEEP_PACE_REF = 2.0
#: The paced keep's extra is at most this share of the contract's allowance
#: ``max(0.05, 0.05 T)``: the late calls it removed were 1-40 ms over (0.3 s, a 1/10 share),
#: and uncapped it kept 0.4 s of a 1 s call on stencil27 20x20x8 (1.70 x its answer)
KEEP_EXTRA_SHARE = 1.0

#: True (the default): a timed call keeps back the full tests' predicted time from its
#: method only when a full test could begin in it: a test begins only with at least
#: ``FULL_MARGIN`` x :func:`~coalloc.taskmap.bounds.seconds_per_test` left
#: (:func:`~coalloc.taskmap.bounds.timed_bound`), so with a count below ``FULL_MARGIN``
#: (1-2 tests) the kept time never held one: the tests were cut short after the method
#: anyway, the bound the same, and 0.13-0.22 s of a 1 s budget went to no one (held-back
#: set at ``T`` = 1 s: plc 1200, stencil27 12^3, stencil9 30x30, butterfly 2^7, hypercube
#: 2^10; h57fast). False: kept whatever the count, as before.
STARTABLE_TESTS = True


def _timed_start(tasks: TaskGraph, resources: ResourceGraph, limit: float, t0: float,
                 bound: bool, cpu0: Optional[float] = None) -> tuple:  # fmt: skip
    """The start of a timed :func:`solve`: ``(the method's limit, the bound's full tests,
    (its first part, cut))`` (the last two None without ``bound``).

    The bound's first part (the basic and job bounds and the star tests, no full test) runs
    here, before the method, at most until :data:`~coalloc.taskmap.bounds.BOUND_SHARE` of
    the limit (a deadline, not a count: cut short it is valid, only weaker): on 4,096 tasks
    onto 256 processors it costs 10-30 ms of CPU, 0.1-0.3 s under a load of 6, and after
    the method it ran past the caller's limit (h51tmap). Its time is taken from the
    method's, as measured. The method's limit is what is left less the predicted time of
    the full tests (at most ``USUAL_TESTS`` of them, run after it: a count from the instance
    and the limit, so the value is the same on any machine) and less
    ``min(POST_SHARE x limit, POST_SECONDS x (tasks + pairs))`` for its stop and its
    answer's build (that keep times the call's pace so far with :data:`PACED_KEEP` and
    ``cpu0``, the call's :func:`time.process_time` at ``t0``). The method first otherwise:
    its answer matters more (the whole bound first left a method no time at 0.05 s under
    load)."""
    tests = first = None
    keep = min(POST_SHARE * limit, POST_SECONDS * (tasks.n + tasks.n_edges))
    if bound:
        tests = bound_tests(tasks, resources, limit)
        first = timed_bound(tasks, resources, 0, t0 + BOUND_SHARE * limit)
        kept = min(tests, USUAL_TESTS)
        if STARTABLE_TESTS and kept < FULL_MARGIN:  # too little to begin one in (h57fast)
            kept = 0
        keep += kept * seconds_per_test(tasks, resources)
    if PACED_KEEP and cpu0 is not None:  # the stop at the call's pace (h57fast)
        extra = (_pace(t0, cpu0) - 1.0) * min(POST_SHARE * limit,
                                              POST_SECONDS * (tasks.n + tasks.n_edges))
        keep += min(extra, KEEP_EXTRA_SHARE * max(0.05, 0.05 * limit))
    left = limit - (time.perf_counter() - t0) - keep
    return max(left, 1e-6), tests, first


def _pace(t0: float, cpu0: float) -> float:
    """The call's wall seconds per CPU second since ``(t0, cpu0)`` over
    :data:`KEEP_PACE_REF`, from 1 to :data:`KEEP_PACE_MAX` (1 before :data:`KEEP_PACE_CPU`
    of CPU)."""
    cpu = process_time() - cpu0
    if cpu < KEEP_PACE_CPU:
        return 1.0
    return min(max((time.perf_counter() - t0) / cpu / KEEP_PACE_REF, 1.0), KEEP_PACE_MAX)


class _Parts(NamedTuple):
    task_graph: TaskGraph
    resource_graph: ResourceGraph


class TaskMapInstance(FamilyInstance, _Parts):
    """A task-mapping problem as one object: what :func:`coalloc.solve_many` takes.

    A plain ``(task_graph, resource_graph)`` pair with the family's calls attached.

    Parameters
    ----------
    task_graph : TaskGraph
        The tasks.
    resource_graph : ResourceGraph
        The resources.

    Examples
    --------
    >>> import coalloc.taskmap as tm
    >>> tasks = tm.TaskGraph([1.0, 2.0, 1.5], [[0, 4, 0], [4, 0, 1], [0, 1, 0]])
    >>> res = tm.ResourceGraph.from_edges([0, 3.0, 5.0], [[0, 1], [0, 2]], [50.0, 50.0])
    >>> inst = tm.Instance(tasks, res)
    >>> result = inst.solve("open", seed=0)
    >>> result.max_occupancy, inst.verify(result).ok
    (0.6, True)
    """

    __slots__ = ()

    family = "taskmap"
    format = "coalloc.taskmap.instance"
    METHODS = METHODS
    DEFAULT_METHOD = DEFAULT_METHOD
    SOLUTION_FIELD = "mapping"
    SOLVE_KEYWORDS = frozenset({"bound"})  # taken by solve() itself
    PARAMS = PARAMS
    SOLVE_PARAMS = SOLVE_PARAMS
    _solve_function = staticmethod(solve)

    def _verify_solution(self, result: MappingResult) -> MappingReport:
        return verify_mapping(
            self.task_graph, self.resource_graph, result.mapping, claimed=result.max_occupancy
        )

    @staticmethod
    def _fields_from_dict(data: Any, *, source: str) -> tuple:
        from .io import instance_from_dict

        return instance_from_dict(data, source=source)


#: The name the family protocol gives every family's instance (``<family>.Instance``).
Instance = TaskMapInstance
