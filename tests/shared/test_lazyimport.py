"""The shared heavy import under a deadline (``coalloc._shared.lazyimport``), on stand-in
modules of a temporary package whose import waits on an event the test holds: no test
races the real clock (the deadlines are in the past, or far away and the import released)."""

from __future__ import annotations

import sys
import threading
import time
import uuid

import pytest

from coalloc._shared import lazyimport

HOLD = 30.0  # seconds a stand-in import waits at most (a test failing would not hang)


@pytest.fixture
def slow_module(tmp_path, monkeypatch):
    """``(name, release, started)``: a module whose import waits for ``release``."""
    name = f"_coalloc_slow_{uuid.uuid4().hex[:8]}"
    (tmp_path / f"{name}.py").write_text(
        "import threading, builtins\n"
        "gate = builtins._coalloc_gates[__name__]\n"
        "gate['started'].set()\n"
        "gate['release'].wait(gate['hold'])\n"
        "if gate.get('fail'):\n"
        "    raise ImportError('the stand-in failed')\n"
        "VALUE = 42\n"
    )
    import builtins

    gates = getattr(builtins, "_coalloc_gates", {})
    gate = {"release": threading.Event(), "started": threading.Event(), "hold": HOLD}
    gates[name] = gate
    monkeypatch.setattr(builtins, "_coalloc_gates", gates, raising=False)
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setattr(lazyimport, "_LOADS", {})
    yield name, gate
    gate["release"].set()
    entry = lazyimport._LOADS.get(name)
    if entry is not None:
        entry[0].join(HOLD)
    sys.modules.pop(name, None)


def test_a_timed_import_past_its_deadline_returns_none_and_goes_on(slow_module):
    name, gate = slow_module
    past = time.perf_counter() - 1.0
    assert lazyimport.import_by(name, past, cost=0.0) is None
    assert gate["started"].wait(HOLD)  # it runs in the background
    assert lazyimport.pending(name)
    assert lazyimport.import_by(name, past, cost=0.0) is None  # still under way
    gate["release"].set()
    mod = lazyimport.import_by(name, time.perf_counter() + HOLD, cost=0.0)
    assert mod is not None and mod.VALUE == 42  # the next call finds it
    assert lazyimport.import_by(name, past) is mod  # loaded: at once, even past the deadline


def test_an_import_that_would_not_fit_is_not_waited_for(slow_module):
    name, gate = slow_module
    t0 = time.perf_counter()
    assert lazyimport.import_by(name, t0 + HOLD, cost=2 * HOLD) is None
    assert time.perf_counter() - t0 < HOLD  # returned at once, not at the deadline
    assert gate["started"].wait(HOLD)  # started for the calls that follow
    gate["release"].set()
    assert lazyimport.import_by(name, None).VALUE == 42  # untimed: waits for it


def test_one_background_import_a_module(slow_module):
    name, gate = slow_module
    past = time.perf_counter() - 1.0
    assert lazyimport.import_by(name, past, cost=0.0) is None
    first = lazyimport._LOADS[name][0]
    assert lazyimport.import_by(name, past, cost=0.0) is None
    assert lazyimport._LOADS[name][0] is first


def test_a_failed_import_is_raised_and_tried_again(slow_module):
    name, gate = slow_module
    import builtins

    builtins._coalloc_gates[name]["fail"] = True
    gate["release"].set()
    with pytest.raises(ImportError, match="stand-in failed"):
        lazyimport.import_by(name, time.perf_counter() + HOLD, cost=0.0)
    assert name not in lazyimport._LOADS  # not cached: the next call tries again
    builtins._coalloc_gates[name]["fail"] = False
    assert lazyimport.import_by(name, time.perf_counter() + HOLD, cost=0.0).VALUE == 42


def test_untimed_is_a_plain_import():
    assert lazyimport.import_by("json", None) is sys.modules["json"]
    assert lazyimport.load_by("k-untimed", lambda: "v", None) == "v"


def test_a_half_initialised_module_is_not_loaded(monkeypatch):
    class Spec:
        _initializing = True

    class Mod:
        __spec__ = Spec()

    monkeypatch.setitem(sys.modules, "_coalloc_half", Mod())
    assert lazyimport.loaded("_coalloc_half") is None
    Spec._initializing = False
    assert lazyimport.loaded("_coalloc_half") is not None


def test_a_hidden_bar_imports_nothing(monkeypatch):
    """A hidden progress bar still imported tqdm (with asyncio and multiprocessing: 0.3 s of
    a 0.05 s limit in a fresh process, load sharing's ``dmcf-gga``)."""
    from coalloc._shared.progress import progress

    monkeypatch.setitem(sys.modules, "tqdm.auto", None)  # an import of it raises
    bar = progress(range(3), disable=True)
    assert sum(bar) == 3
    with progress(total=5, disable=True) as bar:
        bar.update(2)
        bar.set_postfix_str("x")
        bar.refresh()
    assert bar.n == 2 and bar.total == 5
    bar.close()


def _import_in_child(name: str) -> None:
    import importlib
    import os

    os._exit(0 if importlib.import_module(name).VALUE == 42 else 3)


@pytest.mark.skipif(not hasattr(__import__("os"), "register_at_fork"),
                    reason="needs os.register_at_fork (POSIX fork)")  # fmt: skip
def test_a_fork_waits_for_a_running_import(slow_module):
    # A child forked while the module is half imported would inherit its import lock held by
    # a thread it does not have, and its own import would wait for ever (a batch's forked
    # workers after a timed call left an import running): the fork waits for the import.
    import multiprocessing

    name, gate = slow_module
    lazyimport.start(name, lambda: __import__(name))
    assert gate["started"].wait(HOLD)  # the import is under way, held at the gate
    releaser = threading.Timer(0.5, gate["release"].set)  # only the parent releases it
    releaser.start()
    child = multiprocessing.get_context("fork").Process(target=_import_in_child, args=(name,))
    child.start()  # (waits in the before-fork hook until the import ends)
    child.join(20.0)
    if child.is_alive():  # the child's import hung on the inherited lock
        child.kill()
        child.join()
    releaser.join()
    assert child.exitcode == 0


def test_a_load_begun_on_return_waits_for_the_outermost_block(slow_module):
    # A call made of timed calls (the testbed's explanation asks its mappers): what the
    # inner calls begin "as they return" begins only as the outer call returns.
    name, gate = slow_module
    import importlib

    def loader():
        return importlib.import_module(name)

    with lazyimport.on_return():
        with lazyimport.on_return():  # an inner call's own block: not its end yet
            lazyimport.start_on_return(name, loader)
        assert name not in lazyimport._LOADS  # the inner block ended: still not begun
        lazyimport.start_on_return(name, loader)  # asked twice: begun once
        assert name not in lazyimport._LOADS
    assert name in lazyimport._LOADS  # the outermost block ended: begun
    assert gate["started"].wait(HOLD)
    gate["release"].set()
    lazyimport._LOADS[name][0].join(HOLD)
    assert lazyimport.loaded(name).VALUE == 42


def test_a_load_begun_on_return_outside_a_block_begins_at_once(slow_module):
    name, gate = slow_module
    import importlib

    lazyimport.start_on_return(name, lambda: importlib.import_module(name))
    assert gate["started"].wait(HOLD)  # begun, not waited for
    assert lazyimport.pending(name)
    gate["release"].set()


def test_a_block_that_raises_still_begins_its_loads(slow_module):
    name, gate = slow_module
    import importlib

    with pytest.raises(KeyError):
        with lazyimport.on_return():
            lazyimport.start_on_return(name, lambda: importlib.import_module(name))
            raise KeyError("the call failed")
    assert gate["started"].wait(HOLD)
    gate["release"].set()
    with lazyimport.on_return():  # the next block starts empty
        assert lazyimport._RETURN.wanted == {}


def test_the_later_thread_is_started_as_a_block_begins_not_as_it_ends(monkeypatch):
    # A new thread's first turn held the caller 11-30 ms under load: the thread that begins
    # the loads on return is started as the call begins (its budget), once per process.
    monkeypatch.setattr(lazyimport, "_LATER", [])
    with lazyimport.on_return():
        assert len(lazyimport._LATER) == 1
        q = lazyimport._LATER[0]
        with lazyimport.on_return():
            pass
    assert lazyimport._LATER == [q]


def _later_in_child(name: str) -> None:
    import importlib
    import os

    lazyimport.start_on_return(name, lambda: importlib.import_module(name))
    lazyimport._LOADS[name][0].join(HOLD)
    os._exit(0 if lazyimport.loaded(name) is not None else 3)


@pytest.mark.skipif(not hasattr(__import__("os"), "register_at_fork"),
                    reason="needs os.register_at_fork (POSIX fork)")  # fmt: skip
def test_a_forked_child_gets_its_own_later_thread(slow_module, monkeypatch):
    # The parent's later thread is not in a forked child: a load the child begins on return
    # must still run (the child starts a thread of its own).
    import multiprocessing

    name, gate = slow_module
    gate["release"].set()
    monkeypatch.setattr(lazyimport, "_LATER", [])
    lazyimport._later_queue()
    child = multiprocessing.get_context("fork").Process(target=_later_in_child, args=(name,))
    child.start()
    child.join(2 * HOLD)
    if child.is_alive():
        child.kill()
        child.join()
    assert child.exitcode == 0
