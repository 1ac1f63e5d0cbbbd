"""The model of collective co-allocation (Cankar et al. 2013, section 2).

Three modules, one idea each; every name stays importable from ``coalloc.collective.model``:

* :mod:`.pool`: :class:`ResourcePool`, ``n`` nodes with capacities, labels and a timetable
  of reserved amounts per node and property (a step function in continuous time), with its
  ledger (reserve, release, trim) and the candidate starts of a request;
* :mod:`.request`: :class:`CollectiveRequest`, ``count`` nodes for ``duration`` seconds
  starting in ``[earliest_start, latest_start]``, with a per-node minimum ``e_i`` and a total
  ``d_i`` per property, and its defaults (:data:`DEFAULT_HORIZON`, :data:`DEFAULT_MINIMUM`);
* :mod:`.tolerance`: the family's one tolerance rule (:data:`TOLERANCE`).
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
