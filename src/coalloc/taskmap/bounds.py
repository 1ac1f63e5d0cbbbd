"""A cheap, reproducible lower bound on the maximum occupancy of every mapping.

:func:`lower_bound` is what ``taskmap.solve(..., bound=True)`` attaches to the result of
every method (the exact method keeps its solver's proven bound when that is higher), what
the multilevel mapper stops at once it reaches it, and what ``coalloc taskmap map`` prints
the gap against. It is a function of the graphs alone (no clock, no solver time limit: its
work is capped by counts): the same instance gives the same bound on any machine and under
any load.

Three strengths (issue 40, item 2):

* ``"basic"``: the spread, the heaviest task, a task and its neighbours (three closed
  forms, microseconds);
* ``"stars"`` (the default): also the **star-and-routes bound**. Suppose a mapping has
  maximum occupancy at most ``L``; let ``X`` be the tasks on processor ``p`` (capacity
  ``c``). Then ``w(X) <= L c`` and every pair split by ``p`` sends its volume over one of
  ``p``'s links (the first link of its route), so the volume leaving ``X`` is at most ``L``
  times the bandwidth of those links. For a task ``t`` in ``X`` the volume it keeps on ``p``
  is at most the fractional knapsack of its neighbours in the room ``L c - w_t``, and at
  most the ``k`` largest of its volumes when only ``k`` of its lightest neighbours fit, so

  1. ``t`` may sit on ``p`` only if ``vol(t) - knapsack <= L b``, where ``b`` is the
     bandwidth of ``p``'s links that lead to a processor where some neighbour of ``t`` may
     sit ("may sit" = passes this test: the test is repeated until nothing changes, every
     round keeping every processor that a mapping of occupancy ``L`` could use);
  2. for every link ``l`` of ``p``: the volume to the neighbours that can only be reached
     over ``l`` is at most ``L bw(l) + knapsack``;
  3. the tasks spread fractionally over the processors where they may sit, with two
     budgets per processor: compute ``L c_p`` and the volume its tasks send off it (the sum
     of their ``vol - knapsack``) ``L b_p``: a small LP (HiGHS through highspy,
     :func:`coalloc._shared.lp_highs.solve_lp`, without ``scipy.optimize``), tasks and
     processors with equal rows merged.

  Every test is a necessary condition for a mapping of occupancy at most ``L`` and gets
  only easier as ``L`` grows, so the least ``L`` that passes (found by bisection to a
  relative 1e-3, from below: the value returned is one that failed) is a lower bound. It
  sees what the basic bound misses: traffic forced over the slow links around a processor
  (a pipeline's dense jobs on an Internet-like graph). It adds nothing when every task
  passes every processor at the basic bound (then the work is one knapsack pass).

  The default also takes the **job bound** (:mod:`coalloc.taskmap.jobbound`, computed first;
  the bisection above starts from it): each dense job (a connected set of 3-24 tasks joined
  by heavy pairs) alone, its tasks counted integrally per processor and per side of every
  bridge, each count charged a certified cut of the job. What the per-task knapsack above
  cannot see: a job split across processors pays its whole cut (the Table 1 c=16 pipelines'
  gaps from 39-47 % to 0-9.6 %, in milliseconds).

  And the **lattice bound** (:mod:`coalloc.taskmap.latticebound`, last, from the basic
  bound, kept per resource graph): where the task graph contains a 2-D or 3-D box lattice
  (a stencil), the groups of processors behind the bridges at one depth (a cluster's
  nodes, its racks) each carry their tasks' cut, at least the lattice perimeter of their
  count less their contacts with the box's faces, and the faces are shared by all groups
  together (a Lagrangian dual; the stencils on heterogeneous clusters: gaps of 52-74 % to
  30-40 %, in 1-30 ms).

* ``"cuts"`` (opt-in: up to seconds on grids of thousands of tasks): also the **cut
  bound**, for mappings whose bottleneck is the uplink of a group of processors carrying
  the cut of many tasks. Two lemmas:

  1. *A certified edge expansion of the task graph.* Route the demands ``w_s w_t`` between
     tasks of its largest connected component ``K`` (volume > 0 streams) over shortest
     paths in hops, each task's flow split among its arcs from one hop nearer in proportion
     to their volumes; let ``kappa`` be the largest load / volume of a stream. Every pair
     split by a task set ``X`` sends its demand across the cut of ``X``, so ``cut(X) >=
     D(X) / kappa``. With every task of ``K`` a source, ``D(X) = 2 a (w(K) - a)`` for ``a =
     w(X & K)``; with ``m`` the weight of the lighter side of ``X`` and ``R = W - w(K)``,
     both ``a`` and ``w(K) - a`` are at least ``m - R``, so ``cut(X) >= psi(m) = 2 (m - R)
     (W - m) / kappa`` (increasing up to ``W / 2``). Above the work cap (sources x streams
     <= ``_FLOW_WORK``) only every k-th task of a breadth-first order is a source ``s``:
     ``D(X) >= (m - R) w(sources)``, ``psi(m) = (m - R) w(sources) / kappa``.
  2. *Sides.* Every route between the two sides of a bridge of the resource graph crosses
     it, and every route from a processor leaves by one of its own links. If a mapping has
     maximum occupancy at most ``L``, the tasks ``X`` on the processors behind a bridge of
     bandwidth ``b`` (or on one processor, ``b`` the bandwidth of its links) have ``cut(X)
     <= L b``, so the lighter side ``min(w(X), W - w(X))`` is at most ``g = psi^-1(L b)``:
     the side holds at most ``g`` or at least ``W - g``. Over the tree of 2-edge-connected
     components joined by the bridges (a tree graph: every link), from the leaves up: a
     processor holds at most ``L c`` so limited, a side at most what its processors and
     the sides below it hold, so limited. If the whole graph cannot hold ``W``, no mapping
     has occupancy ``L``.

  The test gets only easier as ``L`` grows (``g`` and every limit grow), so the least
  passing ``L`` (bisection from below, as above) is a lower bound. It binds where the
  uniform flow is a fair certificate (small grids behind slow uplinks: 0.34 of the gap
  between the stars bound and the optimum closed on average in the tests); on large
  grids and random geometric graphs the certificate is weak (a factor 2-6 below the true
  cut of a node's worth of tasks), and it adds nothing to dense jobs in separate
  components (the pipelines).

Tested against brute force and the exact method on random instances of two generators
(``tests/taskmap/test_bounds.py``, ``tests/taskmap/test_bounds_cuts.py``: the bound on
every mapping, the first lemma on every task set).
"""

from __future__ import annotations

import time
import weakref
from typing import Optional

import numpy as np
import scipy.sparse as sp

from .._shared.caches import cache_of
from .._shared.lp_highs import solve_lp
from ._bisect import _least, _Spent
from .cutbound import _cuts
from .jobbound import _job_sets, _jobs_bound
from .model import ResourceGraph, TaskGraph
from .startables import _SLACK, _Stars

__all__ = ["STRENGTHS", "bound_tests", "lower_bound", "seconds_per_test", "timed_bound"]

#: The strengths of :func:`lower_bound`: "basic" <= "stars" <= each of "cuts", "joint" and
#: "spectral" (the last three each add one argument to "stars").
STRENGTHS = ("basic", "stars", "cuts", "joint", "spectral")
_ROUNDS = 8  # rounds of the "may sit" test at one L
_WORK = 2e7  # cap on the entries a table builds (tasks x processors, rows x P x P, ...):
# above it the step is skipped (the bound stays valid, only weaker; above it for tasks x
# processors or processors x processors the stars bound is not computed at all)


def lower_bound(
    tasks: TaskGraph,
    resources: ResourceGraph,
    *,
    strength: str = "stars",
    max_tests: Optional[int] = None,
) -> float:
    """A value no mapping's maximum occupancy can go below.

    ``"basic"`` is the largest of three closed forms:

    1. **Spread.** The processors together carry the whole compute, so one of them has
       occupancy at least ``sum(w) / sum(capacity)``.
    2. **Heaviest task.** It sits on some processor: ``max(w) / max(capacity)``.
    3. **A task and its neighbours.** For a task ``t``, either every task it exchanges
       with shares its processor (occupancy at least ``(w_t + sum of their w) /
       max(capacity)``), or one pair ``{t, u}`` is split and its volume crosses at least
       one link (occupancy at least ``volume(t, u) / max(bandwidth)``, for the smallest
       such volume). The bound is the smaller of the two, and the largest over the tasks.

    ``"stars"`` (the default) is the largest of that, the job bound
    (:mod:`coalloc.taskmap.jobbound`: each dense job alone, placed integrally over the
    bridges of the resource graph) and the star-and-routes bound of the module's docstring
    (the links around each processor, the knapsack of each task's neighbours, a fractional
    spread with compute and volume budgets). ``"cuts"`` is the larger of the ``"stars"``
    bound and the cut bound of the module's docstring (the task sets behind the bridges of
    the resource graph and a certified edge expansion of the task graph): opt-in, its work
    is up to 2.5e7 (source, stream) pairs, about 2 s on a stencil of 4,096 tasks.
    ``"joint"`` is the larger of the ``"stars"`` bound and the joint job bound
    (:mod:`coalloc.taskmap.jointbound`: every dense job *together*, counted integrally per
    side of every bridge, a small MILP whose proven dual bound is kept): opt-in, 0.4-14 s of
    HiGHS on the Table 1 pipelines (work capped by a node count per MILP). The value
    is cached beside the task graph for this resource graph and strength (the multilevel
    mapper and ``solve(..., bound=True)`` compute it once).

    Parameters
    ----------
    tasks : TaskGraph
    resources : ResourceGraph
    strength : {"stars", "basic", "cuts", "joint", "spectral"}, default "stars"
        ``"basic"``: the three closed forms alone; ``"cuts"``: the stars bound and the cut
        bound; ``"joint"``: the stars bound and the joint job bound; ``"spectral"``: the
        stars bound and the spectral bound (:mod:`coalloc.taskmap.spectral`: one
        eigensolve; it adds nothing on the 30 instances of ``bench/taskmap/vs_peers.py``).
    max_tests : int, optional
        A cap on the stars bound's full tests (each the rounds of the "may sit" test and
        the LP, from about 2 ms on small instances to 0.3 s on 1,000 tasks onto 150
        processors): the bisection stops at the cap with the largest value it found to
        fail, still a valid bound, only weaker. A count, not a clock: the same call gives
        the same value on any machine. None (the default): no cap. What
        ``taskmap.solve(..., time_limit=T)`` passes (:func:`bound_tests`).

    Returns
    -------
    float
        0 for an empty task graph.

    Raises
    ------
    TypeError
        ``tasks`` or ``resources`` of the wrong type.
    ValueError
        An unknown ``strength``.

    Examples
    --------
    >>> import coalloc.taskmap as tm
    >>> tasks = tm.TaskGraph([1.0, 2.0, 1.5], [[0, 4, 0], [4, 0, 1], [0, 1, 0]])
    >>> res = tm.ResourceGraph.from_edges([0, 3.0, 5.0], [[0, 1], [0, 2]], [50.0, 50.0])
    >>> lower_bound(tasks, res, strength="basic")   # the spread: 4.5 / 8
    0.5625
    >>> round(lower_bound(tasks, res), 2)   # the optimum is 0.6 (to a relative 1e-3)
    0.6

    Two tasks exchanging 10 on two processors behind links of bandwidth 1 (the routers
    between them joined by a fast link): split, their volume crosses a slow link (10), so
    they share a processor (the optimum is 2); the basic bound sees only the fast link and
    the spread (1), the stars bound 2 (below it the room ``L - 1`` holds no whole partner):

    >>> tasks = tm.TaskGraph([1.0, 1.0], [[0, 10], [10, 0]])
    >>> res = tm.ResourceGraph.from_edges([0, 0, 1.0, 1.0], [[0, 1], [0, 2], [1, 3]],
    ...                                   [100.0, 1.0, 1.0])
    >>> lower_bound(tasks, res, strength="basic"), round(lower_bound(tasks, res), 2)
    (1.0, 2.0)

    An 8 x 8 stencil on two nodes of four cores behind uplinks of bandwidth 1: the stars
    bound alone is the spread (3.26); the default's lattice bound and the cut bound see that
    a node's share of the grid has a cut too large for its uplink (the multilevel mapper
    finds 5.54):

    >>> from coalloc.taskmap import generators as gen
    >>> tasks = gen.stencil_task_graph((8, 8), seed=1)
    >>> res = gen.hierarchical_cluster(n_racks=1, nodes_per_rack=2, cores_per_node=4,
    ...                                speed=(1.0, 3.0), node_bandwidth=1.0, seed=4)
    >>> round(lower_bound(tasks, res), 2), round(lower_bound(tasks, res, strength="cuts"), 2)
    (4.32, 4.33)
    """
    if not isinstance(tasks, TaskGraph) or not isinstance(resources, ResourceGraph):
        raise TypeError("lower_bound needs a TaskGraph and a ResourceGraph")
    if not isinstance(strength, str) or strength not in STRENGTHS:
        raise ValueError(f"strength must be one of {STRENGTHS}, got {strength!r}")
    if max_tests is not None and (
        isinstance(max_tests, (bool, np.bool_)) or not isinstance(max_tests, (int, np.integer))
        or max_tests < 0
    ):  # fmt: skip
        raise ValueError(f"max_tests must be None or an integer >= 0, got {max_tests!r}")
    return _bound(tasks, resources, strength, None if max_tests is None else int(max_tests))


def _bound(tasks: TaskGraph, resources: ResourceGraph, strength: str, cap: Optional[int],
           until: Optional[float] = None, cut: Optional[list] = None) -> float:  # fmt: skip
    """:func:`lower_bound` without its checks; ``until`` (a :func:`time.perf_counter` value,
    the stars bound only): no full test starts after it, a value it cut short (``cut[0]``
    set True) is valid but weaker and is not cached (:func:`timed_bound`)."""
    basic = _basic(tasks, resources)
    if strength == "basic" or basic <= 0:
        return basic
    memo = cache_of(tasks).setdefault("lower_bound", {})
    key = (id(resources), strength, cap)
    hit = memo.get(key)
    if hit is not None and hit[0]() is resources:
        return hit[1]
    cut = [False] if cut is None else cut
    if strength == "stars":
        # the job bound first (milliseconds): the stars bisection starts from it (not
        # started after ``until``: the basic bound, valid, cut short)
        if until is not None and time.perf_counter() >= until:
            cut[0] = True
            return basic
        jobs = _jobs(tasks, resources, basic, memo, until, cut)
        if cut[0]:
            return basic
        value = max(jobs, _stars(tasks, resources, jobs, cap, until, cut))
        if not cut[0]:  # the lattice bound (stencils behind slow uplinks; milliseconds)
            value = _lattice_part(tasks, resources, basic, value, memo, until, cut)
    elif strength == "joint":
        from .jointbound import joint_bound  # highspy's MILP: opt-in

        stars = _bound(tasks, resources, "stars", cap)
        value = max(stars, joint_bound(tasks, resources, stars))
    elif strength == "spectral":
        from .spectral import spectral_bound  # scipy's eigensolver: opt-in

        stars = _bound(tasks, resources, "stars", cap)
        value = max(stars, spectral_bound(tasks, resources, stars))
    else:
        value = max(_bound(tasks, resources, "stars", cap), _cuts(tasks, resources, basic))
    if not cut[0]:
        memo[key] = (weakref.ref(resources), value)
    return value


#: Timed: the job bound's predicted wall seconds per job and processor (9 jobs onto 140: 13
#: ms, 22 ms under a load of 10; the audit's Table 1 pipeline at ``T`` = 0.05 s: 13-100 ms
#: unpolled of the first part's 12.5, out of the method's budget; h56late)
JOB_SECONDS = 1.5e-5


def _jobs(tasks: TaskGraph, resources: ResourceGraph, basic: float, memo: dict,
          until: Optional[float], cut: list) -> float:  # fmt: skip
    """The job bound, at least ``basic``: a function of the graphs, kept in ``memo`` per
    resource graph (no later call pays it again); under ``until`` not started when
    :data:`JOB_SECONDS` predicts its end after it (``cut[0]`` set, ``basic`` returned)."""
    key = (id(resources), "jobs")
    hit = memo.get(key)
    if hit is not None and hit[0]() is resources:
        return hit[1]
    jobs = None if until is None else len(_job_sets(tasks))  # (0: no job, no second look)
    if jobs and time.perf_counter() + JOB_SECONDS * jobs * resources.n_processors >= until:
        cut[0] = True
        return basic
    value = basic if jobs == 0 else max(basic, _jobs_bound(tasks, resources, basic))
    memo[key] = (weakref.ref(resources), value)
    return value


#: Timed: the lattice bound's predicted wall seconds per task and node of the resource
#: graph (its whole bisection; 64x64 on 4x8x8 het: 0.04 s of CPU, 4,096 tasks x 548)
LATTICE_SECONDS = 5e-8


def _lattice_part(tasks: TaskGraph, resources: ResourceGraph, basic: float, value: float,
                  memo: dict, until: Optional[float], cut: list) -> float:  # fmt: skip
    """The larger of ``value`` and :func:`coalloc.taskmap.latticebound.lattice_bound` (from
    ``basic``: a function of the graphs, kept in ``memo`` per resource graph); under
    ``until`` not started when :data:`LATTICE_SECONDS` predicts its end after it
    (``cut[0]`` set, ``value`` returned)."""
    from . import latticebound

    if not latticebound.LATTICE or latticebound.find_lattice(tasks) is None:
        return value
    key = (id(resources), "lattice")
    hit = memo.get(key)
    if hit is not None and hit[0]() is resources:
        return max(value, hit[1])
    if until is not None:
        work = tasks.n * (resources.n_processors + resources.n_nodes)
        if time.perf_counter() + LATTICE_SECONDS * work >= until:
            cut[0] = True
            return value
    lat = latticebound.lattice_bound(tasks, resources, basic)
    memo[key] = (weakref.ref(resources), lat)
    return max(value, lat)


def timed_bound(tasks: TaskGraph, resources: ResourceGraph, max_tests: Optional[int],
                until: float) -> tuple:  # fmt: skip
    """The default (stars) :func:`lower_bound` with at most ``max_tests`` full tests, none of
    them started after ``until`` (a :func:`time.perf_counter` value): what a timed
    ``taskmap.solve`` carries. The count makes it the same on any machine; the deadline
    keeps the call within its budget where the tests run slower than
    :func:`seconds_per_test` predicts (a cold first call under load: 20-40 ms a test where
    3.6 ms was predicted, h50tmap). Cut by ``until`` it is the largest value found to fail
    so far: a valid bound, weaker, not cached.

    Parameters
    ----------
    tasks : TaskGraph
    resources : ResourceGraph
    max_tests : int or None
        As :func:`lower_bound`'s.
    until : float
        No full test starts after it.

    Returns
    -------
    bound : float
    cut : bool
        Whether ``until`` ended the tests before the count or the bisection did.
    """
    cut = [False]
    value = _bound(tasks, resources, "stars", None if max_tests is None else int(max_tests),
                   float(until), cut)  # fmt: skip
    return value, cut[0]


def _basic(tasks: TaskGraph, resources: ResourceGraph) -> float:
    w = tasks.node_weight.astype(np.float64)
    if tasks.n == 0:
        return 0.0
    cap = resources.capacity[resources.processors].astype(np.float64)
    if cap.size == 0 or not cap.max() > 0:
        return 0.0
    top = float(cap.max())
    best = max(float(w.sum()) / float(cap.sum()), float(w.max()) / top)
    ip, ix, iw = tasks.undirected_csr()
    if ix.shape[0] and resources.n_links and resources.n_processors > 1:
        bw = float(resources.bandwidth.max())
        deg = np.diff(ip)
        has = deg > 0
        rows = np.repeat(np.arange(tasks.n), deg)
        together = (w + np.bincount(rows, weights=w[ix], minlength=tasks.n)) / top
        starts = ip[:-1][has]
        split = np.minimum.reduceat(iw, starts) / bw
        best = max(best, float(np.minimum(together[has], split).max()))
    return float(best)


def bound_tests(tasks: TaskGraph, resources: ResourceGraph, time_limit: float) -> int:
    """The cap on the stars bound's full tests that ``taskmap.solve(..., time_limit=T)``
    passes to :func:`lower_bound`: as many as fit ``BOUND_SHARE`` of ``T`` at a predicted
    ``TEST_SECONDS + CELL_SECONDS * tasks * processors`` each (measured on one core: 2-7
    ms on up to 100 tasks, 6-13 ms on pipelines of 60 tasks onto 150 processors, 0.3 s on
    1,025 tasks onto 148; the prediction is above each). A function of the instance and
    ``T`` alone, so a timed call's bound is the same on any machine and under any load.

    Parameters
    ----------
    tasks : TaskGraph
    resources : ResourceGraph
    time_limit : float
        The call's limit in seconds.

    Returns
    -------
    int
        At least 0.

    Examples
    --------
    >>> import coalloc.taskmap as tm
    >>> tasks = tm.TaskGraph([1.0, 2.0, 1.5], [[0, 4, 0], [4, 0, 1], [0, 1, 0]])
    >>> res = tm.ResourceGraph.from_edges([0, 3.0, 5.0], [[0, 1], [0, 2]], [50.0, 50.0])
    >>> bound_tests(tasks, res, 0.05), bound_tests(tasks, res, 1.0)
    (6, 124)
    """
    return int(BOUND_SHARE * float(time_limit) / seconds_per_test(tasks, resources))


def seconds_per_test(tasks: TaskGraph, resources: ResourceGraph) -> float:
    """The predicted seconds of one full test of the stars bound (:func:`bound_tests`):
    ``TEST_SECONDS + CELL_SECONDS * tasks * processors``.

    Parameters
    ----------
    tasks : TaskGraph
    resources : ResourceGraph

    Returns
    -------
    float
    """
    return TEST_SECONDS + CELL_SECONDS * tasks.n * resources.n_processors


#: :func:`bound_tests`: the share of a call's limit the bound may take, and the predicted
#: seconds of one full test (a fixed part, the LP's set-up, and a part per task-processor pair)
BOUND_SHARE, TEST_SECONDS, CELL_SECONDS = 0.25, 2e-3, 2e-6
#: The wall seconds a (task, processor) cell of the stars bound's tables or of one star test
#: is predicted to take before one is measured (a timed call, :func:`_stars`): a star test
#: on 4,096 tasks onto 256 processors took 9e-8 s of CPU a cell and 2-3e-7 s of wall under
#: a load of 7 (h52tmap; 5e-8 let it start at T = 0.5 s and end at 0.28 s, past its share)
STAR_SECONDS = 1.5e-7
#: Full tests a stars bound usually needs (the doubling, then a bisection to a relative
#: 1e-3: 12-13 on the measured instances): ``taskmap.solve`` keeps back the predicted time
#: of at most this many from the method's limit
USUAL_TESTS = 14
#: The share of the time left that a timed full test's LP gives HiGHS as its limit (HiGHS
#: ran 0.3 s past a limit of 1.3 s under a load of 5: its stop is checked between steps)
LP_SHARE = 0.7
#: A timed call's full test of the stars bound is predicted at this many times
#: :func:`seconds_per_test` before one is measured: one took 0.47-0.56 s of CPU where
#: 0.182 s was predicted (stencil9 30x30 onto a star of 40), 3.0-3.1 s for 0.924 s
#: (stencil27 20x20x8 onto a dragonfly of 144), and ran a timed call 0.3-6 s past its limit
FULL_MARGIN = 3.0


def _stars(tasks: TaskGraph, resources: ResourceGraph, start: float,
           max_tests: Optional[int] = None, until: Optional[float] = None,
           cut: Optional[list] = None) -> float:  # fmt: skip
    """The least ``L`` (from ``start``, a valid bound, up) that passes :func:`_feasible`,
    from below: every value returned failed the test (or is ``start``). At most
    ``max_tests`` full tests; no step (the tables' build, a star test, a full test) started
    after ``until`` (then the largest value found to fail; ``cut[0]`` set True when the
    deadline ended it: the star tests alone cost 10-30 ms of CPU a step on 4,096 tasks
    onto 256 processors, 0.1-0.3 s under a load of 6, and ran past a timed call's limit),
    nor one predicted to end after it (``tasks x processors`` cells at the largest wall
    seconds a cell the tables' build and the star tests took in this call,
    :data:`STAR_SECONDS` before the first: a cold first call at ``T`` = 0.1 s ran one
    star test to 0.16 s under a load of 8, h52tmap)."""
    if tasks.n == 0 or resources.n_processors < 2:
        return start
    if tasks.n * resources.n_processors > _WORK or resources.n_processors**2 > _WORK:
        return start  # its (tasks x processors) and (processors x processors) tables
    cut = [False] if cut is None else cut
    cells = float(tasks.n * resources.n_processors)
    rate = [STAR_SECONDS]  # wall seconds a cell of a step: the largest measured in this call

    def past() -> bool:  # also when the next step is predicted to end past ``until``
        if until is not None and time.perf_counter() + cells * rate[0] >= until:
            cut[0] = True
        return cut[0]

    guess = FULL_MARGIN * seconds_per_test(tasks, resources)
    kept = cache_of(tasks).setdefault("stars_phase", {})
    key = (id(resources), float(start))
    hit = kept.pop(key, None) if until is not None else None
    if hit is not None and hit[0]() is resources:  # the star phase of this timed call's
        # first part (before its method): the tables and the star tests not run again
        # after the method (0.2-0.3 s there under a load of 6, past the limit; h55tgen)
        _, st, lo, rate[0] = hit
        return _full_phase(st, lo, max_tests, until, cut, cells, rate, guess)
    if past():
        return start
    t = time.perf_counter()
    try:
        st = _Stars(tasks, resources, None if until is None else
                    lambda done: _paced(until, t, done))  # fmt: skip
    except _Spent:  # its build predicted (or found) to end past ``until``
        cut[0] = True
        return start
    if until is not None:
        rate[0] = max(rate[0], (time.perf_counter() - t) / cells)
    lo = float(start)

    def star(L: float) -> bool:  # the star test alone: what fails it fails them all
        if past():
            raise _Spent
        t = time.perf_counter()
        ok = _feasible(st, L, rounds=0, lp=False)
        if until is not None:
            rate[0] = max(rate[0], (time.perf_counter() - t) / cells)
        return ok

    lo = _least(star, lo)
    if cut[0]:
        return lo
    if until is not None and max_tests == 0:  # a timed call's first part: kept for its second
        kept[key] = (weakref.ref(resources), st, lo, rate[0])
    return _full_phase(st, lo, max_tests, until, cut, cells, rate, guess)


def _full_phase(st, lo: float, max_tests: Optional[int], until: Optional[float], cut: list,
                cells: float, rate: list, guess: float) -> float:  # fmt: skip
    """:func:`_stars`'s full tests from ``lo`` (the star tests' value): at most ``max_tests``;
    none started after ``until``, nor predicted to end after it: ``guess`` (a full test's
    seconds, :data:`FULL_MARGIN` x :func:`seconds_per_test`) times how much slower than
    :data:`STAR_SECONDS` a cell of the star tests ran in this call, or the largest a full
    test took in this call if more. Each polls ``until`` (between its rounds, around its
    LP's set-up; HiGHS gets a time limit) and ends the search at the largest value proven
    so far when it passes (HiGHS and one round are not cut inside: hence the prediction)."""
    left = [max_tests]
    took = [0.0]  # the largest wall seconds of a full test in this call

    def full(L: float) -> bool:
        if left[0] is not None:
            if left[0] <= 0:
                raise _Spent
            left[0] -= 1
        if until is not None:
            slow = max(1.0, rate[0] / STAR_SECONDS)
            if time.perf_counter() + max(cells * rate[0], took[0], guess * slow) >= until:
                cut[0] = True
                raise _Spent
        t = time.perf_counter()
        try:  # polls ``until`` between its rounds and gives its LP what is left
            ok = _feasible(st, L, until=until)
        except _Spent:
            cut[0] = True
            raise
        took[0] = max(took[0], time.perf_counter() - t)
        return ok

    return _least(full, lo)


def _lp(adm, leave, w, cap, bq, L, until: Optional[float] = None) -> bool:
    """Fractional assignment with two budgets per processor: compute (L c_p) and the
    volume its tasks must send off it (L b_p). Tasks and processors with equal rows merge.
    With ``until`` (a :func:`time.perf_counter` value) HiGHS gets the time left as its
    limit and :class:`_Spent` is raised when it is spent (no proof: the caller's search
    ends at the largest value proven so far)."""
    _poll(until)
    tkey = np.concatenate([w[:, None], np.where(adm, leave, -1.0)], axis=1)
    trows, tinv = np.unique(tkey, axis=0, return_inverse=True)
    tinv = tinv.reshape(-1)
    _poll(until)
    m = np.bincount(tinv).astype(np.float64)
    pkey = np.concatenate([cap[:, None], bq[:, None], trows[:, 1:].T], axis=1)
    prows, pinv = np.unique(pkey, axis=0, return_inverse=True)
    pinv = pinv.reshape(-1)
    C = np.bincount(pinv, weights=cap)
    B = np.bincount(pinv, weights=bq)
    coef = prows[:, 2:].T  # (task groups, proc groups): leaving volume, -1 where not allowed
    gi, hi = np.nonzero(coef >= 0)
    nv = gi.shape[0]
    G, H = coef.shape
    # sparse: a variable per admissible (task group, processor group) pair, in one row of
    # each kind (dense tables were G x nv: 1.9 s on 1,025 tasks onto 148 processors)
    cols = np.arange(nv)
    a_eq = sp.csr_matrix((np.ones(nv), (gi, cols)), shape=(G, nv))
    a_ub = sp.csr_matrix(
        (np.concatenate([trows[gi, 0], coef[gi, hi]]),
         (np.concatenate([hi, H + hi]), np.concatenate([cols, cols]))),
        shape=(2 * H, nv),
    )  # fmt: skip
    b_ub = np.concatenate([L * C, L * B]) * (1 + 1e-9) + 1e-12
    if nv == 0:
        return False  # a task group with no admissible processor (m > 0): no placement
    # HiGHS through highspy (not SciPy's linprog: its import is 0.13-0.2 s of a fresh
    # worker's CPU, issue 41); the same rows, options and reading of the status
    options = None
    if until is not None:  # HiGHS ran 0.3 s past a limit of 1.3 s under a load of 5
        rest = until - time.perf_counter()
        if rest <= 0:
            raise _Spent
        options = {"time_limit": LP_SHARE * rest}
    out = solve_lp(np.zeros(nv), a_ub, b_ub, a_eq, m, options=options)
    if out.status == "time_limit":
        raise _Spent
    return out.status != "infeasible"  # only a proof of infeasibility counts


def _paced(until: float, t0: float, done: float) -> None:
    """:class:`_Spent` when a step begun at ``t0``, ``done`` through (a share), is predicted
    at its pace so far to end after ``until`` (the star tables' timed build)."""
    now = time.perf_counter()
    if now + (now - t0) * (1.0 - done) / done >= until:
        raise _Spent


def _poll(until: Optional[float]) -> None:
    """Raise :class:`_Spent` when ``until`` (a :func:`time.perf_counter` value) has passed."""
    if until is not None and time.perf_counter() >= until:
        raise _Spent


def _hop_sets(st, rows_):
    """For each row (a set of processors) and processor p: the sum of the bandwidths of
    p's links that lead to a processor of the set other than p, and the one link by which
    all of them are reached (-1 when several, -2 when none)."""
    hop = st.first_hops()
    E = st.bw.shape[0]
    P = st.P
    beff = np.empty((rows_.shape[0], P))
    single = np.empty((rows_.shape[0], P), dtype=np.int64)
    for r, row in enumerate(rows_):
        h = np.where(row[None, :], hop, -1)
        mark = np.zeros((P, E + 1), dtype=bool)
        mark[np.repeat(np.arange(P), P), h.reshape(-1)] = True
        mark = mark[:, :-1]
        beff[r] = mark @ st.bw
        cnt = mark.sum(axis=1)
        single[r] = np.where(cnt == 1, mark.argmax(axis=1), np.where(cnt == 0, -2, -1))
    return beff, single


def _feasible(
    st: _Stars,
    L: float,
    rounds: int = _ROUNDS,
    work: float = _WORK,
    lp: bool = True,
    until: Optional[float] = None,
) -> bool:
    """False only if no mapping has maximum occupancy at most ``L`` (see the module).
    With ``until``, :class:`_Spent` when it passes (between rounds, or in the LP)."""
    leave = st.leaving(L)[:, st.cap_class]  # (n, P)
    keep = st.vol[:, None] - leave
    tol = _SLACK * st.vol[:, None]
    adm = leave <= L * st.band[None, :] * (1 + _SLACK) + tol
    if not adm.any(axis=1).all():
        return False
    if st.P == 1:
        return True
    nnz = st.ix.shape[0]
    for _ in range(rounds):
        _poll(until)
        if adm.all():
            break
        near_rows, ninv = _unique_rows(_near(st, adm))
        if near_rows.shape[0] * st.P * st.P > work:
            break
        beff, _ = _hop_sets(st, near_rows)
        new = adm & (leave <= L * beff[ninv.reshape(-1)] * (1 + _SLACK) + tol)
        arows, ainv = _unique_rows(adm)
        slot = st.slots()
        D = int(slot.max()) + 1
        A = arows.shape[0]
        if nnz and A * st.P * st.P + st.n * st.P * D <= work:
            _, single = _hop_sets(st, arows)  # (A, P): the one link to each row's processors
            # volume of each task to the neighbours of each row
            wa = np.bincount(st.rows * A + ainv[st.ix], weights=st.vn, minlength=st.n * A)
            wa = wa.reshape(st.n, A)
            V = np.zeros((st.n, st.P, D))
            for r in range(A):
                ok = np.flatnonzero(single[r] >= 0)
                if ok.size and wa[:, r].any():
                    V[:, ok, slot[ok, single[r, ok]]] += wa[:, r][:, None]
            cap_l = st.slot_bw()  # (P, D): bandwidth of each link of p, by position
            bad = V > (L * cap_l * (1 + _SLACK))[None, :, :] + (keep + tol)[:, :, None]
            new &= ~bad.any(axis=2)
        if not new.any(axis=1).all():
            return False
        if np.array_equal(new, adm):
            break
        adm = new
    _poll(until)
    if adm.all() or not lp:
        return L * st.cap.sum() * (1 + 1e-9) >= st.w.sum()
    if 2 * _unique_rows(adm)[0].shape[0] * st.P > work:
        return L * st.cap.sum() * (1 + 1e-9) >= st.w.sum()  # the LP would be too large
    hop = st.first_hops()
    Q = adm.any(axis=0)
    mark = np.zeros((st.P, st.bw.shape[0] + 1), dtype=bool)
    h = np.where(Q[None, :], hop, -1)
    mark[np.repeat(np.arange(st.P), st.P), h.reshape(-1)] = True
    bq = mark[:, :-1] @ st.bw
    return _lp(adm, leave, st.w, st.cap, bq, L, until)


def _unique_rows(a: np.ndarray):
    """Distinct rows of a boolean matrix and the index of each row among them."""
    packed = np.ascontiguousarray(np.packbits(a, axis=1))
    keys = packed.view(np.dtype((np.void, packed.shape[1]))).reshape(-1)
    _, first, inv = np.unique(keys, return_index=True, return_inverse=True)
    return a[first], inv.reshape(-1)


def _near(st: _Stars, adm: np.ndarray) -> np.ndarray:
    """(n, P): the processors where some neighbour of each task may sit."""
    return np.asarray(st.adjacency @ adm.astype(np.float32)) > 0
