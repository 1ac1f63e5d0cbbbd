"""HiGHS: through ``highspy`` in a worker thread (small models) or in a child process
(large ones, :data:`HIGHS_PROCESS_MIN_SIZE`; the child is :mod:`._highs_child`), and the
:func:`scipy.optimize.milp` fallback without ``highspy``. See :mod:`coalloc._shared.milp` for
the status table and the stopping guarantees."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from typing import Any, Optional

import numpy as np

from .. import interrupt
from . import _highs_child
from .options import MilpOptions, MilpProblem
from .outcome import MilpOutcome, _closed, _finite, _kept, _left, _progress_bar
from .supervise import LET_GO, reap, stopped_detail, supervise_thread, watch_child

_HIGHS_BANNER_SILENCED = False


_HIGHS_LOCK = threading.Lock()


def _new_highs(hs: Any, verbose: bool) -> Any:
    """A ``highspy.Highs`` whose start-up banner (printed once per process, by the C++
    library on file descriptor 1) does not reach standard output unless ``verbose``."""
    global _HIGHS_BANNER_SILENCED
    with _HIGHS_LOCK:
        if _HIGHS_BANNER_SILENCED or verbose:
            _HIGHS_BANNER_SILENCED = True
            return hs.Highs()
        _HIGHS_BANNER_SILENCED = True
        import sys

        try:
            sys.stdout.flush()
            saved = os.dup(1)
        except (OSError, ValueError, AttributeError):  # no usable descriptor 1
            return hs.Highs()
        try:
            with open(os.devnull, "w") as null:
                os.dup2(null.fileno(), 1)
                return hs.Highs()
        finally:
            os.dup2(saved, 1)
            os.close(saved)


def quiet_highs(verbose: bool = False) -> Any:
    """A new ``highspy.Highs`` without HiGHS's start-up banner on standard output (printed
    once per process by the C++ library, whatever ``output_flag`` says later), for a family
    that drives HiGHS itself (an LP bound) rather than through :func:`run_milp`.

    Parameters
    ----------
    verbose : bool, default False
        Let the banner through.

    Returns
    -------
    highspy.Highs
    """
    import highspy

    return _new_highs(highspy, verbose)


#: Models of at least this many nonzeros plus variables go to a child process when stopping
#: matters (:func:`_highs_in_process`): from about this size HiGHS's presolve and root cut
#: rounds, where it does not look at its interrupt callback, overran a 1 s limit by a
#: quarter of a second or more (a dense 60 x 3000 knapsack: by 4 s), while a child costs
#: the start of a Python process with NumPy and highspy (0.2-0.6 s).
HIGHS_PROCESS_MIN_SIZE = 20_000


#: The call returns at its deadline (issue 36), so HiGHS is stopped before it: given its
#: time limit less ``HIGHS_STOP_MARGIN`` seconds, and (the child) asked to stop with SIGINT
#: that long before the deadline, so that a HiGHS that honours its limit or its interrupt
#: callback ends, reads its solution out and hands it over in time (measured: 2-15 ms for
#: 13,415 variables under a load of 4). HiGHS does not look at either inside presolve, the
#: clique table, symmetry detection or a root cut round (a 55,664-row CTAAP model ran 1.8 s
#: past its limit at the root): the child is then killed *at* the deadline, and the call
#: returns the last incumbent and bound it sent (it sends every improving solution, and its
#: bound every 0.1 s). After Ctrl-C it has ``_HIGHS_GRACE`` seconds to stop by itself.
HIGHS_STOP_MARGIN = 0.03
_HIGHS_GRACE = 0.8

#: A HiGHS in a worker thread (a small model) that has not stopped this many seconds after
#: the deadline is no longer waited for (:func:`.supervise.supervise_thread`'s ``let_go``):
#: the call returns the last incumbent and bound its callbacks recorded, and the thread runs
#: on in the background until HiGHS next looks at its interrupt callback or its time limit.
#: HiGHS's probing in presolve ran 0.16-0.21 s past a 0.05 s limit on a 2,055-binary
#: collective program (issue 36).
HIGHS_LET_GO = 0.01


def _highs_in_process(size: int) -> bool:
    """Whether HiGHS runs in a child process: ``COALLOC_HIGHS_PROCESS`` = ``always`` /
    ``never``, else (``auto``) for every model of at least :data:`HIGHS_PROCESS_MIN_SIZE`
    nonzeros plus variables. A large model may be stopped in many ways -- its time limit,
    Ctrl-C at a terminal or in a notebook (no terminal there), a batch's timeout -- and only a
    child can be stopped inside presolve or a root cut round."""
    mode = os.environ.get("COALLOC_HIGHS_PROCESS", "auto").strip().lower()
    if not sys.executable:  # an embedded interpreter: no Python to start
        return False
    if mode in ("always", "1", "yes"):
        return True
    return mode not in ("never", "0", "no") and size >= HIGHS_PROCESS_MIN_SIZE


def _highs_model(problem: MilpProblem, options: MilpOptions) -> dict:
    """The arrays HiGHS is given (``passModel``'s column-wise form), in a dict a child
    process can unpickle without coalloc."""
    import scipy.sparse as sp

    nv = int(np.asarray(problem.c).shape[0])
    A = sp.csc_matrix(problem.A)
    A.sort_indices()
    lb, ub, start = problem.lb, problem.ub, problem.start
    return {
        "nv": nv, "rows": int(A.shape[0]), "nnz": int(A.nnz), "max": problem.sense == "max",
        "c": np.ascontiguousarray(problem.c, dtype=np.float64),
        "lb": np.ascontiguousarray(np.broadcast_to(np.asarray(lb, dtype=np.float64), (nv,))),
        "ub": np.ascontiguousarray(np.broadcast_to(np.asarray(ub, dtype=np.float64), (nv,))),
        "row_lb": np.ascontiguousarray(problem.row_lb, dtype=np.float64),
        "row_ub": np.ascontiguousarray(problem.row_ub, dtype=np.float64),
        "start": A.indptr.astype(np.int32), "index": A.indices.astype(np.int32),
        "value": np.ascontiguousarray(A.data, dtype=np.float64),
        "integrality": np.ascontiguousarray(problem.integrality, dtype=np.int32),
        "verbose": bool(options.verbose), "mip_gap": float(options.mip_gap),
        "seed": options.seed, "node_limit": options.node_limit,
        "highs_options": tuple(options.highs_options or ()),
        "x0": None if start is None else np.ascontiguousarray(start, dtype=np.float64),
    }  # fmt: skip


def _run_highspy(hs, problem: MilpProblem, options: MilpOptions, show: bool,
                 unit: float = 1.0) -> MilpOutcome:  # fmt: skip
    """HiGHS through ``highspy``, from the arrays, in a worker thread or a child process
    (module docstring); ``problem`` in the units the solver sees (``unit`` times the
    user's objective), ``options.started`` set."""
    t_entry, time_limit = float(options.started), options.time_limit
    sense, mip_gap = problem.sense, options.mip_gap
    # refused before the conversion, which can itself outlast the time left
    size = int(np.asarray(problem.c).shape[0]) + int(problem.A.nnz)
    hard = None if time_limit is None else t_entry + float(time_limit)
    early = start_refused("highs", hs, size, hard, int(problem.A.shape[0]))
    if early is not None:
        early.time_limit = time_limit
        return early
    model = _highs_model(problem, options)
    nv, rows = model["nv"], model["rows"]
    in_process = _highs_in_process(nv + int(model["nnz"]))
    late = _not_started(t_entry, time_limit, rows, _CHILD_START[0] if in_process else 0.0)
    if late is not None:  # the deadline passed while the arrays were converted
        if in_process:  # a start measured under a passing load must not bar every later
            _CHILD_START[0] *= 0.8  # call: the estimate decays while no child runs
        return late
    if in_process:
        return _run_highs_process(hs, model, problem.sense, options, show, unit)
    h = _new_highs(hs, options.verbose)
    if not _highs_child.setup(hs, h, model):
        return _highs_rejected(rows, time_limit)
    given = _left(t_entry, time_limit)  # converting the arrays counted against the limit
    if given is not None:
        h.setOptionValue("time_limit", max(0.001, float(given) - HIGHS_STOP_MARGIN))
    # The callbacks run in the solver's thread: they only record and read flags (and keep
    # the last incumbent, for a return without waiting for h).
    state: dict = {"stop": False, "primal": None, "dual": None, "nodes": None, "x": None}
    _highs_child.watch(hs, h, state)

    def stop() -> None:
        state["stop"] = True

    # Asked to stop at the deadline whatever it does (its own limit is a little earlier); a
    # thread cannot be killed: HIGHS_LET_GO after the deadline the call stops waiting for it
    # (it runs on in the background until it next looks at its interrupt callback).
    hard = None if time_limit is None else t_entry + float(time_limit)
    let_go = None if hard is None else hard + HIGHS_LET_GO
    with _progress_bar("HiGHS", sense, time_limit, show, unit) as bar:

        def tick() -> None:
            bar.update(time.perf_counter() - t_entry, incumbent=state["primal"],
                       bound=state["dual"])  # fmt: skip

        value, interrupted, overran = supervise_thread(
            h.run, stop, hard, tick if show else None,
            detail=lambda _: stopped_detail("HiGHS", state["primal"], state["dual"], unit),
            let_go=let_go,
        )  # fmt: skip
        if value is LET_GO:  # h is still in use: what the callbacks recorded
            x = state["x"]
            raw = {"code": None, "x": x, "bound": state["dual"], "nodes": state["nodes"],
                   "value": None if x is None else _finite(float(model["c"] @ x)),
                   "text": "stopped at the time limit (left to end in the background: "
                   "presolve and root cut rounds do not look at its interrupt "
                   "callback)"}  # fmt: skip
        else:
            raw = _highs_child.read_out(hs, h, nv)
        if show:
            tick()
        out = _highs_outcome(hs, raw, _RunEnd(
            sense=sense, mip_gap=mip_gap, time_limit=time_limit, rows=rows,
            interrupted=interrupted, overran=overran, killed=value is LET_GO,
            capped=options.node_limit is not None))  # fmt: skip
        bar.close(out.status)
    return out


#: Seconds a HiGHS child takes here from its start to its solve (Python, NumPy, highspy and
#: the model): a first guess, then what the last child measured (half the last value plus
#: half the new one). A call with less time left starts no child: it could not answer, and
#: starting it (a fork of this process) would itself run past the deadline under load.
_CHILD_START = [0.25]


def _not_started(t_entry: float, time_limit: Optional[float], rows: int, start_cost: float,
                 solver: str = "HiGHS") -> Optional[MilpOutcome]:  # fmt: skip
    """The outcome of a solve not started because the deadline has passed, or is nearer
    than ``start_cost`` seconds (a child process's start); None when there is time."""
    if time_limit is None:
        return None
    left = float(time_limit) - (time.perf_counter() - t_entry)
    if left > start_cost + HIGHS_STOP_MARGIN:
        return None
    why = ("the time limit passed before it could start" if left <= HIGHS_STOP_MARGIN else
           f"not started: {max(left, 0.0):.3f} s left, less than its process takes to start "
           f"here (about {start_cost:.2f} s)")  # fmt: skip
    return MilpOutcome(x=None, bound=None, status="time_limit", solver_status=-1,
                       message=f"{solver}: {why}; no incumbent found", nodes=None,
                       time_limit_hit=True, infeasible=False, rows=rows,
                       time_limit=time_limit)  # fmt: skip


def start_refused(solver: str, solver_pkg: Any, size: int, deadline: Optional[float],
                  rows: int = 0) -> Optional[MilpOutcome]:  # fmt: skip
    """The ``time_limit`` outcome of a solve that would start too late, or None.

    For a family that can tell a model's size before it builds the model's matrix (the
    build itself can take longer than the time left: CTAAP's aggregated rows, 70 ms on
    2,000 tasks): ``size`` nonzeros plus variables decide whether HiGHS would run in a child
    process, and with less time left before ``deadline`` (a ``time.perf_counter()``
    instant; None: no limit) than such a child takes to start here (measured by each child),
    or once the deadline has passed, nothing is built or started.

    Parameters
    ----------
    solver : {"highs", "cbc", "cpsat"}
    solver_pkg : module
        What :func:`.run.import_solver` returned (SciPy's fallback starts no child).
    size : int
        Nonzeros plus variables of the model (an estimate from above is fine).
    deadline : float, optional
    rows : int
        Rows of the model, for the outcome.

    Returns
    -------
    MilpOutcome or None
    """
    if deadline is None:
        return None
    now = time.perf_counter()
    child = solver == "highs" and not callable(solver_pkg) and _highs_in_process(int(size))
    name = {"highs": "HiGHS", "cbc": "CBC", "cpsat": "CP-SAT"}.get(solver, solver)
    late = _not_started(now, float(deadline) - now, rows, _CHILD_START[0] if child else 0.0,
                        name)  # fmt: skip
    if late is not None and child:  # as in _run_highspy: the estimate decays while refused
        _CHILD_START[0] *= 0.8
    return late


def _highs_rejected(rows: int, time_limit: Optional[float]) -> MilpOutcome:
    return MilpOutcome(x=None, bound=None, status="error", solver_status=-1,
                       message="HiGHS: the model was rejected (passModel)", nodes=None,
                       time_limit_hit=False, infeasible=False, rows=rows,
                       time_limit=time_limit)  # fmt: skip


@dataclass(frozen=True, kw_only=True)
class _RunEnd:
    """How a HiGHS run was asked and how it ended, beside its raw answer
    (:func:`_highs_outcome`): the sense and gap asked, the time limit and row count the
    outcome reports, whether Ctrl-C (``interrupted``) or the clock (``overran``) stopped
    it, whether it was ``killed`` (the answer is its last incumbent), and whether a node
    cap was set (``capped``, ``MilpOptions.node_limit``)."""

    sense: str
    mip_gap: float
    time_limit: Any
    rows: int
    interrupted: bool
    overran: bool
    killed: bool = False
    capped: bool = False


def _highs_outcome(hs, raw: dict, end: _RunEnd) -> MilpOutcome:
    """The outcome of a HiGHS run from :func:`_highs_child.read_out`'s dict (or, when the
    child was killed, from its last incumbent: ``raw["code"]`` None); a node cap
    (``end.capped``) ends as HiGHS's solution limit: ``feasible`` (``optimal`` when the
    bound meets the incumbent) or ``no_solution``, never ``time_limit``."""
    sense, mip_gap, capped = end.sense, end.mip_gap, end.capped
    interrupted, overran = end.interrupted, end.overran
    ms = hs.HighsModelStatus
    code, x, value, bound = raw["code"], raw["x"], raw["value"], raw["bound"]
    stopped_codes = {int(ms.kTimeLimit), int(ms.kInterrupt)}
    other_limits = {int(ms.kIterationLimit), int(ms.kSolutionLimit), int(ms.kObjectiveBound),
                    int(ms.kObjectiveTarget)}  # fmt: skip
    if code is None:  # killed: the last incumbent the child sent, if any
        status = "time_limit"
    elif code == int(ms.kOptimal):
        status = "optimal" if mip_gap == 0 or _closed(value, bound, sense) else "feasible"
        if x is None:
            status = "error"
    elif code == int(ms.kInfeasible):
        status = "infeasible"
    elif code in stopped_codes:
        status = "optimal" if x is not None and _closed(value, bound, sense) else "time_limit"
    elif code in other_limits and capped and not (interrupted or overran):
        # the node cap ended it (a count, not the clock): the status rule of node_limit
        status = ("no_solution" if x is None else
                  "optimal" if _closed(value, bound, sense) else "feasible")  # fmt: skip
    elif code in other_limits:
        status = "feasible" if x is not None else "time_limit"
    else:
        status = "feasible" if x is not None else "error"
    stopped = code is None or code in stopped_codes or interrupted or overran
    text = raw["text"]
    why = (text if end.killed
           else "interrupted (Ctrl-C)" if interrupted
           else f"asked to stop at its time limit ({text})" if overran
           else text)  # fmt: skip
    if status == "time_limit":
        why += _kept(x, bound)
    elif capped and code in other_limits and status != "error":
        why += " (its node cap, node_limit)" + _kept(x, bound)
    elif x is None and status == "error":
        why += "; no incumbent found"
    return MilpOutcome(
        x=x, bound=bound, status=status, solver_status=-1 if code is None else int(code),
        message=f"HiGHS: {why}", nodes=raw["nodes"], time_limit_hit=bool(stopped),
        infeasible=status == "infeasible", rows=end.rows, time_limit=end.time_limit,
        interrupted=interrupted,
    )  # fmt: skip


_CHILD_SOURCE: Optional[str] = None


def _child_source() -> str:
    """The source of :mod:`._highs_child`, run as ``python -c`` (no coalloc import)."""
    global _CHILD_SOURCE
    if _CHILD_SOURCE is None:
        with open(_highs_child.__file__, encoding="utf-8") as fh:
            _CHILD_SOURCE = fh.read()
    return _CHILD_SOURCE


def _run_highs_process(hs, model: dict, sense: str, options: MilpOptions, show: bool,
                       unit: float = 1.0) -> MilpOutcome:  # fmt: skip
    """HiGHS in a child process that sends every incumbent back, so that killing it (past
    the limit, or after Ctrl-C and a grace) still leaves the incumbent and the bound."""
    left = _left(float(options.started), options.time_limit)
    model["deadline"] = None if left is None else time.monotonic() + left
    model["margin"] = HIGHS_STOP_MARGIN
    model["progress"] = bool(show)
    bar = _progress_bar("HiGHS", sense, options.time_limit, show, unit)
    with bar:
        return _highs_process_in(hs, model, sense, options, show, bar, unit)


def _read_child(fh, box: dict, launched: float) -> None:
    """Read what a HiGHS child sends (pickled messages) into ``box`` until its last word;
    ``launched``: when it was started, to measure its start cost (:data:`_CHILD_START`)."""
    import pickle

    while True:
        try:
            msg = pickle.load(fh)
        except Exception:  # EOF, or a message cut short by a kill
            return
        if msg[0] == "inc":
            box["x"] = msg[1]
            box["primal"], box["dual"], box["nodes"] = msg[2:]
        elif msg[0] == "bound":
            box["primal"], box["dual"], box["nodes"] = msg[1:]
        elif msg[0] == "ready":  # about to solve: what its start cost, for the next
            spent = max(0.0, msg[1] - launched)
            _CHILD_START[0] = 0.5 * _CHILD_START[0] + 0.5 * spent
        elif msg[0] == "done":
            box["final"] = msg[1]
            return
        elif msg[0] == "rejected":
            box["rejected"] = True
            return
        elif msg[0] == "error":
            box["error"] = msg[1:]
            return


def _killed_raw(box: dict, model: dict, interrupted: bool) -> dict:
    """What :func:`_highs_outcome` reads of a child killed before its last word: its last
    incumbent and bound."""
    what = (
        f"interrupted (Ctrl-C) and killed {_HIGHS_GRACE:g} s later"
        if interrupted
        else "stopped at the time limit (killed: it had not stopped by itself)"
    )
    what += " (presolve or a root cut round does not look at its interrupt callback)"
    x = box["x"]
    value = None if x is None else _finite(float(model["c"] @ x))  # the incumbent's
    return {"code": None, "text": what, "x": x, "value": value, "bound": box["dual"],
            "nodes": box["nodes"]}  # fmt: skip


def _highs_process_in(hs, model: dict, sense: str, options: MilpOptions, show: bool, bar,
                      unit: float = 1.0) -> MilpOutcome:  # fmt: skip
    """:func:`_run_highs_process` inside its progress display."""
    import pickle

    t_entry, time_limit, mip_gap = float(options.started), options.time_limit, options.mip_gap
    rows = model["rows"]
    box: dict = {"x": None, "primal": None, "dual": None, "nodes": None, "final": None,
                 "error": None, "rejected": False}  # fmt: skip
    quiet = None if model["verbose"] else subprocess.DEVNULL
    soft = hard = None
    if time_limit is not None:  # HIGHS_STOP_MARGIN
        hard = t_entry + float(time_limit)
        soft = hard - HIGHS_STOP_MARGIN

    def tick() -> None:
        bar.update(time.perf_counter() - t_entry, incumbent=box["primal"], bound=box["dual"])

    rfd, wfd = os.pipe()
    launched = time.monotonic()
    try:
        proc = subprocess.Popen(
            [sys.executable, "-c", _child_source(), str(wfd), str(os.getpid())],
            stdin=subprocess.PIPE, stdout=quiet, stderr=quiet, pass_fds=(wfd,),
            start_new_session=True,  # Ctrl-C at the terminal reaches this process only
        )  # fmt: skip
    except BaseException:
        os.close(rfd)
        raise
    finally:
        os.close(wfd)

    over = threading.Event()  # the child said its last word (or its pipe closed)

    def read() -> None:
        with os.fdopen(rfd, "rb") as fh:
            try:
                _read_child(fh, box, launched)
            finally:
                over.set()

    def write() -> None:
        try:
            pickle.dump([p for p in sys.path if p], proc.stdin)
            pickle.dump(model, proc.stdin, protocol=pickle.HIGHEST_PROTOCOL)
            proc.stdin.close()
        except (OSError, ValueError):  # the child is gone: its exit code tells
            pass

    threads = [threading.Thread(target=f, name=f"coalloc-highs-{f.__name__}", daemon=True)
               for f in (read, write)]  # fmt: skip
    started: list = []
    try:
        try:
            for t in threads:
                t.start()
                started.append(t)
        except BaseException:
            proc.kill()
            reap(proc, started)
            raise
        end = watch_child(proc, stop_at=soft, kill_at=hard, grace=_HIGHS_GRACE, poll=0.1,
                          tick=tick if show else None, threads=threads,
                          over=over)  # fmt: skip
    finally:
        if box["final"] is not None:
            box["primal"], box["dual"] = box["final"]["value"], box["final"]["bound"]
        if show:
            tick()
    interrupted, overran, cancelled = end.interrupted, end.overran, end.cancelled
    killed = end.killed and box["final"] is None  # else it had finished when it was killed
    if cancelled:
        bar.close("time_limit")
        interrupt.check(stopped_detail("HiGHS", box["primal"], box["dual"], unit))
    if box["error"] is not None:
        bar.close("error")
        raise RuntimeError(f"HiGHS failed in its child process: {box['error'][0]}")
    if box["rejected"]:
        bar.close("error")
        return _highs_rejected(rows, time_limit)
    raw = box["final"]
    if raw is None:
        if not killed:  # it died on its own (out of memory, a signal from outside)
            bar.close("error")
            return MilpOutcome(
                x=None, bound=box["dual"], status="error", solver_status=-1,
                message=f"HiGHS: its child process ended with code {proc.returncode} "
                "without an answer", nodes=box["nodes"], time_limit_hit=False,
                infeasible=False, rows=rows, time_limit=time_limit, interrupted=interrupted,
            )  # fmt: skip
        raw = _killed_raw(box, model, interrupted)
    out = _highs_outcome(hs, raw, _RunEnd(
        sense=sense, mip_gap=mip_gap, time_limit=time_limit, rows=rows,
        interrupted=interrupted, overran=overran, killed=raw["code"] is None,
        capped=options.node_limit is not None))  # fmt: skip
    bar.close(out.status)
    return out


def _run_highs_scipy(milp, problem: MilpProblem, options: MilpOptions) -> MilpOutcome:
    """The fallback without ``highspy``: :func:`scipy.optimize.milp`, in this thread."""
    from scipy.optimize import Bounds, LinearConstraint

    time_limit, mip_gap, sense, A = options.time_limit, options.mip_gap, problem.sense, problem.A
    asked: dict = {"disp": bool(options.verbose), "mip_rel_gap": float(mip_gap)}
    given = _left(float(options.started), time_limit)
    if given is not None:
        asked["time_limit"] = float(given)
    if options.node_limit is not None:
        asked["node_limit"] = int(options.node_limit)
    sign = -1.0 if sense == "max" else 1.0
    res = milp(
        c=sign * np.asarray(problem.c, dtype=np.float64),
        integrality=problem.integrality,
        bounds=Bounds(problem.lb, problem.ub),
        constraints=[LinearConstraint(A, problem.row_lb, problem.row_ub)] if A.shape[0] else [],
        options=asked,
    )
    x = None if res.x is None else np.asarray(res.x, dtype=np.float64)
    dual = getattr(res, "mip_dual_bound", None)
    bound = None if dual is None or not np.isfinite(dual) else sign * float(dual)
    nodes = getattr(res, "mip_node_count", None)
    if res.status == 0:
        status = "optimal" if mip_gap == 0 else "feasible"
        if status == "feasible" and bound is not None and x is not None:
            value = sign * float(res.fun)
            closed = bound >= value * (1 - 1e-9) if sense == "min" else bound <= value
            if closed:
                status = "optimal"
    elif options.node_limit is not None and "solution limit" in str(res.message).lower():
        # its node cap (HiGHS's status 16, "Solution limit reached", which SciPy reports as
        # an unrecognised status 4), not the clock: node_limit's status rule
        status = "no_solution" if x is None else "feasible"
        if x is not None and _closed(sign * float(res.fun), bound, sense):
            status = "optimal"
    elif res.status == 1:  # a limit stopped it: with its incumbent, if any
        status = "time_limit"
        if x is not None and _closed(sign * float(res.fun), bound, sense):
            status = "optimal"
    elif res.status == 2:
        status = "infeasible"
    else:
        status = "error"
    return MilpOutcome(
        x=x,
        bound=bound,
        status=status,
        solver_status=int(res.status),
        message=f"HiGHS: {res.message} (SciPy fallback without highspy: Ctrl-C cannot "
        "interrupt it and model building is not timed by the solver)",
        nodes=None if nodes is None else int(nodes),
        time_limit_hit=res.status == 1,  # (its node cap ends as status 4, above)
        infeasible=res.status == 2,
        rows=int(A.shape[0]),
        time_limit=time_limit,
    )
