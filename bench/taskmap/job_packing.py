"""Witness mappings for the Table 1 pipelines from a joint job packing (issue 40 item 2,
h48bound): is the printed gap the bound's or the mapper's?

For a pipeline on an Internet-like graph (a tree: every link a bridge, one node per side)
and a level ``L``, a MILP (HiGHS; now :mod:`coalloc.taskmap.jobpack`'s) chooses for every
job ``j`` (the jobs of ``coalloc.taskmap.jobbound``) and every subtree ``S`` a count
``N_jS`` of its tasks in ``S`` (binary choices, those with ``cut_j[N] > L bw`` left out),
the counts of a subtree = its node's own + its children's, every job whole at the root,
``sum_j cut_j[N_jS] <= L bw`` on the link above ``S`` (the jobs *together*) and
the weight each processor keeps at most ``L c``. The volume between jobs is left out, so a
feasible answer is not a bound; each feasible answer is turned into a mapping (each
processor's own count of each job) and scored by ``verify_mapping`` beside the multilevel
mapper's answer and the default lower bound.

    PYTHONPATH=src:. nice python -m bench.taskmap.job_packing --instances 1:0 1:1 1:3 \\
        --levels 0.2125 0.24 0.2438
"""

from __future__ import annotations

import argparse
import time

from bench.shared._progress import add_quiet, bar, say
from coalloc.cli._common import seconds
from coalloc.taskmap import generators as gen
from coalloc.taskmap import verify_mapping
from coalloc.taskmap.bounds import lower_bound
from coalloc.taskmap.jobpack import _layout, _packing
from coalloc.taskmap.multilevel import map_multilevel


def packing(tasks, res, L: float, time_limit: float):
    """A mapping from the MILP at level ``L``, or None when it has no answer (the MILP of
    :mod:`coalloc.taskmap.jobpack`, which this script's first version wrote with
    ``N (k - N) v``; since 0daf467 a job's cut is its certified profile ``cut[N]``)."""
    layout = _layout(tasks, res)
    if layout is None:
        raise SystemExit("every task must be in a job and one processor per side (a pipeline)")
    return _packing(tasks, res, layout, L, time.perf_counter() + time_limit)


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--instances", nargs="+", default=["1:0", "1:1", "1:3"],
                    help="c:i of the Table 1 pipelines of vs_peers (seed 7000 + 100 c + i)")
    ap.add_argument("--levels", nargs="+", type=float, default=[0.2125, 0.24, 0.2438])
    ap.add_argument("--time-limit", type=seconds(), default=60.0, help="per MILP")
    add_quiet(ap)
    args = ap.parse_args(argv)
    say("| instance | L | MILP | witness mapping (verified) | mapper | default bound |")
    say("|---|---:|---|---:|---:|---:|")
    for spec in bar(args.instances, desc="instances", unit="inst"):
        c, i = (int(x) for x in spec.split(":"))
        tasks, res = gen.table1_instance(c, 7000 + 100 * c + i)
        ours = float(verify_mapping(tasks, res, map_multilevel(tasks, res).mapping).max_occupancy)
        lb = lower_bound(tasks, res)
        for L in args.levels:
            m = packing(tasks, res, L, args.time_limit)
            if m is None:
                say(f"| table1 c={c} #{i} | {L:g} | no answer | - | {ours:.4g} | {lb:.4g} |")
                continue
            rep = verify_mapping(tasks, res, m)
            if not rep.valid:
                raise SystemExit(f"invalid witness: {rep.problems}")
            say(f"| table1 c={c} #{i} | {L:g} | answer | {rep.max_occupancy:.4g} "
                f"| {ours:.4g} | {lb:.4g} |")  # fmt: skip


if __name__ == "__main__":
    main()
