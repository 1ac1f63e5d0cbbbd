"""Two records of ``bench.shared.budget`` side by side: per kind/size/method, mode and limit,
the overrun (elapsed - T, ms: median and max over the repeats), the runs within
T + max(0.05 s, 0.05 T), and the runs that returned an answer, before -> after.

    python bench/shared/budget_compare.py BEFORE.json AFTER.json
"""

from __future__ import annotations

import json
import statistics
import sys


def load(path: str) -> dict:
    """``(kind/size/method, mode, limit label) -> [(overrun s, within, has answer)]``; fresh
    runs by the call's own time (the process's start is not the method's)."""
    with open(path) as fh:
        record = json.load(fh)
    out: dict = {}
    for entry in record["entries"]:
        name = f"{entry['kind']}/{entry['size']}/{entry['method']}"
        for run in entry.get("runs", []):
            if run.get("status") == "raised" or run.get("limit") is None:
                continue
            limit, elapsed = run["limit"], run["elapsed"]
            within = elapsed <= limit + max(0.05, 0.05 * limit)
            key = (name, run["mode"], run["label"])
            out.setdefault(key, []).append((elapsed - limit, within, run.get("has_solution")))
    return out


def cells(runs: list) -> tuple:
    if not runs:
        return "-", "-", "-", "-"
    over = [r[0] * 1000 for r in runs]
    n = len(runs)
    return (f"{statistics.median(over):+.0f}", f"{max(over):+.0f}",
            f"{sum(r[1] for r in runs)}/{n}", f"{sum(bool(r[2]) for r in runs)}/{n}")  # fmt: skip


def main(argv: list) -> None:
    before, after = load(argv[0]), load(argv[1])
    print(f"{'kind/size/method':28} {'mode':5} {'T':>6} | {'before med':>10} {'max':>6} "
          f"{'within':>6} | {'after med':>9} {'max':>6} {'within':>6} {'answers':>9}")  # fmt: skip
    for key in sorted(set(before) | set(after)):
        bm, bx, bw, ba = cells(before.get(key, []))
        am, ax, aw, aa = cells(after.get(key, []))
        print(f"{key[0]:28} {key[1]:5} {key[2]:>6} | {bm:>10} {bx:>6} {bw:>6} | {am:>9} "
              f"{ax:>6} {aw:>6} {ba + '>' + aa:>9}")  # fmt: skip


if __name__ == "__main__":
    main(sys.argv[1:])
