"""``coalloc.testbed.assign``: the registry of the testbed methods, one entry point for
every mapper, and :class:`Instance`. The methods themselves live in :mod:`.methods`."""

from __future__ import annotations

import functools
import gc
from typing import Any, Callable, Dict, Mapping, NamedTuple, Optional

from .._shared import interrupt
from .._shared.constraints import validate
from .._shared.docs import filled
from .._shared.family import FamilyInstance, renamed_keyword
from .._shared.params import check_method, timed_method
from .._shared.seeding import resolve_seed
from .anneal import ANNEAL_DEFAULTS as ANNEAL_DEFAULTS
from .constraints import PARAMS
from .methods import MAX_ANNEAL_MOVES as MAX_ANNEAL_MOVES
from .methods import MAX_THREADS as MAX_THREADS
from .methods import PORTFOLIO_EXACT_SECONDS as PORTFOLIO_EXACT_SECONDS
from .methods import PROVEN_FAILURES as PROVEN_FAILURES
from .methods import QUICK_ANNEAL as QUICK_ANNEAL
from .methods import anneal_method, assign_plus_method, exact_method
from .methods import policy_breach as policy_breach
from .methods import unmet_desires as unmet_desires
from .methods.assign_plus import PORTFOLIO_EXACT_NODES
from .methods.assign_plus import _best_fit_moves as _best_fit_moves
from .methods.assign_plus import _scarce_move as _scarce_move
from .model import PhysicalTopology, VirtualTopology
from .result import MappingResult, stopped_result
from .verify import VerifyReport, verify_mapping

# (MAX_ANNEAL_MOVES, MAX_THREADS, PORTFOLIO_EXACT_SECONDS, PROVEN_FAILURES, QUICK_ANNEAL,
# policy_breach, unmet_desires, _best_fit_moves, _scarce_move: imported under their names
# from .methods, where they moved, so that ``tb.solvers.<name>`` keeps working)
__all__ = ["assign", "solve", "METHODS", "DEFAULT_METHOD", "Instance"]


def _variant(scoring: str, name: str, fallback_default: bool = False
             ) -> Callable[..., MappingResult]:  # fmt: skip
    def run(
        top,
        ptop,
        *,
        seed=0,
        memory=None,
        exchange=True,
        available=None,
        trunk_used=None,
        backend="compiled",
        fallback=fallback_default,
        exact_nodes=PORTFOLIO_EXACT_NODES,
    ):
        return assign_plus_method(
            top,
            ptop,
            seed=seed,
            scoring=scoring,
            memory=memory,
            exchange=exchange,
            available=available,
            trunk_used=trunk_used,
            backend=backend,
            fallback=fallback,
            method_name=name,
            exact_nodes=exact_nodes,
        )

    run.__name__ = f"assign_plus[{name}]"
    run.__doc__ = f"assign+ with scoring variant .{scoring}."
    return run


def _collector_paused(run: Callable[..., MappingResult]) -> Callable[..., MappingResult]:
    """``run`` (a timed method) with Python's cyclic collector paused for the whole of a
    time-limited call (``time_limit`` given, or a deadline in force: a batch's timeout),
    resumed as it returns, when it was on; untimed calls as they were.

    The set-up's own pause (:func:`.problem._collection_deferred`) left the collection it
    deferred to the next allocation, inside the call: assign+ at T = 1 s on a fresh
    2,000-PC testbed, 24 calls beside two busy loops (``bench.shared.large_budgets
    --trace``, load 5-8), ended at 1.78, 2.55 and 3.29 s in 3 of them, a full collection
    of the process's heap (1.5-2.7 s) set off as the annealer's data was built after the
    set-up, which no poll can interrupt. Paused to the end, it comes after the call returns
    (the first allocation after it), not inside it. Resumed without an allocation after
    ``gc.enable()`` in this frame: a context manager's exit would set it off here."""

    @functools.wraps(run)
    def timed(*args: Any, **kwargs: Any) -> MappingResult:
        if not gc.isenabled() or (kwargs.get("time_limit") is None
                                  and interrupt.deadline_ns() < 0):  # fmt: skip
            return run(*args, **kwargs)
        gc.disable()
        try:
            return run(*args, **kwargs)
        finally:
            gc.enable()

    return timed


#: ``_timed(func, name)``: a method taking ``time_limit`` (the shared wrapper), the
#: collector paused through a timed call (:func:`_collector_paused`).
_timed = functools.partial(timed_method, stopped=stopped_result, exit=_collector_paused)


#: Registered mappers.
METHODS: Dict[str, Callable[..., MappingResult]] = {
    "assign+": _timed(_variant("1m", "assign+", True), "assign+"),
    "assign+.1": _timed(_variant("1", "assign+.1"), "assign+.1"),
    "assign+.1m": _timed(_variant("1m", "assign+.1m"), "assign+.1m"),
    "assign+.2m": _timed(_variant("2m", "assign+.2m"), "assign+.2m"),
    "anneal": _timed(anneal_method, "anneal"),
    # (the older spellings, backend= for the solver and the limit in seconds, as shims)
    "exact": renamed_keyword(
        renamed_keyword(exact_method, "backend", "solver"), "time_limit_s", "time_limit"
    ),
}
#: What :func:`assign` uses when no method is named.
DEFAULT_METHOD = "assign+"


def assign(top: Any, ptop: Any, method: str = DEFAULT_METHOD, *, seed: Optional[int] = 0,
           **params: Any) -> MappingResult:  # fmt: skip
    """Map a virtual topology onto a testbed.

    Parameters
    ----------
    top : VirtualTopology or path
        The experiment (a ``.top`` file path or what :func:`read_top` returns).
    ptop : PhysicalTopology or path
        The testbed (a ``.ptop`` file path or what :func:`read_ptop` returns).
    method : str, default "assign+"
        ``"assign+"`` (and its scoring variants ``"assign+.1"``, ``"assign+.1m"``,
        ``"assign+.2m"``), ``"anneal"`` (assign's simulated annealing) or ``"exact"``.
    seed : int, optional
        Seed of the annealer (assign+ and exact are deterministic).
    **params
        Method parameters (``scoring``/``memory``/``exchange`` for assign+, the schedule
        for anneal, ``solver`` and ``threads`` for exact; ``time_limit`` (seconds) for
        every method, which then returns its best mapping so far; ``available``: usable
        physical nodes).

    Returns
    -------
    MappingResult
        ``success``, ``mapping``, ``routes``, ``interswitch_bandwidth``; ``reason`` when
        no mapping was found.

    Raises
    ------
    ValueError, TypeError
        Unknown method or parameter, malformed input.

    Examples
    --------
    >>> from coalloc.testbed import assign, parse_top, parse_ptop
    >>> pt = parse_ptop("node sw switch:1\\nnode a pc:1\\nnode b pc:1\\n"
    ...                 "link la a sw 100 0 0\\nlink lb b sw 100 0 0")
    >>> r = assign(parse_top("node x pc\\nnode y pc\\nlink l x y 100 0 0"), pt)
    >>> r.success, sorted(r.mapping.values())
    (True, ['a', 'b'])
    """
    check_method(method, METHODS)
    validate(PARAMS[method], params)
    return METHODS[method](top, ptop, seed=resolve_seed(seed), **params)


solve = assign


def _explain(top: VirtualTopology, ptop: PhysicalTopology, *, time_limit: float) -> Any:
    """The family's "why not" (:func:`coalloc.testbed.explain.explain_mapping`)."""
    from .explain import explain_mapping

    return explain_mapping(top, ptop, time_limit=time_limit)


class _Parts(NamedTuple):
    top: VirtualTopology
    ptop: PhysicalTopology


@filled
class TestbedInstance(FamilyInstance, _Parts):
    """A testbed-mapping problem as one object (what :func:`coalloc.solve_many` takes).

    Parameters
    ----------
    %(testbed_topologies)s

    Examples
    --------
    >>> import coalloc.testbed as tb
    >>> ptop = tb.parse_ptop("node sw switch:1\\nnode a pc:1\\nnode b pc:1\\n"
    ...                      "link la a sw 100 0 0\\nlink lb b sw 100 0 0")
    >>> top = tb.parse_top("node x pc\\nnode y pc\\nlink l x y 100 0 0")
    >>> inst = tb.Instance(top, ptop)
    >>> result = inst.solve()
    >>> result.mapping, inst.verify(result).ok
    ({'x': 'a', 'y': 'b'}, True)
    """

    __slots__ = ()

    family = "testbed"
    format = "coalloc.testbed.instance"
    METHODS = METHODS
    PARAMS = PARAMS
    DEFAULT_METHOD = DEFAULT_METHOD
    SOLUTION_FIELD = "mapping"
    _solve_function = staticmethod(assign)
    _explain_function = staticmethod(
        lambda top, ptop, *, time_limit: _explain(top, ptop, time_limit=time_limit)
    )

    def _verify_solution(self, result: MappingResult) -> VerifyReport:
        return verify_mapping(self.top, self.ptop, result.mapping, result.routes,
                              claimed=result.interswitch_bandwidth)  # fmt: skip

    @classmethod
    def check_params(cls, method: Optional[str], params: Mapping[str, Any]) -> None:
        """Reject an unknown method or parameter names it does not take.

        Parameters
        ----------
        method : str or None
            A name of :data:`METHODS` (None: :data:`DEFAULT_METHOD`).
        params : mapping
            The keyword parameters a batch would pass to :meth:`solve`.

        Raises
        ------
        ValueError
            An unknown method, or an annealing parameter ``"anneal"`` does not take.
        TypeError
            A parameter name the method does not take.

        Examples
        --------
        >>> from coalloc.testbed import Instance
        >>> Instance.check_params("assign+", {})
        >>> Instance.check_params("assign+", {"speed": 3})
        Traceback (most recent call last):
        ...
        TypeError: method ... takes no parameter(s) ['speed']; ...
        """
        if check_method(method or DEFAULT_METHOD, METHODS) == "anneal":
            bad = set(params) - set(PARAMS["anneal"])  # its table names the schedule too
            if bad:
                raise ValueError(f"method 'anneal' takes no parameters {sorted(bad)}")
            validate(PARAMS["anneal"], params)
            return
        super().check_params(method, params)

    @staticmethod
    def _fields_from_dict(data: Any, *, source: str) -> tuple:
        from .io import instance_from_dict

        return instance_from_dict(data, source=source)


#: The name the family protocol gives every family's instance (``<family>.Instance``).
Instance = TestbedInstance
