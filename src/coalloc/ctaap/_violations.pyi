"""Type stubs for the compiled module ``coalloc.ctaap._violations``."""

import numpy as np
from numpy.typing import NDArray

def violation_counts(
    indptr: NDArray[np.int64],
    indices: NDArray[np.int64],
    data: NDArray[np.float64],
    bhat: NDArray[np.float64],
    assign: NDArray[np.int64],
    counts: NDArray[np.int64],
) -> int: ...
def update_violations(
    indptr: NDArray[np.int64],
    indices: NDArray[np.int64],
    data: NDArray[np.float64],
    t_indptr: NDArray[np.int64],
    t_indices: NDArray[np.int64],
    t_data: NDArray[np.float64],
    bhat: NDArray[np.float64],
    assign: NDArray[np.int64],
    task: int,
    old_cluster: int,
    counts: NDArray[np.int64],
) -> int: ...
