"""One runner for the mixed-integer programs of every family: HiGHS, CBC and CP-SAT.

A family builds its model (a sparse ``A``, row bounds, variable bounds and integrality, or a
CP-SAT ``CpModel``) and hands it to :func:`run_milp` or :func:`run_cpsat`; the runner applies
the common options (time limit, relative gap, seed, threads, log), maps the solver's status
onto the package's vocabulary with one table, and returns a :class:`MilpOutcome`. The
family then rounds, verifies and reports.

Status table (``MilpOutcome.status``), after :func:`scipy.optimize.milp` (whose status 1,
"iteration or time limit reached", comes with ``x`` when a solution was found):

============  ===========================  ==========================  ====================
status        HiGHS (``highspy``)          CBC (child process)         CP-SAT
============  ===========================  ==========================  ====================
optimal       Optimal with ``mip_gap ==    Optimal, not stopped on     OPTIMAL (with
              0``, or the bound meets the  time, ``mip_gap == 0``      ``mip_gap > 0``: the
              value                                                    bound meets it)
feasible      Optimal with a gap left      Optimal with ``mip_gap >    FEASIBLE without a
              (``mip_gap > 0``)            0``                         limit; OPTIMAL at
                                                                       the gap
time_limit    stopped by the time limit    stopped (time, Ctrl-C,      FEASIBLE with a
              or Ctrl-C before the proof,  killed) before the proof,   limit or stopped;
              with or without a solution   with or without a solution  UNKNOWN
infeasible    Infeasible                   Infeasible                  INFEASIBLE
error         anything else                anything else               MODEL_INVALID, ...
============  ===========================  ==========================  ====================

Two caps count work instead of time, so that where a capped solve ends, its answer and its
bound, is a function of the model and the options, not of the machine's speed or load
(issue 36 item 3): ``MilpOptions.node_limit``, branch-and-bound nodes (HiGHS's
``mip_max_nodes``, in its thread and in its child process; SciPy's ``node_limit``; CBC's
``-maxNodes``; CP-SAT has no such count and :func:`run_cpsat` refuses it with a
``ValueError``), and ``MilpOptions.work_limit``, CP-SAT's deterministic seconds (HiGHS and
CBC ignore it). A solve a cap ended is ``feasible`` with its incumbent (``optimal`` when
its bound meets the incumbent) and ``no_solution`` without one (HiGHS's "Solution limit
reached", CBC's "Stopped on iterations", CP-SAT's UNKNOWN at its work cap), never
``time_limit``; a time limit or Ctrl-C that comes first still gives ``time_limit``.

``time_limit`` means that a time limit or Ctrl-C stopped the solver before it proved
optimality or infeasibility: ``x`` holds the incumbent when there is one (and ``bound`` its
proven bound), None otherwise, and the message says which ("incumbent kept" / "no incumbent
found"). ``time_limit_hit`` says the solver was stopped and ``interrupted`` that Ctrl-C
stopped it. A run that ends without a solution is a normal outcome too (``x`` None, a
status and a message), never an exception.

Stopping guarantees. The time limit counts from the call (or from ``started``, when the
family passes the moment it began building its model): what the runner spends converting the
arrays is deducted before the solver gets the rest. Every solver runs away from the calling
thread -- CP-SAT in a worker thread, CBC in a child process, HiGHS in a worker thread for
small models and in a child process for large ones (below) -- while the caller waits in
short slices, so that:

* Ctrl-C (``KeyboardInterrupt`` in the calling thread) asks the solver to stop at once --
  HiGHS through its interrupt callbacks (MIP, simplex and IPM), CP-SAT through
  ``StopSearch``, CBC through SIGINT -- and the call returns the incumbent with its bound;
  a third Ctrl-C while the solver winds down is re-raised;
* the call returns at its deadline (issue 36): HiGHS and CP-SAT get the time left less a
  stop margin (:data:`.highs.HIGHS_STOP_MARGIN`, :data:`.cpsat.CPSAT_STOP_MARGIN`) and are
  asked to stop in the same way just before the deadline whatever they are doing; the
  HiGHS child is killed *at* the deadline if it has not answered (the call keeps the last
  incumbent and bound it sent) or 0.8 s after Ctrl-C; no child is started when less time
  is left than a child takes to start here (measured by each child), and no solver at all
  once the deadline has passed; a HiGHS thread cannot be killed (large models go to the
  child for that reason): one that has not stopped :data:`.highs.HIGHS_LET_GO` seconds
  after the deadline (inside presolve's probing, say) is no longer waited for -- the call
  returns the incumbent and bound its callbacks recorded, and the thread runs on in the
  background until HiGHS next looks at its interrupt callback (the interpreter's exit
  waits for it at most :data:`.supervise.LET_GO_EXIT_WAIT` seconds); CP-SAT likewise,
  :data:`.cpsat.CPSAT_LET_GO` after the deadline, with the last solution its callback
  recorded (a time-limited search records each); CBC gets the time left less a tenth
  (:func:`.cbc.cbc_margin`), is asked to stop at the deadline and killed
  :func:`.cbc.cbc_kill_after` past it (within the budget's overrun) -- a killed CBC leaves
  no solution file, so its incumbent, named in the message, is lost;
* no process or temporary file outlives the call: CBC's temporary folder is always
  removed, and CBC and the HiGHS child are started with ``PR_SET_PDEATHSIG`` (Linux), so
  that they die with the process that started them even when it is killed.

HiGHS does not look at its interrupt callback inside presolve or a root cut-generation round
(a dense 60 x 3000 knapsack with a 2 s limit ran 6 s in a thread). A model of at least
:data:`HIGHS_PROCESS_MIN_SIZE` nonzeros plus variables is therefore solved in a child
process, whatever may stop it (its time limit, Ctrl-C at a terminal or in a notebook, a
batch's timeout); environment variable ``COALLOC_HIGHS_PROCESS=always|never`` overrides
the choice. The child
(:mod:`coalloc._shared.milp._highs_child`, which imports NumPy and highspy only: 0.2-0.6 s to
start) receives the model through a pipe and sends back every improving solution with the
bound, so that when it has to be killed the call still returns its last incumbent and bound.
Smaller models, such as the many per-start programs of :mod:`coalloc.collective`, stay in
the thread and pay no process start; their presolve and root take milliseconds. A model
solved to optimality gets the same answer either way (same solver, same options, same
arrays).

With ``progress`` (or the command line's default on a terminal) the incumbent, the bound and
the gap are shown over time through :class:`coalloc._shared.progress.SolveProgress`: HiGHS
reports them through its callbacks, CP-SAT through a solution and a bound callback, CBC
through its log, read while it runs.

Scaling and the check. The solvers' tolerances are absolute, so a model is rescaled by
powers of two when its magnitudes leave :data:`SANE_RANGE` (:func:`model_scaling`; inside
it the model reaches the solver untouched), and ``x`` and ``bound`` are given back in the
user's units. CP-SAT models are built by the family from integers (:func:`integer_scaling`
for decimal data; ``objective_scale`` gives the unit). A family passes ``check(x)``, its
verify on the original data returning the solution's objective (:class:`Rejected` when the
solution is not valid): a refused solution, a bound on the wrong side of the checked value,
or an "optimal" whose bound does not meet it, by more than the solver's tolerances explain,
gives ``error`` with a message, never "optimal".

HiGHS is driven through ``highspy`` (a core dependency). If ``highspy`` is missing,
:func:`scipy.optimize.milp` (the same solver, in the calling thread) is the fallback: it
honours the time limit of the solver only, cannot be interrupted, and says so in its
message.

The model and the options are two frozen records, :class:`MilpProblem` and
:class:`MilpOptions` (issue 37: ``run_milp(solver, solver_pkg, problem, options=,
check=)``; the old form with every field as a keyword is mapped onto them for the callers
that still use it).

The package: :mod:`.run` (:func:`run_milp`, :func:`import_solver`), :mod:`.options` (the two
records), one module per solver
(:mod:`.highs` with its child :mod:`._highs_child`, :mod:`.cbc`, :mod:`.cpsat`),
:mod:`.outcome` (:class:`MilpOutcome`, :class:`Rejected`, the check), :mod:`.scale`
(:func:`model_scaling`, :func:`integer_scaling`) and :mod:`.supervise`, the supervision of
solver threads and child processes, which the batch layer's process pools share (killing a
worker's process tree, temporary folders swept after a kill). Every public name is
importable from :mod:`coalloc._shared.milp` itself.
"""

from __future__ import annotations

import warnings
from typing import Any

from .cbc import cbc_command
from .cpsat import run_cpsat
from .highs import HIGHS_PROCESS_MIN_SIZE as HIGHS_PROCESS_MIN_SIZE
from .highs import quiet_highs, start_refused
from .options import MilpOptions, MilpProblem
from .outcome import SOLVERS, MilpOutcome, Rejected, remaining
from .run import import_solver, import_solver_until, preload, run_milp
from .scale import SANE_RANGE, Scaling, integer_scaling, model_scaling

__all__ = [
    "SOLVERS",
    "MilpOptions",
    "MilpOutcome",
    "MilpProblem",
    "Rejected",
    "SANE_RANGE",
    "Scaling",
    "integer_scaling",
    "model_scaling",
    "import_solver",
    "import_solver_until",
    "preload",
    "cbc_command",
    "remaining",
    "run_milp",
    "run_cpsat",
    "quiet_highs",
    "start_refused",
]


def __getattr__(name: str) -> Any:
    # Merge shim (issue 36): the names the runner had while ``backend`` also meant the
    # integer-programming solver. Remove once no family uses them.
    new = {"BACKENDS": "SOLVERS", "import_backend": "import_solver"}.get(name)
    if new is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    warnings.warn(f"coalloc._shared.milp.{name} is deprecated: use {new}", DeprecationWarning,
                  stacklevel=2)  # fmt: skip
    return globals()[new]
