"""Regressions found by the held-back contract audit (``bench/shared/contract_audit.py``).

Each test rebuilds, with a generator written here, an instance of another structure than the
families' own generators on which the package broke issue 36's contract, and judges the
result with an independent referee (the family's ``verify`` and the exact method's proven
optimum).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from bench.shared import contract_audit as ca  # the audit's own generators

import coalloc
from coalloc import taskmap as tm

SRC = str(Path(coalloc.__file__).resolve().parents[1])


def _clustered_tasks(n: int, seed: int) -> tm.TaskGraph:
    return ca.task_graph_clustered(n, seed)


def _skewed_star(n_proc: int, seed: int) -> tm.ResourceGraph:
    return ca.star_resources(n_proc, seed)


@pytest.mark.slow
@pytest.mark.parametrize("n, n_proc, seed", [(12, 4, 0), (10, 6, 2)])
def test_taskmap_default_is_not_beaten_by_exact_on_small_instances(n, n_proc, seed):
    """Issue 36 item 4: the default (portfolio) untimed is at least as good as the exact
    method untimed. On 40-64 task-processor pairs of clustered tasks on a skewed star the
    portfolio skipped the exact MILP (it ran it up to 24 pairs only) and answered 3.1
    against the proven 2.8 (12 tasks on 4 processors) and 2.1 against 2.0 (10 on 6)."""
    inst = tm.Instance(_clustered_tasks(n, seed), _skewed_star(n_proc, seed))
    exact = inst.solve("exact", seed=0)
    default = inst.solve(seed=0)
    assert exact.status == "optimal", exact.message
    assert inst.verify(default).ok and inst.verify(exact).ok
    assert default.objective <= exact.objective * (1 + 1e-9), (
        f"default {default.objective} ({default.message}), exact optimum {exact.objective}"
    )
    assert default.status == "optimal"  # it meets the exact solver's bound


#: In a fresh process: a time-limited testbed exact call with under a second left, then a
#: wait (bounded generously: the import took 4.7 s under a load of 15) for CP-SAT to be
#: loaded by that call, in the background.
_LOADS_CPSAT = """
import sys, time
from coalloc import testbed as tb
inst = tb.Instance(tb.generators.lan(5), tb.generators.deterlab(12, 2, seed=1))
first = inst.solve("exact", time_limit=0.5)
# (not "CP-SAT not in sys.modules": a module under way in the background is listed there
# from the start of its import)
assert first.has_solution or "not started" in first.message, first.message
end = time.monotonic() + 120
while "ortools.sat.python.cp_model" not in sys.modules and time.monotonic() < end:
    time.sleep(0.1)
print("loaded" if "ortools.sat.python.cp_model" in sys.modules else "never loaded")
print(first.status, first.message)
"""


@pytest.mark.slow
def test_testbed_exact_under_a_short_limit_loads_cpsat_for_the_next_call():
    """Issue 36 item 1 (an answer whenever the limit is past the method's first answer):
    with under a second left, the testbed exact method does not start CP-SAT's first import
    (it would overrun), and it never started it at all, so every later time-limited call in
    the process ended the same way, ``time_limit`` without a mapping after 0.5 ms, whatever
    the instance (held-back audit: Emulab's test_big onto Utah 2000 at 0.05 and 0.5 s). The
    import now goes on in the background, and the message says why nothing was solved."""
    pytest.importorskip("ortools")
    env = {**os.environ, "PYTHONPATH": SRC + os.pathsep + os.environ.get("PYTHONPATH", "")}
    out = subprocess.run([sys.executable, "-c", _LOADS_CPSAT], capture_output=True, text=True,
                         env=env, timeout=300)  # fmt: skip
    assert out.returncode == 0, out.stderr[-2000:]
    lines = out.stdout.splitlines()
    assert lines[0] == "loaded", out.stdout
    if "not started" in lines[1]:  # the first call could not use CP-SAT: the message says so
        assert "model was built" not in lines[1], lines[1]
        assert "import" in lines[1], lines[1]


def test_the_audit_runs_every_instance_warm_and_turns_the_methods_order():
    """h51gap: the audit ran each instance method by method, the default first, so the
    default paid the instance's one-time costs and lost at 0.05 s to methods that ran warm.
    Its plan now has the untimed runs first, then per budget and seed every method, in an
    order turned by one each time: the same runs as before, each once, and the default no
    longer always first among the timed ones."""
    from coalloc._shared.family import problem_kinds

    cls = {k.kind: k for k in problem_kinds()}["gap"]
    case = ca.Case("gap", "heavy-3x8", lambda: ca.gap_heavy(3, 8, 1), True)
    budgets = [0.05, 0.5, None]
    plan = ca._plan(case, cls, budgets, [], [0, 1])
    expected = []
    for method in cls.methods:
        seeds = [0] if method in ca.EXACT else [0, 1]
        expected += [(method, b, s) for b in ca._limits(case, budgets, method) for s in seeds]
    assert sorted(plan, key=repr) == sorted(expected, key=repr)
    first_timed = plan.index(next(r for r in plan if r[1] is not None))
    assert all(r[1] is None for r in plan[:first_timed])
    assert all(r[1] is not None for r in plan[first_timed:])
    timed = plan[first_timed:]
    firsts = {timed[i][0] for i in range(len(timed))
              if i == 0 or timed[i][1:] != timed[i - 1][1:]}  # fmt: skip
    assert cls.DEFAULT_METHOD in firsts and len(firsts) > 1


def test_the_audit_plan_without_warm_is_the_old_order(monkeypatch):
    """``WARM = False`` gives the order before h51gap: method by method, the default first."""
    from coalloc._shared.family import problem_kinds

    cls = {k.kind: k for k in problem_kinds()}["gap"]
    case = ca.Case("gap", "heavy-3x8", lambda: ca.gap_heavy(3, 8, 1), True)
    monkeypatch.setattr(ca, "WARM", False)
    plan = ca._plan(case, cls, [0.05, None], [], [0, 1])
    methods = [m for m, _, _ in plan]
    assert methods[0] == cls.DEFAULT_METHOD
    assert methods == sorted(methods, key=list(cls.methods).index)


class _Drawn:
    """A stand-in instance whose timed calls answer from a list per method (the clock's
    draws), every answer verified."""

    class _R:
        def __init__(self, obj):
            self.objective, self.has_solution = obj, obj is not None

    class _Ok:
        ok = True

    def __init__(self, draws):
        self.draws = {k: list(v) for k, v in draws.items()}
        self.calls = []

    def solve(self, method, seed=0, time_limit=None):
        self.calls.append((method, seed, time_limit))
        return self._R(self.draws[method].pop(0))

    def verify(self, r):
        return self._Ok()


@pytest.mark.parametrize("heur, dflt, race", [
    ([5.0], [5.0], True),    # equal on the repeat: the first loss was the clock's
    ([6.0], [5.0], True),    # the default better on the repeat
    ([4.0], [5.0], False),   # it loses again: counted
    ([None], [5.0], True),   # the method has no answer on the repeat
])
def test_a_timed_loss_of_the_default_counts_only_when_it_repeats(heur, dflt, race):
    """The audit's dominance referee: a default that lost a timed run to a single method
    is judged on a repeat of both calls (method first, same seed and limit), so the draw
    of two identical timed searches is not reported as the default's fault, and a loss
    that repeats still is."""
    inst = _Drawn({"heuristic": heur, "portfolio": dflt})
    assert ca._race(inst, "portfolio", "heuristic", 3, 0.05, "min") is race
    assert inst.calls == [("heuristic", 3, 0.05), ("portfolio", 3, 0.05)]
    maxi = _Drawn({"h": [-x if x is not None else None for x in heur],
                   "d": [-x for x in dflt]})  # fmt: skip
    assert ca._race(maxi, "d", "h", 3, 0.05, "max") is race
