"""The load-sharing model of Hovey & Jung: nodes, capacities, jobs and origins.

A grid of ``n`` nodes with capacities ``capacity[i]`` (Mflops/s) receives ``J`` indivisible
CPU-intensive jobs; job ``j`` has size ``job_size[j]`` (Mflops) and arrived at node
``job_origin[j]``. Jobs are listed in arrival order. A *placement* gives the node of every
job; its throughput is ``sum_i min(load_i, capacity_i)`` (one second of work; whatever exceeds
a node's capacity waits in its queue). With no sharing at all (every job stays where it
arrived) this is Condor's first come first served figure.
"""

from __future__ import annotations

from typing import Any, Optional

import numpy as np

from .._shared.docs import filled
from .._shared.validation import nonnegative_vector, readonly

__all__ = ["LoadSharingProblem", "throughput_of", "node_loads"]


class LoadSharingProblem:
    """A validated, read-only load-sharing problem.

    Parameters
    ----------
    capacity : array_like of float, shape (n,)
        Node capacities (Mflops/s), finite and positive.
    job_size : array_like of float, shape (J,)
        Job sizes (Mflops), finite and non-negative, in arrival order.
    job_origin : array_like of int, shape (J,)
        The node each job arrived at, in ``[0, n)``.
    groups : array_like of int, shape (n,), optional
        Administrative domain of each node (``0..g-1``); default one domain.

    Raises
    ------
    TypeError
        Non-numeric input.
    ValueError
        Wrong shapes, NaN/inf, negative sizes, non-positive capacities, origins or groups
        out of range.

    Examples
    --------
    >>> from coalloc.loadshare import LoadSharingProblem
    >>> p = LoadSharingProblem([10, 10], [6, 6, 5], [0, 0, 1])
    >>> p.n_nodes, p.n_jobs, p.total_load, p.bound
    (2, 3, 17.0, 17.0)
    """

    def __init__(
        self,
        capacity: Any,
        job_size: Any,
        job_origin: Any,
        groups: Optional[Any] = None,
    ) -> None:
        cap = nonnegative_vector(capacity, "capacity")
        if cap.shape[0] == 0:
            raise ValueError("capacity must name at least one node")
        if np.any(cap <= 0):
            raise ValueError("capacity must be positive for every node")
        size = nonnegative_vector(job_size, "job_size")
        for argname, values in (("capacity", cap), ("job_size", size)):
            with np.errstate(over="ignore"):
                total = float(values.sum())
            if not np.isfinite(total):  # the solvers and verify add them up
                raise ValueError(f"{argname} sums to more than the largest float")
        origin = _index_vector(job_origin, "job_origin", size.shape[0], cap.shape[0])
        if groups is None:
            grp = np.zeros(cap.shape[0], dtype=np.int64)
        else:
            grp = _index_vector(groups, "groups", cap.shape[0], None)
        self.capacity = cap
        self.job_size = size
        self.job_origin = origin
        self.groups = grp
        readonly(cap, size, origin, grp)
        self.load = np.bincount(origin, weights=size, minlength=cap.shape[0]).astype(np.float64)
        readonly(self.load)

    # ------------------------------------------------------------------ sizes and bounds
    @property
    def n_nodes(self) -> int:
        """Number of nodes."""
        return int(self.capacity.shape[0])

    @property
    def n_jobs(self) -> int:
        """Number of jobs."""
        return int(self.job_size.shape[0])

    @property
    def n_groups(self) -> int:
        """Number of administrative domains."""
        return int(self.groups.max()) + 1 if self.n_nodes else 0

    @property
    def total_load(self) -> float:
        """Sum of the job sizes."""
        return float(self.job_size.sum())

    @property
    def total_capacity(self) -> float:
        """Sum of the capacities."""
        return float(self.capacity.sum())

    @property
    def bound(self) -> float:
        """``min(total load, total capacity)``: no placement does better (divisible jobs)."""
        return min(self.total_load, self.total_capacity)

    @property
    def indivisible_bound(self) -> float:
        """A bound for indivisible jobs, never above :attr:`bound`.

        A job at least as large as the largest capacity saturates the node it is on and
        contributes nothing beyond it; ``k`` such jobs sit on at most ``k`` nodes, so the
        throughput is at most the ``k`` largest capacities plus the sizes of the other jobs
        (and at most the total capacity).
        """
        big = self.job_size >= self.capacity.max()
        k = int(big.sum())
        if k >= self.n_nodes:
            return self.total_capacity
        top = float(np.sort(self.capacity)[::-1][:k].sum())
        return min(self.total_capacity, float(self.job_size[~big].sum()) + top)

    @property
    def fcfs_throughput(self) -> float:
        """Throughput with no sharing (every job stays where it arrived)."""
        return float(np.minimum(self.load, self.capacity).sum())

    def size_order(self) -> np.ndarray:
        """Every job, largest first (ties in arrival order): the order of best fit and
        first fit decreasing (``np.argsort(-job_size, kind="stable")``, by a compiled sort
        that a time limit stops). Sorted once per problem and kept beside it
        (:func:`coalloc._shared.caches.cache_of`: not on the model, not in its pickles;
        read-only): 563,000 jobs took 0.4 s to sort on a loaded machine, more than a short
        time limit.

        Returns
        -------
        numpy.ndarray
            The job indices (int64, read-only).

        Examples
        --------
        >>> from coalloc.loadshare import LoadSharingProblem
        >>> LoadSharingProblem([10], [2, 5, 2], [0, 0, 0]).size_order().tolist()
        [1, 0, 2]
        """
        from .._shared.caches import cache_of

        cache = cache_of(self)
        order = cache.get("size_order")
        if order is None:
            # the compiled sort polls the time limit in force (NumPy's cannot be stopped:
            # 0.1-0.9 s on 563,000 jobs under load, before any deadline was looked at);
            # stopped, it raises and nothing is kept
            from .._shared.interrupt import kernel_deadline
            from ._dmcf import size_order

            order = np.empty(self.n_jobs, dtype=np.int64)
            size_order(self.job_size, order, kernel_deadline())
            readonly(order)
            cache["size_order"] = order
        return order

    def report_order(self) -> np.ndarray:
        """The order in which node-agents report "Mflops ok" (their arrivals complete).

        A node reports when its last job has arrived (nodes without jobs first, then by the
        arrival position of their last job; ties by node id). First come first served
        coalitions are formed in this order.

        Returns
        -------
        ndarray of int64, shape (n_nodes,)
            The node ids in reporting order.

        Examples
        --------
        >>> from coalloc.loadshare import LoadSharingProblem
        >>> prob = LoadSharingProblem([10, 10, 10, 10], [5, 5, 5], [2, 0, 2])
        >>> prob.report_order().tolist()
        [1, 3, 0, 2]
        """
        last = np.full(self.n_nodes, -1, dtype=np.int64)
        if self.n_jobs:
            last[self.job_origin] = np.arange(self.n_jobs)  # later jobs overwrite earlier
        return np.lexsort((np.arange(self.n_nodes), last)).astype(np.int64)

    def __repr__(self) -> str:
        return (
            f"LoadSharingProblem(n_nodes={self.n_nodes}, n_jobs={self.n_jobs}, "
            f"load={self.total_load:.6g}, capacity={self.total_capacity:.6g})"
        )


def _index_vector(values: Any, argname: str, length: int, upper: Optional[int]) -> np.ndarray:
    try:
        arr = np.array(values)
    except (TypeError, ValueError) as exc:  # pragma: no cover - ragged input
        raise TypeError(f"{argname} must be a 1-D integer array: {exc}") from None
    if arr.ndim != 1:
        raise ValueError(f"{argname} must be 1-D, got shape {arr.shape}")
    if arr.shape[0] != length:
        raise ValueError(f"{argname} has length {arr.shape[0]}, expected {length}")
    if arr.size and arr.dtype.kind not in "iu":
        if arr.dtype.kind == "f" and np.all(np.isfinite(arr)) and np.all(arr == np.round(arr)):
            arr = arr.astype(np.int64)
        else:
            raise TypeError(f"{argname} must hold integers, got dtype {arr.dtype}")
    arr = arr.astype(np.int64)
    if arr.size and arr.min() < 0:
        raise ValueError(f"{argname} must be non-negative, found {int(arr.min())}")
    if upper is not None and arr.size and arr.max() >= upper:
        raise ValueError(f"{argname} must be < {upper} (the number of nodes), found {arr.max()}")
    if upper is None and arr.size:
        present = np.unique(arr)
        if present.shape[0] != int(arr.max()) + 1:
            raise ValueError(f"{argname} must number the groups 0..g-1 without gaps")
    return arr


@filled
def node_loads(problem: LoadSharingProblem, placement: np.ndarray) -> np.ndarray:
    """Load of every node under ``placement`` (the node of each job).

    Parameters
    ----------
    %(loadshare_problem)s
    placement : ndarray of int64, shape (J,)
        The node of every job (trusted: from a solver).

    Returns
    -------
    ndarray of float64, shape (n,)
        Total size of the jobs placed on each node.

    Examples
    --------
    >>> import coalloc.loadshare as ls
    >>> problem = ls.LoadSharingProblem([10, 10, 10], [8, 7, 6, 3], [0, 0, 0, 1])
    >>> ls.node_loads(problem, [0, 0, 0, 1]).tolist()      # every job where it arrived
    [21.0, 3.0, 0.0]
    """
    return np.bincount(placement, weights=problem.job_size, minlength=problem.n_nodes)


@filled
def throughput_of(problem: LoadSharingProblem, placement: np.ndarray) -> float:
    """``sum_i min(load_i, capacity_i)`` of a placement (trusted: from a solver).

    Parameters
    ----------
    %(loadshare_problem)s
    placement : ndarray of int64, shape (J,)
        The node of every job.

    Returns
    -------
    float
        The throughput of the placement.

    Examples
    --------
    >>> import coalloc.loadshare as ls
    >>> problem = ls.LoadSharingProblem([10, 10, 10], [8, 7, 6, 3], [0, 0, 0, 1])
    >>> ls.throughput_of(problem, [0, 0, 0, 1]), ls.throughput_of(problem, [0, 1, 2, 1])
    (13.0, 24.0)
    """
    return float(np.minimum(node_loads(problem, placement), problem.capacity).sum())
