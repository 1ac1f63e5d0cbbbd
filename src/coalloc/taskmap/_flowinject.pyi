"""Type stub for ``coalloc.taskmap._flowinject`` (src/_core/taskmap/_flowinject.cpp).

Hierarchical clustering by stochastic flow injection (Taura & Chien 2000, section 4.3) and
the depth-first task order of the cluster tree; slow twin in
:mod:`coalloc.taskmap._reference.flowinject`, public API :func:`coalloc.taskmap.flow_injection`.
"""

from typing import Any, Dict

import numpy.typing as npt

def cluster(
    indptr: npt.ArrayLike,
    indices: npt.ArrayLike,
    data: npt.ArrayLike,
    node_weight: npt.ArrayLike,
    delta: float = 0.0,
    delta_scale: float = 0.05,
    metric: str = "hops",
    seed: int = 0,
    min_cluster_size: int = 1,
    inherit: bool = False,
    max_injections: int = 1000000,
) -> Dict[str, Any]:
    """Cluster tree of a symmetric CSR graph (GIL released during the computation).

    Returns ``order``, ``parent``, ``task``, ``kind`` (0 leaf, 1 flow, 2 components,
    3 flat, 4 forced), ``child_start``, ``child_count``, ``injections``, ``delta``,
    ``depth``, ``start``, ``stop`` (ndarrays) and ``counters`` (dict of ints).
    ValueError on malformed arrays or parameters.
    """
