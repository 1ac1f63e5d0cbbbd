"""The parameters of every task-mapping method, declared once
(:mod:`coalloc._shared.constraints`).

:data:`PARAMS` (method -> table) validates a call's values at :func:`coalloc.taskmap.solve`
and in ``Instance.check_params`` (a batch refuses a bad value before it starts), and gives
the generated invalid-value tests; :data:`SOLVE_PARAMS` declares the keywords
:func:`~coalloc.taskmap.solve` takes itself.
"""

from __future__ import annotations

from numbers import Integral, Real

import numpy as np

from .._shared.constraints import (
    BACKEND,
    MIP_GAP,
    NO_VALIDATION,
    TIME_LIMIT,
    VERBOSE,
    Boolean,
    InstanceOf,
    Interval,
    Options,
    solvers,
)
from .._shared.params import MATRIX_FORMATS
from .clustering import METRICS
from .exact import FORMULATIONS, SOLVERS
from .mapper import PROCESSOR_ORDERS
from .verify import DISTANCES

__all__ = ["PARAMS", "SOLVE_PARAMS", "FUNCTIONS"]

#: The keywords :func:`coalloc.taskmap.solve` takes itself (every method).
SOLVE_PARAMS = {"bound": [Boolean()]}

_MULTILEVEL = {
    "coarse_factor": [Interval(Real, 0, None, closed="neither")],
    "subsets": [Boolean()],
    "keep": [Interval(Integral, 1, None, closed="left")],
    "max_moves": [Interval(Integral, 0, None, closed="left"), None],
    "speed_exponents": NO_VALIDATION,  # a sequence of non-negative numbers, checked there
    "paper_start": [Interval(Integral, None, None)],
    "sum_refine": [Boolean()],
    "time_limit": TIME_LIMIT,
}

_VARIANT = {
    "initial": NO_VALIDATION,  # a mapping array, checked against the graphs
    "order": NO_VALIDATION,  # "cluster", "index" or a permutation, checked there
    "processor_order": [
        Options(PROCESSOR_ORDERS),
        InstanceOf((list, tuple, np.ndarray), "a permutation of the processors"),
    ],
    "acceleration": [Interval(Real, 1e-6, 1)],
    "bound_factor": [Interval(Real, 0, None, closed="neither"), None],
    "max_rounds": [Interval(Integral, 0, 1_000_000)],
    "early_exit": [Boolean()],
    "clustering": [InstanceOf(dict, "a dict of flow_injection keyword arguments"), None],
    "time_limit": TIME_LIMIT,
}

#: Method -> parameter -> constraints.
PARAMS = {
    "portfolio": {**_MULTILEVEL, "exact_cells": [Interval(Integral, 0, None, closed="left")]},
    "multilevel": _MULTILEVEL,
    **{name: _VARIANT for name in ("base", "base+improve", "open", "open+improve")},
    "exact": {
        "solver": solvers(*SOLVERS),
        "formulation": [Options(FORMULATIONS)],
        "time_limit": TIME_LIMIT,
        "mip_gap": MIP_GAP,
        "max_variables": [Interval(Integral, 1, None, closed="left")],
        "verbose": VERBOSE,
    },
}

#: Public functions that are no method but take tuning parameters (the clustering every
#: variant runs, whose keywords ``clustering=`` passes; the processor order; the cost
#: measure): function -> its table (checked by their ``@checked``).
FUNCTIONS = {
    "flow_injection": {
        "delta": [Interval(Real, 0, None, closed="neither"), None],
        "delta_scale": [Interval(Real, 0, None, closed="neither")],
        "metric": [Options(METRICS)],
        "min_cluster_size": [Interval(Integral, 1, None, closed="left")],
        "inherit": [Boolean()],
        "max_injections": [Interval(Integral, 0, None, closed="left")],
        "node_weight": NO_VALIDATION,  # a weight per task, checked against the graph
        "backend": BACKEND,
    },
    "processor_order": {"kind": [Options(PROCESSOR_ORDERS)]},  # seed: the seed policy's
    "communication_cost": {"distance": [Options(DISTANCES)]},
    "io.task_graph_to_dict": {
        "comm_format": [Options(MATRIX_FORMATS)],
        "metadata": NO_VALIDATION,  # any JSON-ready mapping (the writer checks it)
    },
}
