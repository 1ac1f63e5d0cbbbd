"""The paper's experimental setup (Fig. 5), seeded, and generated GAP instances (types A-D).

Fig. 5: 500 nodes of 1000 Mflops/s; per 20 nodes, 19 receive jobs totalling 526 +- 500 Mflops
and one receives 10000 +- 500 Mflops (uniform). The paper does not give job sizes; here a
node's total is split into jobs of size uniform on ``job_size`` (default 10-100 Mflops), the
last one cut to the total. When jobs arrive is not in the paper either; it decides the order in
which nodes report "Mflops ok" and so the coalitions first come first served forms. Three arrival
models (``arrival=``):

``"staggered"`` (the default)
    Every node's jobs arrive within a short window of its own (a twentieth of the period),
    starting at a uniformly random time: nodes report in an order independent of their load.
    This is the model under which the paper's FCFS-FF figures are reproduced.
``"same-window"``
    Every node's jobs arrive at uniformly random times over the same period: a node reports
    with its last job, so heavy nodes (many jobs) tend to report late, light nodes spread.
``"same-rate"``
    Jobs reach every node as a Poisson stream of the same rate, so a node's arrivals end later
    the more jobs it receives: the heavy nodes report last (the only model before 2026-11-27).

The job list is in global arrival order.
"""

from __future__ import annotations

from numbers import Integral, Real
from typing import Optional, Tuple

import numpy as np

from .._shared.constraints import InstanceOf, Interval, Options, Predicate, Table, checked
from .._shared.seeding import check_seed
from .._shared.validation import check_memory
from .gap.generators import GENERATORS as _GAP_GENERATORS
from .gap.generators import generate_gap
from .model import LoadSharingProblem

__all__ = ["paper_setup", "gap_instance", "generate_gap", "ARRIVALS", "GENERATORS"]

#: The arrival models of :func:`paper_setup` (the first is the default).
ARRIVALS = ("staggered", "same-window", "same-rate")



def _numbers(pair, low: float, strict: bool) -> bool:
    """A pair of finite numbers ``>= low`` (``> low`` when ``strict``)."""
    return len(pair) == 2 and all(
        isinstance(v, (int, float, np.integer, np.floating))
        and not isinstance(v, (bool, np.bool_)) and np.isfinite(v)
        and (v > low if strict else v >= low) for v in pair)  # fmt: skip


_PAIR = [InstanceOf((tuple, list), "a pair of numbers")]

#: Each generator's parameters, declared once (as the methods' tables,
#: :mod:`coalloc.loadshare.constraints`): checked at every call (``@checked``), and the
#: source of ``tests/shared/test_checked.py``'s invalid-value tests. ``seed`` follows the
#: seed policy (:func:`coalloc._shared.seeding.check_seed`). The GAP's generator keeps its
#: table beside it (:data:`coalloc.loadshare.gap.generators.GENERATORS`); it is one of the
#: family's generators here.
GENERATORS = {
    "paper_setup": Table(
        {
            "n_nodes": [Interval(Integral, 1, None, closed="left")],
            "capacity": [Interval(Real, 0, None, closed="neither")],
            "light": _PAIR,
            "heavy": _PAIR,
            "block": [Interval(Integral, 1, None, closed="left")],
            "job_size": _PAIR,
            "arrival": [Options(set(ARRIVALS))],
        },
        relations=[
            Predicate(("light",), lambda p: _numbers(p, 0, False),
                      "light must be (mean, half-width), two finite numbers >= 0, got {light}"),
            Predicate(("heavy",), lambda p: _numbers(p, 0, False),
                      "heavy must be (mean, half-width), two finite numbers >= 0, got {heavy}"),
            Predicate(("job_size",), lambda p: _numbers(p, 0, True) and p[0] <= p[1],
                      "job_size must be (low, high), finite numbers with 0 < low <= high, "
                      "got {job_size}"),
        ],  # fmt: skip
    ),
    **_GAP_GENERATORS,
}

@checked("coalloc.loadshare.generators", "paper_setup", tables="GENERATORS")
def paper_setup(
    n_nodes: int = 500,
    *,
    capacity: float = 1000.0,
    light: Tuple[float, float] = (526.0, 500.0),
    heavy: Tuple[float, float] = (10000.0, 500.0),
    block: int = 20,
    job_size: Tuple[float, float] = (10.0, 100.0),
    seed: Optional[int] = 0,
    arrival: str = "staggered",
) -> LoadSharingProblem:
    """The load-sharing grid of Fig. 5.

    Parameters
    ----------
    n_nodes : int, default 500
        Nodes (the paper: 500; its largest run 50,000).
    capacity : float, default 1000
        Capacity of every node (Mflops/s).
    light, heavy : (mean, spread)
        Total job size at the 19 light and the one heavy node of every block (uniform on
        ``mean +- spread``).
    block : int, default 20
        One heavy node per ``block`` nodes (at a random position in the block).
    job_size : (low, high), default (10, 100)
        Job sizes, uniform (Mflops).
    seed : int, optional
    arrival : {"staggered", "same-window", "same-rate"}, default "staggered"
        When every node's jobs arrive (module docstring): it orders the job list and the
        nodes' reports (:meth:`LoadSharingProblem.report_order`), nothing else.

    Returns
    -------
    LoadSharingProblem
        Groups: one administrative domain per block.

    Examples
    --------
    >>> from coalloc.loadshare.generators import paper_setup
    >>> prob = paper_setup(seed=0)
    >>> prob.n_nodes, 2.5e5 < prob.fcfs_throughput < 3.1e5
    (500, True)
    """
    # the values were checked by the table (GENERATORS); these only fix their types
    n, block, capacity = int(n_nodes), int(block), float(capacity)
    lo, hi = float(job_size[0]), float(job_size[1])
    check_memory(40.0 * n, f"a grid of {n} nodes")
    # Every node draws jobs until its total is reached: refuse a grid of more jobs than
    # memory or time allow (sizes far below the totals) before drawing them.
    most = n * (light[0] + light[1]) + (n // block + 1) * (heavy[0] + heavy[1])
    jobs = most / ((lo + hi) / 2) + n  # about, and at least, the jobs drawn
    if jobs > 10**8:
        raise ValueError(f"job_size {job_size} against these totals would draw about "
                         f"{jobs:.3g} jobs (at most 1e8)")  # fmt: skip
    check_memory(40.0 * jobs, f"a grid of about {jobs:.3g} jobs")
    rng = np.random.default_rng(check_seed(seed))
    totals = rng.uniform(light[0] - light[1], light[0] + light[1], size=n)
    n_blocks = -(-n // block)
    for b in range(n_blocks):
        a = b * block
        size = min(block, n - a)
        if size == block:
            k = a + int(rng.integers(size))
            totals[k] = rng.uniform(heavy[0] - heavy[1], heavy[0] + heavy[1])
    totals = np.maximum(totals, 0.0)
    sizes, origin, times = [], [], []
    for i in range(n):
        t = totals[i]
        draws = []
        while t > 1e-9:
            s = min(float(rng.uniform(lo, hi)), t)
            draws.append(s)
            t -= s
        k = len(draws)
        sizes.extend(draws)
        origin.extend([i] * k)
        if arrival == "same-rate":
            times.extend(np.cumsum(rng.exponential(1.0, size=k)).tolist())
        elif arrival == "same-window":
            times.extend(np.sort(rng.random(k)).tolist())
        else:  # staggered: a window of 1/20 of the period from a random start
            start = float(rng.random())
            times.extend((start + np.sort(rng.random(k)) / 20.0).tolist())
    order = np.argsort(np.asarray(times), kind="stable")
    groups = np.arange(n) // block
    return LoadSharingProblem(np.full(n, capacity), np.asarray(sizes)[order],
                              np.asarray(origin, dtype=np.int64)[order], groups)  # fmt: skip


def gap_instance(*args, **kwargs):
    """Alias of :func:`coalloc.loadshare.gap.generate_gap` (Chu & Beasley types A-D).

    Parameters
    ----------
    *args, **kwargs
        The arguments of :func:`~coalloc.loadshare.generate_gap` (``kind, m, n, seed``).

    Returns
    -------
    GapInstance
        The instance.

    Examples
    --------
    >>> from coalloc.loadshare import generators
    >>> generators.gap_instance("a", 5, 20, seed=0)
    GapInstance(m=5, n=20, a0520-0)
    """
    return generate_gap(*args, **kwargs)
