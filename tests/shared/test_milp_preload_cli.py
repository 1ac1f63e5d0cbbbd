"""The command line imports an exact method's solver before its time limit's clock starts
(issue 36: a CLI call is a fresh process, and CP-SAT's first import took 0.7-4.7 s of a
``--time-limit``)."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import pytest

from coalloc._shared import milp
from coalloc.cli import _common as common
from coalloc.cli import main


def test_preload_only_for_a_timed_exact_method(monkeypatch):
    """Which calls preload, and what: the named solver, every one when none is named;
    nothing for another method or without a limit, nor for a name the method refuses."""
    calls = []
    monkeypatch.setattr(milp, "preload", lambda *s: calls.append(s) or list(s))
    assert common.preload_exact_solver("exact", {"time_limit": 1.0, "solver": "cpsat"}) == [
        "cpsat"
    ]
    common.preload_exact_solver("exact", {"time_limit": 1.0})
    for method, params in (("exact", {}), ("exact", {"solver": "highs"}),
                           ("greedy", {"time_limit": 1.0}), (None, {"time_limit": 1.0}),
                           ("exact", {"time_limit": 1.0, "solver": "gurobi"})):  # fmt: skip
        assert common.preload_exact_solver(method, params) == []
    assert calls == [("cpsat",), ()]


def test_the_cli_preloads_before_the_method_and_answers_alike(tmp_path, monkeypatch):
    """``--method exact --time-limit``: the solver is loaded before the method is called
    (the order of the two events), and the answer equals the untimed command's."""
    events = []
    real_preload = milp.preload
    monkeypatch.setattr(milp, "preload", lambda *s: events.append("preload") or real_preload(*s))
    import functools

    from coalloc.ctaap import solvers

    real_exact = solvers.METHODS["exact"]

    @functools.wraps(real_exact)
    def exact(*args, **kwargs):
        events.append("method")
        return real_exact(*args, **kwargs)

    monkeypatch.setitem(solvers.METHODS, "exact", exact)
    inst, timed, plain = tmp_path / "i.json", tmp_path / "t.json", tmp_path / "p.json"
    assert main(["ctaap", "generate", "fig2", "--n-tasks", "12", "-o", str(inst)]) == 0
    assert main(["ctaap", "solve", str(inst), "--method", "exact", "--time-limit", "60",
                 "--quiet", "-o", str(timed)]) == 0  # fmt: skip
    assert events[:2] == ["preload", "method"]
    events.clear()
    assert main(["ctaap", "solve", str(inst), "--method", "exact", "--quiet",
                 "-o", str(plain)]) == 0  # fmt: skip
    assert "preload" not in events
    a, b = json.loads(timed.read_text()), json.loads(plain.read_text())
    assert a["status"] == b["status"] == "optimal"
    assert a["n_allocated"] == b["n_allocated"]


_CHILD = """
import json, sys
from coalloc._shared import milp
import coalloc._shared.milp.run as run
seen = []
real = run.import_solver_until

def until(solver, deadline):
    mod = {"highs": "highspy", "cpsat": "ortools.sat.python.cp_model"}[solver]
    seen.append([solver, mod in sys.modules])  # loaded before the budget's import?
    return real(solver, deadline)

run.import_solver_until = until
milp.import_solver_until = until
from coalloc.cli import main
code = main(sys.argv[1:])
print(json.dumps({"code": code, "seen": seen}))
"""


@pytest.mark.parametrize("solver", ["highs", "cpsat"])
def test_in_a_fresh_cli_process_the_solver_is_loaded_before_the_budget(tmp_path, solver):
    """A fresh process, as every CLI call: where the exact method imports its solver within
    its budget (``import_solver_until``), the solver's package is already loaded."""
    pytest.importorskip({"highs": "highspy", "cpsat": "ortools"}[solver])
    inst = tmp_path / "i.json"
    assert main(["ctaap", "generate", "fig2", "--n-tasks", "12", "-o", str(inst)]) == 0
    args = ["ctaap", "solve", str(inst), "--method", "exact", "--solver", solver,
            "--time-limit", "60", "--quiet", "-o", str(tmp_path / "r.json")]  # fmt: skip
    out = subprocess.run([sys.executable, "-c", textwrap.dedent(_CHILD), *args],
                         capture_output=True, text=True, timeout=300)  # fmt: skip
    assert out.returncode == 0, out.stderr
    doc = json.loads(out.stdout.strip().splitlines()[-1])
    assert doc["code"] == 0
    assert doc["seen"] and all(loaded for _, loaded in doc["seen"]), doc
