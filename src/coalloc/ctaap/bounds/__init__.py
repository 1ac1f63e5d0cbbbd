"""Upper bounds on the CTAAP optimum tighter than the flow bound.

Two of them, and :func:`best_bound` to pick: the LP of the clique-strengthened
formulation, judged by its dual (:func:`lp_bound`, for sparse requests, below), and the
cluster sets' bound (:func:`cluster_set_bound`, for dense requests: capped maximum cliques
of the compatibility graph of each cluster and each pair of clusters, combined by an LP).

The flow bound (:func:`coalloc.ctaap.upper_bound`) drops constraint (4) between clusters.
This bound keeps it in the strongest cheap linear form. For every stored link
``B[i, k]`` and every cluster ``j`` that ``i`` fits, the clusters ``l`` where placing
``k`` conflicts with ``i`` in ``j`` (``B[i,k] > Bhat[j,l]`` or ``B[k,i] > Bhat[l,j]``)
form, with ``x[i,j]``, a clique of the conflict graph (``k`` sits on one cluster at
most), so::

    x[i,j] + sum_{l in C(i,k,j)} x[k,l] <= 1          (star clique)

is valid, and much stronger than the pairwise rows ``x[i,j] + x[k,l] <= 1``. With the
rows of (1) and (2) (capacities tightened by the flow bound's clique covers) the LP
``max sum x`` over ``0 <= x <= 1`` is solved by HiGHS's first-order PDLP (2.2-4.5x less
CPU than its interior point IPX, same bound, on five sparse requests of 1,000-2,000 tasks;
bench/RESULTS.md, issue 29, third run).

The bound is computed from the LP's *dual*, never from its primal objective: for any row
prices ``y >= 0``, weak duality gives ``sum_r y_r u_r + sum_v max(0, 1 - (A^T y)_v)``
as an upper bound on the LP and so on the optimum, whatever the solver's tolerances or
an early stop left in ``y``. The answer is that value rounded down (allocations are whole
tasks), capped by the flow bound. On sparse requests (mean degree 10) this closes most of
the flow bound's gap; on the paper's complete Fig. 3 requests the flow bound's clique
covers are already the stronger part (bench/RESULTS.md, issue 29).

Reproducible work (issue 36). Every bound here caps its work by counts, never by the
clock: the clique searches by vertices coloured (:data:`CLIQUE_WORK`), the LPs by
iterations (the clique LP's cap scales with its size, :data:`LP_WORK`;
:data:`SET_LP_ITERATIONS` for the cluster sets' LP), all multiplied by ``effort`` (default 1, cheap;
larger is stronger and slower). So the same
call gives the same bound on any machine and under any load. A solve with a time limit
that runs out while a bound is computed drops that bound (it keeps the flow bound, or
none) rather than report a value cut by the clock.

One idea per module: :mod:`._common` (the work caps, :class:`BoundStopped`, the LP dual),
:mod:`.flow` (the flow bound), :mod:`.clique_lp`, :mod:`.cliques` (the capped clique
search), :mod:`.cluster_sets` and :mod:`.best` (the choice); every public name is
importable from ``coalloc.ctaap.bounds`` as before.
"""

from __future__ import annotations

from ._common import (
    CLIQUE_WORK,
    LP_ITERATIONS,
    LP_WORK,
    SET_LP_ITERATIONS,
    BoundStopped,
)
from ._common import (
    DENSE_FRACTION as DENSE_FRACTION,
)
from ._common import (
    LP_MIN_ITERATIONS as LP_MIN_ITERATIONS,
)
from ._common import (
    SIMPLEX_NONZEROS as SIMPLEX_NONZEROS,
)
from .best import DENSE_LP_EFFORT as DENSE_LP_EFFORT
from .best import best_bound, strong_upper_bound
from .best import is_dense as is_dense
from .clique_lp import lp_bound
from .cliques import capped_clique
from .cluster_sets import cluster_set_bound
from .flow import SUBSET_CLUSTERS as SUBSET_CLUSTERS
from .flow import b_matching_size, flow_bound

__all__ = [
    "lp_bound",
    "strong_upper_bound",
    "cluster_set_bound",
    "capped_clique",
    "best_bound",
    "flow_bound",
    "b_matching_size",
    "BoundStopped",
    "CLIQUE_WORK",
    "LP_WORK",
    "LP_ITERATIONS",
    "SET_LP_ITERATIONS",
]
