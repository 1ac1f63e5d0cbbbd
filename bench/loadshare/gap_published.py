"""GAP beside published best known values: OR-Library gap1-12, Chu-Beasley a-d, Yagiura c-e.

Every instance file of the data directory is solved (minimisation, every item assigned) by
``solve_gap(method="heuristic", time_limit=T)`` for each ``--heuristic-limits`` T, and, on
the instances ``--exact`` selects, by ``solve_gap(method="exact")`` (CP-SAT started from the
heuristic) and by the bare CP-SAT and HiGHS models (``hint=False``), each with
``--exact-limit``. Every assignment is re-checked with ``verify_gap``. Printed per run: the
objective, its gap to the best known value (``100 (z - best) / best``), the bound the
method reports (the heuristic's LP or Lagrangian bound) and the time.

The instances are not in the repository: the data directory is a copy of
``fontanf/generalizedassignmentsolver``'s ``data/`` folder (MIT licence; the files come from
OR-Library, Chu & Beasley 1997 and Yagiura et al. 2004), with its ``data.csv`` of best known
values (the literature's, the minimisation form of gap1-12 included). Give it with
``--data DIR`` or the environment variable ``COALLOC_GAPDATA``.

    python -m bench.loadshare.gap_published --data /work/peers/gapdata \\
        --sets chu1997 --heuristic-limits 1                       # a-d at 1 s (24 runs)
    python -m bench.loadshare.gap_published --sets yagiura2004 --only c801600 d801600 \\
        --heuristic-limits 10
    python -m bench.loadshare.gap_published --sets chu1997 --only d20200 \\
        --heuristic-limits --exact d20200 --exact-limit 60         # exact, CP-SAT, HiGHS
    python -m bench.loadshare.gap_published --sets yagiura2004 --only e20100 \\
        --heuristic-limits 10 --seeds 0 1 2 3 4                    # the spread over seeds
    python -m bench.loadshare.gap_published --sets yagiura2004 --only c10400 c40400 \
        c201600 c801600 d10400 d40400 d201600 d801600 e10400 e40400 e201600 e801600 \
        --heuristic-limits 10 --exact c10400 c40400 c201600 c801600 d10400 d40400 \
        d201600 d801600 e10400 e40400 e201600 e801600 --exact-limit 10 --no-bare
                                           # issue 36: exact against heuristic at equal T

Writes bench/out/loadshare_gap_published.csv.
"""

from __future__ import annotations

import argparse
import csv
import os
import statistics
import sys

from bench.shared._progress import add_quiet, bar, say
from coalloc.loadshare import read_gap, solve_gap, verify_gap

OUT = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "out")
SETS = ("cattrysse1994", "chu1997", "yagiura2004")


def best_known(data: str) -> dict:
    """``{"set/name": best known value}`` from the data directory's ``data.csv``."""
    path = os.path.join(data, "data.csv")
    if not os.path.exists(path):
        raise SystemExit(f"{path}: missing (the data directory needs its data.csv)")
    with open(path, newline="") as fh:
        return {r["Path"]: float(r["Best known solution value"]) for r in csv.DictReader(fh)}


def runs(args, names):
    """The (instance, method, limit, kwargs) runs asked for."""
    out = []
    for key in names:
        for t in args.heuristic_limits:
            out.append((key, "heuristic", t, {"method": "heuristic"}))
        if any(key.endswith("/" + e) for e in args.exact):
            lim = args.exact_limit
            out.append((key, "exact", lim, {"method": "exact"}))
            if args.no_bare:
                continue
            out.append((key, "cpsat", lim, {"method": "exact", "solver": "cpsat",
                                            "hint": False}))  # fmt: skip
            out.append((key, "highs", lim, {"method": "exact", "solver": "highs",
                                            "hint": False}))  # fmt: skip
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    add_quiet(ap)
    ap.add_argument("--data", default=os.environ.get("COALLOC_GAPDATA"),
                    help="the instance directory (default: $COALLOC_GAPDATA)")  # fmt: skip
    ap.add_argument("--sets", nargs="+", default=list(SETS), choices=SETS)
    ap.add_argument("--only", nargs="*", default=[], help="instance names (e.g. d20200)")
    ap.add_argument("--heuristic-limits", nargs="*", type=float, default=[1.0, 10.0])
    ap.add_argument("--exact", nargs="*", default=[], help="instances for exact/CP-SAT/HiGHS")
    ap.add_argument("--exact-limit", type=float, default=60.0)
    ap.add_argument("--no-bare", action="store_true",
                    help="the exact method only, not the bare CP-SAT and HiGHS models")  # fmt: skip
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--seeds", nargs="+", type=int, default=None,
                    help="several seeds (each run once per seed; the summary adds, per method "
                    "and limit, the largest of the instances' median gaps)")  # fmt: skip
    ap.add_argument("--out", default=os.path.join(OUT, "loadshare_gap_published.csv"))
    args = ap.parse_args(argv)
    if not args.data or not os.path.isdir(args.data):
        raise SystemExit(
            "GAP data missing: give --data DIR or COALLOC_GAPDATA (a copy of "
            "fontanf/generalizedassignmentsolver's data/ folder, with data.csv)"
        )
    best = best_known(args.data)
    names = sorted(k for k in best if k.split("/")[0] in args.sets
                   and (not args.only or k.split("/")[1] in args.only))  # fmt: skip
    if not names:
        raise SystemExit("no instance selected")
    rows = []
    seeds = args.seeds if args.seeds else [args.seed]
    todo = [(run, seed) for run in runs(args, names) for seed in seeds]
    for (key, label, limit, kw), seed in bar(todo, desc="gap", unit="run"):
        inst = read_gap(os.path.join(args.data, key))[0]
        r = solve_gap(inst, time_limit=limit, seed=seed, **kw)
        obj = None
        if r.assignment is not None:
            rep = verify_gap(inst, r.assignment, claimed=r.objective)
            if not rep.ok:
                sys.exit(f"verification failed: {key} {label}: {rep}")
            obj = rep.objective
        b = best[key]
        rows.append({"instance": key, "m": inst.m, "n": inst.n, "method": label,
                     "limit_s": limit, "seed": seed, "best_known": b, "objective": obj,
                     "gap_pct": None if obj is None else 100 * (obj - b) / b,
                     "bound": r.bound, "status": r.status, "time_s": r.timings["total"],
                     "iterations": r.iterations.get("tabu_iterations",
                                                    r.iterations.get("nodes"))})  # fmt: skip
        g = rows[-1]["gap_pct"]
        say(f"{key:24s} {label:9s} {limit:5.1f}s {seed:3d}  {obj if obj is not None else '-':>9} "
            f"best {b:9.0f}  gap {'-' if g is None else f'{g:6.3f}'}%  bound "
            f"{r.bound if r.bound is not None else '-'}  {r.status:10s} "
            f"{r.timings['total']:6.2f}s")  # fmt: skip
    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    with open(args.out, "w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    print("\nsummary (gap to the best known value, %)")
    groups = {}
    for r in rows:
        name = r["instance"].split("/")[1]
        fam = (r["instance"].split("/")[0], name[0] if name[0] in "abcde" else "gap")
        groups.setdefault((fam, r["method"], r["limit_s"]), []).append(r)
    for (fam, label, limit), sel in sorted(groups.items()):
        gaps = [r["gap_pct"] for r in sel if r["gap_pct"] is not None]
        empty = sum(r["gap_pct"] is None for r in sel)
        if gaps:
            print(f"  {fam[0]:14s} {fam[1]:3s} {label:9s} {limit:5.1f}s  {len(sel):2d} runs  "
                  f"mean {statistics.mean(gaps):.3f}  max {max(gaps):.3f}  "
                  f"median time {statistics.median(r['time_s'] for r in sel):.2f}s"
                  + (f"  ({empty} without an assignment)" if empty else ""))  # fmt: skip
        else:
            print(f"  {fam[0]:14s} {fam[1]:3s} {label:9s} {limit:5.1f}s  {len(sel)} runs, "
                  "none with an assignment")  # fmt: skip
    for label, limit in sorted({(r["method"], r["limit_s"]) for r in rows}):
        sel = [r["gap_pct"] for r in rows if (r["method"], r["limit_s"]) == (label, limit)
               and r["gap_pct"] is not None]  # fmt: skip
        if sel:
            print(f"  all {label} {limit:.1f}s: {len(sel)} runs, mean {statistics.mean(sel):.3f}"
                  f", max {max(sel):.3f}")  # fmt: skip
        if len(seeds) > 1:  # each instance's median over the seeds, the largest of them
            per = {}
            for r in rows:
                if (r["method"], r["limit_s"]) == (label, limit) and r["gap_pct"] is not None:
                    per.setdefault(r["instance"], []).append(r["gap_pct"])
            if per:
                worst = max(per, key=lambda k: statistics.median(per[k]))
                print(
                    f"  all {label} {limit:.1f}s: largest median over {len(seeds)} seeds "
                    f"{statistics.median(per[worst]):.3f} ({worst})"
                )


if __name__ == "__main__":
    main()
