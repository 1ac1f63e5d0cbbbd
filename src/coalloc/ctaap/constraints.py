"""The parameters of every CTAAP method, declared once (:mod:`coalloc._shared.constraints`).

:data:`PARAMS` (method -> table) validates a call's values at :func:`coalloc.ctaap.solve`
and in ``Instance.check_params`` (a batch refuses a bad value before it starts), and gives
the generated invalid-value tests; :data:`SOLVE_PARAMS` declares the keywords
:func:`~coalloc.ctaap.solve` takes itself.
"""

from __future__ import annotations

from numbers import Integral, Real

from .._shared.constraints import (
    BACKEND,
    EXPLAIN_TIME,
    MIP_GAP,
    NO_VALIDATION,
    THREADS,
    TIME_LIMIT,
    VERBOSE,
    AnyGiven,
    Boolean,
    InstanceOf,
    Interval,
    Options,
    Predicate,
    Table,
    solvers,
)
from .._shared.milp import SOLVERS
from .._shared.params import MATRIX_FORMATS
from .anytime import SUB_SOLVERS
from .exact import FORMULATIONS
from .greedy import ORDERS
from .solver import (
    COMPATIBILITY_FUNCTIONS,
    MAX_ANNEALING_STEPS,
    MAX_LOCAL_SEARCH,
    MAX_LOOP,
    annealing_steps,
)

__all__ = ["PARAMS", "SOLVE_PARAMS", "RELATIONS", "FUNCTIONS"]

_POSITIVE = [Interval(Real, 0, None, closed="neither")]
_NONNEG = [Interval(Real, 0, None, closed="left")]
_LOOP = [Interval(Integral, 1, MAX_LOOP)]

#: The keywords :func:`coalloc.ctaap.solve` takes itself (every method).
SOLVE_PARAMS = {"bound": [Boolean()], "bound_effort": _POSITIVE}

#: CTAAP's schedule: at most MAX_ANNEALING_STEPS steps from beta0 to beta_f by beta_r.
_SCHEDULE = Predicate(
    ("beta0", "beta_f", "beta_r"),
    lambda b0, bf, br: annealing_steps(b0, bf, br) <= MAX_ANNEALING_STEPS,
    "beta0={beta0}, beta_f={beta_f}, beta_r={beta_r} give too many "
    f"annealing steps; at most {MAX_ANNEALING_STEPS} are allowed (raise beta_r)",
)

#: Method -> parameter -> constraints.
PARAMS = {
    "ctaap": Table(
        {
            "beta0": _POSITIVE,
            "beta_f": _POSITIVE,
            "beta_r": [Interval(Real, 1, None, closed="neither")],
            "max_outer": _LOOP,
            "max_inner": _LOOP,
            "tol_outer": _NONNEG,
            "tol_inner": _NONNEG,
            "compat_fn": [
                Options(COMPATIBILITY_FUNCTIONS),
                InstanceOf((tuple, list), "a pair of numbers (f_ok, f_bad)"),
            ],
            "q_scale": [Options({"none", "degree"}), Interval(Real, 0, None, closed="neither")],
            "matching": [Options({"cardinality", "weight"})],
            "init_noise": _NONNEG,
            "fill": [Boolean()],
            "local_search": [Options({"auto"}), Interval(Integral, 0, MAX_LOCAL_SEARCH)],
            "backend": BACKEND,
            "paper": [Boolean()],
            "time_limit": TIME_LIMIT,
            "rounds": [Interval(Integral, 0, None, closed="left"), None],
            "neighbourhood": [Interval(Integral, 1, None, closed="left")],
            "sub_solver": [Options(SUB_SOLVERS)],
            "sub_time_limit": _POSITIVE,
            "lp_bound_share": [Interval(Real, 0, 1, closed="left")],
            "bound_effort": _POSITIVE,
        },
        relations=[_SCHEDULE],
    ),
    "greedy": {
        "order": [Options(ORDERS)],
        "restarts": [Interval(Integral, 1, None, closed="left")],
        "time_limit": TIME_LIMIT,
    },
    "exact": {
        "solver": solvers(*SOLVERS),
        "time_limit": TIME_LIMIT,
        "formulation": [Options(FORMULATIONS)],
        "mip_gap": MIP_GAP,
        "threads": THREADS,
        "verbose": VERBOSE,
    },
}

#: Relations of one function rather than of a method's table (checked by its ``@checked``;
#: a table's own, :class:`~coalloc._shared.constraints.Table`, are checked by
#: ``check_params`` too).
RELATIONS = {
    # the anytime search (ctaap with time_limit or rounds) needs one of them
    "anytime": [AnyGiven("time_limit", "rounds", why="the anytime search")],
}

#: ``stop_at`` of the bounds: a :func:`time.perf_counter` deadline, or None.
_STOP_AT = [Interval(Real, None, None), None]
#: ``at_least`` of the bounds: stop once the bound is at most this many tasks.
_AT_LEAST = [Interval(Integral, 0, None, closed="left")]

#: Public functions that are no method but take parameters (the explainers, the bounds of
#: :mod:`coalloc.ctaap.bounds`): function (its path below ``coalloc.ctaap``) -> its table
#: (checked by their ``@checked``).
FUNCTIONS = {
    "explain_allocation": {"time_limit": EXPLAIN_TIME},
    "bounds.lp_bound": {
        "effort": _POSITIVE,
        "set_rows": NO_VALIDATION,  # rows cluster_set_bound found: the caller's own
        "stop_at": _STOP_AT,
        "at_least": _AT_LEAST,
    },
    "bounds.cluster_set_bound": {
        "effort": _POSITIVE,
        "max_set_size": [Interval(Integral, 1, None, closed="left")],
        "stop_at": _STOP_AT,
        "at_least": _AT_LEAST,
    },
    "bounds.capped_clique": {"max_work": [Interval(Integral, 0, None, closed="left"), None]},
    "instance_to_dict": {
        "bandwidth_format": [Options(MATRIX_FORMATS)],
        "metadata": NO_VALIDATION,  # any JSON-ready mapping (the writer checks it)
    },
}
