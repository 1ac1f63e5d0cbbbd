"""A testbed simulator: a workload replayed on a testbed, for several mappers side by side.

Experiments arrive in order; each is mapped onto what is free at its arrival (physical
nodes not held by a running experiment, trunk bandwidth not in use); a success holds its
physical nodes and trunk bandwidth until it departs. Every mapper replays the same
workload on its own copy of the testbed.
"""

from __future__ import annotations

import heapq
import time
from typing import Any, Callable, Dict, List, Optional, Sequence

import numpy as np

from .._shared.progress import progress
from .assignplus import RequestMemory
from .model import PhysicalTopology
from .result import SimulationResult, TestbedSimulationResult  # noqa: F401 - its old home, same class
from .solvers import METHODS, assign

__all__ = ["simulate", "SimulationResult"]


def simulate(ptop: PhysicalTopology, workload: Sequence[tuple], methods: Sequence[str] = (
        "assign+", "anneal"), *, seed: Optional[int] = 0, params: Optional[dict] = None,
        show_progress: Optional[bool] = False,
        on_experiment: Optional[Callable[[str, int, bool], None]] = None,
        ) -> SimulationResult:  # fmt: skip
    """Replay ``workload`` (``(arrival, duration, top)`` tuples) on ``ptop`` per method.

    Parameters
    ----------
    ptop : PhysicalTopology
        The testbed.
    workload : sequence of (float, float, VirtualTopology)
        ``(arrival, duration, experiment)`` tuples.
    methods : sequence of str
        Names of :data:`METHODS`.
    seed : int, optional
        Seed of the annealer (experiment i uses ``seed + i``).
    params : dict of str to dict, optional
        Method -> extra parameters.
    show_progress : bool or None, default False
        Show a progress bar on standard error: True always, False never, None only when
        standard error is a terminal.
    on_experiment : callable, optional
        Called as ``on_experiment(method, k, success)`` after the ``k``-th experiment (in
        replay order) of ``method`` was mapped or refused (e.g. to report progress to a log).

    Returns
    -------
    SimulationResult
        Per method: success, inter-switch bandwidth, time and failure reasons.

    Raises
    ------
    ValueError
        An unknown method.

    Examples
    --------
    >>> import coalloc.testbed as tb
    >>> ptop = tb.parse_ptop("node sw switch:1\\nnode a pc:1\\nnode b pc:1\\n"
    ...                      "link la a sw 100 0 0\\nlink lb b sw 100 0 0")
    >>> top = tb.parse_top("node x pc\\nnode y pc\\nlink l x y 100 0 0")
    >>> workload = [(0.0, 10.0, top), (1.0, 10.0, top), (20.0, 10.0, top)]
    >>> sim = tb.simulate(ptop, workload, ["assign+"])
    >>> sim.reasons["assign+"][0][1]["constraint"]       # the second came while the first ran
    'no_candidate'
    """
    for m in methods:
        if m not in METHODS:
            raise ValueError(f"methods must be names of {sorted(METHODS)}, got {m!r}")
    params = params or {}
    order = sorted(range(len(workload)), key=lambda i: workload[i][0])
    res = SimulationResult(methods=list(methods),
                           arrivals=np.array([workload[i][0] for i in order]))
    total = len(order) * len(methods)
    bar = progress(total=total, desc="simulate", unit="exp",
                   disable=None if show_progress is None else not show_progress)
    for m in methods:
        used: set = set()
        trunk: Dict[str, float] = {}
        running: List[tuple] = []
        memory = RequestMemory() if m.startswith("assign+") else None
        ok = np.zeros(len(order), dtype=bool)
        isw = np.full(len(order), np.nan)
        inuse = np.zeros(len(order))
        secs = np.zeros(len(order))
        reasons: List[Any] = []
        cur_isw = 0.0
        for k, i in enumerate(order):
            arrival, duration, top = workload[i]
            while running and running[0][0] <= arrival:
                _, _, nodes, loads, bw = heapq.heappop(running)
                used -= nodes
                for t, b in loads.items():
                    trunk[t] -= b
                cur_isw -= bw
            available = {n for n in ptop.nodes if n not in used}
            extra = dict(params.get(m, {}))
            if memory is not None:
                extra.setdefault("memory", memory)
            t0 = time.perf_counter()
            r = assign(top, ptop, m, seed=(seed or 0) + i, available=available,
                       trunk_used=dict(trunk), **extra)
            secs[k] = time.perf_counter() - t0
            if r.success:
                ok[k] = True
                isw[k] = r.interswitch_bandwidth
                nodes = {p for p in r.mapping.values() if not ptop.nodes[p].is_switch}
                used |= nodes
                for t, b in r.trunk_load.items():
                    trunk[t] = trunk.get(t, 0.0) + b
                cur_isw += r.interswitch_bandwidth
                heapq.heappush(running, (arrival + duration, k, nodes, dict(r.trunk_load),
                                         r.interswitch_bandwidth))  # fmt: skip
            else:
                reasons.append((k, r.reason))
            inuse[k] = cur_isw
            bar.update(1)
            if on_experiment is not None:
                on_experiment(m, k, bool(ok[k]))
        res.success[m], res.isw[m], res.isw_in_use[m] = ok, isw, inuse
        res.seconds[m], res.reasons[m] = secs, reasons
    bar.close()
    return res
