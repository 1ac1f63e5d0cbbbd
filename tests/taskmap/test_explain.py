"""What binds a task mapping (issue 38, positive answers): checked against recomputation
and, on tiny instances, against the brute-force optimum."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

import coalloc.taskmap as tm
from coalloc.taskmap.bounds import lower_bound
from coalloc.taskmap.explain import bound_witness, explain_result


def _instance(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(2, 6))
    vol = np.triu(rng.choice([0.0, 0.0, 1.0, 3.0, 8.0], size=(n, n)), 1)
    tasks = tm.TaskGraph(rng.uniform(0.5, 3.0, n), vol + vol.T)
    res = tm.ResourceGraph.from_edges([0, *rng.uniform(1.0, 4.0, 3)], [[0, 1], [0, 2], [0, 3]],
                                      list(rng.uniform(2.0, 20.0, 3)))  # fmt: skip
    return tasks, res


@pytest.mark.parametrize("seed", range(25))
def test_bottleneck_and_witness_agree_with_referees(seed):
    tasks, res = _instance(seed)
    result = tm.solve(tasks, res, seed=0)
    out = explain_result(tasks, res, result)
    b = out["bottleneck"]
    assert b["load"] / b["capacity"] == pytest.approx(result.objective, rel=1e-9)
    witness = bound_witness(tasks, res)
    # the witness explains the bound results carry (the default strength): a closed form
    # when it gives the value, else the stars argument (issue 40)
    assert witness["value"] == lower_bound(tasks, res)
    basic = lower_bound(tasks, res, strength="basic")
    assert (witness["kind"] == "stars") == (witness["value"] > basic)
    assert witness["kind"] in ("spread", "heaviest_task", "neighbourhood", "stars")
    procs = list(res.processors)
    best = min(tm.max_occupancy(tasks, res, list(m))[0]
               for m in itertools.product(procs, repeat=tasks.n))  # fmt: skip
    assert witness["value"] <= best + 1e-9, "the witness must bound every mapping"
    assert lower_bound(tasks, res) <= best * (1 + 1e-9), "the bound must bound every mapping"
    assert out["sentence"].startswith("The maximum occupancy")


def test_explain_result_needs_a_mapping():
    tasks, res = _instance(0)

    class Empty:
        mapping = None

    with pytest.raises(ValueError, match="no mapping"):
        explain_result(tasks, res, Empty())
