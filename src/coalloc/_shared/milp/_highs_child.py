"""HiGHS set-up and read-out, shared by the in-thread path and the child process.

:mod:`coalloc._shared.milp.highs` imports this module for :func:`setup` and :func:`read_out`, and
runs its source as a child process (``python -c <this file> <fd> <parent pid>``) for the
models whose presolve or root cut rounds could outlast a time limit (HiGHS does not look at
its interrupt callback there). The module imports nothing of coalloc, so that the child
starts in the time it takes to import NumPy and highspy, not the whole package.

The child's protocol: the parent's ``sys.path`` (a list) then the model (a dict, see
:func:`setup`) arrive pickled on standard input; pickled tuples go out through the file
descriptor given as first argument:
``("ready", t)`` when HiGHS starts (``t`` a ``time.monotonic()`` instant: the parent learns
what a child costs to start), ``("inc", x, primal, dual, nodes)`` for every improving
solution, ``("bound", primal, dual, nodes)`` every 0.1 s (the parent kills the child at
its deadline and keeps these), then
``("done", read_out(...))`` or ``("error", text)``. SIGINT asks HiGHS to stop (the
incumbent is kept); HiGHS's own time limit ends ``model["margin"]`` seconds before
``model["deadline"]`` (a ``time.monotonic()`` instant); the parent kills the child when it
has not answered by the deadline, and the child dies with its parent
(``PR_SET_PDEATHSIG``). It leaves with ``os._exit`` once it has answered.
"""

import sys

if __name__ == "__main__" and sys.path and sys.path[0] in ("", "."):
    del sys.path[0]  # run as ``python -c``: never import from the caller's folder

from typing import Any, Optional

#: The callback kinds through which a stop request reaches HiGHS.
INTERRUPT_KINDS = ("kCallbackMipInterrupt", "kCallbackSimplexInterrupt", "kCallbackIpmInterrupt")


def die_with_parent(parent: int) -> None:
    """Ask Linux to SIGKILL this process when ``parent`` (the thread that started it) dies.

    Exits at once when ``parent`` is already gone (the parent died before the request).
    Does nothing on other systems.
    """
    import os

    if sys.platform.startswith("linux"):
        try:
            import ctypes
            import signal

            libc = ctypes.CDLL(None, use_errno=True)
            libc.prctl(1, int(signal.SIGKILL), 0, 0, 0)  # PR_SET_PDEATHSIG = 1
        except (OSError, AttributeError):  # no usable libc: the parent's kill still holds
            pass
    if os.getppid() != parent:
        os._exit(3)


def finite(value: Any) -> Optional[float]:
    """``value`` as a float, None when missing, infinite or HiGHS's 'infinity' (>= 1e50)."""
    try:
        value = float(value)
    except (TypeError, ValueError):
        return None
    return value if value == value and abs(value) < 1e50 else None


def setup(hs: Any, h: Any, model: dict) -> bool:
    """Pass ``model`` (a dict of arrays and options) to the ``highspy.Highs`` ``h``.

    Keys: ``nv, rows, nnz, max, c, lb, ub, row_lb, row_ub, start, index, value,
    integrality`` (column-wise, int32 indices), ``verbose, mip_gap, seed``, and optionally
    ``node_limit`` (HiGHS's ``mip_max_nodes``), ``highs_options`` (pairs of a HiGHS option
    name and its value, set last) and ``x0`` (a solution to start from). The time limit is
    set by the caller. Returns False when HiGHS rejects the model.
    """
    h.setOptionValue("output_flag", bool(model["verbose"]))
    h.setOptionValue("mip_rel_gap", float(model["mip_gap"]))
    if float(model["mip_gap"]) == 0.0:
        # a proof asked for: HiGHS's absolute gap (1e-6 by default) would call a model whose
        # optimum is below 1e-6 optimal at any incumbent of that size (issue 30)
        h.setOptionValue("mip_abs_gap", 0.0)
    if model["seed"] is not None:
        h.setOptionValue("random_seed", int(model["seed"]) % 2147483647)
    if model.get("node_limit") is not None:  # a count, not a clock (MilpOptions.node_limit)
        h.setOptionValue("mip_max_nodes", int(model["node_limit"]))
    for key, value in model.get("highs_options") or ():
        if h.setOptionValue(key, value) == hs.HighsStatus.kError:
            raise ValueError(f"highs_options: HiGHS refused option {key!r} = {value!r}")
    sense = hs.ObjSense.kMaximize if model["max"] else hs.ObjSense.kMinimize
    status = h.passModel(
        model["nv"], model["rows"], model["nnz"], int(hs.MatrixFormat.kColwise), int(sense),
        0.0, model["c"], model["lb"], model["ub"], model["row_lb"], model["row_ub"],
        model["start"], model["index"], model["value"], model["integrality"],
    )  # fmt: skip
    if status == hs.HighsStatus.kError:
        return False
    x0 = model.get("x0")
    if x0 is not None:  # a known solution: HiGHS starts from it (an incumbent at once)
        try:
            sol = hs.HighsSolution()
            sol.col_value = [float(v) for v in x0]
            h.setSolution(sol)
        except (AttributeError, TypeError):  # a highspy without setSolution: no start
            pass
    return True


def watch(hs: Any, h: Any, state: dict, send: Any = None) -> None:
    """Install the callbacks: record incumbent and bound in ``state``, honour ``state["stop"]``.

    With ``send``, every improving solution is passed on as ``("inc", x, primal, dual,
    nodes)`` (``x`` a float64 array) and, when ``state["every"]`` is set, the bound every
    ``state["every"]`` seconds as ``("bound", primal, dual, nodes)``. When ``state`` has a
    key ``"x"``, the last improving solution is kept there (a float64 array): the in-thread
    path returns it when it stops waiting for a HiGHS that does not stop.
    """
    import time

    import numpy as np

    kinds = hs.cb.HighsCallbackType
    interrupt = {int(getattr(kinds, k)) for k in INTERRUPT_KINDS}
    mip = {int(kinds.kCallbackMipInterrupt), int(kinds.kCallbackMipImprovingSolution)}
    improving = int(kinds.kCallbackMipImprovingSolution)
    state.setdefault("last", 0.0)

    def callback(kind, message, data_out, data_in, user_data):
        kind = int(kind)
        if kind in mip and data_out is not None:
            state["primal"] = finite(data_out.mip_primal_bound)
            state["dual"] = finite(data_out.mip_dual_bound)
            state["nodes"] = int(data_out.mip_node_count)
            if kind == improving and (send is not None or "x" in state):
                x = np.array(data_out.mip_solution, dtype=np.float64)
                if "x" in state:  # the thread's caller may have to return without h
                    state["x"] = x
            if send is not None:
                if kind == improving:
                    send(("inc", x, state["primal"], state["dual"], state["nodes"]))
                elif state.get("every") and time.monotonic() - state["last"] > state["every"]:
                    state["last"] = time.monotonic()
                    send(("bound", state["primal"], state["dual"], state["nodes"]))
        if state["stop"] and data_in is not None and kind in interrupt:
            data_in.user_interrupt = True

    h.setCallback(callback, None)
    for name in (*INTERRUPT_KINDS, "kCallbackMipImprovingSolution"):
        h.startCallback(getattr(kinds, name))


def read_out(hs: Any, h: Any, nv: int) -> dict:
    """What a finished run gave: status code and text, objective, solution, bound, nodes."""
    import numpy as np

    code = h.getModelStatus()
    info = h.getInfo()
    value = finite(info.objective_function_value)
    x = None
    if int(info.primal_solution_status) == 2 and value is not None:  # feasible
        x = np.array(h.getSolution().col_value, dtype=np.float64)
        if x.shape != (nv,):
            x = None
    nodes = int(info.mip_node_count)
    return {
        "code": int(code), "text": h.modelStatusToString(code), "value": value, "x": x,
        "bound": finite(info.mip_dual_bound), "nodes": nodes if nodes >= 0 else None,
    }  # fmt: skip


def main() -> None:
    """The child process: read the model, solve it, report through the descriptor argv[1]."""
    import os
    import pickle
    import signal

    out = os.fdopen(int(sys.argv[1]), "wb")
    die_with_parent(int(sys.argv[2]))
    state: dict = {"stop": False, "primal": None, "dual": None, "nodes": None}

    def ask_stop(signum, frame):  # runs between the bytecodes of the next callback
        state["stop"] = True

    signal.signal(signal.SIGINT, ask_stop)

    def send(message) -> None:
        pickle.dump(message, out, protocol=pickle.HIGHEST_PROTOCOL)
        out.flush()

    try:
        import time

        paths = pickle.load(sys.stdin.buffer)  # import what the parent imports
        sys.path[:] = [p for p in paths if p] + [p for p in sys.path if p not in paths]
        model = pickle.load(sys.stdin.buffer)
        import highspy as hs

        h = hs.Highs()
        if not setup(hs, h, model):
            send(("rejected",))
            return
        if model["deadline"] is not None:  # time.monotonic() is system-wide on Linux
            left = model["deadline"] - model.get("margin", 0.0) - time.monotonic()
            h.setOptionValue("time_limit", max(0.001, left))
        state["every"] = 0.1  # the bound, for a kill at the deadline
        watch(hs, h, state, send)
        send(("ready", time.monotonic()))
        h.run()
        send(("done", read_out(hs, h, model["nv"])))
    except BaseException as exc:  # reported to the parent, which raises it
        import traceback

        try:
            send(("error", f"{type(exc).__name__}: {exc}", traceback.format_exc()))
        except OSError:
            pass
    finally:
        try:
            out.close()
        except OSError:
            pass


if __name__ == "__main__":
    main()
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    finally:  # no interpreter shutdown (NumPy's and highspy's finalisers): the parent waits
        import os

        os._exit(0)
