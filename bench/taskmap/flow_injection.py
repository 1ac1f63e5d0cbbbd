"""Measure the open choices of the flow-injection clustering (Taura & Chien, section 4.3).

The paper leaves the path metric and Delta open ("a (small) constant"). This script
measures, on graphs with planted clusters (node labels randomly permuted):

1. quality and time of every path metric x relative Delta x inherit combination;
2. absolute Delta (the paper's constant) against the relative default;
3. the compiled kernel against its pure-Python twin (same results, speed ratio);
4. scaling to 2,000-task sparse graphs.

Quality: ``contig`` = fraction of planted clusters that are one contiguous block of the
depth-first order, ``all`` = fraction of instances where every cluster is, ``node`` =
fraction of planted clusters that are exactly the task set of one tree node, ``ARI`` =
best adjusted Rand index between the planted labels and a cut of the tree (over levels).

Families (``--instances`` each):
  cliques   4-8 cliques of 5-12 tasks (weight 1), weak random edges (p=0.02, weight 0.1)
  sparse    4-8 random clusters of 8-16 tasks (p_in=0.5) and p_out=0.01, all weights 1
  (in both planted families every task gets >= 2 internal edges and more internal than
  external weight: a task without it is not in its cluster in any graph-theoretic sense)
  pipe1     Table 1 pipeline, c = 1 (coalloc.taskmap.generators.pipeline_task_graph)
  pipe16    Table 1 pipeline, c = 16

Run:  PYTHONPATH=src nice python -m bench.taskmap.flow_injection [--instances 20] [--quick]
Prints markdown tables on stdout.
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import scipy.sparse as sp

from bench.shared._progress import add_quiet, bar
from coalloc.taskmap import generators as gen
from coalloc.taskmap.clustering import DEFAULT_DELTA_SCALE, flow_injection

# ---------------------------------------------------------------------------- instances


def planted(rng, k_range, size, p_in, w_in, p_out, w_out):
    """Random planted-cluster graph with a chain of weak edges (connected), permuted."""
    k = int(rng.integers(k_range[0], k_range[1] + 1))
    sizes = rng.integers(size[0], size[1] + 1, k)
    lab = np.repeat(np.arange(k), sizes)
    n = lab.size
    same = lab[:, None] == lab[None, :]
    adj = np.triu(rng.random((n, n)) < np.where(same, p_in, p_out), 1)
    w = np.where(same, w_in, w_out) * adj
    bounds = np.concatenate([[0], np.cumsum(sizes)])
    for j in range(k - 1):
        u = rng.integers(bounds[j], bounds[j + 1])
        v = rng.integers(bounds[j + 1], bounds[j + 2])
        w[u, v] = max(w[u, v], w_out)
    w = w + w.T
    # Make every planted cluster a strong community: each task gets at least two internal
    # edges and more internal than external weight (else its membership is not in the
    # graph at all and no clustering can recover it).
    for i in range(n):
        mates = np.flatnonzero(same[i] & (np.arange(n) != i))
        while mates.size and (
            np.count_nonzero(w[i, mates]) < min(2, mates.size)
            or w[i, mates].sum() <= w[i, ~same[i]].sum()
        ):
            free = mates[w[i, mates] == 0]
            if not free.size:
                break
            j = rng.choice(free)
            w[i, j] = w[j, i] = w_in
    perm = rng.permutation(n)
    return w[np.ix_(perm, perm)], lab[perm]


def pipeline(rng, c):
    tasks, jobs = gen.pipeline_task_graph(c=c, seed=rng, return_jobs=True)
    perm = rng.permutation(tasks.n)
    w = tasks.comm.toarray()[np.ix_(perm, perm)]
    return w, jobs[perm], tasks.node_weight[perm]


def family(name, n_inst, seed=0):
    rng = np.random.default_rng([seed, sum(map(ord, name))])
    out = []
    for _ in range(n_inst):
        if name == "cliques":
            w, lab = planted(rng, (4, 8), (5, 12), 1.0, 1.0, 0.02, 0.1)
            out.append((w, lab, None))
        elif name == "sparse":
            w, lab = planted(rng, (4, 8), (8, 16), 0.5, 1.0, 0.01, 1.0)
            out.append((w, lab, None))
        elif name.startswith("pipe"):
            out.append(pipeline(rng, float(name[4:])))
    return out


# ------------------------------------------------------------------------------ quality


def ari(a, b):
    """Adjusted Rand index of two labelings."""
    _, ai = np.unique(a, return_inverse=True)
    _, bi = np.unique(b, return_inverse=True)
    table = sp.coo_matrix((np.ones(a.size), (ai, bi))).toarray()

    def comb(x):
        return (x * (x - 1) / 2).sum()

    sum_ij, sum_a, sum_b = comb(table), comb(table.sum(1)), comb(table.sum(0))
    expected = sum_a * sum_b / comb(np.array([a.size]))
    top = (sum_a + sum_b) / 2
    return 1.0 if top == expected else (sum_ij - expected) / (top - expected)


def quality(res, lab):
    order = res.order
    seq = lab[order]
    k = lab.max() + 1
    starts = np.r_[True, seq[1:] != seq[:-1]]
    contig = np.bincount(seq[starts], minlength=k) == 1
    tree = res.tree
    sets = {frozenset(tree.members(x).tolist()) for x in range(tree.n_nodes)}
    node = np.array([frozenset(np.flatnonzero(lab == j).tolist()) in sets for j in range(k)])
    best = max(ari(lab, tree.labels(level)) for level in range(tree.height + 1))
    return contig.mean(), float(contig.all()), node.mean(), best


def run(instances, **kw):
    q, t, inj = [], [], []
    for w, lab, nw in bar(instances, desc="instances", leave=False):
        t0 = time.perf_counter()
        res = flow_injection(w, node_weight=nw, **kw)
        t.append(time.perf_counter() - t0)
        inj.append(res.n_injections)
        q.append(quality(res, lab))
    q = np.array(q)
    return q.mean(0), 1e3 * float(np.mean(t)), float(np.mean(inj))


# ------------------------------------------------------------------------------- tables


def table_choices(fams, n_inst, scales, seeds):
    print("### 1. Path metric x relative Delta x inherit\n")
    print(
        f"{n_inst} instances per family x {len(seeds)} seeds; cells: contig / all / node / "
        "ARI, mean ms per call, mean injections.\n"
    )
    data = {f: family(f, n_inst) for f in fams}
    head = "| metric | delta_scale | inherit | " + " | ".join(fams) + " | ms (mean) | inj. |"
    print(head)
    print("|" + "---|" * (head.count("|") - 1))
    for metric in ("hops", "inverse_remaining", "inverse_weight"):
        for scale in scales:
            for inherit in (False, True):
                cells, ms, inj = [], [], []
                for f in fams:
                    qs = []
                    for s in seeds:
                        qv, m, i = run(
                            data[f], seed=s, metric=metric, delta_scale=scale, inherit=inherit
                        )
                        qs.append(qv)
                        ms.append(m)
                        inj.append(i)
                    c, a, nd, r = np.mean(qs, 0)
                    cells.append(f"{c:.3f} / {a:.2f} / {nd:.2f} / {r:.2f}")
                print(
                    f"| {metric} | {scale:g} | {inherit} | "
                    + " | ".join(cells)
                    + f" | {np.mean(ms):.2f} | {np.mean(inj):.0f} |"
                )
    print()


def table_absolute(fams, n_inst, seeds):
    print("### 2. Absolute Delta (paper: 'a small constant') vs the relative default\n")
    data = {f: family(f, n_inst) for f in fams}
    head = "| delta | " + " | ".join(fams) + " | ms (mean) | inj. |"
    print(head)
    print("|" + "---|" * (head.count("|") - 1))
    for delta in (None, 0.01, 0.05, 0.2, 1.0):
        cells, ms, inj = [], [], []
        for f in fams:
            qs = []
            for s in seeds:
                qv, m, i = run(data[f], seed=s, delta=delta)
                qs.append(qv)
                ms.append(m)
                inj.append(i)
            c, a, nd, r = np.mean(qs, 0)
            cells.append(f"{c:.3f} / {a:.2f} / {nd:.2f} / {r:.2f}")
        name = f"relative {DEFAULT_DELTA_SCALE:g} (default)" if delta is None else f"{delta:g}"
        print(f"| {name} | " + " | ".join(cells) + f" | {np.mean(ms):.2f} | {np.mean(inj):.0f} |")
    print()


def table_backends(n_inst):
    print("### 3. Compiled kernel vs pure-Python twin (default parameters)\n")
    print("| instances | tasks (mean) | compiled ms | python ms | speed-up | identical |")
    print("|---|---|---|---|---|---|")
    for name in ("cliques", "pipe16"):
        inst = family(name, n_inst, seed=7)
        tc = tp = 0.0
        same = True
        for w, _, nw in inst:
            t0 = time.perf_counter()
            a = flow_injection(w, node_weight=nw, seed=3)
            t1 = time.perf_counter()
            b = flow_injection(w, node_weight=nw, seed=3, backend="python")
            t2 = time.perf_counter()
            tc += t1 - t0
            tp += t2 - t1
            same &= np.array_equal(a.order, b.order) and np.array_equal(
                a.tree.parent, b.tree.parent
            )
        n_mean = np.mean([w.shape[0] for w, _, _ in inst])
        print(
            f"| {name} x {n_inst} | {n_mean:.0f} | {1e3 * tc / n_inst:.2f} | "
            f"{1e3 * tp / n_inst:.0f} | {tp / tc:.0f}x | {same} |"
        )
    print()


def big_sparse(rng, k=100, size=20, p_in=0.35, n_weak=300, w_weak=0.2):
    n = k * size
    lab = np.repeat(np.arange(k), size)
    rows, cols = [], []
    for j in range(k):
        r, c = np.nonzero(np.triu(rng.random((size, size)) < p_in, 1))
        rows.append(j * size + r)
        cols.append(j * size + c)
    vals = [np.ones(sum(r.size for r in rows))]
    u, v = rng.integers(0, n, n_weak), rng.integers(0, n, n_weak)
    ok = lab[u] != lab[v]
    chain = np.arange(k - 1)
    rows += [u[ok], chain * size]
    cols += [v[ok], (chain + 1) * size + 1]
    vals += [np.full(int(ok.sum()) + k - 1, w_weak)]
    w = sp.coo_matrix(
        (np.concatenate(vals), (np.concatenate(rows), np.concatenate(cols))), shape=(n, n)
    ).tocsr()
    w = w + w.T
    perm = rng.permutation(n)
    return w[perm][:, perm], lab[perm]


def table_scale():
    print("### 4. 2,000 tasks, sparse (100 clusters of 20, p_in=0.35, ~300 weak edges)\n")
    print("| metric | inherit | s per call | injections | contig |")
    print("|---|---|---|---|---|")
    w, lab = big_sparse(np.random.default_rng(11))
    for metric in ("hops", "inverse_remaining"):
        for inherit in (False, True):
            t0 = time.perf_counter()
            res = flow_injection(w, seed=1, metric=metric, inherit=inherit)
            dt = time.perf_counter() - t0
            seq = lab[res.order]
            runs = np.bincount(seq[np.r_[True, seq[1:] != seq[:-1]]], minlength=lab.max() + 1)
            print(
                f"| {metric} | {inherit} | {dt:.2f} | {res.n_injections} | "
                f"{np.mean(runs == 1):.2f} |"
            )
    print()


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_quiet(ap)
    ap.add_argument("--instances", type=int, default=20)
    ap.add_argument("--quick", action="store_true", help="fewer configurations and seeds")
    args = ap.parse_args()
    fams = ["cliques", "sparse", "pipe1", "pipe16"]
    scales = (0.05, 0.1, 0.5) if args.quick else (0.02, 0.05, 0.1, 0.25, 0.5, 1.0)
    seeds = (0,) if args.quick else (0, 1, 2)
    table_choices(fams, args.instances, scales, seeds)
    table_absolute(fams, args.instances, seeds)
    table_backends(3 if args.quick else 5)
    table_scale()


if __name__ == "__main__":
    main()
