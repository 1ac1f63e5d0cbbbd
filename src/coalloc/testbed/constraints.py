"""The parameters of every testbed mapper, declared once (:mod:`coalloc._shared.constraints`).

:data:`PARAMS` (method -> table) validates a call's values at :func:`coalloc.testbed.assign`
and in ``Instance.check_params`` (a batch refuses a bad value before it starts), and gives
the generated invalid-value tests.
"""

from __future__ import annotations

from numbers import Integral, Real

from .._shared.constraints import (
    BACKEND,
    EXPLAIN_TIME,
    NO_VALIDATION,
    TIME_LIMIT,
    Boolean,
    InstanceOf,
    Interval,
    solvers,
)
from .assignplus import RequestMemory
from .methods import MAX_ANNEAL_MOVES, MAX_THREADS

__all__ = ["PARAMS", "FUNCTIONS"]

#: What every mapper takes about the testbed's state (mappings checked against the ptop).
_STATE = {"available": NO_VALIDATION, "trunk_used": NO_VALIDATION}

_ASSIGN_PLUS = {
    "memory": [InstanceOf(RequestMemory, "a RequestMemory"), None],
    "exchange": [Boolean()],
    **_STATE,
    "backend": BACKEND,
    "fallback": [Boolean()],
    "exact_nodes": [Interval(Integral, 0, None, closed="left")],
    "time_limit": TIME_LIMIT,
}

_MOVES = [Interval(Integral, 0, MAX_ANNEAL_MOVES)]
_ANNEAL = {
    "backend": BACKEND,
    **_STATE,
    "time_limit": TIME_LIMIT,
    # the annealing schedule (ANNEAL_DEFAULTS)
    "t0": [Interval(Real, 0, None, closed="neither")],
    "t_stop": [Interval(Real, 0, None, closed="neither")],
    "melt_accept": [Interval(Real, 0, 1, closed="neither")],
    "cooling": [Interval(Real, 0, 1, closed="neither")],
    "melt_moves": _MOVES,
    "min_moves": _MOVES,
    "frozen": _MOVES,
    "max_moves": _MOVES,
}

#: Method -> parameter -> constraints.
PARAMS = {
    **{name: _ASSIGN_PLUS for name in ("assign+", "assign+.1", "assign+.1m", "assign+.2m")},
    "anneal": _ANNEAL,
    "exact": {
        "time_limit": TIME_LIMIT,
        "threads": [Interval(Integral, 1, MAX_THREADS)],  # CP-SAT takes an int32
        **_STATE,
        "solver": solvers("cpsat"),
    },
}

#: Public functions that are no method but take parameters (the explainers): function ->
#: its table (checked by their ``@checked``).
FUNCTIONS = {
    "explain_mapping": {"time_limit": EXPLAIN_TIME},
}
