"""The compiled local search ``coalloc.ctaap._localsearch`` against its brute-force twin."""

from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest
import scipy.sparse as sp

import coalloc
from coalloc.ctaap._localsearch import count_moves, improve, list_moves
from coalloc.ctaap._reference.localsearch import (
    conflict_tensor,
    find_moves_reference,
    improve_reference,
    is_feasible,
    is_local_optimum_reference,
)
from coalloc.ctaap.model import KernelLinks, compatibility

# ----------------------------------------------------------------------------- helpers


def kernel(args):
    """The kernels' arguments from the flat tuple these tests build: the six CSR arrays as
    one ``KernelLinks``, then ``bhat, allowed, capacity``."""
    return (KernelLinks(*args[:6]), *args[6:])


def csr_args(b):
    """(indptr, indices, data, t_indptr, t_indices, t_data) of a matrix."""
    mat = sp.csr_array(b)
    mat.sort_indices()
    t = sp.csr_array(mat.T)
    t.sort_indices()
    return tuple(
        np.ascontiguousarray(x, dtype=dt)
        for x, dt in [
            (mat.indptr, np.int64), (mat.indices, np.int64), (mat.data, np.float64),
            (t.indptr, np.int64), (t.indices, np.int64), (t.data, np.float64),
        ]
    )  # fmt: skip


def random_case(rng, n_max=12, m_max=4):
    """Small random instance: asymmetric or symmetric links, asymmetric offer, ties."""
    n, m = int(rng.integers(0, n_max + 1)), int(rng.integers(1, m_max + 1))
    b = rng.integers(1, 10, (n, n)) * (rng.random((n, n)) < rng.uniform(0.1, 1.0))
    np.fill_diagonal(b, 0)
    if rng.random() < 0.5:
        b = np.triu(b) + np.triu(b, 1).T
    bhat = rng.integers(0, 12, (m, m)).astype(np.float64)
    if rng.random() < 0.5:
        bhat = np.triu(bhat) + np.triu(bhat, 1).T
    allowed = (rng.random((n, m)) < rng.uniform(0.3, 1.0)).astype(np.uint8)
    capacity = rng.integers(0, max(2, n // 2), m).astype(np.int64)
    return csr_args(b.astype(np.float64)) + (bhat, allowed, capacity)


def random_feasible(rng, args, fill=None):
    """A random feasible allocation, greedy in random order, stopped at a random size."""
    conflict = conflict_tensor(*args[:7])
    allowed, capacity = args[7].astype(bool) & (args[8] > 0), args[8]
    n, m = allowed.shape
    a = np.full(n, -1, dtype=np.int64)
    target = int(rng.integers(0, n + 1)) if fill is None else n
    for k in rng.permutation(n):
        if (a >= 0).sum() >= target:
            break
        for l in rng.permutation(m):
            a[k] = l
            if is_feasible(conflict, allowed, capacity, a):
                break
            a[k] = -1
    return a


def check_feasible(args, a):
    conflict = conflict_tensor(*args[:7])
    allowed = args[7].astype(bool) & (args[8] > 0)
    assert a.dtype == np.int64
    assert is_feasible(conflict, allowed, args[8], a), "allocation is infeasible"


def fig2_args(r, seed):
    req, off = coalloc.generators.fig2(r, seed=seed)
    B, BT = req.bandwidth, req.bandwidth_transpose
    args = (
        B.indptr, B.indices, B.data, BT.indptr, BT.indices, BT.data,
        off.bandwidth, compatibility(req, off).view(np.uint8), off.capacity,
    )  # fmt: skip
    return req, off, args


# ------------------------------------------------------------- move counting parity


def test_count_moves_matches_brute_force():
    rng = np.random.default_rng(1)
    total_ins = total_sw = 0
    for _ in range(300):
        args = random_case(rng)
        a = random_feasible(rng, args)
        ins, sw = find_moves_reference(*kernel(args), a)
        assert count_moves(*kernel(args), a) == (len(ins), len(sw))
        got_ins, got_sw = list_moves(*kernel(args), a)
        assert sorted(map(tuple, got_ins.tolist())) == sorted(ins)
        assert sorted(map(tuple, got_sw.tolist())) == sorted(sw)
        total_ins += len(ins)
        total_sw += len(sw)
    assert total_ins > 100 and total_sw > 100  # the cases do exercise both moves


def test_count_moves_at_maximal_allocations():
    """Maximal allocations (no insertion left): the (1,2) swaps are the interesting part."""
    rng = np.random.default_rng(2)
    swaps = 0
    for _ in range(150):
        args = random_case(rng, n_max=14, m_max=3)
        a = random_feasible(rng, args, fill=True)
        ins, sw = find_moves_reference(*kernel(args), a)
        assert not ins
        assert count_moves(*kernel(args), a) == (0, len(sw))
        swaps += len(sw)
    assert swaps > 20


def test_count_moves_many_clusters_and_sparse_path():
    """m > 8 (no conflict bit masks) and n > 1024 (no dense link index) code paths."""
    rng = np.random.default_rng(3)
    for _ in range(40):
        n, m = int(rng.integers(2, 10)), int(rng.integers(9, 12))
        b = rng.integers(1, 10, (n, n)) * (rng.random((n, n)) < 0.7)
        np.fill_diagonal(b, 0)
        args = csr_args(b.astype(float)) + (
            rng.integers(0, 12, (m, m)).astype(float),
            (rng.random((n, m)) < 0.6).astype(np.uint8),
            rng.integers(0, 3, m).astype(np.int64),
        )
        a = random_feasible(rng, args)
        ins, sw = find_moves_reference(*kernel(args), a)
        assert count_moves(*kernel(args), a) == (len(ins), len(sw))
    # n = 1100, a few links among the first tasks; the rest are isolated.
    n, m = 1100, 2
    b = sp.lil_array((n, n))
    for i, k in [(0, 1), (1, 2), (2, 0), (3, 0), (0, 3)]:
        b[i, k] = 5.0
    args = csr_args(sp.csr_array(b)) + (
        np.array([[1.0, 9.0], [9.0, 1.0]]),
        np.ones((n, m), np.uint8),
        np.array([3, n], dtype=np.int64),
    )
    a = np.full(n, -1, dtype=np.int64)
    a[[0, 1, 2]] = [0, 1, 1]  # 1 and 2 share cluster 1: 5 > 1 conflicts
    with pytest.raises(ValueError, match="bandwidth"):
        count_moves(*kernel(args), a)
    a[2] = -1
    n_ins, n_sw = count_moves(*kernel(args), a)
    assert n_ins == 2 * (n - 4) + 1  # isolated tasks anywhere; task 3 in cluster 1
    improve(*kernel(args), a, max_iters=20, seed=0)
    # Each cluster holds no linked pair: of the triangle 0-1-2 (+ 3 on 0) three fit.
    assert (a >= 0).sum() == n - 1
    assert count_moves(*kernel(args), a) == (0, 0)


# ----------------------------------------------------------------------- the search


def test_improve_random_instances_local_optimum():
    rng = np.random.default_rng(4)
    for it in range(120):
        args = random_case(rng)
        a0 = random_feasible(rng, args)
        a = a0.copy()
        prio = rng.random(args[7].shape) if it % 2 else None
        c = improve(*kernel(args), a, max_iters=int(rng.integers(0, 60)), seed=it, priority=prio,
                    self_check=True)  # fmt: skip
        check_feasible(args, a)
        assert (a >= 0).sum() == c["best_size"] >= c["initial_size"] == (a0 >= 0).sum()
        assert count_moves(*kernel(args), a) == (0, 0)
        assert is_local_optimum_reference(*kernel(args), a)


def test_improve_is_deterministic_and_seeded():
    req, off, args = fig2_args(2, 200003)
    start = coalloc.solve(req, off).assignment.astype(np.int64)
    results = []
    for seed in [5, 5, 6]:
        a = start.copy()
        c = improve(*kernel(args), a, max_iters=300, seed=seed)
        results.append((a.copy(), c))
    assert np.array_equal(results[0][0], results[1][0]) and results[0][1] == results[1][1]
    assert results[0][1] != results[2][1]  # another seed takes another path
    # Any Python int is a seed (modulo 2**64).
    a, b = start.copy(), start.copy()
    improve(*kernel(args), a, max_iters=50, seed=-1)
    improve(*kernel(args), b, max_iters=50, seed=2**64 - 1)
    assert np.array_equal(a, b)


@pytest.mark.parametrize("r", [1, 3, 5])
def test_improve_fig2_from_ctaap(r):
    for k in range(4):
        req, off, args = fig2_args(r, 100000 * r + k)
        res = coalloc.solve(req, off)
        a = res.assignment.astype(np.int64).copy()
        c = improve(*kernel(args), a, max_iters=400, seed=k, priority=res.weights)
        assert coalloc.verify(req, off, a).feasible
        assert (a >= 0).sum() == c["best_size"] >= res.n_allocated
        assert count_moves(*kernel(args), a) == (0, 0)
        assert is_local_optimum_reference(*kernel(args), a)


def test_improve_fig2_self_check():
    req, off, args = fig2_args(1, 100007)
    a = coalloc.solve(req, off).assignment.astype(np.int64)
    improve(*kernel(args), a, max_iters=60, seed=1, self_check=True)
    assert coalloc.verify(req, off, a).feasible


def brute_force_optimum(args):
    conflict = conflict_tensor(*args[:7])
    allowed, capacity = args[7].astype(bool) & (args[8] > 0), args[8]
    n, m = allowed.shape
    best = 0
    for code in range((m + 1) ** n):
        a = np.array([(code // (m + 1) ** t) % (m + 1) - 1 for t in range(n)], dtype=np.int64)
        size = int((a >= 0).sum())
        if size > best and is_feasible(conflict, allowed, capacity, a):
            best = size
    return best


def test_improve_finds_optimum_of_tiny_instances():
    rng = np.random.default_rng(7)
    for it in range(25):
        n, m = int(rng.integers(1, 7)), int(rng.integers(1, 4))
        b = rng.integers(1, 10, (n, n)) * (rng.random((n, n)) < 0.8)
        np.fill_diagonal(b, 0)
        args = csr_args(b.astype(float)) + (
            rng.integers(0, 12, (m, m)).astype(float),
            (rng.random((n, m)) < 0.8).astype(np.uint8),
            rng.integers(0, 4, m).astype(np.int64),
        )
        a = np.full(n, -1, dtype=np.int64)
        improve(*kernel(args), a, max_iters=300, seed=it)
        check_feasible(args, a)
        assert (a >= 0).sum() == brute_force_optimum(args)


def test_twin_improve_keeps_feasibility_and_reaches_local_optimum():
    rng = np.random.default_rng(8)
    for it in range(25):
        args = random_case(rng, n_max=10, m_max=3)
        a0 = random_feasible(rng, args)
        a = a0.copy()
        c = improve_reference(*kernel(args), a, max_iters=15, seed=it,
                              priority=rng.random(args[7].shape))  # fmt: skip
        check_feasible(args, a)
        assert (a >= 0).sum() == c["best_size"] >= (a0 >= 0).sum()
        assert is_local_optimum_reference(*kernel(args), a)
        assert count_moves(*kernel(args), a) == (0, 0)


@pytest.mark.parametrize("block", range(4))
def test_improve_equals_twin_exactly(block):
    """The twin follows the kernel move for move: equal allocation and counters on random
    instances (up to 14 tasks, 1..10 clusters: both conflict representations of the kernel,
    m <= 8 and m > 8), random feasible starts, priorities that tie (none, rounded, or
    continuous), random 64-bit seeds and round counts."""
    rng = np.random.default_rng(7100 + block)
    for it in range(100):
        args = random_case(rng, n_max=14, m_max=int(rng.choice([3, 5, 10])))
        a0 = random_feasible(rng, args)
        kind = it % 3
        prio = (None, np.round(rng.random(args[7].shape) * 3), rng.random(args[7].shape))[kind]
        seed = int(rng.integers(0, 2**64, dtype=np.uint64))
        iters = int(rng.integers(0, 40))
        a, b = a0.copy(), a0.copy()
        c1 = improve(*kernel(args), a, max_iters=iters, seed=seed, priority=prio)
        c2 = improve_reference(*kernel(args), b, max_iters=iters, seed=seed, priority=prio)
        assert np.array_equal(a, b), (block, it)
        assert c1 == c2, (block, it)
        check_feasible(args, b)


def test_improve_equals_twin_exactly_on_fig2():
    """Equal allocations and counters on the Fig. 2 instances, from the solver's steps 1-3
    and its weights as priorities."""
    for k in range(4):
        req, off, args = fig2_args(1 + k % 3, 200000 + k)
        res = coalloc.solve(req, off, local_search=0)
        for seed in (0, 2**64 - 1):
            a, b = (res.assignment.astype(np.int64).copy() for _ in range(2))
            c1 = improve(*kernel(args), a, max_iters=40, seed=seed, priority=res.weights)
            c2 = improve_reference(*kernel(args), b, max_iters=40, seed=seed, priority=res.weights)
            assert np.array_equal(a, b) and c1 == c2
            assert coalloc.verify(req, off, b).feasible
            assert is_local_optimum_reference(*kernel(args), b)


def test_gil_released_threads_give_serial_results():
    cases = []
    for k in range(6):
        req, off, args = fig2_args(3, 300000 + k)
        cases.append((args, coalloc.solve(req, off).assignment.astype(np.int64)))

    def run(case):
        args, start = case
        a = start.copy()
        improve(*kernel(args), a, max_iters=200, seed=3)
        return a

    serial = [run(c) for c in cases]
    with ThreadPoolExecutor(4) as pool:
        threaded = list(pool.map(run, cases))
    for x, y in zip(serial, threaded):
        assert np.array_equal(x, y)


# ------------------------------------------------------------------ edge cases, errors


def test_empty_and_degenerate_instances():
    for n, m in [(0, 0), (0, 3), (4, 0), (3, 2)]:
        args = csr_args(np.zeros((n, n))) + (
            np.zeros((m, m)), np.ones((n, m), np.uint8), np.full(m, 2, np.int64),
        )  # fmt: skip
        a = np.full(n, -1, dtype=np.int64)
        c = improve(*kernel(args), a, max_iters=10)
        assert c["best_size"] == min(n, 2 * m) == (a >= 0).sum()
        assert count_moves(*kernel(args), a) == (0, 0)
    # Nothing allowed, or no capacity: nothing moves.
    args = csr_args(np.zeros((3, 3))) + (np.zeros((2, 2)), np.zeros((3, 2), np.uint8),
                                        np.full(2, 2, np.int64))  # fmt: skip
    a = np.full(3, -1, dtype=np.int64)
    assert improve(*kernel(args), a)["best_size"] == 0
    args = args[:7] + (np.ones((3, 2), np.uint8), np.zeros(2, np.int64))
    assert improve(*kernel(args), a)["best_size"] == 0


def test_duplicates_diagonal_and_unsorted_csr_are_accepted():
    # b[0,1] given as 3 + 4 = 7 in two entries, an explicit zero and a diagonal entry.
    n = 3
    indptr = np.array([0, 4, 4, 5], dtype=np.int64)
    indices = np.array([1, 0, 1, 2, 0], dtype=np.int64)
    data = np.array([3.0, 9.0, 4.0, 0.0, 1.0])
    dense = np.zeros((3, 3))
    dense[0, 1], dense[2, 0] = 7.0, 1.0
    t = csr_args(dense)[3:]
    bhat = np.array([[6.0]])
    args = (indptr, indices, data) + t + (bhat, np.ones((n, 1), np.uint8), np.array([3]))
    a = np.full(n, -1, dtype=np.int64)
    improve(*kernel(args), a)
    assert (a >= 0).sum() == 2 and not (a[0] >= 0 and a[1] >= 0)  # 7 > 6: 0 and 1 conflict


def test_errors():
    n, m = 4, 2
    b = np.zeros((n, n))
    b[0, 1], b[1, 2], b[3, 0] = 5.0, 3.0, 8.0
    args = list(csr_args(b)) + [np.array([[4.0, 9.0], [9.0, 4.0]]),
                                np.ones((n, m), np.uint8), np.array([2, 2], np.int64)]  # fmt: skip
    a = np.full(n, -1, dtype=np.int64)

    def call(*over, assign=None, **kw):
        x = list(args)
        for pos, val in over:
            x[pos] = val
        return improve(*kernel(x), a.copy() if assign is None else assign, **kw)

    call()  # the unmodified call works
    with pytest.raises(ValueError, match="indptr"):
        call((0, args[0][:-1]))
    with pytest.raises(ValueError, match="indptr"):
        call((0, args[0][::-1].copy()))
    with pytest.raises(ValueError, match="indices"):
        call((1, np.full_like(args[1], n)))
    with pytest.raises(ValueError, match="data"):
        call((2, args[2][:-1]))
    with pytest.raises(ValueError, match="transpose"):
        call((5, args[5] * 2.0))
    with pytest.raises(ValueError, match="bhat"):
        call((6, np.zeros((m + 1, m))))
    with pytest.raises(ValueError, match="allowed"):
        call((7, np.ones(n, np.uint8)))
    with pytest.raises(ValueError, match="capacity"):
        call((8, np.ones(m + 1, np.int64)))
    with pytest.raises(ValueError, match="non-negative"):
        call((8, np.full(m, -1, np.int64)))
    with pytest.raises(ValueError, match="priority"):
        call(priority=np.zeros((n + 1, m)))
    with pytest.raises(ValueError, match="max_iters"):
        call(max_iters=-1)
    with pytest.raises(ValueError, match="int64"):
        call(assign=np.full(n, -1, dtype=np.int32))
    with pytest.raises(ValueError, match="int64"):
        call(assign=np.full(2 * n, -1, dtype=np.int64)[::2])
    with pytest.raises(ValueError, match="shape"):
        call(assign=np.full(n + 1, -1, dtype=np.int64))
    ro = np.full(n, -1, dtype=np.int64)
    ro.setflags(write=False)
    with pytest.raises(ValueError, match="writable"):
        call(assign=ro)
    with pytest.raises(ValueError, match="cluster"):
        call(assign=np.full(n, m, dtype=np.int64))
    with pytest.raises(ValueError, match="capacity"):  # 3 tasks in a cluster of 2
        call(assign=np.array([-1, 0, 0, 0], dtype=np.int64))
    with pytest.raises(ValueError, match="may not go"):
        call((7, np.zeros((n, m), np.uint8)), assign=np.array([0, -1, -1, -1], np.int64))
    with pytest.raises(ValueError, match="bandwidth"):  # b[0, 1] = 5 > bhat[0, 0] = 4
        call(assign=np.array([0, 0, -1, -1], dtype=np.int64))
    bad = np.array([0, 0, -1, -1], dtype=np.int64)
    with pytest.raises(ValueError):
        improve(*kernel(args), bad)
    assert bad.tolist() == [0, 0, -1, -1]  # untouched on error
    with pytest.raises(ValueError, match="shape"):
        count_moves(*kernel(args), np.full(n + 1, -1))
    with pytest.raises(ValueError, match="limit"):
        list_moves(*kernel(args), a, limit=-1)
    one = np.array([0, -1, -1, -1], dtype=np.int64)
    assert list_moves(*kernel(args), one)[1].shape[0] > 0
    with pytest.raises(ValueError, match="limit"):
        list_moves(*kernel(args), one, limit=0)
