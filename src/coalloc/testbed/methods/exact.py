"""The ``exact`` method: the CP-SAT optimum of the inter-switch bandwidth (the model of
:mod:`coalloc.testbed.exact`), with what makes its answer a proof or not."""

from __future__ import annotations

import sys
import time
from typing import Optional

from ..._shared import interrupt, lazyimport
from ..._shared.constraints import checked
from ..._shared.milp import import_solver_until
from ..._shared.milp.run import import_solver_later
from ..._shared.milp.supervise import free_in_background, start_freer

# (here, not inside the call: there, its first compile and run took 10-40 ms of a 0.05 s
# limit in a fresh process)
from ..exact import CPSAT_IMPORT_SECONDS, exact_mapping
from ..model import PhysicalTopology, VirtualTopology
from ..problem import Problem
from ..reasons import reason_text
from ..result import MappingResult, stopped_result
from ..routing import route
from .outcome import _problem, _Report, _result, policy_breach

__all__ = ["exact_method", "MAX_THREADS"]

#: The most CP-SAT workers the exact method may ask for.
MAX_THREADS = 1024


def _not_exact_for(pr: Problem) -> Optional[str]:
    """Why the integer program is not exact for this problem (None when it is).

    It places a host at its home switch and routes every link through switches: a host
    that may be used and has switch interfaces on several switches, or direct links to
    other hosts, has routes the program does not see, so neither its "infeasible" nor its
    "optimal" is a proof there. Nor where it counts bandwidths in coarser units (fractional
    or huge values) or a ``*`` link at the fastest interface of hosts of several speeds.
    """
    rescaled = getattr(pr, "exact_rescaled", None)
    if rescaled:
        return rescaled
    classes = {int(c) for cands in pr.cand for c in cands}  # (each pclass once: 800 x 2,000
    used = sorted({int(p) for c in classes for p in pr.members[c]})  # pairs took 0.6 s)
    hosts = [p for p in used if not pr.pis_switch[p]]
    if (pr.lbw < 0).any() and len({float(pr.pifbw[p]) for p in hosts}) > 1:
        return "a link of native bandwidth (*) is counted at the fastest interface's"
    sidx, pn, ptop = pr.sidx, pr.pnames, pr.ptop
    direct = {p for pair in pr.direct for p in pair}
    for p in used:
        if pr.pis_switch[p]:
            continue
        if p in direct:
            return f"host {pn[p]} has direct links to other hosts"
        sws = {lk.b if lk.a == pn[p] else lk.a for lk in ptop.interfaces(pn[p])} & set(sidx)
        if len(sws) > 1:
            return f"host {pn[p]} has interfaces on several switches ({', '.join(sorted(sws))})"
    return None


@checked("coalloc.testbed.constraints", "exact")
def exact_method(top: VirtualTopology, ptop: PhysicalTopology, *, seed: Optional[int] = 0,
                 time_limit: Optional[float] = None, threads: int = 1,
                 available=None, trunk_used=None,
                 solver: str = "cpsat") -> MappingResult:  # fmt: skip
    """The CP-SAT optimum of the inter-switch bandwidth (small experiments).

    ``solver`` names the integer-programming solver as in every family; CP-SAT is the one
    this model is written for. ``time_limit`` (seconds, default None: no limit) counts
    from the call's start, as in every family; stopped there, the best mapping the solver
    found is the answer (status ``time_limit``), with the solver's bound.
    """
    t0 = time.perf_counter()
    # the values were checked by the table (@checked; threads at most MAX_THREADS: CP-SAT
    # takes an int32); these only fix their types
    tl = None if time_limit is None else float(time_limit)
    threads = int(threads)
    if tl is not None and _CPSAT not in sys.modules:
        lazyimport.ready_on_return()  # (see _begin_cpsat_import)
    try:  # the problem's build polls the deadline (0.1-0.4 s on 2,000 PCs, first call)
        with interrupt.until(None if tl is None else t0 + tl):
            pr = _problem(top, ptop, available, trunk_used)
    except interrupt.DeadlinePassed:
        stopped = stopped_result(top, ptop, method="exact", time_limit=tl,
                                 method_params={"seed": seed, "solver": solver,
                                                "threads": threads},
                                 elapsed=time.perf_counter() - t0)  # fmt: skip
        if _CPSAT not in sys.modules:
            _begin_cpsat_import()  # for the next calls, as below
        return stopped
    missing = [pr.vnames[v] for v in range(pr.nv) if not pr.cand[v]]
    params = {"solver": solver, "time_limit": tl, "threads": threads}
    breach = policy_breach(pr.top, pr.ptop)
    if breach is not None:
        report = _Report("exact", seed, params, t0, {}, {})
        return _result(pr, report, None, None, failure=breach)
    if missing:
        reason = {"constraint": "no_candidate", "vnodes": missing,
                  "why": {v: pr.cand_why[pr.vidx[v]] for v in missing}}  # fmt: skip
        report = _Report("exact", seed, params, t0, {}, {})
        return _result(pr, report, None, None, failure=reason)
    if tl is not None:
        start_freer()  # its thread's first turn falls here, not after the deadline
    keep: list = []  # the CP-SAT model and its variables: freed once the call has returned
    try:
        result = _exact_answer(pr, tl, threads, seed, params, t0, keep)
    finally:
        free_in_background(keep)
    if tl is not None and _CPSAT not in sys.modules:
        _begin_cpsat_import()  # the last thing before the return (see there)
    return result


def _begin_cpsat_import() -> None:
    """Begin CP-SAT's first import in the background, waiting for nothing: a short call
    that could not wait for it begins it as it returns, with its answer built, so that the
    process's next calls find CP-SAT loaded (without it, every later short call ended
    ``time_limit`` without a mapping: the held-back audit's Emulab test_big onto Utah 2000
    at 0.05 and 0.5 s); begun earlier, OR-Tools' initialisation held the interpreter lock
    while the call returned (0.07-0.19 s at T = 0.05 s in a fresh process, two busy loops).
    Inside a call made of such calls (an explanation:
    :func:`coalloc._shared.lazyimport.on_return`) it begins when that call returns."""
    import_solver_later("cpsat")  # (no OR-Tools: the thread's ImportError, kept; the calls
    # say so)


_CPSAT = "ortools.sat.python.cp_model"


def _exact_answer(pr, tl, threads, seed, params, t0, keep) -> MappingResult:
    """:func:`exact_method` from its problem on: the solve and what its answer proves."""
    t1 = time.perf_counter()
    unloaded = tl is not None and _CPSAT not in sys.modules
    if unloaded and t0 + tl - t1 >= CPSAT_IMPORT_SECONDS:  # it fits: begun now, beside the
        try:  # model's set-up (the solve below waits for it until the deadline)
            import_solver_until("cpsat", t1)
        except ImportError:  # no OR-Tools: the solve below says so
            pass
    # with less time left it is begun only as the call returns (exact_method's last step):
    # OR-Tools' initialisation holds the interpreter lock in stretches, and a call running
    # beside it ended at 0.07-0.15 s at T = 0.05 s (fresh process, two busy loops)
    where, out, trunks = exact_mapping(pr, time_limit=tl, threads=threads,  # the limit counts
                                       seed=seed if seed is not None else 0,  # from the call
                                       started=t0, keep=keep)  # fmt: skip
    t2 = time.perf_counter()
    if (unloaded and where is None and out.solver_status == -1 and not out.rows
            and _CPSAT not in sys.modules):  # not started: the import was not done
        out.message = (f"CP-SAT: not started: its first import in this process (about "
                       f"{CPSAT_IMPORT_SECONDS:g} s) would not fit in the time limit; it begins "
                       "in the background as this call returns, for the next calls (or call "
                       "coalloc._shared.milp.preload('cpsat') first)")  # fmt: skip
    # one report for every outcome below (its params dict is read when the result is built,
    # after "unproven" is added)
    report = _Report("exact", seed, params, t0, {"setup": t1 - t0, "search": t2 - t1},
                     {"nodes": out.nodes or 0})  # fmt: skip
    # "is the model exact here" only when the answer needs it (40-110 ms on 800 nodes onto
    # 2,000 PCs, after the deadline: issue 36); settled before the solve, it took the
    # time of a short limit
    unproven = _not_exact_for(pr) if where is not None or out.infeasible else None
    if unproven is not None and (where is not None or out.infeasible):
        # the model is a restriction here: its "infeasible" and "optimal" prove nothing
        params["unproven"] = unproven
        if where is None:
            return _result(pr, report, None, None,
                           failure={"constraint": "unproven", "why": unproven,
                                    "solver": out.message},
                           status="time_limit" if out.time_limit_hit else "no_solution",
                           message=f"no mapping found, and none excluded: {unproven}")  # fmt: skip
        out.status = "feasible" if out.status == "optimal" else out.status
        out.bound = None
    if where is None:
        return _result(pr, report, None, None,
                       failure={"constraint": "infeasible" if out.infeasible else out.status,
                                "solver": out.message},
                       status="infeasible" if out.infeasible else "time_limit")  # fmt: skip
    rt = route(pr, where, trunks=trunks)  # on the trunks the model packed the links into
    if rt.failure is not None:  # the model relaxes a constraint the router checks
        return _result(pr, report, None, None,
                       failure={"constraint": "unroutable", "routing": rt.failure,
                                "solver": out.message},
                       status="error", bound=out.bound,
                       message="no mapping: the integer program's solution could not be routed "
                       f"({reason_text(rt.failure)}); the model does not capture this "
                       "constraint")  # fmt: skip
    return _result(pr, report, where, rt,
                   status=out.status if out.status in ("optimal", "time_limit") else "feasible",
                   message=f"mapped {pr.nv} nodes; optimality not proven: {unproven}"
                   if unproven is not None and out.status != "time_limit" else
                   "" if out.status != "time_limit" else "incumbent mapping: the solver "
                   f"was stopped before optimality was proven ({out.message})",
                   bound=out.bound)  # fmt: skip
