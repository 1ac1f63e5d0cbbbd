"""The exact optimum of a tiny task mapping by enumeration: the independent referee of the
bound, exact, multilevel and job-packing tests (no code of the mapper or the bounds)."""

import itertools

import numpy as np

from coalloc.taskmap import max_occupancy


def brute_force(tasks, res) -> float:
    """The least maximum occupancy over every mapping of ``tasks`` onto ``res``'s processors."""
    procs = res.processors.tolist()
    return min(
        max_occupancy(tasks, res, np.array(m))[0]
        for m in itertools.product(procs, repeat=tasks.n)
    )
