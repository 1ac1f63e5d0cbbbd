"""What :func:`~coalloc._shared.milp.run_milp` is given, as two small frozen records: the
model (:class:`MilpProblem`) and the common options (:class:`MilpOptions`).

SciPy's :func:`scipy.optimize.milp` takes five parameters (``c, integrality, bounds,
constraints, options``); the runner's entry point once took 22. The model and the options
are records so that :func:`run_milp` stays narrow, a family builds its options once and
passes them to every solve (``dataclasses.replace`` for a variation), and the re-solve of a
small optimum reuses both unchanged.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, fields
from typing import Any, Optional

import numpy as np


@dataclass(frozen=True)
class MilpProblem:
    """``min|max c x`` s.t. ``row_lb <= A x <= row_ub``, ``lb <= x <= ub``, integrality.

    Attributes
    ----------
    c : ndarray, shape (nv,)
        Objective coefficients, in the sense of ``sense``.
    A : scipy.sparse matrix, shape (rows, nv)
    row_lb, row_ub : ndarray, shape (rows,)
        Row bounds (``-inf`` / ``inf`` for one-sided rows).
    integrality : ndarray, shape (nv,)
        1 for integer variables, 0 for continuous ones.
    lb, ub : float or ndarray, default 0 and 1
        Variable bounds.
    sense : {"min", "max"}
    start : ndarray, shape (nv,), optional
        A feasible solution (in these variables) for HiGHS to start from, so that a stopped
        solve holds an incumbent at least as good; CBC and the SciPy fallback ignore it.
    """

    c: Any
    A: Any
    row_lb: Any
    row_ub: Any
    integrality: Any
    lb: Any = 0.0
    ub: Any = 1.0
    sense: str = "min"
    start: Optional[np.ndarray] = None

    def __post_init__(self) -> None:
        if self.sense not in ("min", "max"):
            raise ValueError(f"sense must be 'min' or 'max', got {self.sense!r}")


@dataclass(frozen=True)
class MilpOptions:
    """The options every solver of the runner takes.

    Attributes
    ----------
    time_limit : float, optional
        Wall-clock seconds for the call, counted from ``started``: converting the model
        counts, the solver gets the rest, and the call returns at that deadline with the
        incumbent found so far (:mod:`coalloc._shared.milp`, "Stopping guarantees").
    mip_gap : float, default 0
        Relative gap at which the solver may stop.
    threads : int, default 1
        Threads (CBC; CP-SAT's workers; HiGHS runs its own default).
    seed : int, optional
        CBC's ``randomCbcSeed``, HiGHS's ``random_seed``, CP-SAT's ``random_seed``.
    verbose : bool, default False
        Print the solver log.
    progress : bool, optional
        Show incumbent, bound and gap over time on standard error; None: the default set by
        :func:`coalloc._shared.progress.set_exact_progress` (the CLI), on a terminal only.
    started : float, optional
        ``time.perf_counter()`` from which ``time_limit`` counts (default: the call); a
        family passes the moment its own call began, so that building the model counts.
    name : str, default "coalloc"
        Name of the model (CBC).
    scale : bool, default True
        Rescale a badly scaled model first (:func:`~coalloc._shared.milp.model_scaling`).
    work_limit : float, optional
        A cap on the solver's work counted in its own deterministic units, not by a clock,
        so that where it ends is a function of the model and the options, not of the
        machine's speed or load: CP-SAT's ``max_deterministic_time`` (its "deterministic
        seconds"; deterministic with ``threads=1`` and a fixed ``seed``). HiGHS and CBC
        have no such count and do not take it (:func:`run_milp` ignores it). A search
        stopped by it keeps its incumbent and bound (status ``feasible``, not
        ``time_limit``, when no time limit was given).
    node_limit : int, optional
        A cap on the branch-and-bound nodes the solver explores (at least 1): a count, not a
        clock, so that where a capped solve ends, its answer and its bound, do not depend
        on the machine's speed or load. HiGHS's ``mip_max_nodes`` (in the worker thread and
        in the child process alike; SciPy's fallback: its ``node_limit``), CBC's
        ``-maxNodes``. CP-SAT counts no nodes: :func:`~coalloc._shared.milp.run_cpsat`
        refuses it with a ``ValueError`` (its count is ``work_limit``). A solve the cap
        ended is ``feasible`` with its incumbent (``optimal`` when its bound meets it) and
        ``no_solution`` without one, never ``time_limit``; a time limit reached first still
        gives ``time_limit``.
    highs_options : mapping, optional
        Further HiGHS options by HiGHS's own names (``{"mip_heuristic_run_rins": False}``),
        set after the runner's own, in the thread and in the child process; kept as a
        sorted tuple of pairs. CBC, CP-SAT and SciPy's fallback ignore them.
    """

    time_limit: Optional[float] = None
    mip_gap: float = 0.0
    threads: int = 1
    seed: Optional[int] = None
    verbose: bool = False
    progress: Optional[bool] = None
    started: Optional[float] = None
    name: str = "coalloc"
    scale: bool = True
    work_limit: Optional[float] = None
    node_limit: Optional[int] = None
    highs_options: Optional[Any] = None

    def __post_init__(self) -> None:
        limit = self.node_limit
        if limit is not None:
            if isinstance(limit, (bool, np.bool_)) or not isinstance(limit, (int, np.integer)):
                raise TypeError("node_limit must be an integer count of branch-and-bound "
                                f"nodes (at least 1) or None, got {limit!r}")  # fmt: skip
            if limit < 1:
                raise ValueError(f"node_limit must be at least 1 (branch-and-bound nodes), "
                                 f"got {int(limit)}")  # fmt: skip
            object.__setattr__(self, "node_limit", int(limit))
        extra = self.highs_options
        if extra is not None:
            try:
                pairs = dict(extra).items()
            except (TypeError, ValueError) as exc:
                raise TypeError("highs_options must be a mapping of HiGHS option names to "
                                f"values, got {extra!r}") from exc  # fmt: skip
            if not all(isinstance(k, str) for k, _ in pairs):
                raise TypeError(f"highs_options: option names must be strings, got {extra!r}")
            object.__setattr__(self, "highs_options", tuple(sorted(pairs)))

    @classmethod
    def until(cls, deadline: Optional[float], **kwargs: Any) -> MilpOptions:
        """Options whose time limit ends at ``deadline`` (a ``time.perf_counter()`` value,
        None: no limit), as the families hold their budget.

        Examples
        --------
        >>> MilpOptions.until(None, mip_gap=0.1).time_limit is None
        True
        """
        if deadline is None:
            return cls(**kwargs)
        now = time.perf_counter()
        return cls(time_limit=max(0.0, float(deadline) - now), started=now, **kwargs)

    @property
    def deadline(self) -> Optional[float]:
        """The instant (``time.perf_counter()``) the call must return by, None without a
        limit; counted from ``started`` (or from the moment this is first read, when the
        record was built without it: :func:`run_milp` fills ``started`` in)."""
        if self.time_limit is None:
            return None
        start = time.perf_counter() if self.started is None else float(self.started)
        return start + float(self.time_limit)


_PROBLEM_KEYS = frozenset(f.name for f in fields(MilpProblem))
_OPTION_KEYS = frozenset(f.name for f in fields(MilpOptions))


def from_keywords(c: Any, rows: tuple, legacy: dict) -> tuple:
    """The records of a call in the runner's old form, ``run_milp(solver, pkg, c, A, row_lb,
    row_ub, integrality=..., lb=..., time_limit=..., ...)``, kept for the callers that still
    use it (every keyword the old signature took, none other)."""
    if len(rows) != 3:
        raise TypeError("run_milp(solver, solver_pkg, c, A, row_lb, row_ub, ...): the old form "
                        f"takes A, row_lb and row_ub after c, got {len(rows)} more positional "
                        "arguments")  # fmt: skip
    unknown = set(legacy) - _PROBLEM_KEYS - _OPTION_KEYS
    if unknown:
        raise TypeError(f"run_milp() got unexpected keyword arguments {sorted(unknown)}")
    if "integrality" not in legacy:
        raise TypeError("run_milp() missing required keyword argument 'integrality'")
    problem = MilpProblem(c, *rows, **{k: v for k, v in legacy.items() if k in _PROBLEM_KEYS})
    options = MilpOptions(**{k: v for k, v in legacy.items() if k in _OPTION_KEYS})
    return problem, options
