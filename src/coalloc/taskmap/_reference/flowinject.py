"""Slow, obviously-correct twin of :mod:`coalloc.taskmap._flowinject` (stochastic flow injection).

Plain Python over dicts and lists, recursion instead of an explicit stack, a connectivity
test by a full BFS instead of the kernel's alternating two-sided search.  It follows the
same rules and the same arithmetic as ``src/_core/include/coalloc/flowinject.hpp``:

* each tree node draws from its own xoshiro256** stream, seeded with
  ``seed ^ (0x9e3779b97f4a7c15 * (node + 1))`` through splitmix64 (:class:`Xoshiro256`);
* end points: ``s`` then ``t != s`` with probability proportional to the node weights (all
  taken as 1 when fewer than two are positive): the first node whose running sum exceeds
  ``uniform() * total`` (``total`` minus ``w[s]`` for ``t``), the last candidate on rounding;
* shortest path: BFS (FIFO, neighbours in increasing index, stop when ``t`` is reached) for
  ``"hops"``; Dijkstra popping the smallest ``(distance, node)`` and keeping the first
  predecessor found otherwise;
* Delta: absolute, or ``delta_scale * (sum / count)`` of the remaining capacities of the
  cluster's edges, summed in ``(u, v)`` order;
* children ordered greedily left to right by ``left - right`` (weight to the tasks already
  ordered minus weight to those that come after), ties to the smallest task; tree nodes
  numbered in creation order (children consecutively, in that order).

So :func:`flow_injection_reference` returns exactly what ``coalloc.taskmap._flowinject.cluster``
returns (same order, same tree, same counters) for every metric.
"""

from __future__ import annotations

import heapq
from collections import deque

import numpy as np

from ..._shared import interrupt
from ..._shared.xoshiro import MASK64, Xoshiro256

__all__ = ["Xoshiro256", "flow_injection_reference", "KINDS"]

KINDS = {0: "leaf", 1: "flow", 2: "components", 3: "flat", 4: "forced"}
METRICS = ("hops", "inverse_remaining", "inverse_weight")


def _node_seed(seed: int, node: int) -> int:
    return (seed & MASK64) ^ ((0x9E3779B97F4A7C15 * (node + 1)) & MASK64)


def _draw(rng: Xoshiro256, w: list, total: float, skip: int) -> int:
    u = rng.uniform() * total
    acc = 0.0
    last = -1
    for j, wj in enumerate(w):
        if j == skip or not wj > 0.0:
            continue
        last = j
        acc += wj
        if u < acc:
            return j
    return last


class _State:
    def __init__(self, n, indptr, indices, data, node_weight, params):
        self.n = n
        self.w = [float(x) for x in node_weight]
        self.p = params
        self.deadline = None  # the KernelDeadline of the call (set by the caller)
        # undirected edges {u, v}, u < v, weight > 0: original weight and remaining capacity
        self.orig: dict = {}
        for u in range(n):
            for q in range(int(indptr[u]), int(indptr[u + 1])):
                v = int(indices[q])
                if v > u and data[q] > 0.0:
                    self.orig[(u, v)] = float(data[q])
        self.cap = dict(self.orig)
        self.alive = set(self.orig)
        self.nbrs: dict = {u: [] for u in range(n)}
        for u, v in self.orig:
            self.nbrs[u].append(v)
            self.nbrs[v].append(u)
        for u in self.nbrs:
            self.nbrs[u].sort()
        self.tree: list = []  # dicts per tree node
        self.placed: set = set()  # tasks already in the depth-first order
        self.counters = dict.fromkeys(
            ["injections", "path_edges", "removed_edges", "forced_removals", "flow_splits",
             "component_splits", "flat_nodes"], 0)  # fmt: skip

    # -- helpers over the current cluster ---------------------------------------------
    def edges_of(self, nodes: set) -> list:
        """Alive edges inside ``nodes`` in (u, v) order."""
        return sorted(e for e in self.alive if e[0] in nodes and e[1] in nodes)

    def neighbours(self, x: int, nodes: set) -> list:
        return [y for y in self.nbrs[x] if y in nodes and (min(x, y), max(x, y)) in self.alive]

    def components(self, nodes: list) -> list:
        members = set(nodes)
        seen: set = set()
        comps = []
        for r in nodes:  # increasing: components by smallest member
            if r in seen:
                continue
            comp, queue = [], deque([r])
            seen.add(r)
            while queue:
                x = queue.popleft()
                comp.append(x)
                for y in self.neighbours(x, members):
                    if y not in seen:
                        seen.add(y)
                        queue.append(y)
            comps.append(sorted(comp))
        return comps

    def path(self, s: int, t: int, members: set) -> list:
        """Edges (as sorted pairs) of the shortest s-t path, from t back to s."""
        pred = {s: None}
        if self.p["metric"] == "hops":
            queue = deque([s])
            while queue and t not in pred:
                x = queue.popleft()
                for y in self.neighbours(x, members):
                    if y not in pred:
                        pred[y] = x
                        if y == t:
                            break
                        queue.append(y)
        else:
            dist = {s: 0.0}
            done: set = set()
            heap = [(0.0, s)]
            while heap:
                d, x = heapq.heappop(heap)
                if x in done:
                    continue
                done.add(x)
                if x == t:
                    break
                for y in self.neighbours(x, members):
                    if y in done:
                        continue
                    e = (min(x, y), max(x, y))
                    c = self.cap[e] if self.p["metric"] == "inverse_remaining" else self.orig[e]
                    nd = d + 1.0 / c
                    if y not in dist or nd < dist[y]:
                        dist[y] = nd
                        pred[y] = x
                        heapq.heappush(heap, (nd, y))
        out = []
        x = t
        while x != s:
            y = pred[x]
            out.append((min(x, y), max(x, y)))
            x = y
        return out

    # -- one split ----------------------------------------------------------------------
    def split(self, node: int, nodes: list) -> list:
        members = set(nodes)
        p, rec, cnt = self.p, self.tree[node], self.counters
        if not p["inherit"]:
            for e in self.orig:
                if e[0] in members and e[1] in members:
                    self.cap[e] = self.orig[e]
                    self.alive.add(e)
        comps = self.components(nodes)
        if len(comps) > 1:
            rec["kind"] = 2
            cnt["component_splits"] += 1
            return comps
        edges = self.edges_of(members)
        delta = p["delta"]
        if not delta > 0.0:
            total_cap = 0.0
            for e in edges:
                total_cap += self.cap[e]
            delta = p["delta_scale"] * (total_cap / len(edges))
        rec["delta"] = delta
        w = [self.w[g] for g in nodes]
        if sum(1 for x in w if x > 0.0) < 2:
            w = [1.0] * len(nodes)
        total = 0.0
        for x in w:
            total += x
        rng = Xoshiro256(_node_seed(p["seed"], node))
        inj = 0
        split = False
        while not split and inj < p["max_injections"]:
            interrupt.check_kernel(self.deadline)  # the compiled kernel's poll (twin)
            s = _draw(rng, w, total, -1)
            t = _draw(rng, w, total - w[s], s)
            inj += 1
            for e in self.path(nodes[s], nodes[t], members):
                self.cap[e] -= delta
                cnt["path_edges"] += 1
                if self.cap[e] <= 0.0:
                    self.alive.discard(e)
                    cnt["removed_edges"] += 1
            split = len(self.components(nodes)) > 1
        cnt["injections"] += inj
        rec["injections"] = inj
        rec["kind"] = 1
        while not split:  # forced: drop the weakest remaining edge, first in (u, v) order
            interrupt.check_kernel(self.deadline)  # the compiled kernel's poll (twin)
            alive = self.edges_of(members)
            weakest = min(alive, key=lambda e: (self.cap[e], e))
            self.alive.discard(weakest)
            cnt["forced_removals"] += 1
            rec["kind"] = 4
            split = len(self.components(nodes)) > 1
        cnt["flow_splits"] += 1
        return self.components(nodes)

    def arrange(self, parts: list, members: set) -> list:
        """Children left to right, greedily by (weight to the left) - (weight to the right)."""
        m = len(parts)
        if m < 2:
            return parts
        part_of = {g: c for c, part in enumerate(parts) for g in part}
        left, right = [0.0] * m, [0.0] * m
        pair: list = []  # pair[c][j]: weight between children c and j, as c sums it
        for c, part in enumerate(parts):
            acc: dict = {}
            for g in part:
                for h in self.nbrs[g]:
                    wt = self.orig[(min(g, h), max(g, h))]
                    if h in self.placed:
                        left[c] += wt
                    elif h in members:
                        j = part_of[h]
                        if j != c:
                            acc[j] = acc.get(j, 0.0) + wt
                    else:
                        right[c] += wt
            for j in sorted(acc):
                right[c] += acc[j]
            pair.append(acc)
        out, remaining = [], list(range(m))
        while remaining:
            best = remaining[0]
            for c in remaining[1:]:
                if left[c] - right[c] > left[best] - right[best]:
                    best = c
            remaining.remove(best)
            for j in sorted(pair[best]):
                if j in remaining:
                    left[j] += pair[j][best]
                    right[j] -= pair[j][best]
            out.append(parts[best])
        return out

    def new_node(self, parent: int) -> int:
        self.tree.append(
            {"parent": parent, "task": -1, "kind": 0, "children": [], "injections": 0,
             "delta": float("nan")}
        )  # fmt: skip
        return len(self.tree) - 1

    def build(self, node: int, nodes: list) -> None:
        rec = self.tree[node]
        if len(nodes) == 1:
            rec["task"] = nodes[0]
            self.placed.add(nodes[0])
            return
        if len(nodes) <= self.p["min_cluster_size"]:
            rec["kind"] = 3
            self.counters["flat_nodes"] += 1
            parts = [[g] for g in nodes]
        else:
            parts = self.arrange(self.split(node, nodes), set(nodes))
        rec["children"] = [self.new_node(node) for _ in parts]
        for child, part in zip(rec["children"], parts):
            self.build(child, part)


def flow_injection_reference(
    indptr,
    indices,
    data,
    node_weight,
    *,
    delta: float = 0.0,
    delta_scale: float = 0.05,
    metric: str = "hops",
    seed: int = 0,
    min_cluster_size: int = 1,
    inherit: bool = False,
    max_injections: int = 1000000,
    deadline=None,
) -> dict:
    """Same arguments and result as ``coalloc.taskmap._flowinject.cluster`` (see its docstring).

    Parameters
    ----------
    indptr, indices, data : array_like
        Symmetric CSR (sorted indices, no duplicates) of the edge weights.
    node_weight : array_like, shape (n,)
    delta, delta_scale, metric, seed, min_cluster_size, inherit, max_injections
        As for the kernel.

    Returns
    -------
    dict
        ``order``, ``parent``, ``task``, ``kind``, ``child_start``, ``child_count``,
        ``injections``, ``delta``, ``depth``, ``start``, ``stop`` (ndarrays) and
        ``counters`` (dict).
    """
    if metric not in METRICS:
        raise ValueError(f"metric must be one of {METRICS}, got {metric!r}")
    import sys

    n = len(node_weight)
    params = {
        "delta": float(delta), "delta_scale": float(delta_scale), "metric": metric,
        "seed": int(seed) & MASK64, "min_cluster_size": int(min_cluster_size),
        "inherit": bool(inherit), "max_injections": int(max_injections),
    }  # fmt: skip
    st = _State(n, np.asarray(indptr), np.asarray(indices), np.asarray(data), node_weight, params)
    st.deadline = deadline
    if n:
        old = sys.getrecursionlimit()
        sys.setrecursionlimit(max(old, 4 * n + 100))
        try:
            st.build(st.new_node(-1), list(range(n)))
        finally:
            sys.setrecursionlimit(old)
    m = len(st.tree)
    out = {
        "parent": np.array([r["parent"] for r in st.tree], dtype=np.int64),
        "task": np.array([r["task"] for r in st.tree], dtype=np.int64),
        "kind": np.array([r["kind"] for r in st.tree], dtype=np.int8),
        "child_start": np.array(
            [r["children"][0] if r["children"] else -1 for r in st.tree], dtype=np.int64
        ),
        "child_count": np.array([len(r["children"]) for r in st.tree], dtype=np.int64),
        "injections": np.array([r["injections"] for r in st.tree], dtype=np.int64),
        "delta": np.array([r["delta"] for r in st.tree], dtype=np.float64),
    }
    depth = np.zeros(m, dtype=np.int64)
    start = np.zeros(m, dtype=np.int64)
    stop = np.zeros(m, dtype=np.int64)
    order: list = []

    def visit(x: int, d: int) -> None:
        depth[x] = d
        start[x] = len(order)
        if st.tree[x]["task"] >= 0:
            order.append(st.tree[x]["task"])
        for c in st.tree[x]["children"]:
            visit(c, d + 1)
        stop[x] = len(order)

    if m:
        old = sys.getrecursionlimit()
        sys.setrecursionlimit(max(old, 4 * n + 100))
        try:
            visit(0, 0)
        finally:
            sys.setrecursionlimit(old)
    out.update(
        depth=depth, start=start, stop=stop, order=np.array(order, dtype=np.int64),
        counters=dict(st.counters),
    )  # fmt: skip
    return out
