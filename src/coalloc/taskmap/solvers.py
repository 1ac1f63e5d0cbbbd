"""``coalloc.taskmap.solve``: one entry point for every mapping method, and :class:`Instance`."""

from __future__ import annotations

import inspect
from typing import Any, Callable, Dict, NamedTuple, Optional

from .._shared.params import check_keywords, check_method
from .._shared.seeding import check_seed
from .exact import solve_exact_mapping
from .mapper import METHODS as VARIANTS
from .mapper import MappingResult, map_tasks
from .model import ResourceGraph, TaskGraph
from .verify import MappingReport, verify_mapping

__all__ = ["solve", "METHODS", "DEFAULT_METHOD", "Instance"]


def _variant(name: str) -> Callable[..., MappingResult]:
    def run(task_graph, resource_graph, *, seed=0, **params):
        return map_tasks(task_graph, resource_graph, method=name, seed=seed, **params)

    run.__signature__ = _signature_without_method()  # type: ignore[attr-defined]
    run.__name__ = f"map_tasks[{name}]"
    run.__doc__ = f":func:`map_tasks` with ``method={name!r}``."
    return run


def _signature_without_method() -> inspect.Signature:
    sig = inspect.signature(map_tasks)
    return sig.replace(parameters=[p for n, p in sig.parameters.items() if n != "method"])


def _exact(task_graph, resource_graph, *, seed=None, **params):
    if seed is not None:  # the MILP back-ends here are deterministic and take no seed
        check_seed(seed)
    return solve_exact_mapping(task_graph, resource_graph, **params)


_exact.__signature__ = inspect.signature(solve_exact_mapping)  # type: ignore[attr-defined]

#: Registered methods: the four variants of section 5.2 and the exact MILP.
METHODS: Dict[str, Callable[..., MappingResult]] = {
    **{name: _variant(name) for name in VARIANTS},
    "exact": _exact,
}
#: The method :func:`solve` uses when none is named.
DEFAULT_METHOD = "open+improve"


def solve(
    task_graph: TaskGraph,
    resource_graph: ResourceGraph,
    method: str = DEFAULT_METHOD,
    *,
    seed: Optional[int] = 0,
    **params: Any,
) -> MappingResult:
    """Map ``task_graph`` onto ``resource_graph`` with any method of the family.

    Parameters
    ----------
    task_graph : TaskGraph
    resource_graph : ResourceGraph
    method : str, default "open+improve"
        ``"open+improve"``, ``"open"``, ``"base+improve"``, ``"base"`` (the heuristics of
        Taura & Chien, :func:`map_tasks`) or ``"exact"`` (:func:`solve_exact_mapping`).
    seed : int, optional
        Seed of the clustering (the exact method is deterministic).
    **params
        Parameters of the method.

    Returns
    -------
    MappingResult
        :class:`ExactMappingResult` for ``"exact"``.

    Examples
    --------
    >>> import coalloc.taskmap as tm
    >>> tasks, res = tm.generators.section51(n_tasks=12, seed=1)  # doctest: +SKIP
    >>> tm.solve(tasks, res, seed=0).max_occupancy > 0  # doctest: +SKIP
    True
    """
    check_method(method, METHODS)
    return METHODS[method](task_graph, resource_graph, seed=check_seed(seed), **params)


class Instance(NamedTuple):
    """A task-mapping problem as one object: what :func:`coalloc.solve_many` takes.

    A plain ``(task_graph, resource_graph)`` pair with the family's calls attached.

    Parameters
    ----------
    task_graph : TaskGraph
        The tasks.
    resource_graph : ResourceGraph
        The resources.

    Examples
    --------
    >>> import coalloc.taskmap as tm
    >>> tasks = tm.TaskGraph([1.0, 2.0, 1.5], [[0, 4, 0], [4, 0, 1], [0, 1, 0]])
    >>> res = tm.ResourceGraph.from_edges([0, 3.0, 5.0], [[0, 1], [0, 2]], [50.0, 50.0])
    >>> inst = tm.Instance(tasks, res)
    >>> result = inst.solve("open", seed=0)
    >>> result.max_occupancy, inst.verify(result).ok
    (0.6, True)
    """

    task_graph: TaskGraph
    resource_graph: ResourceGraph

    family = "taskmap"
    methods = tuple(METHODS)
    format = "coalloc.taskmap.instance"

    def solve(
        self, method: Optional[str] = None, *, seed: Optional[int] = 0, **params: Any
    ) -> MappingResult:
        """:func:`solve` on this instance (``method=None``: :data:`DEFAULT_METHOD`).

        Parameters
        ----------
        method : str, optional
            A name of :data:`METHODS`; None runs :data:`DEFAULT_METHOD`.
        seed : int or None, default 0
            Seed of every random choice (the family's seed policy).
        **params
            The method's own parameters (see :func:`solve`).

        Returns
        -------
        MappingResult
            What :func:`solve` returns for this instance.

        Examples
        --------
        >>> import coalloc.taskmap as tm
        >>> tasks = tm.TaskGraph([1.0, 2.0, 1.5], [[0, 4, 0], [4, 0, 1], [0, 1, 0]])
        >>> res = tm.ResourceGraph.from_edges([0, 3.0, 5.0], [[0, 1], [0, 2]], [50.0, 50.0])
        >>> inst = tm.Instance(tasks, res)
        >>> inst.solve("open", seed=0).mapping.tolist()
        [2, 2, 1]
        """
        return solve(
            self.task_graph, self.resource_graph, method or DEFAULT_METHOD, seed=seed, **params
        )

    def verify(self, result: MappingResult) -> MappingReport:
        """:func:`verify_mapping` of a result, checking its claimed occupancy.

        Parameters
        ----------
        result : MappingResult
            A result of :meth:`solve` (or of :func:`solve`) on this instance.

        Returns
        -------
        MappingReport
            The independent verification; ``report.ok`` is True for a valid result.

        Examples
        --------
        >>> import coalloc.taskmap as tm
        >>> tasks = tm.TaskGraph([1.0, 2.0, 1.5], [[0, 4, 0], [4, 0, 1], [0, 1, 0]])
        >>> res = tm.ResourceGraph.from_edges([0, 3.0, 5.0], [[0, 1], [0, 2]], [50.0, 50.0])
        >>> inst = tm.Instance(tasks, res)
        >>> inst.verify(inst.solve(seed=0)).ok
        True
        """
        if result.mapping is None:
            raise ValueError(f"the result has no mapping (status {result.status!r})")
        return verify_mapping(
            self.task_graph, self.resource_graph, result.mapping, claimed=result.max_occupancy
        )

    @staticmethod
    def check_params(method: Optional[str], params: dict) -> None:
        """Reject an unknown method or parameter names it does not take, before any work.

        Parameters
        ----------
        method : str or None
            A name of :data:`METHODS` (None: :data:`DEFAULT_METHOD`).
        params : dict
            The keyword parameters a batch would pass to :meth:`solve`.

        Raises
        ------
        ValueError
            An unknown method.
        TypeError
            A parameter name the method does not take.

        Examples
        --------
        >>> from coalloc.taskmap import Instance
        >>> Instance.check_params("open", {"processor_order": "index"})
        >>> Instance.check_params("open", {"speed": 3})
        Traceback (most recent call last):
        ...
        TypeError: method ... takes no parameter(s) ['speed']; ...
        """
        method = check_method(method or DEFAULT_METHOD, METHODS)
        check_keywords(METHODS[method], method, set(params))

    @classmethod
    def from_dict(cls, data: Any, *, source: str = "<dict>") -> Instance:
        """An instance from a parsed ``coalloc.taskmap.instance`` file.

        Parameters
        ----------
        data : dict
            The parsed JSON of a ``coalloc.taskmap.instance`` file.
        source : str, default "<dict>"
            Named in error messages.

        Returns
        -------
        Instance
            The instance the file describes.

        Raises
        ------
        InstanceError
            ``"<source>: <field path>: <what was expected>"`` for a malformed document.

        Examples
        --------
        >>> import coalloc.taskmap as tm
        >>> tasks = tm.TaskGraph([1.0, 2.0, 1.5], [[0, 4, 0], [4, 0, 1], [0, 1, 0]])
        >>> res = tm.ResourceGraph.from_edges([0, 3.0, 5.0], [[0, 1], [0, 2]], [50.0, 50.0])
        >>> inst = tm.Instance(tasks, res)
        >>> same = tm.Instance.from_dict(tm.io.instance_to_dict(tasks, res))
        >>> same.task_graph.n, same.resource_graph.n_processors
        (3, 2)
        """
        from .io import instance_from_dict

        return cls(*instance_from_dict(data, source=source))
