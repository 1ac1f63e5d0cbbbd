"""The family's default method: a portfolio of its methods sharing one incumbent (issue 36).

:func:`map_portfolio` runs

1. the multilevel mapper (:func:`~coalloc.taskmap.multilevel.map_multilevel`), which holds
   the family's other heuristics as its starts: a quick block mapping first, the paper's
   ``"open+improve"`` next up to ``paper_start`` tasks (its initial mapping and every
   improvement offered as they come), then its own bisection starts and refinements; and
2. on tiny instances (at most ``exact_cells`` task-processor pairs) the exact MILP
   (:func:`~coalloc.taskmap.solve_exact_mapping`, HiGHS) with the rest of the budget, which
   proves the optimum or improves on the heuristic.

Under a ``time_limit`` the best mapping found by either is returned when the deadline
passes (status ``"time_limit"``); a proven optimum is ``"optimal"``.
"""

from __future__ import annotations

import inspect
import time
from typing import Any, Optional

from .._shared.constraints import checked
from .._shared.params import offer_incumbent, with_time_limit
from .._shared.result import settle
from .exact import solve_exact_mapping
from .model import ResourceGraph, TaskGraph
from .multilevel import map_multilevel
from .result import TaskMappingResult, stopped_result

__all__ = ["map_portfolio", "EXACT_CELLS"]

#: Instances with at most this many task-processor pairs also get the exact MILP (HiGHS
#: proves them in about 0.05-0.5 s; 16 tasks on 4 processors took up to 1.1 s under a load
#: of 9 on 2 cores). It was 24: on held-back instances of 40-64 pairs (clustered tasks on a
#: star of unequal processors, ``bench/shared/contract_audit.py``) the multilevel's answer
#: was up to 8 % worse than the exact optimum, which the default then never looked for.
EXACT_CELLS = 64


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
    timed = with_time_limit(map_multilevel, _stopped)
    result = timed(tasks, resources, seed=seed, time_limit=limit, **params)
    t1 = time.perf_counter()
    timings = {"multilevel": t1 - t0}
    winner, why = "multilevel", ""
    tiny = tasks.n * resources.n_processors <= cells
    at_bound = bool(result.iterations.get("stopped_at_bound"))
    if result.status != "time_limit" and tiny and not at_bound:
        left = None if limit is None else limit - (t1 - t0)
        if left is None or left > 0:
            snapshot = result
            # the multilevel's answer stays the incumbent while the exact solver runs
            offer_incumbent(lambda: snapshot)
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
                why = "; the exact solver was stopped at the time limit"
            elif exact.status == "error":
                why = f"; the exact solver failed ({exact.message})"
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
