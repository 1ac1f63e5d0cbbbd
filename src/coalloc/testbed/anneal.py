"""The baseline: assign's simulated annealing over pclasses (Ricci, Alfeld & Lepreau 2003).

The annealing loop runs in the compiled kernel ``coalloc.testbed._anneal`` (C++, GIL
released); :mod:`coalloc.testbed._reference.anneal` is its line-by-line Python twin and
documents the moves, the score and the schedule.
"""

from __future__ import annotations

import math
import time
from itertools import chain
from typing import Any, Dict, Optional

import numpy as np

from .._shared import interrupt
from .._shared.caches import cache_of
from .._shared.params import stop_now, time_left
from .problem import Problem

__all__ = [
    "kernel_data",
    "run_anneal",
    "ANNEAL_DEFAULTS",
    "kernel_deadline",
    "kernel_deadline_struct",
    "raise_stop",
]

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


def _arr(a, dtype) -> np.ndarray:
    """``a`` as a C-contiguous array of ``dtype``, copied only when it is not one already
    (the kernels only read their inputs)."""
    return np.ascontiguousarray(a, dtype=dtype)


def kernel_data(pr: Problem) -> Dict[str, np.ndarray]:
    """The flat arrays the annealing kernel (and its twin) take."""
    ns = max(len(pr.switches), 1)
    cand_ptr, cand_idx = _csr(pr.cand)
    mem_ptr, mem_idx = _csr(pr.members)
    inc_ptr, inc_idx = _csr(pr.inc)
    # the switch paths depend on the testbed only: flattened once per testbed object
    cache = cache_of(pr.ptop).setdefault("kernel_paths", {})  # beside the model
    if not cache:
        paths = []
        for s in range(ns):
            for t in range(ns):
                paths.append(pr.path_of(s, t) or [] if s < len(pr.switches) else [])
        path_ptr, path_idx = _csr(paths)
        hops = np.full(ns * ns, -1, dtype=np.int64)
        if len(pr.switches):
            hops[:] = pr.hops[:ns, :ns].reshape(-1)
        # hosts joined by a direct (host-host) link: each host's peers, ascending
        peers = [set() for _ in pr.pnames]
        for a, b in pr.direct:
            peers[a].add(b)
            peers[b].add(a)
        dir_ptr, dir_idx = _csr([sorted(s) for s in peers])
        for arr in (path_ptr, path_idx, hops, dir_ptr, dir_idx):
            arr.flags.writeable = False
        cache.update(path_ptr=path_ptr, path_idx=path_idx, hops=hops, dir_ptr=dir_ptr,
                     dir_idx=dir_idx)  # fmt: skip
    path_ptr, path_idx, hops = cache["path_ptr"], cache["path_idx"], cache["hops"]
    na = len(pr.add_names)
    return {
        "la": _arr(pr.la, np.int64), "lb": _arr(pr.lb, np.int64),
        "lbw": _arr(pr.lbw, np.float64),
        "ltriv": _arr(pr.ltriv, np.int64), "lemu": _arr(pr.lemu, np.int64),
        "cand_ptr": cand_ptr, "cand_idx": cand_idx, "mem_ptr": mem_ptr, "mem_idx": mem_idx,
        "inc_ptr": inc_ptr, "inc_idx": inc_idx,
        "pclass": _arr(pr.pclass, np.int64), "pswitch": _arr(pr.pswitch, np.int64),
        "pis_switch": _arr(pr.pis_switch, np.int64), "pifaces": _arr(pr.pifaces, np.int64),
        "pifbw": _arr(pr.pifbw, np.float64),
        "vtype": _arr(pr.vtype, np.int64),
        "vstatic": _arr(pr.vstatic, np.int64),
        "fcost": _arr(pr.fcost, np.float64),
        "vslots": _arr(pr.vslots, np.float64), "cap": np.ascontiguousarray(pr.cap),
        "tlimit": _arr(pr.tlimit, np.int64), "tweight": np.ascontiguousarray(pr.tweight),
        "vadd": np.ascontiguousarray(pr.vadd.reshape(pr.nv, na)),
        "padd": np.ascontiguousarray(pr.padd.reshape(len(pr.pnames), na)),
        "fixed": _arr(pr.fixed, np.int64), "vclass": _arr(pr.vclass, np.int64),
        "vclass_w": _arr(pr.vclass_w, np.float64),
        "hops": hops, "path_ptr": path_ptr, "path_idx": path_idx,
        "tcap": _arr(pr.tcap, np.float64),
        "dir_ptr": cache["dir_ptr"], "dir_idx": cache["dir_idx"],
    }  # fmt: skip


#: Seconds per virtual node and link kept back from a kernel's deadline for what follows
#: its stop (routing, scoring and verifying the mapping it hands back: about 25 ms for an
#: 800-node ring on an idle core), so that the call returns near its limit.
RESERVE_PER_ITEM = 3e-5


def kernel_deadline(pr: Optional[Problem] = None) -> Optional[float]:
    """Seconds left until the deadline of the ``time_limit`` in force (None: no limit).

    The testbed's kernels take it (``deadline``) and stop there by themselves, without the
    GIL, returning their best answer so far with ``stopped`` (the common poll still stops
    them on Ctrl-C or a cancelled scope, also with their best answer). With ``pr``, the
    time the stopped mapping's routing and checking will take (:data:`RESERVE_PER_ITEM`
    per virtual node and link, at most a quarter of the time left) is kept back.

    Parameters
    ----------
    pr : Problem, optional
        The problem the kernel runs on (its size sets the reserve).

    Returns
    -------
    float or None
        Seconds (never below 0), or None without a time limit.

    Examples
    --------
    >>> kernel_deadline() is None  # no time limit in force
    True
    """
    left = time_left()
    if left is None:
        return None
    if pr is not None:
        left -= min(0.25 * left, RESERVE_PER_ITEM * (pr.nv + len(pr.la)))
    return left


def kernel_deadline_struct(pr: Optional[Problem] = None) -> interrupt.KernelDeadline:
    """What the testbed's kernels take as ``deadline``: :func:`kernel_deadline` (the time
    limit's, less the reserve) as an instant, merged with the scopes' deadline and cancel
    flag (:func:`coalloc._shared.interrupt.kernel_deadline`).

    Parameters
    ----------
    pr : Problem, optional
        The problem the kernel runs on (its size sets the reserve).

    Returns
    -------
    KernelDeadline

    Examples
    --------
    >>> kernel_deadline_struct().ns  # no time limit, no scope
    -1
    """
    left = kernel_deadline(pr)
    return interrupt.kernel_deadline(None if left is None else time.perf_counter() + left)


def raise_stop(out: Dict[str, Any]) -> None:
    """After a kernel returned ``stopped``: raise what stopped it.

    The Python error the poll left (Ctrl-C, a cancelled scope), or, for the kernel's own
    deadline, the time limit's (which :func:`coalloc._shared.params.with_time_limit`
    turns into the best answer offered; raised at once, the kernel's deadline being the
    limit's less the reserve of :func:`kernel_deadline`).

    Parameters
    ----------
    out : dict
        The kernel's output (``stopped`` true); its ``error`` is cleared.

    Raises
    ------
    BaseException
        The kernel's pending error, an outer scope's, or the time limit's.

    Examples
    --------
    >>> raise_stop({"stopped": True, "error": TimeoutError("a batch's timeout")})
    Traceback (most recent call last):
    ...
    TimeoutError: a batch's timeout
    """
    err = out.pop("error", None)
    out["error"] = None
    if err is not None:
        raise err
    interrupt.check()  # an outer scope's error first, if it has one
    stop_now()


def run_anneal(pr: Problem, seed: int, params: Dict[str, Any], backend: str = "compiled"):
    """Run the annealer (``backend="compiled"``, or ``"numpy"`` for the twin), stopping at
    the deadline of the time limit in force (``stopped`` in the output: the best so far)."""
    data = kernel_data(pr)
    if backend != "compiled":
        from ._reference.anneal import anneal
    else:
        from ._anneal import anneal
    params = dict(params)
    params["deadline"] = kernel_deadline_struct(pr)
    out = anneal(data, int(seed) & ((1 << 64) - 1), params)
    out["where"] = np.asarray(out["where"], dtype=np.int64)
    if not math.isfinite(out["score"]):
        out["score"] = None
    return out
