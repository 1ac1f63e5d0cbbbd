"""The cost of one tiny solve call (issue 37: validation at every call must be cheap).

1,000 calls of ``coalloc.ctaap.solve(request, offer, "greedy", seed=0)`` on
``fig2(2, n_tasks=12, seed=1)``, with no parameters and with three passed (validated by the
method's constraint table), median of 5 runs in CPU seconds (``time.process_time``, steadier
than the wall clock on a shared machine)::

    python -m bench.shared.call_overhead
"""

from __future__ import annotations

import os
import statistics
import time


def main() -> None:
    """Print the median CPU seconds of 1,000 calls, without and with parameters."""
    import coalloc.ctaap as ct

    request, offer = ct.generators.fig2(2, n_tasks=12, seed=1)
    print(f"load average {os.getloadavg()[0]:.2f}")
    for label, kw in (("no parameters", {}),
                      ("order, restarts, time_limit", {"order": "index", "restarts": 1,
                                                       "time_limit": None})):  # fmt: skip
        ct.solve(request, offer, "greedy", seed=0, **kw)
        runs = []
        for _ in range(5):
            t = time.process_time()
            for _ in range(1000):
                ct.solve(request, offer, "greedy", seed=0, **kw)
            runs.append(time.process_time() - t)
        print(f"{label}: median {statistics.median(runs):.3f} CPU s per 1,000 calls")


if __name__ == "__main__":
    main()
