"""``coalloc.loadshare.share`` / ``solve``: one entry point for every load-sharing method."""

from __future__ import annotations

import inspect
from typing import Any, Callable, Dict, NamedTuple, Optional

from .._shared.params import check_keywords, check_method
from .._shared.seeding import check_seed
from .dmcf import best_fit, dmcf_gga, fcfs, fcfs_ff, round_robin
from .exact import share_exact
from .model import LoadSharingProblem
from .result import ShareResult
from .verify import PlacementReport, verify_placement

__all__ = ["share", "solve", "METHODS", "DEFAULT_METHOD", "Instance"]


def _exact(problem, *, seed=None, **params):
    return share_exact(problem, seed=check_seed(seed), **params)


_exact.__signature__ = inspect.signature(share_exact)  # type: ignore[attr-defined]

#: Registered methods (name -> function of the problem).
METHODS: Dict[str, Callable[..., ShareResult]] = {
    "bfd": best_fit,
    "dmcf-gga": dmcf_gga,
    "fcfs": fcfs,
    "fcfs-ff": fcfs_ff,
    "round-robin": round_robin,
    "exact": _exact,
}
#: The method :func:`share` uses when none is named: the central best-fit balancer.
DEFAULT_METHOD = "bfd"


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
    method : str, default "bfd"
        ``"bfd"`` (central best fit decreasing, the default), ``"dmcf-gga"`` (Hovey & Jung),
        ``"fcfs"``, ``"fcfs-ff"``, ``"round-robin"`` or ``"exact"``.
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
    if coalition_size is not None and method in ("dmcf-gga", "fcfs-ff", "round-robin", "bfd"):
        params["coalition_size"] = coalition_size
    check_keywords(METHODS[method], method, set(params), n_problem_args=1)
    return METHODS[method](problem, seed=seed, **params)


solve = share


class Instance(NamedTuple):
    """A load-sharing problem as one object: what :func:`coalloc.solve_many` takes.

    Parameters
    ----------
    problem : LoadSharingProblem
        The grid and its jobs.

    Examples
    --------
    >>> import coalloc.loadshare as ls
    >>> problem = ls.LoadSharingProblem([10, 10, 10], [8, 7, 6, 3], [0, 0, 0, 1])
    >>> inst = ls.Instance(problem)
    >>> result = inst.solve()
    >>> result.throughput, inst.verify(result).ok
    (24.0, True)
    """

    problem: LoadSharingProblem

    family = "loadshare"
    methods = tuple(METHODS)
    format = "coalloc.loadshare.instance"

    def solve(self, method: Optional[str] = None, *, seed: Optional[int] = 0,
              **params: Any) -> ShareResult:  # fmt: skip
        """:func:`share` on this instance (``method=None``: :data:`DEFAULT_METHOD`).

        Parameters
        ----------
        method : str, optional
            A name of :data:`METHODS`; None runs :data:`DEFAULT_METHOD`.
        seed : int or None, default 0
            Seed of every random choice (the family's seed policy).
        **params
            The method's own parameters (see :func:`share`).

        Returns
        -------
        ShareResult
            What :func:`share` returns for this instance.

        Examples
        --------
        >>> import coalloc.loadshare as ls
        >>> inst = ls.Instance(ls.LoadSharingProblem([10, 10, 10], [8, 7, 6, 3], [0, 0, 0, 1]))
        >>> inst.solve("fcfs").throughput
        13.0
        """
        return share(self.problem, method or DEFAULT_METHOD, seed=seed, **params)

    def verify(self, result: ShareResult) -> PlacementReport:
        """:func:`verify_placement` of a result, checking its claimed throughput.

        Parameters
        ----------
        result : ShareResult
            A result of :meth:`solve` (or of :func:`share`) on this instance.

        Returns
        -------
        PlacementReport
            The independent verification; ``report.ok`` is True for a valid result.

        Examples
        --------
        >>> import coalloc.loadshare as ls
        >>> inst = ls.Instance(ls.LoadSharingProblem([10, 10, 10], [8, 7, 6, 3], [0, 0, 0, 1]))
        >>> inst.verify(inst.solve()).ok
        True
        """
        return verify_placement(self.problem, result.placement, claimed=result.throughput)

    @staticmethod
    def check_params(method: Optional[str], params: dict) -> None:
        """Reject an unknown method or parameter names it does not take.

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
        >>> from coalloc.loadshare import Instance
        >>> Instance.check_params("dmcf-gga", {"th_c": 0.1})
        >>> Instance.check_params("dmcf-gga", {"speed": 3})
        Traceback (most recent call last):
        ...
        TypeError: method ... takes no parameter(s) ['speed']; ...
        """
        method = check_method(method or DEFAULT_METHOD, METHODS)
        check_keywords(METHODS[method], method, set(params), n_problem_args=1)

    @classmethod
    def from_dict(cls, data: Any, *, source: str = "<dict>") -> Instance:
        """An instance from a parsed ``coalloc.loadshare.instance`` file.

        Parameters
        ----------
        data : dict
            The parsed JSON of a ``coalloc.loadshare.instance`` file.
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
        >>> import coalloc.loadshare as ls
        >>> inst = ls.Instance(ls.LoadSharingProblem([10, 10, 10], [8, 7, 6, 3], [0, 0, 0, 1]))
        >>> same = ls.Instance.from_dict(ls.io.problem_to_dict(inst.problem))
        >>> same.problem.n_nodes, same.problem.n_jobs
        (3, 4)
        """
        from .io import problem_from_dict

        return cls(problem_from_dict(data, source=source))
