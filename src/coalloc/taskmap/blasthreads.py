"""The BLAS threads while the mapper runs (issue 40, h57cpu).

The multilevel mapper's eigensolves (``scipy.sparse.linalg.eigsh`` in shift-invert mode:
SuperLU's factorisation and solves, ARPACK's Lanczos steps) call the BLAS bundled with
NumPy and SciPy (OpenBLAS) on vectors of a few thousand entries. OpenBLAS splits such calls
over as many threads as the machine has cores, and the threads meet at every call: on the
2-core VM, under the load of other processes, the meetings cost more than the work
(measured: the untimed call on stencil 64x64 onto 256 processors 1.55 s of CPU with the
default two threads, 0.79 s with one; the answer the same). :func:`blas_threads` sets the
OpenBLAS libraries loaded in the process to ``n`` threads for the duration of a block and
restores each library's count after; :data:`BLAS_THREADS` is the count the mapper asks for.

No dependency: the libraries are found among those the process has loaded (their
``openblas_set_num_threads`` symbols, with the prefixes and suffixes NumPy's and SciPy's
wheels give them); where none is found (another BLAS, a platform without ``/proc``) the
block runs unchanged. The count is process-wide: a block in one thread changes it for
numerical code running in other threads meanwhile (their speed, not their results beyond
the last bits of a threaded sum).
"""

from __future__ import annotations

import ctypes
import functools
import threading
from contextlib import contextmanager
from typing import Any, Callable, Iterator, Optional, TypeVar

__all__ = ["BLAS_THREADS", "blas_threads", "openblas_threads", "with_blas_threads"]

#: The OpenBLAS threads while the mapper runs (:func:`blas_threads`); None: left as they are.
BLAS_THREADS: Optional[int] = 1

_NAMES = [(pre, suf) for pre in ("scipy_", "") for suf in ("64_", "")]
_LIBS: Optional[list] = None  # the (get, set) functions of the libraries found
_LOCK = threading.Lock()
_DEPTH = [0]  # blocks open (nested, or in several threads): the first sets, the last restores
_SAVED: list = []  # (set function, count before the first block)


def _functions(path: str) -> Optional[tuple]:
    """``(get, set)`` of the OpenBLAS library at ``path`` (already loaded), or None."""
    try:
        lib = ctypes.CDLL(path, mode=ctypes.RTLD_LOCAL)
    except OSError:
        return None
    for pre, suf in _NAMES:
        get = getattr(lib, f"{pre}openblas_get_num_threads{suf}", None)
        put = getattr(lib, f"{pre}openblas_set_num_threads{suf}", None)
        if get is not None and put is not None:
            get.restype, get.argtypes = ctypes.c_int, []
            put.restype, put.argtypes = None, [ctypes.c_int]
            return get, put
    return None


def _loaded_openblas() -> list:
    """``(get, set)`` ctypes functions of every OpenBLAS library in the process, read once
    from ``/proc/self/maps`` after ``scipy.linalg`` is imported (it loads SciPy's; NumPy's
    is loaded with NumPy): the list is kept (a scan costs 1-2 ms)."""
    global _LIBS
    if _LIBS is not None:
        return _LIBS
    import scipy.linalg  # noqa: F401  (loads SciPy's BLAS: the eigensolves' one)

    try:
        with open("/proc/self/maps") as fh:
            paths = sorted({ln.split()[-1] for ln in fh if "openblas" in ln.lower()})
    except OSError:
        paths = []
    _LIBS = [f for f in map(_functions, paths) if f is not None]
    return _LIBS


def openblas_threads() -> list:
    """The thread count of each OpenBLAS library loaded in the process (empty: none found).

    Returns
    -------
    list of int
        One count per library.

    Examples
    --------
    >>> import scipy.sparse.linalg  # loads SciPy's OpenBLAS
    >>> all(n >= 1 for n in openblas_threads())
    True
    """
    return [int(get()) for get, _ in _loaded_openblas()]


@contextmanager
def blas_threads(n: Optional[int] = None) -> Iterator[None]:
    """Run a block with the loaded OpenBLAS libraries at ``n`` threads, then restore them.

    Parameters
    ----------
    n : int or None, default None
        The threads in the block; None: :data:`BLAS_THREADS` (itself None: unchanged).
        Blocks open at once (nested, or in several threads) keep the first one's count,
        and the counts are restored when the last of them ends.

    Examples
    --------
    >>> import scipy.sparse.linalg
    >>> before = openblas_threads()
    >>> with blas_threads(1):
    ...     inside = openblas_threads()
    >>> set(inside) <= {1}, openblas_threads() == before
    (True, True)
    """
    n = BLAS_THREADS if n is None else n
    if n is None:
        yield
        return
    with _LOCK:
        if _DEPTH[0] == 0:  # the outermost block (of any thread): save, then set
            _SAVED[:] = [(put, int(get())) for get, put in _loaded_openblas()]
            for put, _ in _SAVED:
                put(int(n))
        _DEPTH[0] += 1
    try:
        yield
    finally:
        with _LOCK:
            _DEPTH[0] -= 1
            if _DEPTH[0] == 0:  # the last block to end restores the counts saved
                for put, k in _SAVED:
                    put(k)
                _SAVED.clear()


_F = TypeVar("_F", bound=Callable[..., Any])


def with_blas_threads(fn: _F) -> _F:
    """``fn`` run inside :func:`blas_threads` (at :data:`BLAS_THREADS`, read at each call).

    The family's :func:`~coalloc.taskmap.solve` is wrapped so: every method, timed or not,
    in a batch worker or in the caller, runs its eigensolves at one OpenBLAS thread (the
    answers the same; their rounding no longer depends on the machine's core count).

    Parameters
    ----------
    fn : callable
        The function to wrap; its signature and docstring are kept.

    Returns
    -------
    callable
        The wrapped function.

    Examples
    --------
    >>> import scipy.sparse.linalg
    >>> @with_blas_threads
    ... def inside():
    ...     return openblas_threads()
    >>> set(inside()) <= {1}
    True
    """

    @functools.wraps(fn)
    def wrapped(*args: Any, **kwargs: Any) -> Any:
        with blas_threads():
            return fn(*args, **kwargs)

    return wrapped  # type: ignore[return-value]
