"""Pure Python/NumPy twin of coalloc.taskmap._occupancy (src/_core/taskmap/_occupancy.cpp).

The routes of a resource graph expanded from its predecessor tables (:class:`Routes`), the
occupancy updates of placing, removing and moving one task (:func:`place`, :func:`remove`,
:func:`move`), the routes crossing a link (:func:`route_uses`) and the recount of every
link load (:func:`link_loads`), with the kernel's signatures, checks and floating-point
operation order: the parity tests in ``tests/taskmap/kernels/test_occupancy.py`` require
bit-identical results.
"""

from __future__ import annotations

from typing import Any, Iterator

import numpy as np

__all__ = ["Routes", "Pairs", "place", "remove", "move", "route_uses", "link_loads", "fill_prefix"]


def _need(ok: bool, msg: str) -> None:
    if not ok:
        raise ValueError(msg)


class Routes:
    """The routing tables ``(pred, pred_link, proc_row)`` of one resource graph.

    Parameters
    ----------
    pred, pred_link : ndarray of int32, shape (P, R)
        Node before ``v`` on the route tree of the ``k``-th processor, and the link joining
        them (-1 at the root).
    proc_row : ndarray of int64, shape (R,)
        Row of each processor, -1 for a router.
    n_links : int
        Number of links.
    """

    def __init__(self, pred: Any, pred_link: Any, proc_row: Any, n_links: int):
        self.pred = np.ascontiguousarray(pred, dtype=np.int32)
        self.pred_link = np.ascontiguousarray(pred_link, dtype=np.int32)
        self.proc_row = np.ascontiguousarray(proc_row, dtype=np.int64)
        _need(self.proc_row.ndim == 1, "proc_row must be 1-D")
        r = self.proc_row.shape[0]
        _need(self.pred.ndim == 2 and self.pred.shape[1] == r, "pred must have shape (P, R)")
        _need(self.pred_link.shape == self.pred.shape, "pred_link must have the shape of pred")
        _need(int(n_links) >= 0, "n_links must be >= 0")
        p = self.pred.shape[0]
        rows = self.proc_row
        _need(bool(np.all((rows >= -1) & (rows < p))), "proc_row must hold -1 or rows in [0, P)")
        _need(int((rows >= 0).sum()) == p, "proc_row must name every row of pred once")
        _need(bool(np.all((self.pred >= -1) & (self.pred < r))), "pred must hold -1 or nodes")
        _need(
            bool(np.all(((self.pred < 0) == (self.pred_link < 0)) & (self.pred_link < n_links))),
            "pred_link must hold a link id in [0, n_links) where pred >= 0, else -1",
        )
        self.n_nodes = r
        self.n_links = int(n_links)

    def processor(self, a: int, name: str) -> int:
        """``a`` if it is a processor, else ValueError naming ``name``."""
        a = int(a)
        _need(0 <= a < self.n_nodes and self.proc_row[a] >= 0, f"{name} = {a} is not a processor")
        return a

    def walk(self, a: int, b: int) -> Iterator[int]:
        """The links of the route between processors ``a != b``, in walk order."""
        ra, rb = int(self.proc_row[a]), int(self.proc_row[b])
        if 0 <= rb < ra:
            row, src, v = rb, b, a
        else:
            row, src, v = ra, a, b
        pred, link = self.pred[row], self.pred_link[row]
        while v != src:
            yield int(link[v])
            v = int(pred[v])

    def route(self, a: int, b: int) -> np.ndarray:
        """Link ids of the route between processors ``a`` and ``b``, in walk order."""
        a, b = self.processor(a, "a"), self.processor(b, "b")
        return np.array([] if a == b else list(self.walk(a, b)), dtype=np.int64)

    def table(self, a: int) -> np.ndarray:
        """Padded ``(R, H)`` route table of processor ``a`` (row ``v``: the links to ``v``)."""
        a = self.processor(a, "a")
        rows = [[] if v == a else list(self.walk(a, v)) for v in range(self.n_nodes)]
        width = max((len(x) for x in rows), default=0)
        out = np.full((self.n_nodes, width), -1, dtype=np.int64)
        for v, x in enumerate(rows):
            out[v, : len(x)] = x
        return out


class Pairs:
    """The symmetric pair weights (CSR) and compute requirements of a task graph."""

    def __init__(self, indptr: Any, indices: Any, weight: Any, node_weight: Any):
        self.node_weight = np.ascontiguousarray(node_weight, dtype=np.float64)
        _need(self.node_weight.ndim == 1, "node_weight must be 1-D")
        n = self.node_weight.shape[0]
        self.indptr = np.ascontiguousarray(indptr, dtype=np.int64)
        self.indices = np.ascontiguousarray(indices, dtype=np.int64)
        self.weight = np.ascontiguousarray(weight, dtype=np.float64)
        _need(self.indptr.shape == (n + 1,), "indptr must have shape (n + 1,)")
        _need(self.weight.shape == self.indices.shape, "data must have the length of indices")
        _need(
            self.indptr[0] == 0 and self.indptr[n] == self.indices.shape[0],
            "indptr must start at 0 and end at len(indices)",
        )
        _need(bool(np.all(np.diff(self.indptr) >= 0)), "indptr must be non-decreasing")
        _need(bool(np.all((self.indices >= 0) & (self.indices < n))), "indices must be in [0, n)")
        self.n = n

    def task(self, t: int) -> int:
        """``t`` if it is a task, else ValueError."""
        t = int(t)
        _need(0 <= t < self.n, f"task {t} is not in [0, n)")
        return t


def _state(pairs: Pairs, routes: Routes, mapping, node_load, link_load) -> None:
    for arr, dtype, n, name in (
        (mapping, np.int64, pairs.n, "mapping"),
        (node_load, np.float64, routes.n_nodes, "node_load"),
        (link_load, np.float64, routes.n_links, "link_load"),
    ):
        if not isinstance(arr, np.ndarray) or arr.dtype != dtype or not arr.flags.c_contiguous:
            raise TypeError(f"{name} must be a C-contiguous {np.dtype(dtype).name} array")
        _need(arr.shape == (n,), f"{name} must have shape ({n},)")
        _need(arr.flags.writeable, f"{name} must be writeable")


def _comm_update(pairs, routes, mapping, link_load, t, p, sign, touched) -> None:
    for q in range(pairs.indptr[t], pairs.indptr[t + 1]):
        b = int(mapping[pairs.indices[q]])
        if b < 0 or b == p:
            continue
        d = sign * float(pairs.weight[q])
        for k in routes.walk(p, b):
            link_load[k] += d
            touched.append(k)


def _place(pairs, routes, mapping, node_load, link_load, t, p, touched) -> None:
    node_load[p] += pairs.node_weight[t]
    _comm_update(pairs, routes, mapping, link_load, t, p, 1.0, touched)
    mapping[t] = p


def _remove(pairs, routes, mapping, node_load, link_load, t, touched) -> None:
    p = int(mapping[t])
    mapping[t] = -1
    node_load[p] -= pairs.node_weight[t]
    _comm_update(pairs, routes, mapping, link_load, t, p, -1.0, touched)


def place(pairs: Pairs, routes: Routes, mapping, node_load, link_load, t: int, p: int):
    """Map the unmapped task ``t`` on processor ``p``; returns the links touched."""
    _state(pairs, routes, mapping, node_load, link_load)
    t, p = pairs.task(t), routes.processor(p, "p")
    _need(mapping[t] < 0, f"task {t} is already mapped")
    touched: list = []
    _place(pairs, routes, mapping, node_load, link_load, t, p, touched)
    return np.array(touched, dtype=np.int64)


def remove(pairs: Pairs, routes: Routes, mapping, node_load, link_load, t: int):
    """Unmap the mapped task ``t``; returns the links touched."""
    _state(pairs, routes, mapping, node_load, link_load)
    t = pairs.task(t)
    _need(mapping[t] >= 0, f"task {t} is not mapped")
    routes.processor(mapping[t], "mapping[t]")
    touched: list = []
    _remove(pairs, routes, mapping, node_load, link_load, t, touched)
    return np.array(touched, dtype=np.int64)


def move(pairs: Pairs, routes: Routes, mapping, node_load, link_load, t: int, p: int) -> None:
    """Move task ``t`` (mapped or not) to processor ``p``."""
    _state(pairs, routes, mapping, node_load, link_load)
    t, p = pairs.task(t), routes.processor(p, "p")
    if mapping[t] >= 0:
        routes.processor(mapping[t], "mapping[t]")
        _remove(pairs, routes, mapping, node_load, link_load, t, [])
    _place(pairs, routes, mapping, node_load, link_load, t, p, [])


def route_uses(routes: Routes, a, b, link: int) -> np.ndarray:
    """Whether the route between processors ``a[i]`` and ``b[i]`` crosses ``link``."""
    a = np.asarray(a, dtype=np.int64)
    b = np.asarray(b, dtype=np.int64)
    _need(a.ndim == 1, "a must be 1-D")
    _need(b.shape == a.shape, "b must have shape (len(a),)")
    _need(0 <= int(link) < routes.n_links, "link must be in [0, n_links)")
    for x, y in zip(a.tolist(), b.tolist()):
        routes.processor(x, "a[i]")
        routes.processor(y, "b[i]")
    return np.array(
        [x != y and int(link) in routes.walk(x, y) for x, y in zip(a.tolist(), b.tolist())],
        dtype=bool,
    )


def link_loads(routes: Routes, mapping, s, t, vol) -> np.ndarray:
    """Link loads of a (partial) mapping over the pairs ``(s, t, vol)`` (``s < t``).

    Pairs are grouped by the node of ``s`` (ascending, stable); each group is summed apart
    (``numpy.bincount``'s order) and then added to the loads.
    """
    m = np.asarray(mapping, dtype=np.int64)
    s = np.asarray(s, dtype=np.int64)
    t = np.asarray(t, dtype=np.int64)
    vol = np.asarray(vol, dtype=np.float64)
    _need(m.ndim == 1 and s.ndim == 1, "mapping and s must be 1-D")
    _need(t.shape == s.shape and vol.shape == s.shape, "t and vol must have the shape of s")
    ok = (m == -1) | ((m >= 0) & (m < routes.n_nodes))
    ok[ok] &= (m[ok] < 0) | (routes.proc_row[np.maximum(m[ok], 0)] >= 0)
    _need(bool(ok.all()), "mapping must hold -1 or processors")
    n = m.shape[0]
    _need(
        bool(np.all((s >= 0) & (s < n) & (t >= 0) & (t < n))),
        "s and t must be tasks in [0, len(mapping))",
    )
    out = np.zeros(routes.n_links)
    a, b = m[s], m[t]
    keep = (a >= 0) & (b >= 0) & (a != b)
    for src in np.unique(a[keep]):
        tmp = np.zeros(routes.n_links)
        for e in np.flatnonzero(keep & (a == src)):
            w = float(vol[e])
            for k in routes.walk(int(src), int(b[e])):
                tmp[k] += w
        out += tmp
    return out


def fill_prefix(pairs: Pairs, routes: Routes, mapping, node_load, link_load, unmapped, q: int,
                inv_cq: float, cap_q: float, cur: float, rest: float, inv_bw, open_metric: bool,
                open_vol: float, adj: float, u: float, early_exit: bool, tie: float, poll,
                count) -> int:  # fmt: skip
    """:meth:`coalloc.taskmap.engine.Engine.map_tasks_on`'s loop: the tasks ``unmapped``
    put on processor ``q`` in order (:func:`place`), the length of the best prefix found,
    the tasks after it taken off again in reverse (:func:`remove`); returns that length.

    ``cur`` (the maximum occupancy before), ``rest`` (the weight of ``unmapped``) and
    ``open_vol`` (the volume from ``q``'s tasks to unmapped ones, used with
    ``open_metric``) as the engine has them; ``u`` NaN: no bound; ``poll`` (a callable or
    None) called before the tasks 0, 64, 128, ...; ``count[0]`` incremented at each task
    placed (before a poll that raises, as many as were placed)."""
    _state(pairs, routes, mapping, node_load, link_load)
    q = routes.processor(q, "q")
    un = np.ascontiguousarray(unmapped, dtype=np.int64)
    _need(un.ndim == 1, "unmapped must be 1-D")
    inv_bw = np.ascontiguousarray(inv_bw, dtype=np.float64)
    _need(inv_bw.shape == (routes.n_links,), "inv_bw must have shape (n_links,)")
    if not isinstance(count, np.ndarray) or count.dtype != np.int64 or count.shape != (1,):
        raise TypeError("count must be a C-contiguous int64 array of shape (1,)")
    for t in un.tolist():
        pairs.task(t)
    _need(bool(np.all(mapping[un] < 0)) and np.unique(un).shape[0] == un.shape[0],
          "unmapped must hold distinct unmapped tasks")  # fmt: skip
    ip, ix, pw, w = pairs.indptr, pairs.indices, pairs.weight, pairs.node_weight
    best_m, best_i, placed = np.inf, 0, 0
    n_u = un.shape[0]
    for i in range(n_u):
        if not i & 63 and poll is not None:
            poll()
        t = int(un[i])
        ids = place(pairs, routes, mapping, node_load, link_load, t, q)
        placed += 1
        count[0] += 1
        occ = node_load[q] * inv_cq
        if occ > cur:
            cur = occ
        if ids.shape[0]:
            lo_ = float((link_load[ids] * inv_bw[ids]).max())
            if lo_ > cur:
                cur = lo_
        rest -= w[t]
        if i == n_u - 1:
            comp = 0.0
        else:
            comp = max(rest, 0.0) / cap_q if cap_q > 0 else np.inf
        m_i = max(cur, comp)
        if open_metric:
            vol, where = pw[ip[t] : ip[t + 1]], mapping[ix[ip[t] : ip[t + 1]]]
            open_vol += float(vol[where < 0].sum()) - float(vol[where == q].sum())
            if open_vol > 1e-12 * (1.0 + abs(open_vol)):
                m_i = max(m_i, open_vol / adj if adj > 0 else np.inf)
        if cur > u * (1 + tie):  # (NaN: no bound)
            break
        if early_exit and cur > best_m * (1 + tie):
            break
        if m_i <= best_m * (1 + tie):
            best_m = min(best_m, m_i)
            best_i = i + 1
    for j in range(placed - 1, best_i - 1, -1):
        remove(pairs, routes, mapping, node_load, link_load, int(un[j]))
    return best_i
