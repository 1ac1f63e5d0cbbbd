"""Seeded generators: DeterLab-like testbeds, Grid'5000-like fabrics, virtual topologies and
experiment workloads (the paper's "2011 synthetic setup" is not public; these are stand-ins
with the same shape: ~255 available PCs of several types behind several switches)."""

from __future__ import annotations

from numbers import Integral, Real
from typing import List, Optional, Sequence, Tuple

import numpy as np

from .._shared.constraints import NO_VALIDATION, Interval, checked
from .._shared.seeding import check_seed
from .model import PhysicalTopology, PLink, PNode, VirtualTopology, VLink, VNode

__all__ = ["deterlab", "grid5000", "utah2000", "lan", "tree", "ring", "dumbbell", "random_sparse",
           "random_topology", "workload", "Experiment", "HARDWARE", "GENERATORS"]  # fmt: skip

GBIT = 1_000_000  # kbps
MBIT100 = 100_000

#: Hardware types of the DeterLab-like testbed: (name, share, interfaces, iface bw, features
#: with weights, cpu, memory).
HARDWARE = (
    ("pc3000", 0.35, 4, GBIT, {"fast-disk": 0.2, "bios-waittime": 0.1}, 3000, 2048),
    ("pc2133", 0.25, 4, GBIT, {"bios-waittime": 0.1}, 2133, 2048),
    ("pc850", 0.20, 4, MBIT100, {}, 850, 512),
    ("bpc2800", 0.12, 5, GBIT, {"fast-disk": 0.2, "tpm": 0.3, "bios-waittime": 0.1}, 2800, 4096),
    ("microcloud", 0.08, 2, GBIT, {"ssd": 0.3, "tpm": 0.3}, 3400, 8192),
)


#: The most nodes (physical or virtual) or experiments a generator makes: sizes are bounded so
#: that a typo cannot ask for more memory and time than a machine has.
MAX_GENERATED = 100_000


def _rng(seed):
    return np.random.default_rng(check_seed(seed))


def _at_most(n: int, what: str) -> int:
    """``n`` (a size made of checked parameters: the grid's nodes, the tree's), at most
    :data:`MAX_GENERATED` (ValueError naming ``what``)."""
    if n > MAX_GENERATED:
        raise ValueError(f"{what} must be at most {MAX_GENERATED:_}, got {n}")
    return n


def _count(lo: int = 1, hi: int = MAX_GENERATED) -> list:
    return [Interval(Integral, lo, hi)]


_BW = [Interval(Real, 0, None, closed="neither")]
#: A virtual link's bandwidth, a node's type and desires, a hardware list: what the models
#: (``VLink``, ``VNode``) check, or names looked up in :data:`HARDWARE`.
_MODEL = NO_VALIDATION
_VIRTUAL = {"vtype": _MODEL, "bw": _MODEL}
_PROBABILITY = [Interval(Real, 0, 1)]

#: Each generator's parameters, declared once (as the methods' tables,
#: :mod:`coalloc.testbed.constraints`): checked at every call (``@checked``), and the source
#: of ``tests/shared/test_checked.py``'s invalid-value tests. ``seed`` follows the seed
#: policy (:func:`coalloc._shared.seeding.check_seed`). Sizes are at most
#: :data:`MAX_GENERATED`.
GENERATORS = {
    "deterlab": {"n_pcs": _count(), "n_switches": _count(), "trunk_bw": _BW,
                 "trunks_per_pair": _count(1, 64)},
    "grid5000": {"n_sites": _count(), "clusters_per_site": _count(),
                 "nodes_per_cluster": _count(), "backbone_bw": _BW, "uplink_bw": _BW},
    "utah2000": {"n_pcs": _count(), "n_switches": _count(1, 1000), "trunk_bw": _BW,
                 "special": [Interval(Integral, 0, None, closed="left")]},
    "lan": {"n": _count(), **_VIRTUAL, "name": _MODEL, "desires": _MODEL},
    "tree": {"depth": _count(0), "fanout": _count(), **_VIRTUAL},
    "ring": {"n": _count(2), **_VIRTUAL},
    "dumbbell": {"n_left": _count(0), "n_right": _count(0), **_VIRTUAL,
                 "bottleneck_bw": _MODEL},
    "random_sparse": {"n": _count(), "extra_edges": _count(0), **_VIRTUAL,
                      "max_degree": [Interval(Integral, 1, None, closed="left")]},
    "random_topology": {"size": _count(), "hw_types": _MODEL, "p_typed": _PROBABILITY,
                        "p_desire": _PROBABILITY},
    "workload": {"n": _count(0), "mean_interarrival": _BW, "mean_duration": _BW,
                 "size_scale": _BW, "max_size": _count(2), "hw_types": _MODEL},
}  # fmt: skip


def _switch(name: str) -> PNode:
    """A switch node (type ``switch``, static ``lan`` without limit), as both fabrics have."""
    return PNode(name, {"switch": 1}, {"lan": float("inf")})


def _interfaces(pc: str, sw: str, count: int, bw: float, types=("ethernet",)) -> List[PLink]:
    """``count`` links ``PC:ethK`` wiring the PC's interfaces ``ethK`` to switch ``sw``."""
    return [PLink(f"{pc}:eth{k}", pc, sw, bw, types=types, a_iface=f"eth{k}")
            for k in range(count)]  # fmt: skip


def _linked(n: int, edges, vtype: str, bw: float) -> VirtualTopology:
    """Nodes ``n0..n{n-1}`` of ``vtype`` and one link ``name`` per ``(name, i, j)`` of
    ``edges`` (the point-to-point shapes: tree, ring, random sparse graph)."""
    links = [VLink(name, f"n{i}", f"n{j}", bw) for name, i, j in edges]
    return VirtualTopology(_vnodes(n, "n", vtype), links)


@checked("coalloc.testbed.generators", "deterlab", tables="GENERATORS")
def deterlab(n_pcs: int = 255, n_switches: int = 5, *, trunk_bw: float = 2 * GBIT,
             trunks_per_pair: int = 2, seed: Optional[int] = 0) -> PhysicalTopology:  # fmt: skip
    """A DeterLab-like testbed: ``n_pcs`` PCs of the :data:`HARDWARE` types, each type's
    PCs spread over one or two of ``n_switches`` leaf switches, leaves joined to a core
    switch by ``trunks_per_pair`` trunks of ``trunk_bw`` kbps each.

    Parameters
    ----------
    n_pcs : int
        PCs.
    n_switches : int
        Leaf switches.
    trunk_bw : float
        Bandwidth of one trunk (kbit/s).
    trunks_per_pair : int
        Trunks between a leaf and the core.
    seed : int, optional
        Seed of the layout.

    Returns
    -------
    PhysicalTopology
        The testbed.

    Examples
    --------
    >>> t = deterlab(40, 3, seed=1)
    >>> len([n for n in t.nodes if not t.nodes[n].is_switch])
    40
    """
    # the values were checked by the table (GENERATORS); these only fix their types
    n_pcs, n_switches, trunks_per_pair = int(n_pcs), int(n_switches), int(trunks_per_pair)
    trunk_bw = float(trunk_bw)
    rng = _rng(seed)
    nodes = [_switch("core")] + [_switch(f"sw{s}") for s in range(n_switches)]
    links = []
    for s in range(n_switches):
        for k in range(trunks_per_pair):
            links.append(PLink(f"trunk-sw{s}-{k}", f"sw{s}", "core", trunk_bw))
    shares = np.array([h[1] for h in HARDWARE])
    counts = np.floor(shares / shares.sum() * n_pcs).astype(int)
    counts[0] += n_pcs - counts.sum()
    i = 0
    for h, (name, _, nif, bw, feats, cpu, mem) in enumerate(HARDWARE):
        home = [(h + k) % n_switches for k in range(1 + (counts[h] > 40))]
        for j in range(counts[h]):
            pc = f"{name}-{j}"
            f = dict(feats)
            f["?+cpu"] = cpu
            f["?+mem"] = mem
            nodes.append(PNode(pc, {"pc": 1, name: 1}, {}, f))
            links += _interfaces(pc, f"sw{home[j % len(home)]}", nif, bw)
            i += 1
    del rng
    return PhysicalTopology(nodes, links)


@checked("coalloc.testbed.generators", "grid5000", tables="GENERATORS")
def grid5000(n_sites: int = 3, clusters_per_site: int = 2, nodes_per_cluster: int = 16, *,
             backbone_bw: float = 10 * GBIT, uplink_bw: float = 10 * GBIT,
             seed: Optional[int] = 0) -> PhysicalTopology:  # fmt: skip
    """A Grid'5000-like fabric: sites on a backbone ring, clusters behind site routers
    (modelled as switches), one 10G interface per node.

    Parameters
    ----------
    n_sites : int
        Sites on the backbone.
    clusters_per_site : int
        Clusters behind each site router.
    nodes_per_cluster : int
        Nodes per cluster.
    backbone_bw, uplink_bw : float
        Bandwidth of the backbone links and of the cluster uplinks (kbit/s).
    seed : int, optional
        Seed of the cluster sizes (cores per node).

    Returns
    -------
    PhysicalTopology
        The testbed.

    Examples
    --------
    >>> from coalloc.testbed.generators import grid5000
    >>> grid5000(2, 1, 4)
    PhysicalTopology(12 nodes, 4 switches, 11 links)
    """
    n_sites, clusters_per_site = int(n_sites), int(clusters_per_site)
    nodes_per_cluster = int(nodes_per_cluster)
    _at_most(n_sites * clusters_per_site * nodes_per_cluster, "n_sites x clusters_per_site x "
          "nodes_per_cluster")  # fmt: skip
    backbone_bw, uplink_bw = float(backbone_bw), float(uplink_bw)
    rng = _rng(seed)
    nodes = [_switch(f"site{s}") for s in range(n_sites)]
    links = [
        PLink(f"backbone-{s}", f"site{s}", f"site{(s + 1) % n_sites}", backbone_bw)
        for s in range(n_sites if n_sites > 2 else n_sites - 1)
    ]
    for s in range(n_sites):
        for c in range(clusters_per_site):
            sw = f"s{s}c{c}"
            nodes.append(_switch(sw))
            links.append(PLink(f"uplink-{sw}", sw, f"site{s}", uplink_bw))
            ctype = f"cl{s}{c}"
            cores = int(rng.choice([8, 16, 32]))
            for j in range(nodes_per_cluster):
                n = f"{sw}-n{j}"
                nodes.append(PNode(n, {"pc": 1, ctype: 1}, {}, {"?+cpu": cores}))
                links += _interfaces(n, sw, 1, 10 * GBIT, types=())
    return PhysicalTopology(nodes, links)


@checked("coalloc.testbed.generators", "utah2000", tables="GENERATORS")
def utah2000(
    *, n_pcs: int = 40, n_switches: int = 5, trunk_bw: float = 4 * MBIT100, special: int = 1
) -> PhysicalTopology:
    """The Utah Emulab of July 2000 as a testbed: ``n_pcs`` PCs spread evenly over
    ``n_switches`` switches joined in a full mesh of ``trunk_bw`` trunks (400 Mb/s), each PC
    with four 100 Mb/s Ethernet interfaces on its switch. The first ``special`` PCs of the
    last switch offer the feature ``special`` (weight 0.2, as in Emulab's ``dtest.ptop``).

    Deterministic (no seed): the case of issue 25, where a 20-PC experiment is mapped with
    inter-switch bandwidth 200 by the annealer and the exact method (proven) and had 400 from
    the default.

    Parameters
    ----------
    n_pcs : int
        PCs (``pc0``, ``pc1``, ...; PC ``i`` on switch ``i % n_switches``).
    n_switches : int
        Switches (``sw0`` ...), each pair joined by one trunk.
    trunk_bw : float
        Bandwidth of a trunk (kbit/s).
    special : int
        PCs offering the feature ``special``.

    Returns
    -------
    PhysicalTopology
        The testbed.

    Examples
    --------
    >>> from coalloc.testbed.generators import utah2000
    >>> utah2000()
    PhysicalTopology(45 nodes, 5 switches, 170 links)
    """
    n_pcs, n_switches, special = int(n_pcs), int(n_switches), int(special)  # checked (GENERATORS)
    trunk_bw = float(trunk_bw)
    nodes = [_switch(f"sw{s}") for s in range(n_switches)]
    links = [PLink(f"trunk{s}-{t}", f"sw{s}", f"sw{t}", trunk_bw, types=("ethernet",))
             for s in range(n_switches) for t in range(s + 1, n_switches)]  # fmt: skip
    last = [i for i in range(n_pcs) if i % n_switches == n_switches - 1][:special]
    for i in range(n_pcs):
        feats = {"special": 0.2} if i in last else {}
        nodes.append(PNode(f"pc{i}", {"pc": 1}, {}, feats))
        links += _interfaces(f"pc{i}", f"sw{i % n_switches}", 4, MBIT100)
    return PhysicalTopology(nodes, links)


def _vnodes(n: int, prefix: str, vtype: str, desires=None) -> List[VNode]:
    return [VNode(f"{prefix}{i}", vtype, 1, dict(desires or {})) for i in range(n)]


@checked("coalloc.testbed.generators", "lan", tables="GENERATORS")
def lan(n: int, *, vtype: str = "pc", bw: float = MBIT100, name: str = "lan0",
        desires=None) -> VirtualTopology:  # fmt: skip
    """``n`` nodes on one LAN (a ``lan`` node with one link per member).

    Parameters
    ----------
    n : int
        Members.
    vtype : str
        Type of the virtual nodes.
    bw : float
        Bandwidth of every link (kbit/s).
    name : str
        Name of the ``lan`` node.
    desires : mapping of str to float, optional
        Desires of every member.

    Returns
    -------
    VirtualTopology
        The experiment.

    Examples
    --------
    >>> from coalloc.testbed.generators import lan
    >>> lan(3)
    VirtualTopology(4 nodes, 3 links)
    """
    nodes = _vnodes(int(n), "n", vtype, desires) + [VNode(name, "lan")]
    links = [VLink(f"{name}-l{i}", f"n{i}", name, bw) for i in range(n)]
    return VirtualTopology(nodes, links)


@checked("coalloc.testbed.generators", "tree", tables="GENERATORS")
def tree(depth: int, fanout: int, *, vtype: str = "pc", bw: float = MBIT100) -> VirtualTopology:
    """A complete tree of point-to-point links.

    Parameters
    ----------
    depth : int
        Levels below the root.
    fanout : int
        Children per node.
    vtype : str
        Type of the virtual nodes.
    bw : float
        Bandwidth of every link (kbit/s).

    Returns
    -------
    VirtualTopology
        The experiment.

    Examples
    --------
    >>> from coalloc.testbed.generators import tree
    >>> tree(2, 2)
    VirtualTopology(7 nodes, 6 links)
    """
    depth, fanout = int(depth), int(fanout)
    _at_most(sum(fanout**k for k in range(min(depth, 64) + 1)), "the tree's nodes")
    edges = []
    frontier = [0]
    k = 1
    for _ in range(depth):
        nxt = []
        for p in frontier:
            for _ in range(fanout):
                edges.append((f"l{k}", p, k))
                nxt.append(k)
                k += 1
        frontier = nxt
    return _linked(k, edges, vtype, bw)


@checked("coalloc.testbed.generators", "ring", tables="GENERATORS")
def ring(n: int, *, vtype: str = "pc", bw: float = MBIT100) -> VirtualTopology:
    """``n`` nodes in a ring of point-to-point links.

    Parameters
    ----------
    n : int
        Nodes.
    vtype : str
        Type of the virtual nodes.
    bw : float
        Bandwidth of every link (kbit/s).

    Returns
    -------
    VirtualTopology
        The experiment.

    Examples
    --------
    >>> from coalloc.testbed.generators import ring
    >>> ring(4)
    VirtualTopology(4 nodes, 4 links)
    """
    n = int(n)
    return _linked(n, [(f"l{i}", i, (i + 1) % n) for i in range(n if n > 2 else 1)], vtype, bw)


@checked("coalloc.testbed.generators", "dumbbell", tables="GENERATORS")
def dumbbell(n_left: int, n_right: int, *, vtype: str = "pc", bw: float = MBIT100,
             bottleneck_bw: float = MBIT100) -> VirtualTopology:  # fmt: skip
    """Two LANs joined through two routers by one bottleneck link.

    Parameters
    ----------
    n_left, n_right : int
        Members of each LAN.
    vtype : str
        Type of the virtual nodes.
    bw : float
        Bandwidth of every link (kbit/s).
    bottleneck_bw : float
        Bandwidth of the link between the routers.

    Returns
    -------
    VirtualTopology
        The experiment.

    Examples
    --------
    >>> from coalloc.testbed.generators import dumbbell
    >>> dumbbell(2, 3)
    VirtualTopology(9 nodes, 8 links)
    """
    nodes = [VNode("rl", vtype), VNode("rr", vtype), VNode("lanL", "lan"), VNode("lanR", "lan")]
    links = [
        VLink("bottleneck", "rl", "rr", bottleneck_bw),
        VLink("lanL-r", "rl", "lanL", bw),
        VLink("lanR-r", "rr", "lanR", bw),
    ]
    for i in range(n_left):
        nodes.append(VNode(f"a{i}", vtype))
        links.append(VLink(f"lanL-{i}", f"a{i}", "lanL", bw))
    for i in range(n_right):
        nodes.append(VNode(f"b{i}", vtype))
        links.append(VLink(f"lanR-{i}", f"b{i}", "lanR", bw))
    return VirtualTopology(nodes, links)


@checked("coalloc.testbed.generators", "random_sparse", tables="GENERATORS")
def random_sparse(n: int, extra_edges: int = 2, *, vtype: str = "pc", bw: float = MBIT100,
                  max_degree: int = 3, seed: Optional[int] = 0) -> VirtualTopology:  # fmt: skip
    """A random spanning tree plus ``extra_edges`` links, degrees at most ``max_degree``.

    Parameters
    ----------
    n : int
        Nodes.
    extra_edges : int
        Links added to the spanning tree (fewer when the degree limit forbids them).
    vtype : str
        Type of the virtual nodes.
    bw : float
        Bandwidth of every link (kbit/s).
    max_degree : int
        Largest number of links at a node.
    seed : int, optional
        Seed of the tree and the extra links.

    Returns
    -------
    VirtualTopology
        The experiment.

    Examples
    --------
    >>> from coalloc.testbed.generators import random_sparse
    >>> random_sparse(6, 2, seed=0)
    VirtualTopology(6 nodes, 7 links)
    """
    n, extra_edges = int(n), int(extra_edges)
    rng = _rng(seed)
    deg = [0] * n
    edges = set()
    for i in range(1, n):
        opts = [j for j in range(i) if deg[j] < max_degree] or list(range(i))
        j = int(rng.choice(opts))
        edges.add((j, i))
        deg[i] += 1
        deg[j] += 1
    tries = 0
    while extra_edges > 0 and tries < 50 * n:
        tries += 1
        a, b = sorted(int(x) for x in rng.choice(n, 2, replace=False))
        if (a, b) in edges or deg[a] >= max_degree or deg[b] >= max_degree:
            continue
        edges.add((a, b))
        deg[a] += 1
        deg[b] += 1
        extra_edges -= 1
    return _linked(n, [(f"l{k}", a, b) for k, (a, b) in enumerate(sorted(edges))], vtype, bw)


def _retype(top: VirtualTopology, rng, hw_types: Sequence[str], p_typed: float,
            p_desire: float) -> VirtualTopology:  # fmt: skip
    """Ask some nodes for a hardware type or memory, only as the hardware can satisfy
    (enough interfaces for the node's links, fast enough ones, enough memory)."""
    spec = {h[0]: h for h in HARDWARE}
    nodes = []
    for v in top.nodes.values():
        if v.type == "lan":
            nodes.append(v)
            continue
        t = v.type
        desires = dict(v.desires)
        links = top.incident(v.name)
        deg = len(links)
        bw = max([lk.bw or 0 for lk in links] + [0])
        if rng.random() < p_desire:
            desires["?+mem"] = float(rng.choice([256, 512, 1024]))
        if rng.random() < p_typed:
            opts = [h for h in hw_types if h not in spec or (
                spec[h][2] >= deg and spec[h][3] >= bw
                and spec[h][6] >= desires.get("?+mem", 0))]  # fmt: skip
            if opts:
                t = str(rng.choice(opts))
        nodes.append(VNode(v.name, t, v.slots, desires))
    return VirtualTopology(nodes, top.links.values(), vclasses=top.vclasses, fixed=top.fixed,
                           hints=top.hints)  # fmt: skip


@checked("coalloc.testbed.generators", "random_topology", tables="GENERATORS")
def random_topology(size: int, *, seed: Optional[int] = 0, hw_types=None,
                    p_typed: float = 0.3, p_desire: float = 0.2) -> VirtualTopology:  # fmt: skip
    """One of LAN, tree, ring, dumbbell or random sparse graph with about ``size`` nodes,
    some nodes asking for a specific hardware type or memory.

    Parameters
    ----------
    size : int
        About this many nodes.
    seed : int, optional
        Seed of the shape, the types and the desires.
    hw_types : sequence of str, optional
        Hardware types nodes may ask for (default: those of :data:`HARDWARE`).
    p_typed : float
        Probability that a node asks for a specific hardware type.
    p_desire : float
        Probability that a node has a desire.

    Returns
    -------
    VirtualTopology
        The experiment.

    Examples
    --------
    >>> from coalloc.testbed.generators import random_topology
    >>> random_topology(6, seed=1)
    VirtualTopology(6 nodes, 6 links)
    """
    size = int(size)
    rng = _rng(seed)
    kind = int(rng.integers(5))
    size = max(2, int(size))
    bw = float(rng.choice([MBIT100, MBIT100, GBIT]))
    if kind == 0:
        top = lan(size, bw=bw)
    elif kind == 1:
        fan = int(rng.integers(2, 4))
        depth = max(1, int(np.log(max(size, 2)) / np.log(fan)))
        top = tree(depth, fan, bw=bw)
    elif kind == 2:
        top = ring(size, bw=bw)
    elif kind == 3:
        top = dumbbell(max(1, (size - 2) // 2), max(1, size - 2 - (size - 2) // 2), bw=bw)
    else:
        top = random_sparse(size, max(1, size // 4), bw=bw, seed=int(rng.integers(2**31)))
    hw = hw_types if hw_types is not None else [h[0] for h in HARDWARE]
    return _retype(top, rng, hw, p_typed, p_desire)


class Experiment(Tuple):
    """``(arrival, duration, top)``.

    Parameters
    ----------
    iterable : tuple of (float, float, VirtualTopology)
        Arrival time, duration and experiment.

    Examples
    --------
    >>> from coalloc.testbed.generators import Experiment, ring
    >>> Experiment((0.0, 10.0, ring(3)))
    (0.0, 10.0, VirtualTopology(3 nodes, 3 links))
    """


@checked("coalloc.testbed.generators", "workload", tables="GENERATORS")
def workload(n: int, *, seed: Optional[int] = 0, mean_interarrival: float = 1.0,
             mean_duration: float = 60.0, size_scale: float = 6.0, max_size: int = 80,
             hw_types=None) -> List[tuple]:  # fmt: skip
    """``n`` experiments ``(arrival, duration, top)``: Poisson arrivals, log-normal
    durations, heavy-tailed sizes (log-normal around ``size_scale``, at most ``max_size``).

    Parameters
    ----------
    n : int
        Experiments.
    seed : int, optional
        Seed of the arrivals, durations, sizes and shapes.
    mean_interarrival, mean_duration : float
        Mean time between arrivals and median duration (seconds).
    size_scale : float
        Median experiment size (nodes).
    max_size : int
        Largest experiment size.
    hw_types : sequence of str, optional
        Hardware types nodes may ask for (as in :func:`random_topology`).

    Returns
    -------
    list of (float, float, VirtualTopology)
        The experiments by arrival.

    Examples
    --------
    >>> from coalloc.testbed.generators import workload
    >>> [(round(t, 2), top.__class__.__name__) for t, _, top in workload(3, seed=0)]
    [(0.68, 'VirtualTopology'), (1.23, 'VirtualTopology'), (1.99, 'VirtualTopology')]
    """
    # the values were checked by the table (GENERATORS); these only fix their types
    n, max_size = int(n), int(max_size)
    mean_interarrival, mean_duration = float(mean_interarrival), float(mean_duration)
    size_scale = float(size_scale)
    rng = _rng(seed)
    t = 0.0
    out = []
    for _ in range(n):
        t += float(rng.exponential(mean_interarrival))
        dur = float(rng.lognormal(np.log(mean_duration), 1.0))
        size = int(min(max_size, max(2, round(rng.lognormal(np.log(size_scale), 0.8)))))
        out.append((t, dur, random_topology(size, seed=int(rng.integers(2**31)),
                                            hw_types=hw_types)))  # fmt: skip
    return out
