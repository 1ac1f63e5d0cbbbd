"""Array and sparse-matrix validation shared by the families' model constructors.

Models validate once, at construction, with these helpers, and keep read-only copies; the
kernels trust what they get. Every message names the argument.
"""

from __future__ import annotations

import os
from typing import Any, Optional

import numpy as np

__all__ = [
    "check_nonnegative",
    "nonnegative_vector",
    "square_sparse",
    "readonly",
    "memory_available",
    "check_memory",
]


def check_nonnegative(values: np.ndarray, argname: str) -> None:
    """Raise ``ValueError`` unless every value is finite and non-negative."""
    if not np.all(np.isfinite(values)):
        raise ValueError(f"{argname} must be finite (found NaN or inf)")
    if np.any(values < 0):
        raise ValueError(f"{argname} must be non-negative")


def nonnegative_vector(values: Any, argname: str, *, length: Optional[int] = None) -> np.ndarray:
    """A new float64 1-D array of finite non-negative values.

    Raises
    ------
    TypeError
        When ``values`` is not numeric.
    ValueError
        On a wrong dimension or length, NaN, inf or a negative value.
    """
    try:
        arr = np.array(values, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise TypeError(f"{argname} must be a 1-D numeric array: {exc}") from None
    if arr.ndim != 1:
        raise ValueError(f"{argname} must be 1-D, got shape {arr.shape}")
    if length is not None and arr.shape[0] != length:
        raise ValueError(f"{argname} has length {arr.shape[0]}, expected {length}")
    check_nonnegative(arr, argname)
    return arr


def square_sparse(matrix: Any, argname: str, *, n: Optional[int] = None, kind: str = "array"):
    """A validated float64 CSR copy of a dense or sparse square matrix.

    Duplicates are summed; the values must be finite and non-negative. The diagonal is left
    as given (each family has its own rule for it).

    Parameters
    ----------
    matrix : array_like or scipy.sparse matrix
    argname : str
        Name used in messages.
    n : int, optional
        Required size.
    kind : {"array", "matrix"}
        Return a ``csr_array`` or a ``csr_matrix``.

    Raises
    ------
    TypeError, ValueError
    """
    import scipy.sparse as sp  # here: importing it costs every family's import 0.1-0.2 s

    csr = sp.csr_array if kind == "array" else sp.csr_matrix
    if sp.issparse(matrix):
        rows = int(matrix.shape[0])
        check_memory(3 * 8 * (rows + 1) + 32 * matrix.nnz, f"{argname} with {rows} rows")
        mat = csr(matrix, dtype=np.float64, copy=True)
    else:
        try:
            dense = np.array(matrix, dtype=np.float64)
        except (TypeError, ValueError) as exc:
            raise TypeError(f"{argname} must be numeric: {exc}") from None
        if dense.ndim != 2:
            raise ValueError(f"{argname} must be a 2-D matrix, got shape {dense.shape}")
        check_nonnegative(dense, argname)
        mat = csr(dense)
    if mat.shape[0] != mat.shape[1]:
        raise ValueError(f"{argname} must be square, got shape {mat.shape}")
    if n is not None and mat.shape[0] != n:
        raise ValueError(f"{argname} has shape {mat.shape}, expected ({n}, {n})")
    mat.sum_duplicates()
    check_nonnegative(mat.data, argname)
    return mat


def readonly(*arrays: np.ndarray) -> None:
    """Mark arrays read-only (the models keep read-only copies the kernels can trust)."""
    for a in arrays:
        a.setflags(write=False)


def memory_available() -> int:
    """Bytes of memory this machine can give now (``MemAvailable``; total RAM elsewhere)."""
    try:
        with open("/proc/meminfo", encoding="ascii") as fh:
            for line in fh:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    try:
        return int(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES"))
    except (AttributeError, ValueError, OSError):  # pragma: no cover - not POSIX
        return 2**62


def check_memory(nbytes: float, what: str) -> None:
    """Refuse up front a model that cannot fit in memory.

    Parameters
    ----------
    nbytes : float
        Estimated bytes the model needs.
    what : str
        What needs it, for the message (``"a request of 2000000000 tasks"``).

    Raises
    ------
    ValueError
        When ``nbytes`` exceeds the memory available now; the message gives both.
    """
    free = memory_available()
    if nbytes > free:
        raise ValueError(
            f"{what} needs about {_gib(nbytes)} of memory, more than the {_gib(free)} "
            "available: refused before allocating it"
        )


def _gib(nbytes: float) -> str:
    return f"{nbytes / 2**30:.1f} GiB"
