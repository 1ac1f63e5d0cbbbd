"""The command line preloads the solver the family's exact method will use, not every one.

Issue 36: with ``--method exact --time-limit`` and no ``--solver``, the CLI imported every
installed solver before the clock (CP-SAT's 0.7 s where the family's method uses HiGHS).
The solver loaded is now the default of the family's own exact method, read from the
family (its kinds' ``METHODS["exact"]``); the referee is the solver a solve of the family's
example instance reports in ``result.params["solver"]``.
"""

from __future__ import annotations

import argparse

import pytest

from coalloc._shared import milp
from coalloc._shared.family import families
from coalloc.cli import _common as common
from coalloc.cli import build_parser


def _exact_families() -> list:
    return [name for name, spec in families().items()
            if spec.example is not None and "exact" in spec.kinds[0].METHODS]  # fmt: skip


@pytest.mark.parametrize("family", _exact_families())
def test_the_default_read_from_the_family_is_the_solver_its_exact_method_uses(family):
    pytest.importorskip("highspy")
    pytest.importorskip("ortools")
    result = families()[family].example(seed=0).solve("exact")
    assert result.params.get("solver") in common.exact_default_solvers(family)


def test_no_default_for_an_unknown_family():
    assert common.exact_default_solvers("no-such-family") == []


@pytest.fixture
def loads(monkeypatch):
    calls: list = []
    monkeypatch.setattr(milp, "preload", lambda *s: calls.append(s) or list(s))
    return calls


def _args(argv: list) -> argparse.Namespace:
    return build_parser().parse_args(argv)


@pytest.mark.parametrize("argv", [
    ["ctaap", "solve", "i.json", "--method", "exact", "--time-limit", "1"],
    ["solve", "i.json", "--method", "exact", "--time-limit", "1"],  # (CTAAP's, at the top)
    ["collective", "solve", "i.json", "--method", "exact", "--time-limit", "1"],
])  # fmt: skip
def test_a_timed_exact_command_preloads_its_familys_default_only(loads, argv):
    args = _args(argv)
    family = "ctaap" if argv[0] == "solve" else argv[0]
    common.solver_params(args)
    assert loads == [tuple(common.exact_default_solvers(family))]
    assert loads[0] and len(loads[0]) < len(milp.SOLVERS)


def test_the_testbed_preloads_cp_sat_and_a_named_solver_wins(loads):
    args = _args(["testbed", "assign", "a.top", "b.ptop", "--method", "exact",
                  "--time-limit", "1"])  # fmt: skip
    common.solver_params(args)
    assert loads == [("cpsat",)]
    loads.clear()
    args = _args(["ctaap", "solve", "i.json", "--method", "exact", "--time-limit", "1",
                  "--solver", "cpsat"])  # fmt: skip
    common.solver_params(args)
    assert loads == [("cpsat",)]


def test_every_solver_when_the_family_is_not_known(loads):
    args = argparse.Namespace(method="exact", time_limit=1.0, solver=None, param=None)
    common.solver_params(args)
    assert loads == [()]  # (milp.preload with no names: every installed solver)
    loads.clear()
    common.solver_params(argparse.Namespace(method="exact", time_limit=None, solver=None,
                                            param=None, command="ctaap"))  # fmt: skip
    assert loads == []  # untimed: nothing preloaded
