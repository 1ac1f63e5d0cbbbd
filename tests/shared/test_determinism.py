"""Determinism and thread safety (issue 15 item 8): the same seed gives the same answer in a
fresh interpreter, and one set of model objects solved from several threads at once gives
the serial answers (models are immutable, kernels keep no shared state)."""

import concurrent.futures as cf
import json
import subprocess
import sys

import numpy as np
import pytest

import coalloc
from coalloc import taskmap

SCRIPT = """
import json, coalloc
from coalloc import taskmap
r, o = coalloc.generators.fig3(60, seed=5)
t, g = taskmap.generators.table1_instance(2.0, seed=5)
print(json.dumps({
    "ctaap": coalloc.solve(r, o, seed=11).assignment.tolist(),
    "greedy": coalloc.solve(r, o, "greedy", seed=11).assignment.tolist(),
    "taskmap": taskmap.solve(t, g, seed=11).mapping.tolist(),
}))
"""


def _here():
    r, o = coalloc.generators.fig3(60, seed=5)
    t, g = taskmap.generators.table1_instance(2.0, seed=5)
    return {
        "ctaap": coalloc.solve(r, o, seed=11).assignment.tolist(),
        "greedy": coalloc.solve(r, o, "greedy", seed=11).assignment.tolist(),
        "taskmap": taskmap.solve(t, g, seed=11).mapping.tolist(),
    }


@pytest.mark.slow
def test_same_seed_same_answer_in_a_fresh_interpreter():
    out = subprocess.run(
        [sys.executable, "-c", SCRIPT], capture_output=True, text=True, check=True, timeout=300
    )
    assert json.loads(out.stdout) == _here()


@pytest.mark.slow
def test_shared_models_solved_from_many_threads_give_the_serial_answers():
    r, o = coalloc.generators.fig3(80, seed=2)
    t, g = taskmap.generators.table1_instance(1.0, seed=2)
    jobs = [("ctaap", s) for s in range(6)] + [("taskmap", s) for s in range(4)]

    def run(job):
        kind, seed = job
        if kind == "ctaap":
            res = coalloc.solve(r, o, seed=seed)
            assert coalloc.verify(r, o, res.assignment).feasible
            return res.assignment
        return taskmap.solve(t, g, seed=seed).mapping

    serial = [run(job) for job in jobs]
    for _ in range(2):
        with cf.ThreadPoolExecutor(max_workers=4) as pool:
            threaded = list(pool.map(run, jobs))
        for a, b in zip(serial, threaded):
            assert np.array_equal(a, b)
