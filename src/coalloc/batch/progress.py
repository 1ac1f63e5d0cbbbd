"""The progress bar of a batch (:class:`ProgressBar`), driven as ``bar(done, total)``."""

from __future__ import annotations

import sys
from typing import Optional, TextIO


class ProgressBar:
    """The batch progress bar: ``coalloc._shared.progress`` (tqdm) driven as ``bar(done, total)``.

    Shows count, rate and the time estimate; :meth:`close` draws the final state and ends
    the line (solve_many closes it before it returns, the CLI before its summary).

    Parameters
    ----------
    stream : text file, default sys.stderr
        Where to draw.
    desc : str, default "solved"
        Label before the bar.
    disable : bool or None, default None
        True hides the bar; None hides it when ``stream`` is not a terminal.

    Examples
    --------
    >>> import io
    >>> from coalloc.batch import ProgressBar
    >>> bar = ProgressBar(io.StringIO(), disable=False)
    >>> bar(2, 4); bar(4, 4); bar.close()
    >>> bar.done
    4
    """

    def __init__(
        self, stream: Optional[TextIO] = None, *, desc: str = "solved",
        disable: Optional[bool] = None,
    ) -> None:  # fmt: skip
        from .._shared.progress import progress

        self.stream = sys.stderr if stream is None else stream
        self._bar = progress(desc=desc, unit="inst", disable=disable, file=self.stream)
        self.done = 0

    def __call__(self, done: int, total: Optional[int]) -> None:
        if total is not None and self._bar.total != total:
            self._bar.total = total
        self._bar.update(done - self.done)
        self.done = done

    def close(self) -> None:
        """Draw the final state and end the line (idempotent)."""
        self._bar.close()
