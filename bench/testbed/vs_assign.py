"""Replays against Emulab's real ``assign`` (issue 25, deliverable 5).

For each workload generator, the same experiments arrive and depart on the same testbed for
each mapper; a mapping holds its PCs and trunk bandwidth until its experiment departs. Per
experiment, every mapper gets the *current free testbed* as files (a ``.ptop`` of the free
PCs, every switch, the trunks with the bandwidth not in use; the experiment's ``.top``):

* ``assign``: the real binary, ``assign -s SEED PTOP TOP``; its printed ``Nodes:``/``Edges:``
  are parsed into a mapping and routes (time: the whole process);
* ``default`` / ``anneal``: the package's methods reading the same two files (time: reading
  both files and mapping; ``median map ms``: the mapping alone).

Time: wall seconds *and* CPU seconds of each side (assign's: the child process's user +
system time from ``getrusage``; ours: ``time.process_time`` of this warm process, which is
how a long-running service pays for an experiment: reading both files from their text and
mapping, nothing kept from the last experiment but the reader's and the tables' caches).
``--compat-sample K`` also runs ``coalloc-assign`` (the drop-in, a process per experiment,
as Emulab's wrapper would call it) on the first K experiments' files of each replay and
reports its cost apart: start, imports, reading and mapping.

Experiments no mapper can map, whatever the state (proven impossible on the *empty*
testbed: :func:`impossible_on_empty`), are counted apart, and the failure ratios are also
given over the other experiments.

Every mapping (assign's included) is re-checked by ``coalloc.testbed.verify_mapping`` on the
mapping and the routes the mapper gave, against the free testbed (link types included); one
the checker rejects counts as a failure (and is counted apart). Inter-switch bandwidth is the
checker's (bandwidth x trunk hops), never a mapper's own claim.

Usage::

    python -m bench.testbed.vs_assign --assign /work/peers/assign/assign-2016 [--n 250]
        [--generators deterlab grid5000 lanheavy] [--emulab-files DIR] [--json OUT]
        [--compat-sample K]

``--assign`` defaults to ``$COALLOC_ASSIGN``; without a binary the script says so and exits 2.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Dict, List, Optional, Tuple

import numpy as np

import coalloc.testbed as tb
from bench.shared._progress import add_quiet, bar
from coalloc.testbed import generators as g
from coalloc.testbed.model import PhysicalTopology, VirtualTopology

GENERATORS = ("deterlab", "grid5000", "lanheavy")
FLAGS = ("emulated", "trivial_ok", "nodelay")


# ----------------------------------------------------------------------------- writing
def _typed(text: str, kind: str) -> str:
    """Package-written text with a link type on every link line (assign 2011-2016 requires
    the 8th field): ``ethernet`` is inserted where a line has none."""
    out = []
    for line in text.splitlines():
        tok = line.split()
        if tok and tok[0] == "link":
            if len(tok) == 7 or (len(tok) > 7 and (tok[7] in FLAGS or ":" in tok[7])):
                tok.insert(7, "ethernet")
            line = " ".join(tok)
        out.append(line)
    return "\n".join(out) + "\n"


def free_testbed(ptop: PhysicalTopology, used: set, trunk_load: Dict[str, float]
                 ) -> PhysicalTopology:  # fmt: skip
    """The testbed as a new experiment sees it: the PCs not in use (every switch), each
    trunk with the bandwidth not in use (a trunk with none left is left out)."""
    nodes = [n for name, n in ptop.nodes.items() if name not in used]
    keep = {n.name for n in nodes}
    links = []
    for lk in ptop.links.values():
        if lk.a not in keep or lk.b not in keep:
            continue
        if ptop.nodes[lk.a].is_switch and ptop.nodes[lk.b].is_switch:
            left = lk.bw - trunk_load.get(lk.name, 0.0)
            if left <= 1e-9:
                continue
            lk = dataclasses.replace(lk, bw=left)
        links.append(lk)
    return PhysicalTopology(nodes, links, **_ptop_extras(ptop))


def _ptop_extras(ptop: PhysicalTopology) -> dict:
    out = {}
    if getattr(ptop, "type_limits", None):
        out["type_limits"] = dict(ptop.type_limits)
    if getattr(ptop, "policies", None):
        out["policies"] = dict(ptop.policies)
    return out


# ----------------------------------------------------------------------------- assign
def parse_assign(text: str) -> Tuple[Dict[str, str], Dict[str, object]]:
    """``(mapping, routes)`` from assign's ``Nodes:`` and ``Edges:`` sections."""
    mapping: Dict[str, str] = {}
    routes: Dict[str, object] = {}
    section = None
    for line in text.splitlines():
        s = line.strip()
        if s == "Nodes:":
            section = "n"
            continue
        if s == "Edges:":
            section = "e"
            continue
        if s in ("End Nodes", "End Edges", "End solution"):
            section = None
            continue
        tok = s.split()
        if section == "n" and len(tok) == 2 and tok[0] != "unassigned:":
            mapping[tok[0]] = tok[1]
        elif section == "e" and len(tok) >= 2:
            if tok[1] == "trivial":
                routes[tok[0]] = "trivial"
            elif tok[1] in ("direct", "intraswitch", "interswitch"):
                # PLINK (srcmac,dstmac) PLINK (srcmac,dstmac) ...
                path = [t for t in tok[2:] if not t.startswith("(")]
                if tok[1] == "direct":  # assign prints a direct link once per direction
                    path = list(dict.fromkeys(path))
                routes[tok[0]] = path
    return mapping, routes


def walk_order(ptop: PhysicalTopology, start: str, path: List[str]) -> List[str]:
    """The links of ``path`` in walking order from ``start`` where they form a walk in
    some order: assign prints an inter-switch path's trunks from the far end (interfaces
    first and last, trunks reversed), which is the same route; links that form no walk are
    returned as given, for the checker to refuse."""
    left, here, out = list(path), start, []
    while left:
        for i, name in enumerate(left):
            lk = ptop.links.get(name)
            if lk is not None and here in (lk.a, lk.b):
                out.append(name)
                here = lk.b if lk.a == here else lk.a
                del left[i]
                break
        else:
            return list(path)
    return out


def _child_cpu() -> float:
    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    return ru.ru_utime + ru.ru_stime


def run_process(cmd: List[str]) -> Tuple[subprocess.CompletedProcess, float, float]:
    """``(completed process, wall seconds, CPU seconds of the child)``."""
    c0, t0 = _child_cpu(), time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    return proc, time.perf_counter() - t0, _child_cpu() - c0


def run_assign(binary: str, ptop_path: str, top_path: str, seed: int, cpu: Optional[list] = None):
    """assign's ``(mapping, routes, wall seconds, exit code)``; its CPU seconds are
    appended to ``cpu`` when given."""
    proc, secs, cpu_s = run_process([binary, "-s", str(seed), ptop_path, top_path])
    if cpu is not None:
        cpu.append(cpu_s)
    if proc.returncode != 0:
        return None, None, secs, proc.returncode
    mapping, routes = parse_assign(proc.stdout)
    return mapping, routes, secs, 0


def _oriented(top, ptop, mapping, routes):
    out = {}
    for name, path in routes.items():
        lk = top.links.get(name)
        if isinstance(path, list) and lk is not None and lk.a in mapping:
            path = walk_order(ptop, mapping[lk.a], path)
        out[name] = path
    return out


# ----------------------------------------------------------------------------- proofs
def _offers(node, vtype: str) -> float:
    return max(node.types.get(vtype, 0.0), node.static.get(vtype, 0.0))


def hub_bound(top: VirtualTopology, ptop: PhysicalTopology, hub: str) -> Optional[int]:
    """An upper bound on how many of ``hub``'s neighbours any mapping can connect to it,
    or None where the bound does not apply.

    It applies where every physical node that may host ``hub`` is a switch, every neighbour
    is a host-typed node (one slot of its type a host, no switch offering it), and the
    hub's links all ask the same bandwidth ``b``: a neighbour then takes a host of its own
    with an interface of at least ``b`` to a switch, and its link crosses every trunk on
    the way to the hub's switch. For each switch the hub may take, a maximum flow from the
    hosts (one unit each, entering at their switch) to it over the trunks (``floor(bw /
    b)`` units each way: both directions in full, any path, so an over-estimate) bounds
    the neighbours; the bound is the largest over those switches.
    """
    from scipy.sparse import csr_matrix
    from scipy.sparse.csgraph import maximum_flow

    h = top.nodes[hub]
    links = [lk for lk in top.links.values() if hub in (lk.a, lk.b)]
    bws = {lk.bw for lk in links}
    if not links or len(bws) != 1 or None in bws:
        return None
    b = float(bws.pop())
    peers = [lk.b if lk.a == hub else lk.a for lk in links]
    if len(set(peers)) != len(peers):
        return None
    hosts_of = [p for p in ptop.nodes.values() if _offers(p, h.type) > 0]
    if not hosts_of or not all(p.is_switch for p in hosts_of):
        return None
    switches = [n for n, p in ptop.nodes.items() if p.is_switch]
    sidx = {n: i + 1 for i, n in enumerate(switches)}  # 0: the source
    supply = np.zeros(len(switches) + 1, dtype=np.int64)
    for v in peers:
        vt = top.nodes[v].type
        if any(p.is_switch and _offers(p, vt) > 0 for p in ptop.nodes.values()):
            return None
        if any(0 < _offers(p, vt) != 1 for p in ptop.nodes.values()):
            return None
    vtypes = {top.nodes[v].type for v in peers}
    counted = set()
    cap: Dict[Tuple[int, int], int] = {}
    for lk in ptop.links.values():
        pa, pb = ptop.nodes[lk.a], ptop.nodes[lk.b]
        if pa.is_switch and pb.is_switch:
            u = int(lk.bw // b)
            for x, y in ((lk.a, lk.b), (lk.b, lk.a)):
                cap[(sidx[x], sidx[y])] = cap.get((sidx[x], sidx[y]), 0) + u
        elif pa.is_switch != pb.is_switch and lk.bw >= b:
            host, sw = (lk.b, lk.a) if pa.is_switch else (lk.a, lk.b)
            if host not in counted and any(_offers(ptop.nodes[host], t) for t in vtypes):
                counted.add(host)
                supply[sidx[sw]] += 1
    best = 0
    for hp in hosts_of:
        t = sidx[hp.name]
        arcs = dict(cap)
        for sw in range(1, len(switches) + 1):
            if supply[sw]:
                arcs[(0, sw)] = int(supply[sw])
        if not arcs:
            continue
        rows, cols = zip(*arcs)
        n = len(switches) + 1
        m = csr_matrix((np.array(list(arcs.values()), dtype=np.int32), (rows, cols)),
                       shape=(n, n))  # fmt: skip
        best = max(best, int(maximum_flow(m, 0, t).flow_value) if t != 0 else 0)
    return best


def impossible_on_empty(top: VirtualTopology, ptop: PhysicalTopology) -> Optional[str]:
    """Why no mapper can map ``top`` even on the whole, empty testbed, or None (no proof).

    Proofs: the default's own (status ``infeasible``: a node no physical node can take,
    more nodes of a class than the testbed has); :func:`hub_bound` below a hub's degree."""
    r = tb.assign(top, ptop, seed=0)
    if r.success:
        return None
    if r.status == "infeasible":
        return f"the default proves it: {r.reason.get('constraint')}"
    for name in top.nodes:
        deg = sum(1 for lk in top.links.values() if name in (lk.a, lk.b))
        bound = hub_bound(top, ptop, name)
        if bound is not None and bound < deg:
            return f"{name} has {deg} links; the trunks carry at most {bound} of them"
    return None


# ----------------------------------------------------------------------------- workloads
def make_generator(name: str, n: int, seed: int):
    """``(ptop, workload)`` of one generator."""
    if name == "deterlab":  # DeterLab-like: 5 hardware types, leaves on a core
        ptop = g.deterlab(160, 4, seed=seed)
        wl = g.workload(n, seed=seed, mean_duration=8.0, size_scale=6.0, max_size=60,
                        hw_types=[h[0] for h in g.HARDWARE])  # fmt: skip
        return ptop, wl
    if name == "grid5000":  # clusters behind 4:1 oversubscribed uplinks (16 x 10G on 40G)
        ptop = g.grid5000(3, 2, 16, backbone_bw=40 * g.GBIT, uplink_bw=40 * g.GBIT, seed=seed)
        rng = np.random.default_rng(seed + 1)
        wl, t = [], 0.0
        for _ in range(n):  # one VLAN of nodes per experiment (one 10G interface a node)
            t += float(rng.exponential(1.0))
            dur = float(rng.lognormal(np.log(5.0), 1.0))
            m = int(min(40, max(2, round(rng.lognormal(np.log(7.0), 0.8)))))
            wl.append((t, dur, g.lan(m, bw=10 * g.GBIT)))
        return ptop, wl
    if name == "lanheavy":  # Emulab-style: experiments of LANs joined by routers
        ptop = g.deterlab(160, 4, seed=seed)
        rng = np.random.default_rng(seed)
        wl = []
        t = 0.0
        for i in range(n):
            t += float(rng.exponential(1.0))
            dur = float(rng.lognormal(np.log(5.0), 1.0))
            wl.append((t, dur, _lan_experiment(rng, i)))
        return ptop, wl
    raise ValueError(f"unknown generator {name!r}; known: {GENERATORS}")


def _lan_experiment(rng, i: int) -> VirtualTopology:
    """1-3 LANs of 2-12 PCs; consecutive LANs joined through a router PC in both."""
    k = int(rng.integers(1, 4))
    lines, links, nid = [], [], 0
    prev_router = None
    for j in range(k):
        m = int(rng.integers(2, 13))
        members = []
        for _ in range(m):
            lines.append(f"node n{nid} pc")
            members.append(f"n{nid}")
            nid += 1
        if prev_router is not None:
            members.append(prev_router)
        lines.append(f"node lan{j} lan")
        for q, v in enumerate(members):
            links.append(f"link lan{j}-{q} {v} lan{j} 100000 0 0")
        prev_router = members[0]
    return tb.parse_top("\n".join(lines + links) + "\n")


# ----------------------------------------------------------------------------- replay
class Mapper:
    def __init__(self, name: str):
        self.name = name
        self.used: set = set()
        self.trunk: Dict[str, float] = {}
        self.running: List[tuple] = []
        self.ok: List[bool] = []
        self.isw: List[float] = []
        self.secs: List[float] = []
        self.cpu: List[float] = []  # CPU seconds (assign: its process; ours: read + map)
        self.svc_cpu: List[float] = []  # ours as a service: the testbed read once
        self.svc_ok: List[bool] = []
        self.map_secs: List[float] = []  # ours: the mapping alone (files already read)
        self.rejected = 0  # mappings the checker refused

    def release(self, now: float) -> None:
        keep = []
        for end, nodes, loads in self.running:
            if end <= now:
                self.used -= nodes
                for t, b in loads.items():
                    self.trunk[t] -= b
            else:
                keep.append((end, nodes, loads))
        self.running = keep


def run_compat(ptop_path: str, top_path: str, seed: int) -> Tuple[int, float, float]:
    """``coalloc-assign -s SEED PTOP TOP`` as a process: ``(exit code, wall, CPU)``."""
    exe = shutil.which("coalloc-assign")
    cmd = ([exe] if exe else [sys.executable, "-c", "import sys; from coalloc.cli."
           "assign_compat import main; sys.exit(main())"])  # fmt: skip
    proc, secs, cpu = run_process(cmd + ["-s", str(seed), ptop_path, top_path])
    return proc.returncode, secs, cpu


def replay(name: str, binary: Optional[str], n: int, seed: int, assign_seeds,
           workdir: str, compat_sample: int = 0) -> dict:  # fmt: skip
    ptop, wl = make_generator(name, n, seed)
    wl = sorted(wl, key=lambda x: x[0])
    impossible = [impossible_on_empty(top, ptop) for _, _, top in wl]
    whole = os.path.join(workdir, "whole.ptop")  # the service's testbed, read once
    Path(whole).write_text(_typed(tb.format_ptop(ptop), "ptop"))
    service_ptop = tb.read_ptop(whole)
    compat: List[Tuple[int, float, float]] = []
    names = (["assign"] if binary else []) + ["default", "anneal"]
    mappers = {m: Mapper(m) for m in names}
    for k, (arrival, duration, top) in enumerate(bar(wl, desc=name, unit="exp")):
        for m in names:
            mp = mappers[m]
            mp.release(arrival)
            free = free_testbed(ptop, mp.used, mp.trunk)
            pp = os.path.join(workdir, f"{m}.ptop")
            tp = os.path.join(workdir, f"{m}.top")
            Path(pp).write_text(_typed(tb.format_ptop(free), "ptop"))
            Path(tp).write_text(_typed(tb.format_top(top), "top"))
            mapping = routes = None
            if m == "assign":
                best = None
                cpus: List[float] = []
                for s in assign_seeds:
                    mapping, routes, secs, rc = run_assign(binary, pp, tp, s, cpus)
                    if mapping is not None:
                        routes = _oriented(top, free, mapping, routes)
                        rep = tb.verify_mapping(top, free, mapping, routes)
                        if rep.ok:
                            best = (mapping, routes, secs)
                            break
                        mp.rejected += 1
                if best is None:
                    mapping = None
                else:
                    mapping, routes, secs = best
                cpu = cpus[-1]  # (the run that mapped, or the last one tried)
            else:
                if m == "default" and k < compat_sample:
                    compat.append(run_compat(pp, tp, seed + k))
                c0, t0 = time.process_time(), time.perf_counter()
                ft, fp = tb.read_top(tp), tb.read_ptop(pp)
                t1 = time.perf_counter()
                r = tb.assign(ft, fp, "assign+" if m == "default" else "anneal", seed=seed + k)
                secs = time.perf_counter() - t0
                cpu = time.process_time() - c0
                mp.map_secs.append(time.perf_counter() - t1)
                if r.success:
                    mapping, routes = r.mapping, r.routes
                if m == "default":  # the same experiment, as a service keeping the testbed
                    avail = [nm for nm in free.nodes if not free.nodes[nm].is_switch]
                    c1 = time.process_time()
                    r2 = tb.assign(tb.read_top(tp), service_ptop, "assign+", seed=seed + k,
                                   available=avail, trunk_used=dict(mp.trunk))  # fmt: skip
                    mp.svc_cpu.append(time.process_time() - c1)
                    mp.svc_ok.append(bool(r2.success) and tb.verify_mapping(
                        top, free, r2.mapping, r2.routes).ok)  # fmt: skip
            mp.secs.append(secs)
            mp.cpu.append(cpu)
            rep = tb.verify_mapping(top, free, mapping, routes) if mapping else None
            if rep is not None and not rep.ok:
                mp.rejected += 1
                rep = None
            if rep is None:
                mp.ok.append(False)
                mp.isw.append(float("nan"))
                continue
            mp.ok.append(True)
            mp.isw.append(float(rep.interswitch_bandwidth))
            nodes = {p for p in mapping.values() if not ptop.nodes[p].is_switch}
            mp.used |= nodes
            loads = dict(rep.trunk_load)
            for t, b in loads.items():
                mp.trunk[t] = mp.trunk.get(t, 0.0) + b
            mp.running.append((arrival + duration, nodes, loads))
    out = {"generator": name, "experiments": len(wl), "testbed": repr(ptop),
           "impossible": sum(1 for x in impossible if x),
           "impossible_why": sorted({x for x in impossible if x})[:5]}  # fmt: skip
    if compat:
        codes, walls, cpus = zip(*compat)
        out["coalloc_assign_process"] = {
            "experiments": len(compat), "exit_codes": sorted(set(codes)),
            "median_ms": float(np.median(walls) * 1000),
            "median_cpu_ms": float(np.median(cpus) * 1000)}  # fmt: skip
    possible = np.array([not x for x in impossible], dtype=bool)
    ok_all = np.ones(len(wl), dtype=bool)
    for m in names:
        ok_all &= np.array(mappers[m].ok)
    for m in names:
        mp = mappers[m]
        isw = np.array(mp.isw)
        out[m] = {
            "failures": int(len(mp.ok) - sum(mp.ok)),
            "failures_possible": int((~np.array(mp.ok, dtype=bool) & possible).sum()),
            "ok": [bool(x) for x in mp.ok],
            "rejected_by_checker": mp.rejected,
            "isw_sum_where_all_mapped": float(np.nansum(isw[ok_all])),
            "median_ms": float(np.median(mp.secs) * 1000),
            "mean_ms": float(np.mean(mp.secs) * 1000),
            "median_cpu_ms": float(np.median(mp.cpu) * 1000),
            "mean_cpu_ms": float(np.mean(mp.cpu) * 1000),
            "service_median_cpu_ms": float(np.median(mp.svc_cpu) * 1000) if mp.svc_cpu else None,
            "service_mean_cpu_ms": float(np.mean(mp.svc_cpu) * 1000) if mp.svc_cpu else None,
            "service_mapped_and_checked": int(sum(mp.svc_ok)),
            "median_map_ms": float(np.median(mp.map_secs) * 1000) if mp.map_secs else None,
        }
    return out


# ----------------------------------------------------------------------------- Emulab files
EMULAB_PAIRS = (("test.ptop", "test.top"), ("test2.ptop", "test2a.top"),
                ("dtest.ptop", "dtest.top"), ("test_ugly.ptop", "test_ugly.top"))  # fmt: skip


def emulab_files(binary: Optional[str], folder: str, workdir: str) -> List[dict]:
    rows = []
    for pf, tf in EMULAB_PAIRS:
        pp, tp = os.path.join(folder, pf), os.path.join(folder, tf)
        if not (os.path.exists(pp) and os.path.exists(tp)):
            continue
        row = {"files": f"{pf} {tf}"}
        try:
            top, ptop = tb.read_top(tp), tb.read_ptop(pp)
        except Exception as exc:  # noqa: BLE001 - reported as the outcome
            row["read"] = f"refused: {str(exc).splitlines()[0][:120]}"
            rows.append(row)
            continue
        if binary:
            mapping, routes, secs, rc = run_assign(binary, pp, tp, 1)
            note = ""
            if rc == 255:  # a 2003 file (untyped links): assign 2011-2016 wants the type
                pp2, tp2 = os.path.join(workdir, pf), os.path.join(workdir, tf)
                Path(pp2).write_text(_typed(Path(pp).read_text(), "ptop"))
                Path(tp2).write_text(_typed(Path(tp).read_text(), "top"))
                mapping, routes, secs, rc = run_assign(binary, pp2, tp2, 1)
                note = " (untyped 2003 file refused as is; typed copy)"
            if mapping:
                routes = _oriented(top, ptop, mapping, routes)
            rep = tb.verify_mapping(top, ptop, mapping, routes) if mapping else None
            row["assign"] = (f"rc {rc}{note}; " + (
                f"checker ok, isw {rep.interswitch_bandwidth:g}" if rep is not None and rep.ok
                else "checker rejects" if rep is not None else "no mapping") +
                f"; {secs * 1000:.1f} ms")  # fmt: skip
        for m in ("assign+", "anneal", "exact"):
            t0 = time.perf_counter()
            r = tb.assign(top, ptop, m, seed=1, **({"time_limit": 10} if m == "exact" else {}))
            secs = time.perf_counter() - t0
            ok = r.success and tb.verify_mapping(top, ptop, r.mapping, r.routes).ok
            row[m] = (f"{r.status}, isw {r.interswitch_bandwidth:g}" if ok else
                      f"{r.status}: no mapping") + f"; {secs * 1000:.1f} ms"  # fmt: skip
        rows.append(row)
    return rows


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument(
        "--assign",
        default=os.environ.get("COALLOC_ASSIGN"),
        help="path of Emulab's assign binary (default: $COALLOC_ASSIGN)",
    )
    ap.add_argument("--n", type=int, default=250, help="experiments per generator (1000: long)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument(
        "--assign-seeds",
        type=int,
        nargs="+",
        default=[1],
        help="assign's seeds, tried in turn until one maps (the issue's run: 1 2 3)",
    )
    ap.add_argument("--generators", nargs="+", default=list(GENERATORS), choices=GENERATORS)
    ap.add_argument(
        "--emulab-files",
        default=None,
        help="folder of Emulab's assign/ test files (test.ptop, test_ugly.top, ...)",
    )
    ap.add_argument("--json", default=None, help="write the figures as JSON here")
    ap.add_argument(
        "--compat-sample",
        type=int,
        default=0,
        help="also run coalloc-assign as a process on the first K experiments of each replay",
    )
    add_quiet(ap)
    args = ap.parse_args(argv)
    binary = args.assign
    if not binary or not os.access(binary, os.X_OK):
        what = binary or "no --assign and no $COALLOC_ASSIGN"
        print(f"vs_assign: Emulab's assign binary not found ({what}); build it with "
              "bench/testbed/build_assign.sh SRC_DIR OUTPUT (docs/testbed.md, Benchmarks)",
              file=sys.stderr)  # fmt: skip
        return 2
    res = {"assign": binary, "n": args.n, "seed": args.seed, "assign_seeds": args.assign_seeds,
           "load_before": os.getloadavg(), "replays": [], "emulab_files": []}  # fmt: skip
    with tempfile.TemporaryDirectory() as wd:
        for name in args.generators:
            r = replay(name, binary, args.n, args.seed, args.assign_seeds, wd,
                       args.compat_sample)  # fmt: skip
            res["replays"].append(r)
            a, d, an = r["assign"], r["default"], r["anneal"]

            def ratio(x, y):
                return f"{x / y:.2f}x" if y else ("=" if x == y else "inf")

            print(f"{name} ({r['experiments']} experiments, {r['testbed']}; "
                  f"{r['impossible']} impossible on the empty testbed: "
                  f"{'; '.join(r['impossible_why'][:2])}):")  # fmt: skip
            print(f"  {'':8} {'failures':>8} {'possible':>8} {'rejected':>8} "
                  f"{'isw (all mapped)':>17} {'median ms':>10} {'mean ms':>9} "
                  f"{'median map ms':>14} {'med CPU ms':>10} {'mean CPU ms':>11}")  # fmt: skip
            for m in ("assign", "default", "anneal"):
                x = r[m]
                mm = x["median_map_ms"] if x["median_map_ms"] is not None else float("nan")
                print(f"  {m:8} {x['failures']:8d} {x['failures_possible']:8d} "
                      f"{x['rejected_by_checker']:8d} "
                      f"{x['isw_sum_where_all_mapped']:17.4g} {x['median_ms']:10.1f} "
                      f"{x['mean_ms']:9.1f} {mm:14.1f} {x['median_cpu_ms']:10.2f} "
                      f"{x['mean_cpu_ms']:11.2f}")  # fmt: skip
            print(f"  default/assign: failures {ratio(d['failures'], a['failures'])}, isw "
                  f"{ratio(d['isw_sum_where_all_mapped'], a['isw_sum_where_all_mapped'])}, "
                  f"median time {ratio(d['median_ms'], a['median_ms'])} "
                  f"(assign {a['median_ms'] / max(d['median_ms'], 1e-9):.1f}x slower); "
                  f"default/anneal failures {ratio(d['failures'], an['failures'])}, "
                  f"isw {ratio(d['isw_sum_where_all_mapped'], an['isw_sum_where_all_mapped'])}",
                  flush=True)  # fmt: skip
            print(f"  over possible experiments: default/assign failures "
                  f"{ratio(d['failures_possible'], a['failures_possible'])}, default/anneal "
                  f"{ratio(d['failures_possible'], an['failures_possible'])}; CPU per "
                  f"experiment (median) assign/default "
                  f"{a['median_cpu_ms'] / max(d['median_cpu_ms'], 1e-9):.1f}x, mean "
                  f"{a['mean_cpu_ms'] / max(d['mean_cpu_ms'], 1e-9):.1f}x")  # fmt: skip
            print(f"  default as a service (the whole testbed read once; per experiment: "
                  f"read the .top, map on the free PCs and trunk loads): median "
                  f"{d['service_median_cpu_ms']:.2f} ms CPU, mean "
                  f"{d['service_mean_cpu_ms']:.2f} (assign/service median "
                  f"{a['median_cpu_ms'] / max(d['service_median_cpu_ms'], 1e-9):.1f}x, mean "
                  f"{a['mean_cpu_ms'] / max(d['service_mean_cpu_ms'], 1e-9):.1f}x); mapped and "
                  f"checked {d['service_mapped_and_checked']} of {r['experiments']} states "
                  f"(the replay's own: {r['experiments'] - d['failures']})")  # fmt: skip
            if "coalloc_assign_process" in r:
                c = r["coalloc_assign_process"]
                print(f"  coalloc-assign as a process ({c['experiments']} experiments, exit "
                      f"codes {c['exit_codes']}): median {c['median_ms']:.1f} ms wall, "
                      f"{c['median_cpu_ms']:.1f} ms CPU")  # fmt: skip
        if args.emulab_files:
            res["emulab_files"] = emulab_files(binary, args.emulab_files, wd)
            print("Emulab's test files (seed 1):")
            for row in res["emulab_files"]:
                print("  " + "; ".join(f"{k}: {v}" for k, v in row.items()))
    res["load_after"] = os.getloadavg()
    print(f"load average before {res['load_before']}, after {res['load_after']}")
    if args.json:
        Path(args.json).write_text(json.dumps(res, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
