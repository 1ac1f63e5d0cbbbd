"""CBC as a child process the runner owns: an MPS file written from the arrays, a hard
wall-clock deadline, SIGINT (CBC's own 'stop and report the incumbent') on the deadline or on
Ctrl-C, SIGKILL if it does not stop, its log read for the progress display, and its
temporary folder always removed (:mod:`.supervise`)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import time
import warnings
from typing import Any, Optional

import numpy as np

from .. import interrupt
from .options import MilpOptions, MilpProblem
from .outcome import MilpOutcome, _closed, _finite, _kept, _left, _progress_bar
from .supervise import dying_with_us, owned_temp_dir, stopped_detail, watch_child


def cbc_command(pulp: Any, **kwargs: Any) -> Any:
    """PuLP's bundled CBC (``PULP_CBC_CMD``, PuLP 3), else ``COIN_CMD`` (a ``cbc`` on the PATH
    or, with PuLP 4, cbcbox's), else None.

    ``PULP_CBC_CMD`` is deprecated from PuLP 3.3 on (removed in 4.0, where ``COIN_CMD`` with
    ``pulp[cbc]`` replaces it); its deprecation warning is silenced here.
    """
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        for name in ("PULP_CBC_CMD", "COIN_CMD"):
            cls = getattr(pulp, name, None)
            if cls is None:
                continue
            try:
                solver = cls(**kwargs)
                if solver.available():
                    return solver
            except Exception:  # a broken installation: try the next one
                continue
    return None


#: Seconds CBC has to stop after SIGINT (on Ctrl-C, when a batch's timeout ends its
#: instance) before it is killed.
_CBC_GRACE = 2.0

#: CBC is given its time limit less a margin, :func:`cbc_margin` (``-sec``; its own clock
#: starts once the process has read its model), asked to stop (SIGINT) at the deadline and
#: killed :func:`cbc_kill_after` past it: given the limit in full it ended by itself
#: 0.08-0.48 s past it (issue 36: its root node does not look at the clock, and it writes
#: its solution file only as it ends). Before its branch and bound CBC has no SIGINT
#: handler: the signal then ends it at once, without a solution file.
CBC_STOP_MARGIN = 0.1


def cbc_margin(left: float) -> float:
    """Seconds by which CBC's own limit (``-sec``) precedes the deadline, ``left`` seconds
    away: a tenth of it, at least :data:`CBC_STOP_MARGIN` and at most 1 s."""
    return min(1.0, max(CBC_STOP_MARGIN, 0.1 * float(left)))


def cbc_kill_after(time_limit: float) -> float:
    """Seconds past the deadline at which a CBC that has not ended is killed: the overrun
    the time budget allows (``max(0.05, 0.05 T)``, issue 36) less the 20 ms the call needs
    to read back. A killed CBC leaves no solution file: the call then has no incumbent (its
    value, read from the log, is named in the message)."""
    return max(0.05, 0.05 * float(time_limit)) - 0.02


def _run_cbc(pulp, problem: MilpProblem, options: MilpOptions, show: bool,
             unit: float = 1.0) -> MilpOutcome:  # fmt: skip
    """CBC as a child process this module owns: an MPS file written from the arrays, a hard
    wall-clock deadline, SIGINT (CBC's own 'stop and report the incumbent') on the deadline
    or on Ctrl-C, SIGKILL if it does not stop, and its temporary files always removed;
    ``problem`` in the units the solver sees, ``options.started`` set."""
    solver = cbc_command(pulp)
    if solver is None:
        raise ImportError("no CBC executable found (pip install 'coalloc[cbc]')")
    bar = _progress_bar("CBC", problem.sense, options.time_limit, show, unit)
    try:
        out = _run_cbc_in(solver, problem, options, show, bar, unit)
    finally:
        bar.close()
    return out


def _run_cbc_in(solver, problem: MilpProblem, options: MilpOptions, show: bool, bar,
                unit: float = 1.0) -> MilpOutcome:  # fmt: skip
    t_entry, time_limit, mip_gap = float(options.started), options.time_limit, options.mip_gap
    threads, seed, A = options.threads, options.seed, problem.A
    nv = int(np.asarray(problem.c).shape[0])
    flip = -1.0 if problem.sense == "max" else 1.0
    with owned_temp_dir("cbc") as folder:  # and the folders of killed processes swept
        mps, sol, log_path = (os.path.join(folder, f) for f in ("m.mps", "m.sol", "m.log"))
        _write_mps(mps, flip * np.asarray(problem.c, dtype=np.float64), A, problem.row_lb,
                   problem.row_ub, problem.integrality, problem.lb, problem.ub, nv)  # fmt: skip
        args = [solver.path, mps, "-timeMode", "elapsed", "-ratio", repr(float(mip_gap))]
        left = _left(t_entry, time_limit)  # writing the file counts against the limit
        if left is not None:
            args += ["-sec", repr(round(max(0.001, left - cbc_margin(left)), 3))]
        if threads > 1:
            args += ["-threads", str(int(threads))]
        if seed is not None:
            args += ["-randomCbcSeed", str(int(seed) % 2147483647)]
        if options.node_limit is not None:  # a count, not a clock (MilpOptions.node_limit)
            args += ["-maxNodes", str(int(options.node_limit))]
        args += ["-solve", "-solution", sol]
        if (show or left is not None) and shutil.which("stdbuf"):  # CBC's log line by line,
            # for the progress, and so that a kill at the deadline can name its incumbent
            args = [shutil.which("stdbuf"), "-oL", *args]
        watch = _CbcLog(log_path, flip)
        with open(log_path, "w") as log_fh:
            # CBC may not look at the clock for a long time (its root node): just before the
            # deadline it is asked to stop, and killed cbc_kill_after() past it.
            hard = None if time_limit is None else t_entry + time_limit
            kill = None if hard is None else (t_entry + time_limit
                                               + cbc_kill_after(time_limit))  # fmt: skip
            if hard is not None and time.perf_counter() > hard:  # no time left to start it
                return MilpOutcome(
                    x=None, bound=None, status="time_limit", solver_status=-1,
                    message="CBC: not started, the time limit ran out while its model file "
                    "was written; no incumbent found", nodes=None, time_limit_hit=True,
                    infeasible=False, rows=int(A.shape[0]), time_limit=time_limit,
                )  # fmt: skip
            proc = subprocess.Popen(dying_with_us(args), stdout=log_fh, stderr=subprocess.STDOUT,
                                    stdin=subprocess.DEVNULL, start_new_session=True)  # fmt: skip

            def tick() -> None:
                watch.read()
                bar.update(time.perf_counter() - t_entry, incumbent=watch.incumbent,
                           bound=watch.bound)  # fmt: skip

            end = watch_child(proc, stop_at=hard, grace=_CBC_GRACE, poll=0.2,
                              kill_at=kill, tick=tick if show else None)  # fmt: skip
            lost = None
            if end.killed:  # its solution file is not written: name the incumbent it had
                watch.read()
                lost = None if watch.incumbent is None else watch.incumbent / unit
            if end.cancelled:
                bar.close("time_limit")
                watch.read()  # its last incumbent and bound, for the scope's error
                # leaving the temporary folder removes CBC's files
                interrupt.check(stopped_detail("CBC", watch.incumbent, watch.bound, unit))
            if show:
                tick()
        with open(log_path, errors="replace") as fh:
            log = fh.read()
        head, values = _read_cbc_solution(sol, nv)
    if options.verbose:
        print(log)
    out = _cbc_outcome((head, values, log), flip, options, end, int(A.shape[0]), proc.returncode,
                       lost)  # fmt: skip
    out.interrupted = end.interrupted
    bar.close(out.status)
    return out


class _CbcLog:
    """Incumbent and bound read from CBC's log while it runs (in the model's sense).

    CBC prints, in the minimisation it solves, ``Continuous objective value is V`` (the
    root bound), ``Integer solution of V found ...`` and ``After N nodes, ..., V best
    solution, best possible B (... seconds)``.
    """

    _SOLUTION = re.compile(r"Integer solution of\s+(-?[0-9.eE+]+)")
    _NODES = re.compile(r"(-?[0-9.eE+]+) best solution, best possible (-?[0-9.eE+]+)")
    _ROOT = re.compile(r"Continuous objective value is\s+(-?[0-9.eE+]+)")
    _FINAL = re.compile(r"^Objective value:\s+(-?[0-9.eE+]+)")
    _FINAL_BOUND = re.compile(r"^Lower bound:\s+(-?[0-9.eE+]+)")

    def __init__(self, path: str, flip: float) -> None:
        self.path = path
        self.flip = flip
        self.offset = 0
        self.rest = ""
        self.incumbent: Optional[float] = None
        self.bound: Optional[float] = None

    def read(self) -> None:
        try:
            with open(self.path, errors="replace") as fh:
                fh.seek(self.offset)
                text = fh.read()
                self.offset = fh.tell()
        except OSError:
            return
        lines = (self.rest + text).split("\n")
        self.rest = lines.pop()
        for line in lines:
            self.parse(line)

    def parse(self, line: str) -> None:
        m = self._SOLUTION.search(line)
        if m:
            self.incumbent = _finite(self.flip * float(m.group(1)))
        m = self._NODES.search(line)
        if m:
            found = _finite(self.flip * float(m.group(1)))
            self.incumbent = self.incumbent if found is None else found
            self.bound = _finite(self.flip * float(m.group(2)))
        m = self._ROOT.search(line)
        if m and self.bound is None:
            self.bound = _finite(self.flip * float(m.group(1)))
        m = self._FINAL.search(line)  # the summary CBC prints when it ends
        if m and self.incumbent is not None:  # (with no solution it is the relaxation's)
            found = _finite(self.flip * float(m.group(1)))
            self.incumbent = self.incumbent if found is None else found
        m = self._FINAL_BOUND.search(line)
        if m:
            self.bound = _finite(self.flip * float(m.group(1)))


def _write_mps(path, c, A, row_lb, row_ub, integrality, lb, ub, nv) -> None:
    """A minimisation model in fixed MPS (8-character names X0000000 / R0000000).

    The COLUMNS and BOUNDS sections, the bulk of the file, are assembled as byte arrays
    (a million coefficients take about a second, not ten); values are written with 17
    significant digits, padded to one width per section.
    """
    A = A.tocsc()
    A.sort_indices()
    lo = np.broadcast_to(np.asarray(lb, dtype=np.float64), (nv,))
    hi = np.broadcast_to(np.asarray(ub, dtype=np.float64), (nv,))
    rlo = np.asarray(row_lb, dtype=np.float64)
    rhi = np.asarray(row_ub, dtype=np.float64)
    if nv >= 10**7 or A.shape[0] >= 10**7:
        raise ValueError("CBC's file format holds at most 10,000,000 variables and rows")
    kinds, rhs, ranges = [], [], []
    for r in range(A.shape[0]):
        a, b = rlo[r], rhi[r]
        if a == b:
            kinds.append("E")
            rhs.append((r, b))
        elif np.isfinite(b):
            kinds.append("L")
            rhs.append((r, b))
            if np.isfinite(a):
                ranges.append((r, b - a))
        elif np.isfinite(a):
            kinds.append("G")
            rhs.append((r, a))
        else:
            kinds.append("N")
    head = ["NAME          COALLOC", "ROWS", " N  OBJ"]
    head += [f" {k}  R{r:07d}" for r, k in enumerate(kinds) if k != "N"]
    head.append("COLUMNS")
    # COLUMNS: per column its objective line, then its coefficients (free rows left out).
    free = np.array([k == "N" for k in kinds], dtype=bool)
    col_of = np.repeat(np.arange(nv), np.diff(A.indptr))
    keep = ~free[A.indices] if free.size else np.ones(A.nnz, dtype=bool)
    cols = np.concatenate([np.arange(nv), col_of[keep]])
    rows = np.concatenate([np.full(nv, -1), A.indices[keep].astype(np.int64)])
    vals = np.concatenate([np.asarray(c, dtype=np.float64), A.data[keep]])
    order = np.argsort(cols, kind="stable")  # objective first within a column
    cols, rows, vals = cols[order], rows[order], vals[order]
    row_field = np.where(rows[:, None] >= 0, _names(b"R", np.maximum(rows, 0)),
                         np.frombuffer(b"OBJ     ", np.uint8)[None, :])  # fmt: skip
    lines = _join_fields(b"    ", _names(b"X", cols), b"  ", row_field, b"  ", _numbers(vals))
    starts = np.searchsorted(cols, np.arange(nv + 1))
    integ = np.asarray(integrality).astype(bool)
    with open(path, "wb") as fh:
        fh.write(("\n".join(head) + "\n").encode())
        marker = False
        run = 0
        for v in [*np.flatnonzero(np.diff(integ)) + 1, nv]:  # runs of equal integrality
            if run < nv and integ[run] != marker:
                marker = bool(integ[run])
                tag = "INTORG" if marker else "INTEND"
                fh.write(f"    MARK      'MARKER'                 '{tag}'\n".encode())
            fh.write(lines[starts[run] : starts[v]].tobytes())
            run = int(v)
        if marker:
            fh.write(b"    MARK      'MARKER'                 'INTEND'\n")
        out = ["RHS"]
        out += [f"    RHS       R{r:07d}  {val: .17g}" for r, val in rhs]
        if ranges:
            out.append("RANGES")
            out += [f"    RNG       R{r:07d}  {val: .17g}" for r, val in ranges]
        out.append("BOUNDS")
        fh.write(("\n".join(out) + "\n").encode())
        binary = integ & (lo == 0) & (hi == 1)
        rest = np.flatnonzero(~binary)
        if rest.size == 0:  # every variable binary: one vectorised block
            fh.write(_join_fields(b" BV BND       ", _names(b"X", np.arange(nv))).tobytes())
        else:
            out = []
            for v in range(nv):
                a, b = lo[v], hi[v]
                if binary[v]:
                    out.append(f" BV BND       X{v:07d}")
                elif a == b:
                    out.append(f" FX BND       X{v:07d}  {a: .17g}")
                else:
                    out.append(f" LO BND       X{v:07d}  {a: .17g}" if np.isfinite(a)
                               else f" MI BND       X{v:07d}")  # fmt: skip
                    out.append(f" UP BND       X{v:07d}  {b: .17g}" if np.isfinite(b)
                               else f" PL BND       X{v:07d}")  # fmt: skip
            fh.write(("\n".join(out) + "\n").encode())
        fh.write(b"ENDATA\n")


def _names(letter: bytes, index: np.ndarray) -> np.ndarray:
    """``letter`` and 7 digits per index, as an (k, 8) array of ASCII bytes."""
    index = np.asarray(index, dtype=np.int64)
    out = np.empty((index.size, 8), dtype=np.uint8)
    out[:, 0] = letter[0]
    rest = index.copy()
    for p in range(7, 0, -1):
        out[:, p] = 48 + rest % 10
        rest //= 10
    return out


def _numbers(values: np.ndarray) -> np.ndarray:
    """``f"{v: .17g}"`` of each value, left-aligned in one width, as (k, w) ASCII bytes."""
    uniq, inverse = np.unique(values, return_inverse=True)
    text = [f"{u: .17g}" for u in uniq]
    width = max((len(t) for t in text), default=1)
    table = np.frombuffer("".join(t.ljust(width) for t in text).encode(), dtype=np.uint8)
    return table.reshape(max(len(text), 1) if text else 0, width)[inverse.reshape(-1)]


def _join_fields(*fields: Any) -> np.ndarray:
    """Lines made of byte constants and (k, w) byte arrays, each ended by a newline."""
    k = next(f.shape[0] for f in fields if isinstance(f, np.ndarray))
    parts = [
        np.broadcast_to(np.frombuffer(f, dtype=np.uint8)[None, :], (k, len(f)))
        if isinstance(f, bytes) else f
        for f in fields
    ]  # fmt: skip
    parts.append(np.full((k, 1), ord("\n"), dtype=np.uint8))
    return np.ascontiguousarray(np.concatenate(parts, axis=1))


def _read_cbc_solution(path: str, nv: int):
    """(first line, values) of CBC's solution file; (None, None) when it wrote none."""
    try:
        with open(path, errors="replace") as fh:
            lines = fh.read().splitlines()
    except OSError:
        return None, None
    if not lines:
        return None, None
    x = np.zeros(nv)
    for line in lines[1:]:
        parts = line.split()
        if parts and parts[0] == "**":
            parts = parts[1:]
        if len(parts) >= 3 and parts[1].startswith("X"):
            x[int(parts[1][1:])] = float(parts[2])
    return lines[0].strip(), x


def _cbc_outcome(read: tuple, flip: float, options: MilpOptions, end: Any, rows: int,
                 code: Optional[int], lost: Optional[float] = None) -> MilpOutcome:  # fmt: skip
    """The outcome of a CBC run from what it wrote (``read``: the ``.sol`` file's head line
    and values, and its log) and how it ended (``end``: :func:`.supervise.watch_child`'s);
    ``lost``: the incumbent a killed CBC had (it writes its solution only as it ends)."""
    head, x, log = read
    mip_gap, time_limit = options.mip_gap, options.time_limit
    interrupted, killed = end.interrupted, end.killed
    text = (head or "").lower()
    value = re.search(r"objective value\s*(-?[0-9.eE+]+)", head or "")
    has_solution = (
        x is not None and value is not None and abs(float(value.group(1))) < 1e49
        and not text.startswith(("infeasible", "integer infeasible", "unbounded"))
        and "no integer solution" not in text  # CBC then writes the LP relaxation
    )  # fmt: skip
    if not has_solution:
        x = None
    stopped = interrupted or killed or text.startswith("stopped")
    infeasible = text.startswith(("infeasible", "integer infeasible"))
    bound = None
    match = re.search(r"Lower bound:\s*(-?[0-9.eE+]+)", log)
    if match and not killed:
        bound = flip * float(match.group(1))  # the bound of the minimisation CBC solved
    optimal = text.startswith("optimal") and not stopped
    if optimal and x is not None and value is not None:
        proven = flip * float(value.group(1))  # within CBC's gap tolerance of the optimum
        bound = proven if mip_gap == 0 or bound is None else bound
    # its node cap (-maxNodes, MilpOptions.node_limit) ended it, not the clock or a signal:
    # CBC then writes "Stopped on iterations" (on time: "Stopped on time", on SIGINT:
    # "Stopped on ctrl-c")
    capped = (options.node_limit is not None and text.startswith("stopped")
              and not (interrupted or killed or getattr(end, "overran", False))
              and "time" not in text and "ctrl" not in text)  # fmt: skip
    if optimal and mip_gap == 0 and x is not None:
        status = "optimal"
    elif capped:  # node_limit's status rule: a count ended it, never time_limit
        status = "no_solution" if x is None else "feasible"
        if x is not None and value is not None and _closed(
                flip * float(value.group(1)), bound, "min" if flip > 0 else "max"):
            status = "optimal"
    elif x is not None:
        status = "time_limit" if stopped else "feasible"
    elif infeasible:
        status = "infeasible"
    elif stopped or time_limit is not None:
        status = "time_limit"
    else:
        status = "error"
    nodes = re.search(r"Enumerated nodes:\s*([0-9]+)", log)
    why = (
        "interrupted (Ctrl-C)" if interrupted
        else "killed after overrunning its time limit"
        + ("" if lost is None else f" (its incumbent of {lost:.10g} was lost with it: CBC "
           "writes its solution only as it ends)") if killed
        else (head or f"CBC wrote no .sol file (exit code {code})")
    )  # fmt: skip
    if status == "time_limit":
        why += _kept(x, bound)
    elif capped:
        why += " (its node cap, node_limit)" + _kept(x, bound)
    return MilpOutcome(
        x=x, bound=bound, status=status, solver_status=int(code if code is not None else -1),
        message=f"CBC: {why}", nodes=int(nodes.group(1)) if nodes else None,
        time_limit_hit=bool(stopped) and not capped, infeasible=infeasible, rows=rows,
        time_limit=time_limit,
    )  # fmt: skip
