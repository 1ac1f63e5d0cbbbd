"""The contract audit's referees (:mod:`bench.shared.contract_audit`): issue 36's rule
on one result (:func:`rule_violations`), the gap formula, a brute force of GAP and load
sharing, and the reference optimum of a small instance (:func:`reference`), written
independently of the package's ``settle``.
"""

from __future__ import annotations

import itertools
import json
import math
from typing import Any, List, Optional

import numpy as np

from bench.shared.audit_cases import SENSES, STATUSES, TOL


def _finite(x: Any) -> bool:
    try:
        return math.isfinite(float(x))
    except (TypeError, ValueError):
        return False


def formula_gap(objective: float, bound: float, sense: str) -> float:
    diff = bound - objective if sense == "max" else objective - bound
    scale = max(abs(objective), abs(bound))
    return 0.0 if scale == 0 else max(0.0, diff) / scale


def better(a: float, b: float, sense: str, rel: float = 1e-6) -> bool:
    """``a`` strictly better than ``b`` beyond a relative tolerance."""
    slack = rel * max(1.0, abs(a), abs(b))
    return a > b + slack if sense == "max" else a < b - slack


def sense_of(kind: str, inst: Any, result: Any) -> str:
    if kind == "gap":
        return (result.params or {}).get("sense") or getattr(result, "sense", None) or "min"
    return SENSES[kind]


def rule_violations(
    kind: str, inst: Any, result: Any, limit: Optional[float], infeasible: bool
) -> List[str]:
    """The rule of issue 36 item 2, the verifier and the JSON fields (one result alone)."""
    out: List[str] = []
    status = result.status
    if status not in STATUSES:
        return [f"status {status!r} unknown"]
    if status == "error":
        return [f"error: {str(result.message)[:120]}"]
    holds = bool(result.has_solution)
    field_set = getattr(result, type(inst).SOLUTION_FIELD, None) is not None
    obj, bound, gap = result.objective, result.bound, result.gap
    if holds != field_set:
        out.append(f"has_solution={holds} but {type(inst).SOLUTION_FIELD} "
                   f"{'set' if field_set else 'None'}")  # fmt: skip
    if status in ("optimal", "feasible") and not holds:
        out.append(f"{status} without an answer")
    if status in ("infeasible", "no_solution") and holds:
        out.append(f"{status} with an answer")
    if (obj is not None) != holds:
        out.append(f"objective={obj!r} with has_solution={holds}")
    if bound is not None and not _finite(bound):
        out.append(f"bound {bound!r} not finite")
    if gap is not None and not _finite(gap):
        out.append(f"gap {gap!r} not finite")
    if status in ("infeasible", "no_solution") and (bound is not None or gap is not None):
        out.append(f"{status} with bound={bound!r}")
    if status == "time_limit" and limit is None:
        out.append("time_limit without a budget")
    if infeasible and status == "time_limit" and bound is not None:
        out.append("time_limit with a bound on an infeasible instance")
    if infeasible and limit is None and status not in ("infeasible", "no_solution"):
        out.append(f"infeasible instance untimed ends {status!r}")
    sense = sense_of(kind, inst, result)
    if getattr(result, "sense", sense) != sense:
        out.append(f"result.sense={result.sense!r}, expected {sense!r}")
    mip_gap = (result.params or {}).get("mip_gap") if isinstance(result.params, dict) else None
    tol = max(TOL, float(mip_gap)) if isinstance(mip_gap, (int, float)) else TOL
    if holds and _finite(obj):
        if _finite(bound):
            o, b = float(obj), float(bound)
            if better(o, b, sense):
                out.append(f"bound {b:g} beaten by its own objective {o:g}")
            mine = formula_gap(o, b, sense)
            if (status == "optimal") != (mine <= tol):
                out.append(f"{status} at gap {mine:.3g} (objective {o:g}, bound {b:g})")
            if gap is None or abs(float(gap) - mine) > 1e-9:
                out.append(f"gap {gap!r}, formula {mine!r}")
        elif status == "optimal":
            out.append("optimal without a bound")
    elif status == "optimal":
        out.append("optimal without an objective")
    try:
        report = inst.verify(result)
        if holds and not report.ok:
            out.append("verify fails: " + " ".join(str(report).split())[:160])
        if not holds and report.ok:
            out.append("verify accepts a result without an answer")
    except Exception as exc:  # noqa: BLE001 - a referee reports any failure
        out.append(f"verify raised {type(exc).__name__}: {str(exc)[:100]}")
    try:
        data = result.to_dict()
        json.dumps(data, allow_nan=False)
    except Exception as exc:  # noqa: BLE001
        out.append(f"to_dict/json: {type(exc).__name__}: {str(exc)[:100]}")
    else:
        for key in ("status", "method", "seed", "params"):  # objective/bound/gap: when known
            if key not in data:
                out.append(f"to_dict() lacks {key!r}")
        params = data.get("params") or {}
        for old in ("lower_bound", "bound_gap", "time_limit_s"):
            if old in data or old in params:
                out.append(f"to_dict() has the old key {old!r}")
        if params.get("backend") not in (None, "compiled", "numpy", "auto"):
            out.append(f"params['backend']={params['backend']!r} (backend is compiled/numpy)")
        if data.get("status") != status:
            out.append(f"to_dict status {data.get('status')!r} != {status!r}")
        for key, value in (("objective", obj), ("bound", bound), ("gap", gap)):
            got = data.get(key)
            if (value is None) != (got is None) or (
                value is not None and not math.isclose(float(got), float(value), rel_tol=1e-12)
            ):
                out.append(f"to_dict {key}={got!r} != {value!r}")
    return out


# ------------------------------------------------------------------ reference optima


def brute_gap(inst: Any) -> Optional[float]:
    """Every assignment of items to agents (all items assigned, as the default)."""
    cost, weight, cap = np.asarray(inst.cost), np.asarray(inst.weight), np.asarray(inst.capacity)
    m, n = cost.shape
    if m**n > 3e6:
        return None
    sense = inst.sense or "min"
    best = None
    cols = np.arange(n)
    for a in itertools.product(range(m), repeat=n):
        a = np.array(a)
        used = np.bincount(a, weights=weight[a, cols], minlength=m)
        if np.all(used <= cap):
            v = float(cost[a, cols].sum())
            if best is None or (v < best if sense == "min" else v > best):
                best = v
    return best


def brute_loadshare(problem: Any) -> Optional[float]:
    """Throughput sum_j min(load_j, capacity_j) over every placement (one domain only)."""
    cap, size = np.asarray(problem.capacity), np.asarray(problem.job_size)
    n, jobs = len(cap), len(size)
    if n**jobs > 2e6 or len(set(np.asarray(problem.groups).tolist())) > 1:
        return None
    best = -1.0
    for pl in itertools.product(range(n), repeat=jobs):
        load = np.bincount(np.array(pl), weights=size, minlength=n)
        best = max(best, float(np.minimum(load, cap).sum()))
    return best


def reference(kind: str, inst: Any) -> dict:
    """The optimum (or infeasibility) of a small instance, by brute force or the exact
    method untimed; ``source`` says which."""
    if kind == "gap":
        v = brute_gap(inst.instance)
        if v is not None or np.asarray(inst.instance.cost).size <= 24:
            return {"optimum": v, "infeasible": v is None, "source": "brute force"}
    if kind == "loadshare":
        v = brute_loadshare(inst.problem)
        if v is not None:
            return {"optimum": v, "infeasible": False, "source": "brute force"}
    method = "brute_force" if kind == "collective" else "exact"
    r = inst.solve(method, seed=0, time_limit=60.0)
    if r.status == "optimal":
        return {"optimum": float(r.objective), "infeasible": False, "source": method}
    if r.status == "infeasible":
        return {"optimum": None, "infeasible": True, "source": method}
    return {"optimum": None, "infeasible": None, "source": f"{method} ({r.status})"}


# ------------------------------------------------------------------------------ the CLI
