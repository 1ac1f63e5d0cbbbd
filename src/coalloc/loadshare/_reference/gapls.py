"""Plain-Python twins of :mod:`coalloc.loadshare._gapls` (the GAP kernels).

The same moves in the same order (shifts by item then agent, then the sampled swaps), the
same arithmetic on Python floats and ints in the same order, the same splitmix64 draws and
the same state arrays, updated in place, so :func:`tabu_search` and :func:`subgradient`
return and leave exactly what the compiled kernels return and leave.
"""

from __future__ import annotations

from ..._shared import interrupt
from ..._shared.xoshiro import SplitMix64

__all__ = ["tabu_search", "subgradient", "shift_descent", "knapsack_lagrangian"]


def _ex(used: int, cap: int) -> int:
    return used - cap if used > cap else 0


_M64 = (1 << 64) - 1


def _zob(i: int, j: int) -> int:
    """Twin of the kernel's ``_zob``: the (agent, item) pair's 64-bit key."""
    z = ((i << 32) ^ j ^ 0x9E3779B97F4A7C15) & _M64
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & _M64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _M64
    return z ^ (z >> 31)


def tabu_search(cost, weight, capacity, state, plan):
    """Twin of ``_gapls.tabu_search`` (the same state and plan objects); returns the
    iterations done in this call."""
    return _tabu_search(cost, weight, capacity, state.assign, state.best, state.alpha,
                        state.tabu_until, state.istate, state.dstate, state.rng,
                        plan.iterations, plan.tenure, plan.restart, plan.swap_items,
                        plan.growth, plan.shake, plan.per_agent, plan.chain,
                        plan.deadline, getattr(plan, "cands", 0),
                        getattr(plan, "mult", None), getattr(plan, "memo", 0),
                        getattr(state, "memo_log", None))  # fmt: skip


def _tabu_search(cost, weight, capacity, assign, best, alpha, tabu_until, istate, dstate, rng,
                 iterations, tenure, restart, swap_items, growth, shake,
                 per_agent, chain, deadline, cands=0, mult=None, memo=0,
                 memo_log=None):  # fmt: skip
    m, n = cost.shape
    if n == 0 or m == 0:
        return 0
    C = [[float(x) for x in row] for row in cost.tolist()]
    W = [[int(x) for x in row] for row in weight.tolist()]
    cap = [int(x) for x in capacity.tolist()]
    a_ = [int(x) for x in assign.tolist()]
    bst = [int(x) for x in best.tolist()]
    al = [float(x) for x in alpha.tolist()]
    tabu = [int(x) for x in tabu_until.tolist()]
    used = [0] * m
    for j in range(n):
        used[a_[j]] += W[a_[j]][j]
    excess = 0
    for i in range(m):
        excess += _ex(used[i], cap[i])
    if int(istate[5]) == 0:
        cur = 0.0
        for j in range(n):
            cur += C[a_[j]][j]
        bst = list(a_)
        csum = wsum = 0.0
        for i in range(m):
            for j in range(n):
                csum += C[i][j] if C[i][j] > 0 else -C[i][j]
                wsum += float(W[i][j])
        a0 = (csum + 1.0) / (wsum + 1.0)
        al = [a0] * m
        tabu = [0] * (m * n)
        it, since, start, best_ex, feasible_found = 0, 0, 0, excess, excess == 0
        best_cost = cur
    else:
        a0 = float(dstate[2])
        it, since, start, best_ex = (int(v) for v in istate[:4].tolist())
        feasible_found = int(istate[4]) != 0
        cur, best_cost = float(dstate[0]), float(dstate[1])
    gen = SplitMix64(int(rng[0]))
    cheap = None  # cands < 0: every item's -cands cheapest agents (by cost, then agent)
    if cands < 0:
        if mult is not None and len(mult) != m:
            raise ValueError(f"plan.mult has {len(mult)} multipliers, not one per agent ({m})")
        lam = None if mult is None else [float(x) for x in mult]  # reduced costs' multipliers

        def key(i, j):
            return (C[i][j] if lam is None else C[i][j] + lam[i] * float(W[i][j]), i)

        cheap = [set(sorted(range(m), key=lambda i: key(i, j))[:-cands]) for j in range(n)]
    step = n // swap_items if swap_items > 0 and n > swap_items else 1
    if start >= step:
        start = 0
    seen = {}  # memo: the visited assignments' hashes -> times held
    L = len(memo_log) - 1 if memo_log is not None and len(memo_log) > 1 else 0
    log = [int(x) for x in memo_log.tolist()] if L > 0 else None  # [written, ring...]

    def remember(h):
        if L > 0:
            pos = log[0] % L
            if log[0] >= L:
                old = log[1 + pos]
                seen[old] -= 1
                if seen[old] <= 0:
                    del seen[old]
            log[1 + pos] = h
            log[0] += 1
        seen[h] = seen.get(h, 0) + 1

    hcur = 0
    if memo > 0:
        for j in range(n):
            hcur ^= _zob(a_[j], j)
        if L > 0 and log[0] > 0:  # the log's last L hashes (the current one among them)
            for q in range(min(log[0], L)):
                seen[log[1 + q]] = seen.get(log[1 + q], 0) + 1
        else:
            remember(hcur)

    def barred(excess_after, cost_after, *moved):  # memo: the move's assignment was visited
        if memo <= 0 or (excess_after == 0 and cost_after < best_cost - 1e-9):
            return False
        h = hcur
        for z in moved:
            h ^= _zob(*z)
        return h in seen

    done = 0
    while done < iterations:
        interrupt.check_kernel(deadline)  # the compiled kernel's poll (twin)
        done += 1
        it += 1
        bd, bdc, bdex, bi, bj, bk, bc, bl, bdd = 1e300, 0.0, 0, -1, -1, -1, -1, -1, -1
        top = [[] for _ in range(n)] if chain >= 1 else None  # (value, agent), the best three
        for j in range(n):
            a = a_[j]
            ea = _ex(used[a], cap[a])
            e2a = _ex(used[a] - W[a][j], cap[a]) - ea
            for i in range(m):
                if i == a:
                    continue
                d_cost = C[i][j] - C[a][j]
                e2b = _ex(used[i] + W[i][j], cap[i]) - _ex(used[i], cap[i])
                d_ex = e2b + e2a
                d = d_cost + al[i] * e2b + al[a] * e2a
                tb = tabu[i * n + j] > it
                if chain >= 1 and not tb:
                    v = C[i][j] + al[i] * e2b
                    q = len(top[j])
                    while q > 0 and v < top[j][q - 1][0]:
                        q -= 1
                    if q < 3:
                        top[j].insert(q, (v, i))
                        del top[j][3:]
                ok = (not tb) or (excess + d_ex == 0 and cur + d_cost < best_cost - 1e-9)
                if ok and d < bd and barred(excess + d_ex, cur + d_cost, (a, j), (i, j)):
                    ok = False
                if ok and d < bd:
                    bd, bdc, bdex, bi, bj, bk = d, d_cost, d_ex, i, j, -1
        two = None
        if chain >= 2:  # every item's three best (value, c, l, d): k to c, l of c to d
            members = [[] for _ in range(m)]
            for j in range(n):
                members[a_[j]].append(j)
            two = [[] for _ in range(n)]
            for k in range(n):
                b = a_[k]
                for _, c in top[k]:
                    for l in members[c]:
                        dd = next((t for _, t in top[l] if t != b), -1)
                        if dd < 0:
                            continue
                        v = (C[c][k] - C[b][k] + C[dd][l] - C[c][l]
                             + al[c] * (_ex(used[c] + W[c][k] - W[c][l], cap[c])
                                        - _ex(used[c], cap[c]))
                             + al[dd] * (_ex(used[dd] + W[dd][l], cap[dd])
                                         - _ex(used[dd], cap[dd])))  # fmt: skip
                        q = len(two[k])
                        while q > 0 and v < two[k][q - 1][0]:
                            q -= 1
                        if q < 3:
                            two[k].insert(q, (v, c, l, dd))
                            del two[k][3:]
        if m > 1:
            j = start
            while j < n:
                a = a_[j]
                ea = _ex(used[a], cap[a])
                # the candidate list: j only to its first ``cands`` shift targets
                allowed = {t for _, t in top[j][:cands]} if cands > 0 and chain >= 1 else None
                allowed = cheap[j] if cheap is not None else allowed
                for k in range(n):
                    b = a_[k]
                    if b == a or (allowed is not None and b not in allowed):
                        continue
                    d_cost = C[b][j] - C[a][j] + C[a][k] - C[b][k]
                    e2a = _ex(used[a] - W[a][j] + W[a][k], cap[a]) - ea
                    e2b = _ex(used[b] - W[b][k] + W[b][j], cap[b]) - _ex(used[b], cap[b])
                    d_ex = e2a + e2b
                    d = d_cost + al[a] * e2a + al[b] * e2b
                    tb = tabu[b * n + j] > it or tabu[a * n + k] > it
                    ok = (not tb) or (excess + d_ex == 0 and cur + d_cost < best_cost - 1e-9)
                    if ok and d < bd and barred(excess + d_ex, cur + d_cost, (a, j), (b, j),
                                                (b, k), (a, k)):  # fmt: skip
                        ok = False
                    if ok and d < bd:
                        bd, bdc, bdex, bi, bj, bk, bc = d, d_cost, d_ex, b, j, k, -1
                    if chain < 1:
                        continue
                    c = next((r for _, r in top[k] if r != a and r != b), -1)
                    if c >= 0:
                        d_cost = C[b][j] - C[a][j] + C[c][k] - C[b][k]
                        e2a = _ex(used[a] - W[a][j], cap[a]) - ea
                        e2b = _ex(used[b] - W[b][k] + W[b][j], cap[b]) - _ex(used[b], cap[b])
                        e2c = _ex(used[c] + W[c][k], cap[c]) - _ex(used[c], cap[c])
                        d_ex = e2a + e2b + e2c
                        d = d_cost + al[a] * e2a + al[b] * e2b + al[c] * e2c
                        tb = tabu[b * n + j] > it
                        ok = (not tb) or (excess + d_ex == 0 and cur + d_cost < best_cost - 1e-9)
                        if ok and d < bd and barred(excess + d_ex, cur + d_cost, (a, j), (b, j),
                                                    (b, k), (c, k)):  # fmt: skip
                            ok = False
                        if ok and d < bd:
                            bd, bdc, bdex, bi, bj, bk, bc, bl = d, d_cost, d_ex, b, j, k, c, -1
                    if chain < 2:
                        continue
                    pick = next((x for x in two[k] if x[1] != a and x[3] != a), None)
                    if pick is None:
                        continue
                    _, c, l, dd = pick
                    d_cost = C[b][j] - C[a][j] + C[c][k] - C[b][k] + C[dd][l] - C[c][l]
                    e2a = _ex(used[a] - W[a][j], cap[a]) - ea
                    e2b = _ex(used[b] - W[b][k] + W[b][j], cap[b]) - _ex(used[b], cap[b])
                    e2c = _ex(used[c] + W[c][k] - W[c][l], cap[c]) - _ex(used[c], cap[c])
                    e2d = _ex(used[dd] + W[dd][l], cap[dd]) - _ex(used[dd], cap[dd])
                    d_ex = e2a + e2b + e2c + e2d
                    d = d_cost + al[a] * e2a + al[b] * e2b + al[c] * e2c + al[dd] * e2d
                    tb = tabu[b * n + j] > it
                    ok = (not tb) or (excess + d_ex == 0 and cur + d_cost < best_cost - 1e-9)
                    if ok and d < bd and barred(excess + d_ex, cur + d_cost, (a, j), (b, j),
                                                (b, k), (c, k), (c, l), (dd, l)):  # fmt: skip
                        ok = False
                    if ok and d < bd:
                        bd, bdc, bdex, bi, bj, bk, bc, bl, bdd = (d, d_cost, d_ex, b, j, k, c,
                                                                  l, dd)  # fmt: skip
                j += step
            start = (start + 1) % step
        if bj < 0:  # no admissible move: the iteration passes, tabu tenures run out
            since += 1
            if since >= restart:
                since = 0
            continue
        a = a_[bj]
        tabu[a * n + bj] = it + tenure + gen.next() % (tenure // 2 + 1)
        if memo > 0:
            hcur ^= _zob(a, bj) ^ _zob(bi, bj)
            if bk >= 0 and bc >= 0:
                hcur ^= _zob(bi, bk) ^ _zob(bc, bk)
                if bl >= 0:
                    hcur ^= _zob(bc, bl) ^ _zob(bdd, bl)
            elif bk >= 0:
                hcur ^= _zob(bi, bk) ^ _zob(a, bk)
            remember(hcur)
        if bk < 0:
            used[a] -= W[a][bj]
            used[bi] += W[bi][bj]
            a_[bj] = bi
        elif bc >= 0:  # an ejection chain: bj from a to bi, bk from bi to bc
            tabu[bi * n + bk] = it + tenure + gen.next() % (tenure // 2 + 1)
            used[a] -= W[a][bj]
            used[bi] += W[bi][bj] - W[bi][bk]
            used[bc] += W[bc][bk]
            a_[bj], a_[bk] = bi, bc
            if bl >= 0:
                tabu[bc * n + bl] = it + tenure + gen.next() % (tenure // 2 + 1)
                used[bc] -= W[bc][bl]
                used[bdd] += W[bdd][bl]
                a_[bl] = bdd
        else:
            b = a_[bk]
            tabu[b * n + bk] = it + tenure + gen.next() % (tenure // 2 + 1)
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
            bst = list(a_)
            since = 0
        if excess > 0 and int(per_agent) == 2:  # YIG: each overloaded weight by its excess
            mxe = max(_ex(used[i], cap[i]) for i in range(m))
            for i in range(m):
                e_i = _ex(used[i], cap[i])
                if e_i > 0:
                    al[i] *= 1.0 + (growth - 1.0) * (float(e_i) / float(mxe))
                    if al[i] > 1e100:
                        al[i] = 1e100
        elif excess > 0:
            for i in range(m):
                if used[i] > cap[i] or int(per_agent) == 0:
                    al[i] *= growth
                    if al[i] > 1e100:
                        al[i] = 1e100
        else:
            for i in range(m):
                al[i] /= growth
                if al[i] < 1e-9:
                    al[i] = 1e-9
        if since >= restart:
            since = 0
            used = [0] * m
            cur = 0.0
            a_ = list(bst)
            al = [a0] * m
            if shake > 0:
                for j in range(n):
                    if gen.next() % shake == 0:
                        a_[j] = gen.next() % m
            for j in range(n):
                used[a_[j]] += W[a_[j]][j]
                cur += C[a_[j]][j]
            excess = 0
            for i in range(m):
                excess += _ex(used[i], cap[i])
            if memo > 0:
                if memo == 2:
                    seen.clear()
                    if L > 0:
                        log[0] = 0
                hcur = 0
                for j in range(n):
                    hcur ^= _zob(a_[j], j)
                remember(hcur)
    assign[:] = a_
    best[:] = bst
    alpha[:] = al
    tabu_until[:] = tabu
    istate[:6] = [it, since, start, best_ex, int(feasible_found), 1]
    dstate[:3] = [cur, best_cost, a0]
    rng[0] = gen.state
    if L > 0:
        memo_log[:] = log
    return int(done)


def subgradient(cost, weight, capacity, lam, best_lam, x, dstate, istate, iterations, target,
                deadline=None):  # fmt: skip
    """Twin of ``_gapls.subgradient``; returns the iterations done in this call."""
    m, n = cost.shape
    if m == 0:
        return 0
    C = [[float(v) for v in row] for row in cost.tolist()]
    W = [[int(v) for v in row] for row in weight.tolist()]
    cap = [int(v) for v in capacity.tolist()]
    la = [float(v) for v in lam.tolist()]
    if float(dstate[2]) == 0.0:
        best, theta, since = -1e300, 2.0, 0
        bl = list(la)
    else:
        best, theta, since = float(dstate[0]), float(dstate[1]), int(istate[0])
        bl = [float(v) for v in best_lam.tolist()]
    xs = [int(v) for v in x.tolist()]
    target = float(target)
    done = 0
    while done < iterations:
        interrupt.check_kernel(deadline)
        done += 1
        L = 0.0
        g = [0.0] * m
        for i in range(m):
            L -= la[i] * float(cap[i])
            g[i] = -float(cap[i])
        for j in range(n):
            bi, bv = -1, 0.0
            for i in range(m):
                if W[i][j] > cap[i]:
                    continue
                v = C[i][j] + la[i] * float(W[i][j])
                if bi < 0 or v < bv:
                    bv, bi = v, i
            L += bv
            g[bi] += float(W[bi][j])
            xs[j] = bi
        if L > best:
            best, since = L, 0
            bl = list(la)
        else:
            since += 1
            if since >= 20:
                theta *= 0.5
                since = 0
        norm = 0.0
        for i in range(m):
            if la[i] > 0.0 or g[i] > 0.0:
                norm += g[i] * g[i]
        if norm == 0.0:
            break
        t = target if target > L else L + 0.1 * (L if L > 0 else -L) + 1.0
        stepsize = theta * (t - L) / norm
        for i in range(m):
            la[i] += stepsize * g[i]
            if la[i] < 0.0:
                la[i] = 0.0
    for j in range(n):
        bi, bv = -1, 0.0
        for i in range(m):
            if W[i][j] > cap[i]:
                continue
            v = C[i][j] + bl[i] * float(W[i][j])
            if bi < 0 or v < bv:
                bv, bi = v, i
        xs[j] = bi
    lam[:] = la
    best_lam[:] = bl
    x[:] = xs
    dstate[:3] = [best, theta, 1.0]
    istate[0] = since
    return int(done)


def shift_descent(cost, weight, capacity, assign, sweeps, deadline=None):
    """Twin of ``_gapls.shift_descent``; returns the moves made."""
    m, n = cost.shape
    if m == 0 or n == 0:
        return 0
    C = [[float(v) for v in row] for row in cost.tolist()]
    W = [[int(v) for v in row] for row in weight.tolist()]
    cap = [int(v) for v in capacity.tolist()]
    a_ = [int(v) for v in assign.tolist()]
    used = [0] * m
    for j in range(n):
        used[a_[j]] += W[a_[j]][j]
    total = 0
    for _ in range(sweeps):
        interrupt.check_kernel(deadline)
        moved = 0
        for j in range(n):
            a = a_[j]
            bi, bv = -1, 0.0
            if used[a] <= cap[a]:
                bi, bv = a, C[a][j] - 1e-12
            for i in range(m):
                if i == a or used[i] + W[i][j] > cap[i]:
                    continue
                if bi < 0 or C[i][j] < bv:
                    bi, bv = i, C[i][j]
            if bi >= 0 and bi != a:
                used[a] -= W[a][j]
                used[bi] += W[bi][j]
                a_[j] = bi
                moved += 1
        total += moved
        if moved == 0:
            break
    assign[:] = a_
    return int(total)


def knapsack_lagrangian(cost, weight, capacity, u, best_u, cover, dstate, istate, iterations,
                        target, deadline=None):  # fmt: skip
    """Twin of ``_gapls.knapsack_lagrangian``; returns the iterations done in this call."""
    m, n = cost.shape
    if m == 0 or n == 0:
        return 0
    C = [[float(v) for v in row] for row in cost.tolist()]
    W = [[int(v) for v in row] for row in weight.tolist()]
    cap = [int(v) for v in capacity.tolist()]
    us = [float(v) for v in u.tolist()]
    if float(dstate[2]) == 0.0:
        best, theta, since = -1e300, 2.0, 0
        bu = list(us)
    else:
        best, theta, since = float(dstate[0]), float(dstate[1]), int(istate[0])
        bu = [float(v) for v in best_u.tolist()]
    cov = [int(v) for v in cover.tolist()]
    target = float(target)
    done = 0
    while done < iterations:
        interrupt.check_kernel(deadline)
        done += 1
        L = 0.0
        for j in range(n):
            L += us[j]
        cov = [0] * n
        for i in range(m):
            B = cap[i]
            dp = [0.0] * (B + 1)
            items = [j for j in range(n) if W[i][j] <= B and us[j] - C[i][j] > 0.0]
            take = []
            for j in items:
                w, v = W[i][j], us[j] - C[i][j]
                row = [False] * (B + 1)
                for c in range(B, w - 1, -1):
                    if dp[c - w] + v > dp[c]:
                        dp[c] = dp[c - w] + v
                        row[c] = True
                take.append(row)
            L -= dp[B]
            c = B
            for t in range(len(items) - 1, -1, -1):
                if take[t][c]:
                    cov[items[t]] += 1
                    c -= W[i][items[t]]
        if L > best:
            best, since = L, 0
            bu = list(us)
        else:
            since += 1
            if since >= 20:
                theta *= 0.5
                since = 0
        norm = 0.0
        for j in range(n):
            gj = 1.0 - float(cov[j])
            norm += gj * gj
        if norm == 0.0:
            break
        t = target if target > L else L + 0.1 * (L if L > 0 else -L) + 1.0
        stepsize = theta * (t - L) / norm
        for j in range(n):
            us[j] += stepsize * (1.0 - float(cov[j]))
    u[:] = us
    best_u[:] = bu
    cover[:] = cov
    dstate[:3] = [best, theta, 1.0]
    istate[0] = since
    return int(done)
