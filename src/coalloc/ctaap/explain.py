"""Why tasks of a CTAAP request are left out: a minimal conflict and the nearest request that fits.

A CTAAP allocation may leave tasks out (the objective is the number of tasks placed).
:func:`explain_allocation` says why the whole request cannot be placed, as an
:class:`~coalloc._shared.explain.Explanation`: a set of tasks that cannot all be placed
together on the offer (machine counts, property minima, bandwidth between clusters and
inside them), **sound** (the ``exact`` method's optimum on those tasks alone leaves one out,
or a task fits no cluster at all) and **minimal** (without any one of them, the rest are all
placed: a verified allocation is the witness), or it says which of the two it could not
establish before the deadline.

Each candidate set is judged first by the default method (an allocation of every task is a
witness that they fit), then by the exact method (its optimum below the set's size is the
proof that they do not).

The nearest requests that fit, each solved again and checked:

* ``drop_tasks``: the fewest tasks to leave out, from the exact optimum on the whole request
  (``optimal`` when the exact method proved it);
* ``less_bandwidth``: the conflict's bandwidth at a fraction (3/4, 1/2, 1/4, 1/10: the
  largest that places every task);
* ``more_machines``: one more machine in one cluster (the first cluster that helps).

:func:`explain_binding` explains an allocation itself, "yes" or partial: which clusters and
links cap it. It reads the allocation alone (no solve): the clusters it fills, the cluster
pairs whose bandwidth a placed pair of tasks uses to the full, and, for every task left
out, what stops it on each cluster (that cluster is full, its machines miss a property
minimum, or the bandwidth to a placed task is too small), counted per constraint, so the
constraint that blocks the most left-out tasks is named first.
"""

from __future__ import annotations

import time
from typing import Any, Dict, List, Optional, Tuple

import numpy as np
import scipy.sparse as sp

from .._shared.constraints import checked
from .._shared.docs import filled
from .._shared.explain import Explanation, Relaxation, fix_deadline, minimal_conflict
from .model import Offer, Request, check_compatible

__all__ = ["explain_allocation", "explain_binding"]

#: Bandwidth fractions tried for ``less_bandwidth``, largest first.
FRACTIONS = (0.75, 0.5, 0.25, 0.1)


def _sub(request: Request, tasks: List[int], *, scale: Optional[Tuple[List[int], float]] = None
         ) -> Request:  # fmt: skip
    """The request restricted to ``tasks`` (bandwidth among ``scale[0]`` times ``scale[1]``)."""
    idx = np.asarray(tasks, dtype=np.int64)
    bw = request.bandwidth.tocsr()[idx][:, idx].toarray()
    if scale is not None:
        mask = np.isin(idx, np.asarray(scale[0], dtype=np.int64))
        bw[np.ix_(mask, mask)] *= scale[1]
    props = {k: np.asarray(v)[idx] for k, v in request.properties.items()}
    names = None if request.names is None else [request.names[i] for i in tasks]
    return Request(props, bw, names=names)


def _offer(offer: Offer, capacity: np.ndarray) -> Offer:
    return Offer(dict(offer.properties), capacity, offer.bandwidth, names=offer.names)


def _compatible(request: Request, offer: Offer) -> np.ndarray:
    """(n, m) bool: task ``i`` meets cluster ``j``'s machines' properties and ``j`` has one."""
    ok = np.ones((request.n, offer.m), dtype=bool)
    for k, need in request.properties.items():
        ok &= np.asarray(need)[:, None] <= np.asarray(offer.properties[k])[None, :]
    ok &= (np.asarray(offer.capacity) > 0)[None, :]
    return ok


def _fits_nowhere(request: Request, offer: Offer) -> List[int]:
    """Tasks whose property minima no cluster's machines meet."""
    return [int(i) for i in np.flatnonzero(~_compatible(request, offer).any(axis=1))]


#: Work limits of the combinatorial certificates (request edges times cluster pairs; the
#: cluster count up to which every cluster subset is counted for a Hall violator; the
#: candidates of a Hall seed whose mutual bandwidth is read densely).
_PAIR_WORK, _HALL_SUBSETS, _SEED_POOL = 6e7, 12, 1500

#: Edges times (cluster pairs + 20) the pair check is given per second of the budget.
_PAIR_PER_SECOND = 2e7


def _pair_conflict(request: Request, offer: Offer, ok: np.ndarray,
                   deadline: Optional[float] = None) -> Optional[Tuple[int, int, float]]:
    """Two tasks that no two clusters can hold together, or None: ``(i, k, need)``.

    Each ordered bandwidth ``B[i, k]`` must fit ``Bhat[c_i, c_k]`` (constraint (4)) and a
    cluster holding both needs two machines; a pair of clusters that meet the tasks'
    property minima and satisfies both is looked for, for every communicating pair at once
    (vectorised over the request's edges, the two directions of a pair read from the
    upper triangles of ``B`` and its transpose). ``need`` is the larger of the two
    bandwidths. None too when ``deadline`` (:func:`time.monotonic`) passes first.
    """
    m = offer.m
    B = request.bandwidth.tocsr()
    if B.nnz == 0 or B.nnz * m * m > _PAIR_WORK:
        return None
    up = sp.triu(B, 1, format="csr")  # lo -> hi
    down = sp.triu(B.T, 1, format="csr")  # hi -> lo, at (lo, hi)
    pattern = (abs(up) + abs(down)).tocoo()
    if pattern.nnz == 0:
        return None
    a, b = pattern.row.astype(np.int64), pattern.col.astype(np.int64)
    w_lh = np.asarray(up[a, b], dtype=np.float64).ravel()
    w_hl = np.asarray(down[a, b], dtype=np.float64).ravel()
    cap = np.asarray(offer.capacity)
    Bhat = np.asarray(offer.bandwidth, dtype=np.float64)
    ok_a, ok_b = ok[a], ok[b]
    fits = np.zeros(a.size, dtype=bool)
    for x in range(m):
        for y in range(m):
            if deadline is not None and time.monotonic() > deadline:
                return None
            if x == y and cap[x] < 2:
                continue
            fits |= ok_a[:, x] & ok_b[:, y] & (w_lh <= Bhat[x, y]) & (w_hl <= Bhat[y, x])
    bad = np.flatnonzero(~fits & ok_a.any(axis=1) & ok_b.any(axis=1))
    if bad.size == 0:
        return None
    j = int(bad[np.lexsort((b[bad], a[bad]))[0]])
    return int(a[j]), int(b[j]), float(max(w_lh[j], w_hl[j]))


def _hall_violator(request: Request, offer: Offer, ok: np.ndarray
                   ) -> Optional[Tuple[List[int], List[int]]]:  # fmt: skip
    """A Hall-type violator: ``(tasks, clusters)``, or None.

    More tasks than the machines of the only clusters whose properties they meet: the
    ``clusters`` hold ``len(tasks) - 1`` machines in all, and no other cluster meets any of
    the ``tasks``' property minima (a pigeonhole count, bandwidth ignored). The cluster set
    with the fewest machines is taken (the smallest conflict); of its tasks the ones with
    the least bandwidth among them (greedy), so that any one fewer are likely placed.
    """
    m = offer.m
    cap = np.asarray(offer.capacity, dtype=np.int64)
    placeable = ok.any(axis=1)
    if m <= _HALL_SUBSETS:
        code = (ok.astype(np.int64) << np.arange(m, dtype=np.int64)).sum(axis=1)
        inside = np.bincount(code[placeable], minlength=1 << m).astype(np.int64)
        for bit in range(m):  # sum over subsets (zeta transform): tasks confined to T
            step = 1 << bit
            view = inside.reshape(-1, 2 * step)
            view[:, step:] += view[:, :step]
        subsets = np.arange(1 << m, dtype=np.int64)
        machines = ((subsets[:, None] >> np.arange(m)) & 1) @ cap
        over = np.flatnonzero(inside > machines)
        if over.size == 0:
            return None
        t = int(over[np.lexsort((over, machines[over]))[0]])
        mask = ((t >> np.arange(m)) & 1).astype(bool)
        need = int(machines[t]) + 1
    else:  # too many subsets: the clusters each task meets, as candidate sets
        best = None
        for row in np.unique(ok[placeable], axis=0)[:512]:
            c = int(cap[row].sum())
            count = int(np.count_nonzero(placeable & ~ok[:, ~row].any(axis=1)))
            if count > c and (best is None or c < best[0]):
                best = (c, row)
        if best is None:
            return None
        need, mask = best[0] + 1, best[1]
    pool = np.flatnonzero(placeable & ~ok[:, ~mask].any(axis=1))[:_SEED_POOL]
    if pool.size < need:
        return None
    W = request.bandwidth.tocsr()[pool][:, pool].toarray().astype(np.float64)
    W = np.maximum(W, W.T)
    np.fill_diagonal(W, 0.0)
    chosen = [int(np.argmin(W.max(axis=1)))]
    worst = W[chosen[0]].copy()
    worst[chosen[0]] = np.inf
    while len(chosen) < need:
        nxt = int(np.argmin(worst))
        chosen.append(nxt)
        worst = np.maximum(worst, W[nxt])
        worst[chosen] = np.inf
    return sorted(int(pool[c]) for c in chosen), [int(j) for j in np.flatnonzero(mask)]


def _nowhere_text(request: Request, offer: Offer, task: int) -> str:
    """Why no cluster holds ``task``: the property minima no cluster's machines meet."""
    short = []
    for k, need in request.properties.items():
        have = np.asarray(offer.properties[k])[np.asarray(offer.capacity) > 0]
        want = float(np.asarray(need)[task])
        if have.size and want > float(have.max()):
            short.append(f"{k} {want:g} (the most any cluster offers is {float(have.max()):g})")
    if not short:
        return "no cluster's machines meet its property minima"
    return "it asks for " + " and ".join(short)


def _placed(request: Request, offer: Offer, deadline: float, *,
            prove: bool = True) -> Tuple[Optional[bool], Any]:  # fmt: skip
    """(True: every task placed | False: proved not | None: unknown, the deciding result).

    ``prove=False`` asks the default method only (a fix needs a witness, not a proof).
    """
    from .solvers import solve

    if request.n == 0:
        return True, None
    if _fits_nowhere(request, offer):
        return False, None
    for method in ("ctaap", "exact") if prove else ("ctaap",):
        left = deadline - time.monotonic()
        if left <= 0:
            return None, None
        res = solve(request, offer, method, time_limit=left, seed=0)
        if res.has_solution and res.n_allocated == request.n:
            return True, res
        if method == "exact" and res.status == "optimal":
            return False, res
    return None, None


def _fewer(index: List[int], proof: Any) -> Optional[List[int]]:
    """The tasks of ``index`` an exact optimum ``proof`` (on them alone) proves infeasible
    with the fewest tasks: the ``k`` it places and one it leaves out, or None.

    Fewer tasks never place more, so every ``k + 1`` of them are infeasible when the
    optimum places ``k``; the ``k`` placed keep the optimum's allocation as a witness that
    the one left out is needed. None unless ``k + 1 < len(index)``."""
    if proof is None or proof.status != "optimal":
        return None
    placed = np.asarray(proof.assignment) >= 0
    k = int(np.count_nonzero(placed))
    if k + 1 >= len(index):
        return None
    out = np.flatnonzero(~placed)
    keep = set(np.flatnonzero(placed).tolist()) | {int(out[-1])}  # (the last: likeliest)
    return [e for pos, e in enumerate(index) if pos in keep]


@filled
@checked("coalloc.ctaap.constraints", "explain_allocation", tables="FUNCTIONS")
def explain_allocation(request: Request, offer: Offer, *,
                       time_limit: float = 10.0) -> Optional[Explanation]:  # fmt: skip
    """Why not every task of ``request`` can be placed on ``offer``, and what would fit.

    Parameters
    ----------
    %(ctaap_graphs)s
    %(explain_time_limit)s

    Returns
    -------
    Explanation or None
        None when every task can be placed (nothing to explain) or when that could not be
        decided in the budget.

    Examples
    --------
    Three tasks needing 30 CPU each, one cluster of two such machines:

    >>> import coalloc.ctaap as ct
    >>> request = ct.Request({"cpu": [30, 30, 30]})
    >>> offer = ct.Offer({"cpu": [40]}, capacity=[2], bandwidth=[[10]])
    >>> e = explain_allocation(request, offer)
    >>> e.demand, e.sound, e.minimal
    (('task 0', 'task 1', 'task 2'), True, True)
    >>> [(r.kind, r.cost) for r in e.relaxations if r.checked]
    [('drop_tasks', 1.0), ('more_machines', 1.0)]
    """
    check_compatible(request, offer)
    time_limit = float(time_limit)  # checked by the table (@checked)
    t0 = time.monotonic()
    search_end = t0 + 0.6 * time_limit
    ok = _compatible(request, offer)
    alone = [int(i) for i in np.flatnonzero(~ok.any(axis=1))]
    everyone = list(range(request.n))
    # The combinatorial certificates first (no solve: a pair of tasks no two clusters hold,
    # a Hall-type violator), then the solvers on the whole request.
    hall = None if alone else _hall_violator(request, offer, ok)
    # (the pair check reads every edge: about 0.3-0.6 s for 1,000 tasks of a complete
    # request at load 12, so it runs where that is a small part of the budget)
    affordable = request.bandwidth.nnz * (offer.m ** 2 + 20) <= _PAIR_PER_SECOND * time_limit
    pair = (None if alone or not affordable
            else _pair_conflict(request, offer, ok, t0 + 0.1 * time_limit))  # fmt: skip
    if hall is not None and pair is not None and len(hall[0]) > 2:
        hall = None  # the pair is the smaller conflict
    first = None
    if not (alone or pair or hall):
        whole, first = _placed(request, offer, search_end)
        if whole is not False:
            return None

    proofs: Dict[tuple, Any] = {}  # the exact optimum that refused a set (for shrink)

    def feasible(index: List[int]) -> Optional[bool]:
        got, res = _placed(_sub(request, list(index)), offer, search_end)
        if got is False and res is not None:
            proofs[tuple(index)] = res
        return got

    def shrink(index: List[int]) -> Optional[List[int]]:
        return _fewer(list(index), proofs.pop(tuple(index), None))

    if alone:  # a task no cluster can hold is a conflict by itself
        conflict, sound, minimal, calls, certificate = [alone[0]], True, True, 0, "fits-nowhere"
    elif hall is not None:  # the count proves the seed; the filter asks the solvers
        search = minimal_conflict(hall[0], feasible, deadline=search_end, known_infeasible=True,
                                  chunk=1, shrink=shrink)  # fmt: skip
        conflict, sound, minimal, calls = search.conflict, True, search.minimal, search.calls
        certificate = "hall" if conflict == hall[0] else "exact"
    elif pair is not None:  # each task alone fits somewhere: the pair is minimal
        conflict, sound, minimal, calls, certificate = [pair[0], pair[1]], True, True, 0, "pair"
    else:
        search = minimal_conflict(everyone, feasible, deadline=search_end, known_infeasible=True,
                                  shrink=shrink)  # fmt: skip
        conflict, sound, minimal = search.conflict, search.sound, search.minimal
        calls, certificate = search.calls, "exact"
    relax = _relaxations(request, offer, conflict, first, fix_deadline(t0, time_limit),
                         nowhere=certificate == "fits-nowhere")  # fmt: skip
    label = (lambda i: f"task {request.names[i]}") if request.names is not None else (
        lambda i: f"task {i}")  # fmt: skip
    listed = ", ".join(label(i)[5:] for i in conflict[:12]) + (" ..." if len(conflict) > 12
                                                                else "")  # fmt: skip
    if certificate == "fits-nowhere":
        how = _nowhere_text(request, offer, conflict[0])
    elif certificate == "pair":
        how = _pair_text(request, offer, ok, pair)
    elif certificate == "hall":
        how = _hall_text(offer, len(conflict), hall[1])
    else:
        how = "the exact method's optimum on them alone leaves one out"
    machines = int(np.sum(offer.capacity))
    where = (f"the offer ({machines} machine{'s' if machines != 1 else ''} in {offer.m} "
             f"cluster{'s' if offer.m != 1 else ''})")  # fmt: skip
    if len(conflict) == 1:
        sentence = f"Task {listed} cannot be placed on {where}: {how}."
    else:
        sentence = (
            f"Tasks {listed} ({len(conflict)} of {request.n}) cannot all be placed on "
            f"{where}: {how}"
            f"{'; without any one of them the rest are all placed' if minimal else ''}."
        )
    fixes = "; or ".join(r.sentence for r in relax if r.checked)
    sentence += f" Nearest fix: {fixes}." if fixes else " No single change tried fits."
    resources = tuple(f"cluster {offer.names[j] if offer.names is not None else j}: "
                      f"{int(offer.capacity[j])} machines" for j in range(offer.m))  # fmt: skip
    return Explanation(demand=tuple(label(i) for i in conflict), resources=resources,
                       certificate=certificate, sound=sound, minimal=minimal,
                       sentence=sentence, relaxations=tuple(relax),
                       conflict={"tasks": [int(i) for i in conflict]},
                       oracle_calls=calls + 1, seconds=time.monotonic() - t0)  # fmt: skip


def _pair_text(request: Request, offer: Offer, ok: np.ndarray,
               pair: Tuple[int, int, float]) -> str:  # fmt: skip
    """Why no two clusters hold the pair: the bandwidth they need and the most offered."""
    i, k, need = pair
    Bhat = np.asarray(offer.bandwidth, dtype=np.float64)
    cap = np.asarray(offer.capacity)
    most = [min(Bhat[x, y], Bhat[y, x]) for x in np.flatnonzero(ok[i])
            for y in np.flatnonzero(ok[k]) if x != y or cap[x] >= 2]  # fmt: skip
    offered = (f"the most two clusters that meet their property minima offer is "
               f"{max(most):g}" if most else "no two clusters that meet their property minima "
               "can hold both")  # fmt: skip
    return f"they need {need:g} between them and {offered}"


def _hall_text(offer: Offer, size: int, clusters: List[int]) -> str:
    """The pigeonhole: only ``clusters`` meet the tasks' minima, with too few machines."""
    machines = int(np.sum(np.asarray(offer.capacity)[clusters]))
    names = ", ".join(_cluster_name(offer, j)[8:] for j in clusters)
    where = f"cluster{'s' if len(clusters) != 1 else ''} {names}"
    return (f"only {where} meet{'s' if len(clusters) == 1 else ''} their property minima, "
            f"with {machines} machine{'s' if machines != 1 else ''} in all for {size} tasks")


def _relaxations(request: Request, offer: Offer, conflict: List[int], whole: Any,
                 deadline: float, *, nowhere: bool = False) -> List[Relaxation]:  # fmt: skip
    """The nearest requests that fit, each solved again (see the module docstring).

    ``nowhere``: the conflict is a task no cluster holds, which neither bandwidth nor more
    machines of the same clusters can fix: only tasks to leave out are looked for.
    """
    from .solvers import solve

    # a share of the time left kept back: the solvers return a little after their limit
    # (0.03-0.05 s for the default on 1,000 tasks at load 15), and this is the last step
    now = time.monotonic()
    deadline = now + 0.85 * max(0.0, deadline - now)
    out: List[Relaxation] = []
    best = whole
    if best is None:  # the cheap certificate decided: the default's allocation, then exact
        left = deadline - time.monotonic()  # within the fixes' deadline (issue 36's rule)
        best = solve(request, offer, seed=0, time_limit=left) if left > 0 else None
        left = deadline - time.monotonic()
        if left > 0:
            exact = solve(request, offer, "exact", time_limit=left, seed=0)
            if exact.has_solution and (best is None or not best.has_solution
                                       or exact.n_allocated >= best.n_allocated):
                best = exact
    if best is not None and best.has_solution:
        drop = [int(i) for i in np.flatnonzero(np.asarray(best.assignment) < 0)]
        keep = [i for i in range(request.n) if i not in drop]
        ok = (time.monotonic() < deadline  # (the sub-request's build takes 30 ms at 1,000)
              and _placed(_sub(request, keep), offer, deadline, prove=False)[0] is True)
        out.append(Relaxation(kind="drop_tasks", sentence="leave out task" + (
            "s " if len(drop) > 1 else " ") + ", ".join(str(i) for i in drop),
            changes={"drop_tasks": drop}, cost=float(len(drop)),
            optimal=best.status == "optimal", checked=ok))  # fmt: skip
    everyone = list(range(request.n))
    if nowhere:
        return out
    if request.bandwidth.nnz:
        for f in FRACTIONS:
            if time.monotonic() >= deadline:
                break
            if _placed(_sub(request, everyone, scale=(conflict, f)), offer, deadline,
                       prove=False)[0]:  # fmt: skip
                out.append(Relaxation(kind="less_bandwidth", sentence=f"ask for {f:g} of the "
                                      "bandwidth among the conflicting tasks",
                                      changes={"bandwidth_fraction": f, "tasks": conflict},
                                      cost=1.0 - f, optimal=None, checked=True))  # fmt: skip
                break
    for j in range(offer.m):
        cap = np.asarray(offer.capacity, dtype=np.int64).copy()
        cap[j] += 1
        if time.monotonic() >= deadline:
            break
        if _placed(request, _offer(offer, cap), deadline, prove=False)[0]:
            name = offer.names[j] if offer.names is not None else j
            out.append(Relaxation(kind="more_machines", sentence=f"add a machine to cluster "
                                  f"{name}", changes={"cluster": int(j), "add": 1}, cost=1.0,
                                  optimal=None, checked=True))  # fmt: skip
            break
    return out


def _cluster_name(offer: Offer, j: int) -> str:
    return f"cluster {offer.names[j]}" if offer.names is not None else f"cluster {j}"


@filled
def explain_binding(request: Request, offer: Offer, result: Any) -> Dict[str, Any]:
    """Which clusters and links cap an allocation: its binding capacity and bandwidth.

    Parameters
    ----------
    %(ctaap_graphs)s
    result : SolveResult or array_like
        A result of :func:`coalloc.ctaap.solve` on them (its ``assignment``, ``status``
        and ``bound`` are read), or an assignment vector (cluster per task, -1 left out).

    Returns
    -------
    dict
        JSON-ready: ``placed`` and ``tasks``; ``full_clusters`` (``cluster``, ``index``,
        ``used``, ``capacity``); ``tight_links`` (cluster pairs whose bandwidth a placed
        pair of tasks uses to the full: ``clusters``, ``tasks``, ``need``, ``available``);
        ``binding`` (per constraint that stops a left-out task on a cluster: ``constraint``
        ``"capacity"``, ``"properties"`` or ``"bandwidth"``, ``where``, ``blocks``: how many
        left-out tasks it stops there), most blocking first; ``blocked`` (per left-out task,
        up to 20: what stops it on each cluster); ``bound`` (the result's upper bound or
        None) and ``sentence``.

    Examples
    --------
    Three tasks needing 30 CPU, one cluster of two machines: the cluster's capacity binds.

    >>> import coalloc.ctaap as ct
    >>> request = ct.Request({"cpu": [30, 30, 30]})
    >>> offer = ct.Offer({"cpu": [40]}, capacity=[2], bandwidth=[[10]])
    >>> b = explain_binding(request, offer, [0, 0, -1])
    >>> b["full_clusters"][0]["used"], b["binding"][0]["constraint"], b["binding"][0]["blocks"]
    (2, 'capacity', 1)
    """
    check_compatible(request, offer)
    assignment = getattr(result, "assignment", result)
    a = np.asarray(assignment, dtype=np.int64).reshape(-1)
    if a.shape != (request.n,) or np.any(a >= offer.m) or np.any(a < -1):
        raise ValueError(f"result must assign each of the {request.n} tasks a cluster in "
                         f"[0, {offer.m}) or -1")  # fmt: skip
    cap = np.asarray(offer.capacity, dtype=np.int64)
    B = np.asarray(offer.bandwidth, dtype=np.float64)
    load = np.bincount(a[a >= 0], minlength=offer.m)
    full = [{"cluster": _cluster_name(offer, j)[8:], "index": j, "used": int(load[j]),
             "capacity": int(cap[j])} for j in range(offer.m) if cap[j] > 0 and load[j] >= cap[j]]
    csr = request.bandwidth.tocsr()
    coo = csr.tocoo()
    placed_pair = (a[coo.row] >= 0) & (a[coo.col] >= 0)
    tight: Dict[Tuple[int, int], Dict[str, Any]] = {}
    for i, k, need in zip(coo.row[placed_pair], coo.col[placed_pair], coo.data[placed_pair]):
        j, l_ = int(a[i]), int(a[k])
        avail = float(B[j, l_])
        if need > 0 and need >= avail * (1 - 1e-9):
            key = (min(j, l_), max(j, l_))
            if key not in tight:
                tight[key] = {"clusters": list(key), "tasks": [int(i), int(k)],
                              "need": float(need), "available": avail}  # fmt: skip
    left = [int(t) for t in np.flatnonzero(a < 0)]
    counts: Dict[Tuple[str, str], int] = {}
    blocked = []
    csc = request.bandwidth.tocsc()
    for t in left:
        why: Dict[str, str] = {}
        for j in range(offer.m):
            name = _cluster_name(offer, j)
            if cap[j] <= 0 or load[j] >= cap[j]:
                key, text = ("capacity", name), f"full ({int(load[j])}/{int(cap[j])})"
            else:
                short = [k for k, v in request.properties.items()
                         if float(np.asarray(v)[t]) > float(np.asarray(offer.properties[k])[j])]
                if short:
                    key, text = ("properties", name), "its machines have too little " + (
                        ", ".join(short))  # fmt: skip
                else:
                    worst = _worst_link(csr, csc, a, B, t, j)
                    if worst is None:  # it fits there: the allocation did not take it
                        key, text = ("none", name), "fits (not taken by this allocation)"
                    else:
                        k, need, avail, other = worst
                        key = ("bandwidth", f"{name}-{_cluster_name(offer, other)[8:]}")
                        text = (f"task {k} on {_cluster_name(offer, other)} needs {need:g} "
                                f"over a link of {avail:g}")  # fmt: skip
            counts[key] = counts.get(key, 0) + 1
            why[name] = text
        if len(blocked) < 20:
            blocked.append({"task": t, "by": why})
    binding = [{"constraint": c, "where": w, "blocks": n}
               for (c, w), n in sorted(counts.items(), key=lambda kv: -kv[1]) if c != "none"]
    bound = getattr(result, "bound", None)
    placed = int(np.count_nonzero(a >= 0))
    words = []
    if full:
        words.append("full: " + ", ".join(f"{_cluster_name(offer, f['index'])} "
                                          f"({f['used']}/{f['capacity']})" for f in full[:6]))
    if tight:
        words.append("bandwidth used to the full between " + ", ".join(
            f"{_cluster_name(offer, x['clusters'][0])[8:]}-"
            f"{_cluster_name(offer, x['clusters'][1])[8:]} (tasks {x['tasks'][0]} and "
            f"{x['tasks'][1]}: {x['need']:g} of {x['available']:g})"
            for x in list(tight.values())[:4]))  # fmt: skip
    head = (f"Every task is placed ({placed})" if not left else
            f"{placed} of {request.n} tasks are placed; the {len(left)} left out are stopped "
            "by " + "; ".join(f"{b['constraint']} of {b['where']} ({b['blocks']} of them)"
                              for b in binding[:4]))  # fmt: skip
    status = getattr(result, "status", None)
    if left and bound is not None:
        head += (f"; no allocation places more than {float(bound):g} tasks"
                 + (" (proved optimal)" if status == "optimal" else ""))  # fmt: skip
    sentence = head + ("; " + "; ".join(words) if words else
                       "; no cluster is full and no link is used to the full") + "."
    return {"placed": placed, "tasks": request.n, "full_clusters": full,
            "tight_links": list(tight.values()), "binding": binding, "blocked": blocked,
            "bound": None if bound is None else float(bound), "sentence": sentence}


def _worst_link(csr: Any, csc: Any, a: np.ndarray, B: np.ndarray, t: int,
                j: int) -> Optional[Tuple[int, float, float, int]]:  # fmt: skip
    """The placed task whose bandwidth with ``t`` on cluster ``j`` exceeds its link the most:
    (task, need, available, its cluster), or None when every link suffices."""
    worst = None
    for row, out in ((csr, True), (csc, False)):  # t -> k and k -> t
        lo, hi = row.indptr[t], row.indptr[t + 1]
        for k, need in zip(row.indices[lo:hi], row.data[lo:hi]):
            other = int(a[k])
            if other < 0 or k == t:
                continue
            avail = float(B[j, other] if out else B[other, j])
            if need > avail and (worst is None or need / max(avail, 1e-300) > worst[1] / max(
                    worst[2], 1e-300)):  # fmt: skip
                worst = (int(k), float(need), avail, other)
    return worst
