"""The scan's window maxima written into a buffer each thread keeps (issue 40, h57coll).

A block's window maxima (``window_max_rows``: ``(S, n, m)``, up to 512 x 10,000 x 3 doubles,
123 MB) were a fresh array per block. NumPy asks the kernel for huge pages on arrays of 4 MiB
or more (``madvise``), and the first touch of fresh huge pages zeroes them, and compacts memory
when it is fragmented: the issue's rejections at N = 256 paid 15-90 ms of system time on
their first call in a process (`getrusage`), none on a repeated one. The scan's blocks are
read only until the next block's maxima are computed (``_Scan.passing`` and
``_bounded.bounded`` keep no view past it; ``search_at`` copies the rows it keeps), so one
buffer per thread serves every scan in it, its pages touched once.

The buffer may be an anonymous ``mmap`` (:data:`SMALL_PAGES`, off) instead of ``np.empty``:
without NumPy's ``madvise(MADV_HUGEPAGE)`` its first touch takes the kernel's ordinary pages,
more faults but no compaction (issue 40, h58tail: week N = 1,024 collective case 0 on pool
2028, first call at load 14-17, 58-134 ms with 8-81 ms of system time with ``np.empty``, 75 ms
with the ``mmap``); but the rejections read it 2-5 % slower, and the issue's command's p99 and
maximum did not improve in three alternated pairs at load 11-16 (bench/collective/ISSUE40.md).
"""

from __future__ import annotations

import mmap
import threading

import numpy as np

#: Whether the scan's window maxima of at least :data:`LEAST` bytes go into the thread's kept
#: buffer (False: a fresh array per block, as before).
ON = True
#: Smaller outputs stay fresh arrays (no huge pages asked below NumPy's 4 MiB).
LEAST = 1 << 22
#: The largest buffer kept (bytes); a larger output is a fresh array, not kept.
MOST = 1 << 28
#: A buffer is made with room for this many starts (the scan's largest block, ``_MAX_BLOCK``)
#: of the rows asked: the scan's blocks grow 8x from one to the next, so a buffer sized to
#: each would be made afresh (its pages touched anew) three or four times per process.
STARTS = 512

#: Make the kept buffer from an anonymous ``mmap`` (the kernel's ordinary pages; False:
#: ``np.empty``, huge pages asked for by NumPy on this size). Off: steadier first calls, no
#: lower p99 (see the module's docstring).
SMALL_PAGES = False

_LOCAL = threading.local()


def _buffer(n: int) -> np.ndarray:
    """``n`` doubles (``n >= 1``), uninitialised: from an anonymous ``mmap`` when
    :data:`SMALL_PAGES` (zero pages until written; freed with the array), else ``np.empty``."""
    if not SMALL_PAGES:
        return np.empty(n)
    return np.frombuffer(mmap.mmap(-1, 8 * n), dtype=np.float64)


def window_rows(ker, times: np.ndarray, res: np.ndarray, nodes: np.ndarray,
                starts: np.ndarray, duration: float) -> np.ndarray:  # fmt: skip
    """``ker.window_max_rows(times, res, nodes, starts, duration)``, into the thread's kept
    buffer when :data:`ON` and the output has :data:`LEAST` to :data:`MOST` bytes: the same
    values, valid until this thread's next call."""
    shape = (len(starts), len(nodes), res.shape[1])
    size = shape[0] * shape[1] * shape[2]
    if not ON or not LEAST <= 8 * size <= MOST:
        return ker.window_max_rows(times, res, nodes, starts, duration)
    buf = getattr(_LOCAL, "buf", None)
    if buf is None or buf.size < size:  # room for a block of STARTS: grown once, not often
        room = max(size + size // 4, STARTS * shape[1] * shape[2])
        buf = _LOCAL.buf = _buffer(min(room, MOST // 8))
    return ker.window_max_rows(times, res, nodes, starts, duration,
                               out=buf[:size].reshape(shape))  # fmt: skip
