"""The timed run's own layer step and the layer moves' share of a timed search (h60edge):
``timedorder.layered`` (``LAYERED_TIMED``: untimed the same call as
``layermoves.layered``; timed, inside ``LAYERED_SHARE`` of the time left) and
``timedorder.SEARCH_SHARE`` (one call of ``layers_in_search`` stops at that share of the
time left). Every answer verified."""

import time

import numpy as np
import pytest

import coalloc.taskmap as tm
from coalloc._shared import interrupt
from coalloc._shared.params import with_time_limit
from coalloc.taskmap import layermoves, timedorder
from coalloc.taskmap.generators import hierarchical_cluster, stencil_task_graph, table1_instance

from ._layered_case import found as _answer
from ._layered_case import layered_case as _case
from ._layered_case import verified as _verified


def _timed(seconds, fn):
    """``fn()`` under a time limit of ``seconds`` (the family's own, as ``solve`` sets)."""
    return with_time_limit(lambda: fn(), lambda *a, **k: None)(time_limit=seconds)


class _Inc:
    def __init__(self, value):
        self.early_by, self.value, self.offers = 1.0, value, []
        self.early, self.early_best = np.inf, None

    def offer(self, value, m, depth, history, **counts):
        self.offers.append(value)
        self.value = min(self.value, value)

    def offer_early(self, value, m, history, **counts):
        if value < min(self.value, self.early) * (1 - 1e-12):
            self.early, self.early_best = value, (m.copy(), list(history), counts)
            self.offers.append(value)


def test_untimed_it_is_the_plain_layer_step(monkeypatch):
    """Untimed, on or off, the same answer as ``layermoves.layered``."""
    tasks, res, topo, fine, m = _case()
    best = _answer(topo, fine, m)
    want = layermoves.layered(topo, fine, best, best, res.links, {"moves": 0}, True, None)
    for on in (True, False):
        monkeypatch.setattr(timedorder, "LAYERED_TIMED", on)
        got = timedorder.layered(topo, fine, best, best, res.links, {"moves": 0}, True, None)
        assert got[0] == want[0] and np.array_equal(got[1], want[1])
    assert want[0] < best[0] * (1 - 1e-9)  # (the case is one the layer moves lower)


def test_timed_off_returns_the_answer_and_on_lowers_it(monkeypatch):
    tasks, res, topo, fine, m = _case()
    best = _answer(topo, fine, m)
    step = (topo, fine, best, best, res.links, {"moves": 0}, False, None)
    monkeypatch.setattr(timedorder, "LAYERED_TIMED", False)
    assert _timed(30.0, lambda: timedorder.layered(*step)) is best
    monkeypatch.setattr(timedorder, "LAYERED_TIMED", True)
    out = _timed(30.0, lambda: timedorder.layered(*step))
    assert out[0] < best[0] * (1 - 1e-9)
    assert _verified(tasks, res, topo, out[1], out[0]) == pytest.approx(out[0])


@pytest.mark.parametrize("where", ["layers", "sum step"])
def test_the_share_cut_keeps_the_lowest_and_does_not_raise(monkeypatch, where):
    """The share ends inside the second try (its layer moves, or its sum step): no error,
    the first try's answer stands (never above ``best``), verified."""
    tasks, res, topo, fine, m = _case()
    best = _answer(topo, fine, m)
    pre = _answer(topo, fine, np.zeros_like(m))  # all on one processor: a second try
    real, calls = layermoves.layer_refine, [0]

    def stall():
        while True:  # until the share's deadline
            interrupt.check()
            time.sleep(0.001)

    def layers(topo_, ends, state, *a, **k):
        calls[0] += 1
        if calls[0] == 2 and where == "layers":
            stall()
        return real(topo_, ends, state, *a, **k)

    def resum(topo_, fine_, mm):
        stall()

    monkeypatch.setattr(layermoves, "layer_refine", layers)
    monkeypatch.setattr(timedorder, "LAYERED_SHARE", 0.05)
    t = time.perf_counter()
    out = _timed(2.0, lambda: timedorder.layered(topo, fine, best, pre, res.links,
                                                  {"moves": 0}, False, resum))  # fmt: skip
    assert time.perf_counter() - t < 1.5  # the share (0.1 s), not the limit
    assert calls[0] == 2 and out[0] <= best[0]
    assert _verified(tasks, res, topo, out[1], out[0]) == pytest.approx(out[0])


def test_a_deadline_not_the_shares_own_is_raised_again(monkeypatch):
    """An enclosing ``interrupt.until``'s deadline (the share's has not passed)."""
    tasks, res, topo, fine, m = _case()
    best = _answer(topo, fine, m)

    def layers(*a, **k):
        raise interrupt.DeadlinePassed()

    monkeypatch.setattr(layermoves, "layer_refine", layers)
    with pytest.raises(interrupt.DeadlinePassed):
        _timed(30.0, lambda: timedorder.layered(topo, fine, best, best, res.links,
                                                {"moves": 0}, False, None))  # fmt: skip


@pytest.mark.parametrize("share", [1.0, 0.9])
def test_the_calls_deadline_inside_the_step_returns_a_verified_answer(monkeypatch, share):
    """The call's deadline passes inside the layer step (with a share of 1 the share's and
    the call's pass together: the share's error comes first): the timed solve returns a
    verified mapping, no error escapes (a held-back run at load 14 raised one)."""
    tasks, res, _, _, _ = _case()

    def layers(*a, **k):
        while True:
            interrupt.check()
            time.sleep(0.001)

    monkeypatch.setattr(layermoves, "layer_refine", layers)
    monkeypatch.setattr(timedorder, "LAYERED_SHARE", share)
    monkeypatch.setattr(timedorder, "LAYERS_SEARCH", False)
    r = tm.solve(tasks, res, seed=0, method="multilevel", time_limit=1.0)
    report = tm.verify_mapping(tasks, res, r.mapping, claimed=r.max_occupancy)
    assert report.valid and report.matches


def test_a_timed_run_that_ends_by_itself_has_the_untimed_answer(monkeypatch):
    """Table1 c=1 #1 of ``vs_peers`` (seed 7101): the untimed answer comes from the layer
    step (0.3049); a timed multilevel run that ends by itself had 0.3291 without it."""
    tasks, res = table1_instance(1, 7101)
    untimed = tm.solve(tasks, res, seed=0, method="multilevel")
    monkeypatch.setattr(timedorder, "LAYERED_TIMED", True)
    timed = tm.solve(tasks, res, seed=0, method="multilevel", time_limit=60.0)
    assert timed.status == "feasible"
    assert timed.max_occupancy <= untimed.max_occupancy * (1 + 1e-12)
    report = tm.verify_mapping(tasks, res, timed.mapping, claimed=timed.max_occupancy)
    assert report.valid and report.matches


def test_the_search_share_ends_a_call_without_an_error(monkeypatch):
    """A call of ``layers_in_search`` whose moves outlast its share: no error (the call's
    deadline is not past), the run's calls end, the start unchanged."""
    tasks, res, topo, fine, m = _case()
    found = _answer(topo, fine, m)

    def layers(*a, **k):
        while True:
            interrupt.check()
            time.sleep(0.001)

    monkeypatch.setattr(layermoves, "layer_refine", layers)
    monkeypatch.setattr(timedorder, "SEARCH_SHARE", 0.05)
    run, inc = {"moves": 0}, _Inc(found[0])
    t = time.perf_counter()
    out = _timed(2.0, lambda: timedorder.layers_in_search(topo, fine, found, inc, run,
                                                          res.links))  # fmt: skip
    assert time.perf_counter() - t < 1.5 and out is found
    assert run["layers_idle"] is True and inc.offers == []


def test_the_search_share_keeps_the_moves_kept_and_goes_on(monkeypatch):
    """The share ends in the second try: the first try's layer move was kept, so the call
    goes on past the share (more bottleneck moves), its answer held and verified."""
    tasks, res, topo, fine, m = _case()
    found = _answer(topo, fine, m)
    real, calls = layermoves.refine, [0]

    def spy(state, k):
        calls[0] += 1
        if calls[0] == 2:
            while True:
                interrupt.check()
                time.sleep(0.001)
        return real(state, k)

    monkeypatch.setattr(layermoves, "refine", spy)
    monkeypatch.setattr(timedorder, "SEARCH_SHARE", 0.05)
    inc = _Inc(found[0])
    _timed(2.0, lambda: timedorder.layers_in_search(topo, fine, found, inc, {"moves": 0},
                                                    res.links))  # fmt: skip
    assert calls[0] > 2  # on past the share
    assert len(inc.offers) == 1 and inc.offers[0] < found[0] * (1 - 1e-12)
    m_held = inc.early_best[0]
    assert _verified(tasks, res, topo, m_held, inc.offers[0]) == pytest.approx(inc.offers[0])


# ``timedorder.in_order`` (FINE_LATE): a fine re-bisection predicted not to fit is put off


def _walk(plan, slow, limit=None):
    """The items ``in_order`` yields; the consumer sleeps ``slow[(k, top)]`` seconds on each."""
    def go():
        seen = []
        for k, _start, top, _tops in timedorder.in_order(plan):
            seen.append((k, top))
            time.sleep(slow.get((k, top), 0.0))
        return seen

    return go() if limit is None else _timed(limit, go)


_PLAN = [("a", [2, 0]), ("b", [2, 0]), ("c", [2])]


def test_untimed_the_plans_order():
    assert _walk(_PLAN, {(0, 2): 0.05}) == [(0, 2), (0, 0), (1, 2), (1, 0), (2, 2)]


@pytest.mark.parametrize("on", [True, False])
def test_timed_a_slow_descents_fine_rebisection_waits_for_the_coarser_ones(monkeypatch, on):
    """The first start's descent takes 0.4 s of a 1 s limit (2 x 0.4 > 0.6 left): its fine
    re-bisection comes after the coarser refinements still to come (the second start's
    descent was quick: its own fine one is not put off); off, the plan's order."""
    monkeypatch.setattr(timedorder, "FINE_LATE", on)
    seen = _walk(_PLAN, {(0, 2): 0.4}, limit=5.0 if not on else 1.0)
    if on:
        assert seen == [(0, 2), (1, 2), (1, 0), (2, 2), (0, 0)]
    else:
        assert seen == [(0, 2), (0, 0), (1, 2), (1, 0), (2, 2)]


def test_timed_a_quick_descent_keeps_the_plans_order():
    assert _walk(_PLAN, {}, limit=30.0) == [(0, 2), (0, 0), (1, 2), (1, 0), (2, 2)]


def test_a_timed_search_puts_a_slow_starts_fine_rebisection_off(monkeypatch):
    """The real search: with the fine re-bisection of a slow descent put off, a timed run
    reaches the second start's refinement (spied) where the plan's order does not before a
    deadline that the first start's fine re-bisection would take. A stand-in clock: the
    first descent is slowed to 0.9 s of a 2 s limit (2 x 0.9 > the 1.1 s left at most)."""
    import coalloc.taskmap.multilevel as ml

    tasks = stencil_task_graph((24, 24))
    res = hierarchical_cluster(n_racks=2, nodes_per_rack=4, cores_per_node=2,
                               node_bandwidth=1.0, rack_bandwidth=0.5)  # fmt: skip
    real, calls = ml._refined_start, []

    def spy(topo, levels, start, top, *a, **k):
        calls.append((-start[1], top))
        if len(calls) == 1:
            time.sleep(0.9)
        return real(topo, levels, start, top, *a, **k)

    monkeypatch.setattr(ml, "_refined_start", spy)
    r = with_time_limit(ml.map_multilevel, lambda *a, **k: None)(tasks, res, seed=0,
                                                                 time_limit=2.0)  # fmt: skip
    tops = [t for _, t in calls]
    assert tops[0] > 0 and (len(tops) < 2 or tops[1] > 0)  # a coarser one second
    report = tm.verify_mapping(tasks, res, r.mapping, claimed=r.max_occupancy)
    assert report.valid and report.matches
