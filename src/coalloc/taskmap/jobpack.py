"""A step after the mapper: whole jobs packed into the subtrees of a tree of links jointly
(issue 40 item 2, h48bound's follow-up), run by :func:`~coalloc.taskmap.solve`'s default
method in the spare time of a ``time_limit`` when its gap is over 10 %
(:func:`pack_in_spare_time`, h49tmap); untimed calls never run it.

On the Table 1 pipelines with light streams (``c = 1``) the multilevel mapper's answer is
1.2-1.6x a mapping in which every job is split over the subtrees of the resource tree so
that the jobs' cuts *together* fit every link (``bench/taskmap/ISSUE40.md``). For a task
graph whose tasks all belong to jobs (:func:`coalloc.taskmap.jobbound._jobs`: dense
connected sets of 3-24 tasks) and a resource graph that is a tree with at most one
processor per node, and a level ``L``, a small MILP (HiGHS through highspy) chooses for
every job ``j`` and subtree ``S`` how many of its tasks lie in ``S`` (one binary per count,
counts whose cut alone exceeds the link above ``S`` left out): a subtree's count is its
node's own plus its children's, every job is whole at the root, the jobs' cuts
(``cut_j[N]``, the certified cut profile) summed on each link are at most ``L`` x its
bandwidth, and each processor's share, at its job's heaviest weight, is at most ``L`` x its
capacity. The volume between jobs is left out, so the MILP only proposes: every answer is
turned into a mapping and scored by :func:`coalloc.taskmap.verify_mapping`, and
:func:`pack_jobs` returns the best mapping met, the starting one included.
"""

from __future__ import annotations

import time
from typing import Optional

import numpy as np

from .._shared.milp.highs import HIGHS_STOP_MARGIN
from .model import ResourceGraph, TaskGraph
from .result import TaskMappingResult
from .verify import verify_mapping

__all__ = [
    "pack_jobs",
    "pack_in_spare_time",
    "SPARE_GAP",
    "SPARE_MIN",
    "SPARE_ONE_TRY",
    "SPARE_STOP",
    "SPARE_CHAIN",
]


def _layout(tasks: TaskGraph, resources: ResourceGraph):
    """The jobs and the tree of sides, or None when the step does not apply."""
    from .cutbound import _Sides
    from .jobbound import _jobs

    jobs = _jobs(tasks)
    if not jobs or sum(m.shape[0] for m, _ in jobs) != tasks.n:
        return None
    sides = _Sides(resources)
    own = [[] for _ in range(sides.ncomp)]
    for q, c in enumerate(sides.pcomp.tolist()):
        own[c].append(q)
    if any(len(o) > 1 for o in own):
        return None
    kids = [[] for _ in range(sides.ncomp)]
    for c in range(sides.ncomp):
        if sides.parent[c] >= 0:
            kids[int(sides.parent[c])].append(c)
    root = int(sides.order[-1])
    return jobs, sides, own, kids, root


#: The HiGHS options of the packing MILP in the shared runner (those of the LP helper)
_HIGHS_AS_LP_HELPER = (("threads", 1), ("simplex_strategy", 1))
#: With at least this many seconds for it, the packing MILP goes through the shared runner,
#: which stops HiGHS at the deadline (its model, 57,000 nonzeros and variables on table1
#: c=1, is solved in a child process, killed there): HiGHS's own time limit ran 0.3-0.8 s
#: past a share of 3.1-3.6 s in presolve and the root (table1 c=1 #3 at T = 5 s ended at
#: 5.15-5.76 s under a load of 5). With less, the child's start (0.25-0.6 s) would take
#: the share (table1 c=1 #0 at T = 1.5 and 2 s found nothing that way, where HiGHS in this
#: thread finds 0.2897), and HiGHS's limit in this thread ran 0.03-0.07 s past it at T = 2 s
#: (kept back by the caller: ``HIGHS_STOP_MARGIN``).
PACK_RUNNER_MIN = 2.5


def _solve_packing(a_ub, b_ub, a_eq, b_eq, until: float) -> Optional[np.ndarray]:
    """A solution of the packing MILP (0-1 variables, no objective) found before ``until``,
    or None: through the shared runner when :data:`PACK_RUNNER_MIN` seconds or more are
    left, else HiGHS in this thread with its own time limit. A solve stopped with an
    incumbent gives it (a packing too)."""
    import scipy.sparse as sp

    from .._shared import milp
    from .._shared.lp_highs import solve_lp

    nv = a_ub.shape[1]
    left = until - time.perf_counter()  # HiGHS's clock starts at its solve, not here
    if left <= 0:
        return None
    if left < PACK_RUNNER_MIN:
        return solve_lp(np.zeros(nv), a_ub, b_ub, a_eq, b_eq, 0.0, 1.0, integral=True,
                        options={"time_limit": left}).x  # fmt: skip
    problem = milp.MilpProblem(
        c=np.zeros(nv), A=sp.vstack([a_ub, a_eq], format="csr"),
        row_lb=np.concatenate([np.full(b_ub.shape[0], -np.inf), b_eq]),
        row_ub=np.concatenate([b_ub, b_eq]), integrality=np.ones(nv), lb=0.0, ub=1.0,
    )  # fmt: skip
    t = time.perf_counter()  # (converting the arrays counts: the runner's ``started``)
    options = milp.MilpOptions(time_limit=until - t, started=t, scale=False,
                               highs_options=_HIGHS_AS_LP_HELPER)  # fmt: skip
    return milp.run_milp("highs", milp.import_solver("highs"), problem, options=options).x


#: True (the default): the packing MILP has no count of a job in a subtree above what its
#: processors can hold of that job alone at the level (``floor(L x capacity / weight)``
#: per processor, summed over the subtree): counts the capacity rows forbid anyway, so the
#: MILP's answers are the same, but the model is smaller (on the Table 1 c=1 pipelines a
#: leaf keeps 1-3 counts of a job's 6-11). False: every count the links allow (as before).
PRUNE_CAPACITY = True


def _most_counts(jobs, sides, own, kids, w: np.ndarray, L: float) -> np.ndarray:
    """``most[j, S]``: the most tasks of job ``j`` the processors below side ``S`` hold at
    level ``L`` (each at most ``L`` x its capacity, the job's tasks at its heaviest weight)."""
    most = np.zeros((len(jobs), sides.ncomp), dtype=np.int64)
    heavy = np.array([float(w[m].max()) for m, _ in jobs])
    size = np.array([m.shape[0] for m, _ in jobs], dtype=np.float64)
    for S in sides.order.tolist():  # leaves first
        if own[S]:
            c = float(sides.cap[own[S][0]])
            with np.errstate(divide="ignore"):
                most[:, S] = np.minimum(np.floor(L * c / heavy * (1 + 1e-9)), size)
        for C in kids[S]:
            most[:, S] += most[:, C]
    return np.minimum(most, size.astype(np.int64)[:, None])


def _packing(tasks, resources, layout, L: float, until: float) -> Optional[np.ndarray]:
    """A mapping from the MILP at level ``L``, or None when HiGHS finds no answer before
    ``until`` (``time.perf_counter()``; the model's construction counts)."""
    import scipy.sparse as sp

    jobs, sides, own, kids, root = layout
    w = tasks.node_weight.astype(np.float64)
    n = sides.ncomp
    most = _most_counts(jobs, sides, own, kids, w, L) if PRUNE_CAPACITY else None
    idx: dict = {}
    for j, (m, cut) in enumerate(jobs):
        k = m.shape[0]
        for S in range(n):
            for N in range(k + 1):
                if most is not None and N > most[j, S]:
                    break
                if (N == k) if S == root else (cut[N] <= L * sides.bw_up[S]):
                    idx[(j, S, N)] = len(idx)
    by_js: dict = {}
    for (j, S, N), q in idx.items():
        by_js.setdefault((j, S), []).append((N, q))
    rows, cols, vals, lo, hi = [], [], [], [], []

    def add(coef: dict, low: float, high: float) -> None:
        r = len(lo)
        for q, x in coef.items():
            rows.append(r)
            cols.append(q)
            vals.append(x)
        lo.append(low)
        hi.append(high)

    def share(j: int, S: int, scale: float) -> dict:
        """The tasks of job j on S's own node, times scale, as coefficients."""
        coef: dict = {}
        for N, q in by_js.get((j, S), []):
            coef[q] = coef.get(q, 0.0) + N * scale
        for C in kids[S]:
            for N, q in by_js.get((j, C), []):
                coef[q] = coef.get(q, 0.0) - N * scale
        return coef

    for j in range(len(jobs)):
        for S in range(n):
            add({q: 1.0 for _, q in by_js.get((j, S), [])}, 1.0, 1.0)  # one count
            add(share(j, S, 1.0), 0.0, np.inf if own[S] else 0.0)
    for S in range(n):
        if S != root:
            add({q: float(jobs[j][1][N]) for j in range(len(jobs))
                 for N, q in by_js.get((j, S), [])}, -np.inf, L * sides.bw_up[S])  # fmt: skip
        if own[S]:
            load: dict = {}
            for j, (m, _) in enumerate(jobs):
                for q, x in share(j, S, float(w[m].max())).items():
                    load[q] = load.get(q, 0.0) + x
            add(load, -np.inf, L * float(sides.cap[own[S][0]]))
    nv = len(idx)
    a = sp.csr_matrix((vals, (rows, cols)), shape=(len(lo), nv))
    lo_, hi_ = np.array(lo), np.array(hi)
    eq = lo_ == hi_
    up, down = (hi_ < np.inf) & ~eq, (lo_ > -np.inf) & ~eq
    a_ub = sp.vstack([a[up], -a[down]])
    b_ub = np.concatenate([hi_[up], -lo_[down]])
    x = _solve_packing(a_ub, b_ub, a[eq], lo_[eq], until)
    if x is None:
        return None
    chosen = {(j, S): N for (j, S, N), q in idx.items() if x[q] > 0.5}
    mapping = np.full(tasks.n, -1, dtype=np.int64)
    procs = np.asarray(resources.processors)
    for j, (m, _) in enumerate(jobs):
        free = m.tolist()
        for S in range(n):
            here = chosen.get((j, S), 0) - sum(chosen.get((j, C), 0) for C in kids[S])
            for _ in range(here):
                mapping[free.pop()] = procs[own[S][0]]
    return mapping if (mapping >= 0).all() else None


def _polished(tasks: TaskGraph, resources: ResourceGraph, mapping: np.ndarray,
              until: Optional[float] = None) -> np.ndarray:  # fmt: skip
    """``mapping`` after the multilevel mapper's bottleneck moves (its ``_finish``: every move
    lowers the maximum or the number of resources at it; at most ``max(200, 4 x tasks)``,
    none started after ``until``, a :func:`time.perf_counter` value; None: no clock): the
    MILP places a job's counts but not which of its tasks go where, nor the volume between
    jobs, which these moves see."""
    from .hierarchy import topology
    from .levels import TaskLevel
    from .multilevel import _finish

    topo = topology(resources)
    fine = TaskLevel.of(tasks)
    position = np.empty(resources.n_nodes, dtype=np.int64)
    position[topo.order_nodes] = np.arange(topo.P)
    out, _, _ = _finish(topo, fine, position[mapping], until)
    return topo.order_nodes[out]


def pack_jobs(
    tasks: TaskGraph,
    resources: ResourceGraph,
    mapping: np.ndarray,
    *,
    tries: int = 6,
    time_limit: float = 180.0,
    lower: Optional[float] = None,
    polish: bool = True,
    first: float = 0.5,
) -> tuple:
    """Try joint job packings below a mapping's occupancy; keep the best verified mapping.

    The levels ``L`` are bisected between the default lower bound and ``mapping``'s
    occupancy: a level where the packing MILP (module docstring) has an answer moves the
    upper end down, one where it has none (or HiGHS runs out of its share of the time)
    moves the lower end up. Each answer is scored by :func:`~coalloc.taskmap.verify_mapping` with
    every stream, the volume between jobs included. The default method calls it only in
    the spare time of a ``time_limit`` (:func:`pack_in_spare_time`).

    Parameters
    ----------
    tasks : TaskGraph
        The task graph; the step applies when every task is in a job (dense connected sets
        of 3-24 tasks, as the pipelines' jobs).
    resources : ResourceGraph
        The resource graph; the step applies when it is a tree with at most one processor
        per node (the Internet-like and Table 1 graphs).
    mapping : ndarray of int, shape (tasks.n,)
        A valid mapping (the mapper's answer): the starting point and the fallback.
    tries : int, default 6
        MILPs solved at most.
    time_limit : float, default 180.0
        Seconds for the whole call, counted from it (the package's one meaning of a time
        limit): each MILP gets half the time left (all of it when it is the last try), and
        no MILP starts once it has passed. An answer found
        or not depends on it.
    lower : float, optional
        A proven lower bound on the optimum to start the bisection from (the caller's, e.g.
        :func:`~coalloc.taskmap.solve`'s); by default :func:`~coalloc.taskmap.lower_bound`'s.
        A value that is not a proven bound only makes the MILPs look at levels that cannot
        be met.
    polish : bool, default True
        Each MILP's mapping gets the multilevel mapper's bottleneck moves before it is
        scored (the MILP sees neither which task of a job goes where nor the volume between
        jobs; the Table 1 c=1 pipelines' answers were 5-15 % above their level before).
    first : float, default 0.5
        Where the first level lies between the lower and upper ends (0.5: the midpoint;
        the later ones bisect). A lower level prunes more counts (those whose cut alone
        exceeds ``L`` x the bandwidth), so its MILP is smaller: what the spare time's one
        MILP uses (:data:`SPARE_FIRST`).

    Returns
    -------
    mapping : ndarray of int
        The best verified mapping met (``mapping`` itself when nothing beats it, or when the
        step does not apply).
    occupancy : float
        Its maximum occupancy, from :func:`~coalloc.taskmap.verify_mapping`.

    Raises
    ------
    TypeError
        If ``tasks`` or ``resources`` has the wrong type, or ``polish`` is not a bool.
    ValueError
        If ``mapping`` is not a valid mapping, ``tries`` is not a positive integer,
        ``time_limit`` is not positive or ``lower`` is not a finite number at least 0.
    """
    if not isinstance(tasks, TaskGraph):
        raise TypeError(f"tasks must be a TaskGraph, got {type(tasks).__name__}")
    if not isinstance(resources, ResourceGraph):
        raise TypeError(f"resources must be a ResourceGraph, got {type(resources).__name__}")
    if isinstance(tries, bool) or not isinstance(tries, (int, np.integer)) or tries < 1:
        raise ValueError(f"tries must be a positive integer, got {tries!r}")
    if not isinstance(time_limit, (int, float)) or not time_limit > 0:
        raise ValueError(f"time_limit must be a positive number of seconds, got {time_limit!r}")
    if lower is not None and (
        isinstance(lower, bool) or not isinstance(lower, (int, float, np.floating))
        or not np.isfinite(lower) or lower < 0
    ):  # fmt: skip
        raise ValueError(f"lower must be a finite number at least 0, got {lower!r}")
    if not isinstance(polish, (bool, np.bool_)):
        raise TypeError(f"polish must be a bool, got {type(polish).__name__}")
    if isinstance(first, bool) or not isinstance(first, (int, float)) or not 0 < first < 1:
        raise ValueError(f"first must be a number strictly between 0 and 1, got {first!r}")
    deadline = time.perf_counter() + float(time_limit)  # counted from the call
    best = np.asarray(mapping, dtype=np.int64).copy()
    report = verify_mapping(tasks, resources, best)
    if not report.valid:
        raise ValueError(f"mapping must be a valid mapping: {report.problems}")
    best_occ = float(report.max_occupancy)
    layout = _layout(tasks, resources)
    if layout is None:
        return best, best_occ
    from .bounds import lower_bound

    lo = float(lower_bound(tasks, resources)) if lower is None else float(lower)
    hi = best_occ
    over = 0.0  # the most a MILP has run past its share (HiGHS's set-up, its last node)
    for k in range(int(tries)):
        # this MILP's share of the time left (half of it while two or more tries are left:
        # a MILP cut short counts as "no answer" and wastes its share, and under load one
        # took 3-20 s, so equal shares of a short budget found nothing), less a reserve for
        # scoring its answer and what the MILPs so far ran past theirs
        share = (deadline - time.perf_counter() - min(0.02, 0.05 * float(time_limit))) / min(
            int(tries) - k, 2) - over  # fmt: skip
        if not hi > lo * (1 + 1e-3) or share <= 0:
            break
        L = lo + (float(first) if k == 0 else 0.5) * (hi - lo)
        began = time.perf_counter()
        m = _packing(tasks, resources, layout, L, began + share)
        over = max(over, time.perf_counter() - began - share)
        if m is None:
            lo = L
            continue
        if polish:  # until the call's deadline less the reserve for scoring (a MILP that
            # answered at its end left the moves 0.3 s past T = 5 s under a load of 6)
            m = _polished(tasks, resources, m, deadline - min(0.02, 0.05 * float(time_limit)))
        rep = verify_mapping(tasks, resources, m)
        if rep.valid and float(rep.max_occupancy) < best_occ:
            best, best_occ = m, float(rep.max_occupancy)
        # the next level below both this one and the best verified answer (a packing that
        # verifies below L moves the upper end to it)
        hi = min(L, best_occ)
    return best, best_occ


#: :func:`~coalloc.taskmap.solve`'s default method, given a ``time_limit``, spends what it
#: has left on :func:`pack_jobs` when its printed gap is above this (issue 40 item 2).
SPARE_GAP = 0.10

#: Seconds the call must have left for that step to start: a pipeline's packing MILPs took
#: 1-6 s each beside busy processes on 2 cores (1.0 until h59bound); with the counts pruned
#: by capacity (:data:`PRUNE_CAPACITY`) one took 0.5-0.7 s on table1 c=1 #3 at a load of 7,
#: so at T = 1 s (0.75 s left after the mapper) it can pay there (0.3088 -> 0.2244).
SPARE_MIN = 0.4

#: With less than this many seconds left the step is one MILP with all of them (``tries=1``),
#: not a bisection whose first MILP gets half: under a load of 4-6 on 2 cores a packing MILP
#: took 2-5 s (up to 20 s), so at T = 5-10 s the half was too short where the whole was not
#: (h50tmap, ``bench/taskmap/ISSUE40.md``: improved 7 of 9 calls against 4 of 9, and ended
#: at 2.7-8.9 s where the halves ran to T). Above it the bisection's later levels pay.
SPARE_ONE_TRY = 15.0

#: Where the one MILP of a short spare time (``tries=1``) puts its level between the bound
#: and the mapping's occupancy: 0.3 of the way up, not the midpoint. The lower level prunes
#: more counts and its MILP answered more often within 4-4.5 s on the three c=1 pipelines
#: over 10 % (5 of 6 against 3 of 6, and lower: h51tmap, ``bench/taskmap/ISSUE40.md``).
SPARE_FIRST = 0.3

#: With at least this many seconds left after a packing that beat the answer but is still
#: over :data:`SPARE_GAP` from the bound, one MILP of the joint job bound
#: (:func:`coalloc.taskmap.jointbound.prove_at`) tries to prove the bound at ``(1 -
#: SPARE_GAP)`` x the new occupancy: a proof is a valid bound, so the printed gap is then
#: within the target (the c=1 #0 pipeline's 0.2279 against 0.1964, 13.9 %: a proof at
#: 0.2051 took 0.5 s where the whole joint bound takes 13 s; h51tmap). ``inf``: never.
SPARE_PROOF_MIN = 0.1

#: With less than :data:`SPARE_ONE_TRY` seconds left, up to this many more one-MILP
#: packings follow the first in the time it leaves (each needs :data:`SPARE_MIN` seconds and
#: an answer still over :data:`SPARE_GAP`): from the best mapping so far, the lower end raised
#: to a level that gave nothing better, so a bisection whose MILPs each get all the time left
#: (h59bound: the first MILP often answers in 1-2 s of 4-9). 0: one MILP, as before.
SPARE_CHAIN = 6

#: Before each further MILP of that chain, after a packing that beat the answer but is still
#: over :data:`SPARE_GAP` from the bound, the proof of :func:`_certify` gets this share of the
#: time left (a proof within the gap ends the chain; one that fails still may raise the bound)
SPARE_CHAIN_PROOF = 0.25

#: The step counts as stopped by the caller's deadline (status ``"time_limit"``) when it
#: returns within ``max(SPARE_STOP, SPARE_STOP * its time)`` seconds of it: ``pack_jobs``
#: keeps back at most 0.02 s for scoring, and a bisection that converged or used its tries
#: returns earlier.
SPARE_STOP = 0.05


def _certify(tasks, resources, result, occ: float, until: float) -> None:
    """Raise ``result.bound`` by :func:`~coalloc.taskmap.jointbound.prove_at` at ``(1 -
    SPARE_GAP) occ`` when the gap to ``occ`` is over :data:`SPARE_GAP` and at least
    :data:`SPARE_PROOF_MIN` seconds are left before ``until`` (less 0.01 s for the result's
    update); the message says what was proven."""
    from .jointbound import prove_at

    bound = float(result.bound)
    target = occ * (1 - SPARE_GAP + 1e-9)
    if not bound < target or until - time.perf_counter() < SPARE_PROOF_MIN:
        return
    t0 = time.perf_counter()
    value = min(prove_at(tasks, resources, bound, target, until - 0.01), occ)
    result.timings = {**result.timings, "joint_bound": time.perf_counter() - t0}
    if value > bound:
        result.bound = value
        result.message = f"{result.message}; the joint job bound raised the bound to {value:.6g}"


def pack_in_spare_time(
    tasks: TaskGraph, resources: ResourceGraph, result: TaskMappingResult, until: float
) -> TaskMappingResult:
    """:func:`pack_jobs` on a result's mapping in the time left of a caller's budget.

    What :func:`~coalloc.taskmap.solve`'s default method does with a ``time_limit`` it did
    not need (issue 40 item 2): it runs when the result holds a mapping of a method that
    ended by itself (status not ``"time_limit"``) with a bound and a gap above
    :data:`SPARE_GAP`, the step applies (jobs on a tree of single processors) and at least
    :data:`SPARE_MIN` seconds are left before ``until``; with less than
    :data:`SPARE_ONE_TRY` left it is one MILP (``tries=1``) with all of them.

    Parameters
    ----------
    tasks : TaskGraph
    resources : ResourceGraph
    result : TaskMappingResult
        The answer so far, with its ``bound`` and ``gap``; updated in place (mapping,
        occupancy, bottleneck, occupancy graphs, history, message) only when a verified
        mapping beats it; ``timings["pack_jobs"]`` when the step ran. Its ``bound`` only
        rises, by a proof of the joint job bound after a packing that beat the answer
        (:data:`SPARE_PROOF_MIN`, ``timings["joint_bound"]``). Its status and gap are the
        caller's to settle.
    until : float
        The caller's deadline on :func:`time.perf_counter`'s clock.

    Returns
    -------
    TaskMappingResult
        ``result``.
    """
    from .occupancy import max_occupancy, occupancy_graph

    if result.mapping is None or result.status == "time_limit" or result.bound is None:
        return result
    if result.gap is None or not result.gap > SPARE_GAP:
        return result
    t0 = time.perf_counter()
    if until - t0 < SPARE_MIN or _layout(tasks, resources) is None:
        return result
    # the time left once the layout is known (it takes a few ms), less the result's update
    left = until - time.perf_counter() - 0.01
    if left <= 0:
        return result
    before = float(result.max_occupancy)
    tries = 1 if left < SPARE_ONE_TRY else 6  # (6: pack_jobs's default)
    if tries == 1:  # its MILP runs to the deadline: HiGHS's stop past its limit kept back
        left -= HIGHS_STOP_MARGIN  # (one try ran 0.03-0.07 s past T = 2 s under a load of 5)
    mapping, occ = pack_jobs(tasks, resources, result.mapping, time_limit=left,
                             lower=float(result.bound), tries=tries,
                             first=SPARE_FIRST if tries == 1 else 0.5)  # fmt: skip
    low = float(result.bound)  # the chain's lower end: raised past a level with no packing
    tried = before  # the answer a proof was last tried for
    if not occ < before * (1 - 1e-9):
        low += SPARE_FIRST * (occ - low)  # (the first MILP's level)
    for _ in range(SPARE_CHAIN if tries == 1 else 0):
        # the one MILP ended early: another one in what is left, from the best answer so far,
        # its level SPARE_FIRST of the way up from the lower end (raised to the last level
        # after one that gave nothing better: a bisection whose MILPs each get all the time;
        # the bound again after one that did)
        if occ < tried * (1 - 1e-9) and occ * (1 - SPARE_GAP) > float(result.bound):
            tried = occ  # a new answer over SPARE_GAP: first a proof within it, in a share
            now = time.perf_counter()
            _certify(tasks, resources, result, occ, now + SPARE_CHAIN_PROOF * (until - now))
        more = until - time.perf_counter() - 0.01 - HIGHS_STOP_MARGIN
        if more < SPARE_MIN or not occ * (1 - SPARE_GAP) > float(result.bound):
            break
        m2, o2 = pack_jobs(tasks, resources, mapping, time_limit=more, lower=low, tries=1,
                           first=SPARE_FIRST)  # fmt: skip
        if o2 < occ * (1 - 1e-9):  # a new upper end: the levels from the bound again
            mapping, occ, low = m2, o2, float(result.bound)
        else:
            low += SPARE_FIRST * (occ - low)
    done = time.perf_counter()
    result.timings = {**result.timings, "pack_jobs": done - t0}
    # the step ran to the caller's deadline (its bisection cut short, not converged): the
    # budget ended the call, so the status is "time_limit" (issue 36's rule; an answer
    # that meets the bound is still settled "optimal")
    stopped = until - done < max(SPARE_STOP, SPARE_STOP * left)
    if stopped:
        result.status = "time_limit"
    if not occ < before * (1 - 1e-9):
        if stopped:
            result.message = f"{result.message}; pack_jobs in the spare time stopped at the limit"
        return result
    occ, bott = max_occupancy(tasks, resources, mapping)  # from scratch
    _certify(tasks, resources, result, float(occ), until)
    result.mapping = mapping
    result.max_occupancy = occ
    result.objective = float(occ)
    result.bottleneck = bott
    result.node_occupancy, result.link_occupancy = occupancy_graph(tasks, resources, mapping)
    result.history = [*result.history, float(occ)]
    result.message = (
        f"{result.message}; then pack_jobs in the spare time ({before:.6g} -> {occ:.6g}"
        f"{', stopped at the limit' if stopped else ''})"
    )
    return result
