"""Compiled CTAAP-Solver against the plain NumPy version of the same algorithm, in one run.

Both run the same algorithm with the same parameters on the same instances (the paper's
Fig. 2 setup at n = 50 and Fig. 3 setup at n = 500). ``backend="numpy"`` uses the twins of
``coalloc.ctaap._reference``: vectorised NumPy for step 1 and the violation counter, SciPy's
``linear_sum_assignment`` re-solved from scratch every cleanup round for the b-matching,
exactly as Alg. 2-3 of the paper describe. Reports median wall times and their ratio, and
checks every output with ``coalloc.verify``.

Two variants, each compiled against its own NumPy run:

* ``paper`` (``paper=True``): Alg. 1-3 exactly as the paper has them; the NumPy run is the
  plain NumPy implementation of the paper's algorithm.
* ``default``: the shipped defaults (the paper's algorithm, then the fill and the local
  search). Its NumPy run adds the *brute-force* twin of the local search (a checker written
  to be obviously correct, not fast), so that ratio says little about NumPy; it is measured
  only for n <= ``--numpy-default-max`` (100 unless told).

    python -m bench.ctaap.bench_speed                # n = 50 and 500, both variants
    python -m bench.ctaap.bench_speed --sizes 50 --instances 5 --repeats 5 --variants paper
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import time

import coalloc
from bench.shared._progress import add_quiet, bar, say
from coalloc.ctaap.generators import fig2, fig3

VARIANTS = {"paper": {"paper": True}, "default": {}}
STAGES = ("step1", "step2", "step3", "fill", "local_search")


def row(*cells) -> str:
    """One row of a Markdown table."""
    return "| " + " | ".join(str(c) for c in cells) + " |"


def instance(n: int, seed: int):
    return fig2(1 + seed % 5, n_tasks=n, seed=seed) if n <= 50 else fig3(n, seed=seed)


def timed(req, off, repeats: int, **params):
    times, res = [], None
    for _ in range(repeats):
        t0 = time.perf_counter()
        res = coalloc.solve(req, off, seed=0, **params)
        times.append(time.perf_counter() - t0)
    rep = coalloc.verify(req, off, res.assignment)
    assert rep.feasible, "infeasible output"
    return statistics.median(times), res


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_quiet(ap)
    ap.add_argument("--sizes", type=int, nargs="+", default=[50, 500])
    ap.add_argument("--instances", type=int, default=None, help="instances per size")
    ap.add_argument("--repeats", type=int, default=None, help="repeats of the compiled solver")
    ap.add_argument("--variants", nargs="+", choices=list(VARIANTS), default=list(VARIANTS))
    ap.add_argument(
        "--numpy-default-max", type=int, default=100,
        help="largest n at which the default variant is also run on the NumPy twins",
    )  # fmt: skip
    args = ap.parse_args()
    print(
        f"# {platform.platform()}, {platform.processor() or platform.machine()}, "
        f"{os.cpu_count()} CPUs, Python {platform.python_version()}, "
        f"coalloc {coalloc.__version__}; load average {os.getloadavg()}"
    )
    header = (
        "variant", "n", "instances", "compiled median (ms)", "NumPy median (ms)",
        "ratio (median of per-instance)",
        "step1 / step2 / step3 / fill / local search compiled (ms)",
        "allocated compiled / NumPy",
    )  # fmt: skip
    table = []
    for n in args.sizes:
        k = args.instances or (10 if n <= 100 else 3)
        reps = args.repeats or (21 if n <= 100 else 5)
        keys = ("comp", "nump", "ratio", "steps", "alloc")
        acc = {v: {key: [] for key in keys} for v in args.variants}
        for seed in bar(range(k), desc=f"n={n}", unit="inst", leave=False):
            req, off = instance(n, seed)
            coalloc.solve(req, off, seed=0)  # warm-up (imports, caches)
            for v in args.variants:
                params = VARIANTS[v]
                a = acc[v]
                tc, rc = timed(req, off, reps, **params)
                a["comp"].append(tc)
                a["steps"].append(tuple(rc.timings[s] for s in STAGES))
                line = f"  {v} n={n} seed={seed}: compiled {tc * 1e3:.2f} ms"
                if v == "paper" or n <= args.numpy_default_max:
                    tn, rn = timed(req, off, 1 if n > 100 else 3, backend="numpy", **params)
                    a["nump"].append(tn)
                    a["ratio"].append(tn / tc)
                    a["alloc"].append((rc.n_allocated, rn.n_allocated))
                    line += f", numpy {tn * 1e3:.1f} ms, ratio {tn / tc:.1f}"
                    line += f", allocated {rc.n_allocated}/{rn.n_allocated}"
                else:
                    a["alloc"].append((rc.n_allocated, None))
                    line += f", allocated {rc.n_allocated}"
                say(line)
        med = statistics.median
        for v in args.variants:
            a = acc[v]
            steps_ms = " / ".join(
                f"{med(s[i] for s in a['steps']) * 1e3:.2f}" for i in range(len(STAGES))
            )
            comp_alloc = sum(x for x, _ in a["alloc"]) / k
            if a["nump"]:
                nump_alloc = sum(y for _, y in a["alloc"]) / k
                cells = (
                    f"{med(a['nump']) * 1e3:.1f}", f"{med(a['ratio']):.1f}x",
                    f"{comp_alloc:.1f} / {nump_alloc:.1f}",
                )  # fmt: skip
            else:
                cells = ("not run", "-", f"{comp_alloc:.1f} / -")
            table.append(
                (v, n, k, f"{med(a['comp']) * 1e3:.2f}", cells[0], cells[1], steps_ms, cells[2])
            )
    print()
    print(row(*header))
    print(row(*["---"] * len(header)))
    for r in table:
        print(row(*r))


if __name__ == "__main__":
    main()
