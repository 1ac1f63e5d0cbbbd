"""Type stub for ``coalloc.loadshare._dmcf`` (src/_core/loadshare/_dmcf.pyx).

The DMCF-GGA generation step (conditional migration, first fit per coalition) and the
default method's best-fit balancer and its size order (a sort that polls the deadline);
NumPy twins in :mod:`coalloc.loadshare._reference.dmcf`.
"""

from typing import Tuple

import numpy.typing as npt

def migrate(
    coal: npt.ArrayLike,
    node_load: npt.ArrayLike,
    node_cap: npt.ArrayLike,
    coal_load: npt.ArrayLike,
    coal_cap: npt.ArrayLike,
    coal_count: npt.ArrayLike,
    p: float,
    th: float,
    cap_ref: float,
    seed: int,
    generation: int,
    out: npt.ArrayLike,
) -> Tuple[int, int]: ...
def first_fit_all(
    coal: npt.ArrayLike,
    node_cap: npt.ArrayLike,
    job_size: npt.ArrayLike,
    job_origin: npt.ArrayLike,
    job_order: npt.ArrayLike,
    dirty: npt.ArrayLike,
    placement: npt.ArrayLike,
    coal_tp: npt.ArrayLike,
) -> Tuple[int, int]: ...
def best_fit_decreasing(
    node_cap: npt.ArrayLike,
    job_size: npt.ArrayLike,
    job_origin: npt.ArrayLike,
    size_order: npt.ArrayLike,
    placement: npt.ArrayLike,
    keep: bool = True,
) -> int: ...
def size_order(job_size: npt.ArrayLike, order: npt.ArrayLike) -> None: ...
