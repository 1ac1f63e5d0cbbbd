"""One progress helper for every long loop of the package (solvers, batches, benchmarks).

It is a thin wrapper over `tqdm <https://tqdm.github.io>`_ (a core dependency) so that
every family reports progress the same way: on standard error, with rate and time
estimate, closed properly when the loop ends (use it as a context manager or iterate to
exhaustion), silent when ``disable=True``.
"""

from __future__ import annotations

from typing import Any, Iterable, Optional

__all__ = ["progress"]


def progress(
    iterable: Optional[Iterable[Any]] = None,
    *,
    total: Optional[int] = None,
    desc: Optional[str] = None,
    unit: str = "it",
    disable: Optional[bool] = False,
    leave: bool = True,
) -> Any:
    """Return a progress bar over ``iterable`` (or a manual one with ``total``).

    Parameters
    ----------
    iterable : iterable, optional
        What to iterate over; the bar advances once per item.
    total : int, optional
        Number of steps when it cannot be taken from ``len(iterable)``.
    desc : str, optional
        Label shown before the bar.
    unit : str, default "it"
        Name of one step.
    disable : bool or None, default False
        True hides the bar; None hides it when standard error is not a terminal.
    leave : bool, default True
        Keep the finished bar on screen.

    Returns
    -------
    tqdm.tqdm
        Iterate over it, or call ``update(n)``; use ``with`` to close it.

    Examples
    --------
    >>> from coalloc._shared.progress import progress
    >>> sum(progress(range(3), disable=True))
    3
    """
    from tqdm.auto import tqdm

    return tqdm(
        iterable,
        total=total,
        desc=desc,
        unit=unit,
        disable=disable,
        leave=leave,
        dynamic_ncols=True,
    )
