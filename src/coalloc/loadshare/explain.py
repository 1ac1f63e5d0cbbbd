"""Why a GAP instance has no assignment of every item, and why load must wait: minimal conflicts.

:func:`explain_share` answers the load-sharing "no" (some load waits: the jobs cannot be
packed onto the nodes within their capacities) the same way, with jobs as the items and
every node open to every job; see its docstring.

:func:`explain_gap` answers the "no" of an infeasible generalized assignment problem (every
item must be assigned, within the agents' capacities) with an
:class:`~coalloc._shared.explain.Explanation`:

* **the conflict**: a set of items that cannot all be assigned within the agents'
  capacities. It is *sound* (an exact model, OR-Tools CP-SAT or else HiGHS through SciPy,
  finds the set alone infeasible: ``certificate`` "CP-SAT" or "exact"; or a cheap
  certificate does: an item heavier than every agent's capacity, the count bound, the
  volume bound) and *minimal* (dropping any one item lets the rest fit,
  each drop proved by an assignment that fits), or it says which of the two it could not
  establish in its budget;
* **the nearest requests that fit**: the fewest items to drop (the most items that can be
  assigned, proved by the exact model) and the least total capacity to add to the agents
  (an integer program), each changed instance solved again by the family's own
  :func:`~coalloc.loadshare.solve_gap` and its assignment checked.

The search (:func:`coalloc._shared.explain.minimal_conflict`) is a chunked deletion filter
over the items, heaviest last; the feasibility oracle tries, in order, the cheap
certificates, a first-fit-decreasing assignment (a witness of feasibility), repairs of
its last witnesses, the regret greedy, CP-SAT (a witness or a proof of infeasibility, up to
5,000 agents x items) and HiGHS's exact model with the time left.

Why over 800 lines: the GAP's and load sharing's explanations share the oracle and its
witnesses; the witness searches added for issue 38's solve + 1 s took it past 800, and
load sharing's volume conflict (:func:`explain_share` and its packings) is the part that
could go to a module of their own.
"""

from __future__ import annotations

import time
from typing import Any, List, Optional, Tuple

import numpy as np

from .._shared.constraints import checked
from .._shared.explain import (
    ConflictSearch,
    Explanation,
    Relaxation,
    fix_deadline,
    minimal_conflict,
)
from .gap import GapInstance, solve_gap
from .gap.bounds import weights_certificate

__all__ = ["explain_gap", "explain_share"]


def _ffd(weight: np.ndarray, capacity: np.ndarray) -> Optional[np.ndarray]:
    """A first-fit-decreasing assignment of every column of ``weight``, or None.

    Items in decreasing order of their lightest weight, each onto the agent with the most
    room left among those it fits; a witness of feasibility when it succeeds.
    """
    m, k = weight.shape
    left = capacity.astype(weight.dtype).copy()  # integers stay exact, sizes stay floats
    out = np.full(k, -1, dtype=np.int64)
    for j in np.argsort(-weight.min(axis=0), kind="stable"):
        fits = weight[:, j] <= left
        if not fits.any():
            return None
        room = np.where(fits, left - weight[:, j], -1)
        i = int(np.argmax(room))
        out[j] = i
        left[i] -= weight[i, j]
    return out


def _regret(weight: np.ndarray, capacity: np.ndarray) -> Optional[np.ndarray]:
    """A regret assignment of every column of ``weight`` (Martello and Toth's greedy for
    the GAP), or None.

    Repeatedly the item whose best agent is the most ahead of its second best (each
    agent's desirability for an item: minus its weight, then minus its share of the
    capacity, then minus its share of the room left; the first measure that places every
    item wins) goes to that best agent; an item fitting one agent only is the most ahead.
    The result is checked against the capacities before it is returned.
    """
    m, k = weight.shape
    w = weight.astype(np.float64)
    cap = capacity.astype(np.float64)
    for measure in range(3):
        left = cap.copy()
        out = np.full(k, -1, dtype=np.int64)
        todo = np.ones(k, dtype=bool)
        for _ in range(k):
            fits = (w <= left[:, None]) & todo[None, :]
            if not fits[:, todo].any(axis=0).all():
                break  # an item fits no agent any more
            if measure == 0:
                want = -w
            elif measure == 1:
                want = -w / np.maximum(cap, 1e-12)[:, None]
            else:
                want = -w / np.maximum(left, 1e-12)[:, None]
            want = np.where(fits, want, -np.inf)
            if m > 1:
                top2 = np.sort(want, axis=0)[-2:]
                with np.errstate(invalid="ignore"):  # (-inf - -inf: masked just below)
                    gap = np.where(np.isfinite(top2[0]), top2[1] - top2[0], np.inf)
            else:
                gap = np.where(np.isfinite(want[0]), 0.0, -np.inf)
            gap = np.where(todo, gap, -np.inf)
            j = int(np.argmax(gap))
            i = int(np.argmax(want[:, j]))
            out[j], todo[j] = i, False
            left[i] -= w[i, j]
        if not todo.any():
            load = np.zeros(m)
            np.add.at(load, out, w[out, np.arange(k)])
            if np.all(load <= cap):
                return out
    return None


def _cheap_infeasible(weight: np.ndarray, capacity: np.ndarray) -> str:
    """A combinatorial proof that the columns of ``weight`` cannot all be assigned, or ""."""
    if weight.shape[1] == 0:
        return ""
    if not np.all((weight <= capacity[:, None]).any(axis=0)):
        return "fits-nowhere"
    csum = np.cumsum(np.sort(weight, axis=1), axis=1)
    if int((csum <= capacity[:, None]).sum()) < weight.shape[1]:
        return "count bound"
    if weight.min(axis=0).sum() > capacity.sum():
        return "volume bound"
    return ""


def _assignment_model(
    weight: np.ndarray, capacity: np.ndarray, *, all_items: bool, slack: bool
) -> Tuple[np.ndarray, Any, Any, np.ndarray]:
    """The integer program over ``x[i, j]`` (and a slack per agent when ``slack``).

    ``all_items``: every item exactly once (else at most once, maximising the items placed);
    ``slack``: capacities may grow by ``s_i >= 0`` (minimising their sum). The constraints
    and bounds are SciPy's ``LinearConstraint`` and ``Bounds``.
    """
    import scipy.sparse as sp  # here: SciPy's optimize costs a batch worker 0.2-0.4 s to import
    from scipy.optimize import Bounds, LinearConstraint

    m, k = weight.shape
    nx = m * k
    ns = m if slack else 0
    # one row per item: sum_i x[i, j] (== 1 or <= 1); one per agent: sum_j w x - s <= b
    cols = np.arange(nx)
    item_rows = sp.csr_matrix((np.ones(nx), (np.tile(np.arange(k), m), cols)), shape=(k, nx + ns))
    agent = sp.csr_matrix((weight.ravel().astype(float), (np.repeat(np.arange(m), k), cols)),
                          shape=(m, nx + ns))  # fmt: skip
    if slack:
        agent = agent + sp.csr_matrix((-np.ones(m), (np.arange(m), nx + np.arange(m))),
                                      shape=(m, nx + ns))  # fmt: skip
    a = sp.vstack([item_rows, agent]).tocsr()
    lo = np.concatenate([np.ones(k) if all_items else np.zeros(k), np.full(m, -np.inf)])
    hi = np.concatenate([np.ones(k), capacity.astype(float)])
    c = np.concatenate([np.zeros(nx) if all_items else -np.ones(nx), np.ones(ns)])
    upper = np.concatenate([np.ones(nx), np.full(ns, np.inf)])
    return c, LinearConstraint(a, lo, hi), Bounds(np.zeros(nx + ns), upper), np.ones(nx + ns)


def _exact(weight: np.ndarray, capacity: np.ndarray, limit: float, *, all_items: bool = True,
           slack: bool = False):  # fmt: skip
    """Solve :func:`_assignment_model` with HiGHS; (scipy status, result)."""
    c, cons, bounds, integrality = _assignment_model(weight, capacity, all_items=all_items,
                                                     slack=slack)  # fmt: skip
    from scipy.optimize import milp

    res = milp(c, constraints=cons, bounds=bounds, integrality=integrality,
               options={"time_limit": max(1e-3, limit), "disp": False})  # fmt: skip
    return res.status, res


def _fits(weight: np.ndarray, capacity: np.ndarray, where: dict) -> bool:
    """Whether ``where`` (item -> agent) keeps every agent within its capacity."""
    load = np.zeros(capacity.shape[0], dtype=np.float64)
    for j, i in where.items():
        load[i] += weight[i, j]
    return bool(np.all(load <= capacity))


def _repair(weight: np.ndarray, capacity: np.ndarray, items: List[int],
            base: dict) -> Optional[dict]:  # fmt: skip
    """An assignment of ``items`` from a witness ``base`` of another set, or None.

    The items ``base`` assigns keep their agents (a subset of a feasible set fits); the
    few it does not (at most :data:`REPAIR_ITEMS`) go, heaviest first, to an agent with
    room, else to an agent where moving one of its items to another agent with room makes
    enough (one ejection). The deletion filter asks for sets that differ from an earlier
    witness's set by one or two items: this answers most of them without the exact model.
    The result is checked against the capacities before it is returned.
    """
    where = {j: base[j] for j in items if j in base}
    missing = [j for j in items if j not in base]
    if len(missing) > REPAIR_ITEMS:
        return None
    m = capacity.shape[0]
    load = np.zeros(m, dtype=np.float64)
    for j, i in where.items():
        load[i] += weight[i, j]
    for j in sorted(missing, key=lambda u: -float(weight[:, u].min())):
        room = capacity - load
        fits = np.flatnonzero(weight[:, j] <= room)
        if fits.size:
            i = int(fits[np.argmin(room[fits] - weight[fits, j])])  # the tightest fit
            where[j], load[i] = i, load[i] + weight[i, j]
            continue
        moved = False
        for i in np.argsort(weight[:, j] - room, kind="stable"):  # the nearest to fitting
            short = weight[i, j] - room[i]
            for k in [u for u, a in where.items() if a == i and weight[i, u] >= short]:
                to = [h for h in range(m) if h != i and weight[h, k] <= room[h]]
                if to:
                    h = to[0]
                    where[k], load[h], load[i] = h, load[h] + weight[h, k], load[i] - weight[i, k]
                    where[j], load[i] = int(i), load[i] + weight[i, j]
                    moved = True
                    break
            if moved:
                break
        if not moved:
            return None
    return where if _fits(weight, capacity, where) else None


#: Before CP-SAT, the oracle tries the LP relaxation's Farkas certificate on sets of at most
#: ``LP_CELLS`` agents x items, for at most ``LP_CAP`` seconds (:func:`.gap.bounds.
#: weights_certificate`: weights on the capacities, checked against the set's weights; a
#: proof a numerical failure cannot fake). While the LP relaxation of a set stays
#: infeasible this proves it in milliseconds, where CP-SAT took tens to hundreds; on the
#: audit's kind of heavy infeasible instances the same conflicts came 0-17 % faster
#: (bench/loadshare/ISSUE40.md, "(h61, lead)", section 1). False: CP-SAT first, as before.
LP_CERTIFICATE = True
LP_CELLS, LP_CAP = 50_000, 0.5
#: The share of what is left (and the most seconds) CP-SAT gets to find a witness of a set
#: no greedy witness answers, before HiGHS; the least worth a CP-SAT call.
CPSAT_SHARE, CPSAT_CAP, MIN_CPSAT = 0.3, 0.4, 0.05
#: The most agents x items for which the oracle tries the regret greedy and CP-SAT (both
#: grow with the product: the GAP benchmark's 5x40 is 200, load sharing's jobs on 100
#: nodes 170,000, where the greedy's O(k^2 m) and CP-SAT's model alone take seconds).
WITNESS_CELLS = 5_000


def _cpsat_witness(weight: np.ndarray, capacity: np.ndarray,
                   limit: float) -> Optional[np.ndarray]:  # fmt: skip
    """An assignment of every column of ``weight`` within ``capacity`` found by CP-SAT in
    ``limit`` seconds (one worker, its import included), or None (none found: no proof).
    The answer is summed against the capacities before it is returned."""
    return _cpsat_decide(weight, capacity, limit)[1]


def _cpsat_decide(weight: np.ndarray, capacity: np.ndarray, limit: float,
                  hint: Optional[List[int]] = None,
                  ) -> Tuple[Optional[bool], Optional[np.ndarray]]:  # fmt: skip
    """CP-SAT's answer in ``limit`` seconds: ``(True, assignment)`` (summed against the
    capacities), ``(False, None)`` (INFEASIBLE: CP-SAT proved that no assignment of every
    column exists) or ``(None, None)`` (undecided, or CP-SAT not loaded in time).
    ``hint``: an agent per column (-1: none) CP-SAT starts its search from (a witness of a
    neighbouring set: the deletion filter's sets differ by an item or two)."""
    from .._shared.milp.run import import_solver_until

    if limit < MIN_CPSAT:
        return None, None
    end = time.perf_counter() + limit
    cp = import_solver_until("cpsat", end)
    left = end - time.perf_counter()
    if cp is None or left < MIN_CPSAT:
        return None, None
    m, k = weight.shape
    model = cp.CpModel()
    x = [[model.NewBoolVar(f"x{i}_{j}") for j in range(k)] for i in range(m)]
    for j in range(k):
        model.AddExactlyOne(x[i][j] for i in range(m))
    for i in range(m):
        model.Add(sum(int(weight[i, j]) * x[i][j] for j in range(k)) <= int(capacity[i]))
    for j, a in enumerate(hint or ()):
        if a >= 0:
            for i in range(m):
                model.AddHint(x[i][j], i == a)
    solver = cp.CpSolver()
    solver.parameters.max_time_in_seconds = left
    solver.parameters.num_workers = 1
    status = solver.Solve(model)
    if status == cp.INFEASIBLE:
        return False, None
    if status not in (cp.OPTIMAL, cp.FEASIBLE):
        return None, None
    out = np.array([next(i for i in range(m) if solver.Value(x[i][j])) for j in range(k)],
                   dtype=np.int64)  # fmt: skip
    load = np.zeros(m)
    np.add.at(load, out, weight[out, np.arange(k)])
    return (True, out) if np.all(load <= capacity) else (None, None)


#: The most items a witness repair (:func:`_repair`) places; the witnesses kept.
REPAIR_ITEMS, WITNESSES = 3, 12


class _Oracle:
    """Feasibility of a set of items (columns) within every agent's capacity.

    A set is proved infeasible by a cheap certificate or the exact model, and feasible by
    an assignment: first-fit decreasing, a repair of an earlier witness (:func:`_repair`),
    the regret greedy (:func:`_regret`), or the exact model's solution; the last witnesses
    are kept for the repairs.
    """

    def __init__(self, weight: np.ndarray, capacity: np.ndarray, deadline: float) -> None:
        self.weight, self.capacity, self.deadline = weight, capacity, deadline
        self.certificates: dict = {}
        self.witnesses: List[dict] = []

    def _keep(self, where: dict) -> bool:
        self.witnesses = [where] + self.witnesses[: WITNESSES - 1]
        return True

    def __call__(self, items: List[int]) -> Optional[bool]:
        w = self.weight[:, items]
        why = _cheap_infeasible(w, self.capacity)
        if why:
            self.certificates[tuple(items)] = why
            return False
        got = _ffd(w, self.capacity)
        if got is not None:
            return self._keep({j: int(i) for j, i in zip(items, got)})
        for base in self.witnesses:
            where = _repair(self.weight, self.capacity, items, base)
            if where is not None:
                return self._keep(where)
        small = w.size <= WITNESS_CELLS  # (the GAP's sizes, not load sharing's thousands)
        got = _regret(w, self.capacity) if small else None  # (after the repairs: ms)
        if got is not None:
            return self._keep({j: int(i) for j, i in zip(items, got)})
        left = self.deadline - time.monotonic()
        if left <= 0:
            return None
        if LP_CERTIFICATE and w.size <= LP_CELLS:  # an LP and an O(m n) check: ms
            deadline = time.perf_counter() + min(left, LP_CAP)
            if weights_certificate(w, self.capacity, until=deadline) is not None:
                self.certificates[tuple(items)] = "capacity weights"
                return False
        # CP-SAT first, for a while (on the 5x40 benchmark HiGHS took 0.6-3.0 s for
        # witnesses CP-SAT found in 0.1-0.3 s, and a short time limit does not stop HiGHS:
        # 2.5 s for 0.15 s at load 13): a witness, or its proof of infeasibility (HiGHS
        # proved the same 30-item conflicts again in 0.4-0.8 s at load 10, past a solve
        # that took 7 ms), then HiGHS with what is left
        near = self.witnesses[0] if self.witnesses else {}
        fits, got = (_cpsat_decide(w, self.capacity, min(CPSAT_SHARE * left, CPSAT_CAP),
                                   [near.get(j, -1) for j in items])
                     if small else (None, None))  # fmt: skip
        if fits is False:
            self.certificates[tuple(items)] = "CP-SAT"
            return False
        if got is not None:
            return self._keep({j: int(i) for j, i in zip(items, got)})
        left = self.deadline - time.monotonic()
        if left <= 0:
            return None
        status, res = _exact(w, self.capacity, left)
        return self._answer(items, w, status, res)

    def _answer(self, items: List[int], w: np.ndarray, status: int, res: Any
                ) -> Optional[bool]:  # fmt: skip
        """HiGHS's answer on ``items``: proved infeasible, a witness kept, or unknown."""
        if status == 2:  # infeasible, proved by the solver
            self.certificates[tuple(items)] = "exact"
            return False
        if status == 0 and res.x is not None:
            x = np.asarray(res.x[: w.size]).reshape(w.shape)
            where = {j: int(i) for j, i in zip(items, np.argmax(x, axis=0))}
            if _fits(self.weight, self.capacity, where):
                self._keep(where)
        return True if status == 0 else None


def _names(items: List[int], item: str = "item") -> str:
    words = [str(j) for j in items]
    if len(words) <= 1:
        return f"{item} " + "".join(words)
    if len(words) > 12:
        words = words[:10] + [f"... ({len(items)} in all)"]
        return f"{item}s " + ", ".join(words)
    return f"{item}s " + ", ".join(words[:-1]) + " and " + words[-1]


def _gap_check(instance: GapInstance) -> Any:
    """The check of a changed GAP instance: the family's own heuristic solves it."""
    return lambda weight, capacity, keep, limit: _checked(instance, weight, capacity, keep,
                                                         limit)  # fmt: skip


#: The least time (s) a fix's check is started with.
_MIN_CHECK = 0.01


def _checked(instance: GapInstance, weight: np.ndarray, capacity: np.ndarray,
             keep: np.ndarray, limit: float) -> bool:  # fmt: skip
    """Solve the changed instance with the family's own method; True when it fits (False:
    no fit found, or no time left: the fix is then not claimed checked)."""
    if limit < _MIN_CHECK:  # past the fixes' deadline: the budget is kept (issue 36's rule)
        return False
    changed = GapInstance(instance.cost[:, keep], weight[:, keep], capacity)
    res = solve_gap(changed, "portfolio", time_limit=limit, seed=0)
    if not res.has_solution:
        return False
    a = res.assignment
    used = np.bincount(a[a >= 0], weights=changed.weight[a[a >= 0], np.flatnonzero(a >= 0)],
                       minlength=changed.m)
    return bool(np.all(a >= 0) and np.all(used <= capacity))


def _drop_items(w: np.ndarray, b: np.ndarray, deadline: float, check: Any,
                item: str = "item") -> Optional[Relaxation]:  # fmt: skip
    """The fewest items to drop so that the rest fit (the most items placed, exactly).

    ``check(weight, capacity, keep, seconds)`` solves the changed instance.
    """
    status, res = _exact(w, b, deadline - time.monotonic(), all_items=False)
    if res.x is None:
        return None
    x = np.round(res.x[: w.size]).reshape(w.shape)
    placed = x.sum(axis=0) > 0.5
    drop = [int(j) for j in np.flatnonzero(~placed)]
    keep = np.flatnonzero(placed)
    ok = check(w, b, keep, deadline - time.monotonic())
    word = item if len(drop) == 1 else item + "s"
    return Relaxation(kind="drop_items", sentence=f"drop {_names(drop, item)}",
                      changes={"drop_items": drop}, cost=float(len(drop)),
                      optimal=status == 0, checked=ok) if drop else Relaxation(
        kind="drop_items", sentence=f"no {word} to drop", changes={"drop_items": []},
        cost=0.0, optimal=status == 0, checked=ok)  # fmt: skip


def _overflow_greedy(weight: np.ndarray, capacity: np.ndarray) -> np.ndarray:
    """Capacity to add so that a greedy assignment of every item fits (an upper bound).

    Items in decreasing order of their lightest weight, each onto the agent where it adds
    the least overflow (ties: the most room left).
    """
    m, k = weight.shape
    load = np.zeros(m, dtype=weight.dtype)
    for j in np.argsort(-weight.min(axis=0), kind="stable"):
        over = np.maximum(load + weight[:, j] - capacity, 0) - np.maximum(load - capacity, 0)
        room = capacity - load - weight[:, j]
        i = int(np.lexsort((-room, over))[0])
        load[i] += weight[i, j]
    return np.maximum(load - capacity, 0)


def _raise_capacity(w: np.ndarray, b: np.ndarray, deadline: float, check: Any,
                    agent: str = "agent") -> Optional[Relaxation]:  # fmt: skip
    """The least total capacity to add to the agents so that every item fits.

    The integer program (capacities grow by ``s_i >= 0``, minimise their sum) gets the time
    left; a greedy overflow stands in when the program finds nothing better in time, and
    is the least, without the program, when it adds no more than the volume's excess.
    ``check(weight, capacity, keep, seconds)`` solves the changed instance.
    """
    add = _overflow_greedy(w, b)
    # the volume: whatever the assignment, the agents hold at least every item's lightest
    # weight, so no less than that total's excess over the capacities can do; a greedy
    # overflow that meets it is the least, without the program
    least = float(w.min(axis=0).sum() - b.sum())
    if least > 0 and float(add.sum()) <= least * (1 + 1e-12):
        status, res, optimal = 0, None, True
    else:
        status, res = _exact(w, b, deadline - time.monotonic(), slack=True)
        optimal = False
    if res is not None and res.x is not None:
        found = res.x[w.size:]
        found = (np.round(found).astype(np.int64) if w.dtype.kind in "iu"
                 else np.maximum(found, 0.0))  # fmt: skip
        if found.sum() <= add.sum():
            add, optimal = found, status == 0
    raised = b + add
    ok = check(w, raised, np.arange(w.shape[1]), deadline - time.monotonic())
    parts = [f"{agent} {i} by {add[i]:g}" for i in np.flatnonzero(add)]
    return Relaxation(kind="raise_capacity",
                      sentence="raise the capacity of " + ", ".join(parts),
                      changes={"add_capacity": {int(i): add[i].item()
                                                for i in np.flatnonzero(add)}},
                      cost=float(add.sum()), optimal=optimal, checked=ok)  # fmt: skip


@checked("coalloc.loadshare.constraints", "explain_gap", tables="FUNCTIONS")
def explain_gap(instance: GapInstance, *, time_limit: float = 10.0) -> Optional[Explanation]:
    """Why no assignment of every item exists: a minimal conflict and the nearest fixes.

    Parameters
    ----------
    instance : GapInstance
        The instance (its costs play no part: feasibility is about weights and capacities).
    time_limit : float, default 10.0
        Seconds for the whole explanation: the conflict search gets 0.6 of it, the two
        relaxations what is left of about a tenth of it (1 s at least)
        (:func:`~coalloc._shared.explain.fix_deadline`). What does not finish is reported
        (``sound``/``minimal`` None, a relaxation not ``optimal``), never guessed.

    Returns
    -------
    Explanation or None
        None when every item can be assigned (nothing to explain) or when feasibility
        could not be decided in the budget.

    Examples
    --------
    Three items of weight 2 onto two agents of capacity 3: any two conflict (the count
    bound), and dropping one item fits.

    >>> from coalloc.loadshare import GapInstance
    >>> inst = GapInstance([[1, 1, 1]] * 2, [[2, 2, 2]] * 2, [3, 3])
    >>> e = explain_gap(inst)
    >>> e.demand, e.sound, e.minimal
    (('item 0', 'item 1', 'item 2'), True, True)
    >>> [(r.kind, r.cost, r.checked) for r in e.relaxations]
    [('drop_items', 1.0, True), ('raise_capacity', 1.0, True)]
    """
    if not isinstance(instance, GapInstance):
        raise TypeError(f"instance must be a GapInstance, got {type(instance).__name__}")
    time_limit = float(time_limit)  # checked by the table (@checked)
    t0 = time.monotonic()
    w, b = instance.weight, instance.capacity
    oracle = _Oracle(w, b, t0 + 0.6 * time_limit)
    items = [int(j) for j in np.argsort(w.min(axis=0), kind="stable")]  # heaviest last
    whole = oracle(items)
    if whole is not False:
        return None
    search = minimal_conflict(items, oracle, deadline=oracle.deadline, known_infeasible=True)
    conflict = sorted(search.conflict)
    proof = oracle.certificates.get(tuple(search.conflict), "")
    if not proof:  # the kept set's own proof (it was proved when first kept)
        proof = next((v for k, v in oracle.certificates.items() if sorted(k) == conflict), "")
    deadline = fix_deadline(t0, time_limit)
    middle = time.monotonic() + 0.5 * max(0.0, deadline - time.monotonic())
    check = _gap_check(instance)
    relaxations = [r for r in (_drop_items(w, b, middle, check),
                               _raise_capacity(w, b, deadline, check))
                   if r is not None]  # fmt: skip
    need = w[:, conflict].min(axis=0)
    resources = tuple(f"capacity of agent {i} ({int(b[i])})" for i in range(instance.m))
    fix = "; or ".join(r.sentence for r in relaxations if r.checked and r.cost > 0)
    how = {"exact": "an exact model proves it", "CP-SAT": "an exact model (CP-SAT) proves it",
           "fits-nowhere": "an item is heavier than every "
           "agent's capacity", "count bound": "the agents cannot hold that many of them (count "
           "bound)", "volume bound": "their lightest weights exceed the agents' total capacity",
           "capacity weights": "with the agents' capacities weighted by the LP relaxation's "
           "multipliers, their least weighted weights exceed the weighted capacity (a "
           "checked Farkas certificate)"}.get(proof, "not proved in the time given")  # fmt: skip
    minimal = ("dropping any one of them lets the rest fit" if search.minimal
               else "not proved minimal in the time given")  # fmt: skip
    if len(conflict) == 1:  # one item: no "all", no "any one of them"
        j = conflict[0]
        pairs = ", ".join(f"{int(w[i, j])} > {int(b[i])}" for i in range(min(6, w.shape[0])))
        sentence = (f"Item {j} cannot be assigned: it is heavier than every agent's capacity "
                    f"(weight > capacity, agent by agent: {pairs}"
                    f"{' ...' if w.shape[0] > 6 else ''})"
                    if proof == "fits-nowhere" else
                    f"Item {j} cannot be assigned within the agents' capacities: {how}")
        sentence += "."
    else:
        sentence = (f"{_names(conflict).capitalize()} (lightest weights "
                    f"{', '.join(str(int(x)) for x in need[:12])}"
                    f"{' ...' if need.size > 12 else ''}) cannot all be assigned within the "
                    f"agents' capacities (total {int(b.sum())}): {how}; {minimal}.")  # fmt: skip
    if fix:
        sentence += f" Nearest fix: {fix}."
    return Explanation(demand=tuple(f"item {j}" for j in conflict), resources=resources,
                       conflict={"items": conflict},
                       certificate=proof, sound=search.sound, minimal=search.minimal,
                       sentence=sentence, relaxations=tuple(relaxations),
                       oracle_calls=search.calls + 1, seconds=time.monotonic() - t0)  # fmt: skip


# ----------------------------------------------------------------- load sharing: jobs that wait

#: The largest ``nodes x jobs`` for which the conflict search uses the exact packing model.
EXACT_CELLS = 50_000


#: The largest ``nodes x jobs`` for which a volume conflict that no packing shows minimal is
#: searched further with the exact packing model (above it the model does not decide in
#: seconds: 20 nodes and 340 jobs ran the whole 6 s of the search without one answer).
SEARCH_CELLS = 2_000

#: At most this many more jobs than the volume's lower bound are tried for ``drop_items``.
EXTRA_DROPS = 8


def _bfd(size: np.ndarray, capacity: np.ndarray) -> Optional[np.ndarray]:
    """Best-fit decreasing: each job of ``size``, largest first, onto the node of
    ``capacity`` it leaves the least room on. Returns the node of each job (a witness), or
    None when a job fits no node."""
    left = capacity.astype(np.float64).copy()
    where = np.full(size.size, -1, dtype=np.int64)
    for j in np.argsort(-size, kind="stable"):
        room = left - size[j]
        room[room < 0] = np.inf
        i = int(np.argmin(room))
        if not np.isfinite(room[i]):
            return None
        left[i] = room[i]
        where[j] = i
    return where


#: The reserves :func:`_fill` tries, in typical jobs left room for before a bin's last pair.
FILL_RESERVES = (2.0, 3.0, 1.5, 4.0, 2.5)


def _fill(size: np.ndarray, capacity: np.ndarray, reserve: float) -> Optional[np.ndarray]:
    """Whether the jobs pack when the nodes are filled one at a time, smallest first: the
    largest jobs that leave room for ``reserve`` typical (median) jobs, then the one job or
    pair of jobs that fills the room left best (a binary search over the jobs sorted);
    the last node takes what is left. A near-perfect packing for many small jobs, where
    best-fit and first-fit decreasing leave a little room on every node. Returns the node
    of each job (a witness: the assignment it built, summed again, fits every node), or
    None."""
    rank = np.argsort(size, kind="stable")
    a = np.asarray(size, dtype=np.float64)[rank]
    where = np.full(a.size, -1, dtype=np.int64)
    nodes = np.argsort(capacity, kind="stable")
    for k, i in enumerate(nodes.tolist()):
        idx = np.flatnonzero(where < 0)
        if k == len(nodes) - 1 or idx.size == 0:
            where[idx] = i
            break
        room = float(capacity[i])
        keep = reserve * float(np.median(a[idx]))
        for j in idx[::-1].tolist():  # largest first
            if a[j] <= room - keep:
                where[j] = i
                room -= a[j]
        idx = np.flatnonzero(where < 0)
        if idx.size == 0:
            break
        v = a[idx]
        best, pick = -1.0, []
        one = int(np.searchsorted(v, room, side="right")) - 1
        if one >= 0:
            best, pick = float(v[one]), [one]
        if v.size > 1:
            other = np.searchsorted(v, room - v, side="right") - 1
            other = np.where(other == np.arange(v.size), other - 1, other)
            other = np.minimum(other, v.size - 1)
            sums = np.where(other >= 0, v + v[np.maximum(other, 0)], -1.0)
            sums[sums > room] = -1.0
            q = int(np.argmax(sums))
            if sums[q] > best:
                best, pick = float(sums[q]), [q, int(other[q])]
        for q in pick:
            where[idx[q]] = i
    if (where < 0).any():
        return None
    load = np.bincount(where, weights=a, minlength=capacity.size)
    if not np.all(load <= capacity):
        return None
    out = np.empty_like(where)
    out[rank] = where
    return out


def _packing(size: np.ndarray, capacity: np.ndarray) -> Optional[np.ndarray]:
    """A packing witness (the node of each job): best-fit or first-fit decreasing, else
    :func:`_fill`; None when none is found."""
    where = _bfd(size, capacity)
    if where is None:
        where = _ffd(np.tile(size, (capacity.size, 1)), capacity)
    if where is not None:
        return where
    for r in FILL_RESERVES:
        where = _fill(size, capacity, r)
        if where is not None:
            return where
    return None


def _packs(size: np.ndarray, capacity: np.ndarray) -> bool:
    """Whether :func:`_packing` finds a packing witness."""
    return _packing(size, capacity) is not None


def _volume_drop(size: np.ndarray, b: np.ndarray, deadline: float) -> Optional[Relaxation]:
    """The jobs to hold back when the load exceeds the total capacity: the largest, as few
    as the volume allows (``k``: fewer jobs remove less than the excess, whichever they
    are, so ``k`` is a lower bound), then one more at a time until the rest packs (a
    best-fit, first-fit or :func:`_fill` witness); proved the fewest when ``k`` is enough.

    The fix carries its witness, ``changes["placement"]``: the node of every job (-1 for
    those held back). The packing is often tight (the fewest leave a few units of room on
    100,000: :func:`_fill`'s pairs end 2e-6 from a node's capacity), and the family's
    solvers, which the sentence's reader would run on the changed problem, need not find
    it (the default portfolio left 10.9 waiting on such a case of the benchmark, the exact
    method decided nothing in 30 s): the placement is the fix's proof and its answer."""
    order = np.argsort(-size, kind="stable")
    excess = float(size.sum() - b.sum())
    k = int(np.searchsorted(np.cumsum(size[order]), excess, side="left")) + 1
    k = min(k, size.size)
    for extra in range(EXTRA_DROPS + 1):
        if time.monotonic() >= deadline or k + extra > size.size:
            return None
        drop = sorted(int(j) for j in order[: k + extra])
        keep = np.ones(size.size, dtype=bool)
        keep[drop] = False
        where = _packing(size[keep], b)
        if where is not None:
            placement = np.full(size.size, -1, dtype=np.int64)
            placement[keep] = where
            return Relaxation(kind="drop_items", sentence=f"hold back {_names(drop, 'job')} "
                              f"(the rest then fit: the fix lists the node of each)",
                              changes={"drop_items": drop, "placement": placement.tolist()},
                              cost=float(len(drop)), optimal=extra == 0,
                              checked=True)  # fmt: skip
    return None


def _pack_check(w: np.ndarray, b: np.ndarray, keep: np.ndarray, limit: float) -> bool:
    """A packing of the kept jobs within the capacities: a best-fit or first-fit witness,
    else the exact model where it can decide (:data:`SEARCH_CELLS`; above, False: the fix
    is then not claimed checked, rather than HiGHS running out the fixes' time)."""
    sub = w[:, keep]
    if _bfd(sub[0], b) is not None or _ffd(sub, b) is not None:
        return True
    if sub.size > SEARCH_CELLS or limit <= 0:
        return False
    return _exact(sub, b, limit)[0] == 0


def _volume_conflict(size: np.ndarray, b: np.ndarray) -> Tuple[List[int], bool]:
    """A set of jobs whose sizes exceed the total capacity, and whether it is shown minimal.

    Such a set is minimal when the jobs but its smallest pack (any other job out: put the
    smallest in its place), and that packing has ``total - (sum - smallest)`` of room to
    spare. The largest jobs up to the first past the total spare only the room the ones
    before it left (1-9 of jobs of 1-100 on the paper's grid: at 100 nodes no packing
    found). The same set with one large job ``t`` swapped for the next two (``y >= z``,
    the largest ``t`` with ``t < y + z - room``) still exceeds the total and spares
    ``room + t - y``, about ``z``. Both are tried, the one with more room first; returns
    the first whose packing is found (a witness of minimality), else the largest jobs
    (not shown minimal).
    """
    total = float(b.sum())
    order = np.argsort(-size, kind="stable")
    k = int(np.searchsorted(np.cumsum(size[order]), total, side="right")) + 1
    plain = sorted(int(j) for j in order[:k])
    tries = [(total - float(size[order[: k - 1]].sum()), plain)]
    if 2 <= k < size.size:
        head = order[: k - 1]
        room = tries[0][0]
        y, z = float(size[order[k - 1]]), float(size[order[k]])
        under = np.flatnonzero(size[head] < y + z - room)
        if under.size:
            t = int(head[under[np.argmax(size[head][under])]])
            swapped = sorted([int(j) for j in head if j != t] + [int(order[k - 1]),
                                                                 int(order[k])])  # fmt: skip
            if float(size[swapped].sum()) > total:
                tries.append((room + float(size[t]) - y, swapped))
    for _, jobs in sorted(tries, key=lambda x: -x[0]):
        if _packs(np.sort(size[jobs])[1:], b):
            return jobs, True
    return plain, False


@checked("coalloc.loadshare.constraints", "explain_share", tables="FUNCTIONS")
def explain_share(problem: Any, *, time_limit: float = 10.0) -> Optional[Explanation]:
    """Why some load of a load-sharing problem must wait: a minimal set of jobs that overflow.

    A placement serves ``sum_i min(load_i, capacity_i)`` in a second; everything is served
    exactly when the jobs can be packed onto the nodes within their capacities. When they
    cannot, the explanation names a set of jobs that cannot all be packed (sound: their
    sizes exceed the total capacity, or the exact packing model says so) and minimal (each
    drop packed by first fit or the exact model), and the nearest fixes: the fewest jobs to
    hold back and the least capacity to add.

    Parameters
    ----------
    problem : LoadSharingProblem
        The problem.
    time_limit : float, default 10.0
        Seconds for the whole explanation (0.6 for the conflict; the fixes what is left of
        about a tenth of it, 1 s at least: :func:`~coalloc._shared.explain.fix_deadline`).

    Returns
    -------
    Explanation or None
        None when every job can be served (nothing to explain) or that could not be
        decided in the budget.

    Examples
    --------
    Three jobs of 6 onto two nodes of 10: any two fit, the three cannot (one node would
    hold two: 12 > 10).

    >>> from coalloc.loadshare import LoadSharingProblem
    >>> e = explain_share(LoadSharingProblem([10, 10], [6, 6, 6], [0, 0, 1]))
    >>> e.demand, e.sound, e.minimal
    (('job 0', 'job 1', 'job 2'), True, True)
    >>> [(r.kind, r.cost) for r in e.relaxations]
    [('drop_items', 1.0), ('raise_capacity', 2.0)]
    """
    from .model import LoadSharingProblem

    if not isinstance(problem, LoadSharingProblem):
        raise TypeError(f"problem must be a LoadSharingProblem, got {type(problem).__name__}")
    time_limit = float(time_limit)  # checked by the table (@checked)
    t0 = time.monotonic()
    size = np.asarray(problem.job_size, dtype=np.float64)
    b = np.asarray(problem.capacity, dtype=np.float64)
    jobs = [int(j) for j in np.argsort(size, kind="stable")]  # largest tried last
    packed = False
    if size.sum() > b.sum():  # the volume: large jobs that exceed all capacity
        jobs, packed = _volume_conflict(size, b)
        known = True
    else:
        known = False
    if len(jobs) * b.size > EXACT_CELLS:
        jobs_w = None
    else:
        jobs_w = np.tile(size[jobs], (b.size, 1))
    if jobs_w is None:  # too large for the packing models: the volume and packing witnesses
        if not known:
            return None
        over = float(size.sum() - b.sum())
        # minimal when the jobs but the smallest pack (see below); the fewest to hold back
        drop = _volume_drop(size, b, fix_deadline(t0, time_limit))
        fix = f" Nearest fix: {drop.sentence}." if drop is not None else ""
        sentence = (f"These {len(jobs)} of the largest jobs alone need more than the nodes' total "
                    f"capacity ({b.sum():g}); in all, {over:g} of the load ({size.sum():g}) "
                    f"must wait whatever the placement (volume bound"
                    f"{'; without any one of them the rest pack' if packed else ''}).{fix}")
        return Explanation(demand=tuple(f"job {j}" for j in jobs),
                           resources=(f"total capacity of the {b.size} nodes ({b.sum():g})",),
                           certificate="volume bound", sound=True,
                           minimal=True if packed else None, sentence=sentence,
                           relaxations=(drop,) if drop is not None else (),
                           conflict={"jobs": jobs}, oracle_calls=0,
                           seconds=time.monotonic() - t0)  # fmt: skip
    oracle = _Oracle(jobs_w, b, t0 + 0.6 * time_limit)
    local = list(range(len(jobs)))
    if not known and oracle(local) is not False:
        return None
    # The volume's conflict (the largest jobs) is minimal when the jobs but its smallest pack:
    # any other job out leaves a set that packs too (put the smallest in its place). No
    # packing found: the exact search, where its model can decide (SEARCH_CELLS).
    packed = known and packed
    if known and (packed or len(jobs) * b.size > SEARCH_CELLS):
        search = ConflictSearch(local, True, True if packed else None, 1, False)
    else:
        search = minimal_conflict(local, oracle, deadline=oracle.deadline,
                                  known_infeasible=True)  # fmt: skip
    conflict = sorted(jobs[i] for i in search.conflict)
    proof = oracle.certificates.get(tuple(search.conflict), "volume bound" if known else "")
    w_all = np.tile(size, (b.size, 1)) if size.size * b.size <= EXACT_CELLS else None
    relax: List[Relaxation] = []
    if w_all is not None:
        deadline = fix_deadline(t0, time_limit)
        middle = time.monotonic() + 0.5 * max(0.0, deadline - time.monotonic())
        quick = _volume_drop(size, b, middle) if known else None
        relax = [r for r in (quick or _drop_items(w_all, b, middle, _pack_check, "job"),
                             _raise_capacity(w_all, b, deadline, _pack_check, "node"))
                 if r is not None]  # fmt: skip
    how = {"exact": "an exact packing model proves it",
           "CP-SAT": "an exact packing model (CP-SAT) proves it", "fits-nowhere": "a job is larger "
           "than every node", "count bound": "the nodes cannot hold that many of them",
           "volume bound": "their sizes exceed the nodes' total capacity"}.get(
        proof, "not proved in the time given")  # fmt: skip
    fix = "; or ".join(r.sentence for r in relax if r.checked and r.cost > 0)
    sentence = (f"{_names(conflict, 'job').capitalize()} (sizes "
                f"{', '.join(f'{size[j]:g}' for j in conflict[:12])}"
                f"{' ...' if len(conflict) > 12 else ''}) cannot all be served within the "
                f"nodes' capacities (total {b.sum():g}): {how}"
                f"{'; without any one of them the rest fit' if search.minimal else ''}.")
    if fix:
        sentence += f" Nearest fix: {fix}."
    return Explanation(demand=tuple(f"job {j}" for j in conflict),
                       resources=tuple(f"capacity of node {i} ({b[i]:g})" for i in range(b.size)),
                       certificate=proof, sound=search.sound, minimal=search.minimal,
                       sentence=sentence, relaxations=tuple(relax),
                       conflict={"jobs": conflict}, oracle_calls=search.calls + 1,
                       seconds=time.monotonic() - t0)  # fmt: skip
