"""Random resource graphs shared by the kernel-twin tests."""

import numpy as np

import coalloc.taskmap as tm


def random_resources(rng, most: int = 20):
    """A connected graph with cycles (equal-length routes: ties) and some routers."""
    r = int(rng.integers(2, most))
    edges = {(int(rng.integers(0, v)), v) for v in range(1, r)}
    for _ in range(int(rng.integers(0, r + 1))):
        u, v = sorted(int(x) for x in rng.integers(0, r, 2))
        if u != v:
            edges.add((u, v))
    edges = np.array(sorted(edges), dtype=np.int64).reshape(-1, 2)
    cap = np.where(rng.random(r) < 0.7, rng.choice([1.0, 2.0, 5.0], r), 0.0)
    cap[int(rng.integers(0, r))] = 3.0
    bw = rng.choice([1.0, 2.0, 10.0], edges.shape[0])
    return tm.ResourceGraph.from_edges(cap, edges, bw)
