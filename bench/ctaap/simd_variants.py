"""Step-1 time of the default solve with each SIMD path of the softassign kernels forced.

    python bench/ctaap/simd_variants.py [--seeds 20] [--repeats 5]

For n = 50 (``fig2(2, seed=s)``) and n = 500 (``fig3(500, seed=s)``) and every path this
CPU has (``_simd_level`` caps the run-time choice), ``coalloc.ctaap.solve(request, offer,
seed=0)`` is run ``repeats`` times per seed, the paths interleaved so that drift in the
machine's load hits them alike; ``result.timings["step1"]`` is collected. Prints the
median per path and size, its ratio to the next-lower path, and the load average before
and after. Every path must give the same weights (checked here too).
"""

import argparse
import statistics

import numpy as np

from bench.shared._progress import add_quiet, bar
from coalloc.ctaap import _softassign, generators, solve

NAMES = {0: "portable", 1: "SSE2", 2: "AVX"}
SIZES = {50: ("fig2", 2), 500: ("fig3", 500)}


def loadavg():
    with open("/proc/loadavg") as f:
        return " ".join(f.read().split()[:3])


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_quiet(ap)
    ap.add_argument("--seeds", type=int, default=20)
    ap.add_argument("--repeats", type=int, default=5)
    args = ap.parse_args()
    best = _softassign._simd_level()
    levels = list(range(best + 1))
    print(f"paths on this CPU: {', '.join(NAMES[lv] for lv in levels)}")
    print(f"load average before: {loadavg()}")
    times = {(n, lv): [] for n in SIZES for lv in levels}
    try:
        for n, (gen, arg) in SIZES.items():
            for s in bar(range(args.seeds), desc=f"n={n}", unit="seed", leave=False):
                req, off = getattr(generators, gen)(arg, seed=s)
                ref = None
                for _ in range(args.repeats):
                    for lv in levels:
                        _softassign._simd_level(lv)
                        res = solve(req, off, seed=0)
                        times[n, lv].append(res.timings["step1"])
                        if ref is None:
                            ref = res.weights
                        elif not np.array_equal(ref, res.weights):
                            raise SystemExit(f"{NAMES[lv]} path differs: n={n}, seed={s}")
    finally:
        _softassign._simd_level(max(NAMES))
    print(f"load average after: {loadavg()}")
    samples = args.seeds * args.repeats
    print(f"\nmedian step 1 [ms] over {args.seeds} seeds x {args.repeats} repeats ({samples})")
    print("| path | n = 50 | vs next lower | n = 500 | vs next lower |")
    print("| --- | ---: | ---: | ---: | ---: |")
    for lv in levels:
        row = [NAMES[lv]]
        for n in SIZES:
            med = statistics.median(times[n, lv]) * 1e3
            row.append(f"{med:.3f}")
            if lv == 0:
                row.append("")
            else:
                lower = statistics.median(times[n, lv - 1]) * 1e3
                row.append(f"{med / lower:.3f}")
        print("| " + " | ".join(row) + " |")


if __name__ == "__main__":
    main()
