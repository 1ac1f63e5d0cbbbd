"""Witness mappings for the Table 1 pipelines from a joint job packing (issue 40 item 2,
h48bound): is the printed gap the bound's or the mapper's?

For a pipeline on an Internet-like graph (a tree: every link a bridge, one node per side)
and a level ``L``, a MILP (HiGHS through ``scipy.optimize.milp``) chooses for every job
``j`` (the cliques of ``coalloc.taskmap.jobbound``) and every subtree ``S`` a count
``N_jS`` of its tasks in ``S`` (binary choices, those with ``N (k - N) v > L bw`` left out),
the counts of a subtree = its node's own + its children's, every job whole at the root,
``sum_j N_jS (k_j - N_jS) v_j <= L bw`` on the link above ``S`` (the jobs *together*) and
the weight each processor keeps at most ``L c``. The volume between jobs is left out, so a
feasible answer is not a bound; each feasible answer is turned into a mapping (each
processor's own count of each job) and scored by ``verify_mapping`` beside the multilevel
mapper's answer and the default lower bound.

    PYTHONPATH=src:. nice python -m bench.taskmap.job_packing --instances 1:0 1:1 1:3 \\
        --levels 0.2125 0.24 0.2438
"""

from __future__ import annotations

import argparse

import numpy as np
import scipy.sparse as sp
from scipy.optimize import Bounds, LinearConstraint, milp

from bench.shared._progress import add_quiet, bar, say
from coalloc.cli._common import seconds
from coalloc.taskmap import generators as gen
from coalloc.taskmap import verify_mapping
from coalloc.taskmap.bounds import lower_bound
from coalloc.taskmap.cutbound import _Sides
from coalloc.taskmap.jobbound import _jobs
from coalloc.taskmap.multilevel import map_multilevel


def packing(tasks, res, L: float, time_limit: float):
    """A mapping from the MILP at level ``L``, or None when it has no answer."""
    w = tasks.node_weight.astype(np.float64)
    jobs = _jobs(tasks)
    if sum(m.shape[0] for m, _ in jobs) != tasks.n:
        raise SystemExit("every task must be in a job (a pipeline)")
    sides = _Sides(res)
    n = sides.ncomp
    own = [[] for _ in range(n)]
    for q, c in enumerate(sides.pcomp.tolist()):
        own[c].append(q)
    if any(len(o) > 1 for o in own):
        raise SystemExit("one processor per side only (a tree of links)")
    kids = [[] for _ in range(n)]
    root = -1
    for c in range(n):
        if sides.parent[c] >= 0:
            kids[sides.parent[c]].append(c)
        else:
            root = c
    idx: dict = {}
    for j, (m, v) in enumerate(jobs):
        k = m.shape[0]
        for S in range(n):
            for N in range(k + 1):
                if (S == root and N == k) or (
                    S != root and N * (k - N) * v <= L * sides.bw_up[S]
                ):
                    idx[(j, S, N)] = len(idx)
    rows, lo, hi = [], [], []

    def counts(j, S, sign, scale):
        k = jobs[j][0].shape[0]
        return {idx[(j, S, N)]: sign * N * scale for N in range(k + 1) if (j, S, N) in idx}

    for j in range(len(jobs)):
        for S in range(n):
            rows.append({idx[key]: 1.0 for key in idx if key[0] == j and key[1] == S})
            lo.append(1.0)
            hi.append(1.0)
            kept = counts(j, S, 1.0, 1.0)
            for C in kids[S]:
                for q, x in counts(j, C, -1.0, 1.0).items():
                    kept[q] = kept.get(q, 0.0) + x
            rows.append(kept)
            lo.append(0.0)
            hi.append(np.inf if own[S] else 0.0)
    for S in range(n):
        if S != root:
            rows.append({idx[(j, S, N)]: N * (m.shape[0] - N) * v
                         for j, (m, v) in enumerate(jobs) for N in range(m.shape[0] + 1)
                         if (j, S, N) in idx})  # fmt: skip
            lo.append(-np.inf)
            hi.append(L * sides.bw_up[S])
        if own[S]:
            load: dict = {}
            for j, (m, _) in enumerate(jobs):
                wj = float(w[m].max())
                for q, x in counts(j, S, 1.0, wj).items():
                    load[q] = load.get(q, 0.0) + x
                for C in kids[S]:
                    for q, x in counts(j, C, -1.0, wj).items():
                        load[q] = load.get(q, 0.0) + x
            rows.append(load)
            lo.append(-np.inf)
            hi.append(L * float(sides.cap[own[S][0]]))
    A = sp.lil_matrix((len(rows), len(idx)))
    for r, coef in enumerate(rows):
        for q, x in coef.items():
            A[r, q] = x
    out = milp(np.zeros(len(idx)), constraints=LinearConstraint(A.tocsr(), lo, hi),
               integrality=np.ones(len(idx)), bounds=Bounds(0, 1),
               options={"time_limit": time_limit})  # fmt: skip
    if out.x is None:
        return None
    chosen = {(j, S): N for (j, S, N), q in idx.items() if out.x[q] > 0.5}
    mapping = np.full(tasks.n, -1, dtype=np.int64)
    procs = np.asarray(res.processors)
    for j, (m, _) in enumerate(jobs):
        free = m.tolist()
        for S in range(n):
            here = chosen.get((j, S), 0) - sum(chosen.get((j, C), 0) for C in kids[S])
            for _ in range(here):
                mapping[free.pop()] = procs[own[S][0]]
    return mapping


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
