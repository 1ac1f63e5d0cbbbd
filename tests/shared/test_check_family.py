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
    return PackResult(status="optimal", message="", method="greedy", chosen=[], objective=0.0,
                      seed=seed)  # no bound: not optimal


def _accepts_anything(items, sack, *, seed=0, time_limit=None, **params):
    return PackResult(status="feasible", message="", method="greedy", chosen=[0],
                      objective=float(items.values[0]), seed=seed)


_CALLS = itertools.count()


def _random_answer(items, sack, *, seed=0, time_limit=None):
    chosen = [next(_CALLS) % len(items.values)]  # another item each call, whatever the seed
    return PackResult(status="feasible", message="", method="greedy", chosen=chosen,
                      objective=float(items.values[chosen[0]]))


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


# ------------------------------------------------------------------ generate and line formats


def _write_lossy(path, inst):
    """The toy's text writer that drops the last item: what it writes reads back smaller."""
    from tests.shared.test_family import Items, write_toy_text

    keep = len(inst.items.values) - 1
    write_toy_text(path, KnapsackInstance(Items(inst.items.values[:keep],
                                                inst.items.weights[:keep]), inst.sack))  # fmt: skip


def _write_unread(path, kw, args):
    with open(path, "w") as fh:
        fh.write("no format of the family\n")
    return "wrote"


def _write_counted(path, kw, args):
    """Each call writes another instance, whatever the seed."""
    from tests.shared.test_family import toy_knapsack

    inst = toy_knapsack(**{**kw["toy_knapsack"], "seed": next(_CALLS)})
    with open(path, "w") as fh:
        json.dump(to_dict(inst), fh)
    return "wrote"


def _toy_with(key, field, value):
    """The toy's spec, the first entry of its ``key`` (``line_formats``, ``generate``) with
    ``field`` replaced."""
    base = toy_spec()
    entry = dataclasses.replace(getattr(base, key)[0], **{field: value})
    return dataclasses.replace(base, **{key: (entry,)})


@pytest.mark.parametrize("key, field, value, check, words", [
    ("line_formats", "write", _write_lossy, "line_formats", "another file"),
    ("generate", "write", _write_unread, "generate", "read by no format"),
    ("generate", "write", _write_counted, "generate", "not the API generators'"),
])  # fmt: skip
def test_a_broken_generate_or_line_format_fails_the_check(key, field, value, check, words):
    spec = register_family(_toy_with(key, field, value))
    try:
        with pytest.raises(AssertionError, match=words):
            check_family(spec, checks=[check])
    finally:
        unregister_family("knapsack")


def test_the_new_checks_are_in_the_suite():
    assert {"generate", "line_formats"} <= set(CHECKS)
