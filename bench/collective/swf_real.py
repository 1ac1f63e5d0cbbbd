"""A real Parallel Workloads Archive log replayed by ``coalloc collective simulate`` (issue 39).

The package ships no log (the archive's logs are public, but not ours to ship): give one with
``--swf PATH`` (plain or ``.gz``). The script

1. reads the log's header (``; Computer:``, ``; Installation:``, ``; MaxNodes:``,
   ``; MaxProcs:``, the cleaning filter) and counts its jobs by SWF status (field 11);
2. builds a pool of ``--nodes`` free nodes (default: the header's ``MaxNodes``, else
   ``MaxProcs``) of ``--procs-per-node`` cores each, written as a ``coalloc.collective.pool``
   JSON file;
3. runs the command a user runs, ``coalloc collective simulate POOL LOG --records R.jsonl``
   (the SWF conventions of ``collective.io.swf_workload``: job numbers kept, cancelled and
   failed-to-start jobs skipped with their reason, reservations for the requested time with
   the run time recorded, ``--horizon`` explicit), in a subprocess, on the first ``--limit``
   jobs;
4. reports what the records say: jobs skipped (by reason), simulated, accepted, rejected (by
   reason, ``past the horizon`` among them), how many reservations used the requested time and
   how many fell back on the run time, and the start delays;
5. checks them against a referee that shares no code with the package (:func:`referee`: the
   log's text split by hand, the conventions restated, each job booked at the earliest
   instant enough whole nodes are free, by counting): every count and every job's start
   (``--no-referee`` skips it; only with ``--procs-per-node 1``).

Figures go to ``--out`` (JSON) and to standard output; ``bench/collective/ISSUE39.md`` keeps
the ones measured with the log's name and origin.

Run:  PYTHONPATH=src python -m bench.collective.swf_real --swf NASA-iPSC-1993-3.1-cln.swf.gz
"""

from __future__ import annotations

import argparse
import collections
import gzip
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from typing import Optional

import numpy as np

from bench.shared._progress import add_quiet, bar, say
from coalloc._shared.jsonio import atomic_output
from coalloc.cli._common import Real, count, seconds
from coalloc.collective import ResourcePool, write_pool
from coalloc.collective.io import read_swf

OUT = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "out")
#: SWF field 11 (status), as the archive's format page names them.
STATUS = {-1: "unknown", 0: "failed", 1: "completed", 2: "partial", 3: "last partial",
          4: "failed partial", 5: "cancelled"}  # fmt: skip


def header(text: str) -> dict:
    """The ``; Key: value`` lines of an SWF header (repeated keys joined by ``" | "``)."""
    out: dict = {}
    for line in text.splitlines():
        if not line.startswith(";"):
            if line.strip():
                break
            continue
        key, sep, value = line[1:].partition(":")
        if sep and key.strip() and " " not in key.strip():
            k, v = key.strip(), " ".join(value.split())
            out[k] = f"{out[k]} | {v}" if k in out else v
    return out


def _plain(path: str, folder: str) -> str:
    """``path`` itself, or its decompressed copy in ``folder`` when it is gzipped."""
    with open(path, "rb") as fh:
        if fh.read(2) != b"\x1f\x8b":
            return path
    name = os.path.join(folder, os.path.basename(path).removesuffix(".gz"))
    with gzip.open(path, "rb") as src, open(name, "wb") as dst:
        dst.write(src.read())
    return name


def referee(log: str, nodes: int, max_wait: float, limit: int = 0,
            horizon: Optional[float] = None) -> dict:  # fmt: skip
    """What the replay must give on ``nodes`` identical one-core nodes, found without the
    package: the log's text split by hand, the SWF conventions restated (a job cancelled
    (status 5) or failed (0) with no run time is skipped, the duration is the requested time
    (field 9) else the run time, the processors the requested (field 8) else the allocated
    (field 5)), and each job, in order of submit time, booked at the earliest instant of
    ``[submit, submit + max_wait]`` (cut to end by ``horizon``) when enough nodes are free
    all along, by summing the nodes the bookings not over hold, segment by segment. A job of ``p``
    processors takes ``p`` whole nodes, as the collective request of one core per processor
    does on one-core nodes. Returns the counts and each simulated job's start (None:
    rejected)."""
    rows = []
    with open(log, encoding="utf-8", errors="replace") as fh:
        for line in fh:
            text = line.strip()
            if text and not text.startswith(";"):
                rows.append([float(x) for x in text.split()])
    if limit:
        rows = rows[:limit]
    t0 = min(r[1] for r in rows) if rows else 0.0
    skipped: collections.Counter = collections.Counter()
    by_status: collections.Counter = collections.Counter()
    starts: dict = {}
    past = 0
    live: list = []  # (start, end, nodes) of the bookings not over
    for row in sorted(rows, key=lambda r: r[1]):  # stable: ties keep the log's order
        job, submit, run, status = int(row[0]), row[1] - t0, row[3], int(row[10])
        duration = row[8] if row[8] > 0 else run
        procs = row[7] if row[7] > 0 else row[4]
        reason = ("cancelled" if status == 5 and run <= 0 else
                  "failed to start" if status == 0 and run <= 0 else
                  "no duration" if duration <= 0 else
                  "no processors" if procs <= 0 else None)  # fmt: skip
        if reason:
            skipped[reason] += 1
            by_status[STATUS.get(status, str(status))] += 1
            continue
        p = int(-(-procs // 1))
        latest = submit + max_wait
        if horizon is not None:
            if submit + duration > horizon:
                starts[job], past = None, past + 1
                continue
            latest = min(latest, horizon - duration)
        live = [b for b in live if b[1] > submit]
        found = None
        # the busy nodes as a step function: busy[i] on [points[i], points[i + 1])
        points = np.array(sorted({x for b in live for x in b[:2]}), dtype=float)
        busy = np.zeros(points.size)
        for s0, e0, q in live:
            busy[np.searchsorted(points, s0):np.searchsorted(points, e0)] += q
        for t in sorted({submit} | {b[1] for b in live if submit < b[1] <= latest}):
            i0 = max(int(np.searchsorted(points, t, side="right")) - 1, 0)
            i1 = int(np.searchsorted(points, t + duration, side="left"))
            if (busy[i0:i1].max() if i1 > i0 else 0.0) + p <= nodes:
                found = t
                break
        starts[job] = found
        if found is not None:
            live.append((found, found + duration, p))
    accepted = sum(1 for v in starts.values() if v is not None)
    return {"skipped": dict(skipped), "skipped_by_status": dict(by_status),
            "simulated": len(starts), "accepted": accepted,
            "rejected": len(starts) - accepted - past, "past_the_horizon": past,
            "starts": starts}  # fmt: skip


def replay(args: argparse.Namespace) -> dict:
    """Run the command on the log; the figures the records give."""
    with tempfile.TemporaryDirectory() as tmp:
        log = _plain(args.swf, tmp)
        with open(log, encoding="utf-8", errors="replace") as fh:
            info = header(fh.read(1 << 16))
        jobs = read_swf(log)
        if args.limit:
            jobs = jobs[: args.limit]
        nodes = args.nodes or int(float(info.get("MaxNodes") or info.get("MaxProcs") or 0))
        if nodes < 1:
            raise SystemExit(f"{args.swf}: no MaxNodes or MaxProcs in the header: give --nodes")
        pool_path = os.path.join(tmp, "pool.json")
        write_pool(pool_path, ResourcePool([[args.procs_per_node]] * nodes, ["cores"]))
        records = os.path.join(tmp, "records.jsonl")
        cmd = [sys.executable, "-m", "coalloc", "collective", "simulate", pool_path, log,
               "--records", records, "--procs-per-node", f"{args.procs_per_node:g}",
               "--max-wait", f"{args.max_wait:g}", "--limit", str(args.limit)]  # fmt: skip
        if args.horizon is not None:
            cmd += ["--horizon", f"{args.horizon:g}"]
        if args.simple:
            cmd.append("--simple")
        say(f"running: coalloc collective simulate ({len(jobs)} jobs, {nodes} nodes)")
        t0 = time.perf_counter()
        done = subprocess.run(cmd, capture_output=True, text=True, env={**os.environ})
        wall = time.perf_counter() - t0
        # the command's peak resident memory (the only child waited for so far; kB on Linux)
        peak_mib = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024.0
        if done.returncode != 0:
            raise SystemExit(f"the command failed ({done.returncode}): {done.stderr.strip()}")
        summary = json.loads(done.stdout[: done.stdout.rindex("}") + 1])
        with open(records, encoding="utf-8") as fh:
            rows = [json.loads(line) for line in bar(fh, desc="records", total=len(jobs))]
        ref = None
        if args.referee and args.procs_per_node == 1.0:
            say("referee: the log's text, replayed without the package")
            ref = referee(log, nodes, args.max_wait, args.limit, args.horizon)
    status = collections.Counter(STATUS.get(int(s), str(int(s))) for s in jobs[:, 10])
    skipped = [r for r in rows if r.get("simulated") is False]
    simulated = [r for r in rows if r.get("simulated") is not False]
    accepted = [r for r in simulated if r["accepted"]]
    rejected = collections.Counter(r["reason"] for r in simulated if not r["accepted"])
    # reserved for the requested time: the log gives one (field 9 > 0), whether or not it
    # equals the run time (comparing the two miscounted jobs that asked for what they used)
    asked = {int(j[0]): float(j[8]) for j in jobs}
    requested = sum(1 for r in simulated if asked.get(int(r["job"]), -1.0) > 0)
    delays = np.array([r["delay"] for r in accepted], dtype=float)
    ids = [int(r["job"]) for r in rows]
    check = None
    if ref is not None:  # every count, and every start, against the referee's
        got = {int(r["job"]): (r["start"] if r["accepted"] else None) for r in simulated}
        refused = sum(rejected.values()) - rejected.get("past the horizon", 0)
        check = {"skipped": ref["skipped"] == dict(collections.Counter(
                     r["reason"] for r in skipped)),
                 "simulated": ref["simulated"] == len(simulated),
                 "accepted": ref["accepted"] == len(accepted),
                 "rejected": ref["rejected"] == refused,
                 "past_the_horizon": ref["past_the_horizon"]
                 == rejected.get("past the horizon", 0),
                 "starts_differing": sum(1 for j, t in ref["starts"].items()
                                         if got.get(j, "missing") != t)}  # fmt: skip
    elif args.referee:
        check = "only with --procs-per-node 1 (whole nodes per processor)"
    return {
        "log": os.path.basename(args.swf),
        "header": {k: info[k] for k in ("Version", "Computer", "Installation", "MaxJobs",
                                         "MaxNodes", "MaxProcs", "StartTime", "EndTime",
                                         "Conversion") if k in info},  # fmt: skip
        "jobs_read": int(len(jobs)),
        "status_field": dict(status),
        "nodes": nodes,
        "procs_per_node": args.procs_per_node,
        "horizon_s": args.horizon,
        "records": len(rows),
        "job_numbers_kept": sorted(ids) == sorted(int(j) for j in jobs[:, 0]),
        "skipped": dict(collections.Counter(r["reason"] for r in skipped)),
        "skipped_by_status": dict(collections.Counter(
            STATUS.get(int(r["status"]), str(r["status"])) for r in skipped)),  # fmt: skip
        "simulated": len(simulated),
        "accepted": len(accepted),
        "rejected": dict(rejected),
        "past_the_horizon": int(rejected.get("past the horizon", 0)),
        "reserved_requested_time": requested,
        "reserved_run_time": len(simulated) - requested,
        "mean_delay_s": float(delays.mean()) if delays.size else None,
        "median_delay_s": float(np.median(delays)) if delays.size else None,
        "command_summary": {k: summary[k] for k in ("requests", "acceptance_rate",
                                                    "mean_delay") if k in summary},  # fmt: skip
        "referee": check,
        "wall_s": wall,
        "peak_rss_mib": peak_mib,
        "load_average": os.getloadavg(),
    }


def main(argv=None) -> int:
    """Command line: see the module docstring."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--swf", required=True,
                    help="a Parallel Workloads Archive log (.swf or .swf.gz); none ships with "
                    "the package")  # fmt: skip
    ap.add_argument("--limit", type=count(0, what="a number of jobs (0: all)"), default=2000,
                    help="replay the first LIMIT jobs (default 2000; 0: all)")  # fmt: skip
    ap.add_argument("--nodes", type=count(), default=None,
                    help="nodes of the pool (default: the header's MaxNodes, else MaxProcs)")
    ap.add_argument("--procs-per-node", type=Real(0.0, lo_open=True), default=1.0)
    ap.add_argument("--max-wait", type=Real(0.0), default=86400.0,
                    help="seconds a job may wait (t_l - t_e)")  # fmt: skip
    ap.add_argument("--horizon", type=seconds(), default=None,
                    help="the end of the pool's known future (s); jobs that cannot end by then "
                    "are rejected 'past the horizon'")  # fmt: skip
    ap.add_argument("--simple", action="store_true", help="simple requests, not collective")
    ap.add_argument("--no-referee", dest="referee", action="store_false",
                    help="skip the referee (the log replayed again without the package, its "
                    "counts and starts compared with the records)")  # fmt: skip
    ap.add_argument("--out", default=os.path.join(OUT, "swf_real.json"), help="JSON figures")
    add_quiet(ap)
    args = ap.parse_args(argv)
    fig = replay(args)
    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    with atomic_output(args.out) as fh:
        json.dump(fig, fh, indent=1)
    for key, value in fig.items():
        print(f"{key:24s} {value}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
