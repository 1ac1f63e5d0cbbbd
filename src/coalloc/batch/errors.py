"""The records of a batch's failures: :class:`BatchError` and the markers a batch puts in
the place of an item that cannot run (:class:`_Invalid`: not an instance; :class:`_TimedOut`:
its worker process was killed for its timeout).

Everything here holds strings only, so it pickles across processes and machines.
"""

from __future__ import annotations

import os
from typing import Any, Optional

from .._shared.seeding import instance_seed


class BatchError(Exception):
    """The record of an instance of a batch that failed.

    Returned in the failed instance's place by :func:`solve_many` (``on_error="record"``,
    like ``return_exceptions=True`` in :func:`asyncio.gather`) and raised by it with
    ``on_error="raise"``. It holds strings only, so it pickles across processes and
    machines.

    Parameters
    ----------
    index : int
        Position of the instance in the batch.
    exc_type : str
        Name of the exception's class, e.g. ``"InstanceError"``.
    message : str
        The exception's message.
    source : str, optional
        The instance's file name, when it was given as a path.
    seed : int, optional
        The seed the instance was (or would have been) solved with.
    traceback : str, optional
        The formatted traceback from the worker.

    Attributes
    ----------
    ok, success : bool
        Always False (``SolveResult.success`` is True for an allocation, so
        ``r.success`` tells the two apart in a mixed list).

    Examples
    --------
    >>> import coalloc
    >>> request, offer = coalloc.generators.random_instance(6, 2, seed=0)
    >>> results = coalloc.solve_many([(request, offer), "missing.json"], n_jobs=1)
    >>> [r.success for r in results]
    [True, False]
    >>> results[1].index, results[1].exc_type
    (1, 'InstanceError')
    """

    ok = False
    success = False

    def __init__(
        self,
        index: int,
        exc_type: str,
        message: str,
        *,
        source: Optional[str] = None,
        seed: Optional[int] = None,
        traceback: str = "",
    ):
        super().__init__(index, exc_type, message)
        self.index = int(index)
        self.exc_type = str(exc_type)
        self.message = str(message)
        self.source = source
        self.seed = seed
        self.traceback = traceback

    def __reduce__(self):
        return (_rebuild_error, (self.to_dict(), self.traceback))

    def __str__(self) -> str:
        where = f" ({self.source})" if self.source else ""
        return f"instance {self.index}{where}: {self.exc_type}: {self.message}"

    def __repr__(self) -> str:
        return (
            f"BatchError(index={self.index}, exc_type={self.exc_type!r}, "
            f"message={self.message!r}, source={self.source!r})"
        )

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, BatchError):
            return NotImplemented
        return self.to_dict() == other.to_dict()

    __hash__ = Exception.__hash__

    def to_dict(self) -> dict:
        """A JSON-ready dictionary (without the traceback).

        Returns
        -------
        dict
            ``index``, ``exc_type``, ``message``, ``source`` and ``seed``.

        Examples
        --------
        >>> from coalloc import BatchError
        >>> BatchError(3, "ValueError", "bad input", source="x.json", seed=7).to_dict()
        {'index': 3, 'exc_type': 'ValueError', 'message': 'bad input', 'source': 'x.json',
         'seed': 7}
        """
        return {
            "index": self.index,
            "exc_type": self.exc_type,
            "message": self.message,
            "source": self.source,
            "seed": self.seed,
        }


def _rebuild_error(fields: dict, traceback: str) -> BatchError:
    return BatchError(
        fields["index"], fields["exc_type"], fields["message"],
        source=fields["source"], seed=fields["seed"], traceback=traceback,
    )  # fmt: skip


class _Invalid:
    """Stands in for a batch item that is not an instance (found before submitting)."""

    def __init__(self, message: str):
        self.message = message


def _source(item: Any) -> Optional[str]:
    if isinstance(item, (str, os.PathLike)):
        return os.fspath(item)
    return None


class _TimedOut:
    """Stands in for an instance whose worker was killed for its timeout (not run again)."""

    def __init__(self, message: str, source: Optional[str]):
        self.message = message
        self.source = source


def _timeout_message(timeout: float) -> str:
    return f"the instance exceeded its timeout of {timeout:g} s"


#: Worker processes of a pool solve_many created: where they report (generation, index,


def _deferred_seed(base: int) -> int:
    """What a chunk carries in place of the seed ``instance_seed(base, index)``: ``-base - 1``
    (a real seed is never negative). The worker derives the seed (:func:`_resolve_seed`),
    so the calling process does no SeedSequence work per instance (issue 41)."""
    return -base - 1


def _resolve_seed(seed: Optional[int], index: int) -> Optional[int]:
    """The seed instance ``index`` is solved with, from what its chunk carries."""
    if seed is not None and seed < 0:
        return instance_seed(-seed - 1, index)
    return seed


def _chunk_failed(exc: BaseException, index: int, item: Any, seed: Optional[int]) -> BatchError:
    """The record of an instance whose chunk failed as a whole (never ran, lost, unpicklable)."""
    message = str(exc) or repr(exc)
    return BatchError(index, type(exc).__name__, message, source=_source(item),
                      seed=_resolve_seed(seed, index))  # fmt: skip
