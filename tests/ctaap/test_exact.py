"""The exact solver: known optima, agreement between back-ends and formulations, limits."""

import itertools
import sys
import time

import numpy as np
import pytest

import coalloc
from coalloc._shared import milp
from coalloc._shared.milp import MilpOutcome
from coalloc.ctaap import exact
from coalloc.ctaap.exact import solve_exact, upper_bound
from coalloc.ctaap.generators import fig2, fig3, random_instance
from tests._optional import skip_unless_ci

SKIP_REASON = "{pkg} not installed (optional extra; CI installs coalloc[exact])"
#: The CBC case of a backend-parametrised test that takes seconds (CI runs it).
SLOW_CBC = pytest.param("cbc", marks=pytest.mark.slow)


def _backend_available(backend):
    if backend == "cbc":
        try:
            import pulp
        except ImportError:
            skip_unless_ci(SKIP_REASON.format(pkg="PuLP"))
        if milp.cbc_command(pulp, msg=False) is None:
            skip_unless_ci("PuLP's bundled CBC binary is not runnable here")
    elif backend == "cpsat":
        try:
            import ortools  # noqa: F401
        except ImportError:
            skip_unless_ci(SKIP_REASON.format(pkg="OR-Tools"))
    return backend


@pytest.fixture(params=["highs", "cbc", "cpsat"])
def backend(request):
    return _backend_available(request.param)


def check_optimal(req, off, res, optimum):
    rep = coalloc.verify(req, off, res.assignment)
    assert rep.feasible, (res, rep)
    assert res.status == "optimal", res.message
    assert res.method == "exact"
    assert res.n_allocated == rep.n_allocated == optimum, res.message
    assert res.objective == optimum and res.bound == optimum and res.gap == 0.0
    assert res.assignment.dtype == np.int64 and res.assignment.shape == (req.n,)
    assert set(res.timings) >= {"build", "solve", "total"}
    return rep


def brute_force(req, off):
    """Optimum by enumerating every assignment (tiny instances only)."""
    best = 0
    for assign in itertools.product(range(-1, off.m), repeat=req.n):
        size = sum(a >= 0 for a in assign)
        if size > best and coalloc.verify(req, off, np.array(assign)).feasible:
            best = size
    return best


# ---------------------------------------------------------------- hand-made instances


def bandwidth_only():
    """3 tasks all linked with 10; 2 clusters of 3 machines, 5 inside, 20 between.

    Every task fits everywhere and capacity is ample: only (4) binds -- two tasks can never
    share a cluster -- so the optimum is 2.
    """
    bw = 10 * (np.ones((3, 3)) - np.eye(3))
    req = coalloc.Request({"cpu": [1, 1, 1]}, bandwidth=bw)
    off = coalloc.Offer({"cpu": [5, 5]}, capacity=[3, 3], bandwidth=[[5, 20], [20, 5]])
    return req, off, 2


def asymmetric():
    """B[0, 1] = 10, B[1, 0] = 0; Bhat[0, 1] = 5, Bhat[1, 0] = 20; one machine per cluster.

    Task 0 on cluster 0 with task 1 on cluster 1 needs B[0,1] <= Bhat[0,1]: violated. The
    other way round needs B[0,1] <= Bhat[1,0]: fine. Optimum 2 with the unique [1, 0].
    """
    req = coalloc.Request({"cpu": [1, 1]}, bandwidth=[[0, 10], [0, 0]])
    off = coalloc.Offer({"cpu": [5, 5]}, capacity=[1, 1], bandwidth=[[0, 5], [20, 0]])
    return req, off, 2


def asymmetric_forced():
    """As :func:`asymmetric` but task 0 only fits cluster 0: the orientation blocks a pair."""
    req = coalloc.Request({"cpu": [6, 1]}, bandwidth=[[0, 10], [0, 0]])
    off = coalloc.Offer({"cpu": [9, 5]}, capacity=[1, 1], bandwidth=[[0, 5], [20, 0]])
    return req, off, 1


def zero_capacity():
    """Cluster 0 has the best machines but none available; cluster 1 has 2; 4 tasks."""
    req = coalloc.Request({"cpu": [1, 2, 3, 4]})
    off = coalloc.Offer({"cpu": [100, 10]}, capacity=[0, 2], bandwidth=[[100, 100], [100, 100]])
    return req, off, 2


def all_zero_capacity():
    req = coalloc.Request({"cpu": [1, 2]}, bandwidth=[[0, 1], [1, 0]])
    off = coalloc.Offer({"cpu": [10, 10]}, capacity=[0, 0])
    return req, off, 0


def properties_and_capacity():
    """Tasks 8, 9 fit only the big cluster (1 machine); 3, 4 fit both. No links: optimum 3."""
    req = coalloc.Request({"cpu": [8, 9, 3, 4], "mem": [1, 1, 1, 1]})
    off = coalloc.Offer({"cpu": [10, 5], "mem": [4, 4]}, capacity=[1, 2])
    return req, off, 3


def five_cycle():
    """A 5-cycle of links too wide for one cluster: the largest independent set, 2."""
    bw = np.zeros((5, 5))
    for i in range(5):
        bw[i, (i + 1) % 5] = bw[(i + 1) % 5, i] = 10
    req = coalloc.Request({"cpu": np.ones(5)}, bandwidth=bw)
    off = coalloc.Offer({"cpu": [2]}, capacity=[5], bandwidth=[[9]])
    return req, off, 2


def empty_request():
    req = coalloc.Request({"cpu": []})
    off = coalloc.Offer({"cpu": [3]}, capacity=[2], bandwidth=[[1]])
    return req, off, 0


HAND_MADE = [
    bandwidth_only,
    asymmetric,
    asymmetric_forced,
    zero_capacity,
    all_zero_capacity,
    properties_and_capacity,
    five_cycle,
    empty_request,
]


@pytest.mark.parametrize("make", HAND_MADE, ids=lambda f: f.__name__)
@pytest.mark.parametrize("formulation", ["auto", "pairwise", "aggregated"])
def test_hand_made_optimum(make, formulation, backend):
    req, off, optimum = make()
    res = solve_exact(req, off, solver=backend, formulation=formulation)
    check_optimal(req, off, res, optimum)
    assert upper_bound(req, off) >= optimum


def test_asymmetric_orientation(backend):
    req, off, _ = asymmetric()
    res = solve_exact(req, off, solver=backend)
    assert res.assignment.tolist() == [1, 0]


def test_zero_capacity_cluster_unused(backend):
    req, off, _ = zero_capacity()
    res = solve_exact(req, off, solver=backend)
    assert not np.any(res.assignment == 0)


def test_empty_request_shape(backend):
    req, off, _ = empty_request()
    res = solve_exact(req, off, solver=backend)
    assert res.assignment.shape == (0,) and res.n_allocated == 0


def test_bandwidth_only_bound_is_tight():
    """Intra-cluster cliques tighten the b-matching bound (3) to the optimum (2)."""
    req, off, optimum = bandwidth_only()
    assert upper_bound(req, off) == optimum


def test_hand_made_agree_with_brute_force():
    for make in HAND_MADE:
        req, off, optimum = make()
        if req.n <= 6:
            assert brute_force(req, off) == optimum, make.__name__


# ---------------------------------------------------------------- random instances


def small_instances():
    """fig2-like instances with 12..20 tasks, every range factor."""
    out = []
    for k, n in enumerate(range(12, 21, 2)):
        for r in (1, 3, 5):
            out.append(fig2(r, n_tasks=n, n_clusters=4, seed=100 + 10 * k + r))
    return out


@pytest.fixture(scope="module")
def highs_optima():
    return [
        solve_exact(req, off, solver="highs", formulation="pairwise").n_allocated
        for req, off in small_instances()
    ]


@pytest.mark.parametrize("formulation", ["pairwise", "aggregated"])
@pytest.mark.parametrize("backend", ["highs", SLOW_CBC, "cpsat"], indirect=True)
def test_backends_agree_on_small_random(backend, formulation, highs_optima):
    for (req, off), optimum in zip(small_instances(), highs_optima):
        res = solve_exact(req, off, solver=backend, formulation=formulation)
        check_optimal(req, off, res, optimum)


def test_matches_brute_force_on_tiny_random():
    rng = np.random.default_rng(7)
    for seed in range(6):
        n, m = int(rng.integers(3, 6)), int(rng.integers(1, 4))
        req, off = random_instance(n, m, offer_high=150, capacity_range=(0, 3), seed=seed)
        optimum = brute_force(req, off)
        for formulation in ("pairwise", "aggregated"):
            res = solve_exact(req, off, formulation=formulation)
            check_optimal(req, off, res, optimum)
        assert upper_bound(req, off) >= optimum


def test_asymmetric_random_agree():
    """Random directed bandwidth: formulations agree, allocations verify."""
    rng = np.random.default_rng(3)
    for _ in range(4):
        n, m = 14, 4
        dense = rng.integers(1, 100, (n, n)) * (rng.random((n, n)) < 0.5)
        np.fill_diagonal(dense, 0)
        req = coalloc.Request({"cpu": rng.integers(1, 100, n)}, bandwidth=dense)
        assert not req.symmetric
        off = coalloc.Offer(
            {"cpu": rng.integers(1, 200, m)},
            capacity=rng.integers(0, 6, m),
            bandwidth=rng.integers(1, 120, (m, m)),
        )
        a = solve_exact(req, off, formulation="aggregated")
        p = solve_exact(req, off, formulation="pairwise")
        check_optimal(req, off, a, p.n_allocated)
        check_optimal(req, off, p, a.n_allocated)
        assert upper_bound(req, off) >= a.n_allocated


@pytest.mark.slow  # over ~1.5 s: CI runs it (-m 'slow or not slow')
def test_formulations_agree_fig2():
    for r in (1, 2, 3):
        req, off = fig2(r, n_tasks=30, seed=r)
        a = solve_exact(req, off, formulation="aggregated")
        p = solve_exact(req, off, formulation="pairwise")
        assert a.status == p.status == "optimal"
        assert a.n_allocated == p.n_allocated
        assert a.params["formulation"] == "aggregated" and p.params["formulation"] == "pairwise"


def test_auto_formulation(backend):
    req, off = fig2(2, n_tasks=12, seed=0)
    res = solve_exact(req, off, solver=backend)
    expected = "pairwise" if backend == "cpsat" else "aggregated"
    assert res.params["formulation"] == expected
    assert res.params["solver"] == backend and "backend" not in res.params


@pytest.mark.slow  # over ~1.5 s: CI runs it (-m 'slow or not slow')
def test_upper_bound_at_least_optimum():
    for req, off in small_instances():
        res = solve_exact(req, off)
        assert res.status == "optimal"
        ub = upper_bound(req, off)
        assert isinstance(ub, int) and ub >= res.n_allocated
        # Never more than the plain b-matching bound.
        assert ub <= min(req.n, off.total_capacity)


def test_greedy_never_beats_exact():
    for req, off in small_instances()[:8]:
        opt = solve_exact(req, off).n_allocated
        greedy = coalloc.solve(req, off, "greedy", restarts=5).n_allocated
        assert greedy <= opt


# ---------------------------------------------------------------- limits and failures


# CBC starts a process and overruns the limit by seconds: slow (CI runs it).
@pytest.mark.parametrize("backend", ["highs", SLOW_CBC, "cpsat"], indirect=True)
def test_time_limit_honoured(backend):
    req, off = fig3(300, seed=0)
    limit = 0.5
    t0 = time.perf_counter()
    res = solve_exact(req, off, solver=backend, time_limit=limit)
    elapsed = time.perf_counter() - t0
    # Solvers check the clock only now and then: allow slack. CBC also starts a process and
    # does not look at the clock in its root node (~5 s here alone, ~14 s seen under
    # pytest -n 2 on a loaded 2-core machine): more slack, still far below solving it.
    assert elapsed < limit + (40.0 if backend == "cbc" else 10.0)
    # stopped before the proof: time_limit, with the incumbent allocation if there was one
    assert res.status == "time_limit", res.message
    assert res.params["time_limit"] == limit
    rep = coalloc.verify(req, off, res.assignment)
    assert rep.feasible and rep.n_allocated == res.n_allocated
    if res.n_allocated == 0 and "empty allocation" in res.message:  # no incumbent yet
        assert res.objective == 0 and res.success  # allocating nothing is an answer
        assert "no allocation" in res.message, res.message
    else:
        assert res.success and res.bound >= res.objective and res.gap > 0
        assert res.objective == res.n_allocated and "incumbent" in res.message, res.message
    if "passed while the model was built" in res.message:
        # cut before upper_bound's clique partition: the plain bound (the tasks that fit
        # somewhere, capped by the machines), weaker and still valid
        assert res.bound is not None and upper_bound(req, off) <= res.bound <= req.n
    else:
        assert res.bound is not None and res.bound <= upper_bound(req, off)


def _block(monkeypatch, *names):
    for name in names:
        monkeypatch.setitem(sys.modules, name, None)


def test_missing_pulp(monkeypatch):
    _block(monkeypatch, "pulp")
    req, off, _ = bandwidth_only()
    expected = r"solver 'cbc' needs PuLP: pip install 'coalloc\[cbc\]'"
    with pytest.raises(ImportError, match=expected):
        solve_exact(req, off, solver="cbc")


def test_missing_ortools(monkeypatch):
    _block(
        monkeypatch, "ortools", "ortools.sat", "ortools.sat.python", "ortools.sat.python.cp_model"
    )
    req, off, _ = bandwidth_only()
    with pytest.raises(ImportError, match=r"solver 'cpsat' needs OR-Tools.*coalloc\[cpsat\]"):
        solve_exact(req, off, solver="cpsat")


def test_infeasible_solver_output_is_an_error(monkeypatch):
    """A solver answer that fails verification after rounding is never a success."""
    req, off, _ = bandwidth_only()

    def bogus(backend, pkg, model, *args):
        outcome = MilpOutcome(
            x=np.ones(model.nvar), bound=float(model.nvar), status="optimal", solver_status=0,
            message="bogus", nodes=0, time_limit_hit=False, infeasible=False, rows=0,
            time_limit=None,
        )  # fmt: skip
        return outcome, time.perf_counter()

    monkeypatch.setattr(exact, "_run", bogus)
    res = solve_exact(req, off)
    assert res.status == "error" and not res.success
    assert np.all(res.assignment == -1) and res.n_allocated == 0


def test_almost_binary_values_are_rounded(monkeypatch):
    req, off, _ = asymmetric()
    real = exact._run

    def noisy(*args):
        outcome, t = real(*args)
        outcome.x = outcome.x * (1 - 1e-7) + 1e-7 * (outcome.x < 0.5)
        return outcome, t

    monkeypatch.setattr(exact, "_run", noisy)
    res = solve_exact(req, off)
    check_optimal(req, off, res, 2)


@pytest.mark.parametrize(
    "kwargs, name",
    [
        ({"solver": "gurobi"}, "solver"),
        ({"solver": None}, "solver"),
        ({"formulation": "quadratic"}, "formulation"),
        ({"time_limit": 0}, "time_limit"),
        ({"time_limit": -1.0}, "time_limit"),
        ({"time_limit": float("inf")}, "time_limit"),
        ({"time_limit": "10"}, "time_limit"),
        ({"mip_gap": -0.1}, "mip_gap"),
        ({"threads": 0}, "threads"),
    ],
)
def test_argument_validation(kwargs, name):
    req, off, _ = bandwidth_only()
    with pytest.raises(ValueError, match=name):
        solve_exact(req, off, **kwargs)


def test_result_fields():
    req, off = fig2(3, n_tasks=15, seed=4)
    res = solve_exact(req, off, seed=5)
    assert res.seed == 5
    assert res.params["mip_gap"] == 0.0 and res.params["threads"] == 1
    assert res.timings["total"] >= res.timings["build"] + res.timings["solve"] - 1e-9  # its parts
    d = res.to_dict()
    assert d["status"] == "optimal" and d["bound"] == d["objective"] == res.n_allocated


def _cbc_children(parent: int) -> list:
    """Pids of live CBC processes solving a coalloc model started by process ``parent``."""
    import os

    found = []
    for pid in os.listdir("/proc"):
        if pid.isdigit():
            try:
                with open(f"/proc/{pid}/cmdline", "rb") as fh:
                    cmd = fh.read().replace(b"\0", b" ").decode(errors="replace")
                with open(f"/proc/{pid}/stat") as fh:
                    ppid = int(fh.read().rsplit(")", 1)[1].split()[1])
            except (OSError, ValueError, IndexError):
                continue
            if ppid == parent and "coalloc_cbc_" in cmd and "m.mps" in cmd:
                found.append(int(pid))
    return found


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


@pytest.mark.slow
def test_cbc_ctrl_c_returns_a_normal_result_and_leaves_nothing_behind(tmp_path):
    """Issue 15: after Ctrl-C, CBC was left running as an orphan with its model file."""
    import signal
    import subprocess

    _backend_available("cbc")
    inst = tmp_path / "big.json"
    req, off = fig3(600, seed=0)
    coalloc.write_instance(inst, req, off)
    # Python's own Ctrl-C handler, whatever the test runner's SIGINT disposition: a child
    # inherits an ignored SIGINT (a CI started in the background ignores it) and Python then
    # keeps it ignored, so the signal below would do nothing
    run = ("import runpy, signal, sys; signal.signal(signal.SIGINT, signal.default_int_handler);"
           " sys.argv[0] = 'coalloc'; runpy.run_module('coalloc', run_name='__main__')")
    cmd = [sys.executable, "-c", run, "ctaap", "solve", str(inst), "--method", "exact",
           "--backend", "cbc"]  # fmt: skip
    scratch = tmp_path / "tmp"  # the solve's own temporary folder, to find what it leaves
    scratch.mkdir()
    env = {**__import__("os").environ, "TMPDIR": str(scratch), "PYTHONFAULTHANDLER": "1"}
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    deadline = time.perf_counter() + 180  # reading and building the model is slow under load
    mine = []
    while not mine and time.perf_counter() < deadline and proc.poll() is None:
        time.sleep(0.1)
        mine = _cbc_children(proc.pid)  # only this solve's CBC (other workers run CBC too)
    if not mine:
        proc.kill()
        out, err = proc.communicate(timeout=30)
        pytest.fail(f"CBC never started (exit code {proc.returncode}): {err[-2000:]}")
    time.sleep(0.5)
    t0 = time.perf_counter()
    proc.send_signal(signal.SIGINT)
    try:
        out, err = proc.communicate(timeout=30)
    except subprocess.TimeoutExpired:  # where it hangs: every thread's stack (faulthandler)
        proc.send_signal(signal.SIGABRT)
        out, err = proc.communicate(timeout=30)
        pytest.fail(f"no exit 30 s after Ctrl-C; its threads:\n{err[-6000:]}\n{out[-2000:]}")
    assert time.perf_counter() - t0 < 5.0
    # status time_limit; exit 0 with the incumbent allocation, 1 without one
    import re

    assert re.search(r"quality: time_limit( \(no allocation\))?: upper bound", out), out

    assert re.search(r"allocated (\d+) of", out), out
    assert proc.returncode == 0, (out, err)  # the incumbent, or the empty allocation
    assert "no solution:" not in out, out
    assert not any(_alive(pid) for pid in mine)  # no orphan CBC
    assert list(scratch.iterdir()) == []  # the model file and CBC's folder are gone
