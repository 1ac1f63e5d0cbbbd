"""The GAP heuristic's exact programme on small instances (``search._PROOF_PAIRS``, stop
62): the search's best is proven optimal, replaced by the optimum, or no assignment is
proven to exist, each refereed by brute force; without the programme the same calls end
undecided; and the layer loop says why it returned None, the same in the kernel and its
twin."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from coalloc.loadshare import GapInstance, _gapsub, generate_gap, solve_gap, verify_gap
from coalloc.loadshare._reference import gapsub as stwin
from coalloc.loadshare.gap import search, subgap
from coalloc.loadshare.gap.search_proof import proof_fits, reduced_weights
from tests.loadshare._gap_brute import brute_gap
from tests.shared import test_contract as tc


def _instance(m: int, n: int, seed: int) -> GapInstance:
    rng = np.random.default_rng(seed)
    return GapInstance(rng.integers(1, 50, size=(m, n)), rng.integers(1, 25, size=(m, n)),
                       rng.integers(5, 45, size=m))  # fmt: skip


@settings(max_examples=80, deadline=None, derandomize=True)
@given(st.sampled_from(["random", "a", "b", "c", "d"]), st.integers(1, 3), st.integers(1, 8),
       st.integers(0, 2**31), st.sampled_from(["min", "max"]), st.booleans(),
       st.sampled_from([None, 20.0]))  # fmt: skip
@example("random", 3, 5, 723327, "min", True, None)  # test_gap's "ends without a proof"
@example("d", 3, 8, 0, "min", True, None)
def test_small_instances_are_decided_as_brute_force_says(kind, m, n, seed, sense, assign_all,
                                                         limit):  # fmt: skip
    """Two generators (uniform draws, Chu-Beasley types a-d), both senses, items that must
    or may be placed, untimed and timed."""
    inst = _instance(m, n, seed) if kind == "random" else generate_gap(kind, m, n, seed=seed)
    best = brute_gap(inst, sense, assign_all)
    params = {} if limit is None else {"time_limit": limit}
    res = solve_gap(inst, method="heuristic", sense=sense, assign_all=assign_all, seed=0,
                    **params)  # fmt: skip
    if best is None:
        assert res.status == "infeasible", res.message
        assert res.assignment is None and res.bound is None
        return
    assert res.status == "optimal", res.message
    rep = verify_gap(inst, res.assignment, assign_all=assign_all, claimed=res.objective)
    assert rep.ok, rep
    assert res.objective == pytest.approx(best, rel=1e-12, abs=1e-9)
    assert res.bound == pytest.approx(best, rel=1e-12, abs=1e-9)


@settings(max_examples=60, deadline=None, derandomize=True)
@given(st.integers(1, 3), st.integers(1, 6), st.integers(0, 2**31),
       st.sampled_from([1e-11, 1e-9, 1 / 3, 1e6, 1e12]), st.sampled_from(["min", "max"]),
       st.booleans(), st.sampled_from([None, 1]), st.sampled_from([1, 10**6, 10**11]))  # fmt: skip
@example(3, 6, 1, 1e-11, "min", True, 1, 1)
@example(3, 5, 0, 1e-9, "min", True, None, 10**11)  # CBC's "infeasible" in test_exact_scale
def test_any_cost_scale(m, n, seed, scale, sense, assign_all, iterations, wscale):
    """Costs of 1e-11 to 1e12 units, and thirds, weights of up to 1e11 units: the
    programme's tolerance is relative (an absolute 1e-9 took every assignment of costs 1e-11
    as "none better"), and its weights are divided by each agent's common divisor (1e11
    units on three agents: 126 bits of load vector, none run); with one tabu iteration the
    programme, not the search, finds the optimum."""
    base = _instance(m, n, seed)
    inst = GapInstance(base.cost * scale, base.weight * wscale, base.capacity * wscale)
    best = brute_gap(inst, sense, assign_all)
    res = solve_gap(inst, method="heuristic", sense=sense, assign_all=assign_all, seed=0,
                    iterations=iterations)  # fmt: skip
    if best is None:
        assert res.status == "infeasible", res.message
        return
    assert res.status == "optimal", res.message
    assert verify_gap(inst, res.assignment, assign_all=assign_all).feasible
    assert res.objective == pytest.approx(best, rel=1e-9, abs=0.0), (res.objective, best)


@pytest.mark.parametrize("scale", [1.0, 1e-11, 1e12])
def test_the_programme_replaces_a_worse_best_with_the_optimum(scale):
    """One tabu iteration leaves a best above the optimum; the programme finds the optimum,
    in any units (with costs of 1e-11 an absolute tolerance of 1e-9 saw none better)."""
    found = 0
    for seed in range(40):
        base = _instance(3, 6, seed)
        inst = GapInstance(base.cost * scale, base.weight, base.capacity)
        best = brute_gap(inst)
        if best is None:
            continue
        res = solve_gap(inst, method="heuristic", seed=0, iterations=1)
        assert res.status == "optimal", res.message
        assert verify_gap(inst, res.assignment, claimed=res.objective).ok
        assert res.objective == pytest.approx(best, rel=1e-9, abs=0.0)
        # the same call without the programme, for the count of bests it improved
        old = search._PROOF_PAIRS
        search._PROOF_PAIRS = 0
        try:
            plain = solve_gap(inst, method="heuristic", seed=0, iterations=1)
        finally:
            search._PROOF_PAIRS = old
        found += plain.objective is None or plain.objective > best * (1 + 1e-9)
    assert found >= 3  # the branch that replaces the best ran


@pytest.mark.parametrize("case, before, after", [
    ("type_a", "feasible", "optimal"),     # optimum 200 in hand, bound 199
    ("type_b", "no_solution", "infeasible"),
])  # fmt: skip
@pytest.mark.parametrize("limit", [None, 30.0])
def test_the_contract_cases_undecided_before(monkeypatch, case, before, after, limit):
    """The contract suite's type a and b: undecided by the search's bounds (a timed call
    searched to its deadline), decided by the programme."""
    inst = tc.CASES["gap"][case][0]()
    params = {} if limit is None else {"time_limit": limit}
    monkeypatch.setattr(search, "_PROOF_PAIRS", 0)
    if limit is None:  # (timed, the search without the programme runs to the deadline)
        old = solve_gap(inst, method="heuristic", seed=0, **params)
        assert old.status == before, old.message
    monkeypatch.undo()
    res = solve_gap(inst, method="heuristic", seed=0, **params)
    assert res.status == after, res.message
    assert res.iterations["tabu_iterations"] < 3000  # it stopped at the proof
    if after == "infeasible":
        assert "programme" in res.message and brute_gap(inst) is None
    else:
        assert "programme" in res.message and res.objective == brute_gap(inst)
    again = solve_gap(inst, method="heuristic", seed=0, **params)
    assert again.status == res.status
    assert (again.assignment is None) == (res.assignment is None)
    if res.assignment is not None and limit is None:
        assert np.array_equal(again.assignment, res.assignment)  # one seed, one answer


def test_the_exact_method_takes_the_proof():
    inst = tc.CASES["gap"]["type_b"][0]()
    res = solve_gap(inst, method="exact", seed=0)
    assert res.status == "infeasible"


@settings(max_examples=60, deadline=None, derandomize=True)
@given(st.integers(1, 3), st.integers(0, 5), st.integers(0, 2**31), st.integers(1, 6))
def test_reduced_weights_keep_the_same_assignments(m, n, seed, g):
    """Every assignment keeps every capacity before the division exactly when it does after
    (enumerated), and the divisors divide every weight."""
    import itertools

    rng = np.random.default_rng(seed)
    weight = rng.integers(0, 6, size=(m, n)) * g * rng.integers(1, 3, size=(m, 1))
    cap = rng.integers(0, 20 * g, size=m)
    w, c, d = reduced_weights(weight, cap)
    assert np.array_equal(w * d[:, None], weight)
    for a in itertools.product(range(m), repeat=n):
        load = np.zeros(m, dtype=np.int64)
        small = np.zeros(m, dtype=np.int64)
        for j, i in enumerate(a):
            load[i] += weight[i, j]
            small[i] += w[i, j]
        assert bool((load <= cap).all()) == bool((small <= c).all())


def test_the_programme_is_tried_only_where_it_fits():
    assert proof_fits(np.array([40, 40, 40]), 10, 400)
    assert not proof_fits(np.array([40, 40, 40]), 10, 0)  # off
    assert not proof_fits(np.array([40] * 10), 41, 400)  # 410 pairs
    assert not proof_fits(np.array([2**40, 2**30]), 3, 400)  # a 70-bit key
    assert proof_fits(np.array([2**40, 2**30]), 3, 400, 2)  # two words (h63prog)
    assert proof_fits(np.array([80] * 10), 20, 400, 2)  # type d 10 x 20: 64 bits
    assert not proof_fits(np.array([80] * 10), 20, 400, 1)
    assert not proof_fits(np.array([2**40, 2**30, 2**40]), 3, 400, 2)  # 110 bits, 40 + 70
    assert not proof_fits(np.array([2**62]), 3, 400, 2)  # one agent over a word
    assert not proof_fits(np.array([3]), 0, 400)  # no items
    # a generated instance too large for it keeps the search's answer and status
    inst = generate_gap("c", 10, 60, seed=0)
    res = solve_gap(inst, method="heuristic", seed=0)
    assert "programme" not in res.message


# ---------------------------------------------------------------- why the layer loop said None


def _prepared(cost, weight, cap):
    order = np.arange(cost.shape[1])
    rest = np.concatenate([np.cumsum(cost.min(axis=0)[::-1])[::-1], [0.0]])
    wrest = np.concatenate([np.cumsum(weight.min(axis=0)[::-1])[::-1], [0]]).astype(np.int64)
    radix = np.cumprod(np.concatenate([[1], cap[:-1] + 1])).astype(np.int64)
    return (np.ascontiguousarray(cost[:, order]), np.ascontiguousarray(weight[:, order]), cap,
            np.zeros(cost.shape[0]), rest, wrest, radix)  # fmt: skip


@settings(max_examples=150, deadline=None, derandomize=True)
@given(st.integers(1, 3), st.integers(0, 6), st.integers(0, 2**31),
       st.sampled_from([-1.0, 0.0, 1.0, None]), st.sampled_from([10**6, 2, 1]))  # fmt: skip
def test_why_against_brute_force_and_the_twin(k, s, seed, slack, max_states):
    rng = np.random.default_rng(seed)
    cost = rng.integers(0, 20, size=(k, s)).astype(np.float64)
    weight = rng.integers(0, 8, size=(k, s)).astype(np.int64)
    cap = rng.integers(0, 3 * s + 2, size=k).astype(np.int64)
    best = brute_gap(GapInstance(cost, weight, cap)) if s else 0.0
    bound = np.inf if slack is None or best is None else best + slack
    codes = []
    for mod in (_gapsub, stwin):
        why = np.full(1, -7, dtype=np.int64)
        got = mod.subgap_layers(*_prepared(cost, weight, cap), bound, max_states, why=why)
        codes.append(int(why[0]))
        if why[0] == 0:
            assert got is not None and best is not None and got[1] == pytest.approx(best)
        elif why[0] == 1:  # a proof: nothing below the bound
            assert got is None and (best is None or best >= bound - 1e-9)
        else:
            assert why[0] == 2 and got is None and max_states < 10**6  # only the budget
    assert codes[0] == codes[1]


def test_why_given_up_at_until_and_its_length_checked():
    args = _prepared(np.ones((2, 3)), np.ones((2, 3), dtype=np.int64),
                     np.array([3, 3], dtype=np.int64))  # fmt: skip
    for mod in (_gapsub, stwin):
        why = np.zeros(1, dtype=np.int64)
        assert mod.subgap_layers(*args, np.inf, 100, 0.0, why=why) is None and why[0] == 2
        with pytest.raises(ValueError, match="why"):
            mod.subgap_layers(*args, np.inf, 100, why=np.zeros(0, dtype=np.int64))
    why = np.zeros(1, dtype=np.int64)
    assert subgap.solve_subgap(np.ones((2, 0)), np.ones((2, 0), dtype=np.int64),
                               np.array([1, 1]), 0.0, why=why) is None  # fmt: skip
    assert why[0] == 1
