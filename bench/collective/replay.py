"""Online co-allocation (issue 28): SWF jobs replayed onto a large pool, simple against collective.

The pool is ``generators.table1_pool`` with ``--nodes`` nodes and 5-minute usage over
``--days`` days plus the three days after them that the last jobs may reach (waits up to a day,
runs up to two). The jobs come from a Standard Workload Format file (``--swf``) or, when none
is given, from :func:`synthetic_swf` (a week of jobs: arrivals with a daily cycle, 40 % serial
and the rest powers of two up to ``--max-procs`` processors, run times log-uniform from one
minute to two days). They are read by ``io.read_swf`` / ``io.swf_requests`` (one processor per
node, a total of ``P`` cores; simple: ``e = P / N`` = 1 core on each node, collective:
``e = P / 2N``) and replayed by ``simulate.simulate`` on the pool itself (``in_place``) with
bookings on the 5-minute grid (``align=300``), so every booking updates the ledger in place.

The synthetic trace is written as an SWF file (``<out>/<tag>.swf``, through the guarded
writer) and read back from that file by ``io.read_swf``, as a trace of the Parallel Workloads
Archive would be.

Measured per variant: wall and CPU time (all jobs, one core), per job, acceptance rate, mean
and median start delay, the jobs' share of the cores over time, the process's peak memory
(VmHWM). Checked per variant (``--no-verify`` skips the first two):

- every booking, just before it is reserved, by the family's independent
  ``verify.verify_coallocation`` on the timetables it was computed on (restricted to its nodes
  and its interval, the tolerance of those nodes: never looser than the whole pool's);
- after the run, the ledger against one recomputed from the background and the bookings
  alone (node by node), and that recomputed ledger never above any node's capacity at any
  moment (so every reservation stays admissible at every moment after later ones);
- with ``--snapshot``, a snapshot written through the guarded writer
  (``io.write_pool_snapshot``, ``.npz``) and read back, compared bit for bit.

Writes ``<out>/<tag>.json`` (figures and usage series) and ``<out>/<tag>.png`` (usage over
time and start delays, simple against collective); ``--tag`` defaults to ``collective_replay``.

Run:  PYTHONPATH=src nice -n 10 python -u -m bench.collective.replay [--nodes 10000 --jobs 10000]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import tempfile
import time

import numpy as np

from bench.shared._progress import add_quiet, bar, say
from coalloc._shared.jsonio import atomic_output
from coalloc.cli._common import Real
from coalloc.collective import ResourcePool
from coalloc.collective.generators import table1_pool
from coalloc.collective.io import read_pool_snapshot, read_swf, swf_workload, write_pool_snapshot
from coalloc.collective.simulate import simulate
from coalloc.collective.verify import verify_coallocation

DAY = 86400.0
OUT = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "out")


def peak_mib():
    """This process's peak resident memory so far (MiB; Linux VmHWM, else ru_maxrss)."""
    try:
        with open("/proc/self/status") as fh:
            for line in fh:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024.0
    except (OSError, ValueError, IndexError):
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def window_pool(pool, nodes, lo, hi):
    """The timetables of ``nodes`` over ``[lo, hi)`` as a pool of their own: its first segment
    (from 0) holds the amounts of the segment containing ``lo``, its last runs on to infinity
    with those of the segment containing the moment before ``hi``; the maxima over ``[lo, hi)``
    are the pool's."""
    t = pool.times
    k0 = int(np.searchsorted(t, lo, side="right")) - 1
    k1 = max(int(np.searchsorted(t, hi, side="left")), k0 + 1)
    times = np.concatenate([[0.0], t[k0 + 1 : k1]])
    labels = {k: [str(v) for v in vals[nodes]] for k, vals in pool.labels.items()}
    return ResourcePool(pool.capacity[nodes], pool.names, times, pool.reserved[nodes][:, :, k0:k1],
                        labels or None)  # fmt: skip


class Referee:
    """Checks every booking with ``verify_coallocation`` and keeps it for the final check."""

    def __init__(self, verify=True):
        self.verify = verify
        self.bookings = []
        self.checked = 0
        self.seconds = 0.0  # CPU
        self.wall = 0.0

    def __call__(self, q, req, res, pool):
        nodes = np.asarray(res.resources, dtype=np.int64)
        amounts = np.asarray(res.amounts, dtype=float)
        self.bookings.append((float(res.start), float(req.duration), nodes, amounts))
        if not self.verify:
            return
        c0, w0 = time.process_time(), time.perf_counter()
        lo, hi = float(res.start), float(res.start) + float(req.duration)
        sub = window_pool(pool, nodes, lo, hi)  # absolute times kept: the request as booked
        rep = verify_coallocation(req, sub, float(res.start), np.arange(nodes.size), amounts)
        self.seconds += time.process_time() - c0
        self.wall += time.perf_counter() - w0
        self.checked += 1
        if not rep.ok:
            raise AssertionError(f"booking {q} (start {res.start}, nodes {nodes.tolist()[:8]}) "
                                 f"inadmissible: {rep}")  # fmt: skip

    def check_ledger(self, base, pool):
        """The ledger against the background plus the bookings, node by node; never above
        capacity. Returns the number of nodes booked."""
        t = pool.times
        assert np.array_equal(t, base.times), "the grid grew (bookings off the grid)"
        per_node = {}
        for start, dur, nodes, amounts in self.bookings:
            k0 = int(np.searchsorted(t, start, side="left"))
            k1 = int(np.searchsorted(t, start + dur, side="left"))
            assert t[k0] == start, "a booking off the grid"
            for j, a in zip(nodes.tolist(), amounts):
                per_node.setdefault(j, []).append((k0, k1, a))
        cap, tol = pool.capacity, pool.tolerance
        for j in range(pool.n_nodes):
            want = base.reserved[j].copy()
            for k0, k1, a in per_node.get(j, ()):
                want[:, k0:k1] += a[:, None]
            if j in per_node:
                msg = f"node {j}: ledger != background + bookings"
                np.testing.assert_allclose(pool.reserved[j], want, rtol=0, atol=1e-9, err_msg=msg)
            else:
                assert np.array_equal(pool.reserved[j], want), f"node {j} changed, unbooked"
            over = want > cap[j][:, None] + tol[:, None]
            assert not np.any(over), f"node {j} above capacity at {t[np.nonzero(over)[1][0]]}"
        return len(per_node)


def synthetic_swf(n_jobs, *, days=7, max_procs=64, seed=0, cancelled=0.0):
    """``n_jobs`` jobs of a synthetic SWF trace over ``days`` days (the module docstring).

    A share ``cancelled`` of the jobs (drawn from a stream of their own, so that the other
    fields stay those of ``cancelled=0``) is written as cancelled before they started
    (status 5, run time -1), as the archive's logs hold them."""
    gone = np.random.default_rng([seed, 5]).random(n_jobs) < cancelled
    rng = np.random.default_rng(seed)
    # arrivals: a daily cycle (busy afternoons), sorted
    t = rng.uniform(0, days * DAY, 4 * n_jobs)
    keep = rng.random(t.size) < 0.6 + 0.4 * np.sin(2 * np.pi * (t / DAY - 0.3))
    arrivals = np.sort(t[keep][:n_jobs])
    if arrivals.size < n_jobs:
        arrivals = np.sort(
            np.concatenate([arrivals, rng.uniform(0, days * DAY, n_jobs - arrivals.size)])
        )
    serial = rng.random(n_jobs) < 0.4
    procs = np.where(serial, 1, 2 ** rng.integers(1, int(np.log2(max_procs)) + 1, n_jobs))
    run = np.exp(rng.uniform(np.log(60.0), np.log(2 * DAY), n_jobs))
    lines = ["; synthetic SWF trace (bench.collective.replay)"]
    for q in range(n_jobs):
        f = [q + 1, int(arrivals[q]), -1, int(run[q]), int(procs[q]), -1, -1, int(procs[q]),
             int(run[q] * rng.uniform(1, 3)), -1, 1, 1, 1, -1, 1, -1, -1, -1]  # fmt: skip
        if gone[q]:  # cancelled while queued: no run time, no processors allocated
            f[3], f[4], f[10] = -1, -1, 5
        lines.append(" ".join(str(v) for v in f))
    return "\n".join(lines) + "\n"


def plot(path, runs, days):
    """Usage of the cores over time and start delays, simple against collective."""
    from coalloc._shared.plotting import import_pyplot, save_figure

    plt = import_pyplot()
    fig, (ax, bx) = plt.subplots(1, 2, figsize=(11, 3.6), gridspec_kw={"width_ratios": [2.2, 1]})
    colours = {"simple": "tab:blue", "collective": "tab:red"}
    for name, r in runs.items():
        h = np.asarray(r["slot_times"]) / 3600.0
        ax.plot(h, r["usage"], color=colours[name], lw=0.8,
                label=f"{name}: all reserved (background + jobs)")  # fmt: skip
        ax.plot(h, r["job_usage"], color=colours[name], lw=0.8, ls="--",
                label=f"{name}: the jobs' share")  # fmt: skip
        d = np.sort(np.asarray(r["delays"])) / 3600.0
        bx.step(d, np.arange(1, d.size + 1) / r["jobs"], where="post", color=colours[name],
                label=f"{name}: {100 * r['accepted']:.1f} % accepted, "
                      f"mean delay {r['mean_delay_h']:.2f} h")  # fmt: skip
    ax.axvline(24 * days, color="grey", lw=0.6, ls=":")
    ax.set_xlabel("hours since the first submission")
    ax.set_ylabel("share of the pool's cores")
    ax.legend(fontsize=7, loc="upper left")
    ax.set_title("cores reserved over time", fontsize=9)
    bx.set_xscale("symlog", linthresh=0.1)
    bx.set_xlabel("start delay (hours)")
    bx.set_ylabel("share of the jobs started within")
    bx.legend(fontsize=7, loc="lower right")
    bx.set_title("start delay (accepted jobs)", fontsize=9)
    fig.tight_layout()
    return save_figure(fig, path, dpi=100)  # through the guarded writer


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--nodes", type=int, default=10_000)
    ap.add_argument("--jobs", type=int, default=10_000)
    ap.add_argument("--days", type=int, default=7)
    ap.add_argument("--max-procs", type=int, default=64)
    ap.add_argument("--swf", help="an SWF file (default: a synthetic trace)")
    ap.add_argument("--cancelled", type=Real(0.0, 1.0, what="a share of the jobs"), default=0.0,
                    help="share of the synthetic jobs cancelled before they start")  # fmt: skip
    ap.add_argument("--seed", type=int, default=28)
    ap.add_argument("--pool-seed", type=int, default=2028)
    ap.add_argument("--snapshot", action="store_true", help="write and reread the final ledger")
    ap.add_argument("--no-verify", action="store_true",
                    help="skip the per-booking verify and the recomputed ledger")  # fmt: skip
    ap.add_argument("--out", default=OUT, help="folder of the JSON, PNG and SWF (bench/out)")
    ap.add_argument("--tag", default="collective_replay", help="name of the JSON, PNG and SWF")
    add_quiet(ap)
    args = ap.parse_args(argv)
    say(f"load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    os.makedirs(args.out, exist_ok=True)
    swf = args.swf
    if not swf:  # the synthetic trace as an SWF file, read back from that file
        swf = os.path.join(args.out, f"{args.tag}.swf")
        text = synthetic_swf(args.jobs, days=args.days, max_procs=args.max_procs, seed=args.seed,
                             cancelled=args.cancelled)  # fmt: skip
        with atomic_output(swf) as fh:
            fh.write(text)
    jobs = read_swf(swf)[: args.jobs]
    t0, c0 = time.perf_counter(), time.process_time()
    base = table1_pool(args.nodes, n_slots=288 * (args.days + 3), seed=args.pool_seed)
    horizon = 300.0 * 288 * (args.days + 3)  # the end of the pool's last known slot
    say(f"pool {base.n_nodes} nodes x {base.times.size - 1} slots in "
        f"{time.perf_counter() - t0:.1f} s ({time.process_time() - c0:.1f} s CPU); "
        f"{len(jobs)} jobs read from {swf}; peak {peak_mib():.0f} MiB")  # fmt: skip
    print("| variant | jobs | wall s (CPU s) | ms/job wall (CPU) | accepted | mean / median "
          "delay (h) | jobs' share of cores: mean, max | all reserved: max | verify CPU s | "
          "peak MiB |")  # fmt: skip
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    runs = {}
    for simple in bar([True, False], desc="variants", unit="variant"):
        name = "simple" if simple else "collective"
        wl = swf_workload(jobs, collective=not simple, procs_per_node=1.0, source=swf)
        reqs = wl.requests
        pool = base.copy()
        referee = Referee(verify=not args.no_verify)
        t0, c0 = time.perf_counter(), time.process_time()
        # the pool's usage is known for its days only: a job that cannot end by then is
        # rejected "past the horizon", not booked against the last slot's amounts
        sim = simulate(pool, reqs, align=300.0, in_place=True, on_booking=referee,
                       horizon=horizon, show_progress=not args.quiet,
                       **wl.simulate_kwargs())  # fmt: skip
        secs, cpu = time.perf_counter() - t0, time.process_time() - c0
        # the replay without the referee's calls (timed by the referee)
        secs, cpu_c = secs - referee.wall, cpu - referee.seconds
        booked = referee.check_ledger(base, pool) if not args.no_verify else None
        core = pool.names.index("cores")
        share, total = sim.job_usage[:, core], sim.usage[:, core]
        delays = [r["delay"] for r in sim.records if r["accepted"]]
        n = max(len(reqs), 1)
        reasons = {}
        for r in sim.records:
            if not r["accepted"]:
                reasons[r["reason"]] = reasons.get(r["reason"], 0) + 1
        mean_d = float(np.mean(delays)) / 3600 if delays else float("nan")
        med_d = float(np.median(delays)) / 3600 if delays else float("nan")
        peak = peak_mib()
        print(f"| {name} | {len(reqs)} | {secs:.1f} ({cpu_c:.1f}) | {1e3 * secs / n:.1f} "
              f"({1e3 * cpu_c / n:.1f}) | {sim.acceptance_rate:.4f} | {mean_d:.2f} / {med_d:.2f} "
              f"| {share.mean():.4f}, {share.max():.4f} | {total.max():.4f} | "
              f"{referee.seconds:.1f} | {peak:.0f} |", flush=True)  # fmt: skip
        if not args.no_verify:
            say(f"{name}: {referee.checked} bookings verified admissible before reserving; ledger "
                f"= background + bookings on {booked} nodes, never above capacity")  # fmt: skip
        if reasons:
            say(f"{name}: rejections {reasons}")
        if sim.skipped:
            say(f"{name}: not simulated (SWF status) {wl.skipped_counts()}")
        runs[name] = {
            "jobs": len(reqs), "wall_s": secs, "cpu_s": cpu_c, "verify_cpu_s": referee.seconds,
            "accepted": sim.acceptance_rate, "mean_delay_h": mean_d, "median_delay_h": med_d,
            "delays": [float(d) for d in delays], "rejections": reasons,
            "skipped": wl.skipped_counts(),
            "verified": referee.checked, "peak_mib": peak,
            "slot_times": sim.slot_times.tolist(), "usage": total.tolist(),
            "job_usage": share.tolist(),
        }  # fmt: skip
        if args.snapshot:
            with tempfile.TemporaryDirectory() as tmp:
                path = os.path.join(tmp, "ledger.npz")
                t0 = time.perf_counter()
                write_pool_snapshot(path, pool)  # through the guarded writer
                back = read_pool_snapshot(path)
                same = (np.array_equal(back.times, pool.times) and
                        np.array_equal(back.reserved, pool.reserved) and
                        np.array_equal(back.capacity, pool.capacity))  # fmt: skip
                say(f"snapshot: {os.path.getsize(path) / 2**20:.0f} MiB written and reread in "
                    f"{time.perf_counter() - t0:.1f} s, identical: {same}")  # fmt: skip
                assert same, "the snapshot differs from the ledger"
        del pool, sim
    meta = {"nodes": args.nodes, "jobs": len(jobs), "days": args.days, "seed": args.seed,
            "pool_seed": args.pool_seed, "swf": swf, "load_average_end": os.getloadavg(),
            "peak_mib": peak_mib(), "runs": runs}  # fmt: skip
    with atomic_output(os.path.join(args.out, f"{args.tag}.json")) as fh:
        json.dump(meta, fh)
    try:
        png = plot(os.path.join(args.out, f"{args.tag}.png"), runs, args.days)
        say(f"wrote {png}")
    except ImportError as exc:  # matplotlib is the [plot] extra
        say(f"no picture: {exc}")
    say(f"load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
