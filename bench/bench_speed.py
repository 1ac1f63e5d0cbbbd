"""Compiled CTAAP-Solver against the plain NumPy version of the same algorithm, in one run.

Both run the same algorithm with the same parameters on the same instances (the paper's
Fig. 2 setup at n = 50 and Fig. 3 setup at n = 500). ``backend="numpy"`` uses the twins of
``coalloc._reference``: vectorised NumPy for step 1 and the violation counter, SciPy's
``linear_sum_assignment`` re-solved from scratch every cleanup round for the b-matching,
exactly as Alg. 2-3 of the paper describe. Reports median wall times and their ratio, and
checks every output with ``coalloc.verify``.

    python bench/bench_speed.py                # n = 50 and 500, default repeats
    python bench/bench_speed.py --sizes 50 --instances 5 --repeats 5
"""

from __future__ import annotations

import argparse
import platform
import statistics
import time

import coalloc
from coalloc.generators import fig2, fig3


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
    ap.add_argument("--sizes", type=int, nargs="+", default=[50, 500])
    ap.add_argument("--instances", type=int, default=None, help="instances per size")
    ap.add_argument("--repeats", type=int, default=None, help="repeats of the compiled solver")
    args = ap.parse_args()
    print(
        f"# {platform.platform()}, {platform.processor() or platform.machine()}, "
        f"Python {platform.python_version()}, coalloc {coalloc.__version__}"
    )
    header = (
        "n", "instances", "compiled median (ms)", "NumPy median (ms)", "ratio",
        "step1 / step2 / step3 compiled (ms)", "allocated compiled / NumPy",
    )  # fmt: skip
    print(row(*header))
    print(row(*["---"] * len(header)))
    for n in args.sizes:
        k = args.instances or (10 if n <= 100 else 3)
        reps = args.repeats or (21 if n <= 100 else 5)
        comp, nump, ratios, steps, alloc = [], [], [], [], []
        for seed in range(k):
            req, off = instance(n, seed)
            coalloc.solve(req, off, seed=0)  # warm-up (imports, caches)
            tc, rc = timed(req, off, reps)
            tn, rn = timed(req, off, 1 if n > 100 else 3, backend="numpy")
            comp.append(tc)
            nump.append(tn)
            ratios.append(tn / tc)
            steps.append(tuple(rc.timings[s] for s in ("step1", "step2", "step3")))
            alloc.append((rc.n_allocated, rn.n_allocated))
            print(
                f"  n={n} seed={seed}: compiled {tc * 1e3:.2f} ms, numpy {tn * 1e3:.1f} ms, "
                f"ratio {tn / tc:.1f}, allocated {rc.n_allocated}/{rn.n_allocated}",
                flush=True,
            )
        med = statistics.median
        steps_ms = " / ".join(f"{med(s[i] for s in steps) * 1e3:.2f}" for i in range(3))
        print(
            row(
                n, k, f"{med(comp) * 1e3:.2f}", f"{med(nump) * 1e3:.1f}",
                f"{med(ratios):.1f}x", steps_ms,
                f"{sum(a for a, _ in alloc) / k:.1f} / {sum(b for _, b in alloc) / k:.1f}",
            )
        )  # fmt: skip


if __name__ == "__main__":
    main()
