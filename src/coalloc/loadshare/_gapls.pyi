"""Type stub for ``coalloc.loadshare._gapls`` (src/_core/loadshare/_gapls.pyx).

The GAP kernels: a resumable tabu search with penalised capacity excess and the subgradient
steps of the Lagrangian relaxation of the capacities; twins in
:mod:`coalloc.loadshare._reference.gapls`.
"""

import numpy.typing as npt

def tabu_search(
    cost: npt.ArrayLike,
    weight: npt.ArrayLike,
    capacity: npt.ArrayLike,
    assign: npt.ArrayLike,
    best: npt.ArrayLike,
    alpha: npt.ArrayLike,
    tabu_until: npt.ArrayLike,
    istate: npt.ArrayLike,
    dstate: npt.ArrayLike,
    rng: npt.ArrayLike,
    iterations: int,
    tenure: int,
    restart: int,
    swap_items: int,
    growth: float,
    shake: int,
    per_agent: bool,
) -> int: ...
def subgradient(
    cost: npt.ArrayLike,
    weight: npt.ArrayLike,
    capacity: npt.ArrayLike,
    lam: npt.ArrayLike,
    best_lam: npt.ArrayLike,
    x: npt.ArrayLike,
    dstate: npt.ArrayLike,
    istate: npt.ArrayLike,
    iterations: int,
    target: float,
) -> int: ...
def shift_descent(
    cost: npt.ArrayLike,
    weight: npt.ArrayLike,
    capacity: npt.ArrayLike,
    assign: npt.ArrayLike,
    sweeps: int,
) -> int: ...
