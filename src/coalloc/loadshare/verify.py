"""Independent checks of load-sharing placements and GAP assignments.

Shares no code with the solvers: loads are summed job by job in plain Python, the
throughput recomputed from them, and claims compared with a tolerance.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Optional

import numpy as np

from .._shared.result import Report

__all__ = ["PlacementReport", "verify_placement", "GapReport", "verify_gap"]


@dataclass
class PlacementReport(Report):
    """What :func:`verify_placement` found.

    Parameters
    ----------
    valid : bool
        One node in range for every job.
    throughput : float
        Recomputed ``sum_i min(load_i, capacity_i)``.
    bound : float
        Recomputed ``min(total load, total capacity)``.
    claimed : float or None
        The throughput the caller claimed, if any.
    matches : bool
        The claim equals the recomputed throughput (relative 1e-9), and it is within the bound.
    problems : list of str
        Why the placement is not valid.

    Examples
    --------
    >>> import coalloc.loadshare as ls
    >>> problem = ls.LoadSharingProblem([10, 10, 10], [8, 7, 6, 3], [0, 0, 0, 1])
    >>> report = ls.verify_placement(problem, [0, 1, 2, 1], claimed=24.0)
    >>> print(report)
    valid placement, throughput 24 of bound 24; claimed 24 (ok)
    >>> report.valid, report.matches
    (True, True)
    """

    valid: bool
    throughput: float
    bound: float
    claimed: Optional[float] = None
    matches: bool = True
    problems: list = field(default_factory=list)

    @property
    def ok(self) -> bool:
        """Valid and matching any claim."""
        return bool(self.valid and self.matches)

    def to_dict(self) -> dict:
        """JSON-ready dictionary.

        Returns
        -------
        dict
            ``ok``, ``valid``, ``throughput``, ``bound``, ``claimed``, ``matches`` and the
            other findings of :func:`verify_placement`.

        Examples
        --------
        >>> import coalloc.loadshare as ls
        >>> prob = ls.LoadSharingProblem([10, 10, 10], [8, 7, 6, 3], [0, 0, 0, 1])
        >>> data = ls.verify_placement(prob, [0, 1, 2, 1], claimed=24.0).to_dict()
        >>> data["ok"], data["throughput"], data["matches"]
        (True, 24.0, True)
        """
        return {"ok": self.ok, "valid": self.valid, "throughput": self.throughput,
                "bound": self.bound, "claimed": self.claimed, "matches": self.matches,
                "problems": list(self.problems)}  # fmt: skip

    def __str__(self) -> str:
        s = f"{'valid' if self.valid else 'INVALID'} placement, throughput {self.throughput:.6g}"
        s += f" of bound {self.bound:.6g}"
        if self.claimed is not None:
            s += f"; claimed {self.claimed:.6g} ({'ok' if self.matches else 'MISMATCH'})"
        return s + "".join(f"\n  {p}" for p in self.problems)


def _node_index(node: Any, n: int) -> bool:
    """Whether ``node`` is an integer in ``[0, n)`` (whole floats included; never a bool)."""
    if isinstance(node, (bool, np.bool_)) or not isinstance(node, (int, float, np.number)):
        return False
    if isinstance(node, (int, np.integer)):  # never through float: 10**400 would overflow
        return 0 <= node < n
    return math.isfinite(node) and float(node).is_integer() and 0 <= node < n


def verify_placement(problem: Any, placement: Any, *, claimed: Optional[float] = None,
                     tol: float = 1e-9) -> PlacementReport:  # fmt: skip
    """Check a placement (the node of every job) of a load-sharing problem.

    Parameters
    ----------
    problem : LoadSharingProblem
    placement : sequence of int
        Node of each job.
    claimed : float, optional
        A throughput to check.
    tol : float
        Relative tolerance of the comparison.

    Returns
    -------
    PlacementReport

    Examples
    --------
    >>> from coalloc.loadshare import LoadSharingProblem, verify_placement
    >>> verify_placement(LoadSharingProblem([4, 4], [3, 3], [0, 0]), [0, 1]).throughput
    6.0
    """
    cap = [float(c) for c in list(problem.capacity)]
    sizes = [float(s) for s in list(problem.job_size)]
    n = len(cap)
    problems = []
    if isinstance(placement, (str, bytes, dict)) or not hasattr(placement, "__iter__"):
        raise TypeError(f"placement must be a sequence of node indices, got "
                        f"{type(placement).__name__}")  # fmt: skip
    if claimed is not None and (isinstance(claimed, bool)
                                or not isinstance(claimed, (int, float, np.number))):
        raise TypeError(f"claimed must be a number, got {type(claimed).__name__}")
    if claimed is not None and isinstance(claimed, int) and abs(claimed) > 2**1023:
        raise ValueError("claimed is too large for a float")
    place = list(placement)
    if len(place) != len(sizes):
        problems.append(f"placement has {len(place)} entries for {len(sizes)} jobs")
    load = [0.0] * n
    for j, node in enumerate(place[: len(sizes)]):
        if not _node_index(node, n):
            problems.append(f"job {j} is placed on {node!r}, not a node")
            continue
        load[int(node)] += sizes[j]
    valid = not problems
    tput = math.fsum(min(load[i], cap[i]) for i in range(n)) if valid else float("nan")
    bound = min(math.fsum(sizes), math.fsum(cap))
    matches = True
    # Relative tolerances only: a problem in other units (sizes of 1e-9 or 1e12) is judged
    # the same way.
    if valid and tput > bound * (1 + tol):
        problems.append(f"throughput {tput} exceeds the bound {bound}")
        matches = False
    if claimed is not None and valid:
        if abs(float(claimed) - tput) > tol * max(abs(tput), abs(float(claimed))) * 10:
            problems.append(f"claimed throughput {claimed} but recomputed {tput}")
            matches = False
    return PlacementReport(valid, tput, bound, claimed, matches, problems)


@dataclass
class GapReport(Report):
    """What :func:`verify_gap` found.

    Parameters
    ----------
    feasible : bool
        Every assignment in range, every capacity respected, and every item assigned when
        required.
    objective : float
        Recomputed total cost (or profit) of the assigned items.
    unassigned : int
        Items left out.
    claimed : float or None
        The objective the caller claimed, if any.
    matches : bool
        The claim equals the recomputed objective.
    problems : list of str
        Why the assignment is not feasible.

    Examples
    --------
    >>> import coalloc.loadshare as ls
    >>> gap = ls.GapInstance([[1, 3], [2, 1]], [[2, 2], [2, 2]], [2, 2])
    >>> report = ls.verify_gap(gap, [0, 1], claimed=2)
    >>> print(report)
    feasible assignment, objective 2, 0 unassigned; claimed 2 (ok)
    >>> report.feasible, report.unassigned
    (True, 0)
    """

    feasible: bool
    objective: float
    unassigned: int
    claimed: Optional[float] = None
    matches: bool = True
    problems: list = field(default_factory=list)

    @property
    def ok(self) -> bool:
        """Feasible and matching any claim."""
        return bool(self.feasible and self.matches)

    def to_dict(self) -> dict:
        """JSON-ready dictionary.

        Returns
        -------
        dict
            ``ok``, ``feasible``, ``objective``, ``unassigned``, ``claimed`` and the other
            findings of :func:`verify_gap`.

        Examples
        --------
        >>> from coalloc.loadshare import GapInstance, verify_gap
        >>> inst = GapInstance([[1, 2], [3, 1]], [[1, 1], [1, 1]], [1, 1])
        >>> data = verify_gap(inst, [0, 1], claimed=2).to_dict()
        >>> data["ok"], data["feasible"], data["objective"], data["unassigned"]
        (True, True, 2.0, 0)
        """
        return {"ok": self.ok, "feasible": self.feasible, "objective": self.objective,
                "unassigned": self.unassigned, "claimed": self.claimed,
                "matches": self.matches, "problems": list(self.problems)}  # fmt: skip

    def __str__(self) -> str:
        s = f"{'feasible' if self.feasible else 'INFEASIBLE'} assignment, objective "
        s += f"{self.objective:.10g}, {self.unassigned} unassigned"
        if self.claimed is not None:
            s += f"; claimed {self.claimed:.10g} ({'ok' if self.matches else 'MISMATCH'})"
        return s + "".join(f"\n  {p}" for p in self.problems)


def verify_gap(instance: Any, assignment: Any, *, assign_all: bool = True,
               claimed: Optional[float] = None) -> GapReport:  # fmt: skip
    """Check a GAP assignment (agent of every item, -1 = unassigned).

    Parameters
    ----------
    instance : GapInstance
    assignment : sequence of int
    assign_all : bool, default True
        Every item must be assigned.
    claimed : float, optional
        An objective to check (exactly for integer data).

    Returns
    -------
    GapReport

    Examples
    --------
    >>> from coalloc.loadshare import GapInstance, verify_gap
    >>> inst = GapInstance([[1, 2]], [[1, 1]], [2])
    >>> verify_gap(inst, [0, 0]).objective
    3.0
    """
    cost = [[c for c in row] for row in instance.cost.tolist()]
    weight = [[int(w) for w in row] for row in instance.weight.tolist()]
    capacity = [int(c) for c in instance.capacity.tolist()]
    m, n = len(capacity), len(cost[0]) if cost else 0
    problems = []
    a = list(assignment)
    if len(a) != n:
        problems.append(f"assignment has {len(a)} entries for {n} items")
    used = [0] * m
    total = 0
    unassigned = 0
    for j, agent in enumerate(a[:n]):
        if isinstance(agent, bool) or int(agent) != agent or not -1 <= int(agent) < m:
            problems.append(f"item {j} is assigned to {agent!r}, not an agent")
            continue
        agent = int(agent)
        if agent < 0:
            unassigned += 1
            continue
        used[agent] += weight[agent][j]
        total += cost[agent][j]
    if assign_all and unassigned:
        problems.append(f"{unassigned} item(s) unassigned")
    for i in range(m):
        if used[i] > capacity[i]:
            problems.append(f"agent {i} uses {used[i]} > capacity {capacity[i]}")
    feasible = not problems
    matches = True
    # Relative to the largest objective the costs allow, so that costs in any unit (1e-9 or
    # 1e12) are judged alike; exact for integer costs below 1e9 in total.
    largest = math.fsum(max(abs(row[j]) for row in cost) for j in range(n)) if cost else 0.0
    slack = 1e-9 * max(largest, abs(total))
    if claimed is not None and abs(float(claimed) - float(total)) > slack:
        problems.append(f"claimed objective {claimed} but recomputed {total}")
        matches = False
    return GapReport(feasible, float(total), unassigned, claimed, matches, problems)
