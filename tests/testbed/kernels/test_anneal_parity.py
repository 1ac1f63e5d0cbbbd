"""The compiled annealer and its Python twin give the same answer on random problems."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from coalloc import testbed as tb
from coalloc.testbed import generators as g
from coalloc.testbed.anneal import kernel_data, run_anneal
from coalloc.testbed.problem import build_problem

FAST = {
    "t0": 10.0,
    "melt_moves": 60,
    "melt_accept": 0.95,
    "cooling": 0.7,
    "min_moves": 40,
    "t_stop": 0.05,
    "frozen": 3,
    "max_moves": 3000,
}


@settings(max_examples=25, deadline=None)
@given(st.integers(0, 2**31), st.integers(2, 9), st.integers(0, 4), st.integers(0, 2**63))
def test_parity(gseed, size, kind, seed):
    pt = g.deterlab(14 + kind * 3, 2 + kind % 3, trunk_bw=300000 * (1 + kind), seed=gseed)
    top = g.random_topology(size, seed=gseed)
    pr = build_problem(top, pt)
    if any(not c for c in pr.cand):
        return
    a = run_anneal(pr, seed, FAST, "compiled")
    b = run_anneal(pr, seed, FAST, "python")
    assert np.array_equal(a["where"], b["where"])
    for key in ("score", "violations", "moves", "accepted", "temperatures", "t_start"):
        assert a[key] == b[key], key


def test_parity_with_fixed_vclass_and_multislot():
    pt = tb.parse_ptop(
        "node s0 switch:1 *lan:*\nnode s1 switch:1 *lan:*\n"
        "link t s0 s1 150 0 0\n"
        + "".join(
            f"node p{i} pc:1 vm:3 - ?+mem:4 f{i % 2}:0.3\n"
            f"link e{i}a p{i} s{i % 2} 100 0 0\nlink e{i}b p{i} s{i % 2} 100 0 0\n"
            for i in range(6)
        )
    )
    top = tb.parse_top(
        "make-vclass C 0.5 pc vm\n"
        + "".join(f"node v{i} {'C' if i % 2 else 'vm'} ?+mem:1\n" for i in range(6))
        + "node lan0 lan\n"
        + "".join(f"link l{i} v{i} lan0 50 0 0\n" for i in range(6))
        + "link x v0 v1 20 0 0 emulated trivial_ok\nfix-node v2 p3\n"
    )
    pr = build_problem(top, pt)
    for seed in range(5):
        a = run_anneal(pr, seed, FAST, "compiled")
        b = run_anneal(pr, seed, FAST, "python")
        assert np.array_equal(a["where"], b["where"]) and a["score"] == b["score"]
        if a["valid"]:
            r = tb.routing.route(pr, a["where"]) if hasattr(tb, "routing") else None
            del r


@settings(max_examples=25, deadline=None)
@given(st.integers(0, 2**31), st.integers(2, 14), st.integers(0, 4), st.sampled_from(["1", "2m"]))
def test_allocate_parity(gseed, size, kind, scoring):
    from coalloc.testbed._allocate import allocate_all as compiled
    from coalloc.testbed._reference.allocate import allocate_all as twin
    from coalloc.testbed.assignplus import _pclass_scores, partition, plus_data

    pt = g.deterlab(10 + kind * 4, 2 + kind % 3, trunk_bw=300000 * (1 + kind), seed=gseed)
    top = g.random_topology(size, seed=gseed)
    pr = build_problem(top, pt)
    if any(not c for c in pr.cand):
        return
    data = plus_data(pr, _pclass_scores(pr, scoring, None), partition(pr))
    aware = bool(gseed % 2)
    a = compiled(data, [0, 1, 2, 3, 4, 5], True, 50, aware)
    b = twin(data, [0, 1, 2, 3, 4, 5], True, 50, aware)
    assert np.array_equal(a["where"], b["where"])
    assert np.array_equal(a["fail"], b["fail"])
    assert np.array_equal(np.isnan(a["isw"]), np.isnan(b["isw"]))
    assert np.array_equal(a["isw"][~np.isnan(a["isw"])], b["isw"][~np.isnan(b["isw"])])
    assert a["exchanges"] == b["exchanges"]


def _star_bandwidths(top, rng):
    """The same topology with some links' bandwidth left to the interfaces (``*``)."""
    lines = []
    for line in tb.format_top(top).splitlines():
        tok = line.split()
        if tok and tok[0] == "link" and rng.random() < 0.4:
            tok[4] = "*"
        lines.append(" ".join(tok))
    return tb.parse_top("\n".join(lines))


@pytest.mark.slow
@settings(max_examples=30, deadline=None)
@given(st.integers(0, 2**31), st.integers(6, 26), st.booleans(), st.booleans(),
       st.sampled_from([1e5, 3e5, 2e6]))  # fmt: skip
def test_allocate_parity_exchange_paths(gseed, size, star, subset, trunk_bw):
    """The compiled exchange skips moves and swaps whose bandwidth gain cannot win and reads
    costs from per-switch rows; the twin evaluates everything. Tight trunks (overload, where
    nothing may be skipped), links without their own bandwidth (no rows), LAN nodes on
    switches, partial testbeds: the answers must still be the twin's."""
    from coalloc.testbed._allocate import allocate_all as compiled
    from coalloc.testbed._reference.allocate import allocate_all as twin
    from coalloc.testbed.assignplus import _pclass_scores, partition, plus_data

    rng = np.random.default_rng(gseed)
    pt = g.deterlab(40, 4, trunk_bw=trunk_bw, seed=gseed)
    top = g.random_topology(size, seed=gseed)
    if star:
        top = _star_bandwidths(top, rng)
    avail = None
    if subset:
        names = sorted(pt.nodes)
        avail = {n for n in names if pt.nodes[n].is_switch or rng.random() < 0.7}
    pr = build_problem(top, pt, avail)
    if any(not c for c in pr.cand):
        return
    data = plus_data(pr, _pclass_scores(pr, "1m", None), partition(pr))
    for aware in (False, True):
        rounds = max(50, pr.nv) if aware else 50
        a = compiled(data, [0, 1, 2, 3, 4], True, rounds, aware)
        b = twin(data, [0, 1, 2, 3, 4], True, rounds, aware)
        assert np.array_equal(a["where"], b["where"])
        assert np.array_equal(a["fail"], b["fail"])
        assert np.array_equal(np.isnan(a["isw"]), np.isnan(b["isw"]))
        assert np.array_equal(a["isw"][~np.isnan(a["isw"])], b["isw"][~np.isnan(b["isw"])])
        assert a["exchanges"] == b["exchanges"]


@settings(max_examples=15, deadline=None)
@given(st.integers(0, 2**31), st.integers(2, 9), st.integers(0, 4), st.integers(0, 2**64 - 1))
def test_anneal_matches_twin(gseed, size, kind, seed):
    """The kernel and its twin called directly on the same flat arrays (what ``run_anneal``
    marshals), every output equal, the full 64-bit seed range included."""
    from coalloc.testbed._anneal import anneal as compiled
    from coalloc.testbed._reference.anneal import anneal as twin

    pt = g.deterlab(14 + kind * 3, 2 + kind % 3, trunk_bw=300000 * (1 + kind), seed=gseed)
    pr = build_problem(g.random_topology(size, seed=gseed), pt)
    if any(not c for c in pr.cand):
        return
    data = kernel_data(pr)
    a = compiled(data, seed, dict(FAST))
    b = twin(data, seed, dict(FAST))
    assert set(a) == set(b)
    assert np.array_equal(np.asarray(a["where"]), np.asarray(b["where"]))
    for key in set(a) - {"where"}:
        assert a[key] == b[key], key


@settings(max_examples=15, deadline=None)
@given(st.integers(0, 2**31), st.integers(2, 9), st.integers(0, 2**63), st.integers(0, 2**31))
def test_start_parity(gseed, size, seed, sseed):
    """A start mapping (some entries -1, some that may not fit) is read alike by both."""
    pt = g.deterlab(20, 3, seed=gseed)
    top = g.random_topology(size, seed=gseed)
    pr = build_problem(top, pt)
    if any(not c for c in pr.cand):
        return
    rng = np.random.default_rng(sseed)
    start = rng.integers(-1, len(pr.pnames), size=pr.nv)
    params = dict(FAST, start=start)
    a = run_anneal(pr, seed, params, "compiled")
    b = run_anneal(pr, seed, params, "python")
    assert np.array_equal(a["where"], b["where"])
    for key in ("score", "violations", "moves", "accepted", "temperatures"):
        assert a[key] == b[key], key


def test_start_is_kept_without_moves():
    """With no move made, the result is the start itself, scored (a valid start mapping:
    the independent checker accepts it) and the start's score is what the kernel reports."""
    pt = g.deterlab(20, 3, seed=1)
    top = g.random_topology(6, seed=4)
    pr = build_problem(top, pt)
    first = run_anneal(pr, 7, FAST, "compiled")
    assert first["valid"]
    still = dict(FAST, melt_moves=0, t0=1.0, t_stop=2.0, start=first["where"])
    for backend in ("compiled", "python"):
        out = run_anneal(pr, 99, still, backend)
        assert out["moves"] == 0 and out["valid"]
        assert np.array_equal(out["where"], first["where"])
        assert out["score"] == pytest.approx(first["score"], abs=1e-9)


def test_start_refused_when_malformed():
    pt = g.deterlab(20, 3, seed=1)
    pr = build_problem(g.random_topology(4, seed=4), pt)
    data = kernel_data(pr)
    from coalloc.testbed._anneal import anneal

    for bad in (np.zeros(pr.nv + 1, dtype=np.int64), np.full(pr.nv, len(pr.pnames))):
        with pytest.raises(ValueError, match="start"):
            anneal(data, 1, dict(FAST, start=bad))


def test_fit_takes_the_smallest_pclass_where_isw_takes_the_largest():
    """FIT (5) and ISW (2) differ only in the size order: on a testbed with a large and a
    small switch, a lone pair goes to the large one under ISW and the small one under FIT
    (the referee: the switch sizes, not a kernel)."""
    from coalloc.testbed._allocate import allocate_all as compiled
    from coalloc.testbed._reference.allocate import allocate_all as twin
    from coalloc.testbed.assignplus import _pclass_scores, partition, plus_data

    text = "node big switch:1\nnode small switch:1\nlink t big small 1000 0 0\n"
    for i in range(6):
        sw = "big" if i < 4 else "small"
        text += f"node p{i} pc:1\nlink e{i} p{i} {sw} 100 0 0\n"
    pt = tb.parse_ptop(text)
    pr = build_problem(tb.parse_top("node x pc\nnode y pc\nlink l x y 50 0 0\n"), pt)
    data = plus_data(pr, _pclass_scores(pr, "1", None), partition(pr))
    for run in (compiled, twin):
        out = run(data, [2, 5], False, 50, False)
        isw_hosts = {pr.pnames[p] for p in out["where"][0].tolist()}
        fit_hosts = {pr.pnames[p] for p in out["where"][2].tolist()}
        assert isw_hosts <= {"p0", "p1", "p2", "p3"}
        assert fit_hosts == {"p4", "p5"}
