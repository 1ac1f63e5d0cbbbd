"""CP-SAT: :func:`run_cpsat` solves a ``CpModel`` a family built (from integers,
:func:`.scale.integer_scaling`) in a worker thread, stopped through ``StopSearch``.

Besides a time limit, a call may cap CP-SAT's work by a count (``MilpOptions.work_limit``,
CP-SAT's ``max_deterministic_time``): with one worker and a fixed seed, where such a search
ends, its answer and its bound, do not depend on the machine's speed or load."""

from __future__ import annotations

import time
from typing import Any, Optional

import numpy as np

from ..progress import exact_progress_wanted
from .highs import _not_started
from .options import MilpOptions
from .outcome import MilpOutcome, _closed, _finite, _judge, _left, _progress_bar
from .supervise import LET_GO, stopped_detail, supervise_thread

#: CP-SAT is given its time limit less this many seconds, and asked to stop (``StopSearch``)
#: half that long before the deadline if it still runs, so that its workers see the stop at
#: their next check and the solution is read out by the deadline (it was asked only half a
#: second past the limit before issue 36). A margin, not a measured cost: the testbed's
#: overruns at 5 s (0.25-1.1 s under loads of 8-15) were CP-SAT's first import and the
#: Python model building before the solve, not CP-SAT's stop.
CPSAT_STOP_MARGIN = 0.05

#: A CP-SAT search that has not returned this many seconds after the deadline is no longer
#: waited for (:func:`.supervise.supervise_thread`'s ``let_go``): the call returns the last
#: solution its callback recorded (a time-limited call always records them) and the search
#: ends in the background at its next stop check. CP-SAT's presolve of a 35,000-variable
#: testbed model returned 0.26 s past its limit under a load of 5 (issue 36).
CPSAT_LET_GO = 0.01


def run_cpsat(
    cp_model: Any,
    model: Any,
    variables: list,
    *,
    rows: int,
    options: Optional[MilpOptions] = None,
    check: Optional[Any] = None,
    objective_scale: float = 1.0,
    **legacy: Any,
) -> MilpOutcome:
    """Solve a built CP-SAT model (objective already set) with the common options.

    Parameters
    ----------
    cp_model : module
        ``ortools.sat.python.cp_model`` (from :func:`import_solver`).
    model : CpModel
    variables : list of BoolVar or IntVar
        The variables whose values form ``MilpOutcome.x``.
    rows : int
        Number of constraints, for the report.
    options : MilpOptions, optional
        As for :func:`run_milp` (``name`` and ``scale`` are not used); ``threads`` is
        ``num_search_workers``. Set ``started`` (when the model building began) so that
        building counts against the limit.
    check : callable, optional
        As for :func:`run_milp`: the family's check of a solution against its original data
        (CP-SAT computes in integers, so only a model built from rounded data can fail it).
    objective_scale : float, default 1
        The user's unit of one unit of the model's integer objective (the ``s`` of
        :func:`integer_scaling`): ``bound`` and the progress display are given in the
        user's units.
    **legacy
        The options as keywords (``time_limit=..., mip_gap=..., threads=..., seed=...,
        verbose=..., progress=..., started=..., work_limit=...``), the form most callers
        use; not together with ``options``.

    Returns
    -------
    MilpOutcome
        Ctrl-C during the search is not raised: the search stops and the outcome holds the
        incumbent and its bound, with ``interrupted`` set.

    Raises
    ------
    ValueError
        ``options.node_limit`` set: CP-SAT counts no branch-and-bound nodes (its work cap
        is ``work_limit``).
    """
    options = _cpsat_options(options, legacy)
    if options.node_limit is not None:
        raise ValueError(
            f"node_limit={options.node_limit}: CP-SAT has no count of branch-and-bound nodes; "
            "cap its work with work_limit (its deterministic seconds), or solve with "
            "solver 'highs' or 'cbc'"
        )
    time_limit, mip_gap = options.time_limit, options.mip_gap
    t_entry = time.perf_counter() if options.started is None else float(options.started)
    show = exact_progress_wanted(options.progress)
    solver = _cpsat_solver(cp_model, options, t_entry)
    late = _not_started(t_entry, time_limit, int(rows), 0.0, "CP-SAT")
    if late is not None:  # the family's model building took the whole budget
        late.solver = "cpsat"
        return late
    state: dict = {"incumbent": None, "bound": None, "solution": None}
    callback = None
    # with a time limit, each solution is recorded too: the call may have to return without
    # waiting for the search (CPSAT_LET_GO)
    keep = time_limit is not None and hasattr(cp_model, "CpSolverSolutionCallback")
    if show or keep:  # the callbacks run in the solver's threads: they only record
        callback = _cpsat_recorder(cp_model, state, keep=keep)
        if show and hasattr(solver, "best_bound_callback"):
            solver.best_bound_callback = lambda b: state.__setitem__("bound", _finite(b))

    def stop() -> None:
        halt = getattr(solver, "stop_search", None) or solver.StopSearch
        halt()

    def work():
        return solver.Solve(model) if callback is None else solver.Solve(model, callback)

    hard = None if time_limit is None else t_entry + float(time_limit) - CPSAT_STOP_MARGIN / 2
    let_go = None if hard is None else hard + CPSAT_STOP_MARGIN / 2 + CPSAT_LET_GO
    scale = float(objective_scale)
    with _progress_bar("CP-SAT", _cpsat_sense(model), time_limit, show,
                       1.0 / scale) as bar:  # fmt: skip

        def tick() -> None:
            bar.update(time.perf_counter() - t_entry, incumbent=state["incumbent"],
                       bound=state["bound"])  # fmt: skip

        def detail(code: Any) -> str:
            if code in (cp_model.OPTIMAL, cp_model.FEASIBLE):
                return stopped_detail("CP-SAT", solver.ObjectiveValue() * scale,
                                      solver.BestObjectiveBound() * scale)  # fmt: skip
            return stopped_detail("CP-SAT", None, None)

        code, interrupted, overran = supervise_thread(work, stop, hard, tick if show else None,
                                                      detail=detail, let_go=let_go)  # fmt: skip
        if code is LET_GO:  # the solver is still in use: what the callback recorded
            out = _let_go_outcome(state, variables, rows, time_limit, scale)
            if show:
                tick()
            bar.close(out.status)
            return out if check is None or out.x is None else _judge(
                out, check, _cpsat_sense(model), 1e-6 * abs(scale), 1e-9)  # fmt: skip
        x = None
        if code in (cp_model.OPTIMAL, cp_model.FEASIBLE):
            x = np.array([solver.Value(v) for v in variables], dtype=np.float64)
        # The bound is only meaningful with a solution (UNKNOWN reports a placeholder 0).
        bound = float(solver.BestObjectiveBound()) if x is not None else None
        stopped = interrupted or overran or time_limit is not None
        status = _cpsat_status(cp_model, solver, model, code, bound, stopped, mip_gap)
        if show:
            if x is not None:
                state["incumbent"] = _finite(solver.ObjectiveValue())
                state["bound"] = bound
            tick()
        bar.close(status)
    out = MilpOutcome(
        x=x,
        bound=None if bound is None else bound * scale,
        status=status,
        solver_status=int(code),
        message=_cpsat_message(cp_model, solver, model, code, status, x is not None,
                               "interrupted" if interrupted else "overran" if overran else ""),
        nodes=int(solver.NumBranches()),
        time_limit_hit=code in (cp_model.FEASIBLE, cp_model.UNKNOWN) or interrupted or overran,
        infeasible=code == cp_model.INFEASIBLE,
        rows=int(rows),
        time_limit=time_limit,
        interrupted=interrupted,
        solver="cpsat",
    )
    if check is None:
        return out
    # CP-SAT is exact on its integers: what remains is the rounding of the user's data.
    return _judge(out, check, _cpsat_sense(model), 1e-6 * abs(scale), 1e-9)


def _cpsat_status(cp_model: Any, solver: Any, model: Any, code: Any, bound: Optional[float],
                  stopped: bool, mip_gap: float) -> str:  # fmt: skip
    """The outcome's status from CP-SAT's code: FEASIBLE is ``time_limit`` when the search was
    stopped (Ctrl-C, the deadline) or had a limit, ``feasible`` when only its work cap
    (``MilpOptions.work_limit``) ended it; UNKNOWN is ``time_limit`` when stopped,
    ``no_solution`` when the work cap ended it; OPTIMAL only ``optimal`` when the value
    meets the bound (CP-SAT says OPTIMAL at a relative gap ``mip_gap > 0``)."""
    table = {
        cp_model.OPTIMAL: "optimal",
        cp_model.FEASIBLE: "feasible",
        cp_model.UNKNOWN: "time_limit",
        cp_model.INFEASIBLE: "infeasible",
    }
    status = table.get(code, "error")
    if code == cp_model.FEASIBLE and stopped:
        status = "time_limit"  # stopped before the proof, with its incumbent
    elif code == cp_model.UNKNOWN and not stopped:  # its work cap (``work_limit``) ended it
        status = "no_solution"  # by itself, without a solution or a proof
    elif code == cp_model.OPTIMAL and mip_gap > 0:  # CP-SAT says OPTIMAL at the gap
        value = _finite(solver.ObjectiveValue())
        if not _closed(value, bound, _cpsat_sense(model)):
            status = "feasible"
    return status


def _cpsat_message(cp_model: Any, solver: Any, model: Any, code: Any, status: str,
                   solved: bool, stop: str) -> str:  # fmt: skip
    """The outcome's message: CP-SAT's status name, how it was stopped (``stop``:
    ``"interrupted"``, ``"overran"`` or ``""``), and why a model was invalid or what a
    stopped search kept (``solved``: a solution was read)."""
    message = f"CP-SAT: {solver.StatusName(code)}"
    if stop == "interrupted":
        message += " (interrupted: Ctrl-C)"
    elif stop == "overran":
        message += " (asked to stop at its time limit)"
    if code == cp_model.MODEL_INVALID:
        message += ": " + model.Validate()
    elif status == "time_limit":
        message += ": incumbent and bound kept" if solved else ": no incumbent found"
    return message


_CPSAT_KEYS = frozenset(("time_limit", "mip_gap", "threads", "seed", "verbose", "progress",
                         "started", "work_limit", "node_limit"))  # fmt: skip (node_limit:
# taken so that it is refused with run_cpsat's own reason, not as an unknown keyword)


def _cpsat_options(options: Optional[MilpOptions], legacy: dict) -> MilpOptions:
    """The options of a :func:`run_cpsat` call, from ``options`` or from its keywords."""
    unknown = set(legacy) - _CPSAT_KEYS
    if unknown:
        raise TypeError(f"run_cpsat() got unexpected keyword arguments {sorted(unknown)}")
    if options is None:
        return MilpOptions(**legacy)
    if legacy:
        raise TypeError(f"run_cpsat: pass options= or the keywords {sorted(legacy)}, not both")
    return options


def _cpsat_solver(cp_model: Any, options: MilpOptions, t_entry: float) -> Any:
    """A ``CpSolver`` with the options' workers, seed, gap, log and time limit (counted from
    ``t_entry``)."""
    solver = cp_model.CpSolver()
    prm = solver.parameters
    prm.num_search_workers = int(options.threads)
    if options.seed is not None:
        prm.random_seed = int(options.seed) % 2147483647
    given = _left(t_entry, options.time_limit)
    if given is not None:  # it ends a little before the deadline: CPSAT_STOP_MARGIN
        prm.max_time_in_seconds = max(0.001, float(given) - CPSAT_STOP_MARGIN)
    if options.work_limit is not None:  # a count, not a clock: the same stop on any machine
        prm.max_deterministic_time = float(options.work_limit)
    prm.relative_gap_limit = float(options.mip_gap)
    prm.log_search_progress = bool(options.verbose)
    if hasattr(prm, "catch_sigint_signal"):  # CP-SAT's own handler would replace Python's
        prm.catch_sigint_signal = False  # (and abort outside the main thread): ours stops it
    return solver


def _cpsat_sense(model: Any) -> str:
    """``"max"`` when the model maximises (CP-SAT stores a negated scaling factor)."""
    try:
        return "max" if model.Proto().objective.scaling_factor < 0 else "min"
    except Exception:  # no objective, or not a CpModel
        return "min"


def _cpsat_recorder(cp_model: Any, state: dict, keep: bool = False) -> Any:
    """A solution callback that records the objective and the bound of each solution, and
    with ``keep`` the solution itself (``state["solution"]``: the value of every variable
    of the model, by index)."""

    class Recorder(cp_model.CpSolverSolutionCallback):
        def on_solution_callback(self) -> None:
            if keep:
                state["solution"] = _solution_values(self)
            state["incumbent"] = _finite(self.ObjectiveValue())
            state["bound"] = _finite(self.BestObjectiveBound())

    return Recorder()


def _solution_values(callback: Any) -> Optional[np.ndarray]:
    """The value of every variable in the solution ``callback`` reports, by index."""
    proto = getattr(callback, "response_proto", None)
    if proto is None:  # an OR-Tools without it: no solution kept
        return None
    try:
        return np.asarray(proto.solution, dtype=np.float64)
    except (TypeError, ValueError):
        return None


def _var_index(var: Any) -> Optional[int]:
    """The model index of a plain variable, None for anything else (a negation, an
    expression)."""
    get = getattr(var, "index", None)
    try:
        index = int(get() if callable(get) else get)
    except (TypeError, ValueError):
        return None
    return index if index >= 0 else None


def _let_go_outcome(state: dict, variables, rows, time_limit, scale: float) -> MilpOutcome:
    """The outcome of a search let go past its deadline: its last recorded solution (when
    every variable asked for is a plain variable of the model) and bound."""
    x = None
    sol = state.get("solution")
    if sol is not None:
        idx = [_var_index(v) for v in variables]
        if all(i is not None and i < sol.size for i in idx):
            x = sol[np.asarray(idx, dtype=np.int64)] if idx else np.zeros(0)
    bound = state.get("bound") if x is not None else None
    return MilpOutcome(
        x=x, bound=None if bound is None else bound * scale, status="time_limit",
        solver_status=-1,
        message="CP-SAT: stopped at the time limit (left to end in the background: it had "
        "not looked at its stop request)"
        + ("; no incumbent found" if x is None else "; incumbent and bound kept"),
        nodes=None, time_limit_hit=True, infeasible=False, rows=int(rows),
        time_limit=time_limit, solver="cpsat",
    )  # fmt: skip
