"""Type stub for ``coalloc.taskmap._occupancy`` (src/_core/taskmap/_occupancy.cpp).

Routes expanded from the predecessor tables of a resource graph and the occupancy updates
of the task mapper (GIL released); slow twin in :mod:`coalloc.taskmap._reference.occupancy`,
users :mod:`coalloc.taskmap.routing` and :mod:`coalloc.taskmap.occupancy`.
"""

from typing import Callable

import numpy as np
import numpy.typing as npt

class Routes:
    """The routing tables (pred, pred_link, proc_row) of one resource graph, checked once."""

    def __init__(
        self,
        pred: npt.ArrayLike,
        pred_link: npt.ArrayLike,
        proc_row: npt.ArrayLike,
        n_links: int,
    ) -> None: ...
    def route(self, a: int, b: int) -> npt.NDArray[np.int64]:
        """Link ids of the route between processors a and b, in walk order."""
    def table(self, a: int) -> npt.NDArray[np.int64]:
        """Padded (R, H) route table of processor a (-1 padding)."""

class Pairs:
    """The symmetric pair weights (CSR) and compute requirements of a task graph."""

    def __init__(
        self,
        indptr: npt.ArrayLike,
        indices: npt.ArrayLike,
        weight: npt.ArrayLike,
        node_weight: npt.ArrayLike,
    ) -> None: ...

def place(
    pairs: Pairs,
    routes: Routes,
    mapping: npt.NDArray[np.int64],
    node_load: npt.NDArray[np.float64],
    link_load: npt.NDArray[np.float64],
    t: int,
    p: int,
) -> npt.NDArray[np.int64]:
    """Map the unmapped task t on processor p; returns the links touched (with repeats)."""

def remove(
    pairs: Pairs,
    routes: Routes,
    mapping: npt.NDArray[np.int64],
    node_load: npt.NDArray[np.float64],
    link_load: npt.NDArray[np.float64],
    t: int,
) -> npt.NDArray[np.int64]:
    """Unmap the mapped task t; returns the links touched (with repeats)."""

def move(
    pairs: Pairs,
    routes: Routes,
    mapping: npt.NDArray[np.int64],
    node_load: npt.NDArray[np.float64],
    link_load: npt.NDArray[np.float64],
    t: int,
    p: int,
) -> None:
    """Move task t (mapped or not) to processor p."""

def route_uses(
    routes: Routes, a: npt.ArrayLike, b: npt.ArrayLike, link: int
) -> npt.NDArray[np.bool_]:
    """Whether the route between processors a[i] and b[i] crosses link."""

def link_loads(
    routes: Routes,
    mapping: npt.ArrayLike,
    s: npt.ArrayLike,
    t: npt.ArrayLike,
    vol: npt.ArrayLike,
) -> npt.NDArray[np.float64]:
    """Link loads of a (partial, -1 = unmapped) mapping over the pairs (s, t, vol)."""

def fill_prefix(
    pairs: Pairs,
    routes: Routes,
    mapping: npt.NDArray[np.int64],
    node_load: npt.NDArray[np.float64],
    link_load: npt.NDArray[np.float64],
    unmapped: npt.ArrayLike,
    q: int,
    inv_cq: float,
    cap_q: float,
    cur: float,
    rest: float,
    inv_bw: npt.ArrayLike,
    open_metric: bool,
    open_vol: float,
    adj: float,
    u: float,
    early_exit: bool,
    tie: float,
    poll: Callable[[], object] | None,
    count: npt.NDArray[np.int64],
) -> int:
    """engine.Engine.map_tasks_on's loop; returns the best prefix's length."""
