"""The packing MILP's counts pruned by capacity and the spare time's chain of one-MILP
packings (h59bound, issue 40 item 2: the c = 1 pipelines within 10 % at T = 1-10 s).
Referees: the capacity rows themselves (every mapping whose processors hold at most ``L``
x their capacity has counts within the pruned range), the unpruned MILP (the same levels
have a packing or not), ``verify_mapping`` on every answer, and spies on what the chain is
given (the best mapping so far, a lower end raised past a level that gave nothing). No
timed assertion."""

from __future__ import annotations

import time

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import coalloc.taskmap as tm
import coalloc.taskmap.jobpack as jp
from coalloc.taskmap import generators as gen
from coalloc.taskmap import verify_mapping

_SETTINGS = dict(deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])


def _pipeline(seed: int, lan: float = 10.0):
    tasks = gen.pipeline_task_graph(n_clusters=(3, 5), cluster_size=(5, 8), c=1.0, seed=seed)
    res = gen.internet_resource_graph(n_wan=2, n_lan=3, lan_size=(3, 5), capacity=(1.0, 8.0),
                                      lan_bandwidth=lan, seed=seed + 1)  # fmt: skip
    return tasks, res


def _counts(tasks, res, layout, mapping):
    """counts[j, S]: the tasks of job j on processors below side S (from the mapping)."""
    jobs, sides, own, kids, root = layout
    pos = np.full(res.n_nodes, -1, dtype=np.int64)
    pos[np.asarray(res.processors)] = np.arange(len(res.processors))
    comp = np.asarray(sides.pcomp)[pos[np.asarray(mapping)]]
    counts = np.zeros((len(jobs), sides.ncomp), dtype=np.int64)
    for j, (m, _) in enumerate(jobs):
        np.add.at(counts[j], comp[m], 1)
    for S in sides.order.tolist():  # leaves first
        if sides.parent[S] >= 0:
            counts[:, int(sides.parent[S])] += counts[:, S]
    return counts


@settings(max_examples=40, **_SETTINGS)
@given(seed=st.integers(0, 10**6), draw=st.integers(0, 10**6))
def test_every_mapping_within_the_capacity_rows_has_counts_within_the_pruned_range(seed, draw):
    """``_most_counts`` at the level of a random mapping's processors (each processor's load,
    its jobs' tasks at their heaviest weight, over its capacity) is at least that mapping's
    count of every job below every side: the pruning removes no count the capacity rows of
    the MILP allow."""
    tasks, res = _pipeline(seed % 1000)
    layout = jp._layout(tasks, res)
    assert layout is not None
    jobs, sides, own, kids, root = layout
    rng = np.random.default_rng(draw)
    procs = np.asarray(res.processors)
    mapping = procs[rng.integers(0, len(procs), tasks.n)]
    w = tasks.node_weight.astype(np.float64)
    heavy = np.zeros(tasks.n)
    for m, _ in jobs:
        heavy[m] = w[m].max()
    load = np.zeros(res.n_nodes)
    np.add.at(load, mapping, heavy)
    L = float(max(load[p] / res.capacity[p] for p in procs))
    most = jp._most_counts(jobs, sides, own, kids, w, L)
    assert (_counts(tasks, res, layout, mapping) <= most).all()
    # and it is tight on a side with one processor and nothing below: one more task of the
    # job would be over L x its capacity (or the job is whole there)
    for S in range(sides.ncomp):
        if own[S] and not kids[S]:
            cap = float(sides.cap[own[S][0]])
            for j, (m, _) in enumerate(jobs):
                k = int(most[j, S])
                assert k * w[m].max() <= L * cap * (1 + 1e-9)
                assert k == m.shape[0] or (k + 1) * w[m].max() > L * cap


@pytest.mark.slow
@settings(max_examples=8, **_SETTINGS)
@given(seed=st.integers(0, 10**6), lan=st.sampled_from([2.0, 10.0]))
def test_the_pruned_milp_has_a_packing_at_the_same_levels_as_the_full_one(seed, lan):
    """At levels between the bound and the mapper's answer the MILP with and without the
    pruning both answer or both do not (the pruned counts are ones the capacity rows forbid),
    and each answer is a valid mapping."""
    tasks, res = _pipeline(seed % 1000, lan)
    layout = jp._layout(tasks, res)
    start = tm.solve(tasks, res)
    lo, hi = float(start.bound), float(start.max_occupancy)
    for f in (0.1, 0.4, 0.8):
        L = lo + f * (hi - lo)
        got = []
        for prune in (False, True):
            jp.PRUNE_CAPACITY = prune
            try:
                m = jp._packing(tasks, res, layout, L, time.perf_counter() + 1e6)
            finally:
                jp.PRUNE_CAPACITY = True
            if m is not None:
                assert verify_mapping(tasks, res, m).valid
            got.append(m is not None)
        assert got[0] == got[1], (L, got)


def _result(tasks, res):
    result = tm.solve(tasks, res)
    result.status = "feasible"
    return result


def test_the_chain_starts_each_packing_from_the_best_answer_and_raises_its_lower_end(
    monkeypatch,
):  # fmt: skip
    """With the one MILP ending early, more packings follow in the time left: each from the
    best mapping so far (a better one is kept), the lower end raised past a level that gave
    nothing better (back at the bound after a better one), at most ``SPARE_CHAIN`` more; the
    result is the best verified answer."""
    tasks, res = _pipeline(11)
    result = _result(tasks, res)
    before = float(result.max_occupancy)
    bound = 0.5 * float(result.bound)  # (a lower bound too: the gap stays open throughout)
    result.bound = bound
    better = jp.pack_jobs(tasks, res, result.mapping, time_limit=1e6)  # a real, better answer
    assert better[1] < before
    calls = []

    def fake(t, r, mapping, **kw):  # better once (the second call), then nothing better
        calls.append((np.asarray(mapping).copy(), kw))
        if len(calls) == 2:
            return better[0].copy(), better[1]
        return np.asarray(mapping), float(verify_mapping(t, r, mapping).max_occupancy)

    monkeypatch.setattr(jp, "pack_jobs", fake)
    monkeypatch.setattr(jp, "SPARE_PROOF_MIN", float("inf"))  # no proof: the gap stays open
    jp.pack_in_spare_time(tasks, res, result, time.perf_counter() + 10.0)
    assert len(calls) == 1 + jp.SPARE_CHAIN  # the first, then the whole chain (none within)
    assert all(kw["tries"] == 1 and kw["first"] == jp.SPARE_FIRST for _, kw in calls)
    lows = [kw["lower"] for _, kw in calls]
    assert lows[0] == pytest.approx(bound)
    # the first gave nothing: the second's lower end at the first's level
    assert lows[1] == pytest.approx(bound + jp.SPARE_FIRST * (before - bound))
    assert lows[2] == pytest.approx(bound)  # the second beat the answer: from the bound again
    for a, b in zip(lows[2:], lows[3:]):
        assert b > a  # nothing better since: raised each time
    assert (calls[0][0] == calls[1][0]).all()  # from the mapper's answer until the better one
    assert all((m == better[0]).all() for m, _ in calls[2:])
    assert float(result.max_occupancy) == pytest.approx(better[1])
    assert verify_mapping(tasks, res, result.mapping).valid


def test_no_chain_when_the_knob_is_off_or_the_answer_is_within_the_gap(monkeypatch):
    tasks, res = _pipeline(11)
    calls = []

    def fake(t, r, mapping, **kw):
        calls.append(kw)
        return np.asarray(mapping), float(verify_mapping(t, r, mapping).max_occupancy)

    monkeypatch.setattr(jp, "pack_jobs", fake)
    monkeypatch.setattr(jp, "SPARE_CHAIN", 0)
    jp.pack_in_spare_time(tasks, res, _result(tasks, res), time.perf_counter() + 10.0)
    assert len(calls) == 1
    monkeypatch.setattr(jp, "SPARE_CHAIN", 6)
    calls.clear()
    result = _result(tasks, res)
    within = float(result.max_occupancy) * (1 - 0.5 * jp.SPARE_GAP)

    def close(t, r, mapping, **kw):  # an answer within the gap at once: the chain stops
        calls.append(kw)
        return np.asarray(mapping), within

    monkeypatch.setattr(jp, "pack_jobs", close)
    monkeypatch.setattr(jp, "SPARE_PROOF_MIN", float("inf"))
    result.bound = within * (1 - 0.5 * jp.SPARE_GAP)
    jp.pack_in_spare_time(tasks, res, result, time.perf_counter() + 10.0)
    assert len(calls) == 1


@pytest.mark.slow
def test_the_chain_in_solve_is_valid_and_never_worse_than_its_first_packing(monkeypatch):
    """The real chain on a light pipeline with a budget its small MILPs do not reach: the
    answer verifies, its bound is not above it, and it is no worse than the one MILP alone
    (the chain's first packing is that MILP, given the same time)."""
    tasks, res = _pipeline(11)
    monkeypatch.setattr(jp, "SPARE_CHAIN", 0)
    one = tm.solve(tasks, res, time_limit=12.0)
    monkeypatch.setattr(jp, "SPARE_CHAIN", 6)
    chain = tm.solve(tasks, res, time_limit=12.0)
    for out in (one, chain):
        rep = verify_mapping(tasks, res, out.mapping)
        assert rep.valid and float(rep.max_occupancy) == pytest.approx(out.max_occupancy)
        assert out.bound <= out.max_occupancy * (1 + 1e-9)
    assert chain.max_occupancy <= one.max_occupancy * (1 + 1e-9)
