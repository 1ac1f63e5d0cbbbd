"""A process's first timed call with a stand-in slow import (the families' first-call tests).

:func:`first_call` runs ``setup`` then ``call`` in a fresh interpreter whose import of each
module in ``slow`` waits on a gate (``HOLD`` seconds at most) before running the real module:
the solver's first import under load, made as long as the test wants. The child reports
whether the stand-in import had finished when the call returned: a call that waited for the
import (the behaviour before ``coalloc._shared.lazyimport``) returns only after it, ``HOLD``
seconds later, and fails the test; one that gave the import up at its deadline returns
before it.
No assertion reads a clock.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Iterable

import coalloc

#: Seconds a stand-in import waits at most for the gate (a call that waits for it returns
#: after this: the test fails rather than hangs).
HOLD = 20.0

#: The time limit of the families' timed first calls, ``LIMIT`` in their call strings: long
#: enough that a loaded machine reaches the stand-in import before the deadline (0.5-2 s did
#: not, under a load of 6-8, and the test failed for the machine), well below ``HOLD``, so a
#: call that waits for the import still fails the test.
LIMIT = 5.0

_CHILD = r"""
import importlib.machinery, json, sys, threading
SLOW = set(sys.argv[1].split(",")) if sys.argv[1] else set()
HOLD = float(sys.argv[2])
gate, reached, finished = threading.Event(), threading.Event(), threading.Event()


class _Slow:
    def __init__(self, real):
        self.real = real

    def create_module(self, spec):
        return self.real.create_module(spec)

    def exec_module(self, module):
        reached.set()
        gate.wait(HOLD)
        self.real.exec_module(module)
        finished.set()


class _Finder:
    def find_spec(self, name, path=None, target=None):
        if name not in SLOW:
            return None
        spec = importlib.machinery.PathFinder.find_spec(name, path)
        if spec is not None and spec.loader is not None:
            spec.loader = _Slow(spec.loader)
        return spec


sys.meta_path.insert(0, _Finder())
ns = {"LIMIT": float(sys.argv[6])}
exec(sys.argv[3], ns)  # setup: imports the family, builds the instance
preloaded = sorted(m for m in SLOW if m in sys.modules)
exec("result = " + sys.argv[4], ns)  # the timed call
blocked = not finished.is_set()
out = {"blocked_at_return": blocked, "reached": reached.is_set(), "preloaded": preloaded}
exec(sys.argv[5], ns)  # the test's checks: put what it reports in ns["report"]
out.update(ns.get("report", {}))
gate.set()
print(json.dumps(out))
"""


def first_call(setup: str, call: str, check: str, slow: Iterable[str],
               hold: float = HOLD) -> dict:  # fmt: skip
    """Run ``setup``, then ``result = <call>``, then ``check`` (which fills a dict
    ``report``) in a fresh interpreter whose imports of ``slow`` wait on a closed gate
    (``hold`` seconds).

    Returns the child's report: ``blocked_at_return`` (the gate still closed when the call
    returned: it did not wait for the import), ``reached`` (a stand-in import began),
    ``preloaded`` (modules of ``slow`` the setup had already imported: the test is moot
    then) and what ``check`` put in ``report``.
    """
    src = str(Path(coalloc.__file__).resolve().parents[1])
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([src, os.environ.get("PYTHONPATH", "")]))
    out = subprocess.run([sys.executable, "-c", _CHILD, ",".join(slow), str(hold), setup, call,
                          check, str(LIMIT)], capture_output=True, text=True, env=env,
                         timeout=10 * hold + 120)  # fmt: skip
    assert out.returncode == 0, out.stderr[-3000:]
    return json.loads(out.stdout.strip().splitlines()[-1])


def spy_source(module: str, name: str, label: str, *, keyed: bool = False) -> str:
    """Child source (for ``setup``) that records, in a list ``ORDER``, each call of
    ``<module>.<name>`` (appending ``label``) and each beginning of an import by
    :mod:`coalloc._shared.lazyimport` (``"begun"``, or ``"begun:<key>"`` with ``keyed``),
    at once or for later: the order of a call's steps and its import, no clock read.
    ``module`` is imported as ``_spied``; ``lazyimport`` is imported too."""
    begun = '"begun:" + key' if keyed else '"begun"'
    return f"""
import {module} as _spied
from coalloc._shared import lazyimport
ORDER = []
_real_spied = _spied.{name}
_real_start, _real_later = lazyimport._start, lazyimport._start_later
def _spy_spied(*args, **kwargs):
    ORDER.append({label!r})
    return _real_spied(*args, **kwargs)
def _spy_start(key, loader):
    ORDER.append({begun})
    return _real_start(key, loader)
def _spy_later(key, loader):
    ORDER.append({begun})
    return _real_later(key, loader)
_spied.{name} = _spy_spied
lazyimport._start, lazyimport._start_later = _spy_start, _spy_later
"""
