"""The testbed's ``exact`` in a process's first call under a short time limit (issue 36):
with less time left than CP-SAT's first import takes (``tb.exact.CPSAT_IMPORT_SECONDS``),
the import is not begun at all, since OR-Tools' initialisation holds the interpreter lock
in stretches and a call returning beside it ended at 0.07-0.15 s at T = 0.05 s; with more,
it is waited for until the deadline and goes on after it (a stand-in import that takes
``HOLD`` seconds, ``tests/shared/_first_call``)."""

from __future__ import annotations

from pathlib import Path

from ..shared._first_call import first_call

DATA = Path(__file__).parent / "data" / "emulab"
SETUP = f"""
from coalloc import testbed as tb
from coalloc._shared import lazyimport
top = tb.read_top({str(DATA / 'test.top')!r})
ptop = tb.read_ptop({str(DATA / 'test.ptop')!r})
"""
CHECK = """
report = {"status": result.status, "begun": "solver:cpsat" in lazyimport._LOADS,
          "message": str(result.message)}
"""
SLOW = ["ortools.sat.python.cp_model"]


def test_a_short_first_call_does_not_begin_the_import():
    out = first_call(SETUP, 'tb.solve(top, ptop, method="exact", time_limit=0.05)', CHECK, SLOW)
    assert out["preloaded"] == []
    assert out["status"] == "time_limit"
    assert not out["begun"] and not out["reached"]  # begun in the background on main
    assert "would not fit" in out["message"]


def test_a_longer_first_call_waits_until_its_deadline():  # (3 s: 1 s to spare, under load)
    out = first_call(SETUP, 'tb.solve(top, ptop, method="exact", time_limit=3.0)', CHECK, SLOW)
    assert out["preloaded"] == []
    assert out["status"] == "time_limit"
    assert out["begun"] and out["reached"] and out["blocked_at_return"]
