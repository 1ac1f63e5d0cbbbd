"""The paper's experimental setups, seeded (Cankar et al. 2013, sections 4.1-4.2).

* :func:`table1_pool`: 606 nodes with Table 1's statistics (CPU cores, CPU frequency, RAM)
  and timetables of one day on 5-minute slots from synthetic usage series. The PlanetLab
  inventory and its 18 August 2010 logs are not public; the choices are documented in
  ``coalloc docs collective``: cores from ``{1, 2, 4, 8}`` with probabilities ``(0.19, 0.325, 0.455,
  0.03)`` (mean 2.90, deviation 1.51), frequency normal ``(2.68, 0.36)`` clipped to
  ``[1.40, 3.60]`` GHz, RAM log-normal with mean 2.95 and deviation 0.84 clipped to
  ``[0.73, 7.71]`` GB; the load of node ``j`` is ``L_j (1 + 0.35 sin(2 pi (s/288 - 0.35)))``
  plus AR(1) noise (``phi = 0.9``), with ``L_j ~ Beta(1.5, 3.5)``, and occasional bursts; CPU
  cores and frequency are reserved in proportion to the CPU load, RAM to a more persistent
  memory load. Labels: ``arch`` (``"amd64"`` on 85 % of the nodes, else ``"i386"``) and
  ``os`` (``"xtreemos"``).
* :func:`section42_requests`: the request distribution of section 4.2.
* :func:`random_instance`: small random pools and requests (tests, quality checks).
"""

from __future__ import annotations

from collections.abc import Mapping
from numbers import Integral, Real
from typing import List, Optional, Tuple

import numpy as np

from .._shared.constraints import Boolean, InstanceOf, Interval, Predicate, Table, checked
from .._shared.seeding import check_seed, streams
from .._shared.validation import check_memory
from .model import CollectiveRequest, ResourcePool

__all__ = ["table1_pool", "section42_requests", "random_instance", "TABLE1", "DURATIONS", "COUNTS",
           "GENERATORS"]  # fmt: skip

_ONE_UP = [Interval(Integral, 1, None, closed="left")]
_SECONDS = [Interval(Real, 0, None, closed="neither")]


def _beta_ok(pair) -> bool:
    return len(pair) == 2 and all(isinstance(v, (int, float, np.integer, np.floating))
                                  and not isinstance(v, (bool, np.bool_))
                                  and np.isfinite(v) and v > 0 for v in pair)  # fmt: skip


#: Each generator's parameters, declared once (as the methods' tables,
#: :mod:`coalloc.collective.constraints`): checked at every call (``@checked``), and the
#: source of ``tests/shared/test_checked.py``'s invalid-value tests. ``seed`` follows the
#: seed policy (:func:`coalloc._shared.seeding.check_seed`); ``pool`` is a model.
GENERATORS = {
    "table1_pool": Table(
        {
            "n_nodes": _ONE_UP,
            "n_slots": _ONE_UP,
            "slot_seconds": _SECONDS,
            "load": [InstanceOf((tuple, list), "a pair (a, b) of Beta parameters")],
        },
        relations=[Predicate(("load",), _beta_ok, "load must be (a, b), two finite numbers "
                             "> 0 (a Beta distribution's), got {load}")],  # fmt: skip
    ),
    "section42_requests": {
        "count": _ONE_UP,
        "n_cases": [Interval(Integral, 0, None, closed="left")],
        "labels": [InstanceOf(Mapping, "a mapping of label -> value"), None],
    },
    "random_instance": {
        "n_nodes": _ONE_UP,
        "count": _ONE_UP,
        "n_properties": _ONE_UP,
        "n_slots": _ONE_UP,
        "slot_seconds": _SECONDS,
        "collective": [Boolean()],
        "load": [Interval(Real, 0, 1)],
    },
}

#: Table 1: property -> (mean, deviation, min, max) over 606 PlanetLab nodes.
TABLE1 = {
    "cores": (2.90, 1.51, 1.0, 8.0),
    "ghz": (2.68, 0.36, 1.40, 3.60),
    "ram_gb": (2.95, 0.84, 0.73, 7.71),
}
#: Section 4.2: request durations (s) and numbers of resources.
DURATIONS = (600.0, 1800.0, 3600.0, 7200.0, 10800.0, 18000.0)
COUNTS = (2, 5, 10, 15, 30, 60)


def _ar1(rng, n, s, phi, sigma):
    x = np.zeros((n, s))
    eps = rng.normal(0.0, sigma, (n, s))
    x[:, 0] = eps[:, 0] / np.sqrt(1 - phi * phi)
    for k in range(1, s):
        x[:, k] = phi * x[:, k - 1] + eps[:, k]
    return x


@checked("coalloc.collective.generators", "table1_pool", tables="GENERATORS")
def table1_pool(n_nodes: int = 606, *, n_slots: int = 288, slot_seconds: float = 300.0,
                load: Tuple[float, float] = (1.5, 3.5),
                seed: Optional[int] = 0) -> ResourcePool:  # fmt: skip
    """A pool like the paper's PlanetLab inventory (module docstring).

    Parameters
    ----------
    n_nodes : int
        Nodes (606 in the paper).
    n_slots : int
        5-minute slots of usage (288: one day).
    slot_seconds : float
        Seconds of one slot.
    load : (float, float)
        Parameters of the Beta distribution of the nodes' mean load levels.
    seed : int, optional

    Returns
    -------
    ResourcePool
        Properties ``("cores", "ghz", "ram_gb")``, labels ``arch`` and ``os``.

    Examples
    --------
    >>> pool = table1_pool(50, seed=1)
    >>> pool.n_nodes, pool.names
    (50, ('cores', 'ghz', 'ram_gb'))
    """
    n_nodes, n_slots = int(n_nodes), int(n_slots)  # checked by the table (GENERATORS)
    # about ten float64 arrays of nodes x slots live at once (the pool keeps three)
    check_memory(10.0 * 8 * n_nodes * (n_slots + 1) * 3,
                 f"a pool of {n_nodes} nodes and {n_slots} slots")  # fmt: skip
    st = streams(check_seed(seed), ("capacity", "load", "labels"))
    rng = np.random.default_rng(st["capacity"])
    cores = rng.choice([1.0, 2.0, 4.0, 8.0], size=n_nodes, p=[0.19, 0.325, 0.455, 0.03])
    ghz = np.clip(rng.normal(2.68, 0.36, n_nodes), 1.40, 3.60)
    mu, sd = 2.95, 0.84
    s2 = np.log(1 + (sd / mu) ** 2)
    ram = np.clip(rng.lognormal(np.log(mu) - s2 / 2, np.sqrt(s2), n_nodes), 0.73, 7.71)
    cap = np.column_stack([cores, np.round(ghz, 2), np.round(ram, 2)])
    lr = np.random.default_rng(st["load"])
    level = lr.beta(float(load[0]), float(load[1]), n_nodes)[:, None]
    s = np.arange(n_slots)[None, :]
    diurnal = 1 + 0.35 * np.sin(2 * np.pi * (s / 288.0 - 0.35))
    cpu = level * diurnal + _ar1(lr, n_nodes, n_slots, 0.9, 0.06)
    bursts = lr.random((n_nodes, n_slots)) < 0.01
    cpu = np.clip(cpu + bursts * lr.uniform(0.2, 0.6, (n_nodes, n_slots)), 0.0, 1.0)
    mem = np.clip(0.5 * level + 0.3 * diurnal * level + _ar1(lr, n_nodes, n_slots, 0.98, 0.02),
                  0.0, 1.0)  # fmt: skip
    reserved = np.stack([cpu * cap[:, :1], cpu * cap[:, 1:2], mem * cap[:, 2:3]], axis=1)
    reserved = np.round(reserved, 4)
    reserved = np.minimum(reserved, cap[:, :, None])
    labr = np.random.default_rng(st["labels"])
    arch = np.where(labr.random(n_nodes) < 0.85, "amd64", "i386")
    labels = {"arch": arch.tolist(), "os": ["xtreemos"] * n_nodes}
    return ResourcePool.from_slots(cap, reserved, slot_seconds, ("cores", "ghz", "ram_gb"),
                                   labels=labels)  # fmt: skip


@checked("coalloc.collective.generators", "section42_requests", tables="GENERATORS")
def section42_requests(pool: ResourcePool, count: int, n_cases: int = 90, *,
                       seed: Optional[int] = 0, labels: Optional[dict] = None,
                       ) -> List[Tuple[CollectiveRequest, CollectiveRequest]]:  # fmt: skip
    """``n_cases`` pairs ``(simple, collective)`` of section 4.2's requests for ``count`` nodes.

    ``t_res`` from :data:`DURATIONS`; ``t_e ~ U[0, 5 h 50 min]``; ``t_l + t_res ~ U[18 h 10 min,
    24 h]``; ``d_i ~ U[N (p_i - 2 s_i), N (p_i + 0.5 s_i)]`` with the pool's mean and deviation
    (at least ``0.01 N``); simple: ``e_i = d_i / N``, collective: ``e_i = d_i / 2N``. Labels
    default to ``{"arch": "amd64"}`` when the pool has an ``arch`` label (the paper's "AMD
    Opteron nodes").

    Parameters
    ----------
    pool : ResourcePool
        The pool whose mean and deviation scale the totals.
    count : int
        ``N``: resources per request.
    n_cases : int
        Pairs to draw.
    seed : int, optional
        Seed of the draws.
    labels : dict, optional
        Labels of every request (default: see above).

    Returns
    -------
    list of (CollectiveRequest, CollectiveRequest)
        ``(simple, collective)`` pairs.

    Examples
    --------
    >>> from coalloc.collective.generators import section42_requests, table1_pool
    >>> pool = table1_pool(20, n_slots=12, seed=0)
    >>> pairs = section42_requests(pool, 3, 2, seed=0)
    >>> [(simple.collective, collective.collective, collective.count)
    ...  for simple, collective in pairs]
    [(False, True, 3), (False, True, 3)]
    """
    count = int(count)  # checked by the table (GENERATORS)
    name = f"requests{count}"
    rng = np.random.default_rng(streams(check_seed(seed), (name,))[name])
    if labels is None:
        labels = {"arch": "amd64"} if "arch" in pool.labels else {}
    mean, dev = pool.capacity.mean(axis=0), pool.capacity.std(axis=0)
    out = []
    for _ in range(n_cases):
        dur = float(rng.choice(DURATIONS))
        te = float(rng.uniform(0, 5 * 3600 + 50 * 60))
        end = float(rng.uniform(18 * 3600 + 10 * 60, 24 * 3600))
        tl = max(te, end - dur)
        lo = np.maximum(count * (mean - 2 * dev), 0.01 * count)
        hi = np.maximum(count * (mean + 0.5 * dev), lo)
        d = rng.uniform(lo, hi)
        names = pool.names
        e_simple = {k: float(v / count) for k, v in zip(names, d)}
        e_coll = {k: float(v / (2 * count)) for k, v in zip(names, d)}
        total = {k: float(v) for k, v in zip(names, d)}
        simple = CollectiveRequest(dur, count, te, tl, e_simple, None, labels)
        coll = CollectiveRequest(dur, count, te, tl, e_coll, total, labels)
        out.append((simple, coll))
    return out


@checked("coalloc.collective.generators", "random_instance", tables="GENERATORS")
def random_instance(n_nodes: int = 10, count: int = 3, *, n_properties: int = 3,
                    n_slots: int = 12, slot_seconds: float = 300.0, collective: bool = True,
                    load: float = 0.5, seed: Optional[int] = 0,
                    ) -> Tuple[ResourcePool, CollectiveRequest]:  # fmt: skip
    """A small random pool with random usage and a request that is often solvable.

    Parameters
    ----------
    n_nodes : int
        Resources of the pool.
    count : int
        Resources the request asks for.
    n_properties : int
        Quantitative properties.
    n_slots : int
        Slots of the usage timetable.
    slot_seconds : float
        Length of a slot.
    collective : bool
        A collective request (totals) or a simple one (per resource).
    load : float
        Mean fraction of the capacity already reserved.
    seed : int, optional
        Seed of the pool, the usage and the request.

    Returns
    -------
    (ResourcePool, CollectiveRequest)

    Examples
    --------
    >>> pool, req = random_instance(8, 3, seed=2)
    >>> pool.n_nodes, req.count
    (8, 3)
    """
    rng = np.random.default_rng(streams(check_seed(seed), ("random",))["random"])
    names = tuple(f"p{i}" for i in range(n_properties))
    cap = np.round(rng.uniform(1, 8, (n_nodes, n_properties)), 2)
    busy = rng.random((n_nodes, n_properties, n_slots)) < load
    res = np.round(cap[:, :, None] * rng.uniform(0, 1, busy.shape) * busy, 3)
    pool = ResourcePool.from_slots(cap, res, slot_seconds, names)
    dur = float(slot_seconds * rng.integers(1, max(2, n_slots // 3)))
    te = float(slot_seconds * rng.integers(0, max(1, n_slots // 3)))
    tl = te + float(slot_seconds * rng.integers(0, n_slots))
    d = count * cap.mean(axis=0) * rng.uniform(0.2, 0.8, n_properties)
    if collective:
        e_coll = {k: float(v / (2 * count)) for k, v in zip(names, d)}
        req = CollectiveRequest(dur, count, te, tl, e_coll, {k: float(v) for k, v in zip(names, d)})
    else:
        req = CollectiveRequest(dur, count, te, tl, {k: float(v / count) for k, v in zip(names, d)})
    return pool, req
