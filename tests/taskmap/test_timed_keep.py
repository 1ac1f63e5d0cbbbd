"""A timed call's budget where the held-back set's 1 s losses were about time (h57fast,
issue 40 item 1).

1. The method's limit keeps back the bound's full tests' predicted time only when a full
   test could begin in it (``solvers.STARTABLE_TESTS``): a test begins only with at least
   ``FULL_MARGIN`` x its predicted seconds left, so a count of 1-2 tests kept 0.13-0.22 s of
   a 1 s budget from the method for tests that were cut short anyway.
2. Above ``paper_start`` tasks the early answer's clock step comes after the coarse starts,
   and only where the count's answer is below the best of them
   (``timedorder.EARLY_LATE``).

Stand-in clocks and spies, no real-clock race."""

from __future__ import annotations

import numpy as np
import pytest

import coalloc.taskmap as tm
from coalloc.taskmap import bounds, solvers, timedorder
from coalloc.taskmap import multilevel as ml
from coalloc.taskmap.generators import hierarchical_cluster, stencil_task_graph, table1_instance

# --------------------------------------------------------------------------------------
# 1. the full tests' time kept back
# --------------------------------------------------------------------------------------


@pytest.mark.parametrize("count", [0, 1, 2, 3, 7, 40])
@pytest.mark.parametrize("on", [True, False])
def test_the_tests_time_is_kept_only_where_one_could_begin(clock, monkeypatch, count, on):
    tasks, res = table1_instance(1, 0)
    monkeypatch.setattr(solvers, "STARTABLE_TESTS", on)
    monkeypatch.setattr(solvers, "bound_tests", lambda *a: count)
    monkeypatch.setattr(solvers, "seconds_per_test", lambda *a: 0.1)
    monkeypatch.setattr(solvers, "timed_bound", lambda *a: (1.0, False))
    left, tests, first = solvers._timed_start(tasks, res, 5.0, clock.now, True)
    post = min(solvers.POST_SHARE * 5.0, solvers.POST_SECONDS * (tasks.n + tasks.n_edges))
    kept = min(count, bounds.USUAL_TESTS)
    if on and kept < bounds.FULL_MARGIN:
        kept = 0
    assert tests == count and first == (1.0, False)
    assert left == pytest.approx(5.0 - post - 0.1 * kept, abs=1e-12)
    if on and count in (1, 2):  # the change: nothing kept for tests that cannot begin
        assert left == pytest.approx(5.0 - post, abs=1e-12)


@pytest.mark.parametrize("count", [1, 2])
def test_a_test_never_begins_in_the_time_one_or_two_would_have_kept(clock, monkeypatch, count):
    # the premise of STARTABLE_TESTS, on the real bound: after the first part (its star
    # phase kept), the full phase given ``count`` x the predicted seconds of a test begins
    # none of them (the deadline is not moved by anything: a stand-in clock), cut short,
    # the first part's value; given room it begins them (the spy can see one)
    tasks, res = table1_instance(1, 0)
    full = []
    real = bounds._feasible

    def spy(st, L, *args, **kwargs):
        if kwargs.get("lp", True):
            full.append(L)
        return real(st, L, *args, **kwargs)

    monkeypatch.setattr(bounds, "_feasible", spy)
    first, cut = bounds.timed_bound(tasks, res, 0, clock.now + 100.0)
    assert not cut and full == []
    spt = bounds.seconds_per_test(tasks, res)
    value, cut = bounds.timed_bound(tasks, res, count, clock.now + count * spt)
    assert full == [] and cut and value == first
    tasks2, res2 = table1_instance(1, 0)  # fresh graphs (nothing cached): room for them
    bounds.timed_bound(tasks2, res2, 0, clock.now + 100.0)
    value2, cut2 = bounds.timed_bound(tasks2, res2, 5, clock.now + 100.0)
    assert full and not cut2 and value2 >= first


# --------------------------------------------------------------------------------------
# 2. the early answer's clock step after the coarse starts
# --------------------------------------------------------------------------------------


def _stencil():
    """A 24x24 stencil (576 tasks, above the default ``paper_start`` of 300) onto the
    Table 1 machine's 151 processors."""
    _, res = table1_instance(1, 0)
    return stencil_task_graph((24, 24), seed=3), res


def _order(monkeypatch) -> list:
    """The calls of the coarse starts and of the clock step, in order (spies)."""
    seen = []
    starts, clock_step = ml._coarse_starts, timedorder.early_clock

    def coarse(*args, **kwargs):
        seen.append("coarse starts")
        return starts(*args, **kwargs)

    def early(topo, fine, inc, coarse_value, finish):
        seen.append(("clock", inc.pending[0][1] < coarse_value))
        return clock_step(topo, fine, inc, coarse_value, finish)

    monkeypatch.setattr(ml, "_coarse_starts", coarse)
    monkeypatch.setattr(timedorder, "early_clock", early)
    return seen


@pytest.mark.parametrize("on", [True, False])
def test_the_clock_step_comes_after_the_coarse_starts_above_paper_start(monkeypatch, on):
    tasks, res = _stencil()
    monkeypatch.setattr(timedorder, "EARLY_LATE", on)
    seen = _order(monkeypatch)
    result = tm.solve(tasks, res, "multilevel", time_limit=60.0)
    assert tm.Instance(tasks, res).verify(result).ok
    if on:
        assert seen[0] == "coarse starts" and seen[1][0] == "clock" and len(seen) == 2
    else:
        assert seen == ["coarse starts"]


def test_up_to_paper_start_the_clock_step_stays_first(monkeypatch):
    tasks, res = _stencil()
    seen = _order(monkeypatch)
    result = tm.solve(tasks, res, "multilevel", time_limit=60.0, paper_start=tasks.n)
    assert tm.Instance(tasks, res).verify(result).ok
    assert seen == ["coarse starts"]


@pytest.mark.parametrize("instance", [_stencil, lambda: _coarsened()])
def test_untimed_answers_do_not_change(monkeypatch, instance):
    tasks, res = instance()
    answers = []
    for on in (True, False):
        monkeypatch.setattr(timedorder, "EARLY_LATE", on)
        monkeypatch.setattr(timedorder, "GROWN_NET", on)
        answers.append(tm.solve(tasks, res, "multilevel"))
    assert np.array_equal(answers[0].mapping, answers[1].mapping)


class _Inc:
    """What :func:`multilevel._early_clock` reads of the incumbent."""

    def __init__(self, value):
        self.pending = ((9.0, value, np.zeros(4, dtype=np.int64)), 0.5)
        self.early_last = 1e18
        self.rate: list = []
        self.offered: list = []

    def offer_early(self, value, mapping, history, **counts):
        self.offered.append(value)


@pytest.mark.parametrize("value, coarse, runs", [(5.0, 6.0, True), (6.0, 6.0, False),
                                                 (7.0, 6.0, False)])  # fmt: skip
def test_the_put_off_step_runs_only_below_the_best_coarse_start(value, coarse, runs):
    calls = []

    def finish(topo, fine, m, until, cap=None, rate=None):
        calls.append(until)
        return m, 3, value - 1.0

    inc = _Inc(value)
    timedorder.early_clock(None, None, inc, coarse, finish)
    assert inc.pending is None
    assert bool(calls) == runs and inc.offered == ([value - 1.0] if runs else [])


# --------------------------------------------------------------------------------------
# 3. the best coarse start refined on the coarsest level before grown starts that come first
# --------------------------------------------------------------------------------------


def _coarsened():
    """A 10x10x6 stencil (600 tasks: three coarse levels) onto a cluster of 32 cores,
    no mapping at the lower bound (the run goes on past its starts)."""
    res = hierarchical_cluster(n_racks=2, nodes_per_rack=4, cores_per_node=4)
    return stencil_task_graph((10, 10, 6), seed=3), res


@pytest.mark.parametrize("on", [True, False])
def test_the_net_comes_before_the_grown_starts(monkeypatch, on):
    tasks, res = _coarsened()
    monkeypatch.setattr(timedorder, "GROWN_NET", on)
    seen = []
    net, grown = timedorder.coarsest_refined, ml.grown_fine_starts

    def net_spy(topo, coarse, start, coarsest, max_moves, inc, run):
        out = net_spy.last = net(topo, coarse, start, coarsest, max_moves, inc, run)
        seen.append(("net", start[0], out[0]))
        return out

    def grown_spy(*args, **kwargs):
        seen.append("grown")
        return grown(*args, **kwargs)

    monkeypatch.setattr(timedorder, "coarsest_refined", net_spy)
    monkeypatch.setattr(ml, "grown_fine_starts", grown_spy)
    result = tm.solve(tasks, res, "multilevel", time_limit=60.0)
    assert tm.Instance(tasks, res).verify(result).ok
    if not on:
        assert "grown" in seen and not [s for s in seen if s != "grown"]
        return
    assert seen[0][0] == "net" and seen[1] == "grown"
    before, after = seen[0][1], seen[0][2]
    assert after <= before * (1 + 1e-12)


def test_the_net_refines_a_coarse_start_and_offers_it():
    from coalloc.taskmap.hierarchy import topology
    from coalloc.taskmap.levels import TaskLevel
    from coalloc.taskmap.refinement import RefineState
    from coalloc.taskmap.starts import _coarse_starts, _processor_sets

    tasks, res = _coarsened()
    topo = topology(res)
    fine = TaskLevel.of(tasks)
    levels = [fine]
    ml._coarsen(topo, levels, 4.0, np.random.default_rng(0))
    coarsest = len(levels) - 1
    assert coarsest > 0

    class _Offers:
        def __init__(self):
            self.offers = []

        def offer(self, value, m, depth, history, **counts):
            self.offers.append((value, m.copy(), depth))

    inc = _Offers()
    starts = _coarse_starts(topo, levels[coarsest], coarsest, _processor_sets(topo, True),
                            (1.0, 0.5, 0.0), inc)  # fmt: skip
    starts = sorted(starts, key=lambda x: x[:4])
    inc.offers.clear()
    run = {"moves": 0}
    out = timedorder.coarsest_refined(topo, levels[coarsest], starts[0], coarsest, None, inc, run)
    assert out[0] <= starts[0][0]
    if out is starts[0]:  # nothing lower: nothing offered
        assert inc.offers == []
        return
    assert out[0] < starts[0][0] and run["moves"] > 0
    value, m, depth = inc.offers[-1]
    assert depth == coarsest and value == out[0]
    for d in range(coarsest - 1, -1, -1):
        m = m[levels[d].cmap]
    occ, _ = tm.max_occupancy(tasks, res, topo.order_nodes[m])
    assert occ == pytest.approx(value, rel=1e-9)
    assert RefineState(topo, fine, m).maximum() == pytest.approx(value, rel=1e-9)


# --------------------------------------------------------------------------------------
# 4. timed: the coarse starts on all the processors first
# --------------------------------------------------------------------------------------


class _Timed:
    """What :func:`starts._coarse_starts` reads of the incumbent (``early_by``: timed)."""

    def __init__(self, early_by):
        self.early_by = early_by
        self.offers: list = []

    def offer(self, value, m, depth, history, **counts):
        self.offers.append(value)


@pytest.mark.parametrize("on", [True, False])
def test_timed_coarse_starts_on_all_processors_come_first_and_rank_the_same(monkeypatch, on):
    from coalloc.taskmap import starts as st
    from coalloc.taskmap.hierarchy import topology
    from coalloc.taskmap.levels import TaskLevel

    monkeypatch.setattr(st, "FULL_FIRST", on)
    tasks = _coarsened()[0]
    res = hierarchical_cluster(n_racks=2, nodes_per_rack=4, cores_per_node=4, speed=(1.0, 3.0),
                               seed=5)  # unequal speeds: three exponents on all  # fmt: skip
    topo = topology(res)
    levels = [TaskLevel.of(tasks)]
    ml._coarsen(topo, levels, 4.0, np.random.default_rng(0))
    coarsest = len(levels) - 1
    sets = st._processor_sets(topo, True)
    runs = {}
    for name, early_by in (("untimed", None), ("timed", 1e18)):
        inc = _Timed(early_by)
        runs[name] = (st._coarse_starts(topo, levels[coarsest], coarsest, sets,
                                        (1.0, 0.5, 0.0), inc), inc)  # fmt: skip
    untimed, timed = runs["untimed"][0], runs["timed"][0]
    ranked = [sorted(x, key=lambda s: s[:4]) for x in (untimed, timed)]
    assert [s[:4] for s in ranked[0]] == [s[:4] for s in ranked[1]]
    for a, b in zip(*ranked):
        assert np.array_equal(a[4].m, b[4].m)
    procs = [s[6].shape[0] for s in timed[: len(untimed)]]
    full = sum(p == topo.P for p in procs)
    assert full == 3  # the speed exponents on all processors (capacities differ)
    if on:
        assert all(p == topo.P for p in procs[:full]) and procs[full] < topo.P
    else:
        assert procs == [s[6].shape[0] for s in untimed[: len(untimed)]]
        assert procs[1] < topo.P  # the subsets before the other exponents, as before
