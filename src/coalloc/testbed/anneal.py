"""The baseline: assign's simulated annealing over pclasses (Ricci, Alfeld & Lepreau 2003).

The annealing loop runs in the compiled kernel ``coalloc.testbed._anneal`` (C++, GIL
released); :mod:`coalloc.testbed._reference.anneal` is its line-by-line Python twin and
documents the moves, the score and the schedule.
"""

from __future__ import annotations

import math
from itertools import chain
from typing import Any, Dict

import numpy as np

from .problem import Problem

__all__ = ["kernel_data", "run_anneal", "ANNEAL_DEFAULTS"]

#: The published schedule: start at 10, melt for 1,000 moves to accept ~95 %, cool by 0.9,
#: at least 1,000 moves per temperature (or free nodes x pclasses when larger).
ANNEAL_DEFAULTS: Dict[str, Any] = {
    "t0": 10.0,
    "melt_moves": 1000,
    "melt_accept": 0.95,
    "cooling": 0.9,
    "min_moves": 1000,
    "t_stop": 0.002,
    "frozen": 0,
    "max_moves": 20_000_000,
}


def _csr(lists) -> tuple:
    ptr = np.zeros(len(lists) + 1, dtype=np.int64)
    np.cumsum(np.fromiter(map(len, lists), dtype=np.int64, count=len(lists)), out=ptr[1:])
    idx = np.fromiter(chain.from_iterable(lists), dtype=np.int64, count=int(ptr[-1]))
    return ptr, idx


def kernel_data(pr: Problem) -> Dict[str, np.ndarray]:
    """The flat arrays the annealing kernel (and its twin) take."""
    ns = max(len(pr.switches), 1)
    cand_ptr, cand_idx = _csr(pr.cand)
    mem_ptr, mem_idx = _csr(pr.members)
    inc_ptr, inc_idx = _csr(pr.inc)
    # the switch paths depend on the testbed only: flattened once per testbed object
    cache = pr.ptop.__dict__.setdefault("_tb_kernel_paths", {})
    if not cache:
        paths = []
        for s in range(ns):
            for t in range(ns):
                paths.append(pr.path_of(s, t) or [] if s < len(pr.switches) else [])
        path_ptr, path_idx = _csr(paths)
        hops = np.full(ns * ns, -1, dtype=np.int64)
        if len(pr.switches):
            hops[:] = pr.hops[: ns, : ns].reshape(-1)
        for arr in (path_ptr, path_idx, hops):
            arr.flags.writeable = False
        cache.update(path_ptr=path_ptr, path_idx=path_idx, hops=hops)
    path_ptr, path_idx, hops = cache["path_ptr"], cache["path_idx"], cache["hops"]
    na = len(pr.add_names)
    return {
        "la": pr.la.astype(np.int64), "lb": pr.lb.astype(np.int64),
        "lbw": pr.lbw.astype(np.float64),
        "ltriv": pr.ltriv.astype(np.int64), "lemu": pr.lemu.astype(np.int64),
        "cand_ptr": cand_ptr, "cand_idx": cand_idx, "mem_ptr": mem_ptr, "mem_idx": mem_idx,
        "inc_ptr": inc_ptr, "inc_idx": inc_idx,
        "pclass": pr.pclass.astype(np.int64), "pswitch": pr.pswitch.astype(np.int64),
        "pis_switch": pr.pis_switch.astype(np.int64), "pifaces": pr.pifaces.astype(np.int64),
        "pifbw": pr.pifbw.astype(np.float64),
        "vtype": np.ascontiguousarray(pr.vtype, dtype=np.int64),
        "vstatic": np.ascontiguousarray(pr.vstatic, dtype=np.int64),
        "fcost": np.ascontiguousarray(pr.fcost, dtype=np.float64),
        "vslots": pr.vslots.astype(np.float64), "cap": np.ascontiguousarray(pr.cap),
        "tlimit": pr.tlimit.astype(np.int64),
        "vadd": np.ascontiguousarray(pr.vadd.reshape(pr.nv, na)),
        "padd": np.ascontiguousarray(pr.padd.reshape(len(pr.pnames), na)),
        "fixed": pr.fixed.astype(np.int64), "vclass": pr.vclass.astype(np.int64),
        "vclass_w": pr.vclass_w.astype(np.float64),
        "hops": hops, "path_ptr": path_ptr, "path_idx": path_idx,
        "tcap": pr.tcap.astype(np.float64),
    }  # fmt: skip


def run_anneal(pr: Problem, seed: int, params: Dict[str, Any], backend: str = "compiled"):
    """Run the annealer (``backend="compiled"`` or ``"python"``, the twin)."""
    data = kernel_data(pr)
    if backend == "python":
        from ._reference.anneal import anneal
    else:
        from ._anneal import anneal
    out = anneal(data, int(seed) & ((1 << 64) - 1), dict(params))
    out["where"] = np.asarray(out["where"], dtype=np.int64)
    if not math.isfinite(out["score"]):
        out["score"] = None
    return out
