"""Issue 40: the GAP heuristic's best-so-far gap against time, and how far apart its answers lie.

For each ``--only`` instance of ``--sets`` and each seed, one timed call
``solve_gap(method="heuristic", time_limit=T, seed=s)`` (``--b MODULE._KNOB=VALUE``: with
that knob, as in :mod:`bench.loadshare.knob_ab`); its trajectory gives the best answer it
held at each of ``--at`` seconds (a share of one long call: a call of that limit runs its
phases on another schedule, so the figure at t is not the answer of a call of t seconds).
Printed per instance: the median over the seeds of the gap to the best known value
(``100 (z - best known) / best known``) at each time, the median time of the last
improvement, then the mean over the instances; and the Hamming distances (items assigned
to different agents) between the seeds' final answers and from each to the best of them.
Every answer is checked by ``verify_gap``. Record the load beside the figures: the
iterations follow the CPU. ``--json`` keeps the rows (trajectories and answers).

    PYTHONPATH=src:. python -m bench.loadshare.time_to_target --gapdata /work/peers/gapdata \\
        --sets chu1997 --only d10100 d20100 --limit 10 --seeds 0 1 2 3 4 --at 0.5 1 2 5 10
"""

from __future__ import annotations

import argparse
import json
import os
import time

import numpy as np

from bench.loadshare.gap_published import best_known
from bench.loadshare.knob_ab import knob, run
from bench.shared._progress import add_quiet, bar, say
from coalloc.cli._common import count, seconds
from coalloc.loadshare import read_gap, verify_gap


def gap_at(traj: np.ndarray, t: float, bk: float) -> float:
    """The gap (%) of the best answer a trajectory ``(seconds, objective)`` held by ``t``
    (NaN: none yet)."""
    v = traj[traj[:, 0] <= t, 1] if len(traj) else traj[:, 1]
    return float(100 * (v.min() - bk) / bk) if len(v) else float("nan")


def hamming(answers: np.ndarray, objs: np.ndarray) -> tuple:
    """(pairwise distances, distances to the best answer) between the rows of
    ``answers``."""
    k = len(answers)
    pairs = [int((answers[i] != answers[j]).sum()) for i in range(k) for j in range(i + 1, k)]
    b = int(np.argmin(objs))
    return pairs, [int((answers[i] != answers[b]).sum()) for i in range(k)]


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--gapdata", default=os.environ.get("COALLOC_GAPDATA"),
                    help="fontanf/generalizedassignmentsolver's data/ folder")  # fmt: skip
    ap.add_argument("--sets", default="chu1997", help="the data folder's set (one)")
    ap.add_argument("--only", nargs="+", required=True, help="instance names of the set")
    ap.add_argument("--limit", type=seconds(), default=10.0)
    ap.add_argument("--seeds", nargs="+", type=count(0), default=[0])
    ap.add_argument("--at", nargs="+", type=float, default=[1.0, 2.0, 5.0, 10.0],
                    help="seconds at which the best-so-far gap is read")  # fmt: skip
    ap.add_argument("--b", nargs="*", type=knob, default=[], metavar="MODULE._KNOB=VALUE")
    ap.add_argument("--json", help="write the rows (trajectories, answers) here")
    add_quiet(ap)
    args = ap.parse_args(argv)
    if not args.gapdata:
        ap.error("give --gapdata or COALLOC_GAPDATA")
    best = best_known(args.gapdata)
    say(f"load average at start: {os.getloadavg()[0]:.2f}")
    rows, means = [], {t: [] for t in args.at}
    for name in bar(args.only, desc="instances"):
        key = f"{args.sets}/{name}"
        inst = read_gap(os.path.join(args.gapdata, key))[0]
        bk = best[key]
        got = []
        for seed in args.seeds:
            t0 = time.perf_counter()
            res = run(inst, args.limit, seed, None, args.b)
            wall = time.perf_counter() - t0
            assert res.assignment is not None
            assert verify_gap(inst, res.assignment, claimed=res.objective).ok
            tr = res.trajectory[~np.isnan(res.trajectory[:, 1]), :2]
            got.append((tr, res.assignment, float(res.objective)))
            rows.append(dict(name=key, seed=seed, best_known=bk, objective=float(res.objective),
                             wall=wall, load=os.getloadavg()[0], trajectory=tr.tolist(),
                             assignment=res.assignment.tolist()))  # fmt: skip
        cells = []
        for t in args.at:
            med = float(np.median([gap_at(tr, t, bk) for tr, _, _ in got]))
            means[t].append(med)
            cells.append(f"{t:g} s {med:.3f}")
        last = np.median([tr[np.argmin(tr[:, 1]), 0] for tr, _, _ in got])
        say(f"{key}: median gap % at " + ", ".join(cells) + f"; last improvement {last:.2f} s")
        if len(got) > 1:
            pairs, to_best = hamming(np.array([a for _, a, _ in got]),
                                     np.array([z for _, _, z in got]))  # fmt: skip
            say(f"  answers {[z for _, _, z in got]}; Hamming between them (of {inst.n} items) "
                f"min / median / max {min(pairs)} / {int(np.median(pairs))} / {max(pairs)}; "
                f"to the best {to_best}")  # fmt: skip
    say("mean over the instances: " + ", ".join(
        f"{t:g} s {np.mean(v):.3f}" for t, v in means.items()))  # fmt: skip
    say(f"load average at end: {os.getloadavg()[0]:.2f}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f)


if __name__ == "__main__":
    main()
