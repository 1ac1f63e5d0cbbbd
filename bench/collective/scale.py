"""Collective co-allocation at cluster scale (issues 28, 40): 10,000 nodes x a week of slots.

The pool comes from the package's usage-trace generator (``generators.table1_pool``: Table 1's
capacities, per-node load levels ``Beta(a, b)`` (``--load``: the load scale; the paper's pool
is ``1.5 3.5``, mean 0.30), a diurnal sine over several days, AR(1) noise and bursts), here
``--nodes`` nodes and ``--days`` days of 5-minute slots (10,000 x 2,016 by default), one pool
per ``--pool-seeds`` seed. Requests, for every ``N`` in ``--counts`` (10, 60, 256, 1,024) and
every request seed in ``--seeds``, in the mixes of ``--mixes``:

* ``week``: section 4.2's kinds scaled to the week (:func:`week_requests`): ``--cases`` pairs
  (simple, collective), ``t_e`` uniform over the first five days, durations from 10 minutes
  to 2 days, windows of 12 hours to 2 days, totals ``d_i ~ U[N (p_i - 2 s_i), N (p_i + 0.5
  s_i)]``;
* ``reject``: requests built to be rejected at many candidate starts (:func:`reject_requests`,
  ``--cases`` each): totals at 85-100 % of the ``N`` largest amounts free at ``t_e`` on each
  property, a window of two days, short durations: most starts pass the per-property screens
  and fail on the combination (the hard case of issue 40), or fail the totals at every start.

Measured: the one-time imports of the solvers' modules (``scipy.optimize``, whose ``linprog``
the weighted proofs call: about 0.2 s of CPU, charged before this to whichever request first
needed it, as a matcher pays it once at start-up), pool build time, the time of its indexes
(built by a first, trivial request: the
bits of falling amounts and the block maxima, kept up to date by bookings) and the process's
peak memory; per request the CPU (``--clock``)
time of the default method (``scan``): its distribution (median, p95, p99, max) per mix and
``N`` and over all, the starts it checked and the integer programs it ran; the NumPy twin
(``backend="numpy"``) on ``--twin-cases`` requests per group and the exact method (pruned
integer programs, ``--exact-cases`` per group, ``--exact-limit`` seconds each). Every answer is
checked by the independent ``verify``; the default's start is compared with the exact
method's where both are proven (a later start, or a rejection of a request the exact method
solves, counts as "not earliest").

Run (full size, about 10-20 minutes on a quiet core):
    PYTHONPATH=src:. nice -n 10 python -u -m bench.collective.scale --quiet
Reduced (a few minutes):
    PYTHONPATH=src:. python -m bench.collective.scale --nodes 2000 --pool-seeds 2028 2029 \
        --seeds 28 --cases 3 --quiet
"""

from __future__ import annotations

import argparse
import csv
import importlib
import os
import platform
import resource
import time

import numpy as np

from bench.shared._progress import add_quiet, bar, say
from coalloc.cli._common import count as _count
from coalloc.cli._common import seconds as _seconds
from coalloc.collective import CollectiveRequest, exact, scan, verify
from coalloc.collective.generators import table1_pool

OUT = os.path.join(os.path.dirname(__file__), "..", "out")
DAY = 86400.0
#: Durations of the week's requests: 10 minutes to 2 days.
WEEK_DURATIONS = (600.0, 1800.0, 3600.0, 3 * 3600.0, 6 * 3600.0, 12 * 3600.0, DAY, 2 * DAY)
COUNTS = (10, 60, 256, 1024)
MIXES = ("week", "reject")


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


def reject_requests(pool, count, n_cases, *, days=7, seed=0):
    """``n_cases`` requests for ``count`` nodes built to be rejected at many candidate starts.

    ``t_e ~ U[0, (days - 2) d]``, a window of two days (cut at the end of the trace), a
    duration of 30 minutes, 1 or 6 hours (many candidate starts), no minimums, label
    ``arch=amd64``; each total at a fraction ``U[0.85, 1]`` of the ``count`` largest amounts
    of its property free at ``t_e`` on the matching nodes (``pool.reserved_at``): each total
    alone is often reachable, all of them together rarely, so most starts pass the
    per-property screens and are rejected on the combination, or fail a total at every
    start.
    """
    rng = np.random.default_rng([seed, count, 40])
    labels = {"arch": "amd64"}
    match = pool.match(labels)
    out = []
    for _ in range(n_cases):
        dur = float(rng.choice((1800.0, 3600.0, 6 * 3600.0)))
        te = float(rng.uniform(0, (days - 2) * DAY))
        tl = max(te, min(te + 2 * DAY, days * DAY - dur))
        free = (pool.capacity - pool.reserved_at(te))[match]
        top = -np.sort(-free, axis=0)[:count].sum(axis=0)
        d = top * rng.uniform(0.85, 1.0, top.size)
        out.append(CollectiveRequest(dur, count, te, tl, {k: 0.0 for k in pool.names},
                                     {k: float(v) for k, v in zip(pool.names, d)},
                                     labels))  # fmt: skip
    return out


def _q(values, q):
    return float(np.percentile(values, q)) if len(values) else float("nan")


_CLOCK = [time.perf_counter]


def _timed(fn, *args, **kwargs):
    t0 = _CLOCK[0]()
    res = fn(*args, **kwargs)
    return res, _CLOCK[0]() - t0


def _requests(pool, args, pool_seed):
    """Every request of the run on one pool: ``(mix, N, kind, case, request)``."""
    out = []
    for mix in args.mixes:
        for seed in args.seeds:
            for n in args.counts:
                if mix == "week":
                    pairs = week_requests(pool, n, args.cases, days=args.days, seed=seed)
                    for q, (simple, coll) in enumerate(pairs):
                        out.append((mix, n, "simple", f"{seed}.{q}", simple))
                        out.append((mix, n, "collective", f"{seed}.{q}", coll))
                else:
                    for q, req in enumerate(reject_requests(pool, n, args.cases, days=args.days,
                                                            seed=seed)):  # fmt: skip
                        out.append((mix, n, "collective", f"{seed}.{q}", req))
    return out


def _measure(pool, case, args, extra):
    """One request: the default's answer and CPU time, checked by ``verify``; the NumPy twin
    and the exact method when ``extra`` asks for them."""
    mix, n, kind, q, req = case
    res, t_def = _timed(scan, req, pool)
    ok = verify(req, pool, res).ok if res.has_solution else None
    row = {"mix": mix, "N": n, "kind": kind, "case": q, "status": res.status,
           "start": res.start, "proven": bool(res.proven), "verify": ok, "scan_s": t_def,
           "starts": res.iterations.get("starts", 0),
           "solver_calls": res.iterations.get("solver_calls", 0),
           "prepare_s": res.timings.get("prepare", 0.0),
           "window_s": res.timings.get("window_max", 0.0),
           "search_s": res.timings.get("search", 0.0),
           "twin_s": None, "twin_same": None, "exact_s": None, "exact_status": None,
           "exact_start": None, "exact_verify": None, "earliest": None}  # fmt: skip
    if "twin" in extra:
        twin, row["twin_s"] = _timed(scan, req, pool, backend="numpy")
        row["twin_same"] = (twin.status == res.status and twin.start == res.start and
                            (not res.has_solution or
                             twin.resources.tolist() == res.resources.tolist()))  # fmt: skip
    if "exact" in extra:
        ex, row["exact_s"] = _timed(exact, req, pool, time_limit=args.exact_limit)
        row["exact_status"], row["exact_start"] = ex.status, ex.start
        row["exact_verify"] = verify(req, pool, ex).ok if ex.has_solution else None
        if ex.status in ("optimal", "feasible") and ex.proven is not False:
            row["earliest"] = res.has_solution and res.start == ex.start
        elif ex.status == "infeasible":
            row["earliest"] = not res.has_solution
    return row


def _table(rows, counts, mixes):
    """The distribution of the default's time per (mix, N) and over all (markdown lines)."""
    lines = ["| mix | N | requests | solved | median ms | p95 ms | p99 ms | max ms | over 1 s | "
             "starts (median / max) | integer programs | twin median ms (n) | exact median ms "
             "(n) |", "|---|" + "---:|" * 12]  # fmt: skip
    groups = [(mx, n) for mx in mixes for n in counts] + [(mx, "all") for mx in mixes]
    for mx, n in groups + [("all", "all")]:
        sel = [r for r in rows if (mx == "all" or r["mix"] == mx) and (n == "all" or r["N"] == n)]
        if not sel:
            continue
        ts = [1e3 * r["scan_s"] for r in sel]
        tw = [1e3 * r["twin_s"] for r in sel if r["twin_s"] is not None]
        te = [1e3 * r["exact_s"] for r in sel if r["exact_s"] is not None]
        st = [r["starts"] for r in sel]
        lines.append(
            f"| {mx} | {n} | {len(sel)} | {sum(r['start'] is not None for r in sel)} | "
            f"{_q(ts, 50):.1f} | {_q(ts, 95):.1f} | {_q(ts, 99):.1f} | {max(ts):.1f} | "
            f"{sum(t > 1000 for t in ts)} | {_q(st, 50):.0f} / {max(st)} | "
            f"{sum(r['solver_calls'] for r in sel)} | {_q(tw, 50):.1f} ({len(tw)}) | "
            f"{_q(te, 50):.1f} ({len(te)}) |"
        )
    return lines


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--nodes", type=_count(), default=10_000)
    ap.add_argument("--days", type=_count(3), default=7, help="days of 5-minute slots (>= 3)")
    ap.add_argument(
        "--load",
        type=float,
        nargs=2,
        default=(1.5, 3.5),
        help="Beta parameters of the nodes' mean load levels (load scale)",
    )
    ap.add_argument("--counts", type=_count(), nargs="+", default=list(COUNTS))
    ap.add_argument("--mixes", choices=MIXES, nargs="+", default=list(MIXES),
                    help="request mixes: section 4.2's week, and requests built to be "
                    "rejected at many starts")  # fmt: skip
    ap.add_argument("--cases", type=_count(), default=5,
                    help="pairs (simple, collective) per N and seed (week); requests (reject)")
    ap.add_argument("--twin-cases", type=_count(0), default=1,
                    help="requests per (mix, N) for the NumPy twin (first pool only)")
    ap.add_argument("--exact-cases", type=_count(0), default=0,
                    help="requests per (mix, N) for the exact method (first pool only)")
    ap.add_argument("--exact-limit", type=_seconds(), default=60.0, help="seconds per exact call")
    ap.add_argument("--pool-seeds", type=_count(0), nargs="+", default=[2028, 2029, 2030],
                    help="held-back pool seeds (one pool each)")
    ap.add_argument("--seeds", type=_count(0), nargs="+", default=[28, 29],
                    help="request seeds")
    ap.add_argument("--clock", choices=("wall", "cpu"), default="cpu",
                    help="wall-clock time, or the process's CPU time (all its threads; the "
                    "honest measure on a shared machine)")  # fmt: skip
    add_quiet(ap)
    args = ap.parse_args(argv)
    _CLOCK[0] = time.process_time if args.clock == "cpu" else time.perf_counter

    load0 = os.getloadavg()
    say(f"machine: {platform.processor() or platform.machine()}, load average "
        f"{load0[0]:.2f} {load0[1]:.2f} {load0[2]:.2f}, clock: {args.clock}")  # fmt: skip
    base = peak_mib()
    rows, builds, indexes = [], [], []
    # the solvers' modules imported once, timed apart (a matcher's start-up): the first
    # request that needs the cutting planes' linprog would otherwise pay about 0.2 s for it
    _, t_imports = _timed(importlib.import_module, "scipy.optimize")
    say(f"imports (scipy.optimize) {t_imports:.2f} s")
    for p_i, pool_seed in enumerate(args.pool_seeds):
        pool, t_build = _timed(table1_pool, args.nodes, n_slots=288 * args.days,
                               load=tuple(args.load), seed=pool_seed)  # fmt: skip
        builds.append(t_build)
        # the pool's indexes (the bits of falling amounts, the block maxima) are built by the
        # first request on a grid and kept up to date by bookings: timed apart, as a
        # matcher's index build, not charged to the first request of the table
        _, t_index = _timed(scan, CollectiveRequest(300.0, 1, 0.0, 0.0), pool)
        indexes.append(t_index)
        say(f"pool {pool_seed}: {pool.n_nodes} nodes x {pool.times.size - 1} slots built in "
            f"{t_build:.2f} s, indexes {t_index:.2f} s; peak {peak_mib():.0f} MiB (interpreter "
            f"+ imports {base:.0f} MiB)")  # fmt: skip
        cases = _requests(pool, args, pool_seed)
        seen: dict = {}
        for case in bar(cases, desc=f"pool {pool_seed}", unit="req"):
            key = (case[0], case[1])
            seen[key] = seen.get(key, 0) + 1
            extra = set()
            if p_i == 0 and seen[key] <= args.twin_cases:
                extra.add("twin")
            if p_i == 0 and seen[key] <= args.exact_cases:
                extra.add("exact")
            row = _measure(pool, case, args, extra)
            row["pool_seed"] = pool_seed
            rows.append(row)
        del pool
    run_peak = peak_mib()
    load1 = os.getloadavg()

    os.makedirs(OUT, exist_ok=True)
    path = os.path.join(OUT, "collective_scale.csv")
    with open(path, "w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)

    bad = [r for r in rows if r["verify"] is False or r["exact_verify"] is False]
    solved = [r for r in rows if r["start"] is not None]
    print(
        f"\n### {args.nodes} nodes x {288 * args.days} slots, {len(rows)} requests "
        f"(pool seeds {args.pool_seeds}, request seeds {args.seeds}, mixes {args.mixes}, "
        f"load Beta{tuple(args.load)}, clock {args.clock})\n"
    )
    print(
        f"load average {load0[0]:.2f} {load0[1]:.2f} {load0[2]:.2f} before, {load1[0]:.2f} "
        f"{load1[1]:.2f} {load1[2]:.2f} after; imports {t_imports:.2f} s; pools built in "
        f"{np.median(builds):.2f} s, their "
        f"indexes in {np.median(indexes):.2f} s (medians); peak memory {run_peak:.0f} MiB; "
        f"inadmissible outputs: {len(bad)}"
    )
    print(
        f"solved by the default: {len(solved)}; start proven earliest (scan's own proof): "
        f"{sum(r['proven'] for r in solved)}; rejections proven: "
        f"{sum(r['proven'] for r in rows if r['start'] is None)} of "
        f"{sum(r['start'] is None for r in rows)}; status time_limit: "
        f"{sum(r['status'] == 'time_limit' for r in rows)}"
    )
    checked = [r for r in rows if r["earliest"] is not None]
    print(
        f"checked against the exact method: {len(checked)}, same earliest start / same "
        f"rejection: {sum(bool(r['earliest']) for r in checked)}\n"
    )
    print("\n".join(_table(rows, args.counts, args.mixes)))
    slow = sorted(rows, key=lambda r: -r["scan_s"])[:5]
    print("\nslowest: " + "; ".join(
        f"{1e3 * r['scan_s']:.0f} ms ({r['mix']}, N = {r['N']}, {r['kind']}, pool "
        f"{r['pool_seed']}, case {r['case']}, {r['status']}, {r['starts']} starts, "
        f"{r['solver_calls']} programs)" for r in slow))  # fmt: skip
    same = [r["twin_same"] for r in rows if r["twin_same"] is not None]
    print(f"\nNumPy twin: same answer on {sum(same)} of {len(same)} requests; CSV: {path}")
    return rows


if __name__ == "__main__":
    main()
