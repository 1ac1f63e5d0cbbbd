# cython: language_level=3
# distutils: language = c++
"""Compiled layer loop of the GAP's exact re-optimisation of a few agents (issue 40,
h50gap; :func:`coalloc.loadshare.gap.subgap.solve_subgap` prepares its arrays).

The dynamic programme over the sub-problem's items (already in the caller's order), whose
states are the k agents' load vectors, pruned by the Lagrangian bound against ``bound``;
states of equal loads keep the cheapest (ties: the first candidate, candidates numbered
``agent * states + parent``), and a layer's states are in increasing key
``sum_a load_a radix_a``. The same layer for layer, bit for bit, as its NumPy twin
:func:`coalloc.loadshare._reference.gapsub.subgap_layers` (a sort of (key, cost, index) per
layer reproduces the twin's ``lexsort``; the pruning sum is accumulated agent by agent in
the twin's order).

With ``knap`` (h63prog), a state is pruned by the knapsack bound of the items still to
place in place of the Lagrangian one: for any item multipliers ``mu`` (free in sign), a
completion giving the items ``u > t`` to agents within their residual capacities ``r_b``
costs ``sum_u mu_u + sum_b sum_{u to b} (c_bu - mu_u) >= sum_u mu_u + sum_b f_b(t + 1, r_b)``,
where ``f_b(t, r)`` is the least ``sum (c_bu - mu_u)`` over subsets of the items ``t..``
weighing at most ``r`` on agent b (a 0-1 knapsack, :func:`knapsack_tables`): the items
given to b are one such subset. So a state whose cost plus that sum is not below the
bound cannot lead to an assignment below it (exact, for every ``mu``). With ``mu_u = min_a
(c_au + lam_a w_au)`` it is never weaker than the Lagrangian bound (``f_b(t, r) >= -lam_b r``).

With ``split < k`` (h63prog) the key is two words, ``(sum_{a >= split} load_a radix_a,
sum_{a < split} load_a radix_a)`` in that (lexicographic) order, each below 2^63: load
vectors of up to 124 bits (ten agents of capacity 80). ``split = k`` is the one word.
"""

import numpy as np

from libc.stdint cimport int64_t
from libcpp.vector cimport vector
from libcpp.algorithm cimport sort

from coalloc.common.interrupt cimport Poll, coalloc_raise_interrupt, deadline_of

cdef extern from *:
    """
    #include <chrono>
    #include <cstdint>
    struct CoallocSubCand {
        std::int64_t hi;
        std::int64_t key;
        double value;
        std::int64_t index;
        bool operator<(const CoallocSubCand& o) const noexcept {
            if (hi != o.hi) return hi < o.hi;
            if (key != o.key) return key < o.key;
            if (value != o.value) return value < o.value;
            return index < o.index;
        }
    };
    // seconds of CLOCK_MONOTONIC: the clock of Python's time.perf_counter on Linux
    static inline double coalloc_subgap_now() noexcept {
        return std::chrono::duration<double>(
            std::chrono::steady_clock::now().time_since_epoch()).count();
    }
    """
    cdef cppclass CoallocSubCand:
        int64_t hi
        int64_t key
        double value
        int64_t index
    double coalloc_subgap_now() noexcept nogil

cdef double _TOL = 1e-9


def knapsack_tables(
    const double[:, ::1] cost,      # IN (k, s) the items in the programme's order
    const int64_t[:, ::1] weight,   # IN (k, s)
    const int64_t[::1] cap,         # IN (k,) >= 0
    const double[::1] mu,           # IN (s,) item multipliers (any sign)
    const int64_t[::1] koff,        # IN (k,) agent a's table starts at koff[a]
    double[::1] table,              # OUT f_a(t, r) at koff[a] + t (cap[a] + 1) + r
    signed char[:, ::1] pick=None,  # OUT (k, s) when given: the knapsacks at t = 0, r = cap
):
    """Each agent's 0-1 knapsack over the items' suffixes: ``f_a(t, r)``, the least
    ``sum_{u in S} (cost[a, u] - mu[u])`` over subsets S of the items ``t..s-1`` of weight
    at most ``r`` on agent a (``f_a(s, r) = 0``; ``f_a(t, r) = min(f_a(t + 1, r),
    f_a(t + 1, r - w) + d)`` when ``d = cost - mu < 0`` and ``w <= r``, the sum first, the
    strict ``<`` choosing). ``pick[a, u]``: whether item u is in agent a's subset at
    ``f_a(0, cap[a])`` (the first items first, taken when the value changes). The same bit
    for bit as the twin's."""
    cdef Py_ssize_t k = cost.shape[0]
    cdef Py_ssize_t s = cost.shape[1]
    if (weight.shape[0] != k or weight.shape[1] != s or cap.shape[0] != k
            or mu.shape[0] != s or koff.shape[0] != k):
        raise ValueError("knapsack_tables: inconsistent shapes")
    cdef Py_ssize_t a, t, r, row, base, w
    for a in range(k):
        if cap[a] < 0 or koff[a] < 0 or koff[a] + (s + 1) * (cap[a] + 1) > table.shape[0]:
            raise ValueError("knapsack_tables: the table is too short")
    if pick is not None and (pick.shape[0] != k or pick.shape[1] != s):
        raise ValueError("knapsack_tables: inconsistent shapes")
    cdef double d, v
    with nogil:
        for a in range(k):
            row = cap[a] + 1
            base = koff[a]
            for r in range(row):
                table[base + s * row + r] = 0.0
            for t in range(s - 1, -1, -1):
                w = weight[a, t]
                d = cost[a, t] - mu[t]
                for r in range(row):
                    v = table[base + (t + 1) * row + r]
                    if d < 0.0 and w <= r:
                        if table[base + (t + 1) * row + r - w] + d < v:
                            v = table[base + (t + 1) * row + r - w] + d
                    table[base + t * row + r] = v
            if pick is not None:
                r = cap[a]
                for t in range(s):
                    if table[base + t * row + r] != table[base + (t + 1) * row + r]:
                        pick[a, t] = 1
                        r -= weight[a, t]
                    else:
                        pick[a, t] = 0


def subgap_layers(
    const double[:, ::1] cost,      # IN (k, s) the items in the programme's order
    const int64_t[:, ::1] weight,   # IN (k, s)
    const int64_t[::1] cap,         # IN (k,)
    const double[::1] lam,          # IN (k,) multipliers >= 0
    const double[::1] rest,         # IN (s + 1,) the least reduced costs of items t.. on
    const int64_t[::1] wrest,       # IN (s + 1,) the least weights of items t.. on
    const int64_t[::1] radix,       # IN (k,) the load vector's key weights
    double bound,
    int64_t max_states,
    until=None,                     # a time.perf_counter() value: passed, None (given up)
    deadline=None,                  # KernelDeadline (None: the calling thread's)
    int64_t[::1] why=None,          # OUT (1,) when given: 0 found, 1 none (a proof), 2 given up
    const double[::1] knap=None,    # IN knapsack_tables' table (None: the Lagrangian bound)
    const int64_t[::1] koff=None,   # IN (k,) its offsets
    const double[::1] murest=None,  # IN (s + 1,) the sums of mu over items t.. on
    Py_ssize_t split=-1,            # agents split.. in the key's second word (-1: k, one word)
):
    """The programme's layers; ``(agents of the items in this order, cost)`` of the
    cheapest assignment costing less than ``bound - 1e-9``, or None (none, a layer over
    ``max_states`` states, or ``until`` passed between two items). ``why[0]``, when given,
    tells them apart: 0 an assignment, 1 none below the bound (every state pruned: a proof),
    2 given up (the state budget or ``until``). With ``knap``, ``koff`` and ``murest``
    (:func:`knapsack_tables` of the same items), states are pruned by the knapsack bound
    ``(cost + murest[t + 1]) + sum_b f_b(t + 1, cap_b - load_b)`` (summed agent by agent)
    instead of the Lagrangian one (``lam`` and ``rest`` unused). With ``split`` in
    ``0..k-1``, agents ``split..`` are keyed in a second word compared first (``radix``
    starting again at agent ``split``); the states in increasing (second, first) word."""
    cdef Py_ssize_t k = cost.shape[0]
    cdef Py_ssize_t s = cost.shape[1]
    if (weight.shape[0] != k or weight.shape[1] != s or cap.shape[0] != k
            or lam.shape[0] != k or rest.shape[0] != s + 1 or wrest.shape[0] != s + 1
            or radix.shape[0] != k):
        raise ValueError("subgap_layers: inconsistent shapes")
    cdef bint use_knap = knap is not None
    if use_knap != (koff is not None) or use_knap != (murest is not None):
        raise ValueError("subgap_layers: knap, koff and murest go together")
    cdef Py_ssize_t kb_i
    cdef double t_until = float(until) if until is not None else 0.0
    cdef bint timed = until is not None
    cdef Poll poll = Poll(deadline_of(deadline), 1)
    cdef int64_t capsum = 0
    cdef Py_ssize_t a, b, p, t, n0, i, ns
    for a in range(k):
        capsum += cap[a]
    if use_knap:
        if koff.shape[0] != k or murest.shape[0] != s + 1:
            raise ValueError("subgap_layers: inconsistent shapes")
        for a in range(k):
            if cap[a] < 0 or koff[a] < 0 or koff[a] + (s + 1) * (cap[a] + 1) > knap.shape[0]:
                raise ValueError("subgap_layers: the knapsack table is too short")
    cdef vector[int64_t] loads, nloads, parent, choice
    cdef vector[double] value, nvalue
    cdef vector[Py_ssize_t] start   # start[t]: layer t's first entry in parent / choice
    cdef vector[CoallocSubCand] cand
    cdef CoallocSubCand c
    cdef int64_t l, sla, tot, key, hi, wa
    cdef double sl, nv, ca, lim = bound - _TOL
    cdef bint ok, gave_up = False, interrupted = False, pruned = False
    if why is not None and why.shape[0] < 1:
        raise ValueError("subgap_layers: why needs one entry")
    if split < 0 or split > k:
        split = k
    loads.assign(k, 0)
    value.assign(1, 0.0)
    with nogil:
        for t in range(s):
            if timed and coalloc_subgap_now() >= t_until:
                gave_up = True
                break
            if poll.stop():
                interrupted = True
                break
            n0 = value.size()
            cand.clear()
            for a in range(k):
                wa = weight[a, t]
                ca = cost[a, t]
                for p in range(n0):
                    ok = True
                    sl = 0.0
                    tot = 0
                    key = 0
                    hi = 0
                    for b in range(k):
                        l = loads[p * k + b] + (wa if b == a else 0)
                        sla = cap[b] - l
                        if sla < 0:
                            ok = False
                            break
                        if use_knap:
                            kb_i = koff[b] + (t + 1) * (cap[b] + 1) + sla
                            if b == 0:
                                sl = knap[kb_i]
                            else:
                                sl = sl + knap[kb_i]
                        elif b == 0:
                            sl = <double>sla * lam[0]
                        else:
                            sl = sl + <double>sla * lam[b]
                        tot += l
                        if b < split:
                            key += l * radix[b]
                        else:
                            hi += l * radix[b]
                    if not ok:
                        continue
                    nv = value[p] + ca
                    if use_knap:
                        if not ((nv + murest[t + 1]) + sl < lim):
                            continue
                    elif not ((nv + rest[t + 1]) - sl < lim):
                        continue
                    if capsum - tot < wrest[t + 1]:
                        continue
                    c.key = key
                    c.hi = hi
                    c.value = nv
                    c.index = a * n0 + p
                    cand.push_back(c)
            if cand.size() == 0:  # every state pruned: none below the bound (a proof)
                pruned = True
                break
            sort(cand.begin(), cand.end())
            ns = 0
            for i in range(<Py_ssize_t>cand.size()):
                if i == 0 or cand[i].key != cand[i - 1].key or cand[i].hi != cand[i - 1].hi:
                    ns += 1
            if ns > max_states:
                gave_up = True
                break
            start.push_back(parent.size())
            nloads.resize(ns * k)
            nvalue.resize(ns)
            ns = 0
            for i in range(<Py_ssize_t>cand.size()):
                if i > 0 and cand[i].key == cand[i - 1].key and cand[i].hi == cand[i - 1].hi:
                    continue
                p = cand[i].index % n0
                a = cand[i].index // n0
                for b in range(k):
                    nloads[ns * k + b] = loads[p * k + b] + (weight[a, t] if b == a else 0)
                nvalue[ns] = cand[i].value
                parent.push_back(p)
                choice.push_back(a)
                ns += 1
            loads.swap(nloads)
            value.swap(nvalue)
    if interrupted:
        coalloc_raise_interrupt()
    if gave_up or pruned:
        if why is not None:
            why[0] = 2 if gave_up else 1
        return None
    cdef Py_ssize_t best = 0
    for i in range(1, <Py_ssize_t>value.size()):
        if value[i] < value[best]:
            best = i
    cdef double z = value[best]
    if not z < lim:
        if why is not None:
            why[0] = 1
        return None
    if why is not None:
        why[0] = 0
    to = np.empty(s, dtype=np.int64)
    cdef int64_t[::1] tov = to
    for t in range(s - 1, -1, -1):
        tov[t] = choice[start[t] + best]
        best = parent[start[t] + best]
    return to, z
