"""The default's spare time (issue 40 item 2, h49tmap): ``solve(..., time_limit=T)`` with
the default method, having ended early with a printed gap over
:data:`~coalloc.taskmap.jobpack.SPARE_GAP` on a task graph of jobs (pipelines), spends what
is left of ``T`` on :func:`~coalloc.taskmap.jobpack.pack_jobs`. Referees: the family's
``verify`` on every answer, the same call without the step (never worse), the certified
bound (never above the answer), brute force on small pipelines (the step's mapping is never
below the optimum), and spies on what the step is given (the time left of the caller's
budget, the caller's bound). No timed assertion: the budget is checked by what the step is
told, and the wall clock by ``bench/taskmap/spare_pack.py`` and the contract audit."""

from __future__ import annotations

import json
import time

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import coalloc.taskmap as tm
import coalloc.taskmap.jobpack as jp
from coalloc.taskmap import generators as gen
from tests.taskmap._brute import brute_force as _brute_force

_SETTINGS = dict(deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])


def _pipeline(seed: int):
    """A light pipeline (19 tasks, 14 processors at seed 11) on which the default's gap is
    over 10 % (42 % at seed 11)."""
    tasks = gen.pipeline_task_graph(n_clusters=(3, 5), cluster_size=(5, 8), c=1.0, seed=seed)
    res = gen.internet_resource_graph(n_wan=2, n_lan=3, lan_size=(3, 5), capacity=(1.0, 8.0),
                                      lan_bandwidth=10.0, seed=seed + 1)  # fmt: skip
    return tasks, res


class _Spy:
    """Records every call of ``pack_jobs`` (its time limit and bound), then runs it."""

    def __init__(self, monkeypatch):
        self.calls = []
        self._real = jp.pack_jobs
        monkeypatch.setattr(jp, "pack_jobs", self)

    def __call__(self, tasks, res, mapping, **kw):
        self.calls.append((time.perf_counter(), kw))
        return self._real(tasks, res, mapping, **kw)


def test_a_timed_default_packs_the_jobs_in_its_spare_time(monkeypatch):
    tasks, res = _pipeline(11)
    inst = tm.Instance(tasks, res)
    monkeypatch.setattr(jp, "SPARE_GAP", np.inf)  # the same call without the step
    plain = tm.solve(tasks, res, time_limit=30.0)
    assert plain.gap > 0.1  # the instance is one the step is for
    monkeypatch.setattr(jp, "SPARE_GAP", 0.10)
    spy = _Spy(monkeypatch)
    t0 = time.perf_counter()
    out = tm.solve(tasks, res, time_limit=30.0)
    assert len(spy.calls) == 1
    began, kw = spy.calls[0]
    # the step gets what is left of the caller's budget, not more, and the caller's bound
    assert 0 < kw["time_limit"] <= 30.0 - (began - t0)
    assert kw["lower"] == pytest.approx(plain.bound)
    assert inst.verify(out).ok
    assert out.max_occupancy < 0.95 * plain.max_occupancy, (out.max_occupancy, plain)
    # the bound is the caller's, or raised by the joint job bound's proof at 0.9 x the new
    # occupancy (h51tmap; its soundness is checked against brute force below)
    assert plain.bound * (1 - 1e-12) <= out.bound <= out.max_occupancy
    if out.bound > plain.bound * (1 + 1e-12):
        assert "joint job bound" in out.message and "joint_bound" in out.timings
        assert out.bound == pytest.approx((1 - jp.SPARE_GAP) * out.max_occupancy)
    assert out.gap == pytest.approx((out.max_occupancy - out.bound) / out.max_occupancy)
    assert out.status in ("feasible", "optimal") and "pack_jobs" in out.message
    assert out.history[-1] == pytest.approx(out.max_occupancy)
    node_occ, link_occ = tm.occupancy_graph(tasks, res, out.mapping)
    np.testing.assert_allclose(out.node_occupancy, node_occ)
    np.testing.assert_allclose(out.link_occupancy, link_occ)


def test_untimed_calls_and_other_methods_never_pack(monkeypatch):
    """Untimed, the default's answer is the function of the instance it was (the digests);
    a named method is that method alone."""
    tasks, res = _pipeline(11)
    spy = _Spy(monkeypatch)
    untimed = tm.solve(tasks, res)
    assert untimed.gap > 0.1
    tm.solve(tasks, res, method="multilevel", time_limit=30.0)
    tm.solve(tasks, res, time_limit=30.0, bound=False)  # no printed gap: no trigger
    assert spy.calls == []


def test_no_step_below_the_gap_with_little_time_or_after_the_budget_ended(monkeypatch):
    tasks, res = _pipeline(11)
    result = tm.solve(tasks, res)  # gap 42 %
    spy = _Spy(monkeypatch)
    now = time.perf_counter()
    jp.pack_in_spare_time(tasks, res, result, now + 0.5 * jp.SPARE_MIN)  # too little left
    result.status = "time_limit"
    jp.pack_in_spare_time(tasks, res, result, now + 60.0)  # the budget ended the method
    result.status, result.gap = "feasible", 0.099
    jp.pack_in_spare_time(tasks, res, result, now + 60.0)  # within 10 %
    stencil, cluster = gen.stencil_task_graph((8, 8)), gen.hierarchical_cluster()
    other = tm.solve(stencil, cluster)
    other.gap = 0.5
    jp.pack_in_spare_time(stencil, cluster, other, now + 60.0)  # 64 tasks, no job: does not apply
    assert spy.calls == []


@settings(max_examples=12, **_SETTINGS)
@given(seed=st.integers(0, 10**6), lan=st.sampled_from([2.0, 10.0]))
def test_the_step_in_solve_is_valid_and_never_below_the_optimum(seed, lan):
    """Small pipelines from a poor start (every task on one processor, the gap far over
    10 %): the updated result verifies, is never worse, never below brute force."""
    tasks = gen.pipeline_task_graph(n_clusters=(1, 2), cluster_size=(3, 3), c=1.0, seed=seed)
    res = gen.internet_resource_graph(n_wan=2, n_lan=2, lan_size=(1, 2), capacity=(1.0, 8.0),
                                      lan_bandwidth=lan, seed=seed + 1)  # fmt: skip
    result = tm.solve(tasks, res, method="open", bound=True)
    start = np.full(tasks.n, int(res.processors[0]), dtype=np.int64)
    occ0 = float(tm.verify_mapping(tasks, res, start).max_occupancy)
    result.mapping, result.max_occupancy = start, occ0
    result.gap = (occ0 - result.bound) / occ0
    if not result.gap > jp.SPARE_GAP:
        return
    jp.pack_in_spare_time(tasks, res, result, time.perf_counter() + 60.0)
    assert tm.Instance(tasks, res).verify(result).ok
    assert result.max_occupancy <= occ0 * (1 + 1e-12)
    assert result.max_occupancy >= _brute_force(tasks, res) * (1 - 1e-9) >= result.bound * (
        1 - 1e-9)  # fmt: skip


def test_no_proof_without_its_time(monkeypatch):
    """``SPARE_PROOF_MIN = inf``: the step as before h51tmap, the caller's bound kept."""
    tasks, res = _pipeline(11)
    monkeypatch.setattr(jp, "SPARE_PROOF_MIN", np.inf)
    plain = tm.solve(tasks, res)
    out = tm.solve(tasks, res, time_limit=30.0)
    assert out.bound == pytest.approx(plain.bound)
    assert "joint_bound" not in out.timings and "joint job bound" not in out.message


def test_pack_jobs_names_a_bad_lower_bound():
    tasks, res = gen.table1_instance(1.0, 7101)
    start = np.zeros(tasks.n, dtype=np.int64) + int(res.processors[0])
    for bad in (-1.0, float("nan"), float("inf"), "1", True):
        with pytest.raises(ValueError, match="lower"):
            jp.pack_jobs(tasks, res, start, lower=bad)
    with pytest.raises(TypeError, match="polish"):
        jp.pack_jobs(tasks, res, start, polish="yes")


@settings(max_examples=20, **_SETTINGS)
@given(seed=st.integers(0, 10**6))
def test_the_polish_of_a_packing_is_valid_and_never_worse(seed):
    """Each MILP answer gets the multilevel mapper's bottleneck moves before it is scored:
    from a random mapping, the polished one verifies and is never worse."""
    tasks, res = _pipeline(seed % 40)
    rng = np.random.default_rng(seed)
    start = rng.choice(np.asarray(res.processors), tasks.n)
    out = jp._polished(tasks, res, start)
    before = float(tm.verify_mapping(tasks, res, start).max_occupancy)
    rep = tm.verify_mapping(tasks, res, out)
    assert rep.valid and float(rep.max_occupancy) <= before * (1 + 1e-12)
    assert np.isin(out, res.processors).all()
    # a polish whose time has passed starts no move (pack_jobs gives it the call's deadline)
    late = jp._polished(tasks, res, start, until=time.perf_counter() - 1.0)
    assert np.array_equal(late, start)


def test_pack_jobs_without_the_polish_is_the_milps_answers_alone(monkeypatch):
    tasks, res = _pipeline(11)
    start = np.full(tasks.n, int(res.processors[0]), dtype=np.int64)
    called = []
    monkeypatch.setattr(jp, "_polished", lambda t, r, m, until=None: called.append(1) or m)
    jp.pack_jobs(tasks, res, start, tries=2, time_limit=60.0, polish=False)
    assert called == []
    jp.pack_jobs(tasks, res, start, tries=2, time_limit=60.0)
    assert called


class _UntilSpy:
    """Records the deadline ``solve`` hands to the spare-time step, then runs the step."""

    def __init__(self, monkeypatch):
        from coalloc.taskmap import solvers

        self.until = []
        self._real = jp.pack_in_spare_time
        monkeypatch.setattr(solvers, "pack_in_spare_time", self)

    def __call__(self, tasks, res, result, until):
        self.until.append(until)
        return self._real(tasks, res, result, until)


def _status_line(text: str) -> str:
    line = next(ln for ln in text.splitlines() if ln.strip().startswith("status:"))
    return line.split(":")[1].strip()


def test_the_command_line_packs_in_the_spare_time_within_its_budget(tmp_path, monkeypatch,
                                                                    capsys):  # fmt: skip
    """``coalloc taskmap map --time-limit T`` goes through ``solve``: the step runs there,
    is told no more than what is left of the budget counted inside the command, and the
    printed status is the written one (text and --json)."""
    from coalloc.cli import main

    tasks, res = _pipeline(11)
    tm.io.write_instance(tmp_path / "i.json", tasks, res)
    T = 10.0
    pack, until = _Spy(monkeypatch), _UntilSpy(monkeypatch)
    t0 = time.perf_counter()
    rc = main(["taskmap", "map", str(tmp_path / "i.json"), "--time-limit", repr(T),
               "-o", str(tmp_path / "out.json")])  # fmt: skip
    t1 = time.perf_counter()
    assert rc == 0
    # the step ran, once (its packings: one, or a chain of them, SPARE_CHAIN)
    assert len(until.until) == 1 and 1 <= len(pack.calls) <= 1 + jp.SPARE_CHAIN
    # the budget is the solve call's, counted inside the command; the step ends by it
    assert t0 <= until.until[0] - T <= t1
    assert all(0 < kw["time_limit"] <= until.until[0] - began for began, kw in pack.calls)
    ran = len(pack.calls)
    written = tm.io.read_mapping_result(tmp_path / "out.json")
    printed = _status_line(capsys.readouterr().out)
    assert printed == written["status"] and written["status"] in ("feasible", "optimal")
    assert tm.verify_mapping(tasks, res, written["mapping"]).valid
    assert main(["taskmap", "map", str(tmp_path / "i.json"), "--time-limit", repr(T),
                 "--json"]) == 0  # fmt: skip
    doc = json.loads(capsys.readouterr().out)
    assert doc["status"] in ("feasible", "optimal") and len(pack.calls) > ran


def test_solve_batch_with_a_time_limit_param_packs_in_the_spare_time(tmp_path, monkeypatch):
    """``solve-batch`` has no ``--time-limit``; ``-p time_limit=T`` reaches ``solve`` (the
    worker threads share this process, so the spy sees them)."""
    from coalloc.cli import main

    tasks, res = _pipeline(11)
    tm.io.write_instance(tmp_path / "i.json", tasks, res)
    pack = _Spy(monkeypatch)
    rc = main(["taskmap", "solve-batch", str(tmp_path / "i.json"), "-j", "1", "-p",
               "time_limit=10", "-o", str(tmp_path / "out.jsonl"), "--quiet"])  # fmt: skip
    assert rc == 0 and 1 <= len(pack.calls) <= 1 + jp.SPARE_CHAIN
    assert all(0 < kw["time_limit"] <= 10.0 for _, kw in pack.calls)
    line = json.loads((tmp_path / "out.jsonl").read_text().splitlines()[0])
    doc = line.get("result", line)
    assert doc["status"] in ("feasible", "optimal")
    assert tm.verify_mapping(tasks, res, doc["mapping"]).valid


def test_the_contract_audit_runs_a_pipeline_at_a_budget_the_step_needs():
    """The audit's pipeline case reaches the step: 5 s though it is not small (no untimed
    exact run), and a budget relative to the default's untimed time."""
    from bench.shared import contract_audit as ca

    case = next(c for c in ca.cases(False) if c.name.startswith("table1"))
    budgets = [0.05, 0.5, 5.0, None]
    assert ca._limits(case, budgets, "portfolio") == budgets
    assert ca._limits(case, budgets, "exact") == [0.05, 0.5, 5.0]
    assert case.relative and not case.small
    other = next(c for c in ca.cases(False) if c.name == "metis-bipartite-100/tree")
    assert ca._limits(other, budgets, "portfolio") == [0.05, 0.5, None]  # unchanged


@pytest.mark.parametrize("runs_to_the_limit", [True, False])
def test_the_status_says_whether_the_budget_ended_the_step(monkeypatch, runs_to_the_limit):
    """Issue 36's rule: ``time_limit`` only when the budget ended the call. A step that runs
    until the deadline (here a stand-in that waits for it and finds nothing) makes the call
    ``time_limit``, keeping the default's verified mapping; a step that ends by itself (a
    stand-in returning at once) leaves the default's own status. The stand-ins decide when
    the step returns, so the test does not race a clock."""
    tasks, res = _pipeline(11)
    monkeypatch.setattr(jp, "SPARE_GAP", np.inf)  # the same call without the step
    # 3 s: the default alone takes 0.3-0.7 s under a load of 5 and must end by itself
    plain = tm.solve(tasks, res, time_limit=3.0, seed=0)
    monkeypatch.setattr(jp, "SPARE_GAP", 0.10)
    assert plain.status == "feasible" and plain.gap > jp.SPARE_GAP

    def stand_in(t, r, mapping, time_limit, lower, tries=6, **kw):
        if runs_to_the_limit:
            until = time.perf_counter() + time_limit
            while time.perf_counter() < until:
                time.sleep(min(0.05, max(0.0, until - time.perf_counter())))
        return np.asarray(mapping).copy(), float(plain.max_occupancy)

    monkeypatch.setattr(jp, "pack_jobs", stand_in)
    out = tm.solve(tasks, res, time_limit=3.0, seed=0)
    assert out.mapping.tolist() == plain.mapping.tolist()
    assert tm.Instance(tasks, res).verify(out).ok
    if runs_to_the_limit:
        assert out.status == "time_limit" and "stopped at the limit" in out.message
    else:
        assert out.status == "feasible" and "stopped" not in out.message


def test_a_short_spare_time_is_one_milp_with_all_of_it(monkeypatch):
    """Under ``SPARE_ONE_TRY`` seconds left the step is one MILP (``tries=1``: it gets the
    whole time, not the bisection's half); from there on the bisection's tries (h50tmap: at
    T = 5-10 s under load the half was too short where the whole was not)."""
    tasks, res = _pipeline(11)
    result = tm.solve(tasks, res)  # gap 42 %
    calls = []

    def fake(t, r, mapping, **kw):  # records what the step is given, solves nothing
        calls.append(kw)
        return np.asarray(mapping), float(result.max_occupancy)

    monkeypatch.setattr(jp, "pack_jobs", fake)
    monkeypatch.setattr(jp, "SPARE_CHAIN", 0)  # the one MILP alone (the chain: test_jobpack_chain)
    for left in (0.5 * jp.SPARE_ONE_TRY, 2.0 * jp.SPARE_ONE_TRY):
        result.status = "feasible"
        jp.pack_in_spare_time(tasks, res, result, time.perf_counter() + left)
    assert [kw["tries"] for kw in calls] == [1, 6]
    assert calls[0]["time_limit"] < 0.5 * jp.SPARE_ONE_TRY <= calls[1]["time_limit"]
    # the one MILP's level 0.3 of the way up (h51tmap), the bisection's the midpoint
    assert [kw["first"] for kw in calls] == [jp.SPARE_FIRST, 0.5]


@pytest.mark.parametrize("first", [0.3, 0.5])
def test_the_first_level_lies_where_first_says(monkeypatch, first):
    """``pack_jobs(first=f)``'s first MILP is at ``lower + f (occupancy - lower)``; the next
    bisect (here every MILP finds nothing, so the lower end moves up to each level)."""
    tasks, res = _pipeline(11)
    start = tm.solve(tasks, res)
    levels = []

    def none(t, r, layout, L, until):
        levels.append(L)
        return None

    monkeypatch.setattr(jp, "_packing", none)
    lo, hi = 0.2, float(start.max_occupancy)
    jp.pack_jobs(tasks, res, start.mapping, tries=2, lower=lo, first=first, time_limit=60)
    assert levels[0] == pytest.approx(lo + first * (hi - lo))
    assert levels[1] == pytest.approx(0.5 * (levels[0] + hi))


@pytest.mark.parametrize("bad", [0, 1, -0.2, 1.5, True, "0.3"])
def test_pack_jobs_names_a_bad_first_level(bad):
    tasks, res = _pipeline(11)
    start = tm.solve(tasks, res)
    with pytest.raises(ValueError, match="first"):
        jp.pack_jobs(tasks, res, start.mapping, first=bad)


def test_the_packing_milp_is_stopped_at_its_deadline_by_the_shared_runner(monkeypatch):
    """HiGHS's own time limit is soft (presolve, the root: 0.3-0.8 s past it under a load
    of 5, the spare step of table1 c=1 #3 at T = 5 s ended at 5.29-5.76 s): the packing MILP
    goes through the shared runner, whose deadline is ``until`` counted from before the
    solver's arrays are converted (the runner lets HiGHS go or kills its child there). A
    stopped solve's incumbent is a packing at that level too: it is used."""
    from coalloc._shared import milp

    tasks, res = _pipeline(11)
    layout = jp._layout(tasks, res)
    real, seen = milp.run_milp, []

    def spy(solver, pkg, problem, *, options, **kw):
        seen.append((time.perf_counter(), options))
        out = real(solver, pkg, problem, options=options, **kw)
        if out.x is not None:  # as if the deadline had stopped it after its first incumbent
            out.status = "time_limit"
        return out

    monkeypatch.setattr(milp, "run_milp", spy)
    until = time.perf_counter() + 600.0
    m = jp._packing(tasks, res, layout, 10.0 * float(tm.solve(tasks, res).max_occupancy), until)
    assert len(seen) == 1
    at, options = seen[0]
    assert options.started <= at and options.started + options.time_limit == pytest.approx(until)
    assert m is not None and tm.verify_mapping(tasks, res, m).valid
