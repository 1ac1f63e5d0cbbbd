"""The load-sharing baselines of Hovey & Jung's section 4.2.3 and the default's balancer.

``fcfs`` (no sharing), ``fcfs-ff`` (coalitions formed first come first served, first fit
inside), ``round-robin`` (nodes dealt to coalitions in turn, first fit inside) and ``bfd``
(the default's first step: a central best-fit-decreasing balancer, no coalitions). DMCF-GGA
itself is in :mod:`coalloc.loadshare.dmcf`.
"""

from __future__ import annotations

import time
from typing import Optional

import numpy as np

from .._shared import interrupt
from .._shared.constraints import checked
from .._shared.params import offer_incumbent
from .._shared.seeding import check_seed
from .dmcf import _kernels, first_fit, initial_coalitions
from .model import LoadSharingProblem, throughput_of
from .result import ShareResult, offer_origins, placement_result

__all__ = ["fcfs", "fcfs_ff", "round_robin", "best_fit"]


def fcfs(problem: LoadSharingProblem, *, seed: Optional[int] = None) -> ShareResult:
    """No sharing: every job runs where it arrived (Condor's first come first served).

    Parameters
    ----------
    problem : LoadSharingProblem
        The grid and its jobs.
    seed : int, optional
        Recorded in the result (nothing is drawn at random).

    Returns
    -------
    ShareResult
        ``placement`` equal to the jobs' origins.

    Examples
    --------
    >>> from coalloc.loadshare import LoadSharingProblem, fcfs
    >>> fcfs(LoadSharingProblem([10, 10], [15, 1], [0, 1])).throughput
    11.0
    """
    t0 = time.perf_counter()
    return placement_result(problem, "fcfs", problem.job_origin.copy(), t0, check_seed(seed),
                            {})


def _coalition_ff(problem: LoadSharingProblem, method: str, how: str, coalition_size: int,
                  seed: Optional[int], backend: str, **extra: str) -> ShareResult:  # fmt: skip
    """First fit inside coalitions formed ``how`` (fcfs-ff and round robin)."""
    t0 = time.perf_counter()
    seed = check_seed(seed)
    params = {"coalition_size": int(coalition_size), "backend": backend, **extra}
    offer_origins(problem, method, seed, t0, params)
    coal = initial_coalitions(problem, coalition_size, how)
    interrupt.check()  # a deadline that passed while the coalitions were formed
    placement, _, probes, moved = first_fit(problem, coal, backend=backend)
    return placement_result(problem, method, placement, t0, seed, params, coal,
                            {"ff_probes": probes, "jobs_moved": moved})


@checked("coalloc.loadshare.constraints", "fcfs-ff")
def fcfs_ff(problem: LoadSharingProblem, *, coalition_size: int = 23, seed: Optional[int] = None,
            backend: str = "compiled") -> ShareResult:  # fmt: skip
    """Coalitions formed first come first served (report order, consecutive), first fit inside.

    Parameters
    ----------
    problem : LoadSharingProblem
        The grid and its jobs.
    coalition_size : int
        Nodes per coalition; ``ceil(n / coalition_size)`` coalitions.
    seed : int, optional
        Recorded in the result (the method draws nothing at random).
    backend : {"compiled", "numpy"}
        The compiled first fit or its NumPy twin.

    Returns
    -------
    ShareResult
        The placement, its throughput and the coalitions.

    Raises
    ------
    ValueError, TypeError
        A bad ``coalition_size``, ``seed`` or ``backend``.

    Examples
    --------
    >>> from coalloc.loadshare import generators, fcfs_ff
    >>> prob = generators.paper_setup(n_nodes=100, seed=1)
    >>> fcfs_ff(prob).throughput >= prob.fcfs_throughput
    True
    """
    return _coalition_ff(problem, "fcfs-ff", "arrival", coalition_size, seed, backend)


@checked("coalloc.loadshare.constraints", "round-robin")
def round_robin(problem: LoadSharingProblem, *, coalition_size: int = 23,
                seed: Optional[int] = None, backend: str = "compiled",
                deal: str = "ring") -> ShareResult:  # fmt: skip
    """Round robin (the paper's RR baseline): coalitions formed by a pass round the ring of
    nodes, first fit inside.

    The paper does not say how round robin forms coalitions. ``deal="ring"`` (the default,
    which reproduces the paper's Fig. 8b within 3 %) passes a token once round the ring of
    nodes in node-id order, where the nodes of an administrative domain are consecutive; the
    coalition being formed takes every node the token visits until it holds
    ``coalition_size`` (the last holds the rest). It does not depend on when
    jobs arrive. ``deal="turn"`` deals the nodes to the coalitions in turn instead (node ``i``
    to coalition ``i mod k``); ``docs/loadshare.md`` tabulates both.

    Parameters
    ----------
    problem : LoadSharingProblem
        The grid and its jobs.
    coalition_size : int
        Nodes per coalition; ``ceil(n / coalition_size)`` coalitions.
    seed : int, optional
        Recorded in the result (the method draws nothing at random).
    backend : {"compiled", "numpy"}
        The compiled first fit or its NumPy twin.
    deal : {"ring", "turn"}, default "ring"
        How the nodes are dealt to the coalitions (above).

    Returns
    -------
    ShareResult
        The placement, its throughput and the coalitions.

    Raises
    ------
    ValueError, TypeError
        A bad ``coalition_size``, ``seed``, ``backend`` or ``deal``.

    Examples
    --------
    >>> from coalloc.loadshare import generators, round_robin
    >>> prob = generators.paper_setup(n_nodes=100, seed=1)
    >>> round_robin(prob).throughput <= prob.bound
    True
    """
    how = "ring" if deal == "ring" else "round-robin"
    return _coalition_ff(problem, "round-robin", how, coalition_size, seed, backend, deal=deal)


@checked("coalloc.loadshare.constraints", "bfd")
def best_fit(problem: LoadSharingProblem, *, coalition_size: Optional[int] = None,
             seed: Optional[int] = None, backend: str = "compiled") -> ShareResult:  # fmt: skip
    """The default method: keep what fits at the origin, best fit decreasing for the rest.

    Central (no coalitions; ``coalition_size`` is accepted and ignored). Every node keeps
    the jobs that fit whole in its capacity, in arrival order; the other jobs, largest
    first, go to the node with the least remaining capacity that holds them whole, else to
    the node with the most remaining capacity (their excess queues there). It reaches the
    bound whenever the pooled jobs can fill every node or all fit. When it falls short of
    the bound, the same best fit without keeping any job at its origin is tried too and the
    better placement returned.

    Parameters
    ----------
    problem : LoadSharingProblem
        The grid and its jobs.
    coalition_size : int, optional
        Accepted for a uniform call and ignored (checked to be a positive integer).
    seed : int, optional
        Recorded in the result (nothing is drawn at random).
    backend : {"compiled", "numpy"}
        The compiled best fit or its NumPy twin.

    Returns
    -------
    ShareResult
        The placement and its throughput.

    Raises
    ------
    ValueError, TypeError
        A bad ``coalition_size``, ``seed`` or ``backend``.

    Examples
    --------
    >>> from coalloc.loadshare import generators, best_fit
    >>> prob = generators.paper_setup(n_nodes=100, seed=1)
    >>> best_fit(prob).throughput >= 0.999 * prob.bound
    True
    """
    t0 = time.perf_counter()
    kern = _kernels(backend)
    seed = check_seed(seed)
    offer_origins(problem, "bfd", seed, t0, {"backend": backend})
    order = problem.size_order()
    interrupt.check()  # a deadline that passed at the sort's last poll
    placement = np.empty(problem.n_jobs, dtype=np.int64)
    moved = kern.best_fit_decreasing(problem.capacity, problem.job_size, problem.job_origin,
                                     order, placement, True,
                                     interrupt.kernel_deadline())  # fmt: skip
    first = (placement.copy(), int(moved))
    offer_incumbent(lambda: placement_result(problem, "bfd", first[0].copy(), t0, seed,
                                             {"backend": backend},
                                             iterations={"jobs_moved": first[1]}))  # fmt: skip
    if throughput_of(problem, placement) < problem.bound * (1 - 1e-12):
        other = np.empty(problem.n_jobs, dtype=np.int64)
        moved2 = kern.best_fit_decreasing(problem.capacity, problem.job_size,
                                          problem.job_origin, order, other, False,
                                          interrupt.kernel_deadline())  # fmt: skip
        if throughput_of(problem, other) > throughput_of(problem, placement):
            placement, moved = other, moved2
    return placement_result(problem, "bfd", placement, t0, seed, {"backend": backend},
                            iterations={"jobs_moved": int(moved)})
