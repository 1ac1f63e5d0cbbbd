"""Issue 36 item 4 at the smallest budgets (h47gap follow-up): the GAP default
(``portfolio``) against the heuristic alone and ``exact`` at equal limit and seed, calls
interleaved (default, heuristic, exact for each seed in turn, so that the three share the
same load), on the contract audit's heavy 10 x 80 and two tiny instances (heavy 3 x 8,
tight 3 x 8). CP-SAT is imported before the first call (as the audit does).

Printed per instance, limit and method: calls without an answer, calls proved optimal, the
median and worst objective, the median elapsed time, the calls in which CP-SAT was
started (``iterations["solver_started"]``), the median seconds to the first feasible
assignment the trajectory records (h47gapfirst), and the load average before and after.
``--b MODULE.NAME=VALUE`` sets knobs of :mod:`coalloc.loadshare.gap` for the whole run
(as :mod:`bench.loadshare.knob_ab` does per call), e.g. ``search._FEASIBLE_FIRST=False``.

    PYTHONPATH=src:. python -m bench.loadshare.small_budget --limits 0.05 0.5 --calls 10
"""

from __future__ import annotations

import argparse
import os
import statistics
import time

import numpy as np

from bench.loadshare.knob_ab import knob
from bench.shared._progress import add_quiet, bar, say
from bench.shared.contract_audit import gap_heavy
from coalloc.cli._common import count, seconds

METHODS = ("portfolio", "heuristic", "exact")


def instances() -> dict:
    """The audit's GAP cases measured here, by name."""
    return {
        "heavy-10x80": gap_heavy(10, 80, 5),
        "heavy-3x8": gap_heavy(3, 8, 1),
        "tight-3x8": gap_heavy(3, 8, 3, slack=1.0),
    }


def first_feasible(trajectory) -> float | None:
    """The seconds of the trajectory's first row with an objective (None: none, or no
    trajectory of (seconds, objective, bound) rows)."""
    tr = np.asarray(trajectory if trajectory is not None else [], dtype=np.float64)
    if tr.ndim != 2 or tr.shape[1] != 3:
        return None
    rows = tr[~np.isnan(tr[:, 1])]
    return float(rows[0, 0]) if len(rows) else None


def median_or_dash(values) -> str:
    got = [v for v in values if v is not None]
    return f"{statistics.median(got):.4f} s ({len(got)})" if got else "-"


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--limits", type=seconds(), nargs="+", default=[0.05, 0.5])
    ap.add_argument("--calls", type=count(), default=10, help="calls (seeds 0..) per method")
    ap.add_argument("--only", nargs="+", default=None, help="instance names")
    ap.add_argument("--b", nargs="+", type=knob, default=[],
                    help="knobs MODULE.NAME=VALUE set for the whole run")  # fmt: skip
    add_quiet(ap)
    args = ap.parse_args(argv)
    import coalloc.loadshare as ls
    from coalloc._shared.milp import preload

    preload("cpsat")
    for mod, name, value in args.b:
        if mod is None:
            ap.error("--b takes module knobs only")
        setattr(mod, name, value)
        say(f"{mod.__name__}.{name} = {value!r}")
    insts = instances()
    names = args.only or list(insts)
    say(f"load average {os.getloadavg()[0]:.2f}")
    for name in bar(names, desc="instances"):
        inst = insts[name]
        for limit in args.limits:
            rows = {m: [] for m in METHODS}
            for seed in range(args.calls):
                for m in METHODS:
                    t = time.perf_counter()
                    r = ls.solve_gap(inst, m, time_limit=limit, seed=seed)
                    rows[m].append((r.status, r.objective, time.perf_counter() - t,
                                    int(r.iterations.get("solver_started", 0)),
                                    first_feasible(r.trajectory)))  # fmt: skip
            for m, got in rows.items():
                objs = [o for _, o, _, _, _ in got if o is not None]
                say(f"{name} T={limit:g} {m:9s} no answer {sum(o is None for _, o, _, _, _ in got)}"
                    f"/{args.calls} optimal {sum(s == 'optimal' for s, _, _, _, _ in got)}"
                    f" median {statistics.median(objs) if objs else '-'}"
                    f" worst {max(objs) if objs else '-'}"
                    f" median wall {statistics.median(w for _, _, w, _, _ in got):.3f} s"
                    f" CP-SAT started {sum(c for _, _, _, c, _ in got)}"
                    f" first feasible median {median_or_dash([f for *_, f in got])}")  # fmt: skip
    say(f"load average {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
