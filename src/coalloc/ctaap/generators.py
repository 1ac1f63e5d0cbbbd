"""Random instances of the experimental setups of Kravtsov et al., section 4.

All generators are seeded and reproducible: the same arguments give the same instance on
every platform (NumPy's PCG64 through :func:`numpy.random.default_rng`).

* Fig. 2: a request of 50 tasks whose properties and pairwise bandwidths are uniform
  integers in 1..100; an offer of 5 clusters with capacity uniform in 1..11 whose
  properties and bandwidths (inter- and intra-cluster) are uniform in 1..100*r for the
  range factor r = 1..5.
* Fig. 3: a request of n tasks as above; 5 clusters with capacity uniform in 1..n/5 and
  properties and bandwidths uniform in 1..200.

The paper does not say whether every pair of tasks communicates; we take the request graph
as complete (every pair has a bandwidth in 1..100), the hardest reading, and offer an
``edge_probability`` for sparser graphs.
"""

from __future__ import annotations

from numbers import Integral, Real
from typing import Optional, Sequence, Tuple

import numpy as np
import scipy.sparse as sp

from .._shared.constraints import (
    NO_VALIDATION,
    Boolean,
    InstanceOf,
    Interval,
    Predicate,
    Table,
    checked,
)
from .model import Offer, Request

__all__ = ["random_instance", "fig2", "fig3", "PROPERTY_NAMES", "GENERATORS"]

#: The two quantitative properties the paper uses.
PROPERTY_NAMES = ("cpu", "mem")

_SIZE = [Interval(Integral, 0, None, closed="left")]
_HIGH = [Interval(Integral, 1, None, closed="left")]


def _range_ok(pair) -> bool:
    return (len(pair) == 2 and all(_SIZE[0].accepts(v) for v in pair)
            and pair[0] <= pair[1])  # fmt: skip


#: Each generator's parameters, declared once (as the methods' tables,
#: :mod:`coalloc.ctaap.constraints`): checked at every call (``@checked``), and the source
#: of ``tests/shared/test_checked.py``'s invalid-value tests. ``seed`` follows the seed
#: policy (:func:`coalloc._shared.seeding.check_seed`).
GENERATORS = {
    "random_instance": Table(
        {
            "n_tasks": _SIZE,
            "n_clusters": _SIZE,
            "request_high": _HIGH,
            "offer_high": _HIGH,
            "capacity_range": [InstanceOf((tuple, list), "a pair (low, high) of integers")],
            "edge_probability": [Interval(Real, 0, 1)],
            "properties": NO_VALIDATION,  # the names: the model checks them
            "sparse": [Boolean(), None],
        },
        relations=[Predicate(("capacity_range",), _range_ok,
                             "capacity_range must be (low, high) with 0 <= low <= high, "
                             "got {capacity_range}")],  # fmt: skip
    ),
    "fig2": {"range_factor": _HIGH, "n_tasks": _SIZE, "n_clusters": _SIZE},
    "fig3": {"n_tasks": _SIZE, "n_clusters": _SIZE},
}


def _symmetric_bandwidth(rng, n: int, high: int, p: float, sparse: bool):
    """Symmetric integer bandwidth in 1..high on each pair with probability ``p``.

    With ``p < 1`` the number of links is drawn first (binomial) and the pairs are sampled
    without replacement, so sparse requests cost O(links), not O(n^2).
    """
    if p >= 1.0:
        iu, ju = np.triu_indices(n, k=1)
    else:
        pairs = n * (n - 1) // 2
        count = int(rng.binomial(pairs, p)) if pairs else 0
        t = np.sort(rng.choice(pairs, size=count, replace=False)).astype(np.int64)
        # Row of the t-th upper-triangle pair (row-major), then its column.
        iu = (
            n
            - 2
            - np.floor(np.sqrt(4.0 * n * (n - 1) - 8.0 * t - 7.0) / 2.0 - 0.5).astype(np.int64)
        )
        ju = t + iu + 1 - n * (n - 1) // 2 + (n - iu) * (n - iu - 1) // 2
    vals = rng.integers(1, high + 1, size=iu.size).astype(np.float64)
    rows = np.concatenate([iu, ju])
    cols = np.concatenate([ju, iu])
    data = np.concatenate([vals, vals])
    mat = sp.csr_array((data, (rows, cols)), shape=(n, n))
    return mat if sparse else mat.toarray()


@checked("coalloc.ctaap.generators", "random_instance", tables="GENERATORS")
def random_instance(
    n_tasks: int,
    n_clusters: int,
    *,
    request_high: int = 100,
    offer_high: int = 200,
    capacity_range: Tuple[int, int] = (1, 11),
    edge_probability: float = 1.0,
    properties: Sequence[str] = PROPERTY_NAMES,
    sparse: Optional[bool] = None,
    seed: Optional[int] = 0,
) -> Tuple[Request, Offer]:
    """A random CTAAP instance with uniform integer properties and bandwidths.

    Parameters
    ----------
    n_tasks, n_clusters : int
        Sizes of the request and the offer.
    request_high : int, default 100
        Task properties and bandwidths are uniform in ``1..request_high``.
    offer_high : int, default 200
        Cluster properties and bandwidths (the diagonal too) are uniform in
        ``1..offer_high``.
    capacity_range : (int, int), default (1, 11)
        Inclusive range of the machine count of each cluster.
    edge_probability : float, default 1.0
        Probability that a pair of tasks communicates (1.0: complete request graph).
    properties : sequence of str
        Property names.
    sparse : bool, optional
        Store the request bandwidth as a sparse matrix (default: when
        ``edge_probability < 0.25``).
    seed : int, optional
        Seed of the generator.

    Returns
    -------
    (Request, Offer)

    Examples
    --------
    >>> from coalloc.ctaap import generators
    >>> generators.random_instance(8, 3, seed=0)
    (Request(n=8, properties=['cpu', 'mem'], edges=56, symmetric=True),
     Offer(m=3, properties=['cpu', 'mem'], machines=20))
    """
    lo, hi = capacity_range  # the values were checked by the table (GENERATORS)
    rng = np.random.default_rng(seed)
    if sparse is None:
        sparse = edge_probability < 0.25
    req_props = {p: rng.integers(1, request_high + 1, n_tasks) for p in properties}
    bw = _symmetric_bandwidth(rng, n_tasks, request_high, edge_probability, sparse)
    off_props = {p: rng.integers(1, offer_high + 1, n_clusters) for p in properties}
    cap = rng.integers(lo, hi + 1, n_clusters)
    upper = rng.integers(1, offer_high + 1, (n_clusters, n_clusters)).astype(np.float64)
    bhat = np.triu(upper) + np.triu(upper, 1).T
    return Request(req_props, bw), Offer(off_props, cap, bhat)


@checked("coalloc.ctaap.generators", "fig2", tables="GENERATORS")
def fig2(range_factor: int = 1, *, n_tasks: int = 50, n_clusters: int = 5, seed=0):
    """An instance of the Fig. 2 experiment (allocation quality against the optimum).

    Parameters
    ----------
    range_factor : int, default 1
        ``r``: offer properties and bandwidths are uniform in ``1..100*r``.
    n_tasks : int, default 50
        Number of tasks.
    n_clusters : int, default 5
        Number of clusters of the offer.
    seed : int, optional

    Returns
    -------
    (Request, Offer)

    Examples
    --------
    >>> from coalloc.ctaap import generators
    >>> generators.fig2(2, seed=1)
    (Request(n=50, properties=['cpu', 'mem'], edges=2450, symmetric=True),
     Offer(m=5, properties=['cpu', 'mem'], machines=27))
    """
    return random_instance.__wrapped__(  # its values are these: checked once, by fig's table
        n_tasks,
        n_clusters,
        request_high=100,
        offer_high=100 * int(range_factor),
        capacity_range=(1, 11),
        seed=seed,
    )


@checked("coalloc.ctaap.generators", "fig3", tables="GENERATORS")
def fig3(n_tasks: int, *, n_clusters: int = 5, seed=0):
    """An instance of the Fig. 3 experiment (run time as the request grows).

    Parameters
    ----------
    n_tasks : int
        Number of tasks; cluster capacities are uniform in ``1..max(1, n_tasks // 5)``.
    n_clusters : int, default 5
        Number of clusters of the offer.
    seed : int, optional

    Returns
    -------
    (Request, Offer)

    Examples
    --------
    >>> from coalloc.ctaap import generators
    >>> request, offer = generators.fig3(100, seed=0)
    >>> request.n, offer.m
    (100, 5)
    """
    return random_instance.__wrapped__(  # its values are these: checked once, by fig's table
        n_tasks,
        n_clusters,
        request_high=100,
        offer_high=200,
        capacity_range=(1, max(1, n_tasks // 5)),
        seed=seed,
    )
