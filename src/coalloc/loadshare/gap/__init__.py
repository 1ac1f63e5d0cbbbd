"""The generalized assignment problem (GAP), as Hovey & Jung frame load sharing.

``m`` agents with capacities ``b_i`` and ``n`` items; assigning item ``j`` to agent ``i``
costs ``c_ij`` (or earns it, ``sense="max"``) and uses ``w_ij`` of the agent's capacity.
Every item goes to exactly one agent (``assign_all=True``) or to at most one
(``assign_all=False``: an item may stay unassigned, ``-1``, at no cost).

* :func:`read_gap` / :func:`write_gap`: the OR-Library format (module docstring of
  :mod:`coalloc.loadshare.io` and ``coalloc docs loadshare``).
* :func:`solve_gap`: ``method="portfolio"`` (the default: the heuristic with CP-SAT beside
  it, or after it under a work cap, on instances of at most ``PORTFOLIO_PAIRS`` pairs,
  and beside it on larger ones under limits of ``PORTFOLIO_LARGE_FROM`` seconds or more;
  the heuristic alone otherwise), ``"exact"`` (CP-SAT or HiGHS on the shared runner: proven
  optimum, bound, gap; started from the heuristic and never worse than it) or
  ``"heuristic"`` (alone), anytime: the rounded LP relaxation (or a greedy on the Lagrangian
  relaxation's reduced costs) as the start, then a resumable compiled tabu search over
  shifts, swaps and ejection chains with a penalised capacity excess in rounds that stop
  at ``time_limit``, with subgradient steps on the Lagrangian relaxation of the capacities
  between them; the bound is the best of the LP and the Lagrangian, and
  ``result.trajectory`` records (time, objective, bound).
* :func:`generate_gap`: Chu & Beasley's types A-D.

One idea per module:

=================== ======================================================================
``model``           :class:`GapInstance` (validation), the objective, :class:`GapCall`
``bounds``          the LP relaxation, :func:`gap_bound`, the count bound, the proofs
``lagrangian``      the two Lagrangian relaxations stepped beside the search
``tabu``            the tabu kernel's parameters and its resumable state, named
``search``          the anytime search: its knobs, core phase, core cycles, rounds, early stop
``search_start``    the search's start: the greedy, the fallback and its repair, the core
``search_restarts`` the restarts and path relinking inside a phase of the search
``relink``          path relinking between elite assignments (``relink=True``; off: no gain)
``subgap``          exact re-optimisation of 2-3 agents (``search._SUBGAP``; off: no gain)
``heuristic``       the heuristic method (LP, search, result)
``solver``          the integer programme (CP-SAT model, MILP), its check, its thread
``exact``           the exact method (heuristic and solver side by side, the better answer)
                    and the default portfolio
``solve``           :func:`solve_gap`, the front door
``generators``      :func:`generate_gap`
=================== ======================================================================
"""

from __future__ import annotations

from ..result import GapResult
from .bounds import count_bound_infeasible, gap_bound
from .exact import HINT_SHARE  # noqa: F401
from .generators import GAP_TYPES, generate_gap
from .model import GapInstance
from .search import MAX_ITERATIONS  # noqa: F401
from .solve import solve_gap

__all__ = [
    "GapInstance",
    "GapResult",
    "solve_gap",
    "generate_gap",
    "GAP_TYPES",
    "gap_bound",
    "count_bound_infeasible",
]

# HINT_SHARE and MAX_ITERATIONS stay importable from here (not in __all__), as before.
