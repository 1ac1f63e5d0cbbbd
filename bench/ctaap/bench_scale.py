"""How the CTAAP-Solver scales: the n = 10,000 / M = 100 target and growth with n and M.

(a) Target case: n = 10,000 tasks, M = 100 clusters, sparse request of mean degree 10
    (``random_instance(n, M, edge_probability=10 / (n - 1), capacity_range=(50, 150))``,
    capacities near n / M). Each measurement runs in a fresh subprocess that generates the
    instance, records its RSS high-water mark (``resource.getrusage(RUSAGE_SELF).ru_maxrss``:
    Python + NumPy + coalloc + the instance), solves once with the default parameters, and
    records the high-water mark again; time is the median over the runs.
(b) Growth: n in 100 .. 10,000 at M = 20 and M in 5 .. 200 at fixed n, sparse (mean degree
    10) and dense (edge probability 0.5, capped in size: the request alone is n^2 / 2 links),
    capacities near n / M. One solve per point, in the same subprocess way. Markdown table on
    stdout (time, per-step times, allocation size, cleanup rounds, peak RSS) and a log-log
    plot in bench/out/scale.png.

    python -m bench.ctaap.bench_scale              # everything (about 10 minutes on 1 core)
    python -m bench.ctaap.bench_scale --quick      # small sizes only (about a minute)
    python -m bench.ctaap.bench_scale --target-only --runs 5
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys

from bench.shared._progress import add_quiet, bar, say

HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(HERE, "out")

CHILD = r"""
import json, resource, sys, time
import coalloc
from coalloc.ctaap.generators import random_instance

n, m, p, seed, kw = json.loads(sys.argv[1])
lo, hi = max(1, n // (2 * m)), max(1, (3 * n) // (2 * m))
req, off = random_instance(n, m, edge_probability=min(1.0, p), capacity_range=(lo, hi),
                           seed=seed)
base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
t0 = time.perf_counter()
res = coalloc.solve(req, off, seed=0, **kw)
wall = time.perf_counter() - t0
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
assert coalloc.verify(req, off, res.assignment).feasible
print(json.dumps({
    "wall": wall, "timings": res.timings, "allocated": res.n_allocated,
    "rounds": res.iterations.get("cleanup_rounds", 0), "nnz": int(req.bandwidth.nnz),
    "base_kib": base, "peak_kib": peak,
}))
"""


def measure(n: int, m: int, p: float, seed: int = 0, **kw) -> dict:
    """One solve in a fresh interpreter; returns its JSON report."""
    env = dict(os.environ)
    src = os.path.join(os.path.dirname(HERE), "src")
    env["PYTHONPATH"] = src + os.pathsep + env.get("PYTHONPATH", "")
    out = subprocess.run(
        [sys.executable, "-c", CHILD, json.dumps([n, m, p, seed, kw])],
        check=True, capture_output=True, text=True, env=env,
    )  # fmt: skip
    return json.loads(out.stdout.strip().splitlines()[-1])


def row(*cells) -> str:
    """One row of a Markdown table."""
    return "| " + " | ".join(str(c) for c in cells) + " |"


def mib(kib: float) -> str:
    return f"{kib / 1024:.0f}"


def target(runs: int, n: int, m: int) -> None:
    print(f"\n## Target: n = {n}, M = {m}, sparse (mean degree 10), {runs} runs\n")
    header = (
        "run", "seconds", "step1", "step2", "step3", "fill", "local search", "allocated",
        "cleanup rounds", "RSS before solve (MiB)", "peak RSS (MiB)",
    )  # fmt: skip
    print(row(*header))
    print(row(*["---"] * len(header)))
    reps = []
    for r in bar(range(runs), desc="target", unit="run", leave=False):
        rep = measure(n, m, 10 / (n - 1))
        t = rep["timings"]
        reps.append(rep)
        say(
            row(
                r, f"{rep['wall']:.2f}", *(f"{t[k]:.2f}" for k in
                                           ("step1", "step2", "step3", "fill", "local_search")),
                rep["allocated"], rep["rounds"], mib(rep["base_kib"]), mib(rep["peak_kib"]),
            ),
        )  # fmt: skip
    med = statistics.median
    print(
        f"\nmedian {med(r['wall'] for r in reps):.2f} s, peak RSS "
        f"{mib(max(r['peak_kib'] for r in reps))} MiB (of which "
        f"{mib(max(r['base_kib'] for r in reps))} MiB before the solve: Python, NumPy, "
        "coalloc and the instance)"
    )


def growth(quick: bool) -> list:
    """The (n, M, kind) grid; returns the measured rows."""
    if quick:
        n_sweep = [100, 300, 1000]
        m_sweep = [5, 10, 20, 50]
        n_fixed, dense_n_max, dense_n_fixed = 500, 1000, 300
    else:
        n_sweep = [100, 300, 1000, 3000, 10000]
        m_sweep = [5, 10, 20, 50, 100, 200]
        n_fixed, dense_n_max, dense_n_fixed = 2000, 2000, 1000
    points = []
    for kind in ("sparse", "dense"):
        for n in n_sweep:
            if kind == "dense" and n > dense_n_max:
                continue
            points.append(("n", kind, n, 20))
        nf = n_fixed if kind == "sparse" else dense_n_fixed
        for m in m_sweep:
            points.append(("M", kind, nf, m))
    header = (
        "sweep", "request", "n", "M", "links", "seconds", "step1", "step2", "step3",
        "local search", "allocated", "cleanup rounds", "peak RSS (MiB)",
    )  # fmt: skip
    print("\n## Growth (one solve per point, default parameters)\n")
    print(row(*header))
    print(row(*["---"] * len(header)))
    rows = []
    for sweep, kind, n, m in bar(points, desc="growth", unit="point", leave=False):
        p = 10 / (n - 1) if kind == "sparse" else 0.5
        rep = measure(n, m, p)
        t = rep["timings"]
        rows.append((sweep, kind, n, m, rep))
        say(
            row(
                sweep, kind, n, m, rep["nnz"] // 2, f"{rep['wall']:.3f}",
                *(f"{t[k]:.3f}" for k in ("step1", "step2", "step3", "local_search")),
                rep["allocated"], rep["rounds"], mib(rep["peak_kib"]),
            ),
        )  # fmt: skip
    print(
        f"\nDense requests stop at n = {max(r[2] for r in rows if r[1] == 'dense')} "
        "(n^2 / 2 links and an nnz x M rank table)."
    )
    return rows


def plot(rows: list) -> None:
    from bench.shared._plot import pyplot

    plt = pyplot()
    if plt is None:
        return
    fig, axes = plt.subplots(1, 2, figsize=(10, 4))
    for ax, sweep, xkey in ((axes[0], "n", 2), (axes[1], "M", 3)):
        for kind, style in (("sparse", "o-"), ("dense", "s--")):
            pts = [(r[xkey], r[4]["wall"]) for r in rows if r[0] == sweep and r[1] == kind]
            if pts:
                ax.loglog(*zip(*pts), style, label=f"{kind} request, total")
            pts = [(r[xkey], r[4]["timings"]["step2"] + r[4]["timings"]["step3"])
                   for r in rows if r[0] == sweep and r[1] == kind]  # fmt: skip
            if pts:
                ax.loglog(*zip(*pts), style, alpha=0.4, label=f"{kind}, steps 2-3")
        fixed = "M = 20" if sweep == "n" else "n fixed (sparse / dense: see table)"
        ax.set_xlabel("n (tasks)" if sweep == "n" else "M (clusters)")
        ax.set_ylabel("seconds")
        ax.set_title(f"growth with {sweep} ({fixed})")
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=8)
    fig.tight_layout()
    os.makedirs(OUT, exist_ok=True)
    path = os.path.join(OUT, "scale.png")
    fig.savefig(path, dpi=120)
    print(f"plot: {path}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_quiet(ap)
    ap.add_argument("--quick", action="store_true", help="small sizes only")
    ap.add_argument("--runs", type=int, default=None, help="runs of the target case")
    ap.add_argument("--target-only", action="store_true")
    ap.add_argument("--growth-only", action="store_true")
    args = ap.parse_args()
    import coalloc

    print(
        f"# {platform.platform()}, {platform.processor() or platform.machine()}, "
        f"{os.cpu_count()} CPUs, Python {platform.python_version()}, "
        f"coalloc {coalloc.__version__}; load average {os.getloadavg()}"
    )
    if not args.growth_only:
        if args.quick:
            target(args.runs or 1, 2000, 20)
        else:
            target(args.runs or 3, 10000, 100)
    if not args.target_only:
        plot(growth(args.quick))


if __name__ == "__main__":
    main()
