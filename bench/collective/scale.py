"""Collective co-allocation at cluster scale (issue 28): 10,000 nodes x a week of 5-minute slots.

The pool comes from the package's usage-trace generator (``generators.table1_pool``: Table 1's
capacities, per-node load levels ``Beta(a, b)`` (``--load``: the load scale; the paper's pool
is ``1.5 3.5``, mean 0.30), a diurnal sine over several days, AR(1) noise and bursts), here
``--nodes`` nodes and ``--days`` days of 5-minute slots (10,000 x 2,016 by default). Requests
are section 4.2's kinds scaled to the week (:func:`week_requests`): ``N`` in ``--counts``
(10, 60, 256, 1,024), ``--cases`` pairs (simple, collective) per ``N``, ``t_e`` uniform over
the first five days, durations from 10 minutes to 2 days, windows of 12 hours to 2 days,
totals ``d_i ~ U[N (p_i - 2 s_i), N (p_i + 0.5 s_i)]``.

Measured: pool build time (trace generation + validated construction) and the process's peak
memory after each stage; per request the time of the default method (``scan``), of the NumPy
twin (``scan``, ``backend="numpy"``, on ``--twin-cases`` pairs per N) and of the exact method
(pruned integer programs, ``--exact-cases`` pairs per N, ``--exact-limit`` seconds each); the
default's per-stage timings (prepare, window maxima + screens, search). Every answer is checked
by the independent ``verify``; the default's start is compared with the exact method's where
both are proven (a later start, or a rejection of a request the exact method solves, counts
as "not earliest").

Run:  PYTHONPATH=src nice -n 10 python -u -m bench.collective.scale [--cases 10]
"""

from __future__ import annotations

import argparse
import csv
import os
import platform
import resource
import time

import numpy as np

from bench.shared._progress import add_quiet, bar, say
from coalloc.collective import CollectiveRequest, exact, scan, verify
from coalloc.collective.generators import table1_pool

OUT = os.path.join(os.path.dirname(__file__), "..", "out")
DAY = 86400.0
#: Durations of the week's requests: 10 minutes to 2 days.
WEEK_DURATIONS = (600.0, 1800.0, 3600.0, 3 * 3600.0, 6 * 3600.0, 12 * 3600.0, DAY, 2 * DAY)
COUNTS = (10, 60, 256, 1024)


def peak_mib() -> float:
    """The process's peak resident memory so far (MiB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def week_requests(pool, count, n_cases, *, days=7, seed=0):
    """``n_cases`` pairs ``(simple, collective)`` for ``count`` nodes over ``days`` days.

    Section 4.2's distribution stretched to the week: ``t_res`` from :data:`WEEK_DURATIONS`,
    ``t_e ~ U[0, (days - 2) d]``, the window's end ``t_l + t_res ~ U[t_e + t_res + 12 h,
    t_e + t_res + 2 d]`` (cut at the end of the trace), totals as in section 4.2; simple:
    ``e_i = d_i / N``, collective: ``e_i = d_i / 2N``; label ``arch=amd64``.
    """
    rng = np.random.default_rng([seed, count])
    mean, dev = pool.capacity.mean(axis=0), pool.capacity.std(axis=0)
    end_of_trace = days * DAY
    out = []
    for _ in range(n_cases):
        dur = float(rng.choice(WEEK_DURATIONS))
        te = float(rng.uniform(0, (days - 2) * DAY))
        end = min(te + dur + float(rng.uniform(12 * 3600, 2 * DAY)), end_of_trace)
        tl = max(te, end - dur)
        lo = np.maximum(count * (mean - 2 * dev), 0.01 * count)
        hi = np.maximum(count * (mean + 0.5 * dev), lo)
        d = rng.uniform(lo, hi)
        names = pool.names
        labels = {"arch": "amd64"}
        simple = CollectiveRequest(dur, count, te, tl, {k: float(v / count) for k, v in
                                                        zip(names, d)}, None, labels)  # fmt: skip
        coll = CollectiveRequest(dur, count, te, tl,
                                 {k: float(v / (2 * count)) for k, v in zip(names, d)},
                                 {k: float(v) for k, v in zip(names, d)}, labels)  # fmt: skip
        out.append((simple, coll))
    return out


def _q(values, q):
    return float(np.percentile(values, q)) if len(values) else float("nan")


_CLOCK = [time.perf_counter]


def _timed(fn, *args, **kwargs):
    t0 = _CLOCK[0]()
    res = fn(*args, **kwargs)
    return res, _CLOCK[0]() - t0


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--nodes", type=int, default=10_000)
    ap.add_argument("--days", type=int, default=7)
    ap.add_argument(
        "--load",
        type=float,
        nargs=2,
        default=(1.5, 3.5),
        help="Beta parameters of the nodes' mean load levels (load scale)",
    )
    ap.add_argument("--counts", type=int, nargs="+", default=list(COUNTS))
    ap.add_argument("--cases", type=int, default=10, help="pairs (simple, collective) per N")
    ap.add_argument("--twin-cases", type=int, default=1, help="pairs per N for the NumPy twin")
    ap.add_argument("--exact-cases", type=int, default=1, help="pairs per N for the exact method")
    ap.add_argument("--exact-limit", type=float, default=60.0, help="seconds per exact call")
    ap.add_argument("--pool-seed", type=int, default=2028, help="held-back pool seed")
    ap.add_argument("--seed", type=int, default=28, help="request seed")
    ap.add_argument("--clock", choices=("wall", "cpu"), default="cpu",
                    help="wall-clock time, or the process's CPU time (all its threads; the "
                    "honest measure on a shared machine)")  # fmt: skip
    add_quiet(ap)
    args = ap.parse_args(argv)
    _CLOCK[0] = time.process_time if args.clock == "cpu" else time.perf_counter

    say(f"machine: {platform.processor() or platform.machine()}, load average "
        f"{os.getloadavg()[0]:.2f}, clock: {args.clock}")  # fmt: skip
    base = peak_mib()
    pool, t_build = _timed(table1_pool, args.nodes, n_slots=288 * args.days,
                           load=tuple(args.load), seed=args.pool_seed)  # fmt: skip
    build_peak = peak_mib()
    say(f"pool: {pool.n_nodes} nodes x {pool.times.size - 1} slots built in {t_build:.2f} s; "
        f"peak {build_peak:.0f} MiB (interpreter + imports {base:.0f} MiB)")  # fmt: skip

    cases = []
    for n in args.counts:
        for q, (simple, coll) in enumerate(week_requests(pool, n, args.cases, days=args.days,
                                                         seed=args.seed)):  # fmt: skip
            cases.append((n, "simple", q, simple))
            cases.append((n, "collective", q, coll))
    rows = []
    for n, kind, q, req in bar(cases, desc="requests", unit="req"):
        res, t_def = _timed(scan, req, pool)
        ok = verify(req, pool, res).ok if res.has_solution else None
        row = {"N": n, "kind": kind, "case": q, "status": res.status, "start": res.start,
               "proven": bool(res.proven), "verify": ok, "scan_s": t_def,
               "prepare_s": res.timings.get("prepare", 0.0),
               "window_s": res.timings.get("window_max", 0.0),
               "search_s": res.timings.get("search", 0.0),
               "solver_calls": res.iterations.get("solver_calls", 0),
               "twin_s": None, "twin_same": None, "exact_s": None, "exact_status": None,
               "exact_start": None, "exact_verify": None, "earliest": None}  # fmt: skip
        if q < args.twin_cases:
            twin, row["twin_s"] = _timed(scan, req, pool, backend="numpy")
            row["twin_same"] = (twin.status == res.status and twin.start == res.start and
                                (not res.has_solution or
                                 twin.resources.tolist() == res.resources.tolist()))  # fmt: skip
        if q < args.exact_cases:
            ex, row["exact_s"] = _timed(exact, req, pool, time_limit=args.exact_limit)
            row["exact_status"], row["exact_start"] = ex.status, ex.start
            row["exact_verify"] = verify(req, pool, ex).ok if ex.has_solution else None
            if ex.status in ("optimal", "feasible") and ex.proven is not False:
                row["earliest"] = res.has_solution and res.start == ex.start
            elif ex.status == "infeasible":
                row["earliest"] = not res.has_solution
        rows.append(row)
    run_peak = peak_mib()

    os.makedirs(OUT, exist_ok=True)
    path = os.path.join(OUT, "collective_scale.csv")
    with open(path, "w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)

    bad = [r for r in rows if r["verify"] is False or r["exact_verify"] is False]
    solved = [r for r in rows if r["start"] is not None]
    print(
        f"\n### {pool.n_nodes} nodes x {pool.times.size - 1} slots, {len(rows)} requests "
        f"(seed {args.seed}, pool seed {args.pool_seed}, load Beta{tuple(args.load)})\n"
    )
    print(
        f"pool built in {t_build:.2f} s; peak memory {build_peak:.0f} MiB after the build, "
        f"{run_peak:.0f} MiB after every request; inadmissible outputs: {len(bad)}"
    )
    print(
        f"solved by the default: {len(solved)}; start proven earliest (scan's own proof): "
        f"{sum(r['proven'] for r in solved)}; status time_limit: "
        f"{sum(r['status'] == 'time_limit' for r in rows)}"
    )
    checked = [r for r in rows if r["earliest"] is not None]
    print(
        f"checked against the exact method: {len(checked)}, same earliest start / same "
        f"rejection: {sum(bool(r['earliest']) for r in checked)}\n"
    )
    print(
        "| N | kind | requests | solved | scan median ms | scan p95 ms | max ms | window ms "
        "(median) | search ms (median) | twin median ms (n) | exact median ms (n) |"
    )
    print("|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    groups = [(n, k) for n in args.counts for k in ("simple", "collective")]
    for n, k in groups + [("all", "all")]:
        sel = [r for r in rows if (n == "all" or r["N"] == n) and (k == "all" or r["kind"] == k)]
        ts = [1e3 * r["scan_s"] for r in sel]
        tw = [1e3 * r["twin_s"] for r in sel if r["twin_s"] is not None]
        te = [1e3 * r["exact_s"] for r in sel if r["exact_s"] is not None]
        print(
            f"| {n} | {k} | {len(sel)} | {sum(r['start'] is not None for r in sel)} | "
            f"{_q(ts, 50):.1f} | {_q(ts, 95):.1f} | {max(ts):.1f} | "
            f"{_q([1e3 * r['window_s'] for r in sel], 50):.1f} | "
            f"{_q([1e3 * r['search_s'] for r in sel], 50):.1f} | "
            f"{_q(tw, 50):.1f} ({len(tw)}) | {_q(te, 50):.1f} ({len(te)}) |"
        )
    same = [r["twin_same"] for r in rows if r["twin_same"] is not None]
    print(f"\nNumPy twin: same answer on {sum(same)} of {len(same)} requests; CSV: {path}")
    return rows


if __name__ == "__main__":
    main()
