"""Wall and CPU time of ``taskmap.solve`` on mid-size instances, before and after a refactor.

Issue 37 split the family's modules without changing an answer; this is the check that no
method got slower. Three instances of two generators (a 48 x 48 stencil mapped by the
multilevel default, a 64 x 64 stencil by the paper's ``open+improve`` and
``base+improve``, each with random compute and volumes in [0.5, 2] onto a hierarchical
cluster of 32 cores with speeds in [1, 4]); one untimed warm-up, then the median of
``--repeats`` calls, wall clock and process CPU time, with the load average. Run it on
both trees, alternately, and compare the medians (the objective must be equal)::

    PYTHONPATH=src nice python -m bench.taskmap.solve_timing --repeats 5
"""

from __future__ import annotations

import argparse
import os
import statistics
import time

from bench.shared._progress import add_quiet, bar


def main(argv: list | None = None) -> None:
    """Print one line per instance: load, wall and CPU medians, the objective."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeats", type=int, default=5)
    add_quiet(parser)
    args = parser.parse_args(argv)

    import coalloc.taskmap as tm
    from coalloc.taskmap.generators import hierarchical_cluster, stencil_task_graph

    res = hierarchical_cluster(speed=(1.0, 4.0))
    ranges = {"compute": (0.5, 2.0), "volume": (0.5, 2.0)}
    cases = [
        ("multilevel", stencil_task_graph((48, 48), **ranges)),
        ("open+improve", stencil_task_graph((64, 64), **ranges)),
        ("base+improve", stencil_task_graph((64, 64), **ranges)),
    ]
    for method, tasks in bar(cases, desc="cases"):
        tm.solve(tasks, res, method, seed=0)  # warm: route tables, imports
        wall, cpu = [], []
        for _ in range(args.repeats):
            w0, c0 = time.perf_counter(), time.process_time()
            result = tm.solve(tasks, res, method, seed=0)
            wall.append(time.perf_counter() - w0)
            cpu.append(time.process_time() - c0)
        print(
            f"{method:14s} n={tasks.n} load={os.getloadavg()[0]:.2f} "
            f"wall={statistics.median(wall):.4f}s cpu={statistics.median(cpu):.4f}s "
            f"objective={result.max_occupancy:.9g}",
            flush=True,
        )


if __name__ == "__main__":
    main()
