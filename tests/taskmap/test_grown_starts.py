"""The timed fine re-bisections without eigensolves (issue 40, h53tmap).

:func:`coalloc.taskmap.grownstarts.grown_fine_starts` bisects the finest graph again for the
starts on all the processors, trying at each slow split the growing seeds and the prefixes
of the hop-distance differences (:func:`coalloc.taskmap.bisection.grow`, ``differences=True``)
instead of the spectral split, and offers each refined mapping to the time limit only.
Referees: :func:`coalloc.taskmap.verify_mapping`, the known least half cut of a grid box,
and the untimed run (a timed run that ends before its deadline gives its answer). No clock
is raced: stops are injected with :func:`coalloc._shared.params.stop_now`.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from coalloc import taskmap as tm
from coalloc._shared.params import stop_now, with_time_limit
from coalloc.taskmap import bisection as bs
from coalloc.taskmap import generators as gen
from coalloc.taskmap import multilevel as ml
from coalloc.taskmap.hierarchy import topology
from coalloc.taskmap.levels import TaskLevel


def _cut(level: TaskLevel, inside: np.ndarray) -> float:
    rows = np.repeat(np.arange(level.n), np.diff(level.ip))
    return float(level.iw[inside[rows] != inside[level.ix]].sum()) / 2


@pytest.mark.parametrize("shape, plane", [((4, 8, 4), 16.0), ((6, 12, 6), 36.0)])
def test_the_difference_tries_find_the_plane_across_the_long_axis(shape, plane, monkeypatch):
    """Half of an ``a x 2a x a`` box: the least balanced cut is the ``a x a`` plane across
    the long axis. Growing from the seeds and FM stop at twice that; a difference of hop
    distances from two corners orders the tasks along the long axis. (Without the multilevel
    tries of h57band, which find the plane on the larger box from the seeds too.)"""
    from coalloc.taskmap import splits

    monkeypatch.setattr(splits, "VCYCLE_SPLITS", 0)
    level = TaskLevel.of(gen.stencil_task_graph(shape))
    verts = np.arange(level.n)
    half = level.n / 2
    grown = bs.grow(level, verts, half, 3, spectral=False, differences=False)
    level = TaskLevel.of(gen.stencil_task_graph(shape))  # no shared preparation
    both = bs.grow(level, verts, half, 3, spectral=False, differences=True)
    assert both.sum() == half
    assert _cut(level, both) == plane
    assert _cut(level, grown) > plane  # without the tries (the first version's answer)


def _no_eigensolve(*args, **kwargs):
    raise AssertionError("an eigensolve in a bisection without the spectral split")


@settings(max_examples=40, deadline=None, derandomize=True)
@given(
    n=st.integers(1, 160),
    seed=st.integers(0, 10_000),
    shape=st.sampled_from([(1, 2, 2), (2, 2, 2), (2, 3, 2), (1, 4, 3)]),
    alpha=st.sampled_from([1.0, 0.0]),
)
def test_a_bisection_without_the_spectral_split_maps_every_task_onto_the_subset(
    n, seed, shape, alpha
):
    tasks = gen.geometric_task_graph(n, seed=seed)
    res = gen.hierarchical_cluster(n_racks=shape[0], nodes_per_rack=shape[1],
                                   cores_per_node=shape[2], speed=(1.0, 3.0),
                                   node_bandwidth=2.0, rack_bandwidth=4.0, seed=seed)  # fmt: skip
    topo = topology(res)
    level = TaskLevel.of(tasks)
    share = topo.cap**alpha
    subset = np.arange(0, topo.P, 1 + seed % 2, dtype=np.int64)
    real = bs.fiedler_order
    bs.fiedler_order = _no_eigensolve
    try:
        m = bs.bisect_map(topo, level, subset, share / share.max(), full=True, spectral=False)
        again = bs.bisect_map(topo, TaskLevel.of(tasks), subset, share / share.max(),
                              full=True, spectral=False)  # fmt: skip
    finally:
        bs.fiedler_order = real
    assert m.shape == (n,) and np.isin(m, subset).all()
    assert np.array_equal(m, again)  # same input, same answer
    report = tm.verify_mapping(tasks, res, topo.order_nodes[m])
    assert report.valid, report.problems


def _stencil_8():
    """8x8x8 onto 2 racks x 4 nodes x 4 cores with slow uplinks (untimed answer 16, the
    compute bound)."""
    return gen.stencil_task_graph((8, 8, 8)), gen.hierarchical_cluster(
        n_racks=2, nodes_per_rack=4, cores_per_node=4, node_bandwidth=4.0,
        rack_bandwidth=8.0, seed=103)  # fmt: skip


def _spy(monkeypatch):
    calls, offers = [], []
    real = ml.grown_fine_starts
    real_offer = ml._Incumbent.offer_early

    def grown(*args, **kwargs):
        calls.append(1)
        return real(*args, **kwargs)

    def offer_early(self, value, m, history, **counts):
        offers.append((value, m.copy()))
        return real_offer(self, value, m, history, **counts)

    monkeypatch.setattr(ml, "grown_fine_starts", grown)
    monkeypatch.setattr(ml._Incumbent, "offer_early", offer_early)
    return calls, offers


def test_only_a_timed_run_makes_them_and_a_finished_one_keeps_the_untimed_answer(monkeypatch):
    monkeypatch.setattr(ml, "GROWN_UNTIMED", False)
    tasks, res = _stencil_8()
    calls, _ = _spy(monkeypatch)
    untimed = tm.map_multilevel(tasks, res, seed=0)
    assert calls == []
    timed = with_time_limit(ml.map_multilevel, lambda *a, **k: None)
    r = timed(tasks, res, seed=0, time_limit=600.0)
    assert calls == [1]
    assert np.array_equal(r.mapping, untimed.mapping)


def _mm25d(q: int, c: int) -> tm.TaskGraph:
    """``c`` layers of a wrapped ``q x q`` Cannon torus (its shifts along both axes), each
    task tied to its place in the next layer: a regular graph without a boundary."""
    n = q * q * c
    ids = np.arange(n).reshape(c, q, q)
    w = np.zeros((n, n))
    for a, b, vol in ((ids, np.roll(ids, 1, axis=1), 4.0), (ids, np.roll(ids, 1, axis=2), 4.0),
                      (ids[:-1], ids[1:], 1.0)):  # fmt: skip
        w[a.ravel(), b.ravel()] += vol
    return tm.TaskGraph(np.ones(n), w + w.T)


@pytest.mark.parametrize("knob", [True, False])
def test_an_untimed_run_with_them_returns_at_most_each_of_them(knob, monkeypatch):
    """:data:`~coalloc.taskmap.multilevel.GROWN_UNTIMED` (h55tmap follow-up): untimed, the
    grown starts run and the answer is at most every mapping they offered (verified) and at
    most the run's answer without them; off, none runs and the answer is the old one."""
    tasks = _mm25d(12, 4)
    res = gen.hierarchical_cluster(n_racks=2, nodes_per_rack=4, cores_per_node=4,
                                   node_bandwidth=4.0, rack_bandwidth=2.0, seed=7)  # fmt: skip
    monkeypatch.setattr(ml, "GROWN_UNTIMED", False)
    without = tm.map_multilevel(tasks, res, seed=0)
    monkeypatch.setattr(ml, "GROWN_UNTIMED", knob)
    calls, offers = _spy(monkeypatch)
    r = tm.map_multilevel(tasks, res, seed=0)
    report = tm.verify_mapping(tasks, res, r.mapping)
    assert report.valid, report.problems
    if not knob:
        assert calls == [] and np.array_equal(r.mapping, without.mapping)
        return
    assert calls == [1] and offers
    order = topology(res).order_nodes
    for value, m in offers:
        check = tm.verify_mapping(tasks, res, order[m])
        assert check.valid and abs(check.max_occupancy - value) <= 1e-9 * max(1.0, value)
        assert report.max_occupancy <= value * (1 + 1e-12)
    assert report.max_occupancy <= without.max_occupancy * (1 + 1e-12)


@pytest.mark.parametrize("grown", ["first", "share", "after", False])
def test_a_run_stopped_after_them_returns_the_best_of_them(grown, monkeypatch):
    """Stopped at the second refined start (the grown starts came before the first, or
    after it): the answer is at most every mapping the grown starts offered, each verified;
    without them the stopped run had only the coarse starts (19 here against 16)."""
    tasks, res = _stencil_8()
    _, offers = _spy(monkeypatch)
    monkeypatch.setattr(ml, "GROWN_TIMED", grown)
    real = ml._refined_start
    entered = {"n": 0}

    def stopping(*args, **kwargs):
        entered["n"] += 1
        if entered["n"] == 2:
            stop_now()
        return real(*args, **kwargs)

    monkeypatch.setattr(ml, "_refined_start", stopping)
    timed = with_time_limit(ml.map_multilevel, lambda *a, **k: None)
    r = timed(tasks, res, seed=0, time_limit=600.0)
    assert r.status == "time_limit"
    report = tm.verify_mapping(tasks, res, r.mapping)
    assert report.valid and report.max_occupancy == pytest.approx(r.max_occupancy, rel=1e-12)
    topo = topology(res)
    grown_offers = [(v, m) for v, m in offers if m.shape[0] == tasks.n]
    for value, m in grown_offers:
        check = tm.verify_mapping(tasks, res, topo.order_nodes[m])
        assert check.valid and check.max_occupancy == pytest.approx(value, rel=1e-9)
    if grown:
        assert r.max_occupancy <= min(v for v, _ in grown_offers) * (1 + 1e-12)
        assert r.max_occupancy == pytest.approx(16.0)
    else:
        assert r.max_occupancy > 16.0 * (1 + 1e-9)


def test_the_h53_prediction_is_the_coarsening_scaled_and_untimed_always_fits():
    from coalloc.taskmap import grownstarts as gs

    r = gs.GROWN_PER_COARSEN
    assert gs.grown_fits(0.1, None)
    assert gs.grown_fits(0.1, r * 0.1)
    assert not gs.grown_fits(0.1, r * 0.1 * (1 - 1e-9))
    assert gs.grown_fits(0.0, 0.0)


@pytest.mark.parametrize("fits", [True, False])
def test_a_start_predicted_not_to_end_comes_after_the_coarse_refinement(fits, monkeypatch):
    """The prediction stood in for (no clock): predicted to end, the grown starts come before
    the first coarse start's refinement ("first"); predicted not to, after all the coarse
    starts' refinement (here never: that refinement meets the lower bound, 16, and the run
    ends). Either way a run that ends before its deadline keeps the untimed answer, and the
    prediction is given the call's coarsening seconds."""
    tasks, res = _stencil_8()
    untimed = tm.map_multilevel(tasks, res, seed=0)
    order, seen = [], []
    real_grown, real_refined = ml.grown_fine_starts, ml._refined_start

    def grown(*args, **kwargs):
        order.append("grown")
        return real_grown(*args, **kwargs)

    def refined(*args, **kwargs):
        order.append("refined")
        return real_refined(*args, **kwargs)

    def predicted(topo, levels, starts, coarsen_s):
        seen.append((coarsen_s, len(levels), len(starts)))
        return not fits, None

    monkeypatch.setattr(ml, "GROWN_TIMED", "first")
    monkeypatch.setattr(ml, "grown_fine_starts", grown)
    monkeypatch.setattr(ml, "_refined_start", refined)
    monkeypatch.setattr(ml, "grown_order", predicted)
    timed = with_time_limit(ml.map_multilevel, lambda *a, **k: None)
    r = timed(tasks, res, seed=0, time_limit=600.0)
    assert len(seen) == 1 and seen[0][0] >= 0 and seen[0][1] >= 2 and seen[0][2] >= 1
    assert order[0] == ("grown" if fits else "refined") and "refined" in order
    assert order.count("grown") == (1 if fits else 0)
    assert np.array_equal(r.mapping, untimed.mapping)


# --------------------------------------------------------------------------------------
# The prediction per graph kind (h54tmap): work of the slow splits at the coarsening's pace
# --------------------------------------------------------------------------------------


def _het_16():
    """20x20 onto 2 racks x 4 nodes x 4 cores of two speeds: three starts on all processors
    (one per speed exponent: above 300 tasks)."""
    return gen.stencil_task_graph((20, 20), seed=2), gen.hierarchical_cluster(
        n_racks=2, nodes_per_rack=4, cores_per_node=4, speed=(1.0, 3.0), node_bandwidth=10.0,
        rack_bandwidth=20.0, seed=102)  # fmt: skip


@pytest.mark.parametrize(
    "shape, cluster, alpha",
    [((16, 16), (2, 4, 4), 1.0), ((8, 8, 8), (2, 2, 8), 0.0), ((30, 20), (1, 3, 5), 1.0),
     ((12, 12, 6), (3, 2, 2), 0.5)],
)  # fmt: skip
def test_the_slow_depth_is_the_real_bisections_slow_work(shape, cluster, alpha, monkeypatch):
    """The referee is the bisection itself: the tasks of every split it makes with three
    seeds (its slow ones), as a fraction of all the tasks, summed, against what
    :func:`slow_depth` simulates on the processors alone (blocks in proportion to their
    shares; the real splits are only near that balance)."""
    from coalloc.taskmap import grownstarts as gs

    tasks = gen.stencil_task_graph(shape, seed=1)
    res = gen.hierarchical_cluster(n_racks=cluster[0], nodes_per_rack=cluster[1],
                                   cores_per_node=cluster[2], speed=(1.0, 3.0),
                                   node_bandwidth=2.0, rack_bandwidth=4.0, seed=7)  # fmt: skip
    topo = topology(res)
    share = topo.cap**alpha / (topo.cap**alpha).max()
    level = TaskLevel.of(tasks)
    slow = []
    real = bs.grow

    def grow(lv, verts, target, trials=3, *args, **kwargs):
        if trials == 3:
            slow.append(verts.shape[0] / lv.n)
        return real(lv, verts, target, trials, *args, **kwargs)

    monkeypatch.setattr(bs, "grow", grow)
    bs.bisect_map(topo, level, np.arange(topo.P), share, full=True, spectral=False)
    predicted = gs.slow_depth(topo, share, tasks.n)
    assert predicted > 0 and sum(slow) == pytest.approx(predicted, rel=0.1)
    assert gs.slow_depth(topo, share, 8) == 0.0  # blocks of at most 8 tasks: no slow split
    one = topology(gen.hierarchical_cluster(n_racks=1, nodes_per_rack=1, cores_per_node=1))
    assert gs.slow_depth(one, np.ones(1), tasks.n) == 0.0


class _Left:
    """A stand-in for the time left (``grownstarts.time_left``)."""

    def __init__(self, left):
        self.left = left

    def __call__(self):
        return self.left


def _prediction(tasks, res, coarsen_s=0.01):
    from coalloc.taskmap import grownstarts as gs
    from coalloc.taskmap.starts import _coarse_starts, _processor_sets

    topo = topology(res)
    levels = [TaskLevel.of(tasks)]
    ml._coarsen(topo, levels, 4.0, np.random.default_rng(0))

    class _Inc:
        def offer(self, *args, **kwargs):
            pass

    starts = sorted(_coarse_starts(topo, levels[-1], len(levels) - 1,
                                   _processor_sets(topo, True), (1.0, 0.5, 0.0), _Inc()),
                    key=lambda x: x[:4])  # fmt: skip
    return gs.GrownPrediction(topo, levels, coarsen_s), starts, topo


def test_the_first_start_is_predicted_from_the_coarsening_pace_and_the_rest_measured(
    monkeypatch,
):
    from coalloc.taskmap import grownstarts as gs

    tasks, res = _het_16()
    pred, starts, topo = _prediction(tasks, res, coarsen_s=0.01)
    full = [s for s in starts if s[6].shape[0] == topo.P]
    assert len(full) == 3
    matched = sum(lv.n + lv.ip[-1] for lv in pred_levels(pred, tasks, res))
    work = pred.entries * gs.slow_depth(topo, full[0][5], tasks.n)
    first = gs.GROWN_PER_WORK * 0.01 / matched * work
    assert pred.seconds(full[0]) == pytest.approx(first, rel=1e-12)
    left = _Left(first)
    monkeypatch.setattr(gs, "time_left", left)
    assert pred.fits(full[0]) and pred.first(starts)
    left.left = first * (1 - 1e-9)
    assert not pred.fits(full[0]) and not pred.first(starts)
    left.left = None  # no time limit: everything fits
    assert pred.fits(full[0]) and pred.first(starts)
    pred.measured(full[0], 0.5)  # then the call's own rate, the largest measured
    pred.measured(full[1], 1e-9)
    later = gs.GROWN_LATER * 0.5 / work * pred.work(full[2])
    assert pred.seconds(full[2]) == pytest.approx(later, rel=1e-12)


def pred_levels(pred, tasks, res):
    """The levels the prediction's pace was measured on (re-made: the same seed)."""
    levels = [TaskLevel.of(tasks)]
    ml._coarsen(topology(res), levels, 4.0, np.random.default_rng(0))
    return levels[:-1]


def test_an_irregular_graph_gets_them_after_the_coarse_refinement(monkeypatch):
    """A geometric graph (degree spread 0.3-0.5; a stencil's 0.06-0.2) does not get them
    first whatever the time left; a stencil does when they fit."""
    from coalloc.taskmap import grownstarts as gs

    monkeypatch.setattr(gs, "time_left", _Left(1e9))
    res = _het_16()[1]
    for tasks, regular in [(gen.stencil_task_graph((16, 16), seed=2), True),
                           (gen.geometric_task_graph(300, seed=3), False)]:  # fmt: skip
        pred, starts, _ = _prediction(tasks, res)
        assert (pred.spread <= gs.IRREGULAR_SPREAD) == regular
        assert pred.first(starts) == regular
        monkeypatch.setattr(gs, "IRREGULAR_SPREAD", np.inf)
        assert pred.first(starts)
        monkeypatch.undo()
        monkeypatch.setattr(gs, "time_left", _Left(1e9))


def test_a_start_not_predicted_to_end_is_made_after_the_coarse_refinement(monkeypatch):
    """The first start's prediction fits, the second's and third's not (stand-ins): the first
    comes before the coarse starts' refinement, the other two after it; the run (ending
    before its deadline) keeps the untimed answer, and every grown offer is verified."""
    from coalloc.taskmap import grownstarts as gs

    tasks, res = _het_16()
    untimed = tm.map_multilevel(tasks, res, seed=0)
    calls, offers = _spy(monkeypatch)
    order, made = [], []
    real_grown, real_refined = ml.grown_fine_starts, ml._refined_start

    def grown(topo, fine, starts, *args, **kwargs):
        order.append(("grown", len(starts)))
        return real_grown(topo, fine, starts, *args, **kwargs)

    def refined(*args, **kwargs):
        order.append(("refined", 0))
        return real_refined(*args, **kwargs)

    real_measured = gs.GrownPrediction.measured

    def measured(self, start, seconds):
        made.append(start[2])
        return real_measured(self, start, seconds)

    def seconds(self, start):
        return 0.0 if not made else 1e9

    monkeypatch.setattr(ml, "GROWN_TIMED", "first")
    monkeypatch.setattr(gs, "PREDICTION", "work")
    monkeypatch.setattr(ml, "grown_fine_starts", grown)
    monkeypatch.setattr(ml, "_refined_start", refined)
    monkeypatch.setattr(gs.GrownPrediction, "seconds", seconds)
    monkeypatch.setattr(gs.GrownPrediction, "measured", measured)
    timed = with_time_limit(ml.map_multilevel, lambda *a, **k: None)
    r = timed(tasks, res, seed=0, time_limit=600.0)
    assert order[0][0] == "grown" and order[0][1] >= 3
    assert order[-1] == ("grown", 2) and ("refined", 0) in order[1:-1]
    assert len(made) == 1  # the other two are predicted not to end, before and after
    assert np.array_equal(r.mapping, untimed.mapping)
    for value, m in offers:
        check = tm.verify_mapping(tasks, res, topology(res).order_nodes[m])
        assert check.valid and check.max_occupancy == pytest.approx(value, rel=1e-9)
