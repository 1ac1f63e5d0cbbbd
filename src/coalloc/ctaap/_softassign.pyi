"""Type stubs for the compiled module ``coalloc.ctaap._softassign``."""

from typing import TypedDict

import numpy as np
from numpy.typing import NDArray

from coalloc._shared.interrupt import KernelDeadline

from .model import RankedLinks

def edge_ranks(
    indptr: NDArray[np.int64],
    indices: NDArray[np.int64],
    data: NDArray[np.float64],
    bhat: NDArray[np.float64],
    deadline: KernelDeadline | None = None,
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
    deadline: KernelDeadline | None = None,
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

class GraduatedPlan(TypedDict):
    """The step-1 kernel's scalars (all IN), the fields of ``coalloc_ga_plan`` in
    ``src/_core/include/coalloc/ctaap/softassign_plan.h``."""

    symmetric: bool
    f_ok: float
    f_bad: float
    q_scale: float
    beta0: float
    beta_f: float
    beta_r: float
    max_outer: int
    max_inner: int
    tol_outer: float
    tol_inner: float

def graduated_assignment(
    links: RankedLinks,  # IN
    compat: NDArray[np.uint8],  # IN
    capacity: NDArray[np.int64],  # IN
    X: NDArray[np.float64],  # INOUT
    plan: GraduatedPlan,  # IN
) -> tuple[int, int, int]: ...
def _simd_level(level: int | None = None) -> int: ...
