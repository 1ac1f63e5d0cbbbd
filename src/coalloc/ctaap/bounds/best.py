"""The tightest bound the work allows (:func:`best_bound`): the clique LP on sparse requests, the
cluster sets (and, with more effort, both) on dense ones.
"""

from __future__ import annotations

import time
from typing import Optional

from ..._shared.docs import filled
from ..model import Offer, Request, check_compatible
from ._common import (
    DENSE_FRACTION,
    _effort,
)
from .clique_lp import (
    lp_bound,
)
from .cluster_sets import (
    cluster_set_bound,
)


@filled
def strong_upper_bound(request: Request, offer: Offer, *, effort: float = 1.0) -> int:
    """The bound of :func:`best_bound` (the flow bound, the clique LP's or the cluster sets').

    Parameters
    ----------
    %(ctaap_pair)s
    effort : float, default 1
        Multiplies the work caps (:func:`best_bound`).

    Returns
    -------
    int
        A valid upper bound on the number of tasks any feasible allocation places.

    Examples
    --------
    >>> import coalloc.ctaap as ct
    >>> from coalloc.ctaap.bounds import strong_upper_bound
    >>> request, offer = ct.generators.random_instance(30, 3, edge_probability=0.2, seed=4)
    >>> strong_upper_bound(request, offer) <= ct.upper_bound(request, offer)
    True
    """
    return int(best_bound(request, offer, effort=effort)["bound"])


# Largest star-clique LP (stored links x m x (m + 1)) added to the cluster sets' rows.
_SMALL_LP = 2_000_000


#: Least ``effort`` at which :func:`best_bound` adds the clique LP to the cluster sets'
#: bound on dense requests (it costs more than the default solve there).
DENSE_LP_EFFORT = 2.0


def is_dense(request: Request) -> bool:
    """Whether a request stores at least :data:`DENSE_FRACTION` of all ordered task pairs."""
    n = request.n
    return n >= 2 and request.bandwidth.nnz >= DENSE_FRACTION * n * (n - 1)


@filled
def best_bound(
    request: Request,
    offer: Offer,
    *,
    effort: float = 1.0,
    stop_at: Optional[float] = None,
    at_least: int = 0,
) -> dict:
    """The tightest proven bound this module computes with the work ``effort`` allows.

    Sparse requests: the clique LP (:func:`lp_bound`). Dense requests (at least
    :data:`DENSE_FRACTION` of the task pairs linked, as in the paper's Fig. 2 and Fig. 3):
    the cluster sets' bound (:func:`cluster_set_bound`); with ``effort`` of at least
    :data:`DENSE_LP_EFFORT`, and when the star-clique LP is small (at most 2e6 links x m x
    (m + 1)), then that LP with the cluster sets' rows added (on Fig. 2 instances it is
    1.2 % tighter in total, at 2-3x the cluster sets' time). The work is capped by counts
    (module docstring), so the bound is a function of the instance and ``effort`` alone:
    the same on every run, on any machine, under any load.

    Parameters
    ----------
    %(ctaap_pair)s
    effort : float, default 1
        Multiplies every work cap (vertices coloured by the clique searches, LP
        iterations): 1 is cheap
        (on the paper's 50-task Fig. 2 instances, about the default solve's own time); 10
        or 100 search further for a tighter bound, at up to that many times the cost.
    stop_at : float, optional
        A :func:`time.perf_counter` instant after which the call raises
        :class:`BoundStopped` (a solve's deadline): the caller then drops the bound rather
        than report one cut by the clock.

    %(bound_at_least)s

    Returns
    -------
    dict
        As :func:`lp_bound` (``bound``, ``flow``, ``status``, ``seconds``, ...) with ``kind``:
        ``"clique LP"``, ``"cluster sets"`` or ``"cluster sets + clique LP"``, and
        ``effort``.

    Examples
    --------
    >>> import coalloc.ctaap as ct
    >>> from coalloc.ctaap.bounds import best_bound
    >>> request, offer = ct.generators.fig3(60, seed=2)
    >>> info = best_bound(request, offer)
    >>> info["kind"], info["bound"] <= info["flow"]
    ('cluster sets', True)
    >>> best_bound(request, offer, effort=10)["kind"]
    'cluster sets + clique LP'
    >>> best_bound(request, offer)["bound"] == info["bound"]       # the same, every run
    True
    """
    check_compatible(request, offer)
    effort = _effort(effort)
    if not is_dense(request):
        info = lp_bound(request, offer, effort=effort, stop_at=stop_at, at_least=at_least)
        return {**info, "kind": "clique LP", "effort": effort}
    t0 = time.perf_counter()
    m = offer.m
    small_lp = request.bandwidth.nnz * m * (m + 1) <= _SMALL_LP
    info = cluster_set_bound(request, offer, effort=effort, stop_at=stop_at, at_least=at_least)
    out = {**info, "kind": "cluster sets", "effort": effort}
    if (small_lp and effort >= DENSE_LP_EFFORT and info["flow"] > 0 and info["bound"] > 0
            and info["bound"] > at_least):  # fmt: skip
        rows = [(W, beta) for W, _, beta, _ in info["sets"]]
        lp = lp_bound(request, offer, effort=effort, set_rows=rows, stop_at=stop_at)
        if lp["bound"] <= out["bound"]:
            out["bound"] = int(lp["bound"])
            out["kind"] = "cluster sets + clique LP"
            out["lp"] = lp["lp"]
    out["seconds"] = time.perf_counter() - t0
    return out
