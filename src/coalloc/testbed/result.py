"""The testbed's results: :class:`TestbedMappingResult`, which every mapper returns, and
:class:`TestbedSimulationResult`, which :func:`coalloc.testbed.simulate` returns (their older
names ``MappingResult`` and ``SimulationResult`` are aliases)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar, Dict, List, Optional

import numpy as np

from .._shared.docs import filled
from .._shared.result import Result, jsonable, stopped_fields

__all__ = [
    "TestbedMappingResult",
    "MappingResult",
    "TestbedSimulationResult",
    "SimulationResult",
    "stopped_result",
]


@filled
@dataclass(kw_only=True, eq=False)
class TestbedMappingResult(Result):
    """A testbed mapping (shared :class:`coalloc.Result` conventions).

    Parameters
    ----------
    mapping : dict of str to str or None
        Virtual node -> physical node (None when no mapping was found).
    routes : dict of str to (list of str or "trivial")
        Virtual link -> the physical links it crosses, in order, or ``"trivial"``.
    kinds : dict of str to str
        Virtual link -> ``trivial | direct | intraswitch | interswitch``.
    interswitch_bandwidth : float or None
        Bandwidth crossing trunks, summed over trunk hops (the objective).
    trunk_load : dict of str to float
        Physical trunk -> bandwidth routed over it.
    score : float or None
        The mapper's own score of the solution (assign's weights or assign+'s pclass score).
    reason : dict or None
        Why no mapping was returned, machine-readable: ``{"constraint": ..., ...}`` with
        e.g. ``"no_candidate"`` and ``"vnodes"``, ``"capacity"`` and the candidate list,
        ``"trunk_bandwidth"`` and the trunks, ``"interfaces"`` and the physical node.
    status, message, method, seed, params, timings, iterations, objective, bound, gap : object
        The shared result fields (:class:`coalloc.Result`); ``objective`` is the
        inter-switch bandwidth (set whenever there is a mapping; minimised: ``sense`` is
        ``"min"``). A mapping that sends nothing across switches is proven optimal (bound
        0); a method that ends by itself without a mapping or a proof says
        ``"no_solution"`` (``reason`` says why); ``"infeasible"`` needs a proof.
    %(result_explanation)s

    Examples
    --------
    >>> import coalloc.testbed as tb
    >>> ptop = tb.parse_ptop("node sw switch:1\\nnode a pc:1\\nnode b pc:1\\n"
    ...                      "link la a sw 100 0 0\\nlink lb b sw 100 0 0")
    >>> top = tb.parse_top("node x pc\\nnode y pc\\nlink l x y 100 0 0")
    >>> result = tb.assign(top, ptop, method="assign+")
    >>> result.status, result.mapping, result.routes
    ('optimal', {'x': 'a', 'y': 'b'}, {'l': ['la', 'lb']})
    >>> result.kinds, result.interswitch_bandwidth
    ({'l': 'intraswitch'}, 0.0)
    """

    mapping: Optional[Dict[str, str]] = None
    routes: Dict[str, Any] = field(default_factory=dict)
    kinds: Dict[str, str] = field(default_factory=dict)
    interswitch_bandwidth: Optional[float] = None
    trunk_load: Dict[str, float] = field(default_factory=dict)
    score: Optional[float] = None
    reason: Optional[Dict[str, Any]] = None

    #: The objective's direction (:func:`coalloc._shared.result.settle`): the inter-switch
    #: bandwidth is minimised.
    sense: ClassVar[str] = "min"

    def _holds_solution(self) -> bool:
        """A mapping is there (``time_limit`` with the stopped solver's incumbent)."""
        return self.mapping is not None

    def _payload(self) -> dict:
        return {
            "mapping": self.mapping,
            "routes": jsonable(self.routes),
            "kinds": dict(self.kinds),
            "interswitch_bandwidth": self.interswitch_bandwidth,
            "trunk_load": jsonable(self.trunk_load),
            "score": self.score,
            "reason": jsonable(self.reason),
        }

    def assign_text(self, top_names=None) -> str:
        """The mapping in the sections Emulab's ``assign`` prints (``Nodes:`` / ``Edges:``).

        Parameters
        ----------
        top_names : list of str, optional
            Virtual nodes to list, in order (default: those of the mapping); one missing
            from the mapping is printed ``unassigned``.

        Returns
        -------
        str
            The ``Nodes:`` ... ``End Nodes`` and ``Edges:`` ... ``End Edges`` sections.

        Examples
        --------
        >>> import coalloc.testbed as tb
        >>> ptop = tb.parse_ptop("node sw switch:1\\nnode a pc:1\\nnode b pc:1\\n"
        ...                      "link la a sw 100 0 0\\nlink lb b sw 100 0 0")
        >>> top = tb.parse_top("node x pc\\nnode y pc\\nlink l x y 100 0 0")
        >>> print(tb.assign(top, ptop, seed=0).assign_text())
        Nodes:
        x a
        y b
        End Nodes
        Edges:
        l ...
        End Edges
        """
        lines = ["Nodes:"]
        names = top_names if top_names is not None else list((self.mapping or {}).keys())
        for v in names:
            p = (self.mapping or {}).get(v)
            lines.append(f"{v} {p}" if p is not None else f"unassigned: {v}")
        lines.append("End Nodes")
        lines.append("Edges:")
        for e, r in self.routes.items():
            kind = self.kinds.get(e, "")
            if r == "trivial":
                lines.append(f"{e} trivial")
            else:
                lines.append(" ".join([e, kind, *r]))
        lines.append("End Edges")
        return "\n".join(lines)


#: The older name of :class:`TestbedMappingResult` (the task mapper's result is
#: :class:`coalloc.taskmap.TaskMappingResult`).
MappingResult = TestbedMappingResult


def stopped_result(top: Any, ptop: Any, **stop: Any) -> TestbedMappingResult:
    """A testbed mapper stopped at its ``time_limit`` before a mapping (``mapping`` None,
    status ``"time_limit"``; ``stop``: what :func:`coalloc._shared.result.stopped_fields`
    takes)."""
    return TestbedMappingResult(reason={"constraint": "time_limit"}, **stopped_fields(**stop))


@dataclass
class TestbedSimulationResult:
    """Per mapper: ``success`` (bool per experiment), ``isw`` (inter-switch bandwidth of
    each success, NaN on failure), ``isw_in_use`` (testbed-wide after each arrival),
    ``seconds`` (mapper time per experiment) and ``reasons`` of the failures.

    Parameters
    ----------
    methods : list of str
        The mappers replayed.
    arrivals : ndarray
        Arrival time of each experiment, in replay order.
    success, isw, isw_in_use, seconds : dict of str to ndarray
        Per mapper, one entry per experiment (see above).
    reasons : dict of str to list
        Per mapper, ``(experiment, reason)`` of each failure.

    Examples
    --------
    >>> import coalloc.testbed as tb
    >>> ptop = tb.parse_ptop("node sw switch:1\\nnode a pc:1\\nnode b pc:1\\n"
    ...                      "link la a sw 100 0 0\\nlink lb b sw 100 0 0")
    >>> top = tb.parse_top("node x pc\\nnode y pc\\nlink l x y 100 0 0")
    >>> workload = [(0.0, 10.0, top), (1.0, 10.0, top), (20.0, 10.0, top)]
    >>> sim = tb.simulate(ptop, workload, ["assign+"])
    >>> sim.success["assign+"].tolist(), sim.failures("assign+")
    ([True, False, True], 1)
    """

    methods: List[str]
    arrivals: np.ndarray
    success: Dict[str, np.ndarray] = field(default_factory=dict)
    isw: Dict[str, np.ndarray] = field(default_factory=dict)
    isw_in_use: Dict[str, np.ndarray] = field(default_factory=dict)
    seconds: Dict[str, np.ndarray] = field(default_factory=dict)
    reasons: Dict[str, List[Any]] = field(default_factory=dict)

    def failures(self, method: str) -> int:
        """Number of experiments ``method`` failed to map.

        Parameters
        ----------
        method : str
            One of :attr:`methods`.

        Returns
        -------
        int
            The count of unsuccessful experiments.

        Examples
        --------
        >>> import coalloc.testbed as tb
        >>> ptop = tb.parse_ptop("node sw switch:1\\nnode a pc:1\\nnode b pc:1\\n"
        ...                      "link la a sw 100 0 0\\nlink lb b sw 100 0 0")
        >>> top = tb.parse_top("node x pc\\nnode y pc\\nlink l x y 100 0 0")
        >>> sim = tb.simulate(ptop, [(0.0, 10.0, top), (1.0, 10.0, top)], ["assign+"])
        >>> sim.failures("assign+")
        1
        """
        return int((~self.success[method]).sum())

    def failure_rate(self, method: str, window: int = 1000) -> np.ndarray:
        """Failure rate over consecutive windows of ``window`` experiments.

        Parameters
        ----------
        method : str
            One of :attr:`methods`.
        window : int, default 1000
            Experiments per window (the last window may be shorter).

        Returns
        -------
        ndarray of float64
            The fraction of failures in each window, in replay order.

        Examples
        --------
        >>> import coalloc.testbed as tb
        >>> ptop = tb.parse_ptop("node sw switch:1\\nnode a pc:1\\nnode b pc:1\\n"
        ...                      "link la a sw 100 0 0\\nlink lb b sw 100 0 0")
        >>> top = tb.parse_top("node x pc\\nnode y pc\\nlink l x y 100 0 0")
        >>> workload = [(0.0, 10.0, top), (1.0, 10.0, top), (20.0, 10.0, top)]
        >>> tb.simulate(ptop, workload, ["assign+"]).failure_rate("assign+", window=2).tolist()
        [0.5, 0.0]
        """
        s = ~self.success[method]
        n = len(s) // window + (len(s) % window > 0)
        return np.array([s[i * window : (i + 1) * window].mean() for i in range(n)])


#: The older name of :class:`TestbedSimulationResult`.
SimulationResult = TestbedSimulationResult
