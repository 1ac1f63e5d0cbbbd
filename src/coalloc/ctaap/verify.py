"""Independent feasibility check of an allocation against constraints (1)-(5) of Kravtsov et al.

``verify`` is written in plain vectorised NumPy and shares no code with the solvers, so the
tests can use it as the referee for every solver output.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import scipy.sparse as sp

from .._shared.docs import filled
from .._shared.result import Report
from .model import Offer, Request, check_compatible

__all__ = ["VerifyReport", "verify", "as_assignment"]

#: Constraint labels, in the paper's numbering.
CONSTRAINTS = {
    1: "each task on at most one cluster",
    2: "cluster capacity",
    3: "task properties fit the cluster's machines",
    4: "pairwise bandwidth",
    5: "binary decision",
}

# Number of request-edge entries examined at once; bounds verify's temporary memory.
_CHUNK = 1 << 22


@dataclass(frozen=True)
class AssignmentReport(Report):
    """What :func:`verify` found.

    Parameters
    ----------
    n_tasks : int
        Number of tasks in the request.
    n_allocated : int
        Number of tasks placed on some cluster (the objective of the paper).
    violations : dict of int to int
        Number of violated instances of each constraint (1)-(5): for (1) tasks on more than
        one cluster, for (2) clusters over capacity, for (3) placed (task, cluster) pairs that
        do not fit, for (4) ordered task pairs ``(i, k)`` with ``B[i, k]`` above the bandwidth
        between their clusters, for (5) non-binary entries.
    examples : dict of int to list
        Up to ten offending items per constraint, to help debugging.

    Examples
    --------
    >>> import coalloc.ctaap as ct
    >>> request = ct.Request({"cpu": [10, 20, 30]}, bandwidth=[[0, 5, 0], [5, 0, 2], [0, 2, 0]])
    >>> offer = ct.Offer({"cpu": [25, 40]}, capacity=[1, 2], bandwidth=[[4, 3], [3, 6]])
    >>> report = ct.verify(request, offer, [-1, 1, 1])
    >>> print(report)
    2/3 tasks allocated, feasible
    >>> ct.verify(request, offer, [0, 0, 1]).violations   # cluster 0: 1 machine, bandwidth 4
    {1: 0, 2: 1, 3: 0, 4: 2, 5: 0}
    """

    n_tasks: int
    n_allocated: int
    violations: dict
    examples: dict = field(default_factory=dict, repr=False)

    @property
    def feasible(self) -> bool:
        """True when no constraint is violated."""
        return not any(self.violations.values())

    @property
    def ok(self) -> bool:
        """Same as :attr:`feasible` (the shared report interface)."""
        return self.feasible

    @property
    def n_violations(self) -> int:
        """Total number of violations over all constraints."""
        return int(sum(self.violations.values()))

    def to_dict(self) -> dict:
        """A JSON-ready dictionary.

        Returns
        -------
        dict
            ``n_tasks``, ``n_allocated``, ``feasible`` and ``violations`` (constraint
            number, as a string, -> count).

        Examples
        --------
        >>> import coalloc.ctaap as ct
        >>> request = ct.Request({"cpu": [10, 20, 30]}, bandwidth=[[0, 5, 0], [5, 0, 2], [0, 2, 0]])
        >>> offer = ct.Offer({"cpu": [25, 40]}, capacity=[1, 2], bandwidth=[[4, 3], [3, 6]])
        >>> ct.verify(request, offer, [1, 1, 1]).to_dict()
        {'n_tasks': 3, 'n_allocated': 3, 'feasible': False,
         'violations': {'1': 0, '2': 1, '3': 0, '4': 0, '5': 0}}
        """
        return {
            "n_tasks": self.n_tasks,
            "n_allocated": self.n_allocated,
            "feasible": self.feasible,
            "violations": {str(k): int(v) for k, v in self.violations.items()},
        }

    def __str__(self) -> str:
        state = "feasible" if self.feasible else f"INFEASIBLE ({self.n_violations} violations)"
        parts = [f"{self.n_allocated}/{self.n_tasks} tasks allocated, {state}"]
        for c, v in self.violations.items():
            if v:
                parts.append(f"  ({c}) {CONSTRAINTS[c]}: {v}")
        return "\n".join(parts)


#: The older name of :class:`AssignmentReport`.
VerifyReport = AssignmentReport


def as_assignment(assignment: Any, n: int, m: int, argname: str = "assignment") -> np.ndarray:
    """Validate a task -> cluster vector and return it as a fresh int64 array.

    Parameters
    ----------
    assignment : array_like of int, shape (n,)
        Cluster of each task, or -1 when the task is not allocated.
    n, m : int
        Number of tasks and clusters.
    argname : str
        Name used in error messages.

    Returns
    -------
    ndarray of int64
    """
    arr = np.asarray(assignment)
    if arr.ndim != 1 or arr.shape[0] != n:
        raise ValueError(f"{argname} must have shape ({n},), got {arr.shape}")
    if arr.size and not np.issubdtype(arr.dtype, np.integer):
        if np.issubdtype(arr.dtype, np.floating) and np.all(arr == np.round(arr)):
            arr = arr.astype(np.int64)
        else:
            raise TypeError(f"{argname} must hold integers (cluster index or -1)")
    out = np.array(arr, dtype=np.int64)
    bad = (out < -1) | (out >= m)
    if np.any(bad):
        i = int(np.flatnonzero(bad)[0])
        raise ValueError(f"{argname}[{i}] = {out[i]} is not a cluster index in [0, {m}) nor -1")
    return out


def _pairs_from_matrix(x: np.ndarray, n: int, m: int):
    """(task, cluster) pairs of a 0/1 matrix plus violations of (1) and (5)."""
    arr = np.asarray(x, dtype=np.float64)
    if arr.shape != (n, m):
        raise ValueError(f"assignment matrix must have shape ({n}, {m}), got {arr.shape}")
    nonbinary = np.flatnonzero(((arr != 0) & (arr != 1)).ravel())
    tasks, clusters = np.nonzero(arr != 0)
    per_task = np.bincount(tasks, minlength=n)
    multi = np.flatnonzero(per_task > 1)
    return tasks.astype(np.int64), clusters.astype(np.int64), multi, nonbinary


def _bandwidth_violations(B: sp.csr_array, bhat: np.ndarray, tasks, clusters):
    """Count ordered (i, k) pairs, over all placements, that break constraint (4)."""
    n = B.shape[0]
    count = 0
    examples = []
    single = np.bincount(tasks, minlength=n).max(initial=0) <= 1
    if single:
        where = np.full(n, -1, dtype=np.int64)
        where[tasks] = clusters
        indptr, indices, data = B.indptr, B.indices, B.data
        rows_per_chunk = max(1, _CHUNK // max(1, B.nnz // max(n, 1)))
        for start in range(0, n, rows_per_chunk):
            stop = min(n, start + rows_per_chunk)
            lo, hi = indptr[start], indptr[stop]
            rows = np.repeat(np.arange(start, stop), np.diff(indptr[start : stop + 1]))
            cols = indices[lo:hi]
            b = data[lo:hi]
            a_r, a_c = where[rows], where[cols]
            placed = (a_r >= 0) & (a_c >= 0) & (rows != cols)
            bad = np.zeros_like(placed)
            bad[placed] = b[placed] > bhat[a_r[placed], a_c[placed]]
            count += int(bad.sum())
            if len(examples) < 10 and bad.any():
                for e in np.flatnonzero(bad)[: 10 - len(examples)]:
                    examples.append((int(rows[e]), int(cols[e])))
        return count, examples
    # General case (a task on several clusters, already a violation of (1)): every pair
    # of placements of a linked pair of tasks is checked.
    coo = B.tocoo()
    by_task: dict = {}
    for t, c in zip(tasks.tolist(), clusters.tolist()):
        by_task.setdefault(t, []).append(c)
    for i, k, b in zip(coo.row.tolist(), coo.col.tolist(), coo.data.tolist()):
        if i == k or i not in by_task or k not in by_task:
            continue
        for j in by_task[i]:
            for l in by_task[k]:
                if b > bhat[j, l]:
                    count += 1
                    if len(examples) < 10:
                        examples.append((i, k))
    return count, examples


@filled
def verify(request: Request, offer: Offer, assignment: Any) -> VerifyReport:
    """Check an allocation against constraints (1)-(5) of the CTAAP model.

    Parameters
    ----------
    %(ctaap_graphs)s
    assignment : array_like
        Either an integer vector of length ``n`` (cluster of each task, -1 when not
        allocated) or an ``(n, m)`` allocation matrix ``X`` (as an integer program returns
        it; then constraints (1) and (5) are checked too).

    Returns
    -------
    VerifyReport
        Violations per constraint and the allocation size.

    Examples
    --------
    >>> import coalloc
    >>> req = coalloc.Request({"cpu": [1, 2]}, bandwidth=[[0, 5], [5, 0]])
    >>> off = coalloc.Offer({"cpu": [2]}, capacity=[2], bandwidth=[[4]])
    >>> coalloc.verify(req, off, [0, 0]).violations[4]
    2
    """
    check_compatible(request, offer)
    n, m = request.n, offer.m
    arr = np.asarray(assignment)
    multi = nonbinary = np.zeros(0, dtype=np.int64)
    if arr.ndim == 2:
        tasks, clusters, multi, nonbinary = _pairs_from_matrix(arr, n, m)
    else:
        vec = as_assignment(arr, n, m)
        tasks = np.flatnonzero(vec >= 0).astype(np.int64)
        clusters = vec[tasks]

    load = np.bincount(clusters, minlength=m)
    over = np.flatnonzero(load > offer.capacity)

    misfit = np.zeros(tasks.shape[0], dtype=bool)
    for name, need in request.properties.items():
        misfit |= need[tasks] > offer.properties[name][clusters]

    bw_count, bw_examples = _bandwidth_violations(
        request.bandwidth, offer.bandwidth, tasks, clusters
    )

    violations = {
        1: int(multi.size),
        2: int(over.size),
        3: int(misfit.sum()),
        4: int(bw_count),
        5: int(nonbinary.size),
    }
    examples = {
        1: multi[:10].tolist(),
        2: over[:10].tolist(),
        3: list(zip(tasks[misfit][:10].tolist(), clusters[misfit][:10].tolist())),
        4: bw_examples,
        5: nonbinary[:10].tolist(),
    }
    return VerifyReport(
        n_tasks=n,
        n_allocated=int(np.unique(tasks).size),
        violations=violations,
        examples=examples,
    )
