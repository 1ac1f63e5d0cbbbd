"""Solving many instances at once: :func:`solve_many` and :func:`solve_many_iter`.

A batch is an iterable of problems of any family: a family's ``Instance`` (for example
:class:`coalloc.ctaap.Instance` or :class:`coalloc.taskmap.Instance`), the plain pair it
wraps (``(Request, Offer)``, ``(TaskGraph, ResourceGraph)``), or the path of an instance file
of a family (read in the worker; its ``"format"`` names the family). Each problem is solved by
its family's ``solve`` and, for ``coalloc <family> solve-batch``, checked by its ``verify``.

The instances are solved by a pool of threads (``executor="threads"``, the default: the
compiled kernels release the GIL), a pool of processes (``executor="processes"``),
serially (``executor="serial"``), or by any
:class:`concurrent.futures.Executor` the caller passes as ``executor=`` -- for example
``distributed.Client(...).get_executor()`` to spread a batch over the machines of a Dask
cluster (``pip install coalloc[dask]``).

Guarantees, whatever runs the batch:

- **Order.** Results come back in input order.
- **Determinism.** Instance ``i`` is solved with the seed :func:`instance_seed(seed, i)
  <instance_seed>`, which depends only on the batch seed and the position ``i`` -- never on
  the executor, ``n_jobs``, ``chunksize`` or the order in which workers finish -- so the
  same batch seed gives the same answers serially, on threads, on processes and on Dask.
- **Isolation.** An instance that fails (an unreadable file, a malformed instance, a
  parameter the solver rejects) gives a :class:`BatchError` record in its place; the other
  instances are unaffected.
- **Shared inputs cross once.** On processes and Dask, a model that several instances
  hold (the same pool, testbed, offer, resource graph object) is sent to each worker once,
  keyed by its digest, and kept there for the batch (:mod:`coalloc.batch.shipping`); a
  Dask chunk too large for a message goes straight to a worker, not through the scheduler.
- **Chunks by cost.** By default (``chunksize="auto"``) chunks hold about the same
  predicted solve time, from each family's cost model (:mod:`coalloc.batch.cost`)
  rescaled by the times the workers measure, so a batch mixing cheap and costly instances
  keeps every worker busy to the end. The guide: ``coalloc docs batch``.
- **Bounded memory.** The iterable is consumed lazily, with at most ``max_in_flight``
  chunks submitted and not yet returned, so a generator of a million instances is never
  materialised.

Timeouts and interrupts (``timeout=`` seconds per instance), per executor:

- ``executor="processes"`` (the pool solve_many creates): every instance runs under a
  cancellation scope (:mod:`coalloc._shared.interrupt`), so the compiled kernels and the
  families' long Python loops stop it with ``TimeoutError`` at their next poll (about
  50 ms), and a running MILP solve is stopped by its runner; an instance still running
  ``timeout + grace`` seconds after it started (a long step that does not poll) has its
  worker process killed and replaced, exactly as a crash: the other instances are solved
  again if they were lost with it.
  Either way the instance is a :class:`BatchError` with ``exc_type="TimeoutError"`` and a
  message saying so -- even when the family caught the timeout and returned a result (an
  exact method reports a solver failure as status ``"error"``): the instance's scope
  remembers that it fired, and that decides. A MILP solve stopped by its scope adds what
  the solver had found ("CBC was stopped with an incumbent of 42 and a bound of 56").
  Every worker keeps its temporary files (CBC's model files included)
  in a folder of its own that the batch removes, so a killed worker leaves none behind.
- threads, ``executor="serial"``, a caller's executor (a ``ProcessPoolExecutor``, Dask):
  cooperative only. The compiled kernels stop within about 50 ms of the deadline (plus one
  iteration of their outer loop), the families' long Python loops (the ``backend="numpy"``
  twins included) at their next check of :func:`coalloc._shared.interrupt.check`, and a
  chunk checks between its instances; a running MILP solve (HiGHS, CBC, CP-SAT) is stopped
  as for Ctrl-C within its wait loop's 0.1-0.2 s slice (plus the solver's own stop: a HiGHS
  child is killed after its grace) and then raises the timeout. Single steps that do not
  poll run on until they return: a thread cannot be killed.
- Ctrl-C (``KeyboardInterrupt`` in the calling thread): the chunks not started are
  cancelled, the running instances of a thread pool are cancelled through the same scope
  (they stop at the kernels' next poll), a process pool solve_many created has its workers
  terminated, and ``KeyboardInterrupt`` is raised.
"""

from __future__ import annotations

import warnings
from typing import Any

from .._shared.family import families
from .._shared.progress import ProgressBar
from .._shared.seeding import instance_seed
from .errors import BatchError
from .run import EXECUTORS as EXECUTORS
from .run import ON_ERROR as ON_ERROR
from .run import Instance as Instance
from .run import _batch_iter as _batch_iter  # the CLI's solve-batch
from .run import _BatchOptions as _BatchOptions
from .run import _check_item as _check_item
from .run import _executor_workers as _executor_workers
from .run import merge_options as merge_options
from .run import solve_many, solve_many_iter
from .warm import WorkerPool, pool
from .worker import read_problem as read_problem


def __getattr__(name: str) -> Any:
    if name == "FAMILY_INSTANCES":  # derived from the list of families, never written by hand
        return {name: spec.kinds[0] for name, spec in families().items()}
    if name == "BACKENDS":  # the executors' words, while backend= also named them
        warnings.warn("coalloc.batch.BACKENDS is deprecated: use coalloc.batch.EXECUTORS",
                      DeprecationWarning, stacklevel=2)  # fmt: skip
        return EXECUTORS
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = ["solve_many", "solve_many_iter", "BatchError", "instance_seed", "ProgressBar",
           "WorkerPool", "pool"]
