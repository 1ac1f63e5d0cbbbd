"""The experiments of Cankar et al. (2013), section 4, on a generated Table 1 pool.

Parts (``--part``, default all):

* ``table1``: statistics of the generated 606-node pool beside the paper's Table 1.
* ``table2``: 540 cases (90 per N in {2, 5, 10, 15, 30, 60}), simple against collective
  requests (section 4.2), solved by the paper's algorithm (``cankar``, single pass
  ``M_max = M_init``, ``--repeats`` seeds per case; a case counts as solved when some repeat
  solves it, its best start and best factor are kept) and by the default ``scan``; the start
  of every solvable case is checked against the exact earliest start (``scan`` proves it;
  ``exact`` confirms it on ``--exact-check`` cases per N).
* ``table3``: N = 5 against the optimum: on the 606-node pool the earliest start is proven
  (``exact``) but the best factor over ~500 eligible nodes is not enumerable, so the
  reference is the best factor found by any method; on a ``--small-nodes`` pool the optimum
  is proven by enumeration.
* ``timing``: Table 4 / Fig. 2: search time against N, compiled against the NumPy twins and
  against the exact earliest-start solve, ratios from the same run (``--timing-cases`` per N).

Writes CSV and PNG to ``bench/out/``; prints markdown tables.

Run:  PYTHONPATH=src nice -n 10 python -m bench.collective.paper [--repeats 20]
"""

from __future__ import annotations

import argparse
import csv
import os
import platform
import time

import numpy as np

from bench.shared._plot import pyplot
from bench.shared._progress import add_quiet, bar
from coalloc.collective import coallocate, verify
from coalloc.collective.generators import COUNTS, TABLE1, section42_requests, table1_pool

OUT = os.path.join(os.path.dirname(__file__), "..", "out")


def _csv(name, header, rows):
    os.makedirs(OUT, exist_ok=True)
    path = os.path.join(OUT, name)
    with open(path, "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(header)
        w.writerows(rows)
    return path


def table1(pool):
    rows = []
    print("\n### Table 1: pool statistics (generated) against the paper (PlanetLab, 606 nodes)\n")
    print("| property | mean | paper | deviation | paper | min | paper | max | paper |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    for i, name in enumerate(pool.names):
        c = pool.capacity[:, i]
        pm, ps, pmin, pmax = TABLE1[name]
        rows.append([name, c.mean(), pm, c.std(), ps, c.min(), pmin, c.max(), pmax])
        print(
            f"| {name} | {c.mean():.2f} | {pm:.2f} | {c.std():.2f} | {ps:.2f} | {c.min():.2f} "
            f"| {pmin:.2f} | {c.max():.2f} | {pmax:.2f} |"
        )
    load = pool.reserved.sum(axis=0)[:, :-1] / pool.capacity.sum(axis=0)[:, None]
    print(
        "\nmean reserved fraction per property over the day: "
        + ", ".join(f"{n} {load[i].mean():.2f}" for i, n in enumerate(pool.names))
    )
    _csv(
        "collective_table1.csv",
        [
            "property",
            "mean",
            "paper_mean",
            "std",
            "paper_std",
            "min",
            "paper_min",
            "max",
            "paper_max",
        ],
        rows,
    )
    plt = pyplot()
    if plt:
        fig, ax = plt.subplots(1, 4, figsize=(14, 3))
        for i, name in enumerate(pool.names):
            ax[i].hist(pool.capacity[:, i], bins=20)
            ax[i].set_title(name)
        t = pool.times[:-1] / 3600
        for i, name in enumerate(pool.names):
            ax[3].plot(t, load[i], label=name)
        ax[3].set_xlabel("hour")
        ax[3].set_title("reserved fraction")
        ax[3].legend()
        fig.tight_layout()
        fig.savefig(os.path.join(OUT, "collective_table1.png"), dpi=90)


def _cankar_best(pool, req, repeats, m_max):
    best = None
    solved = 0
    for r in range(repeats):
        res = coallocate(pool, req, "cankar", seed=r, m_max=m_max)
        if res.start is None:
            continue
        assert verify(req, pool, res).ok, "inadmissible cankar output"
        solved += 1
        if best is None or (res.start, -res.utilisation) < (best.start, -best.utilisation):
            best = res
    return best, solved / repeats


def table2(pool, repeats, exact_check, seed):
    rows = []
    per_n = {}
    inadmissible = 0
    checks = {"exact_checked": 0, "exact_agree": 0}
    for n in COUNTS:
        cases = section42_requests(pool, n, 90, seed=seed)
        for q, (simple, coll) in enumerate(bar(cases, desc=f"table2 N={n}", unit="case")):
            rec = {"N": n, "case": q}
            for kind, req in (("simple", simple), ("collective", coll)):
                best, frac = _cankar_best(pool, req, repeats, 3)
                sc = coallocate(pool, req, "scan")
                if sc.start is not None and not verify(req, pool, sc).ok:
                    inadmissible += 1
                if q < exact_check:
                    ex = coallocate(pool, req, "exact")
                    checks["exact_checked"] += 1
                    checks["exact_agree"] += ex.start == sc.start
                rec[f"{kind}_cankar_start"] = None if best is None else best.start
                rec[f"{kind}_cankar_u"] = None if best is None else best.utilisation
                rec[f"{kind}_cankar_frac"] = frac
                rec[f"{kind}_scan_start"] = sc.start
                rec[f"{kind}_scan_u"] = sc.utilisation
                rec[f"{kind}_scan_proven"] = sc.proven
                rec[f"{kind}_reason"] = (
                    None
                    if sc.rejection is None
                    else sc.rejection.get("binding", {}).get("check", sc.rejection.get("reason"))
                )
            rows.append(rec)
            per_n.setdefault(n, []).append(rec)
    keys = list(rows[0])
    _csv("collective_table2.csv", keys, [[r[k] for k in keys] for r in rows])

    def stats(method):
        out = {}
        for n, recs in per_n.items():
            s = [r for r in recs if r[f"simple_{method}_start"] is not None]
            c = [r for r in recs if r[f"collective_{method}_start"] is not None]
            both = [r for r in recs if r[f"simple_{method}_start"] is not None
                    and r[f"collective_{method}_start"] is not None]  # fmt: skip
            cs, ss = f"collective_{method}_start", f"simple_{method}_start"
            cu, su = f"collective_{method}_u", f"simple_{method}_u"
            earlier = [r for r in both if r[cs] < r[ss]]
            equal = [r for r in both if r[cs] == r[ss]]
            bs = [r for r in equal if r[su] > r[cu] * (1 + 1e-9)]
            bc = [r for r in equal if r[cu] > r[su] * (1 + 1e-9)]
            out[n] = [len(s), len(c), len(earlier), len(equal), len(bs), len(bc)]
        return out

    paper = {
        "Simple approach": [28, 27, 24, 19, 27, 21],
        "Collective approach": [49, 59, 56, 55, 54, 49],
        "Earlier start with collective approach": [4, 7, 1, 7, 5, 2],
        "Equal start time": [24, 20, 23, 12, 22, 19],
        "Better utilisation (simple approach)": [0, 2, 4, 5, 6, 4],
        "Better utilisation (collective approach)": [7, 13, 15, 7, 16, 15],
    }
    labels = list(paper)
    for method in ("cankar", "scan"):
        st = stats(method)
        print(f"\n### Table 2 ({method}): 540 cases, 90 per N; paper's value in brackets\n")
        print("| solutions found with | " + " | ".join(str(n) for n in COUNTS) + " | sum |")
        print("|---|" + "---:|" * (len(COUNTS) + 1))
        for k, lab in enumerate(labels):
            vals = [st[n][k] for n in COUNTS]
            print(
                f"| {lab} | "
                + " | ".join(f"{v} ({p})" for v, p in zip(vals, paper[lab]))
                + f" | {sum(vals)} ({sum(paper[lab])}) |"
            )
    # the judging view: solvable cases (scan proves the earliest start)
    for kind in ("simple", "collective"):
        solvable = [r for r in rows if r[f"{kind}_scan_start"] is not None]
        ck = [r for r in solvable if r[f"{kind}_cankar_start"] is not None]
        ck_early = [r for r in ck if r[f"{kind}_cankar_start"] == r[f"{kind}_scan_start"]]
        proven = sum(bool(r[f"{kind}_scan_proven"]) for r in solvable)
        print(
            f"\n{kind}: solvable (scan, earliest start proven in {proven}) {len(solvable)}/540;"
            f" cankar (best of {repeats} seeds) solves {len(ck)}, {len(ck_early)} of them at "
            f"the earliest start"
        )
    print(
        f"\nexact earliest start agrees with scan on {checks['exact_agree']}/"
        f"{checks['exact_checked']} checked requests; inadmissible scan outputs: {inadmissible}"
    )
    plt = pyplot()
    if plt:
        fig, ax = plt.subplots(figsize=(6, 3.5))
        for method, mk in (("cankar", "o"), ("scan", "s")):
            st = stats(method)
            ax.plot(COUNTS, [st[n][0] for n in COUNTS], mk + "--", label=f"{method} simple")
            ax.plot(COUNTS, [st[n][1] for n in COUNTS], mk + "-", label=f"{method} collective")
        ax.plot(COUNTS, paper["Simple approach"], "k:", label="paper simple")
        ax.plot(COUNTS, paper["Collective approach"], "k-.", label="paper collective")
        ax.set_xlabel("N")
        ax.set_ylabel("solutions found (of 90)")
        ax.legend(fontsize=7)
        fig.tight_layout()
        fig.savefig(os.path.join(OUT, "collective_table2.png"), dpi=90)


def table3(pool, repeats, seed, label, proven):
    cases = section42_requests(pool, 5, 90, seed=seed)
    rows = []
    for q, (simple, coll) in enumerate(bar(cases, desc=f"table3 {label}", unit="case")):
        for kind, req in (("simple", simple), ("collective", coll)):
            ex = coallocate(pool, req, "exact", enumerate_limit=5_000_000 if proven else 1)
            if ex.start is None:
                rows.append([q, kind, None, None, None, None, None, None])
                continue
            ck, _ = _cankar_best(pool, req, repeats, 3)
            sc = coallocate(pool, req, "scan")
            ref_u = ex.utilisation
            if not proven:  # best known at the exact earliest start
                ref_u = max(
                    [ex.utilisation]
                    + [r.utilisation for r in (ck, sc) if r is not None and r.start == ex.start]
                )
            rows.append(
                [
                    q,
                    kind,
                    ex.start,
                    ref_u,
                    None if ck is None else ck.start,
                    None if ck is None else ck.utilisation,
                    sc.start,
                    sc.utilisation,
                ]
            )
    _csv(
        f"collective_table3_{label}.csv",
        ["case", "kind", "opt_start", "opt_u", "cankar_start", "cankar_u", "scan_start", "scan_u"],
        rows,
    )
    print(
        f"\n### Table 3 ({label}; reference factor "
        f"{'proven optimal' if proven else 'best known at the proven earliest start'})\n"
    )
    print(
        "| | cankar collective | cankar simple | scan collective | scan simple | paper coll. "
        "| paper simple |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|")
    res = {}
    for m, si, ui in (("cankar", 4, 5), ("scan", 6, 7)):
        for kind in ("collective", "simple"):
            rs = [r for r in rows if r[1] == kind and r[2] is not None]
            found = [r for r in rs if r[si] is not None]
            late = [r for r in found if r[si] > r[2] + 1e-9]
            same = [r for r in found if r[si] == r[2]]
            ratio = [r[ui] / r[3] for r in same]
            res[(m, kind)] = (len(rs), len(found), len(late),
                              np.mean([r[si] - r[2] for r in late]) / 3600 if late else 0.0,
                              np.mean(ratio) if ratio else float("nan"),
                              sum(x > 0.99 for x in ratio))  # fmt: skip
    cols = [("cankar", "collective"), ("cankar", "simple"), ("scan", "collective"),
            ("scan", "simple")]  # fmt: skip
    lines = [("solvable (exact)", lambda v: v[0], ("59", "-")),
             ("solution found", lambda v: v[1], ("59", "27")),
             ("later start / mean delay [h]", lambda v: f"{v[2]}/{v[3]:.1f}", ("3/1.5", "7/2.5")),
             ("factor at same start (of optimum)", lambda v: f"{v[4]:.3f}", ("0.92", "0.84")),
             ("factor above 99% of optimum", lambda v: v[5], ("22", "4"))]  # fmt: skip
    for name, f, paper in lines:
        print(
            f"| {name} | "
            + " | ".join(str(f(res[c])) for c in cols)
            + f" | {paper[0]} | {paper[1]} |"
        )


# the compiled scan's own timers (core.Clock laps): Python preparation and the candidate
# starts, the compiled screening loop (and any integer program of a start that then fails),
# the set search at the first start that passes
_PARTS = ("prepare", "window_max", "search")


def timing(pool, n_cases, seed, max_rounds=300, counts=COUNTS, clock=time.perf_counter):
    rows = []
    methods = (
        ("scan", {}),
        ("scan", {"backend": "numpy"}),
        ("cankar", {"m_max": 3}),
        ("cankar", {"m_max": 3, "backend": "numpy"}),
        ("exact", {"enumerate_limit": 1, "time_limit": 20.0}),
        ("exact", {"enumerate_limit": 1, "prune": False, "time_limit": 20.0}),
    )
    warm = section42_requests(pool, 2, 1, seed=seed + 2)[0][1]
    for method, kw in methods:  # untimed: imports and first-call set-up of every method
        coallocate(pool, warm, method, seed=0, **kw)
    for n in counts:
        cases = section42_requests(pool, n, n_cases, seed=seed + 1)
        for q, (simple, coll) in enumerate(bar(cases, desc=f"timing N={n}", unit="case")):
            for kind, req in (("simple", simple), ("collective", coll)):
                rec = [n, q, kind]
                rounds = None
                parts = None
                for method, kw in methods:
                    if kw.get("backend") == "numpy" and method == "scan" and rounds > max_rounds:
                        rec += [float("nan"), False]  # the pure-Python swaps would take hours
                        continue
                    t = clock()
                    r = coallocate(pool, req, method, seed=0, **kw)
                    rec += [clock() - t, r.start is not None]
                    if rounds is None:
                        rounds = r.iterations.get("swap_rounds", 0)
                        parts = [r.timings.get(k, 0.0) for k in _PARTS]  # the compiled scan
                rows.append(rec + parts)
    names = ["scan", "scan_numpy", "cankar", "cankar_numpy", "exact", "exact_plain"]
    header = ["N", "case", "kind"] + [x for nm in names for x in (f"{nm}_s", f"{nm}_solved")]
    header += [f"scan_{k}_s" for k in _PARTS]
    _csv("collective_timing.csv", header, rows)
    arr = {nm: np.array([r[3 + 2 * k] for r in rows]) for k, nm in enumerate(names)}
    ns = np.array([r[0] for r in rows])
    skipped = int(np.isnan(arr["scan_numpy"]).sum())
    solved = np.array([r[4] for r in rows])
    print(
        f"\n### Table 4 / Fig. 2: search time, {n_cases} cases x 2 kinds per N (median ms; "
        "ratios = median of per-request ratios)\n"
    )
    print(
        "| N | scan | scan twin | twin/scan | twin/scan (solved) | exact | exact/scan | "
        "exact/scan (solved) | plain exact | plain/scan | cankar | cankar twin | "
        "twin/cankar |"
    )
    print("|---:|" + "---:|" * 12)
    for n in counts:
        s = ns == n
        ss = s & solved

        def med(x, mask):
            mask = mask & ~np.isnan(x)
            return np.median(x[mask]) * 1e3 if mask.any() else float("nan")

        def rat(a, b, mask):
            mask = mask & ~np.isnan(a) & ~np.isnan(b)
            return np.median(a[mask] / b[mask]) if mask.any() else float("nan")

        print(
            f"| {n} | {med(arr['scan'], s):.2f} | {med(arr['scan_numpy'], s):.1f} | "
            f"{rat(arr['scan_numpy'], arr['scan'], s):.0f}x | "
            f"{rat(arr['scan_numpy'], arr['scan'], ss):.0f}x | {med(arr['exact'], s):.1f} | "
            f"{rat(arr['exact'], arr['scan'], s):.1f}x | "
            f"{rat(arr['exact'], arr['scan'], ss):.1f}x"
            f" | {med(arr['exact_plain'], s):.1f} | "
            f"{rat(arr['exact_plain'], arr['scan'], s):.0f}x"
            f" | {med(arr['cankar'], s):.2f} | {med(arr['cankar_numpy'], s):.1f} | "
            f"{rat(arr['cankar_numpy'], arr['cankar'], s):.0f}x |"
        )
    print("\ncompiled scan, its own timers (median ms over the N's requests): "
          + "; ".join(f"N = {n}: " + ", ".join(
              f"{k} {np.median([r[15 + q] for r in rows if r[0] == n]) * 1e3:.2f}"
              for q, k in enumerate(_PARTS)) for n in counts))  # fmt: skip
    c5 = ns == (5 if 5 in counts else counts[0])
    print(
        f"\nscan twin skipped on {skipped} requests whose compiled search made more than "
        f"{max_rounds} swaps (the pure-Python twin would take hours; ratios exclude them)"
    )
    ck5 = arr["cankar"][c5]
    print(
        f"\nN = {ns[c5][0]}, cankar Phases II-V (compiled) [ms]: min {ck5.min() * 1e3:.3f}, "
        f"max {ck5.max() * 1e3:.3f}, mean {ck5.mean() * 1e3:.3f}, "
        f"std {ck5.std() * 1e3:.3f} (paper: 0.008 / 9.167 / 1.004 / 1.664)"
    )
    plt = pyplot()
    if plt:
        fig, ax = plt.subplots(figsize=(6, 3.5))
        for nm in names:
            ax.plot(counts, [np.nanmean(arr[nm][ns == n]) * 1e3 for n in counts], "o-", label=nm)
        ax.set_yscale("log")
        ax.set_xlabel("N")
        ax.set_ylabel("mean search time [ms]")
        ax.legend(fontsize=7)
        fig.tight_layout()
        fig.savefig(os.path.join(OUT, "collective_fig2.png"), dpi=90)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    add_quiet(ap)
    ap.add_argument("--part", choices=("all", "table1", "table2", "table3", "timing"),
                    default="all")  # fmt: skip
    ap.add_argument("--nodes", type=int, default=606)
    ap.add_argument("--repeats", type=int, default=20, help="cankar seeds per case")
    ap.add_argument("--exact-check", type=int, default=10, help="cases per N checked by exact")
    ap.add_argument("--small-nodes", type=int, default=40)
    ap.add_argument("--timing-cases", type=int, default=10)
    ap.add_argument("--timing-counts", type=int, nargs="+", default=list(COUNTS),
                    help="values of N timed (default: all of Table 2)")  # fmt: skip
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--clock", choices=("wall", "cpu"), default="wall",
                    help="timing part: wall-clock time, or the process's CPU time (all its "
                    "threads; steadier on a shared machine)")  # fmt: skip
    args = ap.parse_args(argv)
    print(f"# {platform.machine()}, {os.cpu_count()} CPUs, load average {os.getloadavg()}")
    pool = table1_pool(args.nodes, seed=args.seed)
    if args.part in ("all", "table1"):
        table1(pool)
    if args.part in ("all", "table2"):
        table2(pool, args.repeats, args.exact_check, args.seed)
    if args.part in ("all", "table3"):
        table3(pool, args.repeats, args.seed, f"{args.nodes}nodes", proven=False)
        small = table1_pool(args.small_nodes, seed=args.seed + 1)
        table3(small, args.repeats, args.seed, f"{args.small_nodes}nodes", proven=True)
    if args.part in ("all", "timing"):
        clock = time.process_time if args.clock == "cpu" else time.perf_counter
        print(f"\ntiming clock: {args.clock}")
        timing(pool, args.timing_cases, args.seed, counts=tuple(args.timing_counts), clock=clock)
    print(f"\nload average at the end {os.getloadavg()}")


if __name__ == "__main__":
    main()
