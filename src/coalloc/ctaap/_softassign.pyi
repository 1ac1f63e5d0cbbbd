"""Type stubs for the compiled module ``coalloc.ctaap._softassign``."""

import numpy as np
from numpy.typing import NDArray

def edge_ranks(
    indptr: NDArray[np.int64],
    indices: NDArray[np.int64],
    data: NDArray[np.float64],
    bhat: NDArray[np.float64],
) -> tuple[NDArray[np.int32], NDArray[np.int32]]: ...
def compute_q(
    indptr: NDArray[np.int64],
    indices: NDArray[np.int64],
    rank: NDArray[np.int32],
    order: NDArray[np.int32],
    X: NDArray[np.float64],
    f_ok: float,
    f_bad: float,
    Q: NDArray[np.float64],
) -> None: ...
def softassign_exp(
    Q: NDArray[np.float64],
    compat: NDArray[np.uint8],
    beta: float,
    X: NDArray[np.float64],
) -> None: ...
def sinkhorn(
    X: NDArray[np.float64],
    capacity: NDArray[np.int64],
    max_iter: int,
    tol: float,
) -> int: ...
def graduated_assignment(
    indptr: NDArray[np.int64],
    indices: NDArray[np.int64],
    rank: NDArray[np.int32],
    order: NDArray[np.int32],
    t_indptr: NDArray[np.int64],
    t_indices: NDArray[np.int64],
    t_rank: NDArray[np.int32],
    t_order: NDArray[np.int32],
    symmetric: bool,
    compat: NDArray[np.uint8],
    capacity: NDArray[np.int64],
    X: NDArray[np.float64],
    f_ok: float,
    f_bad: float,
    q_scale: float,
    beta0: float,
    beta_f: float,
    beta_r: float,
    max_outer: int,
    max_inner: int,
    tol_outer: float,
    tol_inner: float,
) -> tuple[int, int, int]: ...
def _simd_level(level: int | None = None) -> int: ...
