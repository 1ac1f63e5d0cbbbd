"""The family's default method: a portfolio of its methods sharing one incumbent (issue 36).

:func:`map_portfolio` runs

1. the multilevel mapper (:func:`~coalloc.taskmap.multilevel.map_multilevel`), which holds
   the family's other heuristics as its starts: a quick block mapping first, the paper's
   ``"open+improve"`` next up to ``paper_start`` tasks (its initial mapping and every
   improvement offered as they come), then its own bisection starts and refinements; and
2. on tiny instances (at most ``exact_cells`` task-processor pairs) the exact MILP
   (:func:`~coalloc.taskmap.solve_exact_mapping`, HiGHS) with the rest of the budget, which
   proves the optimum or improves on the heuristic; and
3. on small ones (past ``exact_cells``, up to :data:`EXACT_WORK_CELLS` pairs, ``exact_cells``
   above 0) the same MILP started from the multilevel's mapping, its work capped by a
   count, not a clock: at most :data:`EXACT_NODES` branch-and-bound nodes (HiGHS's
   ``mip_max_nodes``), and the rest of the budget when one is given. Untimed, the answer
   and the bound are a function of the instance and the parameters only, the same on any
   machine and under any load (issue 36 item 3); where the cap stops the solver before
   its proof the result is ``"feasible"`` with the solver's bound, never ``"time_limit"``.
   The cap is the shared runner's ``MilpOptions.node_limit``. The MILP is left out for a
   model large enough that the shared runner would solve it in a child process
   (:data:`~coalloc._shared.milp.HIGHS_PROCESS_MIN_SIZE`): the child takes the cap too
   (since the runner has it), but its start costs 0.2-0.6 s, and the default's answers
   there stay what they were.

Under a ``time_limit`` the best mapping found by either is returned when the deadline
passes (status ``"time_limit"``); a proven optimum is ``"optimal"``.
"""

from __future__ import annotations

import inspect
import time
from typing import Any, Optional

from .._shared import milp
from .._shared.constraints import checked
from .._shared.milp.highs import HIGHS_STOP_MARGIN, _highs_in_process
from .._shared.params import offer_incumbent, with_time_limit
from .._shared.result import settle
from . import gridstarts, sumrefine
from .exact import _model_size, _solve_exact, solve_exact_mapping
from .model import ResourceGraph, TaskGraph
from .multilevel import _mapped, _Tuning, map_multilevel
from .result import TaskMappingResult, stopped_result

__all__ = [
    "map_portfolio",
    "sum_in_spare_time",
    "layers_in_spare_time",
    "EXACT_CELLS",
    "EXACT_WORK_CELLS",
    "EXACT_NODES",
    "EXACT_START",
]

#: Instances with at most this many task-processor pairs also get the exact MILP (HiGHS
#: proves them in about 0.05-0.5 s; 16 tasks on 4 processors took up to 1.1 s under a load
#: of 9 on 2 cores). It was 24: on held-back instances of 40-64 pairs (clustered tasks on a
#: star of unequal processors, ``bench/shared/contract_audit.py``) the multilevel's answer
#: was up to 8 % worse than the exact optimum, which the default then never looked for.
EXACT_CELLS = 64


#: Past ``exact_cells`` and up to this many pairs, the exact MILP runs from the multilevel's
#: mapping with its work capped by a count, :data:`EXACT_NODES` (module docstring).
EXACT_WORK_CELLS = 200

#: HiGHS's branch-and-bound nodes at most (``mip_max_nodes``) past ``exact_cells``.
EXACT_NODES = 1000


#: Under a multilevel budget below this many seconds the default's multilevel member makes
#: the paper's starts after its first coarse start's refinement, not before the coarsening
#: (``multilevel.PAPER_AFTER_BELOW`` for the default alone; 0: never, as before; h58edge).
#: At ``T`` = 0.05 s on the contract audit's table1-c1-3 (58 tasks, 140 processors) the
#: default and the named ``"multilevel"`` ran the same steps and raced the same deadline:
#: the paper's starts (0.017 s of the 0.047 s) came first in both, the first refinement
#: (0.3088, 0.2931 or 0.2813 by the seed) landed at 0.045-0.050 s, after the deadline or
#: before it by chance, else the early answer 0.3146 (the audit's "default worse" in 0-4 of
#: 10 runs, the other way round as often, unreported). With the default's first refinement
#: 0.017 s sooner, the named method's answer at that budget is one the default reached.
PAPER_AFTER_BELOW = 0.15


def _exact_work(tasks: TaskGraph, resources: ResourceGraph, cells: int) -> Optional[int]:
    """How the exact MILP runs here: None (not at all), 0 (to its end or the time limit:
    at most ``cells`` pairs) or the node cap (past ``cells``, up to
    :data:`EXACT_WORK_CELLS` pairs, ``cells`` above 0, highspy installed, and a model small
    enough for HiGHS in this process: :data:`~coalloc._shared.milp.HIGHS_PROCESS_MIN_SIZE`;
    module docstring)."""
    pairs = tasks.n * resources.n_processors
    if pairs <= cells:
        return 0
    if cells <= 0 or pairs > EXACT_WORK_CELLS:
        return None
    if callable(milp.import_solver("highs")):  # SciPy's HiGHS (no highspy): no node cap
        return None
    if _highs_in_process(_model_size(tasks, resources)):
        return None
    return EXACT_NODES


#: Seconds the exact MILP needs left to be worth starting after the multilevel: HiGHS's stop
#: margin (it is told the time left less that) and the model's build on a tiny instance
#: (a few ms). With less, the MILP is not started: before, it was called and answered "the
#: time limit passed before it could start" (the contract audit's predicted overruns at
#: 0.05 s), after building its model past the time the call had.
EXACT_START = HIGHS_STOP_MARGIN + 0.005


#: The share of a ``time_limit`` kept from the multilevel mapper for the sum step on its
#: answer when the deadline stops it (0: none, the default). A stopped run gets no sum
#: step (it runs after the search); on the geometric graphs of 1,000-2,000 tasks at
#: ``T`` = 1 s it lowers the sum 0.50-0.72x in 0.17-0.42 s of CPU. Off by default: the
#: share is taken from the bottleneck's search (issue 40 follow-up, h52tmap).
SUM_RESERVE = 0.0
#: Seconds kept back from the reserve for the result's update (the maximum occupancy and
#: the occupancy graphs from scratch: 10-30 ms on 4,096 tasks under a load of 4)
SUM_RESULT_SECONDS = 0.04
#: Seconds kept back per task and task pair when more (:func:`_result_seconds`): the step's
#: last swap window past its deadline and the update from scratch took 0.23-0.32 s on
#: stencil27 20x20x8 (3,200 tasks, 35,404 pairs) onto a dragonfly of 144 under a load of
#: 5-6, the call 5.15-5.45 s at ``T`` = 5 s (h55late)
SUM_RESULT_ITEM = 6e-6


def _result_seconds(tasks: TaskGraph) -> float:
    """The seconds the sum step keeps back before its caller's deadline."""
    return max(SUM_RESULT_SECONDS, SUM_RESULT_ITEM * (tasks.n + tasks.n_edges))
#: True (the default): :func:`sum_in_spare_time` runs the sum step on a stopped answer in
#: the time the caller's budget has left after the bound (h54tsum); False: it does nothing.
SUM_SPARE = True


def _sum_in_reserve(tasks, resources, result: TaskMappingResult, until: float,
                    where: str = "the reserve", keep: Optional[float] = None) -> bool:  # fmt: skip
    """The sum step on a stopped multilevel answer until ``until`` less ``keep`` (the
    result's update; None: :func:`_result_seconds`); ``result`` changes only when the sum
    falls and the maximum does not rise (:func:`~coalloc.taskmap.sumrefine.sum_step_until`).
    Whether it changed."""
    from .occupancy import occupancy_graph
    from .sumrefine import sum_step_until

    cap = float(result.max_occupancy)
    stop = until - (_result_seconds(tasks) if keep is None else keep)
    better = sum_step_until(tasks, resources, result.mapping, cap, stop)
    if better is None:
        return False
    result.mapping, (occ, bott) = better
    if float(occ) < cap * (1 - 1e-12):  # the step may lower the maximum too
        result.history = [*result.history, float(occ)]
    result.max_occupancy, result.objective, result.bottleneck = occ, float(occ), bott
    result.node_occupancy, result.link_occupancy = occupancy_graph(tasks, resources, result.mapping)
    result.message = f"{result.message}; the sum step in {where}"
    return True


#: :func:`sum_in_spare_time` keeps back, past :func:`_result_seconds`, this many times the
#: wall seconds of one occupancy graph of the answer, measured first in the call: the step's
#: unpolled parts (its set-up, its last swap window, the update from scratch) run as slowly
#: as the call does; niced beside two busy loops (load 10) the step ran 0.3-1.1 s past its
#: deadline on stencil27 20x20x8 onto a dragonfly of 144 at ``T`` = 5 s (h56late)
SUM_PROBE = 3.0
#: The largest call pace (wall / CPU seconds) :func:`sum_in_spare_time` believes
SUM_PACE_MAX = 20.0
#: Seconds that must be left before the caller's deadline, past
#: :func:`_result_seconds`, for :func:`sum_in_spare_time` to start (its set-up and a
#: useful share of a pass: 30-60 ms a pass on 2,000 tasks under load, the moves of most
#: gain first)
SUM_SPARE_MIN = 0.02


def sum_in_spare_time(tasks: TaskGraph, resources: ResourceGraph, result: TaskMappingResult,
                      until: float, pace: float = 1.0) -> TaskMappingResult:  # fmt: skip
    """The sum step on a stopped default answer in the time its caller's budget has left.

    What :func:`~coalloc.taskmap.solve`'s default method does with a ``time_limit`` when
    the deadline stopped the multilevel mapper (status ``"time_limit"``): a stopped run gets
    no sum step (it comes after the search), yet the time kept back for the bound's tests
    is often not all spent (a prediction; geometric 1,200 on the Table 1 graph at ``T`` =
    5 s: 1.1 s left, the step took 0.05 s and lowered the sum 0.58x). The step
    (:func:`~coalloc.taskmap.sumrefine.sum_step_until`) runs until ``until`` less
    :func:`_result_seconds` (at least :data:`SUM_RESULT_SECONDS`) and :data:`SUM_PROBE`
    times an occupancy graph's wall seconds measured first, when at least
    :data:`SUM_SPARE_MIN` more are left; it looks
    at the clock between its moves, keeps the moves made, and its answer is kept only when
    the sum falls and the maximum occupancy, recomputed from scratch, does not rise
    (h54tsum). Takes no time from the search: the bottleneck never rises.

    Parameters
    ----------
    tasks : TaskGraph
    resources : ResourceGraph
    result : TaskMappingResult
        The answer so far; updated in place (mapping, occupancy, bottleneck, occupancy
        graphs, message; history when the maximum fell) only when the step lowered the sum;
        ``timings["sum_spare"]`` when the step ran. Its status and gap are the caller's.
    until : float
        The caller's deadline on :func:`time.perf_counter`'s clock.
    pace : float, default 1.0
        How many times slower than its CPU time the call has run so far (wall / process
        seconds, at least 1, at most :data:`SUM_PACE_MAX`): :func:`_result_seconds` is kept
        back that many times (niced beside two busy loops, load 10-17: a pace of 5-10, and
        the step's unpolled set-up and update took 0.6-2.6 s where 0.23 s was kept; h56late).

    Returns
    -------
    TaskMappingResult
        ``result``.
    """
    from .occupancy import occupancy_graph

    if result.mapping is None or result.status != "time_limit" or not SUM_SPARE:
        return result
    if result.iterations.get("first_answer"):  # stopped before the topology (h56sets): the
        return result  # step would build it unpolled, past the deadline
    t0 = time.perf_counter()
    if until - t0 < _result_seconds(tasks) + SUM_SPARE_MIN:
        return result
    occupancy_graph(tasks, resources, result.mapping)  # the call's pace (SUM_PROBE)
    t1 = time.perf_counter()
    pace = min(max(float(pace), 1.0), SUM_PACE_MAX)
    keep = _result_seconds(tasks) * pace + SUM_PROBE * (t1 - t0)
    if until - t1 < keep + SUM_SPARE_MIN:
        return result
    _sum_in_reserve(tasks, resources, result, until, "the spare time", keep)
    result.timings = {**result.timings, "sum_spare": time.perf_counter() - t0}
    return result


#: Timed: the multilevel's answer (stopped by the deadline or not) gets the layer moves
#: (:func:`~coalloc.taskmap.layermoves.layers_until`) when a link binds it, until the
#: deadline less the result's update (:func:`_result_seconds`); kept only when the maximum
#: falls (h59edge; untimed calls have them in the mapper: ``layermoves.LAYERS``). False: off.
LAYERS_TIMED = True
#: With :data:`LAYERS_TIMED`, the share of a ``time_limit`` kept from the multilevel's search
#: for them (a stopped run has no time after it). 0 (none): at 0.15 the held-back set at
#: ``T`` = 1 s gained (stencil9 30x30 on star 40 25.65 -> 20.75) but stencil 16^3 on 4x4x16
#: of ``vs_peers`` lost 1.85-1.91x in three alternated runs (its search needs the whole
#: second; h59edge, ISSUE40).
LAYER_RESERVE = 0.0
#: Seconds that must be left, past the result's update, for the layer moves to start
LAYER_MIN = 0.01


def _layers_in_time(tasks: TaskGraph, resources: ResourceGraph, result: TaskMappingResult,
                    until: float) -> bool:  # fmt: skip
    """Layer moves on the timed multilevel answer ``result`` when a link binds it, until
    ``until`` less :func:`_result_seconds` (:data:`LAYERS_TIMED`); ``result`` is updated in
    place (mapping, occupancies, history, ``iterations["timed_layers"]``: the layer moves
    kept) only when the maximum falls. Whether it changed."""
    import numpy as np

    from .hierarchy import topology
    from .layermoves import LAYERS, layers_until
    from .levels import TaskLevel
    from .occupancy import max_occupancy, occupancy_graph

    if not (LAYERS_TIMED and LAYERS) or result.mapping is None:
        return False
    if result.iterations.get("first_answer") or result.max_occupancy <= 0:
        return False  # stopped before the topology (h56sets): nothing built to move on
    stop = until - _result_seconds(tasks)
    if stop - time.perf_counter() < LAYER_MIN:
        return False
    node, link = np.asarray(result.node_occupancy), np.asarray(result.link_occupancy)
    if not link.max(initial=0.0) > node.max(initial=0.0):
        return False  # a processor binds: not the layers' case
    topo, fine = topology(resources), TaskLevel.of(tasks)
    position = np.empty(resources.n_nodes, dtype=np.int64)
    position[topo.order_nodes] = np.arange(topo.P)
    m0 = position[np.asarray(result.mapping, dtype=np.int64)]
    m, value, kept = layers_until(topo, fine, m0, resources.links, stop)
    cap = float(result.max_occupancy)
    if not kept or not value < cap * (1 - 1e-12):
        return False
    mapping = topo.order_nodes[m]
    occ, bott = max_occupancy(tasks, resources, mapping)  # from scratch, the family's helper
    if not float(occ) < cap * (1 - 1e-12):
        return False
    result.mapping, result.max_occupancy, result.objective, result.bottleneck = (
        mapping, occ, float(occ), bott)  # fmt: skip
    result.node_occupancy, result.link_occupancy = occupancy_graph(tasks, resources, mapping)
    result.history = [*result.history, float(occ)]
    result.iterations = {**result.iterations, "timed_layers": int(kept)}
    return True


#: True (the default): :func:`layers_in_spare_time` runs in :func:`~coalloc.taskmap.solve`
#: after the bound, before the sum step's spare time (h59edge); False: it does nothing.
LAYERS_SPARE = True


def layers_in_spare_time(tasks: TaskGraph, resources: ResourceGraph, result: TaskMappingResult,
                         until: float, pace: float = 1.0) -> TaskMappingResult:  # fmt: skip
    """The timed layer moves (:func:`_layers_in_time`) on a default answer in the time its
    caller's budget has left after the bound: a stopped multilevel leaves the portfolio no
    time of its own, and the time kept for the bound's tests is often not all spent.

    Parameters
    ----------
    tasks : TaskGraph
    resources : ResourceGraph
    result : TaskMappingResult
        The answer so far; updated in place only when its maximum occupancy falls
        (``iterations["timed_layers"]``); its status, bound and gap are the caller's.
    until : float
        The caller's deadline on :func:`time.perf_counter`'s clock; the moves stop at it less
        :func:`_result_seconds` x ``pace`` and :data:`SUM_PROBE` x an occupancy graph's wall
        seconds, measured first (as :func:`sum_in_spare_time` keeps).
    pace : float, default 1.0
        The call's wall / CPU seconds so far (1 to :data:`SUM_PACE_MAX`).

    Returns
    -------
    TaskMappingResult
        ``result``.
    """
    from .occupancy import occupancy_graph

    if result.mapping is None or not LAYERS_SPARE or result.iterations.get("first_answer"):
        return result
    t0 = time.perf_counter()
    if until - t0 < _result_seconds(tasks) + LAYER_MIN:
        return result
    occupancy_graph(tasks, resources, result.mapping)  # the call's pace (SUM_PROBE)
    t1 = time.perf_counter()
    keep = _result_seconds(tasks) * (min(max(float(pace), 1.0), SUM_PACE_MAX) - 1.0) + \
        SUM_PROBE * (t1 - t0)  # fmt: skip
    _layers_in_time(tasks, resources, result, until - keep)  # (it keeps _result_seconds too)
    return result


_MEMBER_SIGNATURE = inspect.signature(map_multilevel)  # its keywords and their defaults


def _member(tasks: TaskGraph, resources: ResourceGraph, *, seed: Optional[int] = 0,
            **params: Any) -> TaskMappingResult:  # fmt: skip
    """The default's multilevel member: :func:`~coalloc.taskmap.multilevel.map_multilevel`
    (``params`` its keywords, checked by the portfolio's table) with the default's own order
    under a tiny budget, :data:`PAPER_AFTER_BELOW`, passed down as a parameter."""
    given = _MEMBER_SIGNATURE.bind(tasks, resources, seed=seed, **params)
    given.apply_defaults()
    tuning = {k: v for k, v in given.arguments.items() if k not in ("tasks", "resources", "seed")}
    return _mapped(tasks, resources, seed, _Tuning(**tuning), PAPER_AFTER_BELOW)


def _stopped(tasks, resources, **stop):
    return stopped_result(tasks, resources, **{**stop, "method": "portfolio"})


@checked("coalloc.taskmap.constraints", "portfolio")
def map_portfolio(
    tasks: TaskGraph,
    resources: ResourceGraph,
    *,
    seed: Optional[int] = 0,
    time_limit: Optional[float] = None,
    exact_cells: int = EXACT_CELLS,
    **params: Any,
) -> TaskMappingResult:
    """Map ``tasks`` onto ``resources``: the best of the family's methods (module docstring).

    Parameters
    ----------
    tasks : TaskGraph
    resources : ResourceGraph
    seed : int, optional
        Seed of the multilevel mapper (and of the paper's start). Same seed, same mapping.
    time_limit : float, optional
        Seconds for the whole call; at the deadline the best mapping found so far.
    exact_cells : int, default :data:`EXACT_CELLS`
        Also run the exact MILP when ``tasks.n * processors`` is at most this (0: never).
    **params
        Parameters of :func:`~coalloc.taskmap.multilevel.map_multilevel`.

    Returns
    -------
    TaskMappingResult
        ``method`` ``"portfolio"``; ``message`` names the method whose mapping it is;
        ``bound`` the exact solver's proven bound when it ran; ``timings`` has
        ``"multilevel"``, ``"exact"`` (when it ran) and ``"total"``.

    Examples
    --------
    >>> import coalloc.taskmap as tm
    >>> tasks = tm.TaskGraph([1.0, 2.0, 1.5], [[0, 4, 0], [4, 0, 1], [0, 1, 0]])
    >>> res = tm.ResourceGraph.from_edges([0, 3.0, 5.0], [[0, 1], [0, 2]], [50.0, 50.0])
    >>> result = map_portfolio(tasks, res)
    >>> result.max_occupancy, result.method, result.status
    (0.6, 'portfolio', 'optimal')
    """
    t0 = time.perf_counter()
    # the values were checked by the table (@checked); these only fix their types
    limit = None if time_limit is None else float(time_limit)
    cells = int(exact_cells)
    timed = with_time_limit(_member, _stopped)
    reserve = 0.0 if limit is None or not params.get("sum_refine", True) else SUM_RESERVE * limit
    reserve += 0.0 if limit is None or not LAYERS_TIMED else LAYER_RESERVE * limit
    ml_limit = None if limit is None else limit - reserve
    result = timed(tasks, resources, seed=seed, time_limit=ml_limit, **params)
    if reserve > 0 and result.status == "time_limit" and result.mapping is not None:
        _sum_in_reserve(tasks, resources, result, t0 + limit)
    # a box stencil's block layout sized by the machine (h58bound): in the time left, if better
    left = None if limit is None else t0 + limit - time.perf_counter()
    grid_m = gridstarts.grid_candidate(tasks, resources, left)
    result, grid = gridstarts.offer_grid(tasks, resources, result, grid_m,
                                         None if limit is None else t0 + limit,
                                         params.get("sum_refine", True))  # fmt: skip
    if limit is not None:  # layer moves where a link binds, in the time left (h59edge)
        _layers_in_time(tasks, resources, result, t0 + limit)
    t1 = time.perf_counter()
    timings = {"multilevel": t1 - t0}
    winner, why = "grid layout" if grid else "multilevel", ""
    work = _exact_work(tasks, resources, cells)
    at_bound = bool(result.iterations.get("stopped_at_bound"))
    if result.status != "time_limit" and work is not None and not at_bound:
        left = None if limit is None else limit - (t1 - t0)
        if left is not None and left <= EXACT_START:
            # the multilevel's answer, kept as it is; the budget stopped the portfolio
            # before its exact member (status time_limit, the rule's "the budget ended it")
            result.status = "time_limit"
            why = (f"; the exact solver not started: {max(left, 0.0):.3f} s left, less than "
                   f"it needs to start ({EXACT_START:.3f} s)")  # fmt: skip
        else:
            snapshot = result
            # the multilevel's answer stays the incumbent while the exact solver runs
            offer_incumbent(lambda: snapshot)
            if work:  # past exact_cells: from the multilevel's mapping, nodes capped
                exact = _solve_exact(tasks, resources, time_limit=left,
                                     start=snapshot.mapping, node_limit=work)  # fmt: skip
            else:
                exact = solve_exact_mapping(tasks, resources, time_limit=left)
            timings["exact"] = time.perf_counter() - t1
            if exact.mapping is not None and (
                exact.max_occupancy < result.max_occupancy * (1 - 1e-12)
            ):
                winner, result = "exact", exact
            if exact.bound is not None and exact.status in ("optimal", "feasible", "time_limit"):
                result.bound = min(float(exact.bound), float(result.max_occupancy))
            if exact.status == "time_limit":  # the budget ended the portfolio
                result.status = "time_limit"
                # its own words: stopped in its search, or not started at all because
                # the time left was less than HiGHS's stop margin (the audit's "time_limit
                # before half the budget" at 0.05 s said "stopped" for a solver never run)
                why = f"; the exact solver, at the time limit: {exact.message}"
            elif exact.status == "error":
                why = f"; the exact solver failed ({exact.message})"
    result = sumrefine.final_cycles(tasks, resources, result, None if limit is None else t0 + limit,
                                   params.get("sum_refine", True))  # the sum's V-cycles, last
    if result.mapping is not None and result.status != "time_limit":
        result.status = "feasible"  # settle() makes it optimal when it meets its bound
    result.method = "portfolio"
    result.params = {**result.params, "exact_cells": cells}
    if limit is not None:
        result.params["time_limit"] = limit
    timings["total"] = time.perf_counter() - t0
    result.timings = {**result.timings, **timings}
    if result.mapping is not None:
        result.message = f"portfolio: the {winner} method's mapping{why}"
    return settle(result)


def _signature() -> inspect.Signature:
    """:func:`map_portfolio`'s own keywords and the multilevel mapper's, so that a batch's
    check of parameter names (:meth:`coalloc.taskmap.Instance.check_params`) knows them."""
    own = inspect.signature(map_portfolio)
    keep = [p for p in own.parameters.values() if p.kind is not p.VAR_KEYWORD]
    names = {p.name for p in keep}
    extra = [p for n, p in inspect.signature(map_multilevel).parameters.items()
             if p.kind is p.KEYWORD_ONLY and n not in names]  # fmt: skip
    return own.replace(parameters=keep + extra)


map_portfolio.__signature__ = _signature()  # type: ignore[attr-defined]
