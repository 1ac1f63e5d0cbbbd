"""h61heavy: the GAP heuristic on instances whose agents' weights differ in scale.

``--probe``: single tabu-kernel iterations from the rounded LP on one instance, with one
penalty weight for all agents (``per_agent`` 0) and with YIG's per-agent weights (2), no
restart: the iterations in which a heavy agent (one of the first ``m // 3``) or a light
one is overloaded, the moves that touch a heavy agent, the median weights after the first
1,000 iterations, the best objective.

``--ab``: the heuristic with the rule (``tabu._SCALED_FROM``, default) against it off, A/B
alternated per seed (the order swapped every seed), at ``--limit`` T (or untimed
``--iterations``), on ``bench.shared.audit_cases.gap_heavy`` (``--set heavy``) or on the
second generator :func:`gap_ratio` (``--set ratio``: heavy agents 3x or 10x, or 5x with
3-5x their capacity); printed per instance the median objective of each, the gap to the
exact optimum (``heavy``, CP-SAT, proven) or to the best bound of the runs (``ratio``),
their mean and the load. Every answer is checked by ``verify_gap``.

    PYTHONPATH=src:. python -m bench.loadshare.heavy_agents --probe
    PYTHONPATH=src:. python -m bench.loadshare.heavy_agents --ab --set heavy --limit 2
    PYTHONPATH=src:. python -m bench.loadshare.heavy_agents --ab --set ratio --limit 2
"""

from __future__ import annotations

import argparse
import os
import statistics

import numpy as np

from bench.loadshare.knob_ab import knob, run
from bench.shared._progress import add_quiet, bar, say
from bench.shared.audit_cases import _rng, gap_heavy
from coalloc.loadshare import GapInstance, verify_gap
from coalloc.loadshare.gap.bounds import lp_relaxation
from coalloc.loadshare.gap.model import objective
from coalloc.loadshare.gap.tabu import TabuKnobs, TabuState

#: gap_heavy's cases (m, n, seed, slack) with the exact method's proven optima.
HEAVY = {(20, 200, 11, 1.5): 3018, (20, 200, 13, 1.3): 3590, (30, 300, 21, 1.4): 4595,
         (15, 300, 22, 1.6): 3972, (40, 400, 23, 1.5): 4492, (10, 80, 5, 1.2): 1851}
#: The second generator's cases (m, n, seed, slack, ratio, heavy agents' capacity factor).
RATIO = [(20, 200, 37, 1.4, 5, 5.0), (30, 300, 38, 1.4, 5, 5.0), (20, 200, 39, 1.3, 5, 3.0),
         (30, 300, 40, 1.5, 5, 3.0), (20, 200, 33, 1.4, 3, 1.0), (30, 300, 34, 1.4, 3, 1.0),
         (20, 200, 35, 1.5, 10, 1.0), (30, 300, 36, 1.5, 10, 1.0)]


def gap_ratio(m: int, n: int, seed: int, slack: float = 1.4, ratio: int = 5,
              heavy_cap: float = 1.0) -> GapInstance:  # fmt: skip
    """gap_heavy with the heavy agents ``ratio`` times heavier and ``heavy_cap`` times
    the light agents' capacity."""
    rng = _rng(seed)
    weight = rng.integers(1, 10, (m, n))
    weight[: max(1, m // 3)] *= ratio
    cost = rng.integers(1, 50, (m, n)) + weight
    cap = int(np.maximum(1, slack * weight.min(axis=0).sum() / m))
    capacity = np.full(m, cap, dtype=np.int64)
    capacity[: max(1, m // 3)] = int(cap * heavy_cap)
    capacity[-1] += int(weight[-1].max())
    return GapInstance(cost.astype(float), weight, capacity, name=f"ratio{ratio}")


def probe(case=(30, 300, 21, 1.4), iterations: int = 6000) -> None:
    inst = gap_heavy(*case)
    m, n, hv = inst.m, inst.n, max(1, inst.m // 3)
    cost = np.ascontiguousarray(inst.cost, dtype=np.float64)
    weight = np.ascontiguousarray(inst.weight, dtype=np.int64)
    cap = np.ascontiguousarray(inst.capacity, dtype=np.int64)
    _, x, _ = lp_relaxation(inst, "min", True)
    start = x.argmax(axis=0).astype(np.int64)
    items = np.arange(n)
    for per_agent in (0, 2):
        state = TabuState.fresh(start, m, np.array([12345], dtype=np.uint64))
        knobs = TabuKnobs.default(n)
        knobs.per_agent, knobs.restart = per_agent, 10**9
        state.run(cost, weight, cap, 0, knobs)
        heavy_moves = heavy_over = light_over = infeasible = 0
        alphas = []
        prev = state.assign.copy()
        for t in range(iterations):
            state.run(cost, weight, cap, 1, knobs)
            moved = np.flatnonzero(state.assign != prev)
            heavy_moves += bool((np.r_[prev[moved], state.assign[moved]] < hv).any())
            used = np.bincount(state.assign, weights=weight[state.assign, items], minlength=m)
            over = used > cap
            infeasible += over.any()
            heavy_over += over[:hv].any()
            light_over += over[hv:].any()
            prev = state.assign.copy()
            if t >= 1000:
                alphas.append(state.alpha.copy())
        a = np.array(alphas)
        print(f"per_agent {per_agent}: infeasible iterations {infeasible}, a heavy agent "
              f"over {heavy_over}, a light one {light_over}, moves touching a heavy agent "
              f"{heavy_moves} of {iterations}; median weight heavy {np.median(a[:, :hv]):.3g}"
              f" light {np.median(a[:, hv:]):.3g} (first {state.dstate[2]:.3g}); best "
              f"{objective(inst, state.best):g}")  # fmt: skip


def ab(which: str, limit, iterations, seeds) -> None:
    cases = list(HEAVY) if which == "heavy" else RATIO
    make = gap_heavy if which == "heavy" else gap_ratio
    off = [knob("tabu._SCALED_FROM=1e300")]
    print("load at start:", " ".join(f"{v:.2f}" for v in os.getloadavg()))
    means = {"off": [], "on": []}
    for case in bar(cases, desc="cases"):
        inst = make(*case)
        got = {"off": [], "on": []}
        bound = -np.inf
        for s in seeds:
            order = ("off", "on") if s % 2 else ("on", "off")
            for name in order:
                res = run(inst, limit, s, iterations, off if name == "off" else [])
                if res.assignment is None:  # (a short untimed run may find none)
                    got[name].append(float("inf"))
                    continue
                assert verify_gap(inst, res.assignment, claimed=res.objective).ok
                got[name].append(res.objective)
                bound = max(bound, res.bound if res.bound is not None else -np.inf)
        ref = HEAVY[case] if which == "heavy" else bound
        row = []
        for name in ("off", "on"):
            med = statistics.median(got[name])
            means[name].append(100.0 * (med - ref) / ref)
            row.append(f"{name} {med:g} ({means[name][-1]:.3f} %)")
        say(case, "ref", f"{ref:g}", ", ".join(row))
    print(f"mean gap: off {statistics.mean(means['off']):.3f} %, on "
          f"{statistics.mean(means['on']):.3f} %")  # fmt: skip
    print("load at end:", " ".join(f"{v:.2f}" for v in os.getloadavg()))


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--probe", action="store_true")
    ap.add_argument("--ab", action="store_true")
    ap.add_argument("--set", choices=["heavy", "ratio"], default="heavy")
    ap.add_argument("--limit", type=float, default=2.0)
    ap.add_argument("--iterations", type=int, default=None)
    ap.add_argument("--seeds", type=int, nargs="+", default=[1, 2, 3])
    add_quiet(ap)
    args = ap.parse_args(argv)
    if args.probe:
        probe()
    if args.ab:
        limit = None if args.iterations else args.limit
        ab(args.set, limit, args.iterations, args.seeds)


if __name__ == "__main__":
    main()
