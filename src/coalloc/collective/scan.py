"""The package's default method: an exact earliest-start scan with explainable rejections.

For every candidate start in ascending order (``t_e`` and the breakpoints where availability
increases, over the *whole* pool: the only possible earliest starts), the window maxima of
every matching node come from the compiled kernel in blocks; then

1. the nodes with ``a_ij^t >= e_i`` are eligible; fewer than ``N``: rejected at ``t`` by a
   per-resource minimum (the property that excludes the most nodes is reported);
2. the ``N`` largest ``a_ij^t`` of each property must reach ``d_i``; otherwise rejected at
   ``t`` by that total (best reachable sum reported);
3. a set is searched: by enumeration when ``C(k, N) <= enumerate_limit`` (exact: also the
   best factor), else by deterministic best-improvement swaps (compiled :func:`swap_search`)
   from a best-coverage greedy set, which first repair the totals and then raise the
   utilisation factor; if the repair fails, the integer program of :mod:`.exact` decides
   (proven either way, or undecided on its time limit). Once a start is known feasible, the
   swaps also run from the tightest-fit greedy sets (overall and per property) and the best
   factor is kept.

When ``N`` times the eligible nodes exceeds :data:`_LARGE`, step 3 is
:func:`._heuristic_sets.large_search` instead (weighted top-``N`` sets that also prove a start
infeasible, a one-at-a-time fill, then the integer program) and the factor is raised by swaps
on a shortlist (:func:`._heuristic_sets.improve`); see ``docs/collective.md``, "Large N".
The sets are searched by :mod:`._heuristic_sets` and decided exactly by :mod:`._exact_sets`.

The first start with a set wins: the start is the earliest (proven unless a test was
undecided), the factor is the local optimum of the swaps (or the enumerated optimum). No
random choice is made: the answer does not depend on the seed.
"""

from __future__ import annotations

import functools
import inspect
import math
import time
from typing import Any, Callable, Optional

import numpy as np

from .._shared import interrupt
from .._shared import params as checks
from .._shared.constraints import checked
from .._shared.docs import filled
from .._shared.seeding import check_seed
from . import _bounded
from ._exact_sets import best_subset, enumerate_best, feasible_subset
from ._heuristic_sets import dual_cuts, greedy_starts, improve, large_search, proven_by
from ._ledger import MAX_LISTED as _MAX_LISTED
from ._ledger import Ledger, answer_message, impossible
from ._order import demand_first
from ._proof_screen import ProofScreen
from ._scratch import window_rows
from .core import CallReport, Clock, Problem, factor, kernels, offer, rejected, settled, solution
from .model import BLOCK, CollectiveRequest, ResourcePool
from .result import CoallocationResult, stopped_result

__all__ = ["scan"]


#: The largest block of candidate starts whose window maxima are held at once.
_MAX_BLOCK = 512
#: The smallest such block when windows are short: at most ``max(this, 2 W)`` starts, ``W``
#: the segments of the first window (the block's window maxima then stay in cache; long
#: windows keep :data:`_MAX_BLOCK`, whose prefix maxima are shared by more starts).
_SHORT_BLOCK = 128
#: That limit for a request with totals beyond its minimums (``d > N e`` somewhere: not the
#: minimums-only route of :data:`_MIN_COUNTS`): issue 40, h56coll: the tail's rejections over
#: 2-day windows of 6-12 segments spent a fixed cost per block (each kernel's pass over the
#: rows and the screens' set-up), and their blocks of 128 starts do not stay in cache anyway
#: (26 MB at 8,477 nodes); with :data:`_MAX_BLOCK` they are about 0.8-0.9x, the same answers.
#: The minimums-only requests keep :data:`_SHORT_BLOCK` (their counted blocks run past the
#: answer: week N = 1,024 simple case 2 1.8x slower with 512).
_SHORT_BLOCK_TOTALS = _MAX_BLOCK
#: The kept proofs' weights from the block maxima on ``window_screen``'s route (_proof_screen).
_PROOF_SCREEN = True
#: Starts per sub-block of the pruned screen (``pruned_screen``, issue 40): the nodes whose
#: bounds over a sub-block keep them out of the ``N`` largest amounts and scores at every
#: start are only counted.
_SUB = 16
#: The pruned screen runs on blocks of at least ``_SUB // 2`` starts when the matching nodes
#: are at least this many times the ``N + N // 2 + 1`` largest it must keep per start (its
#: bounds cost about two passes over the nodes per sub-block; at N = 1,024 on 8,477 nodes it
#: keeps too many to pay, measured: 4-8 % slower than ``block_screen``).
_PRUNE_SHARE = 8
#: ``window_screen`` (the pruned screen's rows chosen from the block maxima, the window
#: maxima of those rows only) replaces ``window_max_rows`` and ``pruned_screen`` when the
#: matching nodes are at least this many times ``N + N // 2 + 1`` (issue 40: at N = 256 on
#: 8,477 nodes the rows kept are too many to pay; measured in bench/collective/ISSUE40.md).
_FUSE_SHARE = 32
#: ``window_screen`` first chooses among every row from the blocks' maxima and minima alone
#: (the pool's ``_block_extrema``: the same rows in the end, the amounts of every row not
#: read) when the matching nodes are at least this many times ``N + N // 2 + 1`` (issue 40,
#: h50coll: reject N = 10 on 8,477 nodes, 0.73-0.95 of the kernel's time; at N = 60 with
#: 1 h windows that step keeps half of the rows and costs 1.15-1.46 times more).
_LOWS_SHARE = 128
#: A request with minimums only (totals at most ``N`` times them: any ``N`` eligible nodes
#: meet them) and windows of at least this many segments runs
#: ``window_screen`` with the blocks' extrema first on its later blocks whatever ``N``
#: (issue 40, h54coll: its rows are only counted, and the whole blocks inside a long window
#: decide most of them; week N = 1,024 rejections over 1-day windows 2.3x faster, N = 60
#: 1.3x; with windows of 6 segments the blocks decide too little: 1.2-3.3x slower).
_PLAIN_SEGS = 64
#: Starts per sub-block of ``window_screen`` on that route (a minimums-only request over
#: windows of :data:`_PLAIN_SEGS` segments or more; :data:`_SUB` elsewhere). Issue 40,
#: h54coll: the week's 12 such requests 0.57-0.87x with 64 starts, 32 less (0.70-0.95x).
_PLAIN_SUB = 64

#: A timed call on a pool without its indexes reads its first start without them when its
#: window spans at most this many segments (issue 40 / 41, h55coll: at 10,000 nodes the
#: window maxima of one start over 6 segments cost about 1 ms, over 576 segments (2 days)
#: 40-90 ms at a load of 10, more than a 0.05 s limit allows; the indexes cost 0.2-0.3 s).
_DEFER_SEGS = 64
#: A request with minimums only (``d <= N e``) and windows under :data:`_PLAIN_SEGS`
#: segments screens its starts first by the counts of nodes that meet every minimum
#: (``min_counts``: one pass over the amounts the windows cover, no window maxima held);
#: only the starts with at least ``N`` go to the exact screens, in runs, from the third
#: block of starts on (the first start and ``block`` starts: as before) (issue 40, h55coll:
#: week N = 256 case 2, 6-segment windows, about 0.75x; over 2-day windows the pass reads
#: every amount where ``window_screen``'s block extrema read few: 3x slower, so not there).
#: False: every start to the exact screens, as before.
_MIN_COUNTS = True

#: ``N`` times the eligible nodes above which a start's set is searched by
#: :func:`._heuristic_sets.large_search`
#: (the paper's sizes, ``N <= 60`` on 606 nodes, stay below it and keep their answers).
_LARGE = 50_000
#: The most sets the portfolio enumerates at the earliest start (the exact method's default).
_PORTFOLIO_ENUMERATE = 2_000_000
#: Seconds the portfolio must have left to start the exact method's integer program at the
#: earliest start: HiGHS does not stop within its first 0.2 s on the paper's 600-node pool
#: (0.2 s for a 0.05 s limit), so a later start would overrun the deadline.
_PORTFOLIO_PROGRAM = 0.25
#: Seconds HiGHS may run past its own time limit on those models (measured: 0.16 s), kept
#: off the portfolio program's limit so that the call returns within its deadline.
_HIGHS_LATENCY = 0.2
#: Swap searches from random sets (seeded by ``seed``) the portfolio runs at the earliest
#: start when the factor is not enumerated: about 0.5 s at ``N = 60`` on the paper's pool.
_PORTFOLIO_RESTARTS = 32


@filled
@checked("coalloc.collective.constraints", "scan")
def scan(
    request: CollectiveRequest,
    pool: ResourcePool,
    *,
    seed: Optional[int] = 0,
    backend: str = "compiled",
    enumerate_limit: int = 20_000,
    solver: str = "highs",
    program_time_limit: Optional[float] = 10.0,
    max_rounds: int = 100_000,
    block: int = 8,
    reserve: bool = False,
    portfolio: Optional[bool] = None,
) -> CoallocationResult:
    """Co-allocate at the earliest admissible start with a high utilisation factor.

    Parameters
    ----------
    %(collective_request_pool)s
    seed : int, optional
        Accepted for a uniform signature; the method is deterministic.
    backend : {"compiled", "numpy"}
        Kernels: compiled (default) or their NumPy twins (same answers, slower).
    enumerate_limit : int
        Enumerate all subsets (exact factor) when there are at most this many (at most
        ``10**8``).
    solver : {"highs", "cbc", "cpsat"}
        Back-end of the integer program deciding hard starts.
    program_time_limit : float, optional
        Seconds per integer program (an undecided start counts as ``"time_limit"``).
    max_rounds : int
        Cap on swaps per search (at most ``10**9``).
    block : int
        Candidate starts screened after the first (then blocks eight times larger, up to 512
        starts or ``block``: the earliest start is usually among the first; a block's window
        maxima are computed once).
    reserve : bool
        Reserve the solution on ``pool`` (atomically; also the answer a stopped call returns).
    portfolio : bool, optional
        Run the family's other methods inside the scan, sharing its incumbent (default None:
        on when ``time_limit`` is given, the budget the caller grants): before the first
        start that needs the integer program, the paper's heuristic (``cankar``, seeded by
        ``seed``), whose answer at a later start is the incumbent until the scan finds the
        earliest; at the earliest start, the enumeration of every set when there are at
        most 2,000,000 (the exact method's limit), else the exact method's set (the integer
        program's set raised by the swaps) when 0.45 s are left, then 32 swap
        searches from random sets (seeded by ``seed``), keeping the best factor. Off: the
        plain scan (milliseconds).
    time_limit : float, optional
        Seconds for the whole call (default None: no limit), counted from its start as in
        every family; the scan stops at the deadline between steps (and each integer program
        gets at most what is left) and returns the best answer found so far with status
        ``"time_limit"`` (``"optimal"`` when its start is proven earliest), or no answer.

    Returns
    -------
    CoallocationResult
        An answer: ``"optimal"`` (the start is proven earliest: ``bound`` equals it; the
        message says whether the factor is enumerated), ``"feasible"`` (an integer program
        left an earlier start undecided within ``program_time_limit``: ``bound`` is the first
        such start) or ``"time_limit"``; or a rejection: ``"infeasible"`` (the exhaustive
        scan is the proof, and the message says so), ``"no_solution"`` (starts left
        undecided) or ``"time_limit"``, whose ``rejection`` says which check failed at which
        starts.

    Examples
    --------
    >>> pool = ResourcePool([[4.0], [2.0], [1.0]], ["cores"])
    >>> req = CollectiveRequest(60, 2, minimum={"cores": 1}, total={"cores": 3})
    >>> scan(req, pool).status
    'optimal'
    """
    seed = check_seed(seed)
    # the values were checked by the table (@checked); these only fix their types
    enumerate_limit, max_rounds, block = int(enumerate_limit), int(max_rounds), int(block)
    program_time_limit = None if program_time_limit is None else float(program_time_limit)
    prob = Problem.of(pool, request)
    params = {"backend": backend, "enumerate_limit": enumerate_limit, "solver": solver,
              "program_time_limit": program_time_limit, "max_rounds": max_rounds,
              "portfolio": portfolio}  # fmt: skip
    # as given; None: on when the call has a time limit (the budget the caller grants)
    left = checks.time_left()  # the deadline of the time limit in force (None: no limit)
    deadline = None if left is None else time.perf_counter() + left
    return _Scan(request, pool, prob, seed, params, deadline, block, reserve).run()


class _Scan:
    """One call of :func:`scan`: its options, the state its steps share (the counters, the
    ledger of rejected starts, the starts left undecided, the portfolio's helper answer and
    proofs) and the steps, called in the scan's order by :meth:`run`."""

    __slots__ = ("request", "pool", "prob", "seed", "params", "deadline", "block", "reserve",
                 "backend", "enumerate_limit", "solver", "program_time_limit", "max_rounds",
                 "portfolio", "ker", "clock", "n", "e", "d", "tol", "elo", "dlo", "counters",
                 "nodes", "cap", "starts", "ledger", "unknown", "first_undecided", "helper",
                 "frontier", "program_done", "proofs", "deferred")  # fmt: skip

    def __init__(self, request: CollectiveRequest, pool: ResourcePool, prob: Problem,
                 seed: Optional[int], params: dict, deadline: Optional[float], block: int,
                 reserve: bool) -> None:  # fmt: skip
        self.request, self.pool, self.prob, self.seed = request, pool, prob, seed
        self.params, self.deadline, self.block, self.reserve = params, deadline, block, reserve
        self.backend, self.solver = params["backend"], params["solver"]
        self.enumerate_limit, self.max_rounds = params["enumerate_limit"], params["max_rounds"]
        self.program_time_limit = params["program_time_limit"]
        portfolio = params["portfolio"]
        self.portfolio = (deadline is not None) if portfolio is None else bool(portfolio)
        self.ker = kernels(self.backend)
        self.clock = Clock()
        self.n, self.e, self.d = request.count, prob.e, prob.d
        self.tol, self.elo, self.dlo = prob.tol, prob.elo, prob.dlo
        self.counters = {"starts": 0, "enumerated": 0, "swap_rounds": 0, "solver_calls": 0}
        self.nodes = prob.matching
        self.ledger = Ledger(pool.names, self.n, self.d)
        self.unknown = 0
        self.first_undecided = None  # the first start an integer program left undecided
        self.helper = None  # the paper's heuristic's answer (portfolio), once it has run
        # every candidate start before it is decided
        self.frontier = float(request.earliest_start)
        self.program_done = False  # the portfolio's program_set has run
        self.proofs: list = []  # weights that proved starts empty, tried first at the next ones
        self.deferred = False  # the starts after the first wait for the pool's indexes (prepare)

    def report(self, counters: dict) -> CallReport:
        """The call's report with ``counters`` (a copy for an answer, the live ones for a
        rejection) and the timings so far."""
        return CallReport("scan", self.seed, self.params, self.clock.done(), counters)

    def run(self) -> CoallocationResult:
        """The scan: the rejection that holds at any time, else the candidate starts in order
        (:meth:`passing`), the set at each (:meth:`search_at`), the portfolio's work at the
        first start with a set (:meth:`polish`), and its answer; or the rejection written by
        the ledger when no start admits a set."""
        prob, pool, request, n = self.prob, self.pool, self.request, self.n
        reason = impossible(prob, pool, n)
        if reason is not None:
            return rejected(prob, self.report(self.counters), reason, proven=True)
        self.prepare()
        d = self.d
        for t, tmax in self.passing():
            self.frontier = float(t)
            found = self.search_at(t, tmax)
            if found is None:
                continue
            el, a, tm, cp, rows, exact_u = found
            self.clock.lap("search")
            if self.portfolio and not exact_u:
                rows, exact_u = self.polish(t, el, a, tm, cp, rows)
                self.clock.lap("portfolio")
            proven = self.unknown == 0
            message = answer_message(t, proven, self.unknown, self.first_undecided,
                                      factor(d, tm[rows], cp[rows]), exact_u)  # fmt: skip
            result = self.make(t, self.nodes[el[rows]], tm[rows], proven, message=message)
            if self.reserve:
                pool.reserve(result.start, request.duration, result.resources, result.amounts)
            result.timings = self.clock.done()
            return result
        reason = self.ledger.reason(request, self.starts, self.unknown)
        return rejected(prob, self.report(self.counters), reason, proven=self.unknown == 0)

    def prepare(self) -> None:
        """The matching nodes' capacities and the candidate starts (the compiled backend
        reads the pool's bits of falling amounts, kept up to date by bookings; in a timed call
        on a pool without its indexes, the first start alone until it fails: :meth:`passing`)."""
        pool, request, nodes = self.pool, self.request, self.nodes
        cap = pool.capacity[nodes]
        if (self.backend == "compiled" and self.deadline is not None
                and _window_segments(pool, request) <= _DEFER_SEGS and not pool._indexed()):
            # a timed call on a pool without its indexes (its first request): the first
            # start, the earliest possible, needs none of them (its window maxima from the
            # amounts); the later starts are read from the indexes once it fails (passing).
            # An untimed call builds them first, as before: a matcher's warm-up (an untimed
            # scan of a one-node request) still leaves them built
            starts, self.deferred = np.array([float(request.earliest_start)]), True
        elif self.backend == "compiled":
            starts = pool.candidate_starts(nodes, request.earliest_start, request.latest_start)
        else:
            starts = self.ker.decrease_starts(pool.times, pool.reserved, nodes,
                                              request.earliest_start,
                                              request.latest_start)  # fmt: skip
        self.cap, self.starts = np.ascontiguousarray(cap), starts
        self.clock.lap("prepare")

    def passing(self):
        """The starts that pass the screens, in order, with their window maxima: the first
        start alone, then ``block`` starts (window maxima from the pool's block maxima:
        ``window_max_blocks``, unless ``window_screen`` runs there as on the later blocks),
        then blocks eight times larger (``window_max_rows``, linear
        in the segments) up to :data:`_MAX_BLOCK`, or up to twice the segments of the first
        window when that is less (at least :data:`_SHORT_BLOCK`); a block's maxima computed
        once and screened at once (``block_screen``, or ``pruned_screen``: the same outputs
        from the nodes that can matter per sub-block of :data:`_SUB` starts, on blocks of at
        least ``_SUB // 2`` starts when ``N`` is small beside the nodes,
        :data:`_PRUNE_SHARE`; on the later blocks, when ``N`` is smaller still beside the
        nodes (:data:`_FUSE_SHARE`), ``window_screen``: the same outputs from the rows
        chosen by bounds from the pool's block maxima and the window maxima of those rows
        only, then those of every node from the block's first start that passes; so too,
        from the blocks' extrema first, for a request with minimums only (``d <= N e``) and
        windows of :data:`_PLAIN_SEGS` segments or more, whatever ``N``); the failing starts
        are recorded as they are passed."""
        pool, request, starts, ker = self.pool, self.request, self.starts, self.ker
        block = self.block
        nodes, cap, e, d, n, tol = self.nodes, self.cap, self.e, self.d, self.n, self.tol
        counters, clock = self.counters, self.clock
        note, note_screened = self.ledger.note, self.ledger.screened
        pos, size = 0, 1  # the earliest start alone (it usually passes), then block, ...
        grid = pool._state[0]
        t0 = float(starts[0]) if starts.size else float(request.earliest_start)
        segs = int(np.searchsorted(grid, t0 + request.duration) - np.searchsorted(grid, t0))
        only_mins = bool(np.all(d <= n * e))  # minimums only: any N eligible nodes do
        short = _SHORT_BLOCK if only_mins else _SHORT_BLOCK_TOTALS
        largest = max(min(_MAX_BLOCK, max(short, 2 * segs)), block)
        plain = segs >= _PLAIN_SEGS and only_mins  # minimums only, long windows
        fuse = plain or _FUSE_SHARE * (n + n // 2 + 1) <= nodes.size  # window_screen later
        if fuse:  # it holds no window maxima of every node: the longest blocks pay most
            largest = max(_MAX_BLOCK, block)
        screen = _PROOF_SCREEN and fuse and ProofScreen(self, pool, request.duration)
        bounds, failed = _bounded.ON and segs <= _bounded.SEGS, 0.0  # failed: last block's
        counted = (_MIN_COUNTS and self.backend == "compiled" and segs < _PLAIN_SEGS
                   and only_mins) and [0, np.empty(0, np.int64), None]  # fmt: skip
        while pos < starts.size:
            interrupt.check()  # a batch's timeout or cancellation
            b = starts[pos : pos + size]
            if counted and size > block:  # the first starts: the exact screens are cheap
                run = self.count_run(counted, pos, b)
                if run < 0:  # -run starts with fewer than N eligible nodes: recorded
                    pos -= run
                    if self.deferred:  # the first start failed: the others from the indexes
                        self.starts = starts = pool.candidate_starts(
                            nodes, request.earliest_start, request.latest_start)
                        self.deferred = False
                    size = block if pos == 1 else min(size * 8, largest)
                    continue
                b = b[:run]  # the exact screens on the run of starts with N or more
            # the screens and, for every start that passes them, the equal weights' proof
            # (code 3), in one pass over the block; per sub-block of _SUB starts over the
            # nodes that can matter there when that can pay (the same outputs, bit for bit)
            prune = b.size >= _SUB // 2 and (plain or _PRUNE_SHARE * (n + n // 2 + 1)
                                             <= nodes.size)  # fmt: skip
            # the second block (``block`` starts) as the later ones when window_screen runs
            # there (issue 40, h51coll: 1.5-2x cheaper than every row's window maxima; the
            # first start alone is cheaper from the block maxima)
            early = size <= block and not (size > 1 and prune and fuse)
            started = time.perf_counter()  # the block's pace (the next block's size, timed)
            got = None  # bound_screen's outputs (_bounded.bounded)
            if early and self.backend == "compiled" and not self.deferred:
                # the first starts: whole blocks of the windows from the pool's block maxima
                times, res, bm = pool._block_maxima()
                tm_block = ker.window_max_blocks(times, res, bm, BLOCK, nodes, b,
                                                 request.duration)  # fmt: skip
            elif prune and fuse:
                # N small beside the nodes: the rows that can matter per sub-block from the
                # block maxima, then their window maxima only (window_screen); those of
                # every node from the first start that passes, below
                if plain or _LOWS_SHARE * (n + n // 2 + 1) <= nodes.size:
                    times, res, bm, bn = pool._block_extrema()
                else:
                    (times, res, bm), bn = pool._block_maxima(), None
                tm_block = None
            elif (bounds and failed >= _bounded.SHARE and not early  # bounds first, unless
                  and 2 * (_MAX_LISTED - len(self.ledger.listed)) < b.size):  # listed
                times, res = pool._state
                got = _bounded.bounded(self, times, res, b, prune)
            else:
                times, res = pool._state  # one read: the grid and its amounts together
                tm_block = window_rows(ker, times, res, nodes, b, request.duration)
            off, at = 0, None  # tm_block[s - off] (or [at[s]]): the window maxima at b[s]
            if got is not None:
                codes, elig, props, vals, tm_block, at, bounds = got
            elif tm_block is None:
                codes, elig, props, vals, _ = ker.window_screen(times, res, bm, BLOCK, nodes, b,
                                                                request.duration, cap, e, d, n,
                                                                _PLAIN_SUB if plain else _SUB,
                                                                tol=tol, bn=bn)  # fmt: skip
            elif prune:
                codes, elig, props, vals, _ = ker.pruned_screen(tm_block, cap, e, d, n, _SUB,
                                                                tol=tol)  # fmt: skip
            else:
                codes, elig, props, vals = ker.block_screen(tm_block, cap, e, d, n, tol=tol)
            spent = time.perf_counter() - started
            passed = np.flatnonzero((codes == 0) | (codes == 3))
            clock.lap("window_max")
            q = 0
            for s in passed.tolist():
                note_screened(b[q:s], codes[q:s], elig[q:s], props[q:s], vals[q:s])
                counters["starts"] += s - q + 1
                q = s + 1
                if codes[s] == 3:  # no set of N: as the set search would have found
                    counters["weighted_screen"] = counters.get("weighted_screen", 0) + 1
                    note({"start": float(b[s]), "check": "combination", "property": None})
                    continue
                if screen and screen.proves(b, s):  # noted as search_at's proven_by notes it
                    continue
                if tm_block is None or (at is None and s - off >= tm_block.shape[0]):
                    # the window maxima of every node from this start to the block's end, once
                    # (a start that fails the set search is often followed by others that pass
                    # the screens: one call per start would cost a window's length each); the
                    # next blocks compute them all (window_screen would only add its cost)
                    tm_block, off = (screen.maxima(ker, times, res, b, s) if screen else
                                     window_rows(ker, times, res, nodes, b[s:],
                                                 request.duration)), s  # fmt: skip
                    fuse = bool(screen)  # the screen's blocks from window_screen still
                yield b[s], tm_block[s - off if at is None else at[s]]
            note_screened(b[q:], codes[q:], elig[q:], props[q:], vals[q:])
            counters["starts"] += b.size - q
            failed = float(np.mean((codes == 1) | (codes == 2))) if codes.size else 0.0
            clock.lap("window_max")
            pos += b.size
            if self.deferred:  # the first start failed: the others from the indexes now
                self.starts = starts = pool.candidate_starts(nodes, request.earliest_start,
                                                             request.latest_start)  # fmt: skip
                self.deferred = False
            size = block if pos == 1 else min(size * 8, largest)
            size = self.fit(size, b.size, spent)

    def count_run(self, counted: list, pos: int, b: np.ndarray) -> int:
        """The minimums-only screen (``min_counts``) at the starts ``b`` (from ``pos``):
        ``-f`` when the first ``f`` have fewer than ``N`` nodes meeting every minimum (their
        screen outputs, code 1, recorded as the exact screens would give them), else the run
        of starts from ``pos`` with ``N`` or more (to the exact screens). ``counted`` holds
        ``[first, eligible, meet]`` of the starts counted last, reused while they last."""
        at, elig, meet = pos - counted[0], counted[1], counted[2]
        if at >= elig.size:
            pool, request = self.pool, self.request
            times, res = pool._state
            elig, meet = self.ker.min_counts(times, res, self.nodes, b, request.duration,
                                             self.cap, self.e, self.tol)  # fmt: skip
            counted[:], at = [pos, elig, meet], 0
        few = elig[at : at + b.size] < self.n
        f = int(np.argmin(few)) if not few.all() else few.size
        if f == 0:
            return int(np.argmax(few)) if few.any() else few.size
        el, mt = elig[at : at + f], meet[at : at + f]
        props = np.argmin(mt, axis=1)  # the first property met by the fewest nodes
        vals = mt[np.arange(f), props].astype(np.float64)
        self.ledger.screened(b[:f], np.ones(f, np.int64), el, props, vals)
        self.counters["starts"] += f
        self.clock.lap("window_max")
        return -f

    def fit(self, size: int, done: int, spent: float) -> int:
        """The next block's ``size``, with a deadline at most the starts the last block's pace
        (``done`` starts in ``spent`` seconds) screens in the time left, and at least
        ``max(_SUB, block + 1)`` (the later blocks' route): a block begun before the deadline
        ends near it. (Issue 36 at 10,000 nodes x 2,016 slots: a 504-start ``window_screen``
        block begun before a 0.2 s deadline ran to 0.56-0.6 s under load; the blocks'
        bounds do not change any start's outputs, and without a deadline nothing changes.)"""
        if self.deadline is None or done <= 0 or spent <= 0.0:
            return size
        left = self.deadline - time.perf_counter()
        fits = int(max(left, 0.0) * done / spent)
        return min(size, max(fits, _SUB, self.block + 1))

    def note_empty(self, t) -> None:
        """Record that no set of ``N`` exists at start ``t``."""
        self.ledger.note({"start": float(t), "check": "combination", "property": None})

    def program(self, t, a):
        """The integer program decides whether any set of the eligible nodes (available
        amounts ``a``) exists at start ``t``: its rows, or None with the start noted
        (infeasible, or undecided within the program's time limit)."""
        if self.portfolio and self.helper is None:
            self.run_helper()  # a quick answer at a later start before the first hard start
        self.counters["solver_calls"] += 1
        status, r = feasible_subset(a, self.d, self.n, solver=self.solver,
                                    time_limit=self.program_limit(), tol=self.tol)  # fmt: skip
        if status == "infeasible":
            self.note_empty(t)
            return None
        if r is None:
            self.unknown += 1
            if self.first_undecided is None:
                self.first_undecided = float(t)
            self.ledger.note({"start": float(t), "check": "undecided", "property": None})
        return r

    def program_limit(self) -> Optional[float]:
        """``program_time_limit``, cut to what is left before the call's deadline."""
        left = checks.remaining(self.deadline)
        if left is None:
            return self.program_time_limit
        left = max(left, 1e-3)
        return left if self.program_time_limit is None else min(self.program_time_limit, left)

    def run_helper(self) -> None:
        """Run the paper's heuristic once (``portfolio``): its answer, at a start no earlier
        than the scan's, is the incumbent until the scan finds its own; the bound is the
        scan's frontier when the time limit returns it."""
        from .cankar import cankar

        request, pool, seed = self.request, self.pool, self.seed
        got = cankar(request, pool, seed=0 if seed is None else seed, backend=self.backend)
        self.counters["portfolio_cankar"] = 1
        self.helper = got if got.start is not None else False
        if self.helper:
            h_start, h_rows = float(self.helper.start), self.helper.resources.copy()
            times_, res_ = pool._state
            tm_h = self.ker.window_max_rows(times_, res_, h_rows, np.array([h_start]),
                                            request.duration)[0]  # fmt: skip
            offer(functools.partial(self.helper_result, h_start, h_rows, tm_h), pool,
                  self.reserve)  # fmt: skip

    def helper_result(self, h_start: float, h_rows, tm_h) -> CoallocationResult:
        """The paper's heuristic's answer (portfolio) as the time limit returns it: bounded
        below by the scan's frontier (or its first undecided start)."""
        bound = self.frontier
        if self.first_undecided is not None:
            bound = min(bound, self.first_undecided)
        return solution(self.prob, self.report(dict(self.counters)), h_start, h_rows, tm_h,
                        bound=bound, message=f"start {h_start:g} s found by the paper's "
                        "heuristic (the scan's portfolio); not proven earliest")  # fmt: skip

    def make(self, t, rows_abs, tm_rows, proven, status="feasible", message=""):
        """A result for the set ``rows_abs`` (pool rows) at ``t``: the start is proven
        earliest when no earlier start was left undecided, else bounded below by the first
        undecided one."""
        return solution(self.prob, self.report(dict(self.counters)), float(t), rows_abs,
                        tm_rows, status=status, proven=proven, bound=self.first_undecided,
                        message=message)  # fmt: skip

    def offer_rows(self, t, rows_abs, tm_rows) -> None:
        """Offer the set as the incumbent of the time limit in force (copies)."""
        rows_abs, tm_rows, proven = rows_abs.copy(), tm_rows.copy(), self.unknown == 0
        offer(functools.partial(self.make, t, rows_abs, tm_rows, proven), self.pool,
              self.reserve)  # fmt: skip

    def offer_best(self, t, el, tm, cp, cands) -> None:
        """Offer the best factor among the admissible ``cands`` (rows of ``el``) at ``t``."""
        us = [factor(self.d, tm[r], cp[r]) for r in cands]
        r = np.asarray(cands[int(np.argmax(us))], dtype=np.int64)
        self.offer_rows(t, self.nodes[el[r]], tm[r])

    def program_set(self, a, tm, cp):
        """The exact method's set at a feasible start (portfolio): the integer program's
        set raised by the swaps, when :data:`_PORTFOLIO_PROGRAM` seconds and
        :data:`_HIGHS_LATENCY` are left (None otherwise, or when the program found none in
        time)."""
        self.program_done = True
        left = checks.remaining(self.deadline)
        if left is not None and left < _PORTFOLIO_PROGRAM + _HIGHS_LATENCY:
            return None
        limit = self.program_time_limit
        if left is not None:  # HiGHS returns up to _HIGHS_LATENCY past its own limit
            limit = left - _HIGHS_LATENCY if limit is None else min(limit, left - _HIGHS_LATENCY)
        self.counters["solver_calls"] += 1
        _, r = feasible_subset(a, self.d, self.n, solver=self.solver, time_limit=limit,
                               tol=self.tol)  # fmt: skip
        if r is None:
            return None
        r, k = self.ker.swap_search(a, tm, cp, self.d, r, 10**6, self.tol)
        self.counters["swap_rounds"] += k
        return r

    def polish(self, t, el, a, tm, cp, rows):
        """The portfolio's work at the earliest start ``t`` once the scan has its set
        ``rows`` (rows of ``el``): the paper's heuristic's set when it starts at ``t``; the
        enumeration of every set when there are at most :data:`_PORTFOLIO_ENUMERATE`
        (cut by the deadline: its best so far); unless it ended, the exact method's set (the
        integer program's set raised by the swaps) when :data:`_PORTFOLIO_PROGRAM` seconds
        (and HiGHS's latency) are left, then :data:`_PORTFOLIO_RESTARTS` swap searches
        from seeded random sets. Each better set is the incumbent at once. Returns ``(rows,
        proven maximal)``."""
        n, d, nodes, helper, counters = self.n, self.d, self.nodes, self.helper, self.counters
        best = _Best(self, t, el, a, tm, cp, rows)
        if helper and helper.start == t:
            pos = np.searchsorted(nodes[el], helper.resources)
            if np.all(pos < el.size) and np.array_equal(nodes[el][np.minimum(pos, el.size - 1)],
                                                        helper.resources):  # fmt: skip
                best.consider(pos)
        total = math.comb(int(el.size), n)
        if total <= _PORTFOLIO_ENUMERATE:
            got, u, complete = enumerate_best(a, tm, cp, d, n, self.deadline, self.tol,
                                              on_better=best.consider)  # fmt: skip
            if complete:
                counters["enumerated"] += total
                if got is not None:
                    return np.asarray(got, dtype=np.int64), True
        if n * el.size > _LARGE:  # large N: the weighted sums' shortlist, not whole-pool swaps
            return best.rows, False
        if not self.program_done:
            r = self.program_set(a, tm, cp)
            if r is not None:
                best.consider(r)
        rng = np.random.default_rng([0 if self.seed is None else self.seed, 36])
        for _ in range(_PORTFOLIO_RESTARTS):  # swaps from random sets (repaired, then raised)
            interrupt.check()  # the deadline: the best set so far is the incumbent
            s0 = np.sort(rng.choice(el.size, n, replace=False))
            r, k = self.ker.swap_search(a, tm, cp, d, s0, self.max_rounds, self.tol)
            counters["swap_rounds"] += k
            counters["portfolio_restarts"] = counters.get("portfolio_restarts", 0) + 1
            best.consider(r)
        return best.rows, False

    def by_enumeration(self, t, a, tm, cp):
        """A start with at most ``enumerate_limit`` sets: every set enumerated (the best
        factor, proven), or the start noted empty. ``(rows, True)`` or None."""
        got = best_subset(a, tm, cp, self.d, self.n, self.enumerate_limit, tol=self.tol)
        self.counters["enumerated"] += math.comb(a.shape[0], self.n)
        if got is not None and got[0] is not None:
            return got[0], True
        self.note_empty(t)
        return None

    def by_weights(self, t, el, a, tm, cp):
        """Large ``N``: :func:`large_search` (a proof of no set, or sets), the integer
        program when it has neither, the factor raised on a shortlist. ``(rows, False)`` or
        None."""
        d, dlo, tol, ker, counters = self.d, self.dlo, self.tol, self.ker, self.counters
        verdict, cands, k = large_search(a, tm, cp, d, self.n, self.e, dlo, ker, tol,
                                         self.proofs)  # fmt: skip
        counters["lagrange_steps"] = counters.get("lagrange_steps", 0) + k
        if verdict == "infeasible":
            self.note_empty(t)
            return None
        if not cands:
            r = self.program(t, a)
            if r is None:
                return None
            cands = [np.asarray(r, dtype=np.int64)]
        self.offer_best(t, el, tm, cp, cands)  # an answer: what the deadline returns from now on
        rows, k = improve(ker, a, tm, cp, d, dlo, tol, cands, self.max_rounds)
        counters["swap_rounds"] += k
        return rows, False

    def by_swaps(self, t, el, a, tm, cp):
        """The swaps from the best-coverage greedy set; when they cannot repair it, the best
        weights (a proof of no set) or the integer program; at a feasible start the swaps
        from the other greedy sets (and the portfolio's program) for the factor.
        ``(rows, False)`` or None."""
        d, dlo, tol, ker, counters = self.d, self.dlo, self.tol, self.ker, self.counters
        max_rounds = self.max_rounds
        starts_ = greedy_starts(a, tm, cp, d, self.n, self.e)
        r, k = ker.swap_search(a, tm, cp, d, starts_[0], max_rounds, tol)
        counters["swap_rounds"] += k
        cands = [r] if np.all(a[r].sum(axis=0) >= dlo) else []
        if not cands:
            # the repair from the best-coverage start failed: the best weighted sums may
            # prove the start empty; else the integer program decides
            verdict, _, k = dual_cuts(a, d, dlo, self.n, proofs=self.proofs)
            counters["lagrange_steps"] = counters.get("lagrange_steps", 0) + k
            if verdict == "infeasible":
                self.note_empty(t)
                return None
            r = self.program(t, a)
            if r is None:
                return None
            self.offer_best(t, el, tm, cp, [np.asarray(r, dtype=np.int64)])
            r, k = ker.swap_search(a, tm, cp, d, r, max_rounds, tol)
            counters["swap_rounds"] += k
            cands.append(r)
        self.offer_best(t, el, tm, cp, cands)
        if self.portfolio and math.comb(int(el.size), self.n) > _PORTFOLIO_ENUMERATE:
            r = self.program_set(a, tm, cp)  # first: the slowest member of the portfolio
            if r is not None and np.all(a[r].sum(axis=0) >= dlo):
                cands.append(r)
                self.offer_best(t, el, tm, cp, cands)
        for s0 in starts_[1:]:  # this start is feasible: more starts for the factor
            interrupt.check()  # a batch's timeout or cancellation
            r, k = ker.swap_search(a, tm, cp, d, s0, max_rounds, tol)
            counters["swap_rounds"] += k
            if np.all(a[r].sum(axis=0) >= dlo):
                cands.append(r)
                self.offer_best(t, el, tm, cp, cands)
        self.clock.lap("search")
        us = [factor(d, tm[r], cp[r]) for r in cands]
        return cands[int(np.argmax(us))], False

    def search_at(self, t, tmax):
        """The set at a start that passed the screens, by the step its size calls for:
        ``(el, a, tm, cp, rows, exact_u)`` (``el`` the eligible rows of ``nodes``, ``rows``
        rows of ``el``, ``exact_u`` whether the factor is the enumerated optimum), or None
        (the start noted empty or undecided)."""
        avail = self.cap - tmax
        el = np.flatnonzero(np.all(avail >= self.elo[None, :], axis=1))
        a, tm, cp = avail[el], tmax[el], self.cap[el]
        n = self.n
        if self.proofs and proven_by(a, self.d, self.dlo, n, self.proofs):
            # the weights of an earlier proof
            self.counters["lagrange_steps"] = self.counters.get("lagrange_steps", 0) + 1
            self.note_empty(t)
            return None
        if math.comb(int(el.size), n) <= self.enumerate_limit:
            got = self.by_enumeration(t, a, tm, cp)
        elif n * el.size > _LARGE:
            got = self.by_weights(t, el, a, tm, cp)
        else:
            got = self.by_swaps(t, el, a, tm, cp)
        return None if got is None else (el, a, tm, cp) + tuple(got)


def _window_segments(pool: ResourcePool, request: CollectiveRequest) -> int:
    """The segments of the pool's grid that the request's first window meets."""
    grid, t0 = pool._state[0], float(request.earliest_start)
    return int(np.searchsorted(grid, t0 + request.duration) - np.searchsorted(grid, t0))


class _Best:
    """The portfolio's best set at one start (:meth:`_Scan.polish`): ``rows`` (rows of
    ``el``) and its factor ``u``; :meth:`consider` keeps a better admissible set and offers
    it as the incumbent at once."""

    __slots__ = ("scan", "t", "el", "a", "tm", "cp", "rows", "u")

    def __init__(self, scan: _Scan, t, el, a, tm, cp, rows) -> None:
        self.scan, self.t, self.el, self.a, self.tm, self.cp = scan, t, el, a, tm, cp
        self.rows = np.asarray(rows, dtype=np.int64)
        self.u = factor(scan.d, tm[rows], cp[rows])

    def consider(self, r, u=None) -> None:
        """Keep the set ``r`` (factor ``u``, computed when None) if it meets every total and
        raises the factor, and offer it."""
        r = np.asarray(r, dtype=np.int64)
        if not np.all(self.a[r].sum(axis=0) >= self.scan.dlo):
            return
        u = factor(self.scan.d, self.tm[r], self.cp[r]) if u is None else u
        if u > self.u:
            self.rows, self.u = r.copy(), u
            self.scan.offer_rows(self.t, self.scan.nodes[self.el[r]], self.tm[r])


#: The scan's parameters and their defaults, all passed on: a call stopped before any answer
#: reports every parameter it ran with.
_DEFAULTS = {name: p.default for name, p in inspect.signature(scan).parameters.items()
             if p.kind is p.KEYWORD_ONLY}  # fmt: skip


def _public(timed: Callable[..., CoallocationResult]) -> Callable[..., CoallocationResult]:
    """The scan as users call it: the parts in either order (the old one warns, naming the
    caller's line), every parameter passed on, and an answer that the paper's heuristic
    found inside the portfolio (stopped there by the time limit) reported as the scan's."""

    @functools.wraps(timed)
    def run(request: Any, pool: Any, **params: Any) -> CoallocationResult:
        request, pool = demand_first(request, pool, "scan")
        result = timed(request, pool, **{**_DEFAULTS, **params})
        if result.method != "scan":  # the paper's heuristic, stopped inside the portfolio
            result.message += f" (found by {result.method} in the scan's portfolio)"
            result.method = "scan"
        return result

    return run


# The scan with ``time_limit`` (:func:`coalloc._shared.params.with_time_limit`) and the one
# status rule at its exit (:func:`.core.settled`), its signature written once, above; the name
# stays "scan" for Sphinx and numpydoc.
scan = _public(settled(checks.with_time_limit(scan, functools.partial(stopped_result,
                                                                      method="scan"))))  # fmt: skip
