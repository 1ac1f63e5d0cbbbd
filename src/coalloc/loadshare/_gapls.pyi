"""Type stub for ``coalloc.loadshare._gapls`` (src/_core/loadshare/_gapls.pyx).

Tabu search with a penalised capacity excess for the generalized assignment problem; twin in
:mod:`coalloc.loadshare._reference.gapls`.
"""

from typing import Tuple

import numpy.typing as npt

def tabu_search(
    cost: npt.ArrayLike,
    weight: npt.ArrayLike,
    capacity: npt.ArrayLike,
    assign: npt.ArrayLike,
    iterations: int,
    tenure: int,
    restart: int,
    swap_items: int,
    seed: int,
) -> Tuple[float, bool, int]: ...
