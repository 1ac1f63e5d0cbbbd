"""Type stub for ``coalloc.collective._search`` (src/_core/collective/_search.pyx).

Window maxima of the timetables, SelectAndSwap (Phase IV), Phase V and the default method's
swap search, all without the GIL; twin in :mod:`coalloc.collective._reference.search` (same
signatures). One interface (``docs/architecture.md``, "Kernel arguments"): every array is a
C-contiguous typed memoryview (float64 or int64 as annotated), tagged IN (read only; a
read-only array is accepted), OUT (allocated by the caller, every entry written) or INOUT
(read, then overwritten); the kernels return scalars only. The caller that converts and
allocates is :class:`coalloc.collective.core.Kernels`. ``tol``: the family's tolerance
``tau_i`` per property (zeros: none). The screens take their demand, plan and outputs as
the records :class:`~coalloc.collective.core.Demand`, :class:`~coalloc.collective.core.ScanPlan`
and :class:`~coalloc.collective.core.ScreenOut`.
"""

import numpy as np
from numpy.typing import NDArray

from .core import Demand, ScanPlan, ScreenOut

F64 = NDArray[np.float64]
I64 = NDArray[np.int64]

def window_max(
    times: F64,  # IN (K,)
    reserved: F64,  # IN (n, m, K)
    starts: F64,  # IN (S,)
    duration: float,  # IN
    out: F64,  # OUT (S, n, m)
) -> None:
    """``out[s, j, i]``: maxima of ``reserved[j, i]`` over ``[starts[s], starts[s] + duration)``."""

def window_max_rows(
    times: F64,  # IN (K,)
    reserved: F64,  # IN (N, m, K)
    nodes: I64,  # IN (n,)
    starts: F64,  # IN (S,) non-decreasing
    duration: float,  # IN
    out: F64,  # OUT (S, n, m)
) -> None:
    """``out[s, jj, i]``: maxima of ``reserved[nodes[jj], i]`` over the window of ``starts[s]``
    (one monotone deque per row)."""

def block_maxima(
    reserved: F64,  # IN (N, m, K)
    B: int,  # IN >= 1
    out: F64,  # OUT (N, m, ceil(K / B))
) -> None:
    """``out[j, i, b]``: maxima of ``reserved[j, i]`` over the segments of block ``b``."""

def block_minima(
    reserved: F64,  # IN (N, m, K)
    B: int,  # IN >= 1
    out: F64,  # OUT (N, m, ceil(K / B))
) -> None:
    """``out[j, i, b]``: minima of ``reserved[j, i]`` over the segments of block ``b``."""

def window_max_blocks(
    times: F64,  # IN (K,)
    reserved: F64,  # IN (N, m, K)
    bm: F64,  # IN (N, m, ceil(K / B))
    B: int,  # IN
    nodes: I64,  # IN (n,)
    starts: F64,  # IN (S,)
    duration: float,  # IN
    out: F64,  # OUT (S, n, m)
) -> None:
    """Window maxima from the maxima of blocks of ``B`` segments and the partial blocks."""

def screen(
    tmax: F64,  # IN (S, n, m)
    cap: F64,  # IN (n, m)
    demand: Demand,  # IN e, d (m,), count, tol (m,)
    out: ScreenOut,  # OUT code, elig, prop (S,) int64, value (S,)
) -> None:
    """The screens of every start."""

def block_screen(
    tmax: F64,  # IN (S, n, m)
    cap: F64,  # IN (n, m)
    demand: Demand,  # IN e, d (m,), count, tol (m,)
    out: ScreenOut,  # OUT code, elig, prop (S,) int64, value (S,)
) -> None:
    """screen, then weighted_screen, in one pass (issue 40): codes 0, 1, 2 or 3."""

def pruned_screen(
    tmax: F64,  # IN (S, n, m)
    cap: F64,  # IN (n, m)
    demand: Demand,  # IN e, d (m,), count, tol (m,)
    sub: int,  # IN starts per sub-block (>= 1)
    out: ScreenOut,  # OUT code, elig, prop (S,) int64, value (S,)
) -> int:
    """block_screen's outputs, bit for bit, screening per sub-block of ``sub`` starts only the
    nodes that can matter there (issue 40); returns the rows screened."""

def window_screen(
    times: F64,  # IN (K,)
    reserved: F64,  # IN (N, m, K)
    bm: F64,  # IN (N, m, ceil(K / B))
    B: int,  # IN
    nodes: I64,  # IN (n,)
    starts: F64,  # IN (S,) non-decreasing
    duration: float,  # IN
    cap: F64,  # IN (n, m) capacities of the rows nodes
    demand: Demand,  # IN e, d (m,), count, tol (m,)
    sub: int,  # IN starts per sub-block (>= 1)
    out: ScreenOut,  # OUT code, elig, prop (S,) int64, value (S,)
    bn: F64 | None = None,  # IN (N, m, ceil(K / B)) block minima (coarser bounds first)
) -> int:
    """block_screen's outputs over the window maxima of the rows nodes, bit for bit, from the
    rows that can matter per sub-block (bounds from the block maxima, and minima when given)
    and their window maxima only (issue 40); returns the rows screened."""

def weighted_screen(
    tmax: F64,  # IN (S, n, m)
    cap: F64,  # IN (n, m)
    demand: Demand,  # IN e, d (m,), count, tol (m,)
    code: I64,  # INOUT (S,)
) -> None:
    """Code 0 -> 3 where the equal weights prove that no set exists (issue 40)."""

def select_and_swap(
    avail: F64,  # IN (r, m)
    tmax: F64,  # IN (r, m)
    cap: F64,  # IN (r, m)
    d: F64,  # IN (m,)
    l1: int,  # IN
    seed: int,  # IN
    tol: F64,  # IN (m,)
    sel: I64,  # OUT (count,)
) -> tuple[bool, int]:
    """(admissible, swap attempts); the selected rows in ``sel``."""

def phase5(
    avail: F64,  # IN (r, m)
    tmax: F64,  # IN (r, m)
    cap: F64,  # IN (r, m)
    d: F64,  # IN (m,)
    l2: int,  # IN
    seed: int,  # IN
    tol: F64,  # IN (m,)
    sel: I64,  # INOUT (count,)
) -> int:
    """Swaps accepted; the improved rows in ``sel``."""

def swap_search(
    avail: F64,  # IN (r, m)
    tmax: F64,  # IN (r, m)
    cap: F64,  # IN (r, m)
    d: F64,  # IN (m,)
    max_rounds: int,  # IN
    tol: F64,  # IN (m,)
    sel: I64,  # INOUT (count,)
) -> int:
    """Swaps applied; the improved rows in ``sel``."""

def scan_screen(
    times: F64,  # IN (K,)
    reserved: F64,  # IN (N, m, K)
    nodes: I64,  # IN (n,)
    cap: F64,  # IN (n, m)
    demand: Demand,  # IN e, d (m,), count, tol (m,)
    plan: ScanPlan,  # IN starts (S,), duration, first_block, max_block
    out: ScreenOut,  # OUT code, elig, prop (S,) int64, value (S,)
    tmax: F64,  # OUT (n, m)
    deadline: object = ...,
) -> int:
    """The first start that passes (``S`` if none); screens and window maxima in the OUTs."""

def decrease_starts(
    times: F64,  # IN (K,)
    reserved: F64,  # IN (N, m, K)
    nodes: I64,  # IN (n,)
    lo: float,  # IN
    hi: float,  # IN
    out: F64,  # OUT (K + 1,)
) -> int:
    """``c``: ``lo`` and the breakpoints in ``(lo, hi]`` where a reserved amount of ``nodes``
    falls go to ``out[:c]``."""

def bound_screen(
    times: F64,  # IN (K,)
    reserved: F64,  # IN (N, m, K)
    nodes: I64,  # IN (n,)
    starts: F64,  # IN (S,) non-decreasing
    duration: float,  # IN
    cap: F64,  # IN (n, m) capacities of the rows nodes
    demand: Demand,  # IN e, d (m,), count, tol (m,)
    stride: int,  # IN every stride-th row sampled for the thresholds (>= 1)
    group: int,  # IN starts per set of thresholds (>= 1)
    out: ScreenOut,  # OUT code (-1 undecided, 1, 2), elig, prop, value (S,)
    bm: F64 | None = None,  # IN (N, m, ceil(K / B)) block maxima (the rows' bounds from them)
    bn: F64 | None = None,  # IN (N, m, ceil(K / B)) block minima (with bm)
    B: int = 1,  # IN segments per block
) -> int:
    """block_screen's code and property at the starts the bounds decide (codes 1 and 2; -1:
    undecided), without every node's window maxima held or sorted (issue 40, h53coll);
    returns the starts decided."""


def min_counts(
    times: F64,  # IN (K,)
    reserved: F64,  # IN (N, m, K)
    nodes: I64,  # IN (n,)
    starts: F64,  # IN (S,) non-decreasing
    duration: float,  # IN
    cap: F64,  # IN (n, m) capacities of the rows nodes
    e: F64,  # IN (m,) minimums
    tol: F64,  # IN (m,) tolerances
    elig: I64,  # OUT (S,) rows meeting every minimum
    meet: I64,  # OUT (S, m) rows meeting minimum i
) -> None:
    """block_screen's eligible counts and per-property counts of the minimum screen, from
    the last segment missing each minimum per row (no window maxima held; issue 40)."""
