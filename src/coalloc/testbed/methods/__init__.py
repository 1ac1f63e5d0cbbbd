"""The testbed methods, one module each, apart from their registry (:mod:`..solvers`).

* :mod:`.assign_plus`: assign+ and the default's portfolio;
* :mod:`.anneal`: Emulab assign's simulated annealing;
* :mod:`.exact`: the CP-SAT optimum of the inter-switch bandwidth;
* :mod:`.outcome`: the one exit every method takes (a mapping checked, or a failure with
  its reason, ``infeasible`` only when proven).
"""

from .anneal import MAX_ANNEAL_MOVES, anneal_method
from .assign_plus import (
    PORTFOLIO_EXACT_NODES,
    PORTFOLIO_EXACT_SECONDS,
    QUICK_ANNEAL,
    assign_plus_method,
    unmet_desires,
)
from .exact import MAX_THREADS, exact_method
from .outcome import PROVEN_FAILURES, policy_breach

__all__ = [
    "assign_plus_method",
    "anneal_method",
    "exact_method",
    "unmet_desires",
    "policy_breach",
    "QUICK_ANNEAL",
    "PORTFOLIO_EXACT_NODES",
    "PORTFOLIO_EXACT_SECONDS",
    "MAX_ANNEAL_MOVES",
    "MAX_THREADS",
    "PROVEN_FAILURES",
]
