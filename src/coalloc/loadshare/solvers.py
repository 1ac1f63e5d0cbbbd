"""``coalloc.loadshare.share`` / ``solve``: one entry point for every load-sharing method."""

from __future__ import annotations

import functools
import inspect
import time
from typing import Any, Callable, Dict, Mapping, NamedTuple, Optional

from .._shared.constraints import checked, validate
from .._shared.docs import filled
from .._shared.family import FamilyInstance, renamed_keyword
from .._shared.jsonio import InstanceError, check_envelope
from .._shared.params import check_keywords, check_method, timed_method
from .._shared.result import settle
from .._shared.schema import AnyValue, Int, ListOf, Num, Obj, Str, check
from .._shared.seeding import check_seed
from .baselines import best_fit, fcfs, fcfs_ff, round_robin
from .constraints import GAP_PARAMS, PARAMS
from .dmcf import dmcf_gga
from .exact import share_exact
from .gap import GapInstance, GapResult, solve_gap
from .model import LoadSharingProblem
from .result import ShareResult, stopped_result
from .verify import GapReport, PlacementReport, verify_gap, verify_placement

__all__ = [
    "share",
    "solve",
    "METHODS",
    "DEFAULT_METHOD",
    "Instance",
    "GapProblem",
    "GAP_METHODS",
    "gap_to_dict",
    "gap_from_dict",
]


def _exact(problem, *, seed=None, **params):
    return share_exact(problem, seed=check_seed(seed), **params)


_exact.__signature__ = inspect.signature(share_exact)  # type: ignore[attr-defined]


#: ``_timed(func, name)``: a method taking ``time_limit`` (the shared wrapper).
_timed = functools.partial(timed_method, stopped=stopped_result)


#: The portfolio runs the exact model after best fit decreasing only on models of at most
#: this many ``x_ij`` variables (nodes x jobs) and with at least ``_PORTFOLIO_MIN_LEFT`` of
#: its limit left: HiGHS needs its import and model first, and on larger models it rarely
#: improves on best fit decreasing within seconds.
_PORTFOLIO_MAX_VARIABLES, _PORTFOLIO_MIN_LEFT = 20_000, 0.5


@checked("coalloc.loadshare.constraints", "portfolio")
def portfolio(
    problem: LoadSharingProblem,
    *,
    coalition_size: Optional[int] = None,
    seed: Optional[int] = None,
    backend: str = "compiled",
    time_limit: Optional[float] = None,
    solver: str = "highs",
) -> ShareResult:
    """The default: best fit decreasing, then, with a time limit, the exact model.

    Best fit decreasing first (``bfd``, milliseconds; optimal whenever it meets the bound
    ``min(total load, total capacity)``). When it falls short of the bound and a
    ``time_limit`` leaves at least half of it (and at least ``_PORTFOLIO_MIN_LEFT`` s) on a
    model of at most ``_PORTFOLIO_MAX_VARIABLES`` variables, the exact model (``exact``,
    started from best fit decreasing's placement and never worse than it) gets the rest of
    the limit. Without a time limit the answer is best fit decreasing's: the exact model
    has no bound on its time. ``result.method`` is ``"portfolio"`` and
    ``params["answer_from"]`` names the method whose answer is returned (``"bfd"`` or
    ``"exact"``).

    Parameters
    ----------
    problem : LoadSharingProblem
    coalition_size : int, optional
        Accepted and ignored (no coalitions), as by ``bfd``.
    seed : int, optional
    backend : {"compiled", "numpy"}
        Best fit decreasing's kernel.
    time_limit : float, optional
        Seconds from the call.
    solver : {"highs", "cbc"}
        The exact model's solver.

    Returns
    -------
    ShareResult

    Examples
    --------
    >>> import coalloc.loadshare as ls
    >>> prob = ls.LoadSharingProblem([10, 10], [6, 6, 6], [0, 0, 1])
    >>> res = ls.share(prob, "portfolio", time_limit=30)
    >>> res.throughput, res.params["answer_from"], res.status  # 18 needs divisible jobs
    (16.0, 'exact', 'optimal')
    """
    t0 = time.perf_counter()
    first = METHODS["bfd"](problem, coalition_size=coalition_size, seed=seed, backend=backend,
                           time_limit=time_limit)  # fmt: skip
    first.method, first.params["answer_from"] = "portfolio", "bfd"
    if time_limit is None or not first.has_solution:
        return first
    if first.throughput >= problem.bound * (1 - 1e-12):
        return first
    left = t0 + float(time_limit) - time.perf_counter()
    small = problem.n_nodes * problem.n_jobs <= _PORTFOLIO_MAX_VARIABLES
    if not small or left < max(_PORTFOLIO_MIN_LEFT, 0.5 * float(time_limit)):
        return first
    second = share_exact(problem, solver=solver, time_limit=left, seed=seed)
    if second.throughput >= first.throughput:
        second.method, second.params["answer_from"] = "portfolio", "exact"
        second.message = "portfolio: best fit decreasing, then the exact model; " + second.message
        return second
    return first


#: Registered methods (name -> function of the problem).
METHODS: Dict[str, Callable[..., ShareResult]] = {
    "portfolio": portfolio,
    "bfd": _timed(best_fit, "bfd"),
    "dmcf-gga": _timed(dmcf_gga, "dmcf-gga"),
    "fcfs": _timed(fcfs, "fcfs"),
    "fcfs-ff": _timed(fcfs_ff, "fcfs-ff"),
    "round-robin": _timed(round_robin, "round-robin"),
    "exact": renamed_keyword(_exact, "backend", "solver"),  # solver="highs"|"cbc"
}
#: The method :func:`share` uses when none is named: the portfolio (best fit decreasing,
#: and with a time limit the exact model on small instances it does not solve).
DEFAULT_METHOD = "portfolio"


def share(
    problem: LoadSharingProblem,
    method: str = DEFAULT_METHOD,
    *,
    coalition_size: Optional[int] = None,
    seed: Optional[int] = 0,
    **params: Any,
) -> ShareResult:
    """Share the jobs of a grid among its nodes with any method of the family.

    Parameters
    ----------
    problem : LoadSharingProblem
    method : str, default "portfolio"
        ``"portfolio"`` (the default: best fit decreasing, then with a time limit the exact
        model where that helps), ``"bfd"`` (central best fit decreasing), ``"dmcf-gga"``
        (Hovey & Jung), ``"fcfs"``, ``"fcfs-ff"``, ``"round-robin"`` or ``"exact"``.
    coalition_size : int, optional
        Nodes per coalition for the coalition methods (default 23); ignored by ``fcfs``,
        ``bfd`` and ``exact``.
    seed : int, optional
    **params
        Parameters of the method (for example ``p``, ``th_c``, ``executor`` for DMCF-GGA;
        ``time_limit`` for exact).

    Returns
    -------
    ShareResult

    Raises
    ------
    ValueError, TypeError
        Unknown method or parameters.

    Examples
    --------
    >>> from coalloc.loadshare import generators, share
    >>> prob = generators.paper_setup(n_nodes=100, seed=3)
    >>> share(prob).ratio >= share(prob, "fcfs").ratio
    True
    """
    if not isinstance(problem, LoadSharingProblem):
        raise TypeError(f"problem must be a LoadSharingProblem, got {type(problem).__name__}")
    check_method(method, METHODS)
    seed = check_seed(seed)
    coalition_methods = ("dmcf-gga", "fcfs-ff", "round-robin", "bfd", "portfolio")
    if coalition_size is not None and method in coalition_methods:
        params["coalition_size"] = coalition_size
    # backend= is the exact method's deprecated name of solver= (its wrapper warns)
    names = set(params) - ({"backend"} if method == "exact" else set())
    check_keywords(METHODS[method], method, names, n_problem_args=1)
    validate(PARAMS[method], params)
    return settle(METHODS[method](problem, seed=seed, **params))


solve = share


def _explain_share(problem: LoadSharingProblem, *, time_limit: float) -> Any:
    """The family's "why not" (:func:`coalloc.loadshare.explain.explain_share`)."""
    from .explain import explain_share

    return explain_share(problem, time_limit=time_limit)


def _explain_gap(instance: GapInstance, *, time_limit: float) -> Any:
    """The GAP's "why not" (:func:`coalloc.loadshare.explain.explain_gap`)."""
    from .explain import explain_gap

    return explain_gap(instance, time_limit=time_limit)


class _Parts(NamedTuple):
    problem: LoadSharingProblem


@filled
class LoadShareInstance(FamilyInstance, _Parts):
    """A load-sharing problem as one object: what :func:`coalloc.solve_many` takes.

    Parameters
    ----------
    %(loadshare_problem)s

    Examples
    --------
    >>> import coalloc.loadshare as ls
    >>> problem = ls.LoadSharingProblem([10, 10, 10], [8, 7, 6, 3], [0, 0, 0, 1])
    >>> inst = ls.Instance(problem)
    >>> result = inst.solve()
    >>> result.throughput, inst.verify(result).ok
    (24.0, True)
    """

    __slots__ = ()

    family = "loadshare"
    format = "coalloc.loadshare.instance"
    METHODS = METHODS
    PARAMS = PARAMS
    DEFAULT_METHOD = DEFAULT_METHOD
    SOLUTION_FIELD = "placement"
    _explain_function = staticmethod(
        lambda problem, *, time_limit: _explain_share(problem, time_limit=time_limit)
    )

    def _meets_all(self, result: Any) -> bool:
        """All the load served in the second (nothing waits in a queue)."""
        total = float(self.problem.total_load)
        return bool(result.has_solution and result.throughput >= total * (1 - 1e-9))

    _solve_function = staticmethod(share)

    def _verify_solution(self, result: ShareResult) -> PlacementReport:
        return verify_placement(self.problem, result.placement, claimed=result.throughput)

    @staticmethod
    def _fields_from_dict(data: Any, *, source: str) -> tuple:
        from .io import problem_from_dict

        return (problem_from_dict(data, source=source),)


#: The name the family protocol gives every family's instance (``<family>.Instance``).
Instance = LoadShareInstance


# ------------------------------------------------------------------ the GAP as a problem kind


def _gap_method(method: str) -> Callable[..., GapResult]:
    run = functools.partial(solve_gap, method=method)
    sig = inspect.signature(solve_gap)
    run.__signature__ = sig.replace(  # type: ignore[attr-defined]
        parameters=[p for n, p in sig.parameters.items() if n != "method"]
    )
    return run


#: The generalized assignment problem's methods (name -> function of the instance).
GAP_METHODS: Dict[str, Callable[..., GapResult]] = {
    "portfolio": _gap_method("portfolio"),
    "heuristic": _gap_method("heuristic"),
    "exact": renamed_keyword(_gap_method("exact"), "backend", "solver"),  # solver=
}
#: The GAP method a :class:`GapProblem` runs when none is named.
GAP_DEFAULT_METHOD = "portfolio"
#: The ``"format"`` of a GAP instance file in JSON (a batch item, ``coalloc loadshare
#: solve-batch``); OR-Library files are read by :func:`coalloc.loadshare.read_gap`.
GAP_FORMAT = "coalloc.loadshare.gap"
GAP_VERSION = 1
GAP_SCHEMA = Obj(
    {
        "format": (AnyValue(), False),
        "version": (AnyValue(), False),
        "name": (Str(), False),
        "sense": (Str(("min", "max")), False),
        "cost": (ListOf(ListOf(Num())), True),
        "weight": (ListOf(ListOf(Int(0))), True),
        "capacity": (ListOf(Int(0)), True),
        "metadata": (AnyValue(), False),
    }
)


def gap_to_dict(instance: GapInstance, metadata: Any = None) -> dict:
    """The JSON-ready dictionary (format ``coalloc.loadshare.gap``) of a GAP instance.

    Parameters
    ----------
    instance : GapInstance
        The instance.
    metadata : object, optional
        Stored under ``"metadata"`` (JSON values).

    Returns
    -------
    dict
        ``format``, ``version``, ``name``, ``sense`` (when the instance states one: the
        objective is minimised, ``"min"``, or maximised, ``"max"``), ``cost``, ``weight``,
        ``capacity``.

    Examples
    --------
    >>> from coalloc.loadshare import GapInstance, gap_to_dict
    >>> gap_to_dict(GapInstance([[1, 9]], [[1, 1]], [2]))["weight"]
    [[1, 1]]
    """
    out = {"format": GAP_FORMAT, "version": GAP_VERSION, "name": instance.name,
           **({} if instance.sense is None else {"sense": instance.sense}),
           "cost": [[float(c) for c in row] for row in instance.cost.tolist()],
           "weight": [[int(w) for w in row] for row in instance.weight.tolist()],
           "capacity": [int(c) for c in instance.capacity.tolist()]}  # fmt: skip
    if metadata is not None:
        out["metadata"] = metadata
    return out


def gap_from_dict(data: Any, *, source: str = "<dict>") -> GapInstance:
    """A GAP instance from a parsed ``coalloc.loadshare.gap`` dictionary.

    Parameters
    ----------
    data : dict
        The parsed JSON.
    source : str, default "<dict>"
        Named in error messages.

    Returns
    -------
    GapInstance
        The instance.

    Raises
    ------
    InstanceError
        ``"<source>: <field path>: <what was expected>"`` for a malformed document.

    Examples
    --------
    >>> from coalloc.loadshare import GapInstance, gap_from_dict, gap_to_dict
    >>> gap_from_dict(gap_to_dict(GapInstance([[1, 9], [9, 1]], [[1, 1], [1, 1]], [1, 1]))).m
    2
    """
    check_envelope(data, GAP_FORMAT, GAP_VERSION, source)
    check(data, GAP_SCHEMA, source)
    try:
        return GapInstance(data["cost"], data["weight"], data["capacity"], data.get("name", ""),
                           sense=data.get("sense"))  # fmt: skip
    except (TypeError, ValueError) as exc:
        if isinstance(exc, InstanceError):
            raise
        raise InstanceError(f"{source}: {exc}") from None


class _GapParts(NamedTuple):
    instance: GapInstance


class GapProblem(FamilyInstance, _GapParts):
    """A generalized assignment problem as one object of the family protocol.

    What :func:`coalloc.solve_many` and ``coalloc loadshare solve-batch`` take for the GAP
    (a bare :class:`GapInstance` is coerced into one): ``solve`` runs :func:`solve_gap`
    (methods ``"portfolio"``, the default, ``"heuristic"`` and ``"exact"``; ``sense``,
    ``assign_all``, ``time_limit`` ... as parameters), ``verify`` runs :func:`verify_gap` with the
    result's own ``sense`` and ``assign_all`` and checks its claimed objective.

    Parameters
    ----------
    instance : GapInstance
        The agents, items, costs, weights and capacities.

    Examples
    --------
    >>> import coalloc.loadshare as ls
    >>> problem = ls.GapProblem(ls.GapInstance([[1, 9], [9, 1]], [[1, 1], [1, 1]], [1, 1]))
    >>> result = problem.solve("exact")
    >>> result.objective, problem.verify(result).ok
    (2.0, True)
    """

    __slots__ = ()

    family = "loadshare"
    kind = "gap"
    format = GAP_FORMAT
    METHODS = GAP_METHODS
    PARAMS = GAP_PARAMS
    DEFAULT_METHOD = GAP_DEFAULT_METHOD
    SOLUTION_FIELD = "assignment"

    _explain_function = staticmethod(_explain_gap)

    @staticmethod
    def _solve_function(instance: GapInstance, method: str, *, seed: Optional[int] = 0,
                        **params: Any) -> GapResult:  # fmt: skip
        validate(GAP_PARAMS[check_method(method, GAP_METHODS)], params)
        return GAP_METHODS[method](instance, seed=seed, **params)

    def _verify_solution(self, result: GapResult) -> GapReport:
        return verify_gap(self.instance, result.assignment, assign_all=result.assign_all,
                          claimed=result.objective)  # fmt: skip

    @classmethod
    def check_params(cls, method: Optional[str], params: Mapping[str, Any]) -> None:
        """Reject an unknown GAP method or parameter names :func:`solve_gap` does not take.

        Parameters
        ----------
        method : str or None
            ``"heuristic"`` or ``"exact"`` (None: ``"heuristic"``).
        params : mapping
            The keyword parameters a batch would pass to :meth:`solve`.

        Raises
        ------
        ValueError
            An unknown method, or a value the method's table refuses.
        TypeError
            A parameter name :func:`solve_gap` does not take.

        Examples
        --------
        >>> from coalloc.loadshare import GapProblem
        >>> GapProblem.check_params("exact", {"sense": "max"})
        >>> GapProblem.check_params("exact", {"speed": 3})
        Traceback (most recent call last):
        ...
        TypeError: method ... takes no parameter(s) ['speed']; ...
        """
        method = check_method(method or cls.DEFAULT_METHOD, cls.METHODS)
        check_keywords(cls.METHODS[method], method, set(params), n_problem_args=1)
        validate(cls.PARAMS[method], params)

    @staticmethod
    def _fields_from_dict(data: Any, *, source: str) -> tuple:
        return (gap_from_dict(data, source=source),)
