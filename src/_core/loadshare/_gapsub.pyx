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
        std::int64_t key;
        double value;
        std::int64_t index;
        bool operator<(const CoallocSubCand& o) const noexcept {
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
        int64_t key
        double value
        int64_t index
    double coalloc_subgap_now() noexcept nogil

cdef double _TOL = 1e-9


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
):
    """The programme's layers; ``(agents of the items in this order, cost)`` of the
    cheapest assignment costing less than ``bound - 1e-9``, or None (none, a layer over
    ``max_states`` states, or ``until`` passed between two items). ``why[0]``, when given,
    tells them apart: 0 an assignment, 1 none below the bound (every state pruned: a proof),
    2 given up (the state budget or ``until``)."""
    cdef Py_ssize_t k = cost.shape[0]
    cdef Py_ssize_t s = cost.shape[1]
    if (weight.shape[0] != k or weight.shape[1] != s or cap.shape[0] != k
            or lam.shape[0] != k or rest.shape[0] != s + 1 or wrest.shape[0] != s + 1
            or radix.shape[0] != k):
        raise ValueError("subgap_layers: inconsistent shapes")
    cdef double t_until = float(until) if until is not None else 0.0
    cdef bint timed = until is not None
    cdef Poll poll = Poll(deadline_of(deadline), 1)
    cdef int64_t capsum = 0
    cdef Py_ssize_t a, b, p, t, n0, i, ns
    for a in range(k):
        capsum += cap[a]
    cdef vector[int64_t] loads, nloads, parent, choice
    cdef vector[double] value, nvalue
    cdef vector[Py_ssize_t] start   # start[t]: layer t's first entry in parent / choice
    cdef vector[CoallocSubCand] cand
    cdef CoallocSubCand c
    cdef int64_t l, sla, tot, key, wa
    cdef double sl, nv, ca, lim = bound - _TOL
    cdef bint ok, gave_up = False, interrupted = False, pruned = False
    if why is not None and why.shape[0] < 1:
        raise ValueError("subgap_layers: why needs one entry")
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
                    for b in range(k):
                        l = loads[p * k + b] + (wa if b == a else 0)
                        sla = cap[b] - l
                        if sla < 0:
                            ok = False
                            break
                        if b == 0:
                            sl = <double>sla * lam[0]
                        else:
                            sl = sl + <double>sla * lam[b]
                        tot += l
                        key += l * radix[b]
                    if not ok:
                        continue
                    nv = value[p] + ca
                    if not ((nv + rest[t + 1]) - sl < lim):
                        continue
                    if capsum - tot < wrest[t + 1]:
                        continue
                    c.key = key
                    c.value = nv
                    c.index = a * n0 + p
                    cand.push_back(c)
            if cand.size() == 0:  # every state pruned: none below the bound (a proof)
                pruned = True
                break
            sort(cand.begin(), cand.end())
            ns = 0
            for i in range(<Py_ssize_t>cand.size()):
                if i == 0 or cand[i].key != cand[i - 1].key:
                    ns += 1
            if ns > max_states:
                gave_up = True
                break
            start.push_back(parent.size())
            nloads.resize(ns * k)
            nvalue.resize(ns)
            ns = 0
            for i in range(<Py_ssize_t>cand.size()):
                if i > 0 and cand[i].key == cand[i - 1].key:
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
