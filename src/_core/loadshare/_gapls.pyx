# cython: language_level=3
# distutils: language = c++
"""Compiled kernels of the generalized assignment problem (minimisation; the caller negates
profits and adds a free dummy agent when items may stay out).

* :func:`tabu_search`: a tabu search over shifts and swaps with a penalised capacity
  excess, **resumable** (with ``memo`` 0): its whole state (current and best assignment, per-agent penalty
  weights, tabu list, counters, random state) lives in arrays the caller keeps, so ``k``
  calls of ``t`` iterations give exactly what one call of ``k * t`` iterations gives. The
  caller runs it in rounds, looks at the clock between them and records the trajectory.
* :func:`subgradient`: the Lagrangian relaxation of the capacity constraints
  (``L(lam) = sum_j min_{i: w_ij <= b_i} (c_ij + lam_i w_ij) - sum_i lam_i b_i``, a lower
  bound for every ``lam >= 0``), improved by subgradient steps (Polyak's step towards a
  target value), also resumable.

The NumPy/Python twins are in :mod:`coalloc.loadshare._reference.gapls`; both kernels
trust their input (shapes checked, values validated by :class:`GapInstance`).
"""

from libc.stdint cimport INT64_MAX, int64_t, uint64_t
from libc.math cimport INFINITY
from libcpp.algorithm cimport nth_element
from libcpp.utility cimport pair
from cython.operator cimport dereference as deref
from libcpp.unordered_map cimport unordered_map
from libcpp.vector cimport vector

import numpy as np

from coalloc.common.interrupt cimport Deadline, Poll, coalloc_raise_interrupt, deadline_of
from coalloc.common.xoshiro cimport splitmix64


cdef inline int64_t _ex(int64_t used, int64_t cap) noexcept nogil:
    return used - cap if used > cap else 0


cdef inline uint64_t _zob(Py_ssize_t i, Py_ssize_t j) noexcept nogil:
    """The pair (agent i, item j)'s 64-bit key; an assignment's hash is the XOR of its
    pairs' keys (splitmix64's finaliser of ``(i << 32) ^ j ^ 0x9E3779B97F4A7C15``)."""
    cdef uint64_t z = ((<uint64_t>i) << 32) ^ (<uint64_t>j) ^ <uint64_t>0x9E3779B97F4A7C15ULL
    z = (z ^ (z >> 30)) * <uint64_t>0xBF58476D1CE4E5B9ULL
    z = (z ^ (z >> 27)) * <uint64_t>0x94D049BB133111EBULL
    return z ^ (z >> 31)


cdef inline void _remember(unordered_map[uint64_t, int64_t]* seen, uint64_t* lp, int64_t L,
                           uint64_t h) noexcept nogil:
    """Adds ``h`` to the memory ``seen`` (hash -> times held). With a log (``L > 0``:
    ``lp[0]`` the hashes written so far, ``lp[1 .. L]`` the last ``L`` of them, a ring),
    the hash written ``L`` places before leaves the memory as ``h`` enters."""
    cdef uint64_t pos, old
    if L > 0:
        pos = lp[0] % <uint64_t>L
        if lp[0] >= <uint64_t>L:
            old = lp[1 + pos]
            deref(seen)[old] = deref(seen)[old] - 1
            if deref(seen)[old] <= 0:
                deref(seen).erase(old)
        lp[1 + pos] = h
        lp[0] += 1
    deref(seen)[h] = deref(seen)[h] + 1


cdef extern from *:
    """
    static inline int coalloc_gapls_ctz64(unsigned long long x) {
    #if defined(__GNUC__) || defined(__clang__)
        return __builtin_ctzll(x);
    #else
        int r = 0;
        while (!(x & 1ULL)) { x >>= 1; ++r; }
        return r;
    #endif
    }
    """
    int _ctz64 "coalloc_gapls_ctz64"(unsigned long long x) noexcept nogil


cdef struct _Agent:  # agent b's terms for the item j in hand (tabu_search's swap loop)
    double P          # cost[b, j] - cost[a, j]
    double alpha      # alpha[b]
    int64_t ub        # used[b] + weight[b, j] - capacity[b]
    int64_t ex        # b's excess


cdef struct _Target:  # one of item k's two first shift targets (tabu_search's chains)
    double cost       # cost[c, k]
    double pen        # alpha[c] * excess
    int64_t excess    # the excess k adds to c
    Py_ssize_t c      # the agent (-1: none)


cdef struct _Best3:  # the three least (value, agent) pairs so far, sorted; cnt of them
    double v0, v1, v2
    Py_ssize_t t0, t1, t2
    Py_ssize_t cnt


cdef inline void _best3_put(_Best3* s, Py_ssize_t i, double v, bint by_agent) noexcept nogil:
    """Put agent ``i`` of value ``v`` among the three best: it goes before every slot whose
    value it beats (``by_agent``: or equals, with a lower agent), the last one falling out."""
    cdef Py_ssize_t q = s.cnt
    if q == 3 and (v < s.v2 or (by_agent and v == s.v2 and i < s.t2)):
        q = 2
    if q == 2 and (v < s.v1 or (by_agent and v == s.v1 and i < s.t1)):
        q = 1
    if q == 1 and (v < s.v0 or (by_agent and v == s.v0 and i < s.t0)):
        q = 0
    if q == 0:
        s.t2 = s.t1
        s.v2 = s.v1
        s.t1 = s.t0
        s.v1 = s.v0
        s.t0 = i
        s.v0 = v
    elif q == 1:
        s.t2 = s.t1
        s.v2 = s.v1
        s.t1 = i
        s.v1 = v
    elif q == 2:
        s.t2 = i
        s.v2 = v
    if q < 3 and s.cnt < 3:
        s.cnt += 1


cdef inline void _best3_store(const _Best3* s, Py_ssize_t* t, double* v) noexcept nogil:
    """Write the three best out (agents to ``t[0..2]``, values to ``v[0..2]``)."""
    t[0] = s.t0
    t[1] = s.t1
    t[2] = s.t2
    v[0] = s.v0
    v[1] = s.v1
    v[2] = s.v2


cdef struct _Move:  # a move of tabu_search: its value, cost and excess changes, its items
    double d          # the search value's change (cost plus weighted excess)
    double cost       # the cost's change
    int64_t ex        # the total excess's change
    Py_ssize_t i      # the agent item j goes to
    Py_ssize_t j      # the item moved first (-1: no move)
    Py_ssize_t k      # the second item (-1: a shift); for a swap it goes to j's agent
    Py_ssize_t c      # the agent k goes to in a chain (-1: a swap)
    Py_ssize_t l      # the third item of a chain of two ejections (-1: none)
    Py_ssize_t dd     # the agent l goes to


cdef inline void _move_set(_Move* mv, double d, double cost, int64_t ex, Py_ssize_t i,
                           Py_ssize_t j, Py_ssize_t k, Py_ssize_t c, Py_ssize_t l,
                           Py_ssize_t dd) noexcept nogil:
    mv.d = d
    mv.cost = cost
    mv.ex = ex
    mv.i = i
    mv.j = j
    mv.k = k
    mv.c = c
    mv.l = l
    mv.dd = dd


cdef struct _TabuPlan:  # tabu_search's scalars, read once from its Python plan
    int64_t iterations
    int64_t tenure
    int64_t restart
    int64_t swap_items
    double growth
    int64_t shake
    int64_t per_agent  # 0: every weight; 1: the overloaded ones; 2: by their excess (YIG)
    int64_t chain
    int64_t cands      # swaps, chains: the item's first cands targets (< 0: cheapest; 0: all)
    const double* mult  # cands < 0: the agents' multipliers, cheapest by c + mult w (NULL: c)
    int64_t memo       # visited assignments barred: 0 none, 1 the call's, 2 since the restart
    Deadline deadline


_NO_LOG = np.zeros(0, dtype=np.uint64)


def tabu_search(const double[:, ::1] cost, const int64_t[:, ::1] weight,
                const int64_t[::1] capacity, state, plan):
    """Run ``plan.iterations`` more iterations; returns the iterations done in this call.

    ``cost`` and ``weight`` are (m, n), ``capacity`` (m,). ``state`` is the search's whole
    resumable state (:class:`coalloc.loadshare.gap.tabu.TabuState`, or any object with its
    arrays: ``assign``, ``best`` (n,) int64, ``alpha`` (m,), ``tabu_until`` (m * n,)
    int64, ``istate`` (6,) int64, ``dstate`` (3,), ``rng`` (1,) uint64), updated in place.
    ``plan`` holds the scalars (:class:`coalloc.loadshare.gap.tabu.TabuPlan`: the knobs
    below, ``iterations`` and ``deadline``, a
    :class:`coalloc._shared.interrupt.KernelDeadline` or None for the calling thread's),
    copied into a C struct once per call.
    """
    cdef _TabuPlan p
    p.iterations = plan.iterations
    p.tenure = plan.tenure
    p.restart = plan.restart
    p.swap_items = plan.swap_items
    p.growth = plan.growth
    p.shake = plan.shake
    p.per_agent = int(plan.per_agent)
    p.chain = plan.chain
    p.cands = getattr(plan, "cands", 0)
    p.memo = getattr(plan, "memo", 0)
    cdef const double[::1] mult
    p.mult = NULL
    if getattr(plan, "mult", None) is not None:
        mult = plan.mult
        if mult.shape[0] != cost.shape[0]:
            raise ValueError(f"plan.mult has {mult.shape[0]} multipliers, not one per agent "
                             f"({cost.shape[0]})")
        if mult.shape[0]:
            p.mult = &mult[0]
    p.deadline = deadline_of(plan.deadline)
    cdef uint64_t[::1] memo_log = _NO_LOG
    if getattr(state, "memo_log", None) is not None:
        memo_log = state.memo_log
    return _tabu_search(cost, weight, capacity, state.assign, state.best, state.alpha,
                        state.tabu_until, state.istate, state.dstate, state.rng, memo_log,
                        &p)


cdef int64_t _tabu_search(
    const double[:, ::1] cost,      # IN  (m, n)
    const int64_t[:, ::1] weight,   # IN  (m, n)
    const int64_t[::1] capacity,    # IN  (m,)
    int64_t[::1] assign,            # IN/OUT (n,) the current assignment
    int64_t[::1] best,              # IN/OUT (n,) the best assignment found
    double[::1] alpha,              # IN/OUT (m,) the agents' penalty weights
    int64_t[::1] tabu_until,        # IN/OUT (m * n,) iteration until which (i, j) is tabu
    int64_t[::1] istate,            # IN/OUT (6,) it, since, start, best_ex, feasible, started
    double[::1] dstate,             # IN/OUT (3,) current cost, best cost, first weight
    uint64_t[::1] rng,              # IN/OUT (1,) splitmix64 state
    uint64_t[::1] memo_log,         # IN/OUT (L + 1,) memo's log (count, ring); (0,): none
    const _TabuPlan* plan,
) except -1:
    """The search of :func:`tabu_search`, with the plan's scalars:

    Search value: ``cost + sum_i alpha_i * excess_i`` (``excess_i``: agent ``i``'s
    overload). Each iteration applies the best non-tabu shift or swap (aspiration: a move to
    a feasible assignment better than the best; none admissible: the iteration passes); the
    item leaving agent ``i`` may not return
    for ``tenure`` (+ a random ``0 .. tenure // 2``) iterations. Then the penalty weights
    oscillate: while the assignment is infeasible the overloaded agents' weights
    (``per_agent`` 1) or all weights (``per_agent`` 0) are multiplied by ``growth``, or
    (``per_agent`` 2, the rule of Yagiura, Ibaraki & Glover 2006) each overloaded agent's
    by ``1 + (growth - 1) * excess_i / max_k excess_k``; while it is feasible every
    weight is divided by ``growth``. After
    ``restart`` iterations without a new best the search restarts from the best assignment,
    every weight back at its first value, with one item in ``shake`` (about; none when
    ``shake`` is 0) moved to a random agent. Swaps are tried for the items ``start,
    start + step, ...`` (``step = max(1, n // swap_items)``, ``start`` cycling) against
    every item. Ties go to the first move found.

    ``chain``: the most ejections of an ejection chain (Yagiura, Ibaraki & Glover 2004;
    0: none). ``chain >= 1``: item ``j`` (a sampled one, as for swaps) moves from agent
    ``a`` to agent ``b``, ejecting an item ``k`` of ``b``, which moves to a third agent
    ``c`` (not ``a``, not ``b``). For every ``k``, ``c`` is the first of its (at most)
    three best non-tabu shift targets (least ``c_ck + alpha_c * (excess added to c)``,
    ties to the lower agent, computed once an iteration) that is neither ``a`` nor ``b``.
    ``chain >= 2``: also ``k`` to ``c`` ejecting an item ``l`` of ``c``, which moves to a
    fourth agent ``d``: for every ``k``, its three best such pairs of moves (``c`` among
    its three best targets, ``l`` any item of ``c``, ``d`` the first of ``l``'s best
    targets that is not ``b``; least ``c_ck - c_bk + alpha_c * (excess change of c) +
    c_dl - c_cl + alpha_d * (excess added to d)``, ties to the first found, computed once
    an iteration) and the chain takes the first whose ``c`` and ``d`` are not ``a``.
    After each pair's swap, its chains are evaluated (the tabu rule and aspiration on
    ``(b, j)``, as for a shift). Applying one makes every moved item tabu on the agent it
    left (one draw each, in the chain's order).

    ``cands`` (a candidate list, ``plan.cands``, 0 when the plan has none): with ``cands >=
    1`` and ``chain >= 1`` the sampled item ``j`` swaps or starts a chain only towards an
    agent among the first ``cands`` of its three best shift targets of the iteration (the
    chains' ``top``); with ``cands < 0`` only towards one of its ``-cands`` cheapest agents
    (least ``(cost, agent)``, fixed for the call; with ``plan.mult``, the agents'
    capacity multipliers ``lam``, least ``(cost + lam * weight, agent)``). Shifts are not
    restricted.

    ``memo`` (``plan.memo``, 0: none): a memory of the assignments visited, by their
    hashes (the XOR of ``_zob(i, j)`` over the pairs; ``seen``): a shift, swap or chain
    whose assignment is in it is not admissible, unless it is a feasible new best (the
    aspiration above). ``memo`` 1: every assignment visited (the first, each one moved
    to, each restart's); 2: those since the last restart (cleared there). Without a log
    (``state.memo_log`` None or of length < 2) the memory is this call's only (``k``
    calls of ``t`` iterations then differ from one of ``k * t``); with a log of length
    ``L + 1`` (``[0]``: hashes written, ``[1 ..]``: the last ``L``, a ring) the memory is
    the last ``L`` assignments visited, kept across calls (resumable). No random draws:
    the splitmix64 stream is the same as without it.

    A fresh state (``istate[5] == 0``) is set up from ``assign``: ``best = assign``, the
    weights ``(sum |c| + 1) / (sum w + 1)`` (kept in ``dstate[2]``). ``best`` is the best feasible assignment found
    (``istate[4] == 1``), or, while none is, the one with the least excess, then cost;
    ``dstate[1]`` its cost.

    With ``chain <= 1`` (and costs, weights and weights alpha in range) the kernel skips
    the swaps and chains that a bound proves cannot beat the best move so far; the moves
    made are exactly those of the plain scan (the twin in ``_reference.gapls``).
    """
    cdef Py_ssize_t m = cost.shape[0]
    cdef Py_ssize_t n = cost.shape[1]
    cdef Py_ssize_t i, j, k, a, b, c, q, r, l, dd, p, t
    cdef _Move mv  # the best admissible move of the iteration so far
    cdef int64_t it, excess, d_ex, best_ex, step, start, since, done, ea, eb, e2a, e2b, e2c
    cdef int64_t e2d
    cdef double cur, d, best_cost, d_cost, csum, wsum, a0, v
    cdef uint64_t state
    cdef bint feasible_found, tabu, ok
    cdef vector[int64_t] used
    cdef vector[Py_ssize_t] top       # (n, 3) the best non-tabu shift targets per item
    cdef vector[double] topv          # (n, 3) their values
    cdef vector[Py_ssize_t] two       # (n, 3, 3) every item's three best (c, l, d)
    cdef vector[double] twov          # (n, 3) their values
    cdef vector[Py_ssize_t] first     # (m + 1,) the agents' items, by agent (counting sort)
    cdef vector[Py_ssize_t] members   # (n,)
    # speed only (the moves, their values and their order are those described above):
    cdef bint fast, fast_it           # the shortcuts below apply (all values in range)
    cdef vector[int64_t] ex0          # (m,) every agent's excess, once an iteration
    cdef vector[double] cT            # (n, m) the costs, item-major
    cdef vector[int64_t] wT           # (n, m) the weights, item-major
    cdef vector[double] cb            # (n,) every item's cost on its agent
    cdef vector[int64_t] wown         # (n,) every item's weight on its agent
    cdef vector[uint64_t] bits        # (m, W) every agent's items, as bit sets
    cdef vector[double] minS          # (m, m) min over b's items k of cost[a, k] - cost[b, k]
    cdef vector[int64_t] minW         # (m, m) min over b's items k of weight[a, k]
    cdef vector[int64_t] maxW         # (m,) max over b's items k of weight[b, k]
    cdef vector[char] dirty           # (m,) b's items changed since minS[:, b] was computed
    cdef vector[double] minC          # (m,) min over b's items k of cost[c, k] - cost[b, k]
    cdef vector[_Target] tg           # (n, 2) the items' two first shift targets
    cdef vector[_Agent] ag            # (m,) the agents' terms for the item j in hand
    cdef vector[uint64_t] acc         # (W,) the items k whose swaps and chains with j count
    cdef _Target* tgk
    cdef _Agent* agb
    cdef Py_ssize_t W, w, c0, c1, s0, s1, s2
    cdef _Best3 b3  # an item's three best shift targets in the iteration at hand
    cdef vector[int64_t] nitems       # (m,) every agent's item count
    cdef bint probe, bounds_pay       # bound the groups this iteration; it paid last time
    cdef int64_t tested, saved        # groups bounded, items left out by the bounds
    cdef const double* crow           # cost[a, :] of the item j in hand
    cdef const int64_t* wrowa         # weight[a, :]
    cdef double aa                    # alpha[a]
    cdef uint64_t word
    cdef int64_t e2ac, ua
    cdef double cmax, slack, pa, pb, pa_lo, pa_c, pb_lo, lb, g, caj, ci
    if (weight.shape[0] != m or weight.shape[1] != n or capacity.shape[0] != m
            or assign.shape[0] != n or best.shape[0] != n or alpha.shape[0] != m
            or tabu_until.shape[0] != m * n or istate.shape[0] < 6 or dstate.shape[0] < 3
            or rng.shape[0] < 1):
        raise ValueError("tabu_search: inconsistent shapes")
    if n == 0 or m == 0:
        return 0
    cdef Poll poll = Poll(plan.deadline, 1)
    cdef int64_t iterations = plan.iterations, tenure = plan.tenure, restart = plan.restart
    cdef int64_t swap_items = plan.swap_items, shake = plan.shake, chain = plan.chain
    cdef double growth = plan.growth
    cdef int64_t per_agent = plan.per_agent
    # the candidate list (needs the items' three best targets, kept with chains only)
    cdef int64_t cands = plan.cands if (chain >= 1 and plan.cands > 0) or plan.cands < 0 else 0
    if cands < 0 and -cands >= m:
        cands = 0  # the list holds every agent: the same moves as without one, none built
    cdef vector[char] cheap           # (n, m) cands < 0: the item's -cands cheapest agents
    cdef vector[pair[double, Py_ssize_t]] keyed
    cdef Py_ssize_t u0, u1, u2        # the sampled item's candidate agents (-1: none)
    cdef int64_t mxe, e_i                 # the largest agent excess, one agent's (YIG weights)
    cdef int64_t memo = plan.memo
    cdef unordered_map[uint64_t, int64_t] seen  # memo: the visited assignments' hashes
    cdef uint64_t* lp = &memo_log[0] if memo_log.shape[0] > 1 else NULL
    cdef int64_t L = memo_log.shape[0] - 1 if memo_log.shape[0] > 1 else 0
    cdef int64_t q_in
    cdef uint64_t hcur = 0               # memo: the current assignment's hash
    with nogil:
        used.assign(m, 0)
        if chain >= 1:
            top.assign(3 * n, -1)
            topv.assign(3 * n, 0.0)
        if chain >= 2:
            two.assign(9 * n, -1)
            twov.assign(3 * n, 0.0)
            first.assign(m + 1, 0)
            members.assign(n, 0)
        ex0.assign(m, 0)
        cT.assign(n * m, 0.0)
        wT.assign(n * m, 0)
        cmax = 0.0
        fast = chain <= 1
        for i in range(m):
            for j in range(n):
                cT[j * m + i] = cost[i, j]
                wT[j * m + i] = weight[i, j]
                v = cost[i, j] if cost[i, j] > 0 else -cost[i, j]
                if not (v <= 1e290) or weight[i, j] < 0:  # no pruning (huge, NaN, < 0)
                    fast = False
                elif v > cmax:
                    cmax = v
        # see the swaps below: a safe margin for the rounding of the bounds
        slack = 5e-12 * cmax + 1e-300
        W = (n + 63) // 64
        if fast:
            cb.assign(n, 0.0)
            minS.assign(m * m, 0.0)
            minW.assign(m * m, 0)
            maxW.assign(m, 0)
            minC.assign(m, 0.0)
            dirty.assign(m, 1)
            bits.assign(m * W, 0)
            acc.assign(W, 0)
            tg.resize(2 * n)
            ag.resize(m)
            wown.assign(n, 0)
            nitems.assign(m, 0)
        bounds_pay = True
        if cands < 0:
            cheap.assign(n * m, 0)
            keyed.resize(m)
            for j in range(n):
                for i in range(m):
                    keyed[i].first = cost[i, j]
                    if plan.mult != NULL:  # the Lagrangian reduced cost
                        keyed[i].first = cost[i, j] + plan.mult[i] * <double>weight[i, j]
                    keyed[i].second = i
                # the -cands least (key, agent) first (a total order: the set of a sort)
                nth_element(keyed.begin(), keyed.begin() + (-cands), keyed.end())
                for i in range(-cands):
                    cheap[j * m + keyed[i].second] = 1
        for j in range(n):
            used[assign[j]] += weight[assign[j], j]
        excess = 0
        for i in range(m):
            excess += _ex(used[i], capacity[i])
        if istate[5] == 0:
            cur = 0.0
            for j in range(n):
                cur += cost[assign[j], j]
                best[j] = assign[j]
            csum = 0.0
            wsum = 0.0
            for i in range(m):
                for j in range(n):
                    csum += cost[i, j] if cost[i, j] > 0 else -cost[i, j]
                    wsum += <double>weight[i, j]
            a0 = (csum + 1.0) / (wsum + 1.0)
            for i in range(m):
                alpha[i] = a0
            for k in range(m * n):
                tabu_until[k] = 0
            istate[0] = 0
            istate[1] = 0
            istate[2] = 0
            istate[3] = excess
            istate[4] = excess == 0
            istate[5] = 1
            dstate[0] = cur
            dstate[1] = cur
            dstate[2] = a0
        it = istate[0]
        since = istate[1]
        start = istate[2]
        best_ex = istate[3]
        feasible_found = istate[4] != 0
        cur = dstate[0]
        best_cost = dstate[1]
        state = rng[0]
        step = n // swap_items if swap_items > 0 and n > swap_items else 1
        if start >= step:
            start = 0
        if memo > 0:
            for j in range(n):
                hcur ^= _zob(assign[j], j)
            if L > 0 and lp[0] > 0:  # the log's last L hashes (the current one among them)
                q_in = <int64_t>lp[0] if lp[0] < <uint64_t>L else L
                for k in range(q_in):
                    seen[lp[1 + k]] = seen[lp[1 + k]] + 1
            else:
                _remember(&seen, lp, L, hcur)
        done = 0
        while done < iterations:
            if poll.stop():
                break
            done += 1
            it += 1
            _move_set(&mv, 1e300, 0.0, 0, -1, -1, -1, -1, -1, -1)
            fast_it = fast
            for i in range(m):
                ex0[i] = _ex(used[i], capacity[i])
                if not (alpha[i] >= 0.0 and alpha[i] <= 1e250):  # finite penalties
                    fast_it = False
            # shifts: item j to agent i
            if fast_it:
                # As below. The three best targets are the three least (value, agent)
                # (every value is finite here: |c| <= 1e290, alpha <= 1e250), so they may
                # be found in any order: j's three of the last iteration first (a good third
                # best early), then the rest by index, empty slots at +inf; a target that
                # neither beats the third best nor the best move is left at that.
                for j in range(n):
                    a = assign[j]
                    ea = ex0[a]
                    e2a = _ex(used[a] - wT[j * m + a], capacity[a]) - ea
                    pa = alpha[a] * e2a
                    caj = cT[j * m + a]
                    b3.cnt = 0
                    b3.t0 = b3.t1 = b3.t2 = -1
                    b3.v0 = b3.v1 = b3.v2 = INFINITY
                    s0 = s1 = s2 = -1
                    if chain >= 1:
                        s0 = top[3 * j]
                        s1 = top[3 * j + 1]
                        s2 = top[3 * j + 2]
                        for r in range(3):
                            i = s0 if r == 0 else s1 if r == 1 else s2
                            if i < 0 or i == a or tabu_until[i * n + j] > it:
                                continue
                            v = cT[j * m + i] + alpha[i] * (
                                _ex(used[i] + wT[j * m + i], capacity[i]) - ex0[i])
                            _best3_put(&b3, i, v, True)
                    for i in range(m):
                        if i == a:
                            continue
                        ci = cT[j * m + i]
                        e2b = _ex(used[i] + wT[j * m + i], capacity[i]) - ex0[i]
                        pb = alpha[i] * e2b
                        d_cost = ci - caj
                        d = d_cost + pb + pa
                        v = ci + pb
                        if not (d < mv.d) and (chain < 1 or not (v < b3.v2 or (v == b3.v2 and i < b3.t2))):
                            continue
                        tabu = tabu_until[i * n + j] > it
                        if (chain >= 1 and not tabu and i != s0 and i != s1 and i != s2
                                and (v < b3.v2 or (v == b3.v2 and i < b3.t2))):  # the three best
                            _best3_put(&b3, i, v, True)
                        if d < mv.d:
                            d_ex = e2b + e2a
                            ok = (not tabu) or (excess + d_ex == 0
                                                and cur + d_cost < best_cost - 1e-9)
                            if ok and memo > 0 and not (excess + d_ex == 0
                                                        and cur + d_cost < best_cost - 1e-9):
                                ok = seen.count(hcur ^ _zob(a, j) ^ _zob(i, j)) == 0
                            if ok:
                                _move_set(&mv, d, d_cost, d_ex, i, j, -1, -1, -1, -1)
                    if chain >= 1:
                        _best3_store(&b3, &top[3 * j], &topv[3 * j])
            for j in range(n if not fast_it else 0):
                a = assign[j]
                ea = ex0[a]
                e2a = _ex(used[a] - wT[j * m + a], capacity[a]) - ea
                pa = alpha[a] * e2a
                # the three best targets, sorted (cnt of them; t: agents, v: values)
                b3.cnt = 0
                b3.t0 = b3.t1 = b3.t2 = -1
                b3.v0 = b3.v1 = b3.v2 = 0.0
                for i in range(m):
                    if i == a:
                        continue
                    d_cost = cT[j * m + i] - cT[j * m + a]
                    e2b = _ex(used[i] + wT[j * m + i], capacity[i]) - ex0[i]
                    d_ex = e2b + e2a
                    d = d_cost + alpha[i] * e2b + pa
                    tabu = tabu_until[i * n + j] > it
                    if chain >= 1 and not tabu:  # keep the three best targets, sorted
                        v = cT[j * m + i] + alpha[i] * e2b
                        _best3_put(&b3, i, v, False)
                    if d < mv.d:
                        ok = (not tabu) or (excess + d_ex == 0
                                            and cur + d_cost < best_cost - 1e-9)
                        if ok and memo > 0 and not (excess + d_ex == 0
                                                    and cur + d_cost < best_cost - 1e-9):
                            ok = seen.count(hcur ^ _zob(a, j) ^ _zob(i, j)) == 0
                        if ok:
                            _move_set(&mv, d, d_cost, d_ex, i, j, -1, -1, -1, -1)
                if chain >= 1:
                    _best3_store(&b3, &top[3 * j], &topv[3 * j])
            if chain >= 2:  # every item's three best pairs (k to c, l of c to d)
                for i in range(m + 1):
                    first[i] = 0
                for j in range(n):
                    first[assign[j] + 1] += 1
                for i in range(m):
                    first[i + 1] += first[i]
                for j in range(n):  # items by agent, in index order (first[i]: next slot)
                    members[first[assign[j]]] = j
                    first[assign[j]] += 1
                i = m
                while i > 0:
                    first[i] = first[i - 1]
                    i -= 1
                first[0] = 0
                for k in range(n):
                    b = assign[k]
                    two[9 * k] = -1
                    two[9 * k + 3] = -1
                    two[9 * k + 6] = -1
                    for q in range(3):
                        c = top[3 * k + q]
                        if c < 0:
                            break
                        for p in range(first[c], first[c + 1]):
                            l = members[p]
                            dd = -1
                            for r in range(3):
                                t = top[3 * l + r]
                                if t >= 0 and t != b:
                                    dd = t
                                    break
                            if dd < 0:
                                continue
                            v = (cost[c, k] - cost[b, k] + cost[dd, l] - cost[c, l]
                                 + alpha[c] * (_ex(used[c] + weight[c, k] - weight[c, l],
                                                   capacity[c]) - _ex(used[c], capacity[c]))
                                 + alpha[dd] * (_ex(used[dd] + weight[dd, l], capacity[dd])
                                                - _ex(used[dd], capacity[dd])))
                            r = 3
                            while r > 0 and (two[9 * k + 3 * (r - 1)] < 0 or v < twov[3 * k + r - 1]):
                                r -= 1
                            if r < 3:
                                t = 2
                                while t > r:
                                    two[9 * k + 3 * t] = two[9 * k + 3 * (t - 1)]
                                    two[9 * k + 3 * t + 1] = two[9 * k + 3 * (t - 1) + 1]
                                    two[9 * k + 3 * t + 2] = two[9 * k + 3 * (t - 1) + 2]
                                    twov[3 * k + t] = twov[3 * k + t - 1]
                                    t -= 1
                                two[9 * k + 3 * r] = c
                                two[9 * k + 3 * r + 1] = l
                                two[9 * k + 3 * r + 2] = dd
                                twov[3 * k + r] = v
            # swaps: items j (sampled) and k exchange agents
            if m > 1 and fast_it:
                # The same moves in the same order with the same arithmetic as below; only
                # the items k that cannot beat ``mv.d`` are left out. For the item j in hand
                # (on agent a) and an agent b, a swap with an item k of b has the value
                # ((P + c_ak) - c_bk) + alpha_a e2a + alpha_b e2b (P = c_bj - c_aj, in this
                # order of operations), e2a at least its value for b's lightest item on a
                # (minW) and e2b at least its value for b's heaviest item on b (maxW): the
                # excess grows with the load. A chain has ((P + c_ck) - c_bk) + alpha_a e2a'
                # + alpha_b e2b + alpha_c e2c with e2c >= 0. Rounded additions, and products
                # with a weight >= 0, are monotone, and (P + x_k) - y_k rounded is at least
                # P + min_k (x_k - y_k), rounded, less 4e-15 max|c| (a few roundings of
                # terms of at most 4 max|c|; the margin is 5e-12 max|c|): a bound >= mv.d
                # proves that no swap or chain with b's items has d < mv.d (acceptance is
                # strict; mv.d only falls).
                for w in range(m * W):
                    bits[w] = 0
                for i in range(m):
                    nitems[i] = 0
                for k in range(n):
                    b = assign[k]
                    nitems[b] += 1
                    cb[k] = cT[k * m + b]
                    wown[k] = wT[k * m + b]
                    bits[b * W + (k >> 6)] |= (<uint64_t>1) << (k & 63)
                # minS, minW, maxW of the agents whose items changed (they depend on the
                # items of b only)
                for b in range(m):
                    if not dirty[b]:
                        continue
                    dirty[b] = 0
                    maxW[b] = 0
                    for a in range(m):
                        minS[a * m + b] = INFINITY
                        minW[a * m + b] = INT64_MAX
                    for w in range(W):
                        word = bits[b * W + w]
                        while word != 0:
                            k = (w << 6) + _ctz64(word)
                            word &= word - 1
                            if wT[k * m + b] > maxW[b]:
                                maxW[b] = wT[k * m + b]
                            for a in range(m):
                                v = cT[k * m + a] - cb[k]
                                if v < minS[a * m + b]:
                                    minS[a * m + b] = v
                                if wT[k * m + a] < minW[a * m + b]:
                                    minW[a * m + b] = wT[k * m + a]
                if chain == 1:
                    for i in range(m):
                        minC[i] = INFINITY
                    for k in range(n):
                        c0 = top[3 * k]
                        c1 = top[3 * k + 1]
                        tg[2 * k].c = c0
                        tg[2 * k + 1].c = c1
                        if c0 < 0:
                            continue
                        tg[2 * k].cost = cT[k * m + c0]
                        tg[2 * k].excess = _ex(used[c0] + wT[k * m + c0], capacity[c0]) - ex0[c0]
                        tg[2 * k].pen = alpha[c0] * tg[2 * k].excess
                        g = tg[2 * k].cost - cb[k]
                        if c1 >= 0:
                            tg[2 * k + 1].cost = cT[k * m + c1]
                            tg[2 * k + 1].excess = (_ex(used[c1] + wT[k * m + c1], capacity[c1])
                                                    - ex0[c1])
                            tg[2 * k + 1].pen = alpha[c1] * tg[2 * k + 1].excess
                            v = tg[2 * k + 1].cost - cb[k]
                            if v < g:
                                g = v
                        b = assign[k]
                        if g < minC[b]:
                            minC[b] = g
                for b in range(m):
                    ag[b].alpha = alpha[b]
                    ag[b].ex = ex0[b]
                # A group's bound costs about what two of its moves cost: the bounds are
                # used while they leave out at least two items per group bounded, checked
                # every 16 iterations when they do not (speed only: the moves are the same).
                probe = bounds_pay or (it & 15) == 0
                tested = 0
                saved = 0
                j = start
                while j < n:
                    a = assign[j]
                    ea = ex0[a]
                    e2ac = _ex(used[a] - wT[j * m + a], capacity[a]) - ea
                    pa_c = alpha[a] * <double>e2ac
                    ua = used[a] - wT[j * m + a] - capacity[a]
                    crow = &cost[a, 0]
                    wrowa = &weight[a, 0]
                    aa = alpha[a]
                    for b in range(m):
                        ag[b].P = cT[j * m + b] - cT[j * m + a]
                        ag[b].ub = used[b] + wT[j * m + b] - capacity[b]
                    u0 = top[3 * j] if cands >= 1 else -1
                    u1 = top[3 * j + 1] if cands >= 2 else -1
                    u2 = top[3 * j + 2] if cands >= 3 else -1
                    if not probe and cands == 0:  # every item not on a
                        for w in range(W):
                            acc[w] = ~bits[a * W + w]
                        if n & 63:
                            acc[W - 1] &= ((<uint64_t>1) << (n & 63)) - 1
                    else:
                        for w in range(W):
                            acc[w] = 0
                    for b in range(m if probe or cands != 0 else 0):
                        if b == a or minW[a * m + b] == INT64_MAX:  # (b has no items)
                            continue
                        if cands > 0 and b != u0 and b != u1 and b != u2:
                            continue  # (not a candidate)
                        if cands < 0 and not cheap[j * m + b]:
                            continue
                        if not probe:
                            for w in range(W):
                                acc[w] |= bits[b * W + w]
                            continue
                        tested += 1
                        e2b = _ex(used[b] - maxW[b] + wT[j * m + b], capacity[b]) - ex0[b]
                        pb_lo = alpha[b] * <double>e2b
                        e2a = _ex(used[a] - wT[j * m + a] + minW[a * m + b], capacity[a]) - ea
                        pa_lo = alpha[a] * <double>e2a
                        lb = ag[b].P + minS[a * m + b] - slack + pa_lo + pb_lo
                        if not (lb < mv.d) and chain == 1:
                            lb = ag[b].P + minC[b] - slack + pa_c + pb_lo
                        if lb < mv.d:
                            for w in range(W):
                                acc[w] |= bits[b * W + w]
                        else:
                            saved += nitems[b]
                    for w in range(W):
                        word = acc[w]
                        while word != 0:
                            t = _ctz64(word)
                            k = (w << 6) + t
                            word &= word - 1
                            b = assign[k]
                            agb = &ag[b]
                            e2b = _ex(agb.ub - wown[k], 0) - agb.ex
                            pb = agb.alpha * e2b
                            d_cost = agb.P + crow[k] - cb[k]
                            e2a = _ex(ua + wrowa[k], 0) - ea
                            d_ex = e2a + e2b
                            d = d_cost + aa * e2a + pb
                            if d < mv.d:
                                tabu = tabu_until[b * n + j] > it or tabu_until[a * n + k] > it
                                ok = (not tabu) or (excess + d_ex == 0
                                                    and cur + d_cost < best_cost - 1e-9)
                                if ok and memo > 0 and not (excess + d_ex == 0
                                                            and cur + d_cost < best_cost - 1e-9):
                                    ok = seen.count(hcur ^ _zob(a, j) ^ _zob(b, j)
                                                    ^ _zob(b, k) ^ _zob(a, k)) == 0
                                if ok:
                                    _move_set(&mv, d, d_cost, d_ex, b, j, k, -1, -1, -1)
                            if chain < 1:
                                continue
                            # the chain: j from a to b, k from b to its best other agent c
                            tgk = &tg[2 * k]
                            if tgk.c == a:
                                tgk += 1
                            c = tgk.c
                            if c >= 0:
                                d_cost = agb.P + tgk.cost - cb[k]
                                d_ex = e2ac + e2b + tgk.excess
                                d = d_cost + pa_c + pb + tgk.pen
                                if d < mv.d:
                                    tabu = tabu_until[b * n + j] > it
                                    ok = (not tabu) or (excess + d_ex == 0
                                                        and cur + d_cost < best_cost - 1e-9)
                                    if ok and memo > 0 and not (
                                            excess + d_ex == 0
                                            and cur + d_cost < best_cost - 1e-9):
                                        ok = seen.count(hcur ^ _zob(a, j) ^ _zob(b, j)
                                                        ^ _zob(b, k) ^ _zob(c, k)) == 0
                                    if ok:
                                        _move_set(&mv, d, d_cost, d_ex, b, j, k, c, -1, -1)
                    j += step
                start = (start + 1) % step
                if probe:
                    bounds_pay = saved >= 2 * tested
            elif m > 1:
                j = start
                while j < n:
                    a = assign[j]
                    ea = _ex(used[a], capacity[a])
                    u0 = top[3 * j] if cands >= 1 else -1
                    u1 = top[3 * j + 1] if cands >= 2 else -1
                    u2 = top[3 * j + 2] if cands >= 3 else -1
                    for k in range(n):
                        b = assign[k]
                        if b == a or (cands > 0 and b != u0 and b != u1 and b != u2):
                            continue
                        if cands < 0 and not cheap[j * m + b]:
                            continue
                        d_cost = cost[b, j] - cost[a, j] + cost[a, k] - cost[b, k]
                        e2a = _ex(used[a] - weight[a, j] + weight[a, k], capacity[a]) - ea
                        e2b = (_ex(used[b] - weight[b, k] + weight[b, j], capacity[b])
                               - _ex(used[b], capacity[b]))
                        d_ex = e2a + e2b
                        d = d_cost + alpha[a] * e2a + alpha[b] * e2b
                        tabu = tabu_until[b * n + j] > it or tabu_until[a * n + k] > it
                        ok = (not tabu) or (excess + d_ex == 0 and cur + d_cost < best_cost - 1e-9)
                        if ok and d < mv.d and memo > 0 and not (
                                excess + d_ex == 0 and cur + d_cost < best_cost - 1e-9):
                            ok = seen.count(hcur ^ _zob(a, j) ^ _zob(b, j)
                                            ^ _zob(b, k) ^ _zob(a, k)) == 0
                        if ok and d < mv.d:
                            _move_set(&mv, d, d_cost, d_ex, b, j, k, -1, -1, -1)
                        if chain < 1:
                            continue
                        # the chain: j from a to b, k from b to its best other agent c
                        c = -1
                        for q in range(3):
                            r = top[3 * k + q]
                            if r >= 0 and r != a and r != b:
                                c = r
                                break
                        if c >= 0:
                            d_cost = cost[b, j] - cost[a, j] + cost[c, k] - cost[b, k]
                            e2a = _ex(used[a] - weight[a, j], capacity[a]) - ea
                            e2b = (_ex(used[b] - weight[b, k] + weight[b, j], capacity[b])
                                   - _ex(used[b], capacity[b]))
                            e2c = (_ex(used[c] + weight[c, k], capacity[c])
                                   - _ex(used[c], capacity[c]))
                            d_ex = e2a + e2b + e2c
                            d = d_cost + alpha[a] * e2a + alpha[b] * e2b + alpha[c] * e2c
                            tabu = tabu_until[b * n + j] > it
                            ok = (not tabu) or (excess + d_ex == 0
                                                and cur + d_cost < best_cost - 1e-9)
                            if ok and d < mv.d and memo > 0 and not (
                                    excess + d_ex == 0 and cur + d_cost < best_cost - 1e-9):
                                ok = seen.count(hcur ^ _zob(a, j) ^ _zob(b, j)
                                                ^ _zob(b, k) ^ _zob(c, k)) == 0
                            if ok and d < mv.d:
                                _move_set(&mv, d, d_cost, d_ex, b, j, k, c, -1, -1)
                        if chain < 2:
                            continue
                        # two ejections: j from a to b, k from b to c, l from c to dd
                        c = -1
                        for q in range(3):
                            r = two[9 * k + 3 * q]
                            if r >= 0 and r != a and two[9 * k + 3 * q + 2] != a:
                                c = r
                                l = two[9 * k + 3 * q + 1]
                                dd = two[9 * k + 3 * q + 2]
                                break
                        if c < 0:
                            continue
                        d_cost = (cost[b, j] - cost[a, j] + cost[c, k] - cost[b, k]
                                  + cost[dd, l] - cost[c, l])
                        e2a = _ex(used[a] - weight[a, j], capacity[a]) - ea
                        e2b = (_ex(used[b] - weight[b, k] + weight[b, j], capacity[b])
                               - _ex(used[b], capacity[b]))
                        e2c = (_ex(used[c] + weight[c, k] - weight[c, l], capacity[c])
                               - _ex(used[c], capacity[c]))
                        e2d = _ex(used[dd] + weight[dd, l], capacity[dd]) - _ex(used[dd], capacity[dd])
                        d_ex = e2a + e2b + e2c + e2d
                        d = (d_cost + alpha[a] * e2a + alpha[b] * e2b + alpha[c] * e2c
                             + alpha[dd] * e2d)
                        tabu = tabu_until[b * n + j] > it
                        ok = (not tabu) or (excess + d_ex == 0 and cur + d_cost < best_cost - 1e-9)
                        if ok and d < mv.d and memo > 0 and not (
                                excess + d_ex == 0 and cur + d_cost < best_cost - 1e-9):
                            ok = seen.count(hcur ^ _zob(a, j) ^ _zob(b, j) ^ _zob(b, k)
                                            ^ _zob(c, k) ^ _zob(c, l) ^ _zob(dd, l)) == 0
                        if ok and d < mv.d:
                            _move_set(&mv, d, d_cost, d_ex, b, j, k, c, l, dd)
                    j += step
                start = (start + 1) % step
            if mv.j < 0:  # no admissible move: the iteration passes, tabu tenures run out
                since += 1
                if since >= restart:
                    since = 0
                continue
            # apply
            a = assign[mv.j]
            if fast:  # these agents' items change
                dirty[a] = 1
                dirty[mv.i] = 1
                if mv.c >= 0:
                    dirty[mv.c] = 1
                if mv.l >= 0:
                    dirty[mv.dd] = 1
            tabu_until[a * n + mv.j] = it + tenure + <int64_t>(splitmix64(state) % <uint64_t>(tenure // 2 + 1))
            if memo > 0:
                hcur ^= _zob(a, mv.j) ^ _zob(mv.i, mv.j)
                if mv.k >= 0 and mv.c >= 0:
                    hcur ^= _zob(mv.i, mv.k) ^ _zob(mv.c, mv.k)
                    if mv.l >= 0:
                        hcur ^= _zob(mv.c, mv.l) ^ _zob(mv.dd, mv.l)
                elif mv.k >= 0:
                    hcur ^= _zob(mv.i, mv.k) ^ _zob(a, mv.k)
                _remember(&seen, lp, L, hcur)
            if mv.k < 0:
                used[a] -= weight[a, mv.j]
                used[mv.i] += weight[mv.i, mv.j]
                assign[mv.j] = mv.i
            elif mv.c >= 0:  # a chain: j from a to i, k from i to c (l from c to dd)
                tabu_until[mv.i * n + mv.k] = it + tenure + <int64_t>(splitmix64(state) % <uint64_t>(tenure // 2 + 1))
                used[a] -= weight[a, mv.j]
                used[mv.i] += weight[mv.i, mv.j] - weight[mv.i, mv.k]
                used[mv.c] += weight[mv.c, mv.k]
                assign[mv.j] = mv.i
                assign[mv.k] = mv.c
                if mv.l >= 0:
                    tabu_until[mv.c * n + mv.l] = it + tenure + <int64_t>(splitmix64(state) % <uint64_t>(tenure // 2 + 1))
                    used[mv.c] -= weight[mv.c, mv.l]
                    used[mv.dd] += weight[mv.dd, mv.l]
                    assign[mv.l] = mv.dd
            else:
                b = assign[mv.k]
                tabu_until[b * n + mv.k] = it + tenure + <int64_t>(splitmix64(state) % <uint64_t>(tenure // 2 + 1))
                used[a] += weight[a, mv.k] - weight[a, mv.j]
                used[b] += weight[b, mv.j] - weight[b, mv.k]
                assign[mv.j] = b
                assign[mv.k] = a
            cur += mv.cost
            excess += mv.ex
            since += 1
            if (excess == 0 and (not feasible_found or cur < best_cost - 1e-9)) or (
                    not feasible_found and (excess < best_ex or (excess == best_ex and cur < best_cost - 1e-9))):
                feasible_found = feasible_found or excess == 0
                best_cost = cur
                best_ex = excess
                for j in range(n):
                    best[j] = assign[j]
                since = 0
            if excess > 0 and per_agent == 2:  # YIG: each overloaded weight by its excess
                mxe = 0
                for i in range(m):
                    e_i = _ex(used[i], capacity[i])
                    if e_i > mxe:
                        mxe = e_i
                for i in range(m):
                    e_i = _ex(used[i], capacity[i])
                    if e_i > 0:
                        alpha[i] *= 1.0 + (growth - 1.0) * (<double>e_i / <double>mxe)
                        if alpha[i] > 1e100:
                            alpha[i] = 1e100
            elif excess > 0:
                for i in range(m):
                    if used[i] > capacity[i] or per_agent == 0:
                        alpha[i] *= growth
                        if alpha[i] > 1e100:
                            alpha[i] = 1e100
            else:
                for i in range(m):
                    alpha[i] /= growth
                    if alpha[i] < 1e-9:
                        alpha[i] = 1e-9
            if since >= restart:
                since = 0
                for i in range(m):
                    used[i] = 0
                cur = 0.0
                for j in range(n):
                    assign[j] = best[j]
                for i in range(m):
                    alpha[i] = dstate[2]
                if shake > 0:
                    for j in range(n):
                        if splitmix64(state) % <uint64_t>shake == 0:
                            assign[j] = <int64_t>(splitmix64(state) % <uint64_t>m)
                for j in range(n):
                    used[assign[j]] += weight[assign[j], j]
                    cur += cost[assign[j], j]
                if fast:
                    for i in range(m):
                        dirty[i] = 1
                excess = 0
                for i in range(m):
                    excess += _ex(used[i], capacity[i])
                if memo > 0:
                    if memo == 2:
                        seen.clear()
                        if L > 0:
                            lp[0] = 0
                    hcur = 0
                    for j in range(n):
                        hcur ^= _zob(assign[j], j)
                    _remember(&seen, lp, L, hcur)
        istate[0] = it
        istate[1] = since
        istate[2] = start
        istate[3] = best_ex
        istate[4] = feasible_found
        dstate[0] = cur
        dstate[1] = best_cost
        rng[0] = state
    if poll.stopped():
        coalloc_raise_interrupt()
    return int(done)


def subgradient(
    const double[:, ::1] cost,      # IN  (m, n)
    const int64_t[:, ::1] weight,   # IN  (m, n)
    const int64_t[::1] capacity,    # IN  (m,)
    double[::1] lam,                # IN/OUT (m,) the multipliers (>= 0)
    double[::1] best_lam,           # IN/OUT (m,) the multipliers of the best bound
    int64_t[::1] x,                 # OUT (n,) the relaxation's agent of every item at best_lam
    double[::1] dstate,             # IN/OUT (3,) best bound, step factor theta, started
    int64_t[::1] istate,            # IN/OUT (1,) iterations since the bound last rose
    int64_t iterations,
    double target,
    deadline=None,                  # KernelDeadline (None: the calling thread's)
):
    """Run ``iterations`` subgradient steps; returns the iterations done in this call.

    Every item must fit some agent (``w_ij <= b_i``; the caller checks). An iteration
    evaluates ``L(lam)`` (each item to its first agent of least ``c_ij + lam_i w_ij`` among
    those it fits), keeps it (with ``lam`` and the relaxation's assignment) when it beats
    ``dstate[0]``, halves ``theta`` after 20 iterations without a better bound, and steps
    ``lam_i <- max(0, lam_i + theta (T - L) g_i / |g|^2)`` along the subgradient
    ``g_i = sum_{j -> i} w_ij - b_i`` (components that would stay at 0 left out of the
    norm), with ``T = target`` when it is above ``L``, else ``L + 0.1 |L| + 1``. Stops
    early when the norm is 0 (the relaxation's assignment is feasible and complementary).
    A fresh state (``dstate[2] == 0``) starts with ``theta = 2`` and ``best = -inf``.
    """
    cdef Py_ssize_t m = cost.shape[0]
    cdef Py_ssize_t n = cost.shape[1]
    cdef Py_ssize_t i, j, bi
    cdef double L, v, bv, norm, t, stepsize, theta, best
    cdef int64_t since, done
    cdef vector[double] g
    if (weight.shape[0] != m or weight.shape[1] != n or capacity.shape[0] != m
            or lam.shape[0] != m or best_lam.shape[0] != m or x.shape[0] != n
            or dstate.shape[0] < 3 or istate.shape[0] < 1):
        raise ValueError("subgradient: inconsistent shapes")
    if m == 0:
        return 0
    cdef Poll poll = Poll(deadline_of(deadline), 1)
    with nogil:
        g.assign(m, 0.0)
        if dstate[2] == 0.0:
            dstate[0] = -1e300
            dstate[1] = 2.0
            dstate[2] = 1.0
            istate[0] = 0
            for i in range(m):
                best_lam[i] = lam[i]
        best = dstate[0]
        theta = dstate[1]
        since = istate[0]
        done = 0
        while done < iterations:
            if poll.stop():
                break
            done += 1
            L = 0.0
            for i in range(m):
                L -= lam[i] * <double>capacity[i]
                g[i] = -<double>capacity[i]
            for j in range(n):
                bi = -1
                bv = 0.0
                for i in range(m):
                    if weight[i, j] > capacity[i]:
                        continue
                    v = cost[i, j] + lam[i] * <double>weight[i, j]
                    if bi < 0 or v < bv:
                        bv = v
                        bi = i
                L += bv
                g[bi] += <double>weight[bi, j]
                x[j] = bi
            if L > best:
                best = L
                since = 0
                for i in range(m):
                    best_lam[i] = lam[i]
            else:
                since += 1
                if since >= 20:
                    theta *= 0.5
                    since = 0
            norm = 0.0
            for i in range(m):
                if lam[i] > 0.0 or g[i] > 0.0:
                    norm += g[i] * g[i]
            if norm == 0.0:
                break
            t = target if target > L else L + 0.1 * (L if L > 0 else -L) + 1.0
            stepsize = theta * (t - L) / norm
            for i in range(m):
                lam[i] += stepsize * g[i]
                if lam[i] < 0.0:
                    lam[i] = 0.0
        # the relaxation's assignment at the best multipliers
        for j in range(n):
            bi = -1
            bv = 0.0
            for i in range(m):
                if weight[i, j] > capacity[i]:
                    continue
                v = cost[i, j] + best_lam[i] * <double>weight[i, j]
                if bi < 0 or v < bv:
                    bv = v
                    bi = i
            x[j] = bi
        dstate[0] = best
        dstate[1] = theta
        istate[0] = since
    if poll.stopped():
        coalloc_raise_interrupt()
    return int(done)


def shift_descent(
    const double[:, ::1] cost,      # IN  (m, n)
    const int64_t[:, ::1] weight,   # IN  (m, n)
    const int64_t[::1] capacity,    # IN  (m,)
    int64_t[::1] assign,            # IN/OUT (n,)
    int64_t sweeps,
    deadline=None,                  # KernelDeadline (None: the calling thread's)
):
    """A quick repair and descent by shifts; returns the moves made.

    Each sweep visits the items in order: an item on an overloaded agent moves to the
    cheapest agent it fits (if any), an item on an agent within capacity moves to the
    cheapest agent it fits if that costs less (by more than 1e-12). Stops after ``sweeps``
    sweeps or a sweep without a move. Costs O(m n) per sweep: the cheap first polish of a
    greedy start on large instances, before the tabu search.
    """
    cdef Py_ssize_t m = cost.shape[0]
    cdef Py_ssize_t n = cost.shape[1]
    cdef Py_ssize_t i, j, a, bi
    cdef int64_t s, moved, total = 0
    cdef double bv
    cdef vector[int64_t] used
    if (weight.shape[0] != m or weight.shape[1] != n or capacity.shape[0] != m
            or assign.shape[0] != n):
        raise ValueError("shift_descent: inconsistent shapes")
    if m == 0 or n == 0:
        return 0
    cdef Poll poll = Poll(deadline_of(deadline), 1)
    with nogil:
        used.assign(m, 0)
        for j in range(n):
            used[assign[j]] += weight[assign[j], j]
        for s in range(sweeps):
            if poll.stop():
                break
            moved = 0
            for j in range(n):
                a = assign[j]
                bi = -1
                bv = 0.0
                if used[a] <= capacity[a]:
                    bi = a
                    bv = cost[a, j] - 1e-12
                for i in range(m):
                    if i == a or used[i] + weight[i, j] > capacity[i]:
                        continue
                    if bi < 0 or cost[i, j] < bv:
                        bi = i
                        bv = cost[i, j]
                if bi >= 0 and bi != a:
                    used[a] -= weight[a, j]
                    used[bi] += weight[bi, j]
                    assign[j] = bi
                    moved += 1
            total += moved
            if moved == 0:
                break
    if poll.stopped():
        coalloc_raise_interrupt()
    return int(total)


def knapsack_lagrangian(
    const double[:, ::1] cost,      # IN  (m, n)
    const int64_t[:, ::1] weight,   # IN  (m, n)
    const int64_t[::1] capacity,    # IN  (m,) each at most the caller's DP budget
    double[::1] u,                  # IN/OUT (n,) the multipliers of the assignment rows
    double[::1] best_u,             # IN/OUT (n,) the multipliers of the best bound
    int64_t[::1] cover,             # OUT (n,) agents taking each item at the last step
    double[::1] dstate,             # IN/OUT (3,) best bound, step factor theta, started
    int64_t[::1] istate,            # IN/OUT (1,) iterations since the bound last rose
    int64_t iterations,
    double target,
    deadline=None,                  # KernelDeadline (None: the calling thread's)
):
    """Run ``iterations`` subgradient steps on the Lagrangian relaxation of the assignment
    constraints; returns the iterations done in this call.

    ``L(u) = sum_j u_j - sum_i K_i(u)`` with ``K_i(u)`` the 0-1 knapsack of agent ``i``:
    the most ``sum_j (u_j - c_ij) x_j`` with ``sum_j w_ij x_j <= b_i`` (items with
    ``w_ij > b_i`` or a value of 0 or less left out), a lower bound of the GAP's minimum for
    every ``u`` and never below the LP bound at its best ``u`` (the knapsacks keep their
    integrality). Each knapsack is a dynamic programme over the capacities ``0 .. b_i``
    (O(n b_i) time, ``n (b_i + 1)`` bytes of choices, reused), items in index order, a
    capacity taking an item only when that is strictly better. An iteration keeps ``L``
    (and ``u``) when it beats ``dstate[0]``, halves ``theta`` after 20 iterations without a
    better bound and steps ``u_j <- u_j + theta (T - L) g_j / |g|^2`` along
    ``g_j = 1 - cover_j`` (``T = target`` when above ``L``, else ``L + 0.1 |L| + 1``);
    it stops early when ``g = 0`` (the knapsacks form an assignment: an optimal one). A
    fresh state (``dstate[2] == 0``) starts with ``theta = 2`` and ``best = -inf``.
    """
    cdef Py_ssize_t m = cost.shape[0]
    cdef Py_ssize_t n = cost.shape[1]
    cdef Py_ssize_t i, j, t, nt
    cdef int64_t B, c, w, since, done
    cdef double L, K, v, norm, tt, stepsize, theta, best, gj
    cdef vector[double] dp
    cdef vector[char] take
    cdef vector[Py_ssize_t] items
    if (weight.shape[0] != m or weight.shape[1] != n or capacity.shape[0] != m
            or u.shape[0] != n or best_u.shape[0] != n or cover.shape[0] != n
            or dstate.shape[0] < 3 or istate.shape[0] < 1):
        raise ValueError("knapsack_lagrangian: inconsistent shapes")
    if m == 0 or n == 0:
        return 0
    cdef Poll poll = Poll(deadline_of(deadline), 1)
    with nogil:
        items.reserve(n)
        if dstate[2] == 0.0:
            dstate[0] = -1e300
            dstate[1] = 2.0
            dstate[2] = 1.0
            istate[0] = 0
            for j in range(n):
                best_u[j] = u[j]
        best = dstate[0]
        theta = dstate[1]
        since = istate[0]
        done = 0
        while done < iterations:
            if poll.stop():
                break
            done += 1
            L = 0.0
            for j in range(n):
                L += u[j]
                cover[j] = 0
            for i in range(m):
                B = capacity[i]
                dp.assign(B + 1, 0.0)
                items.clear()
                for j in range(n):
                    if weight[i, j] <= B and u[j] - cost[i, j] > 0.0:
                        items.push_back(j)
                nt = <Py_ssize_t>items.size()
                take.assign(nt * (B + 1), 0)
                for t in range(nt):
                    j = items[t]
                    w = weight[i, j]
                    v = u[j] - cost[i, j]
                    c = B
                    while c >= w:
                        if dp[c - w] + v > dp[c]:
                            dp[c] = dp[c - w] + v
                            take[t * (B + 1) + c] = 1
                        c -= 1
                K = dp[B]
                L -= K
                c = B
                t = nt - 1
                while t >= 0:
                    if take[t * (B + 1) + c]:
                        j = items[t]
                        cover[j] += 1
                        c -= weight[i, j]
                    t -= 1
            if L > best:
                best = L
                since = 0
                for j in range(n):
                    best_u[j] = u[j]
            else:
                since += 1
                if since >= 20:
                    theta *= 0.5
                    since = 0
            norm = 0.0
            for j in range(n):
                gj = 1.0 - <double>cover[j]
                norm += gj * gj
            if norm == 0.0:
                break
            tt = target if target > L else L + 0.1 * (L if L > 0 else -L) + 1.0
            stepsize = theta * (tt - L) / norm
            for j in range(n):
                u[j] += stepsize * (1.0 - <double>cover[j])
        dstate[0] = best
        dstate[1] = theta
        istate[0] = since
    if poll.stopped():
        coalloc_raise_interrupt()
    return int(done)
