"""One suite every family passes (issue 37 item 2): :func:`coalloc.testing.check_family`.

Each check of :func:`coalloc.testing.family_checks` runs on each of the five families, and on
the toy sixth family of ``test_family.py`` registered (with a file format, an example and a
plot command) for the test. A broken toy shows that the checks can fail.
"""

from __future__ import annotations

import dataclasses
import itertools
import json

import pytest

import coalloc
from coalloc._shared.family import FamilySpec, families, register_family, unregister_family
from coalloc.cli import main
from coalloc.formats import FORMATS, schema_for
from coalloc.testing import check_family, family_checks
from tests.shared.test_family import (
    KnapsackInstance,
    PackResult,
    random_instance,
    to_dict,
    toy_spec,
)

CHECKS = [name for name, _ in family_checks("ctaap")]


@pytest.mark.parametrize("check", CHECKS)
@pytest.mark.parametrize("family", coalloc.FAMILIES)
def test_every_family_passes_the_suite(family, check):
    dict(family_checks(family))[check]()


@pytest.fixture
def toy():
    spec = register_family(toy_spec())
    try:
        yield spec
    finally:
        unregister_family("knapsack")


def test_the_toy_family_registers_and_passes_the_suite(toy, tmp_path, capsys):
    assert "knapsack" in families() and "toy.knapsack.instance" in FORMATS
    check_family("knapsack")
    # what its spec gave it: a published schema, a plot command, its group
    assert schema_for("toy.knapsack.instance")["required"] == ["values", "weights", "capacity"]
    path = tmp_path / "k.json"
    path.write_text(json.dumps(to_dict(random_instance(4))))
    pytest.importorskip("matplotlib")
    assert main(["plot", "knapsack", str(path), "-o", str(tmp_path / "k.png")]) == 0
    assert (tmp_path / "k.png").stat().st_size > 0
    unregister_family("knapsack")
    assert "toy.knapsack.instance" not in FORMATS
    with pytest.raises(SystemExit):
        main(["plot", "knapsack", str(path), "-o", str(tmp_path / "k.png")])
    capsys.readouterr()


def _broken(name: str, **changes) -> FamilySpec:
    """The toy under another name, its kind changed by ``changes`` (class attributes)."""
    kind = type(f"Broken{name}", (KnapsackInstance,), {"__slots__": (), "family": name,
                                                        "format": f"toy.{name}", **changes})
    base = toy_spec()
    fmt = dataclasses.replace(base.formats[0], name=f"toy.{name}",
                              dump=lambda inst: {**to_dict(inst), "format": f"toy.{name}"},
                              examples=None)  # fmt: skip
    return FamilySpec(name, "broken", "broken", (kind,), formats=(fmt,),
                      example=lambda seed=0: kind(*random_instance(seed)))  # fmt: skip


def _claims_optimal(items, sack, *, seed=0, time_limit=None):
    return PackResult("optimal", "", "greedy", [], 0.0, seed=seed)  # no bound: not optimal


def _accepts_anything(items, sack, *, seed=0, time_limit=None, **params):
    return PackResult("feasible", "", "greedy", [0], float(items.values[0]), seed=seed)


_CALLS = itertools.count()


def _random_answer(items, sack, *, seed=0, time_limit=None):
    chosen = [next(_CALLS) % len(items.values)]  # another item each call, whatever the seed
    return PackResult("feasible", "", "greedy", chosen, float(items.values[chosen[0]]))


@pytest.mark.parametrize("changes, check, words", [
    ({"METHODS": {"greedy": _claims_optimal}}, "methods_under_budget", "optimal"),
    ({"METHODS": {"greedy": _accepts_anything}}, "bad_values", "was accepted"),
    ({"METHODS": {"greedy": _random_answer}}, "determinism", "two answers"),
    ({"_verify_solution": lambda self, result: dataclasses.replace(
        KnapsackInstance._verify_solution(self, result), fits=False)}, "round_trip", "verify"),
])  # fmt: skip
def test_a_broken_family_fails_the_check(changes, check, words):
    kind_changes = dict(changes)
    if "METHODS" in kind_changes:
        method = kind_changes["METHODS"]["greedy"]
        kind_changes["_solve_function"] = staticmethod(
            lambda items, sack, m, *, seed=0, **params: method(items, sack, seed=seed, **params)
        )
    spec = register_family(_broken("broken", **kind_changes))
    try:
        with pytest.raises(AssertionError, match=words):
            check_family(spec, checks=[check])
    finally:
        unregister_family("broken")
