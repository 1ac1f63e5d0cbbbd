"""GAP tabu search speed: iterations per second of ``_gapls.tabu_search``, against an older
build of the kernel when one is given.

The search runs as ``solve_gap(method="heuristic")`` runs it (minimisation, every item
assigned: float64 costs, int64 weights and capacities; the knobs of
:mod:`coalloc.loadshare.gap.tabu`: tenure, swap items, growth, restart, shake, per-agent weights,
chain), from the costs' greedy start polished by ``shift_descent``: ``--warmup`` times the
instance's iterations untimed (past the start's first descent), then its iterations timed
(``--scale`` times the table below). With ``--old PATH`` (a copy of an older
``_gapls*.so``) the old and the current kernel run the same iterations in turn
(interleaved, ``--repeats`` times each, median reported), and their final states (current
and best assignments, weights, tabu list, counters, random state) are compared: the speed-up
only counts when they are equal. ``--solve`` also runs ``solve_gap(method="heuristic",
time_limit=T)`` on the first instance ``--repeats`` times with each kernel (the old one
swapped in for the call, in turn) and reports the median tabu iterations reached.

The instances are not in the repository: the data directory is a copy of
``fontanf/generalizedassignmentsolver``'s ``data/`` folder (see gap_published.py); give it
with ``--data DIR`` or ``COALLOC_GAPDATA``.

    cp src/coalloc/loadshare/_gapls*.so /tmp/old/        # before rebuilding the kernel
    python -m bench.loadshare.tabu_speed --data /work/peers/gapdata --old /tmp/old/_gapls*.so \\
        --solve 1
    python -m bench.loadshare.tabu_speed --only chu1997/d20100     # the current kernel alone
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import statistics
import time

import numpy as np

from bench.shared._progress import add_quiet, bar, say
from coalloc.loadshare import _gapls, read_gap, solve_gap
from coalloc.loadshare.gap import lagrangian, search, tabu
from coalloc.loadshare.gap.tabu import TabuKnobs

#: The modules of the GAP method that call the kernels (``--solve`` swaps them in all).
KERNEL_USERS = (tabu, lagrangian, search)

#: instance -> tabu iterations timed (about 0.2-0.5 s of the old kernel each)
INSTANCES = {
    "chu1997/d20100": 4000,
    "chu1997/d10200": 2500,
    "yagiura2004/e20100": 4000,
    "yagiura2004/c40400": 800,
    "yagiura2004/d801600": 150,
    "yagiura2004/e801600": 150,
}


def load_kernel(path: str):
    """The ``_gapls`` extension module at ``path`` (a copy of an older build)."""
    spec = importlib.util.spec_from_file_location("_gapls", path)
    if spec is None or spec.loader is None:
        raise SystemExit(f"{path}: not an extension module")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def arrays(inst):
    """Cost, weight and capacity as ``_heuristic`` passes them (minimisation, all assigned)."""
    cost = np.ascontiguousarray(inst.cost, dtype=np.float64)
    weight = np.ascontiguousarray(inst.weight, dtype=np.int64)
    cap = np.ascontiguousarray(inst.capacity, dtype=np.int64)
    return cost, weight, cap


def knobs(n: int) -> tuple:
    return TabuKnobs.default(n).as_args()


def run(mod, cost, weight, cap, start, iterations, warmup, seed=1):
    """Time ``iterations`` tabu iterations of ``mod`` after ``warmup`` untimed ones; returns
    (seconds, final state)."""
    m, n = cost.shape
    state = [
        start.copy(),
        start.copy(),
        np.zeros(m),
        np.zeros(m * n, dtype=np.int64),
        np.zeros(6, dtype=np.int64),
        np.zeros(3),
        np.array([seed], dtype=np.uint64),
    ]
    k = knobs(n)

    def call(its: int) -> int:
        try:  # the plan signature (issue 37); builds before it take the scalars one by one
            from coalloc.loadshare.gap.tabu import TabuPlan, TabuState

            return mod.tabu_search(cost, weight, cap, TabuState(*state), TabuPlan(its, *k))
        except TypeError:
            return mod.tabu_search(cost, weight, cap, *state, its, *k)

    call(warmup)  # set-up and warm-up, untimed
    t = time.perf_counter()
    done = call(iterations)
    spent = time.perf_counter() - t
    if done != iterations:
        raise SystemExit(f"tabu_search did {done} of {iterations} iterations")
    return spent, state


def same(a, b) -> bool:
    return all(
        x.dtype == y.dtype and np.array_equal(x.view(np.uint8), y.view(np.uint8))
        for x, y in zip(a, b)
    )


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    add_quiet(ap)
    ap.add_argument("--data", default=os.environ.get("COALLOC_GAPDATA"),
                    help="the instance directory (default: $COALLOC_GAPDATA)")  # fmt: skip
    ap.add_argument("--old", help="an older build of the kernel (_gapls*.so) to compare")
    ap.add_argument("--only", nargs="+", default=list(INSTANCES), metavar="SET/NAME")
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--scale", type=float, default=1.0, help="times the default iterations")
    ap.add_argument("--warmup", type=float, default=1.0,
                    help="untimed iterations first, in units of the timed ones")  # fmt: skip
    ap.add_argument(
        "--solve",
        type=float,
        default=None,
        metavar="T",
        help="also solve_gap(heuristic, time_limit=T) on the first instance",
    )
    args = ap.parse_args(argv)
    if not args.data or not os.path.isdir(args.data):
        raise SystemExit(
            "GAP data missing: give --data DIR or COALLOC_GAPDATA (a copy of "
            "fontanf/generalizedassignmentsolver's data/ folder)"
        )
    old = load_kernel(args.old) if args.old else None
    kernels = [("old", old), ("new", _gapls)] if old is not None else [("new", _gapls)]
    say(f"load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    rows = []
    pbar = bar(total=len(args.only) * args.repeats * len(kernels), desc="tabu", unit="run")
    for key in args.only:
        inst = read_gap(os.path.join(args.data, key))[0]
        cost, weight, cap = arrays(inst)
        start = np.argmin(cost, axis=0).astype(np.int64)
        _gapls.shift_descent(cost, weight, cap, start, 50)
        iterations = max(1, int(INSTANCES.get(key, 1000) * args.scale))
        rates = {name: [] for name, _ in kernels}
        states = {}
        for _ in range(args.repeats):
            for name, mod in kernels:
                warm = int(args.warmup * iterations)
                spent, states[name] = run(mod, cost, weight, cap, start, iterations, warm)
                rates[name].append(iterations / spent)
                pbar.update(1)
        med = {name: statistics.median(v) for name, v in rates.items()}
        equal = same(states["old"], states["new"]) if old is not None else None
        rows.append((key, inst.m, inst.n, iterations, med, equal))
    pbar.close()
    print(f"load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    print(f"warm-up {args.warmup:g} x the timed iterations, median of {args.repeats}")
    print("| instance | m x n | iterations | old it/s | new it/s | new/old | same state |")
    print("|---|---|---|---|---|---|---|")
    for key, m, n, its, med, equal in rows:
        o, nw = med.get("old"), med["new"]
        o_s = "-" if o is None else f"{o:,.0f}"
        ratio = "-" if o is None else f"{nw / o:.2f}x"
        eq = "-" if equal is None else "yes" if equal else "NO"
        print(f"| {key} | {m} x {n} | {its} | {o_s} | {nw:,.0f} | {ratio} | {eq} |")
    if args.solve is not None:
        inst = read_gap(os.path.join(args.data, args.only[0]))[0]
        got = {name: [] for name, _ in kernels}
        for _ in bar(range(args.repeats), desc="solve_gap", unit="round"):
            for name, mod in kernels:
                saved = [user._gapls for user in KERNEL_USERS]
                for user in KERNEL_USERS:
                    user._gapls = mod  # this kernel for this call only
                try:
                    res = solve_gap(inst, method="heuristic", time_limit=args.solve, seed=0)
                finally:
                    for user, kern in zip(KERNEL_USERS, saved):
                        user._gapls = kern
                got[name].append((res.iterations["tabu_iterations"], res.objective))
        for name, runs in got.items():
            its = statistics.median(r[0] for r in runs)
            objs = " ".join(f"{r[1]:g}" for r in runs)
            print(f"solve_gap({args.only[0]}, heuristic, time_limit={args.solve:g}), {name} "
                  f"kernel: median {its:,.0f} tabu iterations of {args.repeats} runs "
                  f"(objectives {objs})")  # fmt: skip
    if old is not None and not all(r[5] for r in rows):
        raise SystemExit("the kernels' final states differ")


if __name__ == "__main__":
    main()
