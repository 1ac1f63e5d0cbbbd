"""Ctrl-C sent to a child interpreter: what the promptness tests need, whatever the load.

Two things made these tests fail for the machine rather than for the code:

* **An ignored SIGINT.** A command started in the background by a non-interactive shell
  (``pytest ... &`` in a script) starts with SIGINT ignored, and so does every process it
  starts; Python installs its ``KeyboardInterrupt`` handler only where SIGINT has its
  default action, so the child never sees the test's signal and runs to its end (11 tests
  failed so, at any load). Each child therefore starts with :data:`RESTORE_SIGINT`.
* **A wall clock.** On a shared machine a child may wait seconds for a core. What the
  tests check is that the code stops soon after the signal *in its own work*: the CPU
  seconds the child (and the processes it started) spend between the signal and the
  return, which do not grow with the load. :func:`tree_cpu` reads them at the signal,
  the child prints its own at the return (:data:`CPU_NOW`), and :func:`reaped_cpu` gives
  them at the child's exit. A kernel that does not poll runs on for seconds of CPU and
  fails the bound on any machine.

CPU seconds are read from ``/proc`` (Linux, where CI runs); elsewhere :func:`tree_cpu`
returns ``None`` and the tests fall back to their wall-clock bounds.
"""

from __future__ import annotations

import os
import resource
from typing import Optional

#: The child's first line: Python's own Ctrl-C handler, whatever the disposition inherited.
RESTORE_SIGINT = "import signal as _sig\n_sig.signal(_sig.SIGINT, _sig.default_int_handler)\n"

#: An expression, in the child: its CPU seconds so far, with those of the children it waited
#: for (the same accounting as :func:`tree_cpu`).
CPU_NOW = "sum(__import__('os').times()[:4])"


def _stat(pid: int) -> Optional[list]:
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return None


def tree_cpu(pid: int) -> Optional[float]:
    """CPU seconds used so far by ``pid`` and every live process under it.

    Each live process counts its user and system time and that of the children it has
    waited for (``utime + stime + cutime + cstime``), so nothing is counted twice. ``None``
    without ``/proc``.
    """
    if _stat(pid) is None:
        return None
    parents = {}
    for name in os.listdir("/proc"):
        if name.isdigit():
            fields = _stat(int(name))
            if fields is not None:
                parents.setdefault(int(fields[1]), []).append((int(name), fields))
    own = _stat(pid)
    ticks, todo = 0, [(pid, own)]
    while todo:
        p, fields = todo.pop()
        ticks += sum(int(x) for x in fields[11:15])  # utime stime cutime cstime
        todo += parents.get(p, [])
    return ticks / os.sysconf("SC_CLK_TCK")


def reaped_cpu() -> float:
    """CPU seconds of this process's children that have ended and been waited for."""
    use = resource.getrusage(resource.RUSAGE_CHILDREN)
    return use.ru_utime + use.ru_stime
