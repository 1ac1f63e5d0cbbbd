"""The parameters of every load-sharing and GAP method, declared once
(:mod:`coalloc._shared.constraints`).

:data:`PARAMS` (load-sharing method -> table) and :data:`GAP_PARAMS` (GAP method -> table)
validate a call's values at :func:`coalloc.loadshare.share` and
:func:`coalloc.loadshare.solve_gap`, and in the kinds' ``check_params`` (a batch refuses a
bad value before it starts), and give the generated invalid-value tests.
"""

from __future__ import annotations

from numbers import Integral, Real

from .._shared.constraints import (
    BACKEND,
    EXPLAIN_TIME,
    MIP_GAP,
    THREADS,
    TIME_LIMIT,
    VERBOSE,
    Boolean,
    HasMethod,
    InstanceOf,
    Interval,
    Options,
    solvers,
)
from .dmcf import _DEALS, _INITS, _PHASE2, MAX_GENERATIONS
from .gap.search import MAX_CYCLES, MAX_ITERATIONS
from .io import GAP_FILE_FORMATS

__all__ = ["PARAMS", "GAP_PARAMS", "FUNCTIONS"]

_COALITION = [Interval(Integral, 1, None, closed="left"), None]
_SIMPLE = {"coalition_size": _COALITION, "backend": BACKEND, "time_limit": TIME_LIMIT}

#: Load-sharing method -> parameter -> constraints.
PARAMS = {
    "portfolio": {**_SIMPLE, "solver": solvers("highs", "cbc")},
    "bfd": _SIMPLE,
    "dmcf-gga": {
        **_SIMPLE,
        "p": [Interval(Real, 0, 1)],
        "th_c": [Interval(Real, 0, None, closed="left")],
        "th_i": [Interval(Real, 0, None, closed="neither"), None],
        "patience": [Interval(Integral, 1, MAX_GENERATIONS)],
        "max_generations": [Interval(Integral, 0, MAX_GENERATIONS)],
        "init": [Options(_INITS)],
        "phase2": [Options(_PHASE2)],
        "executor": [
            HasMethod("submit", "a concurrent.futures.Executor (anything with submit)"),
            None,
        ],
        "chunks": [Interval(Integral, 1, 10**6)],
        "progress": [Boolean(), None],  # a bar over the generations (None: none)
        "coalition_history": [Interval(Integral, 0, None, closed="left")],
    },
    "fcfs": {"time_limit": TIME_LIMIT},
    "fcfs-ff": _SIMPLE,
    "round-robin": {**_SIMPLE, "deal": [Options(_DEALS)]},
    "exact": {
        "solver": solvers("highs", "cbc"),
        "time_limit": TIME_LIMIT,
        "mip_gap": MIP_GAP,
        "threads": THREADS,
        "verbose": VERBOSE,
        "max_variables": [Interval(Integral, 1, None, closed="left")],
    },
}

_GAP = {
    "sense": [Options({"min", "max"}), None],  # None: the sense the instance states
    "assign_all": [Boolean()],
    "time_limit": TIME_LIMIT,
    "solver": solvers("cpsat", "highs", "cbc"),
    "threads": THREADS,
    # at most MAX_ITERATIONS: use time_limit to let the search run as long as you wish
    "iterations": [Interval(Integral, 0, MAX_ITERATIONS), None],
    "with_bound": [Boolean()],
    "hint": [Boolean()],
    # path relinking in the timed search (off: measured no gain, bench/loadshare/ISSUE40.md)
    "relink": [Boolean()],
    # core cycles in the search (0: none, the default; bench/loadshare/ISSUE40.md)
    "cycles": [Interval(Integral, 0, MAX_CYCLES)],
}

#: GAP method -> parameter -> constraints.
GAP_PARAMS = {"portfolio": _GAP, "heuristic": _GAP, "exact": _GAP}

#: Public functions that are no method but take parameters (the explainers, DMCF's two
#: first steps): function (its path below ``coalloc.loadshare``) -> its table (checked by
#: their ``@checked``).
FUNCTIONS = {
    "explain_gap": {"time_limit": EXPLAIN_TIME},
    "explain_share": {"time_limit": EXPLAIN_TIME},
    "initial_coalitions": {
        "coalition_size": [Interval(Integral, 1, None, closed="left")],
        "how": [Options(_INITS)],
    },
    "dmcf.job_order": {"phase2": [Options(_PHASE2)]},
    "io.read_gap_file": {
        "fmt": [Options(GAP_FILE_FORMATS), None],
        "command": [InstanceOf(str, "a string (the command a message names)")],
    },
}
