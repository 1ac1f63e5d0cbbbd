"""Issue 36: the default bound's cost against the solve's own time, Fig. 2 and Fig. 3 batches.

In one process, for each instance of the batch: the default solve
(``coalloc.ctaap.solve``, no bound), then :func:`coalloc.ctaap.bounds.best_bound` at
``--effort`` on the same instance, given the solve's allocated count as ``at_least``
where the checkout takes it (the work ``solve(..., bound=True)`` and ``ctaap
solve-batch --bound`` add), each timed with :func:`time.perf_counter` (wall) and
:func:`time.process_time` (CPU, every thread: steadier on a loaded machine); ``--profile`` adds
where the bound's time goes (the functions of :mod:`coalloc.ctaap.bounds` and what they
call, cumulative). Prints the two totals, their ratio, the sum of the bounds and their
digest (the same digest on every run, at any load: the bound is a function of the
instance and ``effort``), and the load average. ``--src`` times another checkout's package
in a child process the same way (before/after).

    python -m bench.ctaap.bound_cost --figure 2 --count 300
    python -m bench.ctaap.bound_cost --figure 3 --count 100 --profile
    python -m bench.ctaap.bound_cost --figure 2 --count 300 --src /path/to/old/src
"""

from __future__ import annotations

import argparse
import hashlib
import inspect
import json
import os
import subprocess
import sys
import time
from typing import List, Optional

from bench.shared._progress import add_quiet, bar
from coalloc.cli._common import count, seconds

#: The Fig. 3 batch's request sizes, in turn (the paper's sizes up to 300 tasks).
FIG3_SIZES = (10, 20, 30, 40, 50, 75, 100, 150, 200, 300)


def instances(figure: int, n: int) -> list:
    """The batch: Fig. 2 (range factors 1..5 in turn, seeds 360000 + k, as
    ``bench.ctaap.bound_batch``) or Fig. 3 (:data:`FIG3_SIZES` in turn, seeds 370000 + k)."""
    import coalloc.ctaap as ct

    if figure == 2:
        return [ct.generators.fig2(1 + k % 5, seed=360000 + k) for k in range(n)]
    return [ct.generators.fig3(FIG3_SIZES[k % len(FIG3_SIZES)], seed=370000 + k) for k in range(n)]


def measure(figure: int, n: int, effort: float, profile: bool) -> dict:
    """Solve and bound every instance; totals, bounds and (``profile``) the bound's profile."""
    import coalloc.ctaap as ct
    from coalloc.ctaap.bounds import best_bound

    batch = instances(figure, n)
    takes = "at_least" in inspect.signature(best_bound).parameters

    def known(res) -> dict:  # what solve(..., bound=True) passes (a checkout that takes it)
        return {"at_least": int(res.n_allocated)} if takes else {}

    # one untimed warm-up (imports, first kernel calls) so that neither total pays for them
    r0, o0 = ct.generators.fig2(1, seed=1)
    ct.solve(r0, o0, seed=0)
    best_bound(r0, o0, effort=effort)
    t_solve = t_bound = c_solve = c_bound = 0.0
    bounds: List[int] = []
    allocated = 0
    prof = None
    if profile:
        import cProfile

        prof = cProfile.Profile()
    for request, offer in bar(batch, desc=f"fig{figure}", unit="inst", leave=False):
        c0, t0 = time.process_time(), time.perf_counter()
        res = ct.solve(request, offer, seed=0)
        c1, t1 = time.process_time(), time.perf_counter()
        if prof is not None:
            prof.enable()
        info = best_bound(request, offer, effort=effort, **known(res))
        if prof is not None:
            prof.disable()
        c2, t2 = time.process_time(), time.perf_counter()
        t_solve += t1 - t0
        t_bound += t2 - t1
        c_solve += c1 - c0
        c_bound += c2 - c1
        bounds.append(int(info["bound"]))
        allocated += int(res.n_allocated)
    out = {
        "figure": figure,
        "count": n,
        "effort": effort,
        "solve_s": t_solve,
        "bound_s": t_bound,
        "ratio": t_bound / t_solve if t_solve else float("nan"),
        "solve_cpu_s": c_solve,
        "bound_cpu_s": c_bound,
        "cpu_ratio": c_bound / c_solve if c_solve else float("nan"),
        "sum_bounds": sum(bounds),
        "sum_allocated": allocated,
        "met": sum(b <= 0 for b in bounds),
        "digest": hashlib.sha256(json.dumps(bounds).encode()).hexdigest()[:16],
        "bounds": bounds,
    }
    if prof is not None:
        import io
        import pstats

        text = io.StringIO()
        pstats.Stats(prof, stream=text).sort_stats("cumulative").print_stats(r"bounds|exact", 25)
        out["profile"] = text.getvalue()
    return out


def main(argv: Optional[List[str]] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--figure", type=int, choices=(2, 3), default=2)
    ap.add_argument("--count", type=count(), default=300, help="instances (default 300)")
    ap.add_argument("--effort", type=seconds("a positive number"), default=1.0)
    ap.add_argument("--profile", action="store_true", help="where the bound's time goes")
    ap.add_argument("--src", default=None, help="PYTHONPATH of another checkout to time")
    ap.add_argument("--json", default=None, help="also write the record here")
    add_quiet(ap)
    args = ap.parse_args(argv)
    load0 = os.getloadavg()
    if args.src:
        code = (
            "import json, sys; from bench.ctaap.bound_cost import measure; "
            f"print(json.dumps(measure({args.figure}, {args.count}, {args.effort}, "
            f"{args.profile})))"
        )
        here = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
        env = {**os.environ, "PYTHONPATH": os.pathsep.join([args.src, here])}
        done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                              text=True, check=True)  # fmt: skip
        rec = json.loads(done.stdout.strip().splitlines()[-1])
    else:
        rec = measure(args.figure, args.count, args.effort, args.profile)
    rec["loadavg"] = [list(load0), list(os.getloadavg())]
    rec["src"] = args.src or "this checkout"
    print(
        f"fig{rec['figure']} x {rec['count']} (effort {rec['effort']:g}, {rec['src']}): "
        f"solve {rec['solve_s']:.3f} s, bound {rec['bound_s']:.3f} s, ratio "
        f"{rec['ratio']:.2f}x (CPU {rec['solve_cpu_s']:.3f} s, {rec['bound_cpu_s']:.3f} s, "
        f"{rec['cpu_ratio']:.2f}x); sum of bounds {rec['sum_bounds']} (allocated "
        f"{rec['sum_allocated']}), digest {rec['digest']}; load {load0[0]:.2f} -> "
        f"{os.getloadavg()[0]:.2f}"
    )
    if rec.get("profile"):
        print(rec["profile"])
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(rec, fh)
    return 0


if __name__ == "__main__":
    sys.exit(main())
