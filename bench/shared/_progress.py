"""Progress for the benchmark scripts: the package's one progress helper, plus ``--quiet``.

Every ``bench/`` script reports progress through :func:`coalloc._shared.progress.progress`
(tqdm: rate and time estimate on standard error, closed before the summary is printed,
hidden when standard error is not a terminal). This module only adds the ``--quiet``
option (``add_quiet``), the bar that honours it (``bar``) and ``say``, which prints a line
without breaking an open bar.
"""

from __future__ import annotations

import argparse
from typing import Any, Iterable, Optional

from coalloc._shared.progress import progress

_QUIET = [False]


class _Quiet(argparse.Action):
    def __init__(self, option_strings: Any, dest: str, **kwargs: Any) -> None:
        super().__init__(option_strings, dest, nargs=0, default=False, **kwargs)

    def __call__(self, parser: Any, namespace: Any, values: Any, option_string: Any = None):
        _QUIET[0] = True
        setattr(namespace, self.dest, True)


def add_quiet(ap: argparse.ArgumentParser) -> None:
    """Add ``--quiet`` (no progress bars) to a benchmark's argument parser."""
    ap.add_argument("--quiet", action=_Quiet, help="no progress bars")


def bar(iterable: Optional[Iterable[Any]] = None, **kwargs: Any) -> Any:
    """A progress bar over ``iterable``: off with ``--quiet``, hidden on a non-terminal."""
    return progress(iterable, disable=True if _QUIET[0] else None, **kwargs)


def say(*parts: Any) -> None:
    """Print a line (to standard output) without garbling an open progress bar."""
    from tqdm.auto import tqdm

    tqdm.write(" ".join(str(p) for p in parts))
