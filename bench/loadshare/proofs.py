"""Proofs of optimality at short limits: the default against ``exact`` and bare CP-SAT / HiGHS.

Per instance and limit, the calls ``solve_gap(method=M, time_limit=T, seed=0)`` for the
default (``portfolio``), ``exact`` (CP-SAT from the heuristic), ``cpsat`` and ``highs``
(bare, ``hint=False``), the order turned by one each instance; prints per limit and method
the proofs (status ``optimal``), the mean objective gap to the best of the four, and the
instances where a bare solver proves and the default does not. OR-Library's gap1-12
(``COALLOC_GAPDATA``/cattrysse1994) and the contract audit's small GAP cases::

    PYTHONPATH=src:. python -m bench.loadshare.proofs --limits 0.2 1
"""

from __future__ import annotations

import argparse
import os
import sys
import time

from bench.shared._progress import add_quiet, bar
from coalloc.loadshare import read_gap, solve_gap, verify_gap
from coalloc.loadshare.gap import exact as gx

KW = {"default": {}, "exact": {"method": "exact"},
      "cpsat": {"method": "exact", "solver": "cpsat", "hint": False},
      "highs": {"method": "exact", "solver": "highs", "hint": False},
      "dhighs": {}, "handoff": {}}  # fmt: skip
#: ``dhighs``: the default with ``gap.exact.PORTFOLIO_HIGHS_PAIRS`` = ``--highs-pairs``;
#: ``handoff``: the default with ``gap.exact.PORTFOLIO_HANDOFF_PAIRS`` = ``--handoff-pairs``
#: (``--handoff-gap``: ``PORTFOLIO_HANDOFF_GAP``, negative: None; ``--handoff-at``:
#: ``PORTFOLIO_HANDOFF_AT``)
DEFAULTS = ("default", "dhighs", "handoff")


def instances(data: str, audit: bool) -> list:
    d = os.path.join(data, "cattrysse1994")
    out = [(f, read_gap(os.path.join(d, f))[0]) for f in sorted(os.listdir(d))]
    if audit:
        from bench.shared import contract_audit as ca

        out += [(c.name, c.build()) for c in ca.cases(False) if c.kind == "gap"
                and c.name in ("orlib-single", "orlib-multi-0", "orlib-multi-1", "heavy-3x8",
                               "heavy-3x8-max", "tight-3x8", "heavy-10x80")]  # fmt: skip
    return out


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--limits", type=float, nargs="+", default=[0.2, 1.0])
    p.add_argument("--methods", nargs="+", default=list(KW), choices=list(KW))
    p.add_argument("--only", nargs="*")
    p.add_argument("--highs-pairs", type=int, default=600)
    p.add_argument("--handoff-pairs", type=int, default=800)
    p.add_argument("--handoff-gap", type=float, default=1.0)
    p.add_argument("--handoff-at", type=float, default=gx.PORTFOLIO_HANDOFF_AT)
    p.add_argument("--no-audit", action="store_true")
    p.add_argument("--data", default=os.environ.get("COALLOC_GAPDATA", "/work/peers/gapdata"))
    add_quiet(p)
    a = p.parse_args(argv)
    insts = [(k, i) for k, i in instances(a.data, not a.no_audit) if not a.only or k in a.only]
    print("load", open("/proc/loadavg").read().split()[:3], flush=True)
    for t in a.limits:
        rows = {}
        for idx, (key, inst) in enumerate(bar(insts, desc=f"T = {t:g} s", unit="inst")):
            ms = a.methods[idx % len(a.methods):] + a.methods[: idx % len(a.methods)]
            for m in ms:
                t0 = time.perf_counter()
                old = (gx.PORTFOLIO_HIGHS_PAIRS, gx.PORTFOLIO_HANDOFF_PAIRS,
                       gx.PORTFOLIO_HANDOFF_GAP, gx.PORTFOLIO_HANDOFF_AT)  # fmt: skip
                if m == "dhighs":
                    gx.PORTFOLIO_HIGHS_PAIRS = a.highs_pairs
                if m == "handoff":
                    gx.PORTFOLIO_HANDOFF_PAIRS = a.handoff_pairs
                    gx.PORTFOLIO_HANDOFF_GAP = a.handoff_gap if a.handoff_gap >= 0 else None
                    gx.PORTFOLIO_HANDOFF_AT = a.handoff_at
                try:
                    r = solve_gap(inst, time_limit=t, seed=0, **KW[m])
                finally:
                    (gx.PORTFOLIO_HIGHS_PAIRS, gx.PORTFOLIO_HANDOFF_PAIRS,
                     gx.PORTFOLIO_HANDOFF_GAP, gx.PORTFOLIO_HANDOFF_AT) = old  # fmt: skip
                wall = time.perf_counter() - t0
                if r.assignment is not None:
                    assert verify_gap(inst, r.assignment, assign_all=r.assign_all).feasible
                rows[key, m] = (r.status, r.objective, r.bound, wall, r.sense)
        print(f"T = {t:g} s, load {open('/proc/loadavg').read().split()[:3]}")
        for m in a.methods:
            over = sum(rows[k, m][3] > t + max(0.05, 0.05 * t) for k, _ in insts)
            proofs = sum(rows[k, m][0] == "optimal" for k, _ in insts)
            worse = 0
            for k, _ in insts:
                objs = [rows[k, x][1] for x in a.methods if rows[k, x][1] is not None]
                best = (min if rows[k, m][4] == "min" else max)(objs) if objs else None
                worse += rows[k, m][1] != best
            print(f"  {m:8s} proofs {proofs:3d} / {len(insts)}, not the best objective "
                  f"{worse}, past T {over}")
        if "default" in a.methods and "handoff" in a.methods:  # the two, instance by instance
            sign = {k: 1 if rows[k, "default"][4] == "min" else -1 for k, _ in insts}
            d = [sign[k] * ((rows[k, "handoff"][1] or 1e300) - (rows[k, "default"][1] or 1e300))
                 for k, _ in insts]  # fmt: skip
            print(f"  handoff against default: objective worse {sum(x > 0 for x in d)}, better "
                  f"{sum(x < 0 for x in d)}, equal {sum(x == 0 for x in d)}")
            for k, _ in insts:
                if rows[k, "default"][:2] != rows[k, "handoff"][:2]:
                    print("    differ:", k, {x: (rows[k, x][0][:4], rows[k, x][1], rows[k, x][2],
                                              round(rows[k, x][3], 3)) for x in a.methods})
        for k, _ in insts:
            late = any(rows[k, x][3] > t + max(0.05, 0.05 * t) for x in a.methods)
            dno = any(rows[k, x][0] != "optimal" for x in a.methods if x in DEFAULTS)
            if late or dno and any(
                    rows[k, x][0] == "optimal" for x in a.methods if x not in DEFAULTS):
                print("   ", k, {x: (rows[k, x][0][:4], rows[k, x][1], rows[k, x][2],
                                     round(rows[k, x][3], 3)) for x in a.methods})
        sys.stdout.flush()


if __name__ == "__main__":
    main()
