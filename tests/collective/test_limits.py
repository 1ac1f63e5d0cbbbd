"""Limits of the collective methods: the exact method's one deadline, batch timeouts and the
command line's exact options.

Each stop is proven by what the result holds (starts left undecided, the enumeration's
``time_limit_hit``), not by a clock: how far past its limit a call returns is measured by
``bench/collective/issue36.py`` (its ``hard`` and ``enum`` cases are these instances).
"""

from __future__ import annotations

import numpy as np
import pytest

from coalloc._shared import milp
from coalloc.collective import CollectiveRequest, ResourcePool, coallocate, verify


def many_hard_starts(slots: int):
    """A pool where every other slot is a candidate start whose integer program is infeasible
    (two kinds of node, each rich in one property; the request needs both totals from two
    nodes) while the pruning conditions pass: the exact method solves one program per start."""
    cap = np.array([[10.0, 0.5], [10.0, 0.5], [0.5, 10.0], [0.5, 10.0]])
    times = np.arange(slots) * 10.0
    reserved = np.zeros((4, 2, slots))
    reserved[0, 0, 0::2] = 0.2  # falls at every odd slot: a new candidate start
    pool = ResourcePool(cap, ["a", "b"], times, reserved)
    request = CollectiveRequest(1.0, 2, 0.0, float(times[-1]), minimum={"a": 0.1, "b": 0.1},
                                total={"a": 15.0, "b": 15.0})  # fmt: skip
    return pool, request


@pytest.mark.parametrize("solver", ["highs", "cbc", pytest.param("cpsat", marks=pytest.mark.slow)])
def test_exact_time_limit_is_one_deadline_for_all_starts(solver):
    pool, request = many_hard_starts(4000)  # ~2000 programs: seconds to tens of seconds
    milp.import_solver(solver)  # a first import of OR-Tools (a second or more) not timed
    res = coallocate(pool, request, "exact", solver=solver, time_limit=0.4)
    assert res.status == "time_limit" and res.start is None
    assert res.iterations["time_limit_hit"] == 1
    undecided = res.rejection["undecided_starts"]
    assert undecided > 0 and res.iterations["starts"] + undecided >= 1000
    assert "time limit" in res.message


def test_exact_time_limit_stops_the_utilisation_enumeration():
    rng = np.random.default_rng(0)
    pool = ResourcePool(rng.uniform(1, 10, size=(80, 2)), ["a", "b"])
    request = CollectiveRequest(1.0, 4, minimum={"a": 0.1, "b": 0.1}, total={"a": 8, "b": 8})
    res = coallocate(pool, request, "exact", time_limit=0.3)  # C(80, 4) subsets: seconds
    assert res.start is not None and verify(request, pool, res).ok
    # the start is proven earliest (at the window's opening): "optimal" by the one status
    # rule (issue 36), the objective being the start; the factor is not proven maximal
    assert res.status == "optimal" and res.objective == res.start == res.bound
    assert "not proven maximal" in res.message
    assert res.iterations["time_limit_hit"] == 1 and "time limit" in res.message
    full = coallocate(pool, request, "exact", enumerate_limit=10)  # no enumeration: referee
    assert res.start == full.start  # the earliest start is proven either way


@pytest.mark.slow
def test_cli_exact_options(tmp_path, capsys):
    from coalloc.cli import main
    from coalloc.collective import io as cio

    pool, request = many_hard_starts(1000)  # 500 CBC runs: about 15 s without the limit
    pp, rp, out = tmp_path / "p.json", tmp_path / "r.json", tmp_path / "o.json"
    cio.write_pool(pp, pool)
    cio.write_request(rp, request)
    solve = ["collective", "solve", str(rp), str(pp)]
    code = main([*solve, "--method", "exact", "--time-limit", "0.4", "--solver", "cbc",
                 "--quiet", "--json"])  # fmt: skip
    doc = json_line(capsys.readouterr().out)
    assert code == 1 and doc["status"] == "time_limit"  # rejected: undecided in time
    assert doc["params"]["solver"] == "cbc" and doc["params"]["time_limit"] == 0.4
    assert "backend" not in doc["params"]  # one word: the solver (issue 36)
    assert doc["iterations"]["time_limit_hit"] == 1
    assert doc["rejection"]["undecided_starts"] > 0  # stopped with starts left: the limit held

    # --solver is refused for the heuristic methods; -p backend= stays the kernels'
    assert main([*solve, "--method", "scan", "--solver", "highs"]) == 2
    assert "--method exact only" in capsys.readouterr().err
    assert main([*solve, "--method", "exact", "--backend", "cbc", "-p", "backend=highs"]) == 2
    assert "disagree" in capsys.readouterr().err
    small = ResourcePool([[4.0], [2.0], [1.0]], ["cores"])
    req = CollectiveRequest(60, 2, minimum={"cores": 1}, total={"cores": 3})
    cio.write_pool(pp, small)
    cio.write_request(rp, req)
    assert main([*solve, "-p", "backend=numpy", "--json"]) == 0
    assert json_line(capsys.readouterr().out)["status"] in ("optimal", "feasible")
    assert main([*solve, "--method", "exact", "--solver", "highs", "--time-limit", "30",
                 "-o", str(out)]) == 0  # fmt: skip
    assert "optimal" in capsys.readouterr().out


def json_line(text: str) -> dict:
    import json

    return json.loads(text.strip().splitlines()[-1])


def test_a_thread_batch_timeout_stops_the_python_scan():
    from coalloc.collective import Instance
    from coalloc.collective.generators import section42_requests, table1_pool
    from tests._timeouts import assert_times_out

    pool = table1_pool(606, seed=1)
    request = section42_requests(pool, 30, 1, seed=1)[0][1]
    assert_times_out(Instance(request, pool), "scan", backend="numpy")  # seconds: the twins
