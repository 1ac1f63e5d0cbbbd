"""Plain-Python twin of :mod:`coalloc.loadshare._gapls` (tabu search for the GAP).

The same moves in the same order (shifts by item then agent, then the sampled swaps), the
same arithmetic on Python floats and ints, and the same splitmix64 draws, so
:func:`tabu_search` returns exactly what the compiled kernel returns.
"""

from __future__ import annotations

from ..._shared import interrupt
from ..._shared.xoshiro import SplitMix64

__all__ = ["tabu_search"]


def _ex(used: int, cap: int) -> int:
    return used - cap if used > cap else 0


def tabu_search(cost, weight, capacity, assign, iterations, tenure, restart, swap_items, seed):
    """Twin of ``_gapls.tabu_search``; returns ``(best_cost, feasible, iterations_done)``."""
    m, n = cost.shape
    if n == 0 or m == 0:
        return 0.0, True, 0
    C = [[float(x) for x in row] for row in cost.tolist()]
    W = [[int(x) for x in row] for row in weight.tolist()]
    cap = [int(x) for x in capacity.tolist()]
    a_ = [int(x) for x in assign.tolist()]
    rng = SplitMix64(int(seed))
    used = [0] * m
    tabu_until = [0] * (m * n)
    cur = 0.0
    for j in range(n):
        used[a_[j]] += W[a_[j]][j]
        cur += C[a_[j]][j]
    best_assign = list(a_)
    excess = sum(_ex(used[i], cap[i]) for i in range(m))
    csum = wsum = 0.0
    for i in range(m):
        for j in range(n):
            csum += C[i][j] if C[i][j] > 0 else -C[i][j]
            wsum += float(W[i][j])
    alpha = (csum + 1.0) / (wsum + 1.0)
    best_cost, best_ex = cur, excess
    feasible_found = excess == 0
    step = n // swap_items if swap_items > 0 and n > swap_items else 1
    start = since = it = 0
    while it < iterations:
        interrupt.check()  # the compiled kernel's poll (twin)
        it += 1
        bd, bdc, bdex, bi, bj, bk = 1e300, 0.0, 0, -1, -1, -1
        for j in range(n):
            a = a_[j]
            for i in range(m):
                if i == a:
                    continue
                d_cost = C[i][j] - C[a][j]
                d_ex = (_ex(used[i] + W[i][j], cap[i]) - _ex(used[i], cap[i])
                        + _ex(used[a] - W[a][j], cap[a]) - _ex(used[a], cap[a]))  # fmt: skip
                d = d_cost + alpha * d_ex
                tabu = tabu_until[i * n + j] > it
                ok = (not tabu) or (excess + d_ex == 0 and cur + d_cost < best_cost - 1e-9)
                if ok and d < bd:
                    bd, bdc, bdex, bi, bj, bk = d, d_cost, d_ex, i, j, -1
        if m > 1:
            j = start
            while j < n:
                a = a_[j]
                for k in range(n):
                    b = a_[k]
                    if b == a:
                        continue
                    d_cost = C[b][j] - C[a][j] + C[a][k] - C[b][k]
                    d_ex = (_ex(used[a] - W[a][j] + W[a][k], cap[a]) - _ex(used[a], cap[a])
                            + _ex(used[b] - W[b][k] + W[b][j], cap[b])
                            - _ex(used[b], cap[b]))  # fmt: skip
                    d = d_cost + alpha * d_ex
                    tabu = tabu_until[b * n + j] > it or tabu_until[a * n + k] > it
                    ok = (not tabu) or (excess + d_ex == 0 and cur + d_cost < best_cost - 1e-9)
                    if ok and d < bd:
                        bd, bdc, bdex, bi, bj, bk = d, d_cost, d_ex, b, j, k
                j += step
            start = (start + 1) % step
        if bj < 0:
            break
        a = a_[bj]
        tabu_until[a * n + bj] = it + tenure + rng.next() % (tenure // 2 + 1)
        if bk < 0:
            used[a] -= W[a][bj]
            used[bi] += W[bi][bj]
            a_[bj] = bi
        else:
            b = a_[bk]
            tabu_until[b * n + bk] = it + tenure + rng.next() % (tenure // 2 + 1)
            used[a] += W[a][bk] - W[a][bj]
            used[b] += W[b][bj] - W[b][bk]
            a_[bj], a_[bk] = b, a
        cur += bdc
        excess += bdex
        since += 1
        if (excess == 0 and (not feasible_found or cur < best_cost - 1e-9)) or (
            not feasible_found
            and (excess < best_ex or (excess == best_ex and cur < best_cost - 1e-9))
        ):
            feasible_found = feasible_found or excess == 0
            best_cost, best_ex = cur, excess
            best_assign = list(a_)
            since = 0
        if excess > 0:
            alpha *= 1.05
        else:
            alpha /= 1.05
            if alpha < 1e-9:
                alpha = 1e-9
        if since >= restart:
            since = 0
            used = [0] * m
            cur = 0.0
            a_ = list(best_assign)
            for j in range(n):
                if rng.next() % 20 == 0:
                    a_[j] = rng.next() % m
            for j in range(n):
                used[a_[j]] += W[a_[j]][j]
                cur += C[a_[j]][j]
            excess = sum(_ex(used[i], cap[i]) for i in range(m))
    for j in range(n):
        assign[j] = best_assign[j]
    return float(best_cost), bool(feasible_found), int(it)
