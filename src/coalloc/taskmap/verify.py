"""Independent recomputation of the occupancy of a mapping, from scratch.

Shares no code with the load functions of :mod:`coalloc.taskmap.occupancy` or its
:class:`~coalloc.taskmap.occupancy.OccupancyState`: routes are rebuilt node by node from the
predecessor matrix (and checked to be paths between the right processors), and loads are
summed in plain Python over the communication matrix entries as given. Slow; meant for tests
and for checking result files.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Optional

import numpy as np

from .._shared.constraints import checked
from .._shared.result import Report, jsonable
from .model import ResourceGraph, TaskGraph

__all__ = ["MappingReport", "communication_cost", "verify_mapping", "DISTANCES"]

#: The distances :func:`communication_cost` sums volumes over.
DISTANCES = ("inverse_bandwidth", "hops")


@dataclass
class MappingReport(Report):
    """What :func:`verify_mapping` found.

    Parameters
    ----------
    valid : bool
        Every task is on a processor.
    max_occupancy : float
        Recomputed ``max(O(G, P, m))`` (inf when the mapping is not valid).
    bottleneck : tuple
        ``(kind, index)`` of a node or link reaching the maximum.
    node_load, link_load : ndarray
        The load graph.
    claimed : float or None
        The occupancy the caller claimed, if any.
    matches : bool
        ``claimed`` equals the recomputed value within ``tol`` (True when nothing claimed).
    problems : list of str
        Why the mapping is not valid.

    Examples
    --------
    >>> import coalloc.taskmap as tm
    >>> tasks = tm.TaskGraph([1.0, 2.0, 1.5], [[0, 4, 0], [4, 0, 1], [0, 1, 0]])
    >>> res = tm.ResourceGraph.from_edges([0, 3.0, 5.0], [[0, 1], [0, 2]], [50.0, 50.0])
    >>> report = tm.verify_mapping(tasks, res, [2, 2, 1], claimed=0.6)
    >>> report.ok, report.valid, float(report.max_occupancy), report.bottleneck
    (True, True, 0.6, ('node', 2))
    """

    valid: bool
    max_occupancy: float
    bottleneck: tuple
    node_load: np.ndarray = field(repr=False)
    link_load: np.ndarray = field(repr=False)
    claimed: Optional[float] = None
    matches: bool = True
    problems: list = field(default_factory=list)

    @property
    def ok(self) -> bool:
        """The mapping is valid and matches any claimed occupancy."""
        return bool(self.valid and self.matches)

    def to_dict(self) -> dict:
        """A JSON-ready dictionary (without the load arrays).

        Returns
        -------
        dict
            ``valid``, ``ok``, ``max_occupancy``, ``bottleneck``, ``claimed``, ``matches``
            and ``problems``.

        Examples
        --------
        >>> import coalloc.taskmap as tm
        >>> tasks = tm.TaskGraph([1.0, 2.0, 1.5], [[0, 4, 0], [4, 0, 1], [0, 1, 0]])
        >>> res = tm.ResourceGraph.from_edges([0, 3.0, 5.0], [[0, 1], [0, 2]], [50.0, 50.0])
        >>> tm.verify_mapping(tasks, res, [1, 1, 2], claimed=1.0).to_dict()
        {'valid': True, 'ok': True, 'max_occupancy': 1.0, 'bottleneck': ['node', 1],
         'claimed': 1.0, 'matches': True, 'problems': []}
        """
        return {
            "valid": bool(self.valid),
            "ok": self.ok,
            "max_occupancy": float(self.max_occupancy),
            "bottleneck": jsonable(list(self.bottleneck)),
            "claimed": None if self.claimed is None else float(self.claimed),
            "matches": bool(self.matches),
            "problems": list(self.problems),
        }

    def __str__(self) -> str:
        state = "valid" if self.valid else "INVALID"
        s = f"{state} mapping, max occupancy {self.max_occupancy:.6g} at {self.bottleneck}"
        if self.claimed is not None:
            s += f"; claimed {self.claimed:.6g} ({'ok' if self.matches else 'MISMATCH'})"
        for p in self.problems:
            s += f"\n  {p}"
        return s


def _route_links(resources: ResourceGraph, link_of: dict, a: int, b: int) -> list:
    """Links of the fixed route between processors a and b, walked from the predecessors."""
    procs = [int(p) for p in resources.processors]
    row_of = {p: k for k, p in enumerate(procs)}
    src, dst = (a, b) if row_of[a] <= row_of[b] else (b, a)
    pred = resources.predecessors[row_of[src]]
    links = []
    v = dst
    steps = 0
    while v != src:
        u = int(pred[v])
        if u < 0 or (u, v) not in link_of:
            raise AssertionError(f"route {a}-{b}: broken predecessor chain at node {v}")
        links.append(link_of[(u, v)])
        v = u
        steps += 1
        if steps > resources.n_nodes:
            raise AssertionError(f"route {a}-{b}: cycle in the predecessor chain")
    return links


def verify_mapping(
    task_graph: TaskGraph,
    resource_graph: ResourceGraph,
    mapping: Any,
    *,
    claimed: Optional[float] = None,
    tol: float = 1e-9,
) -> MappingReport:
    """Recompute the load and occupancy graphs of ``mapping`` from scratch.

    Parameters
    ----------
    task_graph, resource_graph : TaskGraph, ResourceGraph
    mapping : array_like of int, shape (n,)
        Processor of each task.
    claimed : float, optional
        A maximum occupancy to check against the recomputed one.
    tol : float
        Relative tolerance of the comparison.

    Returns
    -------
    MappingReport
        Validity, the recomputed maximum occupancy and whether ``claimed`` matches it.

    Examples
    --------
    >>> import coalloc.taskmap as tm
    >>> tasks = tm.TaskGraph([1.0, 2.0, 1.5], [[0, 4, 0], [4, 0, 1], [0, 1, 0]])
    >>> res = tm.ResourceGraph.from_edges([0, 3.0, 5.0], [[0, 1], [0, 2]], [50.0, 50.0])
    >>> print(tm.verify_mapping(tasks, res, [2, 2, 1], claimed=0.6))
    valid mapping, max occupancy 0.6 at ('node', 2); claimed 0.6 (ok)
    >>> tm.verify_mapping(tasks, res, [2, 2, 0]).problems
    ['task 2 is on node 0, which is not a processor']
    """
    m = [int(x) for x in np.asarray(mapping).reshape(-1)]
    problems = []
    n = task_graph.n
    if len(m) != n:
        problems.append(f"mapping has {len(m)} entries for {n} tasks")
    for t, p in enumerate(m[:n]):
        if not (0 <= p < resource_graph.n_nodes) or not bool(resource_graph.is_processor[p]):
            problems.append(f"task {t} is on node {p}, which is not a processor")
    node_load = np.zeros(resource_graph.n_nodes)
    link_load = np.zeros(resource_graph.n_links)
    if problems:
        return MappingReport(
            False, math.inf, ("", -1), node_load, link_load, claimed, claimed is None, problems
        )
    link_of = {}
    for k, (u, v) in enumerate(resource_graph.links.tolist()):
        link_of[(u, v)] = k
        link_of[(v, u)] = k
    for t in range(n):
        node_load[m[t]] += float(task_graph.node_weight[t])
    comm = task_graph.comm.tocoo()
    cache: dict = {}
    for s, t, w in zip(comm.row.tolist(), comm.col.tolist(), comm.data.tolist()):
        if s == t or w == 0:
            continue
        if not task_graph.directed and s > t:
            continue  # an undirected edge is one stream, stored twice
        a, b = m[s], m[t]
        if a == b:
            continue
        key = (min(a, b), max(a, b))
        if key not in cache:
            cache[key] = _route_links(resource_graph, link_of, a, b)
        for k in cache[key]:
            link_load[k] += w
    best, where = 0.0, ("node", 0)
    for v in range(resource_graph.n_nodes):
        cap = float(resource_graph.capacity[v])
        if node_load[v] > 0:
            occ = node_load[v] / cap
            if occ > best:
                best, where = occ, ("node", v)
    for k in range(resource_graph.n_links):
        occ = link_load[k] / float(resource_graph.bandwidth[k])
        if occ > best:
            best, where = occ, ("link", k)
    matches = True
    if claimed is not None:
        matches = bool(abs(float(claimed) - best) <= tol * max(1.0, abs(best)))
        if not matches:
            problems.append(f"claimed occupancy {claimed!r} but recomputed {best!r}")
    return MappingReport(True, best, where, node_load, link_load, claimed, matches, problems)


@checked("coalloc.taskmap.constraints", "communication_cost", tables="FUNCTIONS")
def communication_cost(
    task_graph: TaskGraph,
    resource_graph: ResourceGraph,
    mapping: Any,
    *,
    distance: str = "inverse_bandwidth",
) -> float:
    """The sum objective of the graph mappers: communication volume times distance.

    ``sum over communicating pairs (s, t) of volume(s, t) * d(m[s], m[t])``, where the
    distance ``d(a, b)`` is the sum over the links of the fixed route between ``a`` and
    ``b`` of ``1 / bandwidth`` (``distance="inverse_bandwidth"``, the default) or of 1
    (``"hops"``), and 0 when ``a == b``. With the default it equals the sum of the link
    occupancies, the sum counterpart of the maximum occupancy; it is what Scotch, KaHIP's
    process mapping, SharedMap and Mt-KaHyPar's target-graph mapping minimise (each with
    its own distance), recomputed from the link loads of :func:`verify_mapping`.

    Parameters
    ----------
    task_graph, resource_graph : TaskGraph, ResourceGraph
    mapping : array_like of int, shape (n,)
        Processor of each task.
    distance : {"inverse_bandwidth", "hops"}
        Length of a link.

    Returns
    -------
    float

    Raises
    ------
    ValueError
        An invalid mapping (the problems of :func:`verify_mapping`) or an unknown
        ``distance``.

    Examples
    --------
    >>> import coalloc.taskmap as tm
    >>> tasks = tm.TaskGraph([1.0, 2.0, 1.5], [[0, 4, 0], [4, 0, 1], [0, 1, 0]])
    >>> res = tm.ResourceGraph.from_edges([0, 3.0, 5.0], [[0, 1], [0, 2]], [50.0, 50.0])
    >>> communication_cost(tasks, res, [2, 2, 1])   # volume 1 over two links of 50
    0.04
    >>> communication_cost(tasks, res, [2, 2, 1], distance="hops")
    2.0
    """
    rep = verify_mapping(task_graph, resource_graph, mapping)
    if not rep.valid:
        raise ValueError("invalid mapping: " + "; ".join(rep.problems))
    if distance == "hops":
        length = np.ones(resource_graph.n_links)
    else:
        length = 1.0 / np.asarray(resource_graph.bandwidth, dtype=np.float64)
    return float(np.dot(rep.link_load, length))
