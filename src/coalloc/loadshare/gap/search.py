"""The anytime GAP search: a start, then the resumable tabu search in rounds, with the
Lagrangian relaxations stepped between them.

The start is the rounded LP relaxation when given, else :func:`reduced_cost_greedy` at the
best Lagrangian multipliers (on the costs alone when no subgradient step ran), polished by
:func:`coalloc.loadshare._gapls.shift_descent` (when that start overloads an agent, the
same greedy on the capacity shares is the first incumbent, and under a short limit the
tabu search's start, if it keeps every capacity: :meth:`_Search.fallback`). Under a time
limit, when the rounded LP (or, without the LP, that greedy) overloads an agent, the
greedy is repaired by a short tabu search on the capacity shares and kept as the first
incumbent before the bounds and the search (``_FEASIBLE_FIRST``, ``_REPAIR_NO_LP``). The tabu
search (:mod:`.tabu`) runs in rounds sized from its measured speed to end before the
deadline; with the LP's reduced costs it first runs on the core (:func:`core_costs`), then
on every pair from the core's best, then on every pair afresh (``cycles``: the second
half of the search goes to cycles of a core search afresh and a search on every pair from
its best, in place of the search afresh). It
stops early when the bound proves the best assignment optimal. Two timed-only rules are
module knobs (issue 40): ``_AUTO_CYCLES`` (core cycles when the limit holds
them at the measured speed, optionally beside the search afresh: ``_AUTO_FRESH``) and
``_FRESH_MIN_ITERATIONS``, off (the search afresh only when the time left holds that many
iterations). Since issue 40 (h42gap40) timed calls take two core cycles beside the search
afresh by default (``_AUTO_CYCLES``); since h46gap40 timed calls on instances whose costs
fall as the weights grow (type d) run the tabu search at tenure 3
(``_CORRELATED_TENURE``), and since h57gap with the kernel's memory of the
assignments it visited (``_CORRELATED_MEMO``). Two restart knobs are there, off: restarts from elite
assignments (``_ELITE_RESTART``) and a learned restart weight (``_LEARN_WEIGHT``); and
one exact re-optimisation of the stalled bests' contested sets of two or three agents
(:mod:`.subgap`, ``_SUBGAP``), off.

The search is three modules by phase: this one (the knobs, where the benches and the
tests set them, the rounds, the phases and their order), :mod:`.search_start` (the start:
the greedy, the fallback and its repair, the core's costs) and :mod:`.search_restarts`
(the restarts and path relinking inside a phase); the two read their knobs from here.

Why over 800 lines: about 300 of them are the knobs' record, each knob beside the
measurement that set it (most are off and kept for the benches that compare them), and the
code is already split by phase into the three modules above; the phase loop and the rounds
are one idea.
"""

from __future__ import annotations

import threading
import time
from typing import Callable, List, NamedTuple, Optional, Tuple

import numpy as np

from ..._shared import interrupt
from ..._shared.params import deadline as _deadline
from ..._shared.seeding import kernel_seed
from . import tabu as _tabu
from .lagrangian import RelaxationBounds
from .model import GapCall, objective_of
from .relink import ElitePool
from .search_proof import ProofSteps
from .search_restarts import RestartSteps
from .search_start import (  # noqa: F401
    StartSteps,
    _descent,
    _search_arrays,
    core_costs,
    cost_weight_correlation,
    reduced_cost_greedy,
)
from .subgap import MAX_STATES
from .tabu import _RESTART_STEP, TabuKnobs, TabuState, restart_after

__all__ = [
    "SearchOutcome",
    "LpStart",
    "run_search",
    "reduced_cost_greedy",
    "cost_weight_correlation",
    "core_costs",
    "MAX_ITERATIONS",
    "MAX_CYCLES",
]

#: The most tabu iterations a heuristic run may be asked for (the search runs in rounds
#: that ``time_limit`` stops; without one, this bounds its time).
MAX_ITERATIONS = 10**9
#: Tabu iterations per round without a time limit (rounds resume the search: the answer
#: depends on the iterations only) and the seconds a round aims at under one.
_ROUND_ITERATIONS, _ROUND_SECONDS = 1000, 0.1
#: The core phase: with the LP solved, the search first runs for ``_CORE_SHARE`` of its
#: time (or iterations) on the core, the pairs of the LP's support and those whose reduced
#: cost is at most the ``_CORE_PERCENTILE``-th percentile of the positive reduced costs
#: (every other pair priced far out of reach), from the rounded LP; then on every pair, for
#: half of what is left from the core's best, for the other half afresh from the rounded
#: LP. At equal iterations on Chu-Beasley d (6 instances x 12 seeds) the mean gap fell
#: from 0.391 % (one search on every pair) to 0.314 %; the full search from the core's
#: best alone gave 0.321 % and fell into the core's basin on c20100, the fresh one alone
#: 0.332 % (bench/RESULTS.md, issue 27, fifth run).
_CORE_SHARE, _CORE_PERCENTILE = 0.3, 10.0
#: Path relinking (:mod:`.relink`; Yagiura, Ibaraki & Glover 2006), under a time limit
#: only: the search's time from ``_PR_SHARE`` on (the core's phase up to ``_CORE_SHARE``,
#: the search on every pair from the core's best up to ``_PR_SHARE``) goes to tabu
#: segments of ``max(_PR_MIN, _PR_PER_ITEM n)`` iterations, the first from the rounded LP
#: (or the start) afresh, the next ones from a point half way (a share drawn in
#: ``_PR_WALK``) between two of the ``_PR_POOL`` best distinct assignments found; when
#: the measured speed leaves fewer than ``_PR_FEWEST`` segments, that time goes to the
#: fresh search as before. Off by default (``solve_gap(..., relink=False)``, read from
#: ``call.relink``): at equal time (5 s, three seeds, load 9-13) on Chu-Beasley
#: d10100/d20100 and Yagiura e10100/e20100/e20200 it measured 0.416 % mean of the
#: median gaps against 0.407 % without it (within the seeds' spread;
#: bench/loadshare/ISSUE40.md), and on n >= 400 at that speed it does not fit.
_PR_SHARE, _PR_POOL, _PR_MIN, _PR_PER_ITEM, _PR_FEWEST = 0.5, 6, 1000, 5, 4
_PR_WALK = (0.3, 0.7)
#: Without the LP, when :meth:`_Search.fallback` gives a feasible incumbent, the tabu
#: search starts from it (not from the overloaded multipliers' greedy, whose repair takes
#: the first hundreds of iterations on 80 x 1600: Yagiura c801600 at 0.2-0.4 s, 5-16 %
#: above the best known from the greedy, 4-11 % from the fallback; bench/loadshare/ISSUE40.md).
_FROM_FALLBACK = True
#: ... but only while the time left is at most ``_FALLBACK_HORIZON`` times the seconds the
#: subgradient start took (a speed measured at the call's load): with more time, the
#: search from the greedy ends lower (c801600, load 4-5, median of 5-7 seeds: 0.48 / 0.49
#: % at 1 s, 0.27 / 0.28 % at 2 s, 0.18 / 0.22 % at 4 s, greedy / fallback start, where
#: the subgradient start took about 0.1 s).
_FALLBACK_HORIZON = 15.0
#: The share of the time left that the subgradient start (before the start and the
#: fallback) may take under a limit. At the deadline itself (as before h50gap) it left the
#: start (the multipliers' greedy, its descent, the fallback: 0.1-0.14 s at a load of 5 on
#: Yagiura d801600) to run after the limit: 0.5 s calls ended 0.63-0.71 s.
_BOUNDS_START_SHARE = 0.5
#: The starting greedies (:func:`reduced_cost_greedy`) look at the clock every this many
#: items under a limit (a look costs about what one item does).
_GREEDY_CHECK = 32
#: The fallbacks that run after the limit by design (nothing feasible in time) stop at
#: the limit plus this share of the contract's allowance ``max(0.05, 0.05 T)``.
_LATE_SHARE = 0.5
#: Under a limit the subgradient start's steps come in groups of about this many pairs'
#: worth of work (25 steps at most, 1 at least).
_START_GROUP_PAIRS = 400_000
#: Up to this many pairs the fallbacks after the limit run whole (a millisecond or two:
#: an answer rather than none; orlib's 2 x 4 whose LP took the limit under load).
_LATE_PAIRS = 20_000
#: Core cycles (``solve_gap(..., cycles=K)``, K at most ``MAX_CYCLES``; with the LP
#: solved): the search's time (or iterations) from ``_CYCLE_FROM`` on, where the fresh
#: search on every pair runs without them, goes to K cycles of equal length, each a core
#: phase for ``_CYCLE_CORE`` of it, then the search on every pair from that core phase's
#: best. ``_CYCLE_MODE`` "lp": each core phase starts afresh from the rounded LP (a new
#: trajectory through the core: the tenure draws differ); "best": from the incumbent, on
#: the core plus the incumbent's pairs. Cycle ``c`` cuts its core at the percentile
#: ``_CYCLE_PERCENTILES[c % len]``. Off by default: the 10 s Yagiura profile (the answer's
#: last improvement at about a third of the limit) suggested it; at 10 s it helped type d
#: (six Yagiura d of 900-1600 items: 0.314 -> 0.211 % mean), not c or e; at 1 s it lost
#: Chu-Beasley c20100 (bench/loadshare/ISSUE40.md, core cycles).
_CYCLE_FROM, _CYCLE_CORE, _CYCLE_MODE = 0.5, 0.4, "lp"
_CYCLE_PERCENTILES = (5.0, 20.0)
MAX_CYCLES = 64
#: Timed calls with the LP solved and ``cycles`` not asked for: when the core phase ends,
#: the iterations the rest of the limit holds at the core phase's own speed (its
#: iterations over its seconds), over the cycles' share of what is left, give
#: ``K = min(_AUTO_CYCLES, projected // _AUTO_CYCLE_ITERATIONS)`` cycles (a threshold of
#: 0, the default: ``_AUTO_CYCLES`` always); with K of at least 2 the search goes on as
#: with ``cycles=K``, else as without cycles. ``_AUTO_CYCLES`` 0: off. ``_AUTO_FRESH``:
#: the share of the cycles' time kept, after them, for the search afresh on every pair
#: (the cycles beside the search afresh, not in its place). Untimed calls never take
#: the rule (their answers are unchanged). The default, two cycles beside the search
#: afresh (the core 0-30 %, from its best to 50 %, two cycles to 80 %, afresh to the
#: end), against the three phases, five seeds interleaved, two runs each at load 7-17:
#: the eleven Yagiura 200-400-item instances at 10 s 0.153 -> 0.140 % mean, worst 0.456
#: -> 0.419 % (run 2: see bench/loadshare/ISSUE40.md, h42gap40); Chu-Beasley a-d at 1 s
#: 0.137 -> 0.130 % and 0.137 -> 0.137 %, gap1-12 0 % both.
_AUTO_CYCLES, _AUTO_CYCLE_ITERATIONS, _AUTO_FRESH = 2, 0, 0.4
#: A timed call's search afresh on every pair (the third phase, without cycles or
#: relinking) runs only when the time left holds at least ``_FRESH_MIN_ITERATIONS`` tabu
#: iterations at the speed of the search from the core's best (its iterations over its
#: seconds); else that search goes on to the end. 0: always (untimed calls always).
_FRESH_MIN_ITERATIONS = 0
#: The learned restart weight (issue 40, h46gap40): at every restart the kernel puts the
#: penalty weights back at the first weight ``(sum |c| + 1) / (sum w + 1)``, while on
#: Yagiura d the weights the oscillation settles at are 4-5 times that (0.9 on e;
#: bench/loadshare/ISSUE40.md, h40gap), so that every restart (one in 200-500 iterations)
#: opens with dozens of iterations deep in the overloaded region. With
#: ``_LEARN_WEIGHT`` r > 0, after every round the geometric mean of the weights joins an
#: exponential average (new = (1 - r) old + r sample, on the logarithms) kept over the
#: call, and the state's restart weight (and a new phase's first weight) is that average.
#: Timed calls only (untimed answers unchanged), unless ``_LEARN_UNTIMED`` (the
#: equal-iteration bench). Off: at 15,000 iterations on Chu-Beasley d (three seeds) r = 0.2
#: gave 0.318 % mean against 0.297 % (bench/loadshare/ISSUE40.md, h46gap40).
_LEARN_WEIGHT, _LEARN_UNTIMED = 0.0, False
#: Restarts from elite assignments (issue 40, h46gap40): with ``_ELITE_RESTART`` E > 0,
#: the searches on every pair (not the core's) restart, when the restart rule
#: (:func:`.tabu.restart_after`) fires, from one of the E best distinct feasible
#: assignments the call has found (drawn uniformly from the call's seed; the best among
#: them), not always from the phase's own best: the rounds end where the rule fires and
#: the search, not the kernel, restarts (:meth:`.tabu.TabuState.restart_from`). Timed
#: calls only, unless ``_ELITE_UNTIMED`` (the equal-iteration bench). Off: E = 6 against
#: the default, five seeds interleaved, load 9-15: Chu-Beasley a-d at 1 s 0.132 % mean
#: against 0.126 %, the four worst Yagiura at 10 s 0.255 against 0.243 %
#: (bench/loadshare/ISSUE40.md, h46gap40).
_ELITE_RESTART, _ELITE_UNTIMED = 0, False
#: The tabu tenure of timed calls on instances whose costs fall as the weights grow
#: (issue 40, h46gap40): when the correlation of the minimisation's costs with the weights
#: over every pair (:func:`cost_weight_correlation`) is at most ``_CORRELATED``, the tenure
#: is ``_CORRELATED_TENURE`` (0: the package's, ``tabu._TENURE``). Chu-Beasley and
#: Yagiura type d are at -0.98, type e at -0.57, every other published family (a, b, c,
#: gap1-12) within +-0.2. Untimed calls keep the package's tenure (their answers are
#: unchanged). The timed default is tenure 3 on type d: against tenure 5, five seeds
#: interleaved, load 10-13, Chu-Beasley a-d at 1 s 0.122 -> 0.117 % mean (d 0.396 ->
#: 0.370 %); Yagiura d10400/d20400/d40400 at 10 s 0.231 -> 0.239 % and 0.242 -> 0.220 %
#: in two runs, worst 0.411 -> 0.406 and 0.415 -> 0.382 % (d40400); at equal iterations on
#: Chu-Beasley d 0.321 -> 0.306 % (15,000) and 0.372 -> 0.347 % (5,000). Tenure 3 on every
#: instance lost on Chu-Beasley b (0.028 -> 0.082 % at 1 s) and Yagiura e (e20200 0.170 ->
#: 0.228 % at 10 s), longer tenures lost on d (h40gap): hence the rule
#: (bench/loadshare/ISSUE40.md, h46gap40). Since h57gap's follow-up the threshold is -0.5,
#: so that type e (-0.57) runs the rule too, with the memory (``_CORRELATED_MEMO``), which
#: makes tenure 3 safe from cycling there: against -0.9, five seeds interleaved, load 3-6,
#: Yagiura e05100-e20200 at 1 s 0.188 -> 0.179 % and 0.171 -> 0.152 % mean, e10400/
#: e20400/e40400 at 10 s 0.107 -> 0.102 % and 0.104 -> 0.099 % (worst 0.209 -> 0.204,
#: 0.200 -> 0.206). No a, b, c or gap1-12 file is below -0.18.
_CORRELATED_TENURE, _CORRELATED = 3, -0.5
#: The tabu kernel's memory of visited assignments (:attr:`.tabu.TabuKnobs.memo`) on
#: the same timed calls (type d; issue 40, h57gap): ``_CORRELATED_MEMO`` (0: the package's,
#: ``tabu._MEMO``). At tenure 3 the search on type d returned to an assignment it had
#: visited in 50-83 % of its iterations (d10100, d20100, d20200, 6,000 single iterations
#: from a 0.2 s answer). Untimed calls keep the package's (their answers are unchanged).
#: On (memo 1, the kernel call's assignments): against off, five seeds interleaved, load
#: 5-8, Chu-Beasley d at 1 s 0.339 -> 0.292 %, 0.320 -> 0.311 % and 0.355 -> 0.317 % mean
#: (worst 0.808 -> 0.631, 0.728 -> 0.711, 0.808 -> 0.760); Yagiura d10400/d20400/d40400 at
#: 10 s 0.240 -> 0.227 % and 0.244 -> 0.231 % (worst d40400 0.439 -> 0.423, 0.439 ->
#: 0.419). See bench/loadshare/ISSUE40.md, h57gap.
_CORRELATED_MEMO = 1
#: The restart rule on the same timed calls (type d, e; issue 40): ``_CORRELATED_RESTART``,
#: its first threshold (:func:`.tabu.restart_after`'s ``base``), ``_CORRELATED_RESTART_DIV``
#: its growth's divisor (``div``; -1: no growth); 0: the package's. Both off: a later first
#: threshold lost at 1 s (h57gap, follow-up), no growth was within the spread at 1 s and
#: 10 s (h58gap; bench/loadshare/ISSUE40.md).
_CORRELATED_RESTART, _CORRELATED_RESTART_DIV = 0, 0
#: The core phase's share of a timed call's search on the same instances (type d; issue
#: 40, h49gap): ``_CORRELATED_CORE_SHARE`` (0: ``_CORE_SHARE``, as every other instance).
#: Untimed calls keep ``_CORE_SHARE`` (their answers are unchanged). See
#: bench/loadshare/ISSUE40.md, h49gap.
_CORRELATED_CORE_SHARE = 0.0
#: The feasibility-first start (issue 36 item 4, h47gapfirst): a timed call whose start
#: (the rounded LP) overloads an agent first runs :meth:`_Search.fallback`, whose capacity
#: shares' greedy is repaired by at most ``_REPAIR_ITERATIONS`` tabu iterations on the
#: capacity shares ``w_ij / b_i`` (its own draws: the search's are unchanged), before the
#: subgradient start and the search; a feasible result is the first incumbent. On the
#: contract audit's heavy 10 x 80 the rounded LP needs about 670 tabu iterations (20-35
#: ms) to a first feasible assignment, the greedy about 40 on the shares (under 1 ms).
#: Untimed calls never take it (their answers are unchanged). False: off.
_FEASIBLE_FIRST, _REPAIR_ITERATIONS = True, 500
#: The early count (issue 36's contract, h51gap): under a time limit, every phase of the
#: search but the last lasts at least its share of ``_EARLY_WORK // n`` tabu iterations
#: (the share it has of an untimed call's iterations: the core phase 0.3 of them, ...),
#: whatever its share of the clock says; only the deadline cuts the count. Where the clock
#: alone ended the phases (before h51gap), a short limit's answer depended on the load:
#: the contract audit's heavy 10 x 80 at 0.05 s gave 1911-1948 for one seed, and the
#: default (the same search, CP-SAT not started) lost to ``heuristic`` by the race. With
#: the count, two calls of a seed reach the same state at the first phase's count under
#: any load (the early answer), and a call whose limit the count outlasts walks one
#: trajectory, cut by the deadline: its answer can only improve with the iterations
#: done. Limits whose clock shares hold more iterations than the count (Chu-Beasley at
#: 1 s) run as before; untimed calls never take it. 0: off (the clock alone).
#: Measured: bench/loadshare/ISSUE40.md, h51gap.
_EARLY_WORK = 150_000
#: An untimed call whose tabu iterations end before any feasible assignment answers with
#: the fallback (:meth:`_Search.fallback`: the capacity shares' greedy, repaired by at
#: most ``_REPAIR_ITERATIONS`` tabu iterations on the shares) when that keeps every
#: capacity, not ``no_solution``. Only calls that found nothing change. Before, on six
#: heavy-agent instances (``bench.loadshare.heavy_agents``) an explicit ``iterations=300``
#: ended ``no_solution`` on 5 of 6 (the per-agent weights take longer to settle). False:
#: off.
_UNTIMED_FALLBACK = True
#: The schedule's horizon, seconds (the contract: a limit is a cap, not a target): a
#: timed call lays its phases out over at most ``_HORIZON`` seconds of search, as a call
#: with that limit would, and its last phase runs on to the deadline. Limits whose search
#: has at most ``_HORIZON`` seconds (every limit of 10 s or less: every measured figure)
#: run exactly as before. Before, the phases were shares of the whole limit, so that a
#: longer limit delayed what the search proves: on the contract suite's ``type_d`` the
#: untimed call proved its optimum at 0.22 s, ``time_limit=30`` at 9.0 s and 100 s at
#: 30 s, the core phase (0.3 of the limit) never reaching it
#: (bench/loadshare/long_limits.py). None: off (shares of the whole limit).
_HORIZON: Optional[float] = 10.0
#: A timed call's phases but the last end early (their time passing to the next phase)
#: when the call's best has not improved in ``_STALL`` times the phase's share of an
#: untimed call's iterations (``max(3000, 15 n)``: 18,000 for the core phase of a 200-item
#: call) once the early count (``_EARLY_WORK``) is done: a count, not the clock. Before, the
#: core phase of the contract suite's ``type_d`` (4 x 12) worked the whole 0.3 of the
#: limit without reaching the optimum that the next phase finds in one round: proven at
#: 0.9 s at ``time_limit=3``, 9.0 s at 30, 30 s at 100; now at 0.15-0.19 s whatever the
#: limit. Measured alternated, load 0.3-2 (bench/loadshare/ISSUE40.md, stop 61), off / 5 /
#: 20: Chu-Beasley a-d at 1 s, three seeds, mean of the median gaps 0.0948 / 0.0950 /
#: 0.0993 %; eight Yagiura 400-item instances at 10 s, two seeds, off / 5 0.139 / 0.134 %,
#: off / 20 0.139 / 0.139 %; ten heavy-agent instances at 2 s 0.154 / 0.151 / 0.155 %;
#: Chu-Beasley d10100, d10200, d20100 at 30 s, two seeds, 0.299 / 0.313 / 0.252 %. Untimed
#: calls never take it. 0: off (the clock alone).
_STALL = 20.0
#: A reduced-cost kick at restarts (issue 40, h51gap; type d at 1 s): with ``_KICK`` k > 0,
#: the searches on every pair, when the restart rule fires, restart from their best with k
#: items moved to their second-best agent by reduced cost, drawn among the
#: ``_KICK_POOL`` k items for which that agent is nearest (:meth:`_Search.kick_restart`).
#: Timed calls only, unless ``_KICK_UNTIMED``. Off: see bench/loadshare/ISSUE40.md, h51gap.
_KICK, _KICK_POOL, _KICK_UNTIMED = 0, 3, False
#: The same repair in the fallback of a timed call without the LP (a limit too short for
#: it), when the capacity shares' greedy overloads an agent: the incumbent only (the
#: search starts from the multipliers' greedy as before; from the repaired fallback it
#: ended at the fallback's 2087 in some calls on heavy 10 x 80 at 0.04 s). False: off.
_REPAIR_NO_LP = True
#: Exact re-optimisation of agent sets (issue 40, h48gaplns; :mod:`.subgap`): with
#: ``_SUBGAP`` k (2 or 3) > 0, a timed call's searches on every pair (not the core's), once
#: their own best (feasible) has stood for the restart rule's iterations, free the items
#: of the k agents of the most contested sets of that best and reassign them exactly, each
#: call until ``_SUBGAP_CALL`` of the limit has passed, at most ``_SUBGAP_SHARE`` of the
#: limit in all; an improvement becomes the search's best and current assignment (its
#: weights at the restart weight) and, if better, the incumbent. Each best is
#: re-optimised once. Untimed calls never take it (their answers are unchanged), unless
#: ``_SUBGAP_UNTIMED`` (every set once, the equal-iteration bench). Off: see
#: bench/loadshare/ISSUE40.md, h48gaplns.
_SUBGAP, _SUBGAP_CALL, _SUBGAP_SHARE, _SUBGAP_UNTIMED = 0, 0.05, 0.2, False
#: ... its state budget a layer (:data:`.subgap.MAX_STATES`), and the fewest agents of an
#: instance for sets of three (below it, with ``_SUBGAP`` 3, pairs: on 5 agents of
#: capacity 800-1,600 a set of three costs 0.1-0.3 s).
_SUBGAP_STATES, _SUBGAP_TRIPLES_FROM = MAX_STATES, 0
#: ... and the subgradient steps refining the multipliers per set (0: the search's as they
#: are; with the compiled programme, h50gap, the 30 steps were two thirds of a set's time).
_SUBGAP_STEPS = 30
#: The exact programme over every agent's load on small instances (:mod:`.search_proof`):
#: at most this many agent-item pairs (0: off), states a layer, share of a timed call's
#: limit for all its tries (0.25 of the time left a try lost answers at 0.05 s under
#: load: stop 62), and tries a call. On: the untimed heuristic ended ``feasible`` at the
#: optimum, or ``no_solution`` on instances without an assignment, on small instances the
#: programme decides in under a millisecond (bench/loadshare/ISSUE40.md, stop 62).
_PROOF_PAIRS, _PROOF_STATES, _PROOF_SHARE, _PROOF_TRIES = 400, 20_000, 0.1, 3
#: ... its states pruned by the knapsack bound (each agent a 0-1 knapsack over the items
#: left at its residual capacity, item multipliers from the Lagrangian reduced costs and
#: this many subgradient steps; :func:`.subgap.knapsack_bound`) in place of the Lagrangian
#: bound; None: the Lagrangian bound. The untimed heuristic decided 132 -> 160 of the
#: small-proof bench's 170 instances (type d from 5 x 15 on; bench/loadshare/ISSUE40.md,
#: h63prog).
_PROOF_KNAP: Optional[int] = 30
#: ... and the words of its load vectors' key: 1, 62 bits; 2, two words of 62 bits
#: (h63prog: Chu-Beasley type d 10 x 20 needs 64 bits).
_PROOF_KEY_WORDS = 2

#: A trajectory row: (seconds from the call's start, objective or None, bound or None).
Row = Tuple[float, Optional[float], Optional[float]]


class LpStart(NamedTuple):
    """What the LP relaxation gives the search (every field None: not solved).

    Attributes
    ----------
    x : numpy.ndarray or None
        Its (m, n) solution: the rounded start.
    bound : float or None
        Its bound in the caller's sense, when wanted (the trajectory, the early stop).
    reduced_costs : numpy.ndarray or None
        Its reduced costs (:func:`.bounds.lp_relaxation`), for the core phase
        (:func:`core_costs`).
    """

    x: Optional[np.ndarray] = None
    bound: Optional[float] = None
    reduced_costs: Optional[np.ndarray] = None


class SearchOutcome(NamedTuple):
    """What :func:`run_search` found: the best assignment (``-1``: unassigned), whether it
    is feasible, the tabu and subgradient iterations done, the Lagrangian bound (None
    when not computed), the trajectory rows ``(seconds from t0, objective or None,
    bound or None)``, the search's seconds, the best bound (LP or Lagrangian), the
    knapsack steps, the tabu iterations of the core phase (0: none), whether the
    deadline ended the search (not its iterations, a proof or ``halt``), the tabu
    segments the path relinking ran (0: none), the core cycles begun (0: none), and the agent
    sets re-optimised exactly and those improved (``_SUBGAP``; 0: none); the optimum's value
    when the exact programme proved it, and whether it proved that no assignment keeps every
    capacity (``_PROOF_PAIRS``)."""

    assign: np.ndarray
    feasible: bool
    iterations: int
    lagrangian: Optional[float]
    subgradient_iterations: int
    trajectory: list
    search_seconds: float
    bound: Optional[float] = None
    knapsack_iterations: int = 0
    core_iterations: int = 0
    stopped: bool = False
    relink_segments: int = 0
    core_cycles: int = 0
    subgap_sets: int = 0
    subgap_improved: int = 0
    exact_bound: Optional[float] = None
    proved_none: bool = False


def untimed_iterations(n: int) -> int:
    """An untimed call's tabu iterations by default, ``max(3000, 15 n)`` for ``n`` items
    (the timed stall counts in them too: ``_STALL``)."""
    return max(3000, 15 * n)


def _cycle_phases(cost: np.ndarray, cycles: int, fresh: float = 0.0) -> list:
    """The phases after the core phase with ``cycles`` core cycles: the search on every
    pair from the core's best up to ``_CYCLE_FROM``, then the cycles of equal length
    (``fresh`` > 0: that share of their time, at the end, to the search afresh on every
    pair instead)."""
    phases = [(cost, _CYCLE_FROM, True)]
    end = 1.0 - fresh * (1.0 - _CYCLE_FROM)
    span = (end - _CYCLE_FROM) / cycles
    for c in range(cycles):
        at = _CYCLE_FROM + c * span
        phases += [("cycle-core", at + _CYCLE_CORE * span, False),
                   ("cycle-full", end if c == cycles - 1 else at + span, False)]
    if fresh > 0:
        phases.append((cost, 1.0, False))
    return phases


class _Search(StartSteps, RestartSteps, ProofSteps):
    """One run of the heuristic: its data, its clock and its incumbent, named.

    The state a round leaves for the next (besides the tabu state of the phase at hand):
    ``done`` (tabu iterations in all), ``feasible`` / ``best_obj`` / ``incumbent`` (the
    best assignment on the true costs), ``proven`` (the bound met it), the bounds
    (:class:`RelaxationBounds`) and the trajectory."""

    def __init__(self, call: GapCall, lp_bound: Optional[float],
                 on_round: Optional[Callable[[np.ndarray, bool], None]],
                 halt: Optional[threading.Event],
                 on_bound: Optional[Callable[[Optional[float]], None]] = None) -> None:  # fmt: skip
        inst, sense, assign_all = call.instance, call.sense, call.assign_all
        self.t0 = call.t0
        self.inst, self.sense, self.assign_all, self.seed = inst, sense, assign_all, call.seed
        self.sign = 1.0 if sense == "min" else -1.0
        # the one rule: the limit counts from the call
        self.deadline = _deadline(call.limit, call.t0)
        # where the fallbacks after the limit stop (see _LATE_SHARE)
        self.late = (None if self.deadline is None else
                     self.deadline + _LATE_SHARE * max(0.05, 0.05 * float(call.limit)))
        self.on_round, self.halt, self.on_bound = on_round, halt, on_bound
        self.cost, self.weight, self.cap = _search_arrays(inst, sense, assign_all)
        self.m_all, self.n = self.cost.shape[0], inst.n
        self.trajectory: List[Row] = []
        self.bounds = RelaxationBounds(self.cost, self.weight, self.cap, sense,
                                       inst.integral_cost, lp_bound)  # fmt: skip
        self.done = 0
        self.feasible = False
        self.best_obj: Optional[float] = None
        self.incumbent = np.zeros(0, dtype=np.int64)
        self.proven = False
        self.t_search = 0.0
        self.a0 = 0.0  # the first penalty weight (set by run)
        self.rate: Optional[float] = None  # tabu iterations per second, the last measured
        self.pool = ElitePool(_PR_POOL)  # the best distinct assignments (search costs)
        self.relinks = 0  # path-relinking segments run
        self.relink_on = bool(call.relink)  # path relinking asked for (solve_gap's relink)
        self.cycles = int(call.cycles)  # core cycles asked for (solve_gap's cycles)
        self.cycles_run = 0
        self.core_share = _CORE_SHARE  # the core phase's share (``_CORRELATED_CORE_SHARE``)
        self.restart_base = 0  # the restart rule's first threshold (``_CORRELATED_RESTART``)
        self.restart_div = 0  # ... and its growth's divisor (``_CORRELATED_RESTART_DIV``)
        self.repair_iterations = 0  # the feasibility-first start's tabu iterations
        self.repaired = False  # whether the fallback's greedy needed the repair
        # the learned restart weight's logarithm (None: none yet; see _LEARN_WEIGHT)
        self.log_w: Optional[float] = None
        self.learn_rate = _LEARN_WEIGHT if (self.deadline is not None or _LEARN_UNTIMED) else 0.0
        # restarts from elite assignments (see _ELITE_RESTART): the pool and its draws
        elite = _ELITE_RESTART if (self.deadline is not None or _ELITE_UNTIMED) else 0
        self.elite = ElitePool(elite) if elite > 0 else None
        self.elite_draw = np.random.default_rng(kernel_seed(call.seed) ^ 0x5EED)
        # exact re-optimisation of agent sets (see _SUBGAP): k, the seconds it may take,
        # its draws, the bests already re-optimised, its counts
        self.subgap_k = _SUBGAP if (self.deadline is not None or _SUBGAP_UNTIMED) else 0
        if self.subgap_k == 3 and inst.m < _SUBGAP_TRIPLES_FROM:
            self.subgap_k = 2
        self.subgap_left = (_SUBGAP_SHARE * call.limit if self.deadline is not None
                            else None)  # fmt: skip
        self.subgap_draw = np.random.default_rng(kernel_seed(call.seed) ^ 0x5B6A)
        self.subgap_seen: set = set()
        self.subgap_mark: Tuple[bytes, int] = (b"", 0)
        self.subgap_sets = self.subgap_improved = 0
        self.t_sub = self.t_knap = 0.0  # the last bound rounds' seconds (fits)
        # the reduced-cost kick at restarts (see _KICK): items moved, its draws, the LP's
        # reduced costs (set by run), the kicks made
        self.kick = _KICK if (self.deadline is not None or _KICK_UNTIMED) else 0
        self.kick_draw = np.random.default_rng(kernel_seed(call.seed) ^ 0x41C4)
        self.rc: Optional[np.ndarray] = None
        self.kicks = 0
        # the exact programme over every agent's load on small instances (see _PROOF_PAIRS)
        self.proof_setup(_PROOF_PAIRS, _PROOF_TRIES,
                         None if self.deadline is None else _PROOF_SHARE * call.limit,
                         _PROOF_KEY_WORDS)

    # the clock
    def now(self) -> float:
        return time.perf_counter() - self.t0

    def halted(self) -> bool:
        return self.halt is not None and self.halt.is_set()

    def out_of_time(self) -> bool:
        if self.halted():
            return True
        return self.deadline is not None and time.perf_counter() >= self.deadline

    def target(self) -> float:
        """The subgradient steps' target: the best objective found (the minimisation's)."""
        return self.sign * self.best_obj if self.feasible else -1e300

    def note_bound(self, before: Optional[float]) -> None:
        if self.bounds.best() != before:
            self.trajectory.append((self.now(), self.best_obj, self.bounds.best()))

    # the steps
    def take(self, state: TabuState) -> None:
        """The kernel's best, judged on the true costs, into the incumbent."""
        if state.feasible:
            obj = objective_of(self.inst, state.best, self.assign_all)
            better = self.best_obj is not None and (
                obj < self.best_obj if self.sense == "min" else obj > self.best_obj)  # fmt: skip
            if not self.feasible or better:
                self.feasible, self.best_obj, self.incumbent = True, obj, state.best.copy()
                self.trajectory.append((self.now(), obj, self.bounds.best()))
        elif not self.feasible:  # none feasible yet: the least excess
            self.incumbent = state.best.copy()

    def offer(self) -> None:
        if self.on_bound is not None:  # the best bound first (the hand-off reads both)
            self.on_bound(self.bounds.best())
        if self.on_round is not None:
            self.on_round(self.incumbent, self.feasible)

    def fits(self, seconds: float) -> bool:
        """Whether a step predicted to take ``seconds`` (wall, at the load measured) may
        start: untimed always (unless halted); timed when twice its prediction is left
        before the deadline (a knapsack round started just before it ran 0.14-0.18 s past
        it at a load of 9)."""
        if self.halted():
            return False
        return self.deadline is None or self.deadline - time.perf_counter() > 2.0 * seconds

    def bound_steps(self) -> None:
        """A few subgradient and knapsack-Lagrangian steps between two rounds."""
        b = self.bounds
        if b.subgradient_due() and self.fits(self.t_sub):
            before, t1 = b.best(), time.perf_counter()
            b.subgradient_round(self.target())
            self.t_sub = time.perf_counter() - t1
            self.note_bound(before)
        due = b.knapsack_due(self.deadline is not None, time.perf_counter() - self.t_search)
        if due and self.fits(self.t_knap):
            before, t1 = b.best(), time.perf_counter()
            b.knapsack_round(self.target())
            self.t_knap = time.perf_counter() - t1
            self.note_bound(before)

    def round_size(self, until: Optional[float], cap_it: int, rate: Optional[float]) -> int:
        """The next round's iterations (0: the time is up), within one restart step."""
        done = self.done
        if until is None:
            k = min(_ROUND_ITERATIONS, cap_it - done)
        else:
            left = until - time.perf_counter()
            if left <= 0:
                return 0
            k = 20 if rate is None else max(1, int(rate * min(_ROUND_SECONDS, 0.5 * left)))
            k = min(k, cap_it - done)
        return min(k, _RESTART_STEP - done % _RESTART_STEP)  # one restart rule a round

    def phase(self, phase_cost: np.ndarray, start: np.ndarray, until: Optional[float],
              cap_it: int, from_best: bool, knobs: TabuKnobs, rng: np.ndarray,
              resume: Optional[TabuState] = None, floor_it: int = 0,
              stall_it: int = 0) -> TabuState:  # fmt: skip
        """A fresh tabu search on ``phase_cost`` from ``start`` (from the incumbent when
        ``from_best`` and one is feasible), in rounds, until ``until`` (a clock value) or
        ``cap_it`` iterations in all; its best feasible assignments (judged on the true
        costs) update the incumbent. Returns the search's state (``resume``: that state
        goes on, ``start`` and ``from_best`` unused). ``floor_it``: under a limit, the phase
        goes on to that many iterations in all (``_EARLY_WORK``) whatever ``until`` says,
        only the deadline stopping it."""
        cost, weight, cap = phase_cost, self.weight, self.cap
        rate = self.rate if resume is not None else None  # tabu iterations per second
        if resume is not None:
            state = resume
        else:
            state = TabuState.fresh(self.incumbent if from_best and self.feasible else start,
                                    self.m_all, rng)  # fmt: skip
            # set the state up (feasible or not: the start's excess); one agent: nothing
            state.run(cost, weight, cap, 0, knobs)
            # the weights of the true costs (the core's far costs would inflate them)
            state.first_weight = self.a0 if self.log_w is None else float(np.exp(self.log_w))
            self.take(state)
            self.offer()
        seen_obj, seen_at = self.best_obj, self.done
        while self.done < cap_it and self.n and self.m_all > 1:
            if self.halted():
                break
            counted = self.done < floor_it  # the early count: only the deadline stops it
            end_at = self.deadline if counted else until
            k = self.round_size(end_at, min(cap_it, floor_it) if counted else cap_it, rate)
            if k <= 0:
                break
            round_obj = self.best_obj
            knobs.restart = restart_after(self.n, self.done, self.restart_base, self.restart_div)
            # the candidate list by reduced costs: the multipliers as they are now (finite)
            lam = self.bounds.best_lam
            lagr = knobs.cands < 0 and _tabu._LAG_CANDS and bool(np.isfinite(lam).all())
            knobs.mult = lam if lagr else None
            elite = (self.elite is not None or self.kick > 0) and cost is self.cost
            if elite:  # the round ends where the rule fires: the search restarts
                k = max(1, min(k, knobs.restart - state.since_best))
                threshold, knobs.restart = knobs.restart, knobs.restart + 1
            t1 = time.perf_counter()
            got = state.run(cost, weight, cap, k, knobs, end_at)
            spent = time.perf_counter() - t1
            self.done += got
            if got:
                rate = got / max(spent, 1e-6)
                self.rate = rate
                if self.learn_rate > 0:
                    self.learn(state)
            self.take(state)
            if elite and self.kick > 0:
                self.kick_restart(state, threshold)
            elif elite:
                self.elite_restart(state, threshold)
            if self.subgap_k and cost is self.cost:
                key = state.best.tobytes()  # the state's best, and since when it stands
                if key != self.subgap_mark[0]:
                    self.subgap_mark = (key, self.done)
                elif self.done - self.subgap_mark[1] >= knobs.restart:
                    self.subgap(state)
            self.offer()
            self.bound_steps()
            b = self.bounds.best()
            if self.feasible and b is not None and (
                    b >= self.best_obj if self.sense == "min" else b <= self.best_obj):  # fmt: skip
                self.proven = True  # proven optimal
                break
            if self.proof_due(round_obj):  # a small instance: the exact programme
                self.exact_proof(_PROOF_STATES, _PROOF_KNAP)
                if self.proven:
                    break
            if until is not None and time.perf_counter() >= until and self.done >= floor_it:
                break
            if stall_it and self.done >= floor_it:
                if self.best_obj != seen_obj:
                    seen_obj, seen_at = self.best_obj, self.done
                elif self.done - seen_at >= stall_it:
                    break  # the phase stalled: the next one
            interrupt.check()  # a batch's timeout or cancellation, between two rounds
        return state

    def auto_cycles(self, rate: float) -> int:
        """The time-aware rule's K (0: no cycles): the cycles' share of the time left
        (from ``_CYCLE_FROM`` on, of what follows the core phase) at ``rate`` (tabu
        iterations per second), in cycles of at least ``_AUTO_CYCLE_ITERATIONS``
        iterations, at most ``_AUTO_CYCLES``; fewer than 2 give 0."""
        if self.deadline is None or rate <= 0:
            return 0
        if _AUTO_CYCLE_ITERATIONS <= 0:
            return _AUTO_CYCLES if _AUTO_CYCLES >= 2 else 0
        left = max(0.0, self.deadline - time.perf_counter())
        share = (1.0 - _CYCLE_FROM) / (1.0 - self.core_share) * (1.0 - _AUTO_FRESH)
        k = min(_AUTO_CYCLES, int(rate * left * share // _AUTO_CYCLE_ITERATIONS))
        return k if k >= 2 else 0

    def fresh_fits(self, done_before: int, t_before: float) -> bool:
        """Whether the time left holds ``_FRESH_MIN_ITERATIONS`` tabu iterations at the
        speed of the search since ``t_before`` (``done_before`` iterations then)."""
        now = time.perf_counter()
        rate = (self.done - done_before) / max(now - t_before, 1e-6)
        return rate * max(0.0, self.deadline - now) >= _FRESH_MIN_ITERATIONS

    def run(self, iterations: Optional[int], x_lp: Optional[np.ndarray],
            rc: Optional[np.ndarray]) -> SearchOutcome:  # fmt: skip
        """The bounds' first steps, the start, the phases; the outcome."""
        n, deadline = self.n, self.deadline
        self.rc = rc if rc is not None and rc.shape == self.cost.shape else None
        if deadline is not None and _FEASIBLE_FIRST and x_lp is not None and n:
            # the feasibility-first start: a feasible incumbent before the bounds and the
            # search when the rounded LP overloads an agent (timed calls only)
            self.fallback(self.start(x_lp), repair=True)
        t_b = time.perf_counter()
        # under a limit, the subgradient start stops at a share of the time left, so that
        # the start and the fallback after it (no answer before them) end by the deadline
        b_until = None if deadline is None else t_b + _BOUNDS_START_SHARE * (deadline - t_b)
        # (timed: groups of steps a few ms each, _START_GROUP_PAIRS; 25 steps on Yagiura
        # d801600 took 0.07-0.14 s at a load of 8, past a 0.05 s limit)
        group = 25 if deadline is None else max(1, min(25, _START_GROUP_PAIRS // max(
            self.m_all * n, 1)))  # fmt: skip
        self.bounds.start(lambda: self.out_of_time() or (
            b_until is not None and time.perf_counter() >= b_until), group)  # fmt: skip
        t_b = time.perf_counter() - t_b  # the subgradient start: a speed measured here
        self.trajectory.append((self.now(), None, self.bounds.best()))
        start = self.start(x_lp)
        if iterations is None:
            iterations = untimed_iterations(n) if deadline is None else MAX_ITERATIONS
        rng = np.array([kernel_seed(self.seed)], dtype=np.uint64)
        if not self.feasible:  # (the feasibility-first start's incumbent is kept)
            self.incumbent = np.ascontiguousarray(start, dtype=np.int64)  # the best so far
        from_fallback = False
        if x_lp is None:  # no LP: a feasible incumbent from the start, when one is cheap
            from_fallback = (
                self.fallback(start, repair=deadline is not None and _REPAIR_NO_LP)
                and not self.repaired  # a repaired fallback: the incumbent, not the start
                and _FROM_FALLBACK
                and (deadline is None or deadline - time.perf_counter() <= _FALLBACK_HORIZON * t_b)
            )
        elif deadline is not None and not self.feasible and self.out_of_time():
            # the LP start took the whole limit (under load: orlib-single 2 x 4 at 0.05 s, its
            # LP 34 ms median at a load of 9): the fallback's answer rather than none
            self.fallback(start, late=True)
        self.offer()  # the start in hand: a caller may start its solver beside the search
        knobs = TabuKnobs.default(n, self.weight[: self.inst.m])  # (_SCALED_FROM)
        m = self.inst.m
        correlated = (deadline is not None
                      and (_CORRELATED_TENURE > 0 or _CORRELATED_CORE_SHARE > 0
                           or _CORRELATED_MEMO > 0 or _CORRELATED_RESTART > 0
                           or _CORRELATED_RESTART_DIV)
                      and cost_weight_correlation(self.cost[:m], self.weight[:m])
                      <= _CORRELATED)  # fmt: skip
        if correlated and _CORRELATED_TENURE > 0:
            knobs.tenure = _CORRELATED_TENURE
        if correlated and _CORRELATED_MEMO > 0:
            knobs.memo = _CORRELATED_MEMO
        if correlated:  # (0: the package's rule)
            self.restart_base, self.restart_div = _CORRELATED_RESTART, _CORRELATED_RESTART_DIV
        if correlated and _CORRELATED_CORE_SHARE > 0:
            self.core_share = _CORRELATED_CORE_SHARE
        core_share = self.core_share
        # the first penalty weight, as the kernel sets it
        self.a0 = (float(np.abs(self.cost).sum()) + 1.0) / (float(self.weight.sum()) + 1.0)
        self.t_search = time.perf_counter()
        core = (core_costs(self.cost, x_lp, rc, self.assign_all, self.inst.m)
                if n and self.m_all > 1 else None)  # fmt: skip
        # (costs, end as a share of the search's time or iterations, start from the incumbent)
        phases = [(self.cost, 1.0, from_fallback)]
        if core is not None:
            phases = [(core, core_share, False),
                      (self.cost, core_share + 0.5 * (1.0 - core_share), True),
                      (self.cost, 1.0, False)]  # fmt: skip
        cycles = self.cycles
        if core is not None and cycles > 0:  # the fresh search's time to core cycles
            phases = phases[:1] + _cycle_phases(self.cost, cycles)
        relinking = (self.relink_on and deadline is not None and n > 0 and self.m_all > 1
                     and not cycles)  # fmt: skip
        auto = (_AUTO_CYCLES >= 2 and core is not None and not cycles and not relinking
                and deadline is not None)  # fmt: skip
        if relinking and core is None:  # the search, then path relinking or the search on
            phases = [(self.cost, _PR_SHARE, False), (None, 1.0, False)]
        core_done = k1_done = 0
        k1_t = 0.0
        # where the schedule's shares end: the deadline, or the horizon (_HORIZON)
        span_end = (deadline if deadline is None or _HORIZON is None
                    else min(deadline, self.t_search + _HORIZON))  # fmt: skip
        early = _EARLY_WORK // max(n, 1)  # the early count's iterations (_EARLY_WORK)
        # the phase of the search afresh on every pair that the time may skip (-1: none)
        timed_fresh = core is not None and not cycles and not relinking and deadline is not None
        fresh_k = 2 if timed_fresh else -1
        state: Optional[TabuState] = None
        for k, (phase_cost, end, from_best) in enumerate(phases):
            if self.proven or self.halted():
                break
            t_s = self.t_search
            if relinking and core is not None and k == 1 and self.relink_fits(
                    (1.0 - _PR_SHARE) * (deadline - t_s)):  # fmt: skip
                # the fresh search's time to path relinking (the speed measured on the core)
                phase_cost, end, from_best = self.cost, _PR_SHARE, True
                phases[2] = (None, 1.0, False)
            last = end >= 1.0
            until = deadline if last or deadline is None else t_s + end * (span_end - t_s)
            cap_it = iterations if last or deadline is not None else int(end * iterations)
            # the early count (timed, every phase but the last): at least this many in all
            floor_it = 0 if last or deadline is None else int(end * early)
            resume = None
            phase_start = start
            if isinstance(phase_cost, str):  # a core cycle's phase
                self.cycles_run += phase_cost == "cycle-core"
                if phase_cost == "cycle-full":  # from the core phase's best
                    phase_cost = self.cost
                    if state is not None and state.feasible:
                        phase_start = state.best.copy()
                    else:
                        from_best = True
                else:
                    pct = _CYCLE_PERCENTILES[(self.cycles_run - 1) % len(_CYCLE_PERCENTILES)]
                    keep = None
                    if _CYCLE_MODE == "best" and self.feasible:
                        keep, from_best = self.incumbent, True
                    phase_cost = (core if keep is None and pct == _CORE_PERCENTILE else
                                  core_costs(self.cost, x_lp, rc, self.assign_all, self.inst.m,
                                             keep=keep, percentile=pct))  # fmt: skip
                if phase_cost is None:
                    phase_cost = self.cost
            if (k == fresh_k and _FRESH_MIN_ITERATIONS > 0 and state is not None
                    and not self.fresh_fits(k1_done, k1_t)):  # fmt: skip
                resume = state  # too little time to start afresh: the search goes on
            if k == 1:  # the search from the core's best: its speed, for the rule above
                k1_done, k1_t = self.done, time.perf_counter()
            if phase_cost is None:  # relink, else the fresh search (no core: the search on)
                if self.relink(start, until, knobs, rng):
                    continue
                phase_cost = self.cost
                resume = state if core is None else None
            if state is None and resume is None and deadline is not None and self.out_of_time():
                # out of time before the first phase: the start judged without the kernel's
                # set-up (0.02-0.03 s on Yagiura d801600 under load, after the limit)
                self.judge(start)
                break
            stall_it = 0
            if _STALL > 0 and not last and deadline is not None:
                prev = phases[k - 1][1] if k else 0.0
                stall_it = int(_STALL * (end - prev) * untimed_iterations(n))
            state = self.phase(phase_cost, phase_start, until, cap_it, from_best, knobs, rng,
                               resume, floor_it, stall_it)  # fmt: skip
            if relinking and phase_cost is self.cost:
                self.offer_pool(state)
            if k == 0 and phase_cost is core:
                core_done = self.done
                if auto:  # the time-aware rule: the cycles when the limit holds them
                    k_auto = self.auto_cycles(core_done / max(time.perf_counter() - t_s, 1e-6))
                    if k_auto:
                        phases[1:] = _cycle_phases(self.cost, k_auto, _AUTO_FRESH)
                        fresh_k = -1
        if deadline is None and not self.proven and not self.halted() and self.proof_open():
            # an untimed search that ended by its iterations before its best stood a round
            self.exact_proof(_PROOF_STATES, _PROOF_KNAP)
        if (deadline is not None and n and not self.feasible and not self.halted()
                and not self.proof_none):  # fmt: skip
            # the limit ended the search before any feasible assignment (a short limit under
            # load): the fallback's, when it keeps every capacity, rather than none
            self.fallback(self.incumbent, late=True)
        elif (deadline is None and _UNTIMED_FALLBACK and n and not self.feasible
              and not self.halted() and not self.proof_none):  # fmt: skip
            # an untimed call whose iterations ended before any feasible assignment: the
            # capacity shares' greedy, repaired, when it keeps every capacity
            self.fallback(self.incumbent, repair=True)
        out = self.incumbent.copy()
        if not self.assign_all:
            out[out == self.inst.m] = -1
        feasible = self.feasible or not n
        stopped = bool(deadline is not None and not self.proven and not self.halted()
                       and time.perf_counter() >= deadline)  # fmt: skip
        b = self.bounds
        return SearchOutcome(
            assign=out,
            feasible=feasible,
            iterations=self.done,
            lagrangian=b.lagrangian,
            subgradient_iterations=b.subgradient_iterations,
            trajectory=self.trajectory,
            search_seconds=time.perf_counter() - self.t_search,
            bound=b.best(),
            knapsack_iterations=b.knapsack_iterations,
            core_iterations=core_done,
            stopped=stopped,
            relink_segments=self.relinks,
            core_cycles=self.cycles_run,
            subgap_sets=self.subgap_sets,
            subgap_improved=self.subgap_improved,
            exact_bound=b.exact,
            proved_none=self.proof_none,
        )


def run_search(call: GapCall, iterations: Optional[int], lp: Optional[LpStart] = None,
               on_round: Optional[Callable[[np.ndarray, bool], None]] = None,
               halt: Optional[threading.Event] = None,
               on_bound: Optional[Callable[[Optional[float]], None]] = None,
               ) -> SearchOutcome:  # fmt: skip
    """The anytime heuristic (see the module's docstring).

    Parameters
    ----------
    call : GapCall
        The instance, the sense, ``assign_all`` (False: a dummy agent takes what stays
        out), the seed, and the limit counted from ``call.t0``: the deadline stops the
        search between rounds (sized from the measured speed to end before it); ``t0``
        also times the trajectory.
    iterations : int, optional
        The most tabu iterations (None: ``max(3000, 15 n)`` without a limit, unbounded
        with one).
    lp : LpStart, optional
        The LP relaxation's solution (the rounded start), bound and reduced costs (the
        core phase), when solved.
    on_round : callable, optional
        ``on_round(assignment, feasible)`` with the best assignment so far (the caller must
        copy it) at the start and after every round.
    halt : threading.Event, optional
        Set: the search ends between rounds.
    on_bound : callable, optional
        ``on_bound(bound)`` with the best bound so far (None: none yet; in the call's
        sense) just before each ``on_round``.

    Returns
    -------
    SearchOutcome
    """
    lp = LpStart() if lp is None else lp
    search = _Search(call, lp.bound, on_round, halt, on_bound)
    return search.run(iterations, lp.x, lp.reduced_costs)
