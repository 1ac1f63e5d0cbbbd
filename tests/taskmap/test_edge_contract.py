"""The timed contract's edges (issue 40, h58edge): the route-cost pass polled inside
(:data:`~coalloc.taskmap.refinement.CUT_CHUNK`). Referees: the same pass in one chunk (the
moves and the mapping, exactly) and the family's ``verify_mapping``."""

from __future__ import annotations

import numpy as np
import pytest

import coalloc.taskmap as tm
from coalloc.taskmap import generators as gen
from coalloc.taskmap import refinement
from coalloc.taskmap.hierarchy import topology
from coalloc.taskmap.levels import TaskLevel
from coalloc.taskmap.refinement import RefineState, cut_refine


def _dense_case(seed: int) -> tuple:
    """A random dense task graph (a coarsest level's kind) on a random cluster, a random
    start mapping, its topology and level."""
    rng = np.random.default_rng(seed)
    n = int(rng.integers(8, 60))
    vol = rng.uniform(0.5, 4.0, (n, n)) * (rng.random((n, n)) < rng.uniform(0.2, 0.9))
    vol = np.triu(vol, 1)
    tasks = tm.TaskGraph(rng.uniform(0.5, 2.0, n), vol + vol.T)
    res = gen.hierarchical_cluster(n_racks=int(rng.integers(1, 3)),
                                   nodes_per_rack=int(rng.integers(1, 4)),
                                   cores_per_node=int(rng.integers(1, 5)),
                                   speed=(0.5, 3.0), seed=seed)  # fmt: skip
    topo = topology(res)
    level = TaskLevel.of(tasks)
    m = rng.integers(0, topo.P, n).astype(np.int64)
    return tasks, res, topo, level, m


@pytest.mark.parametrize("seed", range(40))
def test_the_chunked_pass_makes_the_same_moves_as_one_chunk(monkeypatch, seed):
    tasks, res, topo, level, m = _dense_case(seed)
    k = int(np.random.default_rng(seed).integers(1, topo.P + 1))
    used = np.arange(k, dtype=np.int64)
    share = topo.cap / topo.cap.max()
    out = []
    for chunk in (0, 1, 7, 64):
        monkeypatch.setattr(refinement, "CUT_CHUNK", chunk)
        state = RefineState(topo, level, m)
        moves = cut_refine(state, used, share)
        out.append((moves, state.m.copy(), state.nload.copy()))
    for moves, mapping, nload in out[1:]:
        assert moves == out[0][0]
        assert np.array_equal(mapping, out[0][1])
        assert np.array_equal(nload, out[0][2])
    report = tm.verify_mapping(tasks, res, topo.order_nodes[out[0][1]])
    assert report.valid, report


def test_the_pass_polls_the_deadline_between_its_chunks(monkeypatch):
    """The deadline is polled between the chunks of a pass's scoring, before any of its
    moves: a deadline that passes there stops the pass before it moves a task."""
    for seed in range(20):  # an instance whose first pass moves and scores many entries
        tasks, res, topo, level, m = _dense_case(seed)
        used, share = np.arange(topo.P, dtype=np.int64), topo.cap / topo.cap.max()
        probe = RefineState(topo, level, m)
        if cut_refine(probe, used, share, passes=1) > 0 and level.ix.shape[0] > 40:
            break
    else:  # pragma: no cover - the draws above always have one
        pytest.fail("no instance with a moving first pass")

    def polls_before_a_move(chunk: int) -> int:
        state = RefineState(topo, level, m)
        seen = []
        monkeypatch.setattr(refinement, "CUT_CHUNK", chunk)
        monkeypatch.setattr(refinement.interrupt, "check",
                            lambda: seen.append(np.array_equal(state.m, m)))  # fmt: skip
        cut_refine(state, used, share)
        monkeypatch.undo()
        assert not np.array_equal(state.m, m)
        return seen.index(False)  # the polls before the first pass's moves

    chunks = -(-int(level.ix.shape[0]) // 8) // 4  # at least this many chunks of 8 entries
    assert polls_before_a_move(8) >= 2 + chunks
    assert polls_before_a_move(0) == 3  # the pass's start, its one chunk, after the scoring


def test_no_fitting_start_stops_the_run_at_once(monkeypatch, stand_in_starts):
    """Where the first coarse start is predicted not to fit (:data:`starts.STARTS_FIT`),
    the run stops at once (``STOP_UNFIT``), not at its deadline 30 s away; off, it waits
    (its poll is stood in for: the deadline passes at the first one)."""
    import time

    from coalloc._shared import params
    from coalloc.taskmap import starts as S

    made, topo, sets, inc = (stand_in_starts.made, stand_in_starts.topo, stand_in_starts.sets,
                             stand_in_starts.inc)  # fmt: skip
    t = time.perf_counter()
    with pytest.raises(params._TimeLimitReached):
        with params._Until(time.perf_counter() + 30.0):  # the time limit's own scope
            S._coarse_starts(topo, None, 0, sets, (0.0,), inc, 60.0)  # the coarsening: 60 s
    assert made == [] and time.perf_counter() - t < 10.0
    polls = []

    def check() -> None:
        polls.append(1)
        raise params._TimeLimitReached()

    monkeypatch.setattr(S, "STOP_UNFIT", False)
    monkeypatch.setattr(S.interrupt, "check", check)
    with pytest.raises(params._TimeLimitReached):
        with params._Until(time.perf_counter() + 30.0):
            S._coarse_starts(topo, None, 0, sets, (0.0,), inc, 60.0)
    assert made == [] and polls == [1]  # it waited (and its poll raised)


@pytest.mark.parametrize("method", ["portfolio", "multilevel"])
def test_the_default_alone_makes_the_paper_starts_late_at_tiny_budgets(monkeypatch, method,
                                                                       start_order):
    """``portfolio.PAPER_AFTER_BELOW`` (h58edge): the default's multilevel member, under a
    budget below it, refines its first coarse start before the paper's starts; the named
    ``"multilevel"`` keeps its order (the paper's first; its module's knob is off; the
    default passes its own as ``multilevel._mapped``'s parameter, h59edge). No
    clock: the budget (600 s) is compared with a knob of 1000 s; no bound (its spare-time
    steps would use the 600 s). Verified answers."""
    from coalloc.taskmap import multilevel as ml
    from coalloc.taskmap import portfolio as pf

    tasks, res = tm.generators.table1_instance(1, 7103)
    order = start_order
    monkeypatch.setattr(pf, "PAPER_AFTER_BELOW", 1000.0)
    result = tm.solve(tasks, res, method, seed=0, time_limit=600.0, bound=False)
    assert tm.verify_mapping(tasks, res, result.mapping).valid
    assert order.count("paper") == 1 and "refined" in order
    assert order[:2] == (["refined", "paper"] if method == "portfolio" else ["paper", "refined"])
    assert not hasattr(ml, "_PAPER_AFTER")  # a parameter passed down, no context variable


def _geometric_500():
    from bench.taskmap.vs_peers import KINDS, instances

    return [b for _, name, b in instances(KINDS) if name.startswith("geometric 500")][0]()


def test_both_ways_gives_the_flat_bisection_where_a_vcycle_won(monkeypatch):
    """``splits.both_ways`` (h58edge): untimed, where a multilevel split won a first split,
    the plain bisection and then the one with the flat splits alone (the same as with
    ``VCYCLE_SPLITS`` 0); knob off or timed: the plain one alone."""
    from coalloc.taskmap import splits
    from coalloc.taskmap.bisection import bisect_map

    tasks, res = _geometric_500()
    topo, level = topology(res), TaskLevel.of(tasks)
    share, sub = topo.cap / topo.cap.max(), np.arange(topo.P, dtype=np.int64)

    def plain():
        return bisect_map(topo, level, sub, share)

    both = splits.both_ways(plain)
    assert len(both) == 2
    assert np.array_equal(both[0], plain())
    monkeypatch.setattr(splits, "VCYCLE_SPLITS", 0)
    flat = plain()
    monkeypatch.undo()
    assert np.array_equal(both[1], flat) and not np.array_equal(flat, both[0])
    for m in both:
        assert tm.verify_mapping(tasks, res, topo.order_nodes[m]).valid
    assert len(splits.both_ways(plain, 2)) == 1  # the second fine re-bisection of a run
    monkeypatch.setattr(splits, "VCYCLE_BOTH", 0)
    assert len(splits.both_ways(plain)) == 1
    monkeypatch.setattr(splits, "VCYCLE_BOTH", 1)
    monkeypatch.setattr(splits, "time_left", lambda: 10.0)  # timed: the plain one alone
    assert len(splits.both_ways(plain)) == 1


def test_the_untimed_run_keeps_the_better_of_both_splits(monkeypatch):
    """A refined start from both bisections ends at the lower of the two ends: every
    refined start of the untimed run with ``VCYCLE_BOTH`` ends at most where the same start
    ends without it (the same starts, in the same order; verified answers)."""
    from coalloc.taskmap import multilevel as ml
    from coalloc.taskmap import splits

    tasks, res = _geometric_500()
    ends = []
    real = ml._refined_start

    def spy(*a, **k):
        found = real(*a, **k)
        ends.append(found[0])
        return found

    monkeypatch.setattr(ml, "_refined_start", spy)
    both = tm.solve(tasks, res, seed=0, sum_refine=False)
    ends_both = list(ends)
    ends.clear()
    monkeypatch.setattr(splits, "VCYCLE_BOTH", 0)
    alone = tm.solve(tasks, res, seed=0, sum_refine=False)
    ends_alone = list(ends)
    assert tm.verify_mapping(tasks, res, both.mapping).valid
    assert len(ends_both) == len(ends_alone)
    assert all(b <= a * (1 + 1e-12) for b, a in zip(ends_both, ends_alone))
    assert tm.verify_mapping(tasks, res, alone.mapping).valid
