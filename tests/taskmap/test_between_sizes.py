"""The prefix sizes between the halvings (:func:`coalloc.taskmap.starts._between_starts`,
h56sets): when the best coarse start is node-bound on a prefix of ``k`` processors, the
sizes between ``k`` and the next larger prefix are searched. Referees: the exact solver
(:func:`coalloc.taskmap.solve_exact_mapping`, a MILP) on a tiny instance whose optimum uses
3 of 4 processors, :func:`coalloc.taskmap.max_occupancy` from scratch, and the halvings
written out independently."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

import coalloc.taskmap as tm
from coalloc.taskmap import hierarchy, layermoves, starts
from coalloc.taskmap.levels import TaskLevel


class _Offers:
    """A stand-in for the multilevel mapper's incumbent: records what is offered."""

    def __init__(self):
        self.values: list = []

    def offer(self, value, m, depth, history, **counts):
        self.values.append(float(value))


@pytest.fixture(autouse=True)
def _no_layer_moves(monkeypatch):
    """The probes alone: the layer moves after the sum step (h58edge follow-up) are off
    here (they change answers the probes' invariants compare)."""
    monkeypatch.setattr(layermoves, "LAYERS", False)


def _two_racks() -> tm.ResourceGraph:
    """Two racks of two processors under a root; the racks' uplinks slow (1), the
    processors' links fast (100). Hierarchy order: rack A's two, then rack B's."""
    return tm.ResourceGraph.from_edges(
        [0, 0, 0, 1, 1, 1, 1],
        [[0, 1], [0, 2], [1, 3], [1, 4], [2, 5], [2, 6]],
        [1.0, 1.0, 100.0, 100.0, 100.0, 100.0],
    )


def _two_cliques(nx: int = 8, ny: int = 4) -> tm.TaskGraph:
    """Unit tasks in two cliques (volume 10 a pair) joined by one light pair (0.5): ``X``
    of ``nx`` tasks, ``Y`` of ``ny`` (interleaved indices, so that blocks of the task order
    are no answer). Onto :func:`_two_racks` with ``nx = 2 ny``: ``X`` split over rack A,
    ``Y`` on one processor of rack B (3 of the 4 processors) loads every processor with
    ``ny``; any split of 2 racks' halves cuts a clique across an uplink; 2 processors carry
    ``1.5 ny``."""
    n = nx + ny
    y = list(range(0, n, n // ny))[:ny]
    x = [t for t in range(n) if t not in y]
    vol = np.zeros((n, n))
    for grp in (x, y):
        for a, b in itertools.combinations(grp, 2):
            vol[a, b] = vol[b, a] = 10.0
    vol[x[0], y[0]] = vol[y[0], x[0]] = 0.5
    return tm.TaskGraph(np.ones(n), vol)


def _starts(tasks, res, probes: int, monkeypatch) -> tuple:
    monkeypatch.setattr(starts, "BETWEEN_PROBES", probes)
    topo = hierarchy.topology(res)
    level = TaskLevel.of(tasks)
    sets = starts._processor_sets(topo, True)
    found = starts._coarse_starts(topo, level, 0, sets, (1.0,), _Offers())
    return topo, sets, sorted(found, key=lambda s: s[:4])


def _halvings(p: int) -> list:
    out = [p]
    while out[-1] > 1:
        out.append(-(-out[-1] // 2))
    return out


def test_three_of_four_processors_is_searched_and_is_the_best_coarse_start(monkeypatch):
    tasks, res = _two_cliques(), _two_racks()
    topo, sets, old = _starts(tasks, res, 0, monkeypatch)
    assert sorted({-s[1] for s in old}) == sorted(_halvings(4))  # 4, 2, 1 only
    _, _, new = _starts(tasks, res, 3, monkeypatch)
    sizes = [-s[1] for s in new]
    assert 3 in sizes and new[0][6].tolist() == [0, 1, 2]  # the prefix of 3 is the best
    assert new[0][0] < old[0][0] * (1 - 1e-9)  # strictly below every halving's start
    for s in new:  # each start's value: its mapping's maximum occupancy from scratch
        occ, _ = tm.max_occupancy(tasks, res, topo.order_nodes[s[4].m])
        assert s[0] == pytest.approx(occ)
    assert len(new) == len(old) + 1  # 2 -> 4 leaves one size between: one probe


def test_the_default_reaches_the_exact_optimum_on_three_processors(monkeypatch):
    tasks, res = _two_cliques(), _two_racks()
    exact = tm.solve_exact_mapping(tasks, res)
    assert exact.status == "optimal"
    monkeypatch.setattr(starts, "BETWEEN_PROBES", 3)
    got = tm.map_multilevel(tasks, res, paper_start=0)  # (the paper's greedy finds it too)
    assert tm.verify_mapping(tasks, res, got.mapping).max_occupancy == pytest.approx(
        got.max_occupancy
    )
    assert got.max_occupancy == pytest.approx(exact.max_occupancy)
    assert got.iterations["initial_processors"] == 3
    monkeypatch.setattr(starts, "BETWEEN_PROBES", 0)  # without the probes: the halvings
    old = tm.map_multilevel(tasks, res, paper_start=0)
    assert old.max_occupancy > exact.max_occupancy * (1 + 1e-9)


def test_no_probe_where_the_best_start_is_link_bound_or_on_all(monkeypatch):
    monkeypatch.setattr(starts, "BETWEEN_PROBES", 3)
    # one rack of two over fast links and a light task graph: the best start is on all
    res = tm.ResourceGraph.from_edges([0, 1, 1], [[0, 1], [0, 2]], [100.0, 100.0])
    tasks = tm.TaskGraph(np.ones(4), np.ones((4, 4)) - np.eye(4))
    _, sets, new = _starts(tasks, res, 3, monkeypatch)
    assert -new[0][1] == 2 and len(new) == len(sets)
    # a link binds at the best start: nothing between (fewer processors, not more)
    topo = hierarchy.topology(_two_racks())
    level = TaskLevel.of(_two_cliques())
    best = starts._one_start(topo, level, 0, np.arange(2), np.ones(4), 1.0, 0, _Offers())
    node, link = best[4].occ()
    assert node.max() >= link.max()
    bound = starts._one_start(topo, level, 0, np.arange(4), np.ones(4), 1.0, 0, _Offers())
    node, link = bound[4].occ()
    assert link.max() > node.max()
    sets = [np.arange(4), np.arange(2), np.arange(1)]
    assert starts._between_starts(topo, level, 0, [bound], sets, [0.0], _Offers()) == []
    assert len(starts._between_starts(topo, level, 0, [best], sets, [0.0], _Offers())) == 1


def test_under_a_time_limit_a_probe_begins_only_where_it_is_predicted_to_fit(monkeypatch):
    monkeypatch.setattr(starts, "BETWEEN_PROBES", 3)
    topo = hierarchy.topology(_two_racks())
    level = TaskLevel.of(_two_cliques())
    best = starts._one_start(topo, level, 0, np.arange(2), np.ones(4), 1.0, 0, _Offers())
    sets = [np.arange(4), np.arange(2), np.arange(1)]
    monkeypatch.setattr(starts, "time_left", lambda: 1.0)
    # a coarse start took 0.2 s: 0.1 x 1 s left is too little; 0.05 s fits
    assert starts._between_starts(topo, level, 0, [best], sets, [0.2], _Offers()) == []
    assert len(starts._between_starts(topo, level, 0, [best], sets, [0.05], _Offers())) == 1


def _tree(fanout: int, depth: int, top_bw: float) -> tm.ResourceGraph:
    """A tree of ``fanout ** depth`` unit processors; the links below the root ``top_bw``,
    every other link 100."""
    edges, bws, cap = [], [], [0.0]
    frontier = [0]
    for level in range(depth):
        nxt = []
        for parent in frontier:
            for _ in range(fanout):
                cap.append(1.0 if level == depth - 1 else 0.0)
                edges.append([parent, len(cap) - 1])
                bws.append(top_bw if level == 0 else 100.0)
                nxt.append(len(cap) - 1)
        frontier = nxt
    return tm.ResourceGraph.from_edges(cap, edges, bws)


@settings(max_examples=25, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow])  # fmt: skip
@given(
    side=st.integers(4, 9),
    top_bw=st.sampled_from([0.5, 2.0, 8.0, 50.0]),
    fanout=st.sampled_from([2, 4]),
    seed=st.integers(0, 3),
)
def test_the_probes_lie_between_and_bisect_the_interval(side, top_bw, fanout, seed):
    probes = 3
    rng = np.random.default_rng(seed)
    tasks = tm.generators.stencil_task_graph(
        (side, side), compute=(0.5, 2.0), volume=(0.5, 4.0), seed=int(rng.integers(100))
    )
    res = _tree(fanout, 2 if fanout == 4 else 4, top_bw)
    topo = hierarchy.topology(res)
    level = TaskLevel.of(tasks)
    sets = starts._processor_sets(topo, True)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(starts, "BETWEEN_PROBES", probes)
        found = starts._coarse_starts(topo, level, 0, sets, (1.0,), _Offers())
        again = starts._coarse_starts(topo, level, 0, sets, (1.0,), _Offers())
    old, new = found[: len(sets)], found[len(sets) :]
    assert len(new) <= probes
    best = min(old, key=lambda s: s[:4])
    k = best[6].shape[0]
    node, link = best[4].occ()
    sizes = [s.shape[0] for s in sets if np.array_equal(s, np.arange(s.shape[0]))]
    upper = min((s for s in sizes if s > k), default=k)
    if link.max(initial=0.0) > node.max() or upper - k <= 1:
        assert new == []
        return
    assert new, "a node-bound best start with sizes between gets a probe"
    lo, hi = k, upper
    for s in new:  # the binary search, replayed on the probes' own occupancies
        mid = s[6].shape[0]
        assert mid == (lo + hi) // 2 and s[6].tolist() == list(range(mid))
        n_occ, l_occ = s[4].occ()
        lo, hi = (mid, hi) if n_occ.max() >= l_occ.max(initial=0.0) else (lo, mid)
        occ, _ = tm.max_occupancy(tasks, res, topo.order_nodes[s[4].m])
        assert s[0] == pytest.approx(occ)
    assert len(new) == probes or hi - lo <= 1
    assert [s[0] for s in again] == [s[0] for s in found]  # same input, same starts


def _plan_of(starts_list, keep=2, coarsest=3, n_procs=16, n_tasks=500):
    return [(s[6].shape[0], tops) for s, tops in starts._plan(starts_list, keep, coarsest,
                                                              n_procs, n_tasks)]  # fmt: skip


def _fake(value: float, k: int, i: int) -> tuple:
    return (value, -k, -1.0, i, None, None, np.arange(k))


def test_the_probes_take_no_place_of_the_other_starts():
    # 16 processors: halvings 16, 8, 4, 2, 1; probes of 12, 10, 9 ranked first
    others = [_fake(5.0, 8, 1), _fake(6.0, 16, 0), _fake(7.0, 4, 2), _fake(9.0, 2, 3)]
    probes = [_fake(3.0, 9, 5), _fake(4.0, 10, 6), _fake(8.0, 12, 7)]
    ranked = sorted(others + probes, key=lambda s: s[:4])
    alone = _plan_of(sorted(others, key=lambda s: s[:4]))
    with_probes = _plan_of(ranked)
    assert [p for p in with_probes if p[0] in (16, 8, 4, 2, 1)] == alone  # theirs unchanged
    # untimed (no time limit in force): the probes after the others; the two best of all
    # go on, each also bisected again on the finest graph
    assert with_probes[len(alone) :] == [(9, [3, 0]), (10, [3, 0])]


def test_under_a_time_limit_the_probes_come_in_rank_order(monkeypatch):
    monkeypatch.setattr(starts, "time_left", lambda: 1.0)
    others = [_fake(5.0, 8, 1), _fake(6.0, 16, 0)]
    probes = [_fake(3.0, 9, 5), _fake(4.0, 10, 6)]
    ranked = sorted(others + probes, key=lambda s: s[:4])
    assert [k for k, _ in _plan_of(ranked)] == [9, 10, 8, 16]


@settings(max_examples=40, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow])  # fmt: skip
@given(seed=st.integers(0, 200), racks=st.integers(1, 3), nodes=st.integers(2, 4))
@example(seed=32, racks=2, nodes=3)  # the digests' geometric-32
def test_an_untimed_answer_changes_only_where_it_is_strictly_lower(seed, racks, nodes):
    # the digests' small geometric graphs on clusters (geometric-32 of the digests: 4.381
    # rose to 4.550 where the probes took the others' places in the plan)
    tasks = tm.generators.geometric_task_graph(12 + seed % 9, seed=seed)
    res = tm.generators.hierarchical_cluster(n_racks=racks, nodes_per_rack=nodes)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(starts, "BETWEEN_PROBES", 0)
        old = tm.map_multilevel(tasks, res)
        mp.setattr(starts, "BETWEEN_PROBES", 3)
        new = tm.map_multilevel(tasks, res)
    report = tm.verify_mapping(tasks, res, new.mapping)
    assert report.max_occupancy == pytest.approx(new.max_occupancy)
    if not new.max_occupancy < old.max_occupancy * (1 - 1e-12):
        assert new.mapping.tolist() == old.mapping.tolist()
        assert new.max_occupancy == old.max_occupancy


@pytest.mark.xfail(strict=True, reason="known: the probes raise this answer (5.2346 -> 5.2852), "
                   "layer moves on or off, because a probe's start (5.285) is chosen over the "
                   "12-processor one (5.345) before the steps after the search, which lower "
                   "that one to 5.2346 and not the probe's; the derandomized property test "
                   "above misses this example")  # fmt: skip
@pytest.mark.parametrize("layers", [False, True])
def test_the_probes_never_raise_geometric_101_on_three_racks_of_two(monkeypatch, layers):
    from coalloc.taskmap import layermoves

    monkeypatch.setattr(layermoves, "LAYERS", layers)
    tasks = tm.generators.geometric_task_graph(12 + 101 % 9, seed=101)
    res = tm.generators.hierarchical_cluster(n_racks=3, nodes_per_rack=2)
    monkeypatch.setattr(starts, "BETWEEN_PROBES", 0)
    old = tm.map_multilevel(tasks, res)
    monkeypatch.setattr(starts, "BETWEEN_PROBES", 3)
    new = tm.map_multilevel(tasks, res)
    for r in (old, new):
        assert tm.verify_mapping(tasks, res, r.mapping).max_occupancy == pytest.approx(
            r.max_occupancy)  # fmt: skip
    assert new.max_occupancy <= old.max_occupancy * (1 + 1e-12)
