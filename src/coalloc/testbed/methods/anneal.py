"""The ``anneal`` method: Emulab assign's simulated annealing over pclasses (the compiled
kernel of :mod:`coalloc.testbed.anneal`), its schedule checked here."""

from __future__ import annotations

import time
from typing import Any, Optional

import numpy as np

from ..._shared.constraints import checked
from ..._shared.params import backend_name, offer_incumbent
from ..._shared.seeding import kernel_seed
from ..anneal import ANNEAL_DEFAULTS, raise_stop, run_anneal
from ..model import PhysicalTopology, VirtualTopology
from ..result import MappingResult
from ..routing import route
from .outcome import _problem, _Report, _result, policy_breach

__all__ = ["anneal_method", "MAX_ANNEAL_MOVES"]

#: The most moves an annealing parameter may ask for (melting, per temperature, run limit):
#: a run makes at most melt_moves + max_moves moves, whatever the cooling.
MAX_ANNEAL_MOVES = 10**9


@checked("coalloc.testbed.constraints", "anneal")
def anneal_method(
    top: VirtualTopology,
    ptop: PhysicalTopology,
    *,
    seed: Optional[int] = 0,
    backend: str = "compiled",
    available=None,
    trunk_used=None,
    **schedule: Any,
) -> MappingResult:
    """assign's simulated annealing (``schedule`` overrides :data:`ANNEAL_DEFAULTS`)."""
    t0 = time.perf_counter()
    bad = set(schedule) - set(ANNEAL_DEFAULTS)
    if bad:
        raise ValueError(f"unknown annealing parameters {sorted(bad)}; known: "
                         f"{sorted(ANNEAL_DEFAULTS)}")  # fmt: skip
    params = {**ANNEAL_DEFAULTS, **schedule}  # the values were checked by the table
    for k in ("t0", "melt_accept", "cooling", "t_stop"):
        params[k] = float(params[k])
    for k in ("melt_moves", "min_moves", "frozen", "max_moves"):
        params[k] = int(params[k])
    backend = backend_name(backend)
    pr = _problem(top, ptop, available, trunk_used)
    missing = [pr.vnames[v] for v in range(pr.nv) if not pr.cand[v]]
    t1 = time.perf_counter()
    breach = policy_breach(pr.top, pr.ptop)
    if breach is not None:
        report = _Report("anneal", seed, params, t0, {"setup": t1 - t0}, {})
        return _result(pr, report, None, None,
                       failure=breach)  # fmt: skip
    if missing:
        reason = {"constraint": "no_candidate", "vnodes": missing,
                  "why": {v: pr.cand_why[pr.vidx[v]] for v in missing}}  # fmt: skip
        report = _Report("anneal", seed, params, t0, {"setup": t1 - t0}, {})
        return _result(pr, report, None, None,
                       failure=reason)  # fmt: skip
    out = run_anneal(pr, kernel_seed(seed), params, backend)
    t2 = time.perf_counter()
    # (first_valid: the moves made when the first valid mapping was met, -1 never)
    counters = {k: out[k] for k in ("moves", "accepted", "temperatures", "first_valid")}
    if out["stopped"]:  # the deadline (or Ctrl-C): the best valid mapping so far, if any
        if out["valid"]:
            where, score = np.array(out["where"], dtype=np.int64), out["score"]
            report = _Report(
                "anneal", seed, params, t0, {"setup": t1 - t0, "search": t2 - t1}, counters
            )
            offer_incumbent(lambda: _result(pr, report, where, route(pr, where),
                                            score=score))  # fmt: skip
        raise_stop(out)
    if not out["valid"]:
        msg = ("Reached run limit. Giving up." if out["run_limit"] else
               "annealing ended without a valid solution")  # fmt: skip
        reason = {"constraint": "violations", "violations": out["violations"],
                  "run_limit": out["run_limit"]}  # fmt: skip
        report = _Report(
            "anneal", seed, params, t0, {"setup": t1 - t0, "search": t2 - t1}, counters
        )
        return _result(pr, report, None, None, failure=reason,
                       message=f"{msg} ({out['violations']} violations left)")  # fmt: skip
    rt = route(pr, out["where"])
    report = _Report("anneal", seed, params, t0, {"setup": t1 - t0, "search": t2 - t1}, counters)
    return _result(
        pr,
        report,
        out["where"],
        rt,
        score=out["score"],
    )
