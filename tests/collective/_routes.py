"""Shared set-ups of the scan's route tests (``test_bounded_route``, ``test_plain_route``):
a random pool whose free amounts wander, and the key an answer is compared by."""

import json

import numpy as np

from coalloc.collective import ResourcePool


def answer_key(res, message: bool = False) -> tuple:
    """Status, start, nodes, the rejection (sorted JSON), the search's counts; the message too
    when ``message``."""
    return (res.status, res.start, None if res.resources is None else res.resources.tolist(),
            json.dumps(res.rejection, sort_keys=True, default=str),
            *((res.message,) if message else ()),
            res.iterations.get("starts"), res.iterations.get("solver_calls"))  # fmt: skip


def wandering_pool(seed, rows, k, level=(0.2, 0.8), step=0.03, freed=False) -> ResourcePool:
    """``rows`` nodes of three properties over ``k`` 300 s slots: each node's share of its
    capacity in use starts in ``level`` and takes normal steps of ``step``; ``freed``: 60 % of
    the nodes drop to 0.4 of it from slot 250 on."""
    rng = np.random.default_rng(seed)
    cap = np.round(rng.uniform(2, 16, (rows, 1)) * rng.uniform(0.6, 1.4, (rows, 3)), 1)
    walk = np.clip(rng.uniform(*level, (rows, 1, 1))
                   + np.cumsum(rng.normal(0, step, (rows, 3, k)), axis=2), 0, 1)  # fmt: skip
    if freed:
        walk[rng.random(rows) < 0.6, :, 250:] *= 0.4
    res = np.round(cap[:, :, None] * walk, 2)
    return ResourcePool.from_slots(cap, res, 300.0, ["a", "b", "c"])
