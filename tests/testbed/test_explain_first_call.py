"""The testbed's explanation in a process's first call (issue 36's contract): CP-SAT's
import, wanted for the next explanation's unsat core, and begun by the mappers' short
``exact`` calls for the next call, begins only as the explanation returns, after its last
mapper call, not inside it, where OR-Tools' initialisation held the interpreter lock while
the search went on (0.11-0.17 s at T = 0.05 s in a fresh process beside two busy loops).
A stand-in CP-SAT import waits on a gate (``tests/shared/_first_call``); the order of the
mapper calls and the import's beginning is recorded, no clock is read."""

from __future__ import annotations

from ..shared._first_call import first_call, spy_source

#: Five PCs asked of a one-switch testbed of four (three d710, one pc850): no proof of the
#: mappers names nodes, the explanation starts from the count's violator, where it wants
#: the exact model's core (``bench/shared/audit_cases.testbed_typed(13)``).
SETUP = """
import coalloc.testbed as tb
from coalloc._shared import lazyimport
from coalloc.testbed import explain as ex
lines = ["node sw switch:1"]
for i, k in enumerate(["d710", "d710", "d710", "pc850"]):
    lines += [f"node p{i} pc:1 {k}:1", f"link l{i} p{i} sw 100000 0 0"]
ptop = tb.parse_ptop("\\n".join(lines))
top = tb.VirtualTopology([tb.VNode(v, t) for v, t in
                          [("v0", "d710"), ("v1", "pc850"), ("v2", "pc"), ("v3", "pc"),
                           ("v4", "d710")]])
""" + spy_source("coalloc.testbed.explain", "_maps", "maps", keyed=True)
CHECK = """
report = {"order": ORDER, "explained": result is not None}
"""
SLOW = ["ortools.sat.python.cp_model"]


def test_an_explanation_begins_cpsat_import_only_as_it_returns():
    # 0.5 s: no mapper call inside has CP-SAT's import time (1 s) left, so none waits for
    # it; the path to the core is taken whatever the load (the count decides it)
    out = first_call(SETUP, "ex.explain_mapping(top, ptop, time_limit=0.5)", CHECK, SLOW)
    assert out["preloaded"] == []
    order = out["order"]
    assert "maps" in order and "begun:solver:cpsat" in order, order  # for the next call
    first = order.index("begun:solver:cpsat")
    assert "maps" not in order[first:], order  # no mapper call after it began
    assert order.count("begun:solver:cpsat") == 1, order
    assert out["blocked_at_return"]  # (not waited for)


def test_the_instance_explain_keeps_the_same_order():
    out = first_call(SETUP, "tb.Instance(top, ptop).explain(time_limit=0.5)", CHECK, SLOW)
    order = out["order"]
    assert "begun:solver:cpsat" in order, order
    assert "maps" not in order[order.index("begun:solver:cpsat"):], order
