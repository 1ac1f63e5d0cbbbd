"""GAP beside fontanf/generalizedassignmentsolver on the published instances (issue 40, item 3).

On OR-Library gap1-12, Chu-Beasley a-d and Yagiura c/d/e (the data directory of
``gap_published.py``: ``--data DIR`` or ``COALLOC_GAPDATA``), every instance is solved at
each ``--limits`` T by

- ours: ``solve_gap(method="heuristic", time_limit=T)`` (``ours``, one run per ``--seeds``
  seed; ``--ours portfolio``: the package's default method) and, with ``--exact``,
  ``solve_gap(method="exact")`` (``exact``, CP-SAT from the heuristic) and the bare CP-SAT
  and HiGHS models (``cpsat``, ``highs``: ``hint=False``), as ``gap_published.py`` runs
  them;
- fontanf's solver (its ``generalizedassignmentsolver`` executable, from ``--fontanf PATH`` or
  ``COALLOC_FONTANF``; skipped with a message when absent): each of ``--algorithms``
  (``-a ALG -t T -s SEED``), its assignment read back from its certificate file (``-c``:
  the agent of every item) and its value and bound from its JSON output (``-o``).

Every assignment, ours and fontanf's, is re-checked by our ``verify_gap`` (every item
assigned, every capacity kept, the objective recomputed and compared with the one
claimed). Printed per run: the objective, its gap to the best known value (``100 (z -
best) / best``), the reported bound, the time (the process's wall time for fontanf; the
call's for ours). The summary gives, per family, method and limit, the mean and the worst
gap (over instances of each one's median over the seeds), and, per limit, on how many
instances ours (median over the seeds) is at or below fontanf's best heuristic.

    python -m bench.loadshare.vs_fontanf --data /work/peers/gapdata \\
        --fontanf /work/peers/build/src/generalizedassignmentsolver --limits 1
    python -m bench.loadshare.vs_fontanf --sets yagiura2004 --limits 10 --seeds 0 1 2 3 4 \\
        --algorithms local-search
    python -m bench.loadshare.vs_fontanf --sets chu1997 --limits 1 --exact --no-fontanf

Writes bench/out/loadshare_vs_fontanf.csv (``--out``).
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

from bench.loadshare.gap_published import SETS, best_known
from bench.shared._progress import add_quiet, bar, say
from coalloc.cli._common import count, seconds
from coalloc.loadshare import read_gap, solve_gap, verify_gap

OUT = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "out")
#: fontanf's algorithms run by default: its local search and its column-generation
#: heuristic (CLP; the column-generation bound and a limited-discrepancy dive), its two
#: strongest here (ISSUE40.md). Its Lagrangian relaxations need a nonsmooth solver
#: (Knitro, dlib or ConicBundle) that its offline build here lacks: asked for, they
#: report no bound.
ALGORITHMS = ("local-search", "column-generation-heuristic-limited-discrepancy-search")
#: fontanf's algorithms that give an assignment (the others give a bound only).
HEURISTICS = ("local-search", "column-generation-heuristic-limited-discrepancy-search",
              "column-generation-heuristic-greedy", "mthg", "mthg-regret", "greedy",
              "greedy-regret")  # fmt: skip
#: Short names of fontanf's algorithms in the tables.
SHORT = {"column-generation-heuristic-limited-discrepancy-search": "cg-lds",
         "column-generation-heuristic-greedy": "cg-greedy",
         "lagrangian-relaxation-knapsack": "lr-knapsack",
         "lagrangian-relaxation-assignment": "lr-assignment"}  # fmt: skip
#: Seconds fontanf's process may run past its limit before it is stopped.
_GRACE = 30.0


def family(key: str) -> str:
    """``"set/type"``: the instance's set and its type letter (``gap`` for gap1-12)."""
    s, name = key.split("/")
    return f"{s}/{name[0] if name[0] in 'abcde' else 'gap'}"


def run_fontanf(binary: str, path: str, alg: str, limit: float, seed: int, tmp: str) -> dict:
    """One run of fontanf's solver: its value, bound, assignment (None: none) and wall time."""
    cert, out = os.path.join(tmp, "cert.txt"), os.path.join(tmp, "out.json")
    for f in (cert, out):
        if os.path.exists(f):
            os.remove(f)
    cmd = [binary, "-a", alg, "-i", path, "-f", "orlibrary", "-t", f"{limit:g}", "-s",
           str(seed), "-c", cert, "-o", out, "-e", "-v", "0"]  # fmt: skip
    t = time.perf_counter()
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=limit + _GRACE)
    wall = time.perf_counter() - t
    if p.returncode != 0:
        return {"error": (p.stderr or p.stdout).strip().splitlines()[-1:] or [f"rc {p.returncode}"],
                "time_s": wall}  # fmt: skip
    value = bound = None
    if os.path.exists(out):
        with open(out) as fh:
            o = json.load(fh).get("Output", {})
        value, bound = o.get("Value"), o.get("Bound")
    assign = None
    if os.path.exists(cert):
        with open(cert) as fh:
            toks = fh.read().split()
        if toks:
            assign = np.array([int(x) for x in toks], dtype=np.int64)
    return {"value": value, "bound": bound, "assign": assign, "time_s": wall}


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    add_quiet(ap)
    ap.add_argument("--data", default=os.environ.get("COALLOC_GAPDATA"),
                    help="the instance directory (default: $COALLOC_GAPDATA)")  # fmt: skip
    ap.add_argument("--fontanf", default=os.environ.get("COALLOC_FONTANF"),
                    help="fontanf's generalizedassignmentsolver executable (default: "
                    "$COALLOC_FONTANF)")  # fmt: skip
    ap.add_argument("--no-fontanf", action="store_true", help="ours only")
    ap.add_argument("--algorithms", nargs="+", default=list(ALGORITHMS),
                    help="fontanf's algorithms (its -a)")  # fmt: skip
    ap.add_argument("--sets", nargs="+", default=list(SETS), choices=SETS)
    ap.add_argument("--types", nargs="*", default=[],
                    help="instance types (gap a b c d e; default: all)")  # fmt: skip
    ap.add_argument("--only", nargs="*", default=[], help="instance names (e.g. d20200)")
    ap.add_argument("--limits", nargs="+", type=seconds(), default=[1.0])
    ap.add_argument("--seeds", nargs="+", type=count(0), default=[0])
    ap.add_argument("--exact", action="store_true",
                    help="also the exact method and the bare CP-SAT and HiGHS models")  # fmt: skip
    ap.add_argument("--no-ours", action="store_true", help="not our heuristic")
    ap.add_argument("--ours", default="heuristic", choices=("heuristic", "portfolio"),
                    help="the method run as 'ours' (portfolio: the package's default)")
    ap.add_argument("--out", default=os.path.join(OUT, "loadshare_vs_fontanf.csv"))
    ap.add_argument("--from-csv", nargs="+", default=None, metavar="CSV",
                    help="print the summary of earlier runs' CSV files (merged: seeds of "
                    "separate runs pooled), run nothing")  # fmt: skip
    args = ap.parse_args(argv)
    if args.from_csv:
        summarise(read_rows(args.from_csv), args.algorithms)
        return
    if not args.data or not os.path.isdir(args.data):
        raise SystemExit(
            "GAP data missing: give --data DIR or COALLOC_GAPDATA (a copy of "
            "fontanf/generalizedassignmentsolver's data/ folder, with data.csv)"
        )
    fontanf = None
    if not args.no_fontanf:
        if args.fontanf and (os.path.isfile(args.fontanf) or shutil.which(args.fontanf)):
            fontanf = args.fontanf
        else:
            print("fontanf's solver not found (give --fontanf PATH or COALLOC_FONTANF): "
                  "its runs are skipped", file=sys.stderr)  # fmt: skip
    best = best_known(args.data)
    names = sorted(k for k in best if k.split("/")[0] in args.sets
                   and (not args.only or k.split("/")[1] in args.only)
                   and (not args.types or family(k).split("/")[1] in args.types))  # fmt: skip
    if not names:
        raise SystemExit("no instance selected")
    todo = []
    for key in names:
        for t in args.limits:
            for seed in args.seeds:
                if not args.no_ours:
                    todo.append((key, "ours", t, seed))
                if fontanf:
                    todo += [(key, "fontanf:" + SHORT.get(a, a), t, seed)
                             for a in args.algorithms]  # fmt: skip
            if args.exact:  # deterministic enough at one seed: the first
                todo += [(key, m, t, args.seeds[0]) for m in ("exact", "cpsat", "highs")]
    kwargs = {"ours": {"method": args.ours}, "exact": {"method": "exact"},
              "cpsat": {"method": "exact", "solver": "cpsat", "hint": False},
              "highs": {"method": "exact", "solver": "highs", "hint": False}}  # fmt: skip
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for key, label, limit, seed in bar(todo, desc="vs fontanf", unit="run"):
            path = os.path.join(args.data, key)
            inst = read_gap(path)[0]
            if label.startswith("fontanf:"):
                alg = {SHORT.get(a, a): a for a in args.algorithms}[label.split(":", 1)[1]]
                r = run_fontanf(fontanf, path, alg, limit, seed, tmp)
                if "error" in r:
                    say(f"{key} {label}: failed: {r['error']}")
                    obj, bound, t_s, status = None, None, r["time_s"], "error"
                else:
                    obj, bound, t_s = None, r["bound"], r["time_s"]
                    a = r["assign"]
                    status = "no_solution"
                    if a is not None and a.shape == (inst.n,) and np.all(a >= 0):
                        rep = verify_gap(inst, a, claimed=r["value"])
                        if not rep.ok:
                            sys.exit(f"verification failed: {key} {label}: {rep}")
                        obj, status = rep.objective, "feasible"
                    if bound is not None and not np.isfinite(bound):
                        bound = None
            else:
                res = solve_gap(inst, time_limit=limit, seed=seed, **kwargs[label])
                obj, bound, t_s, status = None, res.bound, res.timings["total"], res.status
                if res.assignment is not None:
                    rep = verify_gap(inst, res.assignment, claimed=res.objective)
                    if not rep.ok:
                        sys.exit(f"verification failed: {key} {label}: {rep}")
                    obj = rep.objective
            b = best[key]
            gap = None if obj is None else 100 * (obj - b) / b
            rows.append({"instance": key, "family": family(key), "m": inst.m, "n": inst.n,
                         "method": label, "limit_s": limit, "seed": seed, "best_known": b,
                         "objective": obj, "gap_pct": gap, "bound": bound, "status": status,
                         "time_s": t_s})  # fmt: skip
            say(f"{key:24s} {label:22s} {limit:5.1f}s {seed:2d}  "
                f"{'-' if obj is None else f'{obj:9.0f}'} best {b:9.0f}  gap "
                f"{'-' if gap is None else f'{gap:6.3f}'}%  bound "
                f"{'-' if bound is None else f'{bound:.1f}'}  {t_s:6.2f}s")  # fmt: skip
    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    with open(args.out, "w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    summarise(rows, args.algorithms)


def read_rows(paths) -> list:
    """The rows of earlier runs' CSV files, typed as :func:`main` writes them."""
    rows = []
    for path in paths:
        with open(path, newline="") as fh:
            for r in csv.DictReader(fh):
                for k in ("limit_s", "best_known", "time_s"):
                    r[k] = float(r[k])
                for k in ("objective", "gap_pct", "bound"):
                    r[k] = float(r[k]) if r[k] not in ("", "None") else None
                rows.append(r)
    return rows


def _median_gaps(rows, label, limit):
    """``{instance: median gap over the seeds}`` of one method at one limit (an instance
    with a run without an assignment: inf)."""
    per = {}
    for r in rows:
        if r["method"] == label and r["limit_s"] == limit:
            g = r["gap_pct"]
            per.setdefault(r["instance"], []).append(float("inf") if g is None else g)
    return {k: statistics.median(v) for k, v in per.items()}


def summarise(rows, algorithms) -> None:
    """The tables: per family, method and limit; ours against fontanf's best heuristic."""
    print("\nsummary: gap to the best known value (%; per instance the median over the seeds)")
    print(f"  {'family':22s} {'method':22s} {'T':>5s} {'inst':>4s} {'mean':>7s} {'worst':>7s} "
          f"{'no sol':>6s} {'med time':>8s} {'bound gap':>9s}")  # fmt: skip
    methods = sorted({(r["method"], r["limit_s"]) for r in rows})
    for fam in sorted({r["family"] for r in rows}):
        for label, limit in methods:
            sel = [r for r in rows if r["family"] == fam and r["method"] == label
                   and r["limit_s"] == limit]  # fmt: skip
            if not sel:
                continue
            med = {k: v for k, v in _median_gaps(sel, label, limit).items()}
            fin = [v for v in med.values() if np.isfinite(v)]
            bgaps = [100 * (r["best_known"] - r["bound"]) / r["best_known"] for r in sel
                     if r["bound"] is not None]  # fmt: skip
            print(f"  {fam:22s} {label:22s} {limit:5.1f} {len(med):4d} "
                  f"{statistics.mean(fin) if fin else float('nan'):7.3f} "
                  f"{max(fin) if fin else float('nan'):7.3f} {len(med) - len(fin):6d} "
                  f"{statistics.median(r['time_s'] for r in sel):8.2f} "
                  f"{statistics.mean(bgaps) if bgaps else float('nan'):9.3f}")  # fmt: skip
    heur = ["fontanf:" + SHORT.get(a, a) for a in algorithms if a in HEURISTICS]
    for limit in sorted({r["limit_s"] for r in rows}):
        ours = _median_gaps(rows, "ours", limit)
        theirs = [_median_gaps(rows, h, limit) for h in heur]
        common = [k for k in ours if all(k in t for t in theirs)] if theirs else []
        if not common:
            continue
        worse = [k for k in common if ours[k] > min(t[k] for t in theirs) + 1e-9]
        print(f"\n  {limit:g} s: ours at or below fontanf's best heuristic on "
              f"{len(common) - len(worse)} of {len(common)} instances"
              + (f"; above on {', '.join(worse)}" if worse else ""))  # fmt: skip


if __name__ == "__main__":
    main()
