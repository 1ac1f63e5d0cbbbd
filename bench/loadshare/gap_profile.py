"""Issue 40: where a timed GAP heuristic call spends its search, round by round.

For each ``--only`` instance (Yagiura by default) and seed, ``solve_gap(method="heuristic",
time_limit=T)`` runs once with :meth:`coalloc.loadshare.gap.tabu.TabuState.run` wrapped, so
that every round of the tabu search (about 0.1 s) is recorded: its phase (the core, the
search on every pair from the core's best, the fresh one; a new :class:`TabuState` is a new
phase), its iterations and their rate, whether the current assignment keeps every
capacity, the penalty weights (their mean and spread against the first weight), the
restarts (iterations the kernel's counter of "iterations since the last new best" lost
in the round beyond the new bests: counted in units of the restart threshold) and the
best assignment's true cost. Printed per instance: the iterations per second, per phase
its share of the iterations, of the rounds at a feasible assignment and of the new best
answers (with ``--moves``: the moves by kind, and which of them gave the new bests), the
time of the last improvement of the answer and the gap (to the best known
value) at 10, 25, 50 and 100 % of the limit. The answer is checked by ``verify_gap``.
Record the load average beside the figures: the search's iterations follow the CPU.

    PYTHONPATH=src:. python -m bench.loadshare.gap_profile --gapdata /work/peers/gapdata \\
        --only d40400 e40400 --limit 10 --seeds 0 [--moves]
"""

from __future__ import annotations

import argparse
import os
import time

import numpy as np

from bench.loadshare.gap_published import best_known
from bench.shared._progress import add_quiet, bar, say
from coalloc.cli._common import count, seconds
from coalloc.loadshare import read_gap, solve_gap, verify_gap
from coalloc.loadshare.gap import tabu

#: The Yagiura instances whose 10 s gaps were the largest (ISSUE40.md).
DEFAULT = ("d20400", "d40400", "e40400")


def classify(before: np.ndarray, after: np.ndarray) -> str:
    """The kind of the move from ``before`` to ``after`` (one iteration): "none", "shift"
    (one item moved), "swap" (two items exchanged their agents), "chain" (two items moved
    over three agents: an ejection), "chain2" (three items), "other"."""
    moved = np.flatnonzero(before != after)
    if moved.size == 0:
        return "none"
    if moved.size == 1:
        return "shift"
    if moved.size == 2:
        j, k = moved
        if after[j] == before[k] and after[k] == before[j]:
            return "swap"
        return "chain"
    return "chain2" if moved.size == 3 else "other"


class Recorder:
    """Wraps ``TabuState.run``: one row per call with iterations > 0. With ``moves``, each
    call runs as single iterations (the same search: the kernel resumes exactly; slower by
    the calls' overhead), each move classified (:func:`classify`) and counted, with the
    moves that gave a new best feasible assignment of the search (restarts, which reset
    the assignment to the best, counted apart)."""

    def __init__(self, moves: bool = False) -> None:
        self.rows: list = []
        self.phases = 0
        self.t0 = 0.0
        self._orig = tabu.TabuState.run
        self.moves = moves
        self.kinds: dict = {}  # kind -> [moves, new bests]
        self.restarts = 0

    def _single(self, state, cost, weight, capacity, iterations, knobs, until=None) -> int:
        got = 0
        for _ in range(iterations):
            before, best0, feas0 = state.assign.copy(), state.best_cost, state.feasible
            since0 = state.since_best
            one = self._orig(state, cost, weight, capacity, 1, knobs, until)
            if not one:
                break
            got += 1
            new_best = state.feasible and (not feas0 or state.best_cost < best0 - 1e-9)
            if state.since_best == 0 and not new_best and since0 + 1 >= knobs.restart:
                self.restarts += 1
                continue
            row = self.kinds.setdefault(classify(before, state.assign), [0, 0])
            row[0] += 1
            row[1] += int(new_best)
        return got

    def __enter__(self) -> Recorder:
        rec, orig = self, self._orig

        def run(state, cost, weight, capacity, iterations, knobs, until=None):
            since0 = state.since_best if state.started else 0
            best0, feas0 = state.best_cost, state.feasible
            if rec.moves and iterations > 0:
                got = rec._single(state, cost, weight, capacity, iterations, knobs, until)
            else:
                got = orig(state, cost, weight, capacity, iterations, knobs, until)
            if iterations == 0:  # a new search (phase) is set up
                if not hasattr(state, "_profile_phase"):
                    state._profile_phase = rec.phases
                    rec.phases += 1
                return got
            cols = np.arange(state.assign.shape[0])
            used = np.bincount(state.assign, weights=weight[state.assign, cols],
                               minlength=capacity.shape[0])  # fmt: skip
            a0 = state.first_weight
            lost = since0 + got - state.since_best  # iterations counted away by resets
            improved = state.best_cost != best0 or state.feasible != feas0
            rec.rows.append(dict(
                t=time.perf_counter() - rec.t0, phase=getattr(state, "_profile_phase", -1),
                got=got, feasible_now=bool(np.all(used <= capacity)),
                alpha_mean=float(state.alpha.mean()) / a0,
                alpha_spread=float(state.alpha.max() / max(state.alpha.min(), 1e-300)),
                restarts=max(0, lost - (1 if improved else 0)) // max(1, knobs.restart),
                improved=bool(improved), best_cost=state.best_cost,
                best_feasible=state.feasible))  # fmt: skip
            return got

        tabu.TabuState.run = run
        return self

    def __exit__(self, *exc) -> None:
        tabu.TabuState.run = self._orig


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--gapdata", default=os.environ.get("COALLOC_GAPDATA"),
                    help="fontanf/generalizedassignmentsolver's data/ folder")  # fmt: skip
    ap.add_argument("--only", nargs="+", default=list(DEFAULT),
                    help="Yagiura instances (SET/NAME: another set's, chu1997/d10100)")  # fmt: skip
    ap.add_argument("--limit", type=seconds(), default=10.0)
    ap.add_argument("--seeds", nargs="+", type=count(0), default=[0])
    ap.add_argument("--moves", action="store_true",
                    help="classify every move (single-iteration calls: a slower search)")
    add_quiet(ap)
    args = ap.parse_args(argv)
    if not args.gapdata:
        ap.error("give --gapdata or COALLOC_GAPDATA")
    best = best_known(args.gapdata)
    say(f"load average at start: {os.getloadavg()[0]:.2f}")
    for name in bar(args.only, desc="instances"):
        key = name if "/" in name else f"yagiura2004/{name}"  # e.g. chu1997/d10100
        inst = read_gap(os.path.join(args.gapdata, key))[0]
        bk = best[key]
        for seed in args.seeds:
            with Recorder(args.moves) as rec:
                rec.t0 = time.perf_counter()
                res = solve_gap(inst, "heuristic", time_limit=args.limit, seed=seed)
            assert res.assignment is not None
            assert verify_gap(inst, res.assignment, claimed=res.objective).ok
            _report(name, seed, inst, res, rec, bk, args.limit)
    say(f"load average at end: {os.getloadavg()[0]:.2f}")


def _report(name, seed, inst, res, rec, bk, limit) -> None:
    rows = rec.rows
    it = res.iterations["tabu_iterations"]
    traj = res.trajectory
    found = traj[~np.isnan(traj[:, 1])]
    last = float(found[-1, 0]) if len(found) else float("nan")
    gaps = []
    for share in (0.1, 0.25, 0.5, 1.0):
        upto = found[found[:, 0] <= share * limit + 0.3]
        gaps.append(100 * (upto[-1, 1] - bk) / bk if len(upto) else float("nan"))
    say(f"{name} seed {seed} ({inst.m} x {inst.n}): {it} iterations, "
        f"{it / max(res.timings.get('search', res.timings.get('hint', 0)), 1e-9):,.0f} it/s; "
        f"answer {res.objective:g} "
        f"({100 * (res.objective - bk) / bk:.3f} %), last improvement at {last:.2f} s; gap at "
        + ", ".join(f"{s:g}T {g:.3f} %" for s, g in zip((0.1, 0.25, 0.5, 1), gaps)))  # fmt: skip
    for ph in sorted({r["phase"] for r in rows}):
        sel = [r for r in rows if r["phase"] == ph]
        got = sum(r["got"] for r in sel)
        feas = 100 * np.mean([r["feasible_now"] for r in sel])
        last = max([r["t"] for r in sel if r["improved"]], default=float("nan"))
        say(f"  phase {ph}: {len(sel)} rounds, {got} iterations "
            f"({100 * got / max(it, 1):.0f} %), {sel[0]['t']:.2f}-{sel[-1]['t']:.2f} s; "
            f"feasible at {feas:.0f} % of round ends; new bests in "
            f"{sum(r['improved'] for r in sel)} rounds (last at {last:.2f} s); "
            f"restarts ~{sum(r['restarts'] for r in sel)}; weights mean/first "
            f"{np.median([r['alpha_mean'] for r in sel]):.3g} (median), max/min "
            f"{np.median([r['alpha_spread'] for r in sel]):.3g}")  # fmt: skip
    if rec.moves:
        total = sum(v[0] for v in rec.kinds.values()) + rec.restarts
        say(f"  moves: {total} iterations; " + ", ".join(
            f"{k} {100 * v[0] / max(total, 1):.1f} % ({v[1]} new bests)"
            for k, v in sorted(rec.kinds.items())) + f"; restarts {rec.restarts}")  # fmt: skip


if __name__ == "__main__":
    main()
