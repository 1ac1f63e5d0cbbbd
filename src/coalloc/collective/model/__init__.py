"""The model of collective co-allocation (Cankar et al. 2013, section 2).

A :class:`ResourcePool` holds ``n`` nodes (resources ``R_j``) with ``m`` named quantitative
properties (capacities ``p_ij``), qualitative labels, and per node and property a timetable
``T_ij(t)`` of the amount already reserved: a step function in continuous time (seconds from
the pool's origin). The timetables share one sorted grid of breakpoints ``times`` (the first
is 0); ``reserved[j, i, k]`` is the amount reserved on ``[times[k], times[k+1])`` and the last
value holds for ever. Reservation intervals are half-open: a job on ``[t, t + t_res)`` does not
conflict with one starting at ``t + t_res``.

A :class:`CollectiveRequest` asks for ``count`` nodes for ``duration`` seconds, starting in
``[earliest_start, latest_start]``, with a per-node minimum ``e_i`` and a total ``d_i`` per
property (a *simple* request has no total: ``d_i = N e_i``).

The model is three modules: :mod:`.pool` (:class:`ResourcePool` and its ledger),
:mod:`.request` (:class:`CollectiveRequest` and its defaults) and :mod:`.tolerance` (the
family's one tolerance rule); every name stays importable from ``coalloc.collective.model``.
"""

from .pool import BLOCK, ResourcePool
from .request import DEFAULT_HORIZON, DEFAULT_MINIMUM, CollectiveRequest
from .tolerance import TOLERANCE, tolerances

__all__ = [
    "ResourcePool",
    "CollectiveRequest",
    "DEFAULT_HORIZON",
    "DEFAULT_MINIMUM",
    "TOLERANCE",
    "tolerances",
    "BLOCK",
]
