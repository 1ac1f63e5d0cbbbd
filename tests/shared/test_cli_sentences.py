"""Failure reasons print as sentences, not Python dicts (issue 23 item 6)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

import coalloc.testbed as tb
from coalloc.cli import main
from coalloc.testbed.reasons import _TEMPLATES, reason_text

TESTBED = Path(tb.__file__).resolve().parent


def test_every_constraint_the_testbed_reports_has_a_sentence():
    kinds = set()
    for path in TESTBED.glob("*.py"):
        kinds |= set(re.findall(r'"constraint": "([a-z_]+)"', path.read_text()))
    assert len(kinds) >= 20
    assert sorted(kinds - set(_TEMPLATES)) == []


@pytest.mark.parametrize(
    "reason, sentence",
    [
        (
            {"constraint": "fixed", "vnodes": ["a"], "pnode": "pc1"},
            "a must go on pc1, which cannot take it",
        ),
        (
            {"constraint": "capacity", "vnodes": ["a"], "candidate_pclasses": ["c0", "c1"]},
            "a found no free physical node of the classes c0, c1",
        ),  # fmt: skip
        (
            {"constraint": "bandwidth", "link": "l0", "plink": "p", "needed": 1e9, "capacity": 1e8},
            "link l0 needs 1e+09 on p, which carries 1e+08",
        ),  # fmt: skip
        (
            {
                "constraint": "unroutable",
                "routing": {"constraint": "no_path", "link": "l1", "switches": ["s0", "s1"]},
                "solver": "x",
            },
            "the integer program's mapping could not be routed: link l1: no switch path joins "
            "s0, s1",
        ),  # fmt: skip
        ({"constraint": "brand_new", "pnode": "p"}, "constraint brand new not met (pnode p)"),
        ({"constraint": "slots", "pnode": "p"}, "constraint slots not met (pnode p)"),
    ],
)
def test_reason_text(reason, sentence):
    assert reason_text(reason) == sentence


def test_a_failed_assign_prints_a_sentence(tmp_path, capsys):
    tb.write_top(tmp_path / "big.top", tb.generators.ring(30))
    tb.write_ptop(tmp_path / "small.ptop", tb.generators.deterlab(8, 2, seed=0))
    status = main(["testbed", "assign", str(tmp_path / "big.top"), str(tmp_path / "small.ptop")])
    err = capsys.readouterr().err
    assert status == 1
    assert "30 are needed and 8 are free" in err
    assert "{" not in err and "'constraint'" not in err


def test_an_invalid_mapping_lists_its_violations_as_sentences():
    top, ptop = tb.generators.ring(6), tb.generators.deterlab(8, 2, seed=0)
    r = tb.assign(top, ptop)
    mapping = dict(r.mapping)
    first, second = list(mapping)[:2]
    mapping[first] = mapping[second]  # two nodes on one single-slot PC
    text = str(tb.verify_mapping(top, ptop, mapping, r.routes))
    assert text.startswith("INVALID")
    assert f"{mapping[second]} holds 2 slots of 1" in text
    assert "{" not in text
