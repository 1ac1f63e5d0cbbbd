"""The compiled b-matching kernel ``coalloc.ctaap._bmatching`` against its NumPy/SciPy twin."""

import itertools
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

from coalloc.ctaap._bmatching import BMatcher, b_matching
from coalloc.ctaap._reference.matching import b_matching_reference, matching_objective

# ----------------------------------------------------------------------------- helpers


def random_instance(rng, n_max=60, m_max=8):
    """Random instance with many exact zeros and ties in the weights."""
    n = int(rng.integers(0, n_max + 1))
    m = int(rng.integers(1, m_max + 1))
    kind = int(rng.integers(0, 4))
    if kind == 0:  # continuous
        w = rng.random((n, m))
    elif kind == 1:  # few distinct values: many ties
        w = rng.choice([0.0, 0.25, 0.5, 1.0], size=(n, m))
    elif kind == 2:  # integers, many zeros
        w = rng.integers(0, 4, size=(n, m)).astype(np.float64)
    else:  # continuous with a block of exact zeros
        w = rng.random((n, m))
        w[rng.random((n, m)) < 0.4] = 0.0
    allowed = rng.random((n, m)) < rng.uniform(0.05, 1.0)
    if rng.random() < 0.5:
        cap = rng.integers(0, n + 1, size=m)
    else:  # scarce capacity: competition for slots
        cap = rng.integers(0, max(1, n // m) + 2, size=m)
    return w, allowed, cap.astype(np.int64)


def assert_feasible(assign, allowed, cap):
    n, m = allowed.shape
    assert assign.dtype == np.int64 and assign.shape == (n,)
    assert np.all((assign >= -1) & (assign < m))
    used = np.flatnonzero(assign >= 0)
    assert np.all(allowed[used, assign[used]]), "uses a forbidden pair"
    assert np.all(np.bincount(assign[used], minlength=m) <= cap), "capacity exceeded"


def assert_same_objective(assign, expected, weights, cardinality_first):
    """Kernel objective == twin objective (count exactly in cardinality mode)."""
    got_n, got_w = matching_objective(assign, weights)
    exp_n, exp_w = matching_objective(expected, weights)
    if cardinality_first:
        assert got_n == exp_n, f"matched {got_n} tasks, optimum matches {exp_n}"
    assert got_w == pytest.approx(exp_w, abs=1e-9), f"weight {got_w} vs optimum {exp_w}"


def brute_force(weights, allowed, cap, cardinality_first):
    """Best objective over every assignment (tiny instances only)."""
    n, m = weights.shape
    best = None
    for assign in itertools.product(range(-1, m), repeat=n):
        a = np.array(assign, dtype=np.int64)
        used = np.flatnonzero(a >= 0)
        if not np.all(allowed[used, a[used]]):
            continue
        if np.any(np.bincount(a[used], minlength=m) > cap):
            continue
        count, weight = matching_objective(a, weights)
        key = (count, weight) if cardinality_first else (weight,)
        if best is None or key > best:
            best = key
    return best


# ----------------------------------------------------------------------------- one-shot


@pytest.mark.parametrize("cardinality_first", [True, False])
@pytest.mark.parametrize("seed", range(4))
def test_random_instances_match_twin(seed, cardinality_first):
    rng = np.random.default_rng(1000 + seed)
    for _ in range(100):
        w, allowed, cap = random_instance(rng)
        got = b_matching(w, allowed, cap, cardinality_first)
        ref = b_matching_reference(w, allowed, cap, cardinality_first)
        assert_feasible(got, allowed, cap)
        assert_feasible(ref, allowed, cap)
        assert_same_objective(got, ref, w, cardinality_first)


def continuous_instance(rng, n_max=60, m_max=8):
    """Random instance with weights from a continuous law: its optimal b-matching is unique
    (with probability 1), so the kernel and the twin must return the same assignment."""
    n = int(rng.integers(0, n_max + 1))
    m = int(rng.integers(1, m_max + 1))
    w = rng.random((n, m))
    allowed = rng.random((n, m)) < rng.uniform(0.05, 1.0)
    if rng.random() < 0.5:
        cap = rng.integers(0, n + 1, size=m)
    else:
        cap = rng.integers(0, max(1, n // m) + 2, size=m)
    return w, allowed, cap.astype(np.int64)


@pytest.mark.parametrize("cardinality_first", [True, False])
def test_b_matching_matches_twin(cardinality_first):
    """Exact parity where the optimum is unique. With ties (equal weights) the two may pick
    different optimal matchings, which ``test_random_instances_match_twin`` checks by their
    objective: the twin is SciPy's assignment solver, not a port of the kernel's search."""
    rng = np.random.default_rng(3000 + cardinality_first)
    for _ in range(300):
        w, allowed, cap = continuous_instance(rng)
        got = b_matching(w, allowed, cap, cardinality_first)
        np.testing.assert_array_equal(got, b_matching_reference(w, allowed, cap, cardinality_first))


@pytest.mark.parametrize("cardinality_first", [True, False])
def test_bmatcher_forbid_matches_twin(cardinality_first):
    """The incremental matcher after each forbid equals the twin solved afresh on the
    reduced pairs (unique optima, as above)."""
    rng = np.random.default_rng(4000 + cardinality_first)
    for _ in range(40):
        w, allowed, cap = continuous_instance(rng, n_max=40)
        m = BMatcher(w, allowed, cap, cardinality_first)
        m.solve()
        reduced = allowed.copy()
        for _step in range(8):
            used = np.flatnonzero(m.assignment >= 0)
            if used.size == 0:
                break
            i = int(rng.choice(used))
            j = int(m.assignment[i])
            assert m.forbid(i, j) is True
            reduced[i, j] = False
            m.solve()
            np.testing.assert_array_equal(
                m.assignment, b_matching_reference(w, reduced, cap, cardinality_first)
            )


@pytest.mark.parametrize("cardinality_first", [True, False])
def test_twin_and_kernel_match_brute_force(cardinality_first):
    rng = np.random.default_rng(7)
    for _ in range(150):
        n, m = int(rng.integers(0, 6)), int(rng.integers(1, 4))
        w = rng.choice([0.0, 0.3, 0.5, 1.0, 2.0], size=(n, m))
        allowed = rng.random((n, m)) < 0.6
        cap = rng.integers(0, 3, size=m)
        best = brute_force(w, allowed, cap, cardinality_first)
        for assign in (
            b_matching(w, allowed, cap, cardinality_first),
            b_matching_reference(w, allowed, cap, cardinality_first),
        ):
            assert_feasible(assign, allowed, cap)
            count, weight = matching_objective(assign, w)
            if cardinality_first:
                assert count == best[0]
                assert weight == pytest.approx(best[1], abs=1e-12)
            else:
                assert weight == pytest.approx(best[0], abs=1e-12)


def test_lexicographic_without_big_m():
    # Task 0 is worth 1e12 on cluster 0 but must go to cluster 1 so that task 1 (only
    # allowed on cluster 0) is matched too: cardinality first wins over any weight.
    w = np.array([[1e12, 0.0], [0.0, 0.0]])
    allowed = np.array([[1, 1], [1, 0]], dtype=np.uint8)
    cap = np.array([1, 1], dtype=np.int64)
    assert b_matching(w, allowed, cap, True).tolist() == [1, 0]
    assert matching_objective(b_matching(w, allowed, cap, False), w)[1] == 1e12
    # Tiny weights differences still decide among maximum-cardinality matchings.
    w2 = np.array([[1e-9, 2e-9], [1e-9, 0.0], [5.0, 5.0]])
    allowed2 = np.array([[1, 1], [1, 0], [0, 0]], dtype=np.uint8)
    assert b_matching(w2, allowed2, cap, True).tolist() == [1, 0, -1]


def test_swap_free_task_in_and_rotation():
    # Optimum needs a rotation between clusters and leaves the low-value task out.
    w = np.array([[5.0, 1.0, 0.0], [0.0, 5.0, 1.0], [1.0, 0.0, 5.0], [0.5, 0.5, 0.5]])
    allowed = np.ones_like(w, dtype=bool)
    cap = np.array([1, 1, 1])
    assert b_matching(w, allowed, cap).tolist() == [0, 1, 2, -1]
    m = BMatcher(w, allowed, cap)
    m.solve()
    assert m.forbid(0, 0)
    tasks, old = m.solve()
    # Best now: 0->1 (1) + 1->2 (1) + 2->... ; check against the twin rather than by hand.
    reduced = allowed.copy()
    reduced[0, 0] = False
    assert_same_objective(m.assignment, b_matching_reference(w, reduced, cap), w, True)
    np.testing.assert_array_equal(tasks, np.unique(tasks))


def test_objective_check_can_fail():
    """The comparison used everywhere rejects a suboptimal assignment."""
    w = np.array([[2.0, 1.0], [1.9, 0.0]])
    allowed = np.array([[1, 1], [1, 0]], dtype=bool)
    cap = np.array([1, 1])
    ref = b_matching_reference(w, allowed, cap)
    assert ref.tolist() == [1, 0]
    greedy = np.array([0, -1], dtype=np.int64)  # task 0 takes its best cluster
    with pytest.raises(AssertionError):
        assert_same_objective(greedy, ref, w, True)
    with pytest.raises(AssertionError):
        assert_same_objective(np.array([1, -1], dtype=np.int64), ref, w, False)


# ----------------------------------------------------------------------------- incremental


@pytest.mark.parametrize("cardinality_first", [True, False])
@pytest.mark.parametrize("seed", range(3))
def test_incremental_forbid_matches_fresh_solve(seed, cardinality_first):
    rng = np.random.default_rng(2000 + seed)
    for _ in range(25):
        w, allowed, cap = random_instance(rng, n_max=40)
        m = BMatcher(w, allowed, cap, cardinality_first)
        tasks, old = m.solve()
        assign = m.assignment
        changed = np.flatnonzero(assign != -1)
        np.testing.assert_array_equal(tasks, changed)
        np.testing.assert_array_equal(old, np.full(changed.size, -1))
        reduced = allowed.copy()
        for _step in range(15):
            used = np.flatnonzero(assign >= 0)
            if used.size == 0:
                break
            i = int(rng.choice(used))
            j = int(assign[i])
            assert m.forbid(i, j) is True
            reduced[i, j] = False
            before = m.assignment
            assert before[i] == -1
            # A few forbids of unused pairs as well: they must not unassign anything.
            for _ in range(int(rng.integers(0, 3))):
                ii, jj = int(rng.integers(w.shape[0])), int(rng.integers(w.shape[1]))
                if before[ii] != jj:
                    assert m.forbid(ii, jj) is False
                    reduced[ii, jj] = False
            tasks, old = m.solve()
            assign = m.assignment
            diff = np.flatnonzero(assign != before)
            np.testing.assert_array_equal(tasks, diff)
            np.testing.assert_array_equal(old, before[diff])
            assert tasks.dtype == np.int64 and old.dtype == np.int64
            assert_feasible(assign, reduced, cap)
            fresh = b_matching(w, reduced, cap, cardinality_first)
            assert_same_objective(assign, fresh, w, cardinality_first)
            assert_same_objective(
                assign,
                b_matching_reference(w, reduced, cap, cardinality_first),
                w,
                cardinality_first,
            )
            assert m._self_check()
            count, weight = matching_objective(assign, w)
            assert m.n_allocated == count
            assert m.total_weight == pytest.approx(weight, abs=1e-12)


def test_solve_twice_and_unused_forbid_change_nothing():
    rng = np.random.default_rng(3)
    w = rng.random((30, 4))
    allowed = rng.random((30, 4)) < 0.7
    cap = np.array([5, 5, 5, 5])
    m = BMatcher(w, allowed, cap)
    m.solve()
    tasks, old = m.solve()
    assert tasks.size == 0 and old.size == 0
    a = m.assignment
    free_pairs = np.argwhere(allowed & (np.arange(4)[None, :] != a[:, None]))
    for i, j in free_pairs[:20]:
        assert m.forbid(int(i), int(j)) is False
    tasks, _ = m.solve()
    assert tasks.size == 0
    np.testing.assert_array_equal(m.assignment, a)


def test_counters_are_cumulative():
    rng = np.random.default_rng(4)
    w = rng.random((50, 5))
    allowed = np.ones((50, 5), dtype=bool)
    cap = np.full(5, 6)
    m = BMatcher(w, allowed, cap)
    assert (m.n_augmentations, m.n_cycle_cancellations) == (0, 0)
    m.solve()
    assert m.n_augmentations == m.n_allocated == 30
    before = m.n_augmentations + m.n_cycle_cancellations
    a = m.assignment
    i = int(np.flatnonzero(a >= 0)[0])
    m.forbid(i, int(a[i]))
    m.solve()
    assert m.n_augmentations + m.n_cycle_cancellations > before
    assert m.n_tasks == 50 and m.n_clusters == 5 and m.cardinality_first is True
    assert 0 < m.epsilon < 1e-11


# ----------------------------------------------------------------------------- behaviour


def test_deterministic():
    rng = np.random.default_rng(5)
    for _ in range(20):
        w, allowed, cap = random_instance(rng)
        for cf in (True, False):
            first = b_matching(w, allowed, cap, cf)
            for _ in range(3):
                np.testing.assert_array_equal(b_matching(w, allowed, cap, cf), first)
            # An incremental matcher lands on the same first solution too.
            m = BMatcher(w, allowed, cap, cf)
            m.solve()
            np.testing.assert_array_equal(m.assignment, first)


def test_bool_and_uint8_allowed_agree():
    rng = np.random.default_rng(6)
    w, allowed, cap = random_instance(rng)
    np.testing.assert_array_equal(
        b_matching(w, allowed.astype(bool), cap), b_matching(w, allowed.astype(np.uint8), cap)
    )


@pytest.mark.parametrize("cardinality_first", [True, False])
def test_negative_weights_also_handled(cardinality_first):
    rng = np.random.default_rng(12)
    for _ in range(60):
        n, m = int(rng.integers(0, 25)), int(rng.integers(1, 5))
        w = np.round(rng.normal(size=(n, m)), 1)
        allowed = rng.random((n, m)) < 0.7
        cap = rng.integers(0, 6, size=m)
        got = b_matching(w, allowed, cap, cardinality_first)
        assert_feasible(got, allowed, cap)
        ref = b_matching_reference(w, allowed, cap, cardinality_first)
        assert_same_objective(got, ref, w, cardinality_first)


def test_any_layout_and_dtype_is_accepted():
    rng = np.random.default_rng(13)
    w, allowed, cap = random_instance(rng, n_max=30)
    expected = b_matching(w, allowed, cap)
    np.testing.assert_array_equal(
        b_matching(np.asfortranarray(w), np.asfortranarray(allowed), cap.astype(np.int32)),
        expected,
    )
    np.testing.assert_array_equal(
        b_matching(w.tolist(), allowed.astype(int).tolist(), cap.tolist()), expected
    )
    w2 = np.zeros((w.shape[0], 2 * w.shape[1]))
    w2[:, ::2] = w
    np.testing.assert_array_equal(b_matching(w2[:, ::2], allowed, cap), expected)


def test_inputs_not_modified():
    rng = np.random.default_rng(8)
    w = rng.random((20, 3))
    allowed = (rng.random((20, 3)) < 0.8).astype(np.uint8)
    cap = np.array([4, 4, 4], dtype=np.int64)
    copies = (w.copy(), allowed.copy(), cap.copy())
    m = BMatcher(w, allowed, cap)
    m.solve()
    a = m.assignment
    i = int(np.flatnonzero(a >= 0)[0])
    m.forbid(i, int(a[i]))
    m.solve()
    b_matching(w, allowed, cap)
    for orig, copy in zip((w, allowed, cap), copies):
        np.testing.assert_array_equal(orig, copy)
    # The returned assignment is a copy.
    a = m.assignment
    a[:] = 99
    assert np.all(m.assignment != 99)


@pytest.mark.parametrize("cardinality_first", [True, False])
def test_edge_cases(cardinality_first):
    # n = 0
    out = b_matching(
        np.zeros((0, 3)), np.zeros((0, 3), bool), np.array([1, 2, 3]), cardinality_first
    )
    assert out.shape == (0,) and out.dtype == np.int64
    m = BMatcher(np.zeros((0, 3)), np.zeros((0, 3), bool), np.array([1, 2, 3]), cardinality_first)
    tasks, old = m.solve()
    assert tasks.size == 0 and old.size == 0 and m.total_weight == 0.0
    # m = 0
    out = b_matching(np.zeros((4, 0)), np.zeros((4, 0), bool), np.zeros(0, np.int64))
    assert out.tolist() == [-1] * 4
    rng = np.random.default_rng(9)
    w = rng.random((10, 3))
    # capacity all zero
    assert np.all(
        b_matching(w, np.ones((10, 3), bool), np.zeros(3, np.int64), cardinality_first) == -1
    )
    # nothing allowed
    assert np.all(b_matching(w, np.zeros((10, 3), bool), np.full(3, 10), cardinality_first) == -1)
    # more capacity than tasks: everyone gets its best allowed cluster
    out = b_matching(w, np.ones((10, 3), bool), np.full(3, 10), cardinality_first)
    np.testing.assert_array_equal(out, np.argmax(w, axis=1))
    # all-zero weights: weight mode may leave tasks out, cardinality mode must not
    out = b_matching(np.zeros((6, 2)), np.ones((6, 2), bool), np.array([2, 2]), cardinality_first)
    assert_feasible(out, np.ones((6, 2), bool), np.array([2, 2]))
    if cardinality_first:
        assert np.count_nonzero(out >= 0) == 4
    # NaN outside the allowed pairs is ignored
    w_nan = w.copy()
    allowed = np.ones((10, 3), bool)
    allowed[:, 2] = False
    w_nan[:, 2] = np.nan
    out = b_matching(w_nan, allowed, np.full(3, 10), cardinality_first)
    np.testing.assert_array_equal(out, np.argmax(w[:, :2], axis=1))


def test_invalid_inputs_raise_value_error():
    w = np.ones((4, 3))
    a = np.ones((4, 3), bool)
    c = np.ones(3, np.int64)
    bad = [
        (np.ones(4), a, c),  # weights 1-D
        (np.ones((4, 3, 1)), a, c),  # weights 3-D
        (w, np.ones((4, 2), bool), c),  # allowed shape
        (w, np.ones((3, 3), bool), c),
        (w, np.ones(12, bool), c),
        (w, a, np.ones(2, np.int64)),  # capacity length
        (w, a, np.ones((3, 1), np.int64)),  # capacity 2-D
        (w, a, np.array([1, -1, 1])),  # negative capacity
        (np.where(a, np.nan, 0.0), a, c),  # non-finite weight on an allowed pair
        (np.full((4, 3), np.inf), a, c),
    ]
    for args in bad:
        with pytest.raises(ValueError):
            b_matching(*args)
        with pytest.raises(ValueError):
            BMatcher(*args)
    m = BMatcher(w, a, c)
    for i, j in [(-1, 0), (4, 0), (0, -1), (0, 3)]:
        with pytest.raises(ValueError):
            m.forbid(i, j)


def test_threads_give_same_results():
    rng = np.random.default_rng(10)
    instances = [random_instance(rng, n_max=200, m_max=6) for _ in range(16)]
    serial = [b_matching(*inst) for inst in instances]
    with ThreadPoolExecutor(max_workers=4) as pool:
        parallel = list(pool.map(lambda inst: b_matching(*inst), instances))
    for s, p in zip(serial, parallel):
        np.testing.assert_array_equal(s, p)
    # One matcher shared by several threads stays consistent.
    w, allowed, cap = instances[0]
    m = BMatcher(w, allowed, cap)
    with ThreadPoolExecutor(max_workers=4) as pool:
        list(pool.map(lambda _: m.solve(), range(8)))
    np.testing.assert_array_equal(m.assignment, serial[0])
    assert m._self_check()


def test_medium_instance_matches_twin():
    rng = np.random.default_rng(11)
    n, m = 300, 5
    w = 1.0 - rng.random((n, m))
    allowed = rng.random((n, m)) < 0.6
    cap = np.full(m, n // 10, dtype=np.int64)
    for cf in (True, False):
        matcher = BMatcher(w, allowed, cap, cf)
        matcher.solve()
        reduced = allowed.copy()
        for _ in range(40):
            a = matcher.assignment
            used = np.flatnonzero(a >= 0)
            i = int(rng.choice(used))
            matcher.forbid(i, int(a[i]))
            reduced[i, a[i]] = False
            matcher.solve()
        ref = b_matching_reference(w, reduced, cap, cf)
        assert_feasible(matcher.assignment, reduced, cap)
        assert_same_objective(matcher.assignment, ref, w, cf)


# ----------------------------------------------------------------------------- many clusters


def large_m_instance(rng, n, m):
    """Continuous or tied weights, sparse-ish allowed pairs, capacities near n / m."""
    if rng.random() < 0.5:
        w = rng.random((n, m))
    else:
        w = rng.choice([0.0, 0.5, 1.0], size=(n, m))
    allowed = rng.random((n, m)) < rng.uniform(0.1, 0.7)
    cap = rng.integers(0, max(2, 2 * n // m), size=m).astype(np.int64)
    return w, allowed, cap


def forbid_random_matched(matcher, rng, reduced):
    """Forbid the pair of a random matched task (mirrored in ``reduced``); False if none."""
    a = matcher.assignment
    used = np.flatnonzero(a >= 0)
    if used.size == 0:
        return False
    i = int(rng.choice(used))
    assert matcher.forbid(i, int(a[i]))
    reduced[i, a[i]] = False
    return True


@pytest.mark.parametrize("cardinality_first", [True, False])
@pytest.mark.parametrize("m", [50, 120, 200])
def test_many_clusters_forbid_sequence_matches_twin(m, cardinality_first):
    """Each re-solve after a forbid is one shortest path; it must stay optimal."""
    rng = np.random.default_rng(3000 + m + cardinality_first)
    for _ in range(3):
        n = int(rng.integers(m, 3 * m))
        w, allowed, cap = large_m_instance(rng, n, m)
        matcher = BMatcher(w, allowed, cap, cardinality_first)
        matcher.solve()
        assert matcher.has_potentials and matcher._self_check()
        assert_same_objective(
            matcher.assignment, b_matching_reference(w, allowed, cap, cardinality_first), w,
            cardinality_first,
        )  # fmt: skip
        reduced = allowed.copy()
        for step in range(30):
            if not forbid_random_matched(matcher, rng, reduced):
                break
            matcher.solve()
            assert_feasible(matcher.assignment, reduced, cap)
            if step % 6 == 5:  # the twin is slow: check every sixth state exactly
                ref = b_matching_reference(w, reduced, cap, cardinality_first)
                assert_same_objective(matcher.assignment, ref, w, cardinality_first)
                assert matcher._self_check()
        ref = b_matching_reference(w, reduced, cap, cardinality_first)
        assert_same_objective(matcher.assignment, ref, w, cardinality_first)
        assert matcher._self_check() and matcher.n_fallbacks == 0


@pytest.mark.parametrize("cardinality_first", [True, False])
def test_several_forbids_before_one_solve(cardinality_first):
    """Several matched pairs removed at once: one repair per pair, any order of deficits."""
    rng = np.random.default_rng(41 + cardinality_first)
    for _ in range(20):
        n, m = int(rng.integers(20, 120)), int(rng.integers(2, 40))
        w, allowed, cap = large_m_instance(rng, n, m)
        matcher = BMatcher(w, allowed, cap, cardinality_first)
        matcher.solve()
        reduced = allowed.copy()
        for _round in range(4):
            before = matcher.assignment
            used = np.flatnonzero(before >= 0)
            if used.size == 0:
                break
            picks = rng.choice(used, size=min(used.size, int(rng.integers(1, 8))), replace=False)
            for i in picks:
                assert matcher.forbid(int(i), int(before[i]))
                reduced[i, before[i]] = False
                # forbidding a second pair of a task that is now unassigned changes nothing
                j2 = int(rng.integers(m))
                if reduced[i, j2] and not matcher.forbid(int(i), j2):
                    reduced[i, j2] = False
            after_forbid = matcher.assignment
            tasks, old = matcher.solve()
            assign = matcher.assignment
            diff = np.flatnonzero(assign != after_forbid)
            np.testing.assert_array_equal(tasks, diff)
            np.testing.assert_array_equal(old, after_forbid[diff])
            assert_feasible(assign, reduced, cap)
            ref = b_matching_reference(w, reduced, cap, cardinality_first)
            assert_same_objective(assign, ref, w, cardinality_first)
            assert matcher._self_check()


@pytest.mark.parametrize("cardinality_first", [True, False])
def test_general_path_without_potentials(cardinality_first):
    """Without potentials (testing hook) forbid/solve use cycle cancelling, then rebuild them."""
    rng = np.random.default_rng(77 + cardinality_first)
    for _ in range(15):
        n, m = int(rng.integers(10, 80)), int(rng.integers(2, 30))
        w, allowed, cap = large_m_instance(rng, n, m)
        matcher = BMatcher(w, allowed, cap, cardinality_first)
        matcher.solve()
        reduced = allowed.copy()
        for step in range(8):
            if step % 2 == 0:
                matcher._drop_potentials()
                assert not matcher.has_potentials
            if not forbid_random_matched(matcher, rng, reduced):
                break
            matcher.solve()
            assert matcher.has_potentials and matcher._self_check()
            ref = b_matching_reference(w, reduced, cap, cardinality_first)
            assert_same_objective(matcher.assignment, ref, w, cardinality_first)
