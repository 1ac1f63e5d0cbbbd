"""The route walk that coalloc.taskmap.routing replaced (its referee in the parity tests).

:func:`routes_from_walk` is ``ResourceGraph.routes_from`` as it was before the routes were
expanded by the compiled kernel (:mod:`coalloc.taskmap._occupancy`): the padded route table
of one processor, walked hop by hop over the predecessor matrix with a sparse matrix of
link ids. ``tests/taskmap/kernels/test_routing.py`` checks on many random graphs that the
kernel's tables are identical, entry for entry.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

__all__ = ["routes_from_walk"]


def _walk(pred, link_id, processors, src_rows, dst):
    k = dst.shape[0]
    cols = []
    cur = dst.copy()
    src = processors[src_rows]
    active = cur != src
    while active.any():
        prev = np.where(active, pred[src_rows, cur], cur)
        col = np.full(k, -1, dtype=np.int64)
        ids = np.asarray(link_id[prev[active], cur[active]]).ravel()
        col[active] = ids.astype(np.int64) - 1
        cols.append(col)
        cur = prev
        active = cur != src
    if not cols:
        return np.full((k, 0), -1, dtype=np.int64)
    return np.stack(cols, axis=1)


def routes_from_walk(resources, a: int) -> np.ndarray:
    """Padded ``(R, H)`` route table of processor ``a``, by the former hop-by-hop walk.

    Parameters
    ----------
    resources : ResourceGraph
        The resource graph (its ``links``, ``processors`` and ``predecessors``).
    a : int
        A processor's node index.

    Returns
    -------
    ndarray of int64, shape (R, H)
        Row ``b``: the link ids of the route from ``a`` to ``b``, ``-1`` padded.
    """
    r = resources.n_nodes
    e = resources.n_links
    ln = resources.links
    link_id = sp.csr_matrix(
        (
            np.concatenate([np.arange(e), np.arange(e)]) + 1.0,
            (np.concatenate([ln[:, 0], ln[:, 1]]), np.concatenate([ln[:, 1], ln[:, 0]])),
        ),
        shape=(r, r),
    )
    pred = np.asarray(resources.predecessors, dtype=np.int64)
    procs = resources.processors
    row_of = np.full(r, -1, dtype=np.int64)
    row_of[procs] = np.arange(procs.shape[0])
    ra = int(row_of[a])
    if ra < 0:
        raise ValueError(f"node {a} is not a processor")
    dst = np.arange(r, dtype=np.int64)
    use_b = (row_of >= 0) & (row_of < ra)
    out_a = _walk(pred, link_id, procs, np.full(r, ra, dtype=np.int64), dst)
    if use_b.any():
        bs = dst[use_b]
        rev = _walk(pred, link_id, procs, row_of[bs], np.full(bs.shape[0], a, dtype=np.int64))
        width = max(out_a.shape[1], rev.shape[1])
        table = np.full((r, width), -1, dtype=np.int64)
        table[:, : out_a.shape[1]] = out_a
        table[use_b] = -1
        table[use_b, : rev.shape[1]] = rev
    else:
        table = out_a
    if table.shape[1]:
        keep = (table >= 0).any(axis=0)
        table = table[:, keep]
    return table
