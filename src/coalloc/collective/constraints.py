"""The parameters of every co-allocation method, declared once
(:mod:`coalloc._shared.constraints`).

:data:`PARAMS` (method -> table) validates a call's values at
:func:`coalloc.collective.coallocate` and in ``Instance.check_params`` (a batch refuses a bad
value before it starts), and gives the generated invalid-value tests. Every count has an
upper bound, so no parameter makes a method run for ever.
"""

from __future__ import annotations

from numbers import Integral, Real

from .._shared.constraints import (
    BACKEND,
    EXPLAIN_TIME,
    NO_VALIDATION,
    TIME_LIMIT,
    Boolean,
    Interval,
    NotBelow,
    Table,
    solvers,
)

__all__ = ["PARAMS", "FUNCTIONS"]


def _count(lo: int, hi: int) -> list:
    return [Interval(Integral, lo, hi)]


_EXACT_SOLVERS = solvers("highs", "cbc", "cpsat")

#: Method -> parameter -> constraints.
PARAMS = {
    "scan": {
        "backend": BACKEND,
        "enumerate_limit": _count(0, 10**8),
        "solver": _EXACT_SOLVERS,
        "program_time_limit": TIME_LIMIT,
        "max_rounds": _count(0, 10**9),
        "block": _count(1, 10**6),
        "reserve": [Boolean()],
        "portfolio": [Boolean(), None],
        "time_limit": TIME_LIMIT,
    },
    "cankar": Table(
        {
            "backend": BACKEND,
            "m_init": _count(1, 10**9),
            "m_max": [*_count(1, 10**10), None],  # and >= m_init: RELATIONS
            "l1": _count(1, 10**6),
            "l2": _count(0, 10**6),
            "reserve": [Boolean()],
            "max_retries": _count(0, 10**4),
            "time_limit": TIME_LIMIT,
        },
        relations=[NotBelow("m_max", "m_init")],
    ),
    "exact": {
        "solver": _EXACT_SOLVERS,
        "time_limit": TIME_LIMIT,
        "enumerate_limit": _count(1, 10**9),
        "prune": [Boolean()],
    },
    "brute_force": {
        "max_combinations": _count(1, 10**8),
        "time_limit": TIME_LIMIT,
    },
}

#: Public functions that are no method but take parameters (the explainer, the verifier's
#: tolerance): function -> its table (checked by their ``@checked``).
FUNCTIONS = {
    "explain_request": {"time_limit": EXPLAIN_TIME},
    "verify_coallocation": {
        "claimed_utilisation": NO_VALIDATION,  # a claim the report judges, never refused
        "rtol": [Interval(Real, 0, None, closed="left"), None],
    },
}
