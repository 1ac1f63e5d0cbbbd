"""A worker thread started without waiting for its first turn.

``threading.Thread.start`` returns only once the new thread has run (it waits for the
thread to say it started). On a starved machine that first turn comes late: under three
busy loops beside a load of 10-14 on the 2-core VM, starting the default's annealer beside
the strategies (:class:`.assign_plus._BesideAnneal`) held the calling thread 10-47 ms, so
that at a 0.05 s limit the paper's strategies (0.6-0.8 ms) ran only after a third to all of
the budget, and the default answered 300 on Emulab's test2a (900 on test_big onto Utah
2000) where the strategies alone answer 100 (600) (bench/testbed/ISSUE36.md, h60tail).
:func:`start_thread` starts the thread and goes on at once.
"""

from __future__ import annotations

import _thread
import threading
from typing import Callable, Optional, Union

__all__ = ["start_thread", "NO_WAIT", "Started"]

#: Start the annealer's thread without waiting for its first turn (True), or as a
#: ``threading.Thread`` whose ``start`` waits for it (False, as before h60tail).
NO_WAIT = True


class Started:
    """The handle of a thread :func:`start_thread` began without waiting: ``is_alive`` and
    ``join`` as a :class:`threading.Thread`'s (alive until its target has returned).

    Parameters
    ----------
    target : callable
        Run in the new thread; it must catch its own errors.
    name : str
        The handle's name (the thread itself is not registered with :mod:`threading`).
    """

    __slots__ = ("_done", "name")

    def __init__(self, target: Callable[[], None], name: str) -> None:
        self._done = threading.Event()
        self.name = name
        done = self._done

        def run() -> None:
            try:
                target()
            finally:
                done.set()

        _thread.start_new_thread(run, ())

    def is_alive(self) -> bool:
        """Whether the target still runs."""
        return not self._done.is_set()

    def join(self, timeout: Optional[float] = None) -> None:
        """Wait until the target has returned, at most ``timeout`` seconds."""
        self._done.wait(timeout)


def start_thread(target: Callable[[], None], name: str) -> Union[Started, threading.Thread]:
    """``target`` run in a daemon thread named ``name``, started: without waiting for its
    first turn with :data:`NO_WAIT` (a :class:`Started` handle), else a started
    :class:`threading.Thread`.

    Examples
    --------
    >>> box = []
    >>> t = start_thread(lambda: box.append(1), "example")
    >>> t.join(5); t.is_alive(), box
    (False, [1])
    """
    if NO_WAIT:
        return Started(target, name)
    thread = threading.Thread(target=target, name=name, daemon=True)
    thread.start()
    return thread
