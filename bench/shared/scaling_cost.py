"""Fit the per-family cost models of the batch layer: solve time against instance size.

For every family, instances of several sizes are solved serially with the family's default
method (each the fastest of ``--repeats`` solves, so background load counts least), and
``seconds = c + a * size ** b`` is fitted (relative errors), where ``size`` is
the family's ``cost_size(instance)`` (its ``_spec.py``). The coefficients printed are what
each ``_spec.py`` ships as ``COST_MODEL`` (:mod:`coalloc.batch.cost` reads them); the table
gives, per instance, the measured and the predicted time and their ratio.

    python -m bench.shared.scaling_cost                      # every family
    python -m bench.shared.scaling_cost --families ctaap --repeats 5
"""

from __future__ import annotations

import argparse
import importlib
import os
import time
from typing import Any, Callable, Dict, List

import numpy as np

from bench.shared._progress import add_quiet, bar, say
from coalloc.batch.cost import predicted_cost


def _ctaap() -> List[Any]:
    from coalloc.ctaap import Instance
    from coalloc.ctaap.generators import fig2, fig3

    out = [Instance(*fig2(1, n_tasks=n, n_clusters=m, seed=n + m))
           for n, m in ((5, 2), (10, 3), (20, 4), (50, 5), (100, 5))]  # fmt: skip
    return out + [Instance(*fig3(n, seed=n)) for n in (200, 350, 500)]


def _taskmap() -> List[Any]:
    from coalloc.taskmap import Instance
    from coalloc.taskmap import generators as g

    out = []
    for n_wan, n_lan, lan, clusters, size in (
        (2, 2, (3, 5), (2, 3), (2, 4)),
        (4, 4, (5, 10), (3, 5), (3, 6)),
        (10, 10, (10, 20), (5, 10), (5, 10)),
    ):
        graph = g.internet_resource_graph(n_wan=n_wan, n_lan=n_lan, lan_size=lan, seed=1)
        for s in range(2):
            out.append(Instance(g.pipeline_task_graph(seed=s, n_clusters=clusters,
                                                      cluster_size=size), graph))  # fmt: skip
    return out


def _collective() -> List[Any]:
    from coalloc.collective import Instance
    from coalloc.collective import generators as g

    out = []
    for nodes, slots, count in ((40, 48, 4), (150, 96, 4), (606, 288, 8)):
        pool = g.table1_pool(nodes, n_slots=slots, seed=1)
        out += [Instance(c[0], pool) for c in g.section42_requests(pool, count, n_cases=2, seed=2)]
    return out


def _testbed() -> List[Any]:
    from coalloc.testbed import Instance
    from coalloc.testbed import generators as g

    out = []
    for pcs, switches, size in ((30, 2, 6), (100, 3, 20), (255, 5, 80)):
        ptop = g.deterlab(pcs, switches, seed=1)
        out += [Instance(w[2], ptop) for w in g.workload(4, seed=2, max_size=size)]
    return out


def _loadshare() -> List[Any]:
    from coalloc.loadshare import Instance
    from coalloc.loadshare import generators as g
    from coalloc.loadshare.gap import generate_gap
    from coalloc.loadshare.solvers import GapProblem

    out = [Instance(g.paper_setup(n, seed=1)) for n in (40, 100, 250, 500)]
    return out + [
        GapProblem(generate_gap("a", m, n, seed=1)) for m, n in ((3, 10), (5, 40), (10, 100))
    ]


BUILDERS: Dict[str, Callable[[], List[Any]]] = {
    "ctaap": _ctaap,
    "taskmap": _taskmap,
    "collective": _collective,
    "testbed": _testbed,
    "loadshare": _loadshare,
}


def measure(instance: Any, repeats: int) -> float:
    """The fastest of ``repeats`` default solves (seconds)."""
    best = float("inf")
    for r in range(repeats):
        start = time.perf_counter()
        instance.solve(None, seed=r)
        best = min(best, time.perf_counter() - start)
    return best


def fit(sizes: List[float], seconds: List[float]) -> tuple:
    """``(c, a, b)`` of ``seconds = c + a * size ** b``: least squares on the logarithms
    (relative errors count alike at every size), ``c``, ``a`` non-negative, ``b`` in [0, 3]."""
    from scipy.optimize import least_squares

    x, y = np.asarray(sizes, float), np.log(np.asarray(seconds, float))

    def residuals(p):
        return np.log(np.exp(p[0]) + np.exp(p[1]) * x ** p[2]) - y

    start = [np.log(min(seconds) / 2), np.log(min(seconds) / 2 / max(x.min(), 1.0)), 1.0]
    out = least_squares(residuals, start, bounds=([-30, -40, 0.0], [5, 5, 3.0]))
    c, a, b = out.x
    return float(np.exp(c)), float(np.exp(a)), float(b)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--families", nargs="+", default=list(BUILDERS), choices=list(BUILDERS))
    ap.add_argument("--repeats", type=int, default=3)
    add_quiet(ap)
    args = ap.parse_args(argv)
    print(f"machine: {os.cpu_count()} CPUs, load average {os.getloadavg()}")
    progress = bar(total=len(args.families))
    for family in args.families:
        spec = importlib.import_module(f"coalloc.{family}._spec")
        rows: Dict[str, list] = {}
        for inst in BUILDERS[family]():
            kind = type(inst).__name__
            rows.setdefault(kind, []).append((spec.cost_size(inst), measure(inst, args.repeats)))
            rows[kind][-1] += (predicted_cost(inst),)
        for kind, pairs in rows.items():
            c, a, b = fit([p[0] for p in pairs], [p[1] for p in pairs])
            say(f"\n{family} {kind}: COST_MODEL {kind!r}: ({c:.3g}, {a:.3g}, {b:.3g})")
            say("| size | measured ms | predicted ms (fit) | shipped model ms | ratio |")
            say("|---:|---:|---:|---:|---:|")
            for size, t, shipped in pairs:
                say(f"| {size:,.0f} | {t * 1e3:.3f} | {(c + a * size**b) * 1e3:.3f} | "
                    f"{shipped * 1e3:.3f} | {t / shipped:.2f} |")  # fmt: skip
        progress.update(1)
    progress.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
