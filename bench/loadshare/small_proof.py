"""The GAP heuristic's exact programme on small instances (stop 62), before and after.

``coalloc.loadshare.gap.search._PROOF_PAIRS`` (400 agent-item pairs) lets the search run
the exact dynamic programme over every agent's load (:mod:`coalloc.loadshare.gap.search_proof`)
once its best has stood for a round. This bench runs ``method="heuristic"`` on small
instances of several generators, with the programme off (``before``: ``_PROOF_PAIRS = 0``)
and on (``now``) (``--before NAME=VALUE ...``: the ``before`` arm sets those knobs of
:mod:`coalloc.loadshare.gap.search` instead, e.g. ``_PROOF_KNAP=None``), alternated
(``before`` first on even instances), untimed and under
``--limit`` seconds, and reports per arm the statuses, the median and largest wall seconds,
and whether any answer got worse. Every assignment is checked by ``verify_gap``; with
``--referee`` every ``optimal`` and ``infeasible`` is checked against the untimed exact
method (CP-SAT). ``--method portfolio`` measures the default instead (untimed, it runs
CP-SAT after the heuristic unless the heuristic proved its answer).

Sets: ``chu`` (``generate_gap`` types a-d, the Chu-Beasley generator), ``uniform`` (costs,
weights and capacities drawn uniformly), and with ``--data DIR`` (or ``COALLOC_GAPDATA``)
``orlib`` (OR-Library gap1-12 of at most 400 pairs, the minimisation form, from fontanf's
data)::

    PYTHONPATH=src:. python -m bench.loadshare.small_proof --seeds 3 --limit 2 --referee --quiet
"""

from __future__ import annotations

import argparse
import ast
import os
import statistics
import time
from collections import Counter
from typing import List, Optional, Tuple

import numpy as np

from bench.shared._progress import add_quiet, bar, say
from coalloc.loadshare import GapInstance, generate_gap, read_gap, solve_gap, verify_gap
from coalloc.loadshare.gap import search

SIZES = [(2, 5), (3, 10), (4, 12), (5, 15), (5, 20), (8, 16), (5, 30), (10, 20), (10, 30),
         (5, 60), (8, 40), (10, 40)]  # fmt: skip


def _uniform(m: int, n: int, seed: int) -> GapInstance:
    rng = np.random.default_rng(10_000 + seed)
    w = rng.integers(5, 26, size=(m, n))
    cap = np.maximum(w.max(axis=0).max(), (0.7 * w.sum() / m / m) * np.ones(m)).astype(int)
    return GapInstance(rng.integers(10, 51, size=(m, n)), w, cap)


def instances(sets: List[str], seeds: int, data: Optional[str]) -> List[Tuple[str, GapInstance]]:
    out = []
    for s in range(seeds):
        for m, n in SIZES:
            if "chu" in sets:
                out += [(f"chu-{k}-{m}x{n}-s{s}", generate_gap(k, m, n, seed=s)) for k in "abcd"]
            if "uniform" in sets:
                out.append((f"uniform-{m}x{n}-s{s}", _uniform(m, n, s)))
    if "orlib" in sets and data:
        folder = os.path.join(data, "cattrysse1994")
        for name in sorted(os.listdir(folder)):
            inst = read_gap(os.path.join(folder, name))[0]
            if inst.m * inst.n <= search._PROOF_PAIRS:
                out.append((f"orlib-{name}", inst))
    return out


def _call(inst: GapInstance, knobs: List[tuple], limit: Optional[float],
          method: str = "heuristic") -> tuple:  # fmt: skip
    """One call, with ``knobs`` (``(name, value)`` of :mod:`.search`) set, restored after."""
    old = [(name, getattr(search, name)) for name, _ in knobs]
    params = {} if limit is None else {"time_limit": limit}
    try:
        for name, value in knobs:
            setattr(search, name, value)
        t = time.perf_counter()
        r = solve_gap(inst, method=method, seed=0, **params)
        wall = time.perf_counter() - t
    finally:
        for name, value in old:
            setattr(search, name, value)
    if r.assignment is not None and not verify_gap(inst, r.assignment, claimed=r.objective).ok:
        raise SystemExit("an answer does not verify")
    return r.status, r.objective, wall


def _by_size(names: List[str], rows: dict, limit: float) -> None:
    """The calls ending ``optimal`` or ``infeasible`` per set, type and size (orlib as one),
    per arm and call."""
    groups: dict = {}
    for i, name in enumerate(names):
        g = "orlib" if name.startswith("orlib") else name.rsplit("-s", 1)[0]
        groups.setdefault(g, []).append(i)
    cols = [(arm, lim) for lim in (None, limit) for arm in ("before", "now")]
    print("| instances | n | " + " | ".join(
        f"{arm} {'untimed' if lim is None else f'{lim:g} s'}" for arm, lim in cols) + " |")
    print("|---|---:|" + "---:|" * len(cols))
    for g, idx in groups.items():
        got = [sum(rows[c][i][0] in ("optimal", "infeasible") for i in idx) for c in cols]
        print(f"| {g} | {len(idx)} | " + " | ".join(map(str, got)) + " |")


def main(argv: Optional[list] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sets", nargs="+", default=["chu", "uniform", "orlib"])
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--limit", type=float, default=2.0)
    ap.add_argument("--data", default=os.environ.get("COALLOC_GAPDATA"))
    ap.add_argument("--referee", action="store_true")
    ap.add_argument("--method", default="heuristic", choices=("heuristic", "portfolio"),
                    help="the method measured (portfolio: the default)")
    ap.add_argument("--before", nargs="+", default=["_PROOF_PAIRS=0"],
                    help="NAME=VALUE ...: the knobs of gap.search the before arm sets")
    ap.add_argument("--by-size", action="store_true",
                    help="also the calls ending optimal or infeasible by set, type and size")
    add_quiet(ap)
    args = ap.parse_args(argv)
    before = []
    for text in args.before:
        name, _, value = text.partition("=")
        if not hasattr(search, name.strip()):
            ap.error(f"--before: gap.search has no {name.strip()}")
        before.append((name.strip(), ast.literal_eval(value.strip())))
    on = search._PROOF_PAIRS
    insts = instances(args.sets, args.seeds, args.data)
    print(f"load average {os.getloadavg()}; {len(insts)} instances; _PROOF_PAIRS {on}; "
          f"method {args.method}; before: {before}")  # fmt: skip
    rows = {(arm, lim): [] for arm in ("before", "now") for lim in (None, args.limit)}
    worse, wrong = [], []
    for i, (name, inst) in enumerate(bar(insts, desc="small proof")):
        for lim in (None, args.limit):
            arms = ("before", "now") if i % 2 == 0 else ("now", "before")
            got = {arm: _call(inst, before if arm == "before" else [], lim, args.method)
                   for arm in arms}  # fmt: skip
            for arm in arms:
                rows[(arm, lim)].append(got[arm])
            b, n = got["before"][1], got["now"][1]
            if b is not None and (n is None or n > b + 1e-9):
                worse.append((name, lim, b, n))
            if args.referee and lim is None and got["now"][0] in ("optimal", "infeasible"):
                ref = solve_gap(inst, method="exact", seed=0)
                ok = (ref.status == got["now"][0] == "infeasible") or (
                    ref.status == "optimal" and got["now"][0] == "optimal"
                    and abs(ref.objective - n) <= 1e-9 * max(1.0, abs(n)))  # fmt: skip
                if not ok:
                    wrong.append((name, got["now"], ref.status, ref.objective))
    print(f"load average {os.getloadavg()}")
    print("| call | arm | optimal | feasible | time_limit | infeasible | no_solution "
          "| median s | max s |")  # fmt: skip
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|")
    for (arm, lim), got in rows.items():
        c = Counter(g[0] for g in got)
        walls = [g[2] for g in got]
        say(f"| {'untimed' if lim is None else f'{lim:g} s'} | {arm} | {c['optimal']} | "
            f"{c['feasible']} | {c['time_limit']} | {c['infeasible']} | {c['no_solution']} | "
            f"{statistics.median(walls):.4f} | {max(walls):.3f} |")  # fmt: skip
    if args.by_size:
        _by_size([name for name, _ in insts], rows, args.limit)
    print(f"answers worse with the programme: {len(worse)} {worse[:5]}")
    if args.referee:
        print(f"proofs the exact method contradicts: {len(wrong)} {wrong[:5]}")
    return 1 if wrong else 0


if __name__ == "__main__":
    raise SystemExit(main())
