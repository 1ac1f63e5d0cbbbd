"""Coalition load sharing (Hovey & Jung, DMCF-GGA) and the generalized assignment
problem.

A grid of nodes receives jobs unevenly; node-agents form coalitions by conditional
migration and share the jobs inside each coalition by first fit, maximising the total
throughput ``sum_i min(load_i, capacity_i)``::

    import coalloc.loadshare as ls
    prob = ls.generators.paper_setup(seed=0)          # Fig. 5: 500 nodes
    res = ls.share(prob, "dmcf-gga", coalition_size=23, seed=0)
    res.placement, res.throughput, res.bound, res.migrations, res.messages

Methods (:data:`METHODS`): ``portfolio`` (default: ``bfd``, then with a time limit the
exact model where it helps), ``bfd``, ``dmcf-gga``, ``fcfs``, ``fcfs-ff``,
``round-robin``, ``exact``. The generalized assignment problem: :class:`GapInstance`,
:func:`read_gap`, :func:`solve_gap`, :func:`generate_gap`, and :class:`GapProblem`, its
kind of the family protocol (what a batch solves; JSON format ``coalloc.loadshare.gap``).
See ``coalloc docs loadshare``.
"""

from .._shared.family import FamilySpec as _Spec
from .._shared.family import register_family as _register
from . import generators
from .baselines import best_fit, fcfs, fcfs_ff, round_robin
from .dmcf import (
    DEFAULTS,
    PROCEDURES,
    ROUNDS,
    dmcf_gga,
    first_fit,
    initial_coalitions,
)
from .exact import share_exact
from .explain import explain_gap, explain_share
from .gap import GAP_TYPES, GapInstance, GapResult, gap_bound, generate_gap, solve_gap
from .io import read_gap, read_gap_file, read_problem, write_gap, write_gap_file, write_problem
from .model import LoadSharingProblem, node_loads, throughput_of
from .plot import plot_coalitions, plot_gap_trajectory, plot_loads
from .result import ShareResult
from .solvers import (
    DEFAULT_METHOD,
    GAP_METHODS,
    METHODS,
    GapProblem,
    Instance,
    LoadShareInstance,
    gap_from_dict,
    gap_to_dict,
    share,
    solve,
)
from .verify import GapReport, PlacementReport, verify_gap, verify_placement

__all__ = [
    "explain_gap",
    "explain_share",
    "plot_coalitions",
    "plot_gap_trajectory",
    "plot_loads",
    "LoadSharingProblem",
    "node_loads",
    "throughput_of",
    "share",
    "solve",
    "METHODS",
    "DEFAULT_METHOD",
    "Instance",
    "LoadShareInstance",
    "ShareResult",
    "dmcf_gga",
    "fcfs",
    "fcfs_ff",
    "round_robin",
    "best_fit",
    "share_exact",
    "first_fit",
    "initial_coalitions",
    "DEFAULTS",
    "PROCEDURES",
    "ROUNDS",
    "verify_placement",
    "PlacementReport",
    "verify_gap",
    "GapReport",
    "GapInstance",
    "GapProblem",
    "GAP_METHODS",
    "gap_to_dict",
    "gap_from_dict",
    "GapResult",
    "solve_gap",
    "gap_bound",
    "generate_gap",
    "GAP_TYPES",
    "read_gap",
    "write_gap",
    "read_gap_file",
    "write_gap_file",
    "read_problem",
    "write_problem",
    "generators",
]

# The family's entry in the one list of families (batch layer, CLI group, API reference).
from . import _spec  # noqa: E402 - what the house needs of the family

_register(
    _Spec(
        name="loadshare",
        title="Coalition load sharing (Hovey & Jung) and the GAP",
        summary="coalition load sharing (DMCF-GGA, Hovey & Jung) and the generalized "
        "assignment problem",
        kinds=(Instance, GapProblem),
        cli="coalloc.loadshare.cli",
        formats=_spec.FORMATS,
        plot="coalloc.loadshare.cli",
        example=_spec.example,
        fuzz_seeds=_spec.fuzz_seeds,
        line_formats=_spec.LINE_FORMATS,
        generate=_spec.GENERATE,
    )
)
