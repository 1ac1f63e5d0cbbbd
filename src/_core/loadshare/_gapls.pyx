# cython: language_level=3
# distutils: language = c++
"""Tabu search with a penalised capacity excess for the generalized assignment problem.

Minimisation (the caller negates profits). The state is an assignment of every item to an
agent; the search value is ``cost + alpha * excess`` where ``excess`` is the summed
capacity overload (weights are int64, usage sums never overflow for validated input) and
``alpha`` adapts (times 1.05 while infeasible, divided by 1.05 while feasible, as in
Yagiura et al.'s strategic oscillation). Each iteration applies the best non-tabu shift or
swap (aspiration: a move giving a feasible assignment better than the best one); the item
that leaves agent ``i`` may not return to ``i`` for ``tenure`` iterations (plus a random 0..
``tenure // 2``). After ``restart`` iterations without a new best, the search restarts from
the best assignment with random shifts. Ties are broken by the first move found; the random
draws come from splitmix64 of ``seed``. The NumPy twin is
:mod:`coalloc.loadshare._reference.gapls`.
"""

from libc.stdint cimport int64_t, uint64_t
from libcpp.vector cimport vector

from coalloc.common.interrupt cimport Poll, coalloc_raise_interrupt
from coalloc.common.xoshiro cimport splitmix64


cdef inline int64_t _ex(int64_t used, int64_t cap) noexcept nogil:
    return used - cap if used > cap else 0


def tabu_search(
    const double[:, ::1] cost,      # IN  (m, n)
    const int64_t[:, ::1] weight,   # IN  (m, n)
    const int64_t[::1] capacity,    # IN  (m,)
    int64_t[::1] assign,            # IN/OUT (n,) start; on return the best assignment found
    int64_t iterations,
    int64_t tenure,
    int64_t restart,
    int64_t swap_items,
    uint64_t seed,
):
    """Run the search; returns ``(best_cost, feasible, iterations_done)``.

    ``assign`` holds the start (any agents) and receives the best feasible assignment
    found (or, when none was feasible, the one with the least excess, then cost).
    ``swap_items``: swaps are tried for the items ``t, t + step, ...`` (``step = max(1,
    n // swap_items)``, ``t`` cycling) against every other item.
    """
    cdef Py_ssize_t m = cost.shape[0]
    cdef Py_ssize_t n = cost.shape[1]
    cdef Py_ssize_t i, j, k, a, b, bi, bj, bk
    cdef int64_t it, excess, d_ex, best_ex, step, start, since
    cdef double cur, alpha, d, bd, best_cost, d_cost, bdc
    cdef int64_t bdex, moves_kind
    cdef uint64_t state = seed
    cdef bint feasible_found = False, tabu, ok
    cdef vector[int64_t] used, best_assign, tabu_until
    cdef double csum = 0.0
    cdef double wsum = 0.0
    if weight.shape[0] != m or weight.shape[1] != n or capacity.shape[0] != m:
        raise ValueError("tabu_search: inconsistent shapes")
    if assign.shape[0] != n:
        raise ValueError("tabu_search: assign must have one entry per item")
    if n == 0 or m == 0:
        return 0.0, True, 0
    cdef Poll poll = Poll(1)
    with nogil:
        used.assign(m, 0)
        tabu_until.assign(m * n, 0)
        best_assign.assign(n, 0)
        cur = 0.0
        for j in range(n):
            used[assign[j]] += weight[assign[j], j]
            cur += cost[assign[j], j]
            best_assign[j] = assign[j]
        excess = 0
        for i in range(m):
            excess += _ex(used[i], capacity[i])
        for i in range(m):
            for j in range(n):
                csum += cost[i, j] if cost[i, j] > 0 else -cost[i, j]
                wsum += <double>weight[i, j]
        alpha = (csum + 1.0) / (wsum + 1.0)
        best_cost = cur
        best_ex = excess
        feasible_found = excess == 0
        step = n // swap_items if swap_items > 0 and n > swap_items else 1
        start = 0
        since = 0
        it = 0
        while it < iterations:
            if poll.stop():
                break
            it += 1
            bd = 1e300
            bdc = 0.0
            bdex = 0
            bi = -1
            bj = -1
            bk = -1
            # shifts: item j to agent i
            for j in range(n):
                a = assign[j]
                for i in range(m):
                    if i == a:
                        continue
                    d_cost = cost[i, j] - cost[a, j]
                    d_ex = (_ex(used[i] + weight[i, j], capacity[i]) - _ex(used[i], capacity[i])
                            + _ex(used[a] - weight[a, j], capacity[a]) - _ex(used[a], capacity[a]))
                    d = d_cost + alpha * d_ex
                    tabu = tabu_until[i * n + j] > it
                    ok = (not tabu) or (excess + d_ex == 0 and cur + d_cost < best_cost - 1e-9)
                    if ok and d < bd:
                        bd = d
                        bdc = d_cost
                        bdex = d_ex
                        bi = i
                        bj = j
                        bk = -1
            # swaps: items j (sampled) and k exchange agents
            if m > 1:
                j = start
                while j < n:
                    a = assign[j]
                    for k in range(n):
                        b = assign[k]
                        if b == a:
                            continue
                        d_cost = cost[b, j] - cost[a, j] + cost[a, k] - cost[b, k]
                        d_ex = (_ex(used[a] - weight[a, j] + weight[a, k], capacity[a])
                                - _ex(used[a], capacity[a])
                                + _ex(used[b] - weight[b, k] + weight[b, j], capacity[b])
                                - _ex(used[b], capacity[b]))
                        d = d_cost + alpha * d_ex
                        tabu = tabu_until[b * n + j] > it or tabu_until[a * n + k] > it
                        ok = (not tabu) or (excess + d_ex == 0 and cur + d_cost < best_cost - 1e-9)
                        if ok and d < bd:
                            bd = d
                            bdc = d_cost
                            bdex = d_ex
                            bi = b
                            bj = j
                            bk = k
                    j += step
                start = (start + 1) % step
            if bj < 0:
                break
            # apply
            a = assign[bj]
            tabu_until[a * n + bj] = it + tenure + <int64_t>(splitmix64(state) % <uint64_t>(tenure // 2 + 1))
            if bk < 0:
                used[a] -= weight[a, bj]
                used[bi] += weight[bi, bj]
                assign[bj] = bi
            else:
                b = assign[bk]
                tabu_until[b * n + bk] = it + tenure + <int64_t>(splitmix64(state) % <uint64_t>(tenure // 2 + 1))
                used[a] += weight[a, bk] - weight[a, bj]
                used[b] += weight[b, bj] - weight[b, bk]
                assign[bj] = b
                assign[bk] = a
            cur += bdc
            excess += bdex
            since += 1
            if (excess == 0 and (not feasible_found or cur < best_cost - 1e-9)) or (
                    not feasible_found and (excess < best_ex or (excess == best_ex and cur < best_cost - 1e-9))):
                feasible_found = feasible_found or excess == 0
                best_cost = cur
                best_ex = excess
                for j in range(n):
                    best_assign[j] = assign[j]
                since = 0
            if excess > 0:
                alpha *= 1.05
            else:
                alpha /= 1.05
                if alpha < 1e-9:
                    alpha = 1e-9
            if since >= restart:
                since = 0
                for i in range(m):
                    used[i] = 0
                cur = 0.0
                for j in range(n):
                    assign[j] = best_assign[j]
                for j in range(n):
                    if splitmix64(state) % 20 == 0:
                        assign[j] = <int64_t>(splitmix64(state) % <uint64_t>m)
                for j in range(n):
                    used[assign[j]] += weight[assign[j], j]
                    cur += cost[assign[j], j]
                excess = 0
                for i in range(m):
                    excess += _ex(used[i], capacity[i])
        for j in range(n):
            assign[j] = best_assign[j]
    if poll.stopped():
        coalloc_raise_interrupt()
    return float(best_cost), bool(feasible_found), int(it)
