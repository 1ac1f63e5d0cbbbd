"""What binds a task mapping: its bottleneck, what loads it, and the witness of the bound.

A mapping's objective is its maximum occupancy; the bound (:func:`~coalloc.taskmap.bounds
.lower_bound`) says no mapping goes below some value. :func:`explain_result` says both in the
user's terms, as a dict (JSON-ready) with one sentence:

* **the bottleneck**: the processor or link where the maximum is reached, with what loads it
  (the tasks on the processor and their compute against its capacity; the task pairs whose
  route crosses the link and their volume against its bandwidth);
* **the bound's witness**: which argument of the bound is the largest and on what (all
  compute over all capacity; the heaviest task on the fastest processor; a task and its
  neighbours; the stars argument: below the value, some task can keep too little of its
  neighbours' traffic on its processor to send the rest over the links around it), so that
  a user sees what would have to change to do better.
"""

from __future__ import annotations

from typing import Any, Dict, List

import numpy as np

from .._shared.docs import filled
from .bounds import lower_bound
from .model import ResourceGraph, TaskGraph
from .occupancy import max_occupancy

__all__ = ["bound_witness", "explain_result"]


@filled
def bound_witness(tasks: TaskGraph, resources: ResourceGraph) -> Dict[str, Any]:
    """Which argument of :func:`~coalloc.taskmap.bounds.lower_bound` gives its value, and on what.

    Parameters
    ----------
    %(taskmap_graphs)s

    Returns
    -------
    dict
        ``kind`` (``"spread"``, ``"heaviest_task"``, ``"neighbourhood"``, ``"stars"`` or
        ``"empty"``), ``value`` (equal to ``lower_bound(tasks, resources)``, the default
        strength), ``tasks`` (the tasks the argument is about; every task for the stars
        argument, which is about all of them together) and ``sentence``.

    Examples
    --------
    >>> import coalloc.taskmap as tm
    >>> tasks = tm.TaskGraph([1.0, 2.0, 1.5], [[0, 4, 0], [4, 0, 1], [0, 1, 0]])
    >>> res = tm.ResourceGraph.from_edges([0, 3.0, 5.0], [[0, 1], [0, 2]], [50.0, 50.0])
    >>> w = bound_witness(tasks, res)
    >>> w["kind"], w["value"]
    ('stars', 0.599853515625)
    """
    w = tasks.node_weight.astype(np.float64)
    cap = resources.capacity[resources.processors].astype(np.float64)
    if tasks.n == 0 or cap.size == 0 or not cap.max() > 0:
        return {"kind": "empty", "value": 0.0, "tasks": [],
                "sentence": "nothing to map: the bound is 0"}  # fmt: skip
    top = float(cap.max())
    spread = float(w.sum()) / float(cap.sum())
    heavy = float(w.max()) / top
    best = {"kind": "spread", "value": spread, "tasks": list(range(tasks.n)),
            "sentence": f"all compute ({float(w.sum()):g}) over all processors' capacity "
                        f"({float(cap.sum()):g}) is {spread:.4g}"}  # fmt: skip
    if heavy > best["value"]:
        j = int(np.argmax(w))
        best = {"kind": "heaviest_task", "value": heavy, "tasks": [j],
                "sentence": f"task {j}'s compute ({float(w[j]):g}) on the fastest processor "
                            f"(capacity {top:g}) is {heavy:.4g}"}  # fmt: skip
    ip, ix, iw = tasks.undirected_csr()
    if ix.shape[0] and resources.n_links and resources.n_processors > 1:
        bw = float(resources.bandwidth.max())
        deg = np.diff(ip)
        has = np.flatnonzero(deg > 0)
        rows = np.repeat(np.arange(tasks.n), deg)
        together = (w + np.bincount(rows, weights=w[ix], minlength=tasks.n)) / top
        split = np.minimum.reduceat(iw, ip[:-1][deg > 0]) / bw
        local = np.minimum(together[has], split)
        k = int(np.argmax(local))
        if float(local[k]) > best["value"]:
            t = int(has[k])
            near = [int(u) for u in ix[ip[t] : ip[t + 1]]]
            best = {"kind": "neighbourhood", "value": float(local[k]), "tasks": [t, *near],
                    "sentence": f"task {t} and its {len(near)} neighbours: together on one "
                                f"processor they need {float(together[t]):.4g}, split they "
                                f"send at least {float(iw[ip[t]:ip[t + 1]].min()):g} over a "
                                f"link of at most {bw:g} ({float(split[k]):.4g})"}  # fmt: skip
    stars = lower_bound(tasks, resources)  # the default strength: what results carry
    if stars > best["value"]:
        best = {"kind": "stars", "value": float(stars), "tasks": list(range(tasks.n)),
                "sentence": f"at any lower occupancy some task could keep too little of its "
                            f"neighbours' traffic on its processor to send the rest over the "
                            f"links around it (the stars bound, {float(stars):.4g}; the "
                            f"closed forms give {best['value']:.4g}: "
                            f"{best['sentence']})"}  # fmt: skip
    return best


@filled
def explain_result(tasks: TaskGraph, resources: ResourceGraph, result: Any) -> Dict[str, Any]:
    """What binds a mapping's maximum occupancy, and what bounds every mapping's.

    Parameters
    ----------
    %(taskmap_graphs)s
    result : MappingResult
        A result of :func:`coalloc.taskmap.solve` on them, with a mapping.

    Returns
    -------
    dict
        ``bottleneck`` (``kind``, ``index``, ``occupancy``, ``tasks`` or ``pairs`` and
        their ``load``, ``capacity``), ``bound`` (see :func:`bound_witness`),
        ``solver_bound`` (the result's own bound when it is higher than the witness's,
        as the exact solver's can be; else None) and ``sentence``.

    Raises
    ------
    ValueError
        The result holds no mapping.

    Examples
    --------
    >>> import coalloc.taskmap as tm
    >>> tasks = tm.TaskGraph([1.0, 2.0, 1.5], [[0, 4, 0], [4, 0, 1], [0, 1, 0]])
    >>> res = tm.ResourceGraph.from_edges([0, 3.0, 5.0], [[0, 1], [0, 2]], [50.0, 50.0])
    >>> out = explain_result(tasks, res, tm.solve(tasks, res, seed=0))
    >>> out["bottleneck"]["kind"], out["bound"]["kind"]
    ('node', 'stars')
    """
    mapping = getattr(result, "mapping", None)
    if mapping is None:
        raise ValueError("result holds no mapping to explain")
    mapping = np.asarray(mapping, dtype=np.int64)
    value, where = max_occupancy(tasks, resources, mapping)
    out: Dict[str, Any] = {"kind": where.kind, "index": int(where.index),
                           "occupancy": float(value)}  # fmt: skip
    w = tasks.node_weight.astype(np.float64)
    if where.kind == "node":
        on = [int(t) for t in np.flatnonzero(mapping == where.index)]
        cap = float(resources.capacity[where.index])
        out.update(tasks=on, load=float(w[on].sum()), capacity=cap)
        what = (f"processor {where.index} carries tasks "
                f"{', '.join(map(str, on[:10]))}{' ...' if len(on) > 10 else ''} "
                f"(compute {float(w[on].sum()):g} over capacity {cap:g})")  # fmt: skip
    else:
        ip, ix, iw = tasks.undirected_csr()
        pairs: List[List[int]] = []
        volume = 0.0
        for t in range(tasks.n):
            for k in range(ip[t], ip[t + 1]):
                u = int(ix[k])
                if u <= t or mapping[t] == mapping[u]:
                    continue
                if where.index in set(resources.route(int(mapping[t]), int(mapping[u])).tolist()):
                    pairs.append([t, u])
                    volume += float(iw[k])
        bw = float(resources.bandwidth[where.index])
        out.update(pairs=pairs, load=volume, capacity=bw)
        what = (f"link {where.index} carries {len(pairs)} task pairs "
                f"(volume {volume:g} over bandwidth {bw:g})")  # fmt: skip
    witness = bound_witness(tasks, resources)
    proved = getattr(result, "bound", None)  # the solver's own bound (exact), when higher
    solver = proved is not None and float(proved) > witness["value"] * (1 + 1e-9)
    floor = float(proved) if solver else witness["value"]
    gap = (value - floor) / value if value > 0 else 0.0
    because = (f"the {result.method} method's solver proved it (the graphs alone show "
               f"{witness['value']:.4g}: {witness['sentence']})" if solver
               else witness["sentence"])  # fmt: skip
    tail = f" (gap {100 * gap:.1f} %)" if gap > 1e-9 else " (proved optimal)"
    sentence = (f"The maximum occupancy {value:.4g} is set where {what}; no mapping can go "
                f"below {floor:.4g}, because {because}{tail}.")  # fmt: skip
    return {"bottleneck": out, "bound": witness,
            "solver_bound": float(proved) if solver else None, "sentence": sentence}
