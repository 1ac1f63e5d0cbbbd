"""The testbed methods, one module each, apart from their registry (:mod:`..solvers`).

* :mod:`.assign_plus`: assign+ and the default's portfolio;
* :mod:`.anneal`: Emulab assign's simulated annealing;
* :mod:`.exact`: the CP-SAT optimum of the inter-switch bandwidth;
* :mod:`.outcome`: the one exit every method takes (a mapping checked, or a failure with
  its reason, ``infeasible`` only when proven).

Importing this package also imports what every method's first timed call in a process
used to import inside its budget, where the import cannot be stopped: ``numpy.ma``
(NumPy 2's ``np.unique`` imports it on its first call: 35-65 ms idle), ``numpy.random``
(:func:`coalloc._shared.seeding.kernel_seed` reaches it through NumPy's lazy attribute:
about 25 ms) and the compiled kernels (``_allocate``, ``_anneal``). Under a load of 13 on 2
cores these took five times that, so that at ``time_limit=0.05`` the first call on an
instance (the default's, in the contract audit) found no mapping where the same method
found one on its second call, and returned up to 0.08 s late (issue 36 item 4).
"""

import numpy.ma  # noqa: F401  (the note above)
import numpy.random  # noqa: F401

from .. import _allocate as _allocate  # noqa: F401
from .. import _anneal as _anneal  # noqa: F401
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
