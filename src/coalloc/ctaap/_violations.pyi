"""Type stubs for the compiled module ``coalloc.ctaap._violations``."""

import numpy as np
from numpy.typing import NDArray

from .model import KernelLinks

def violation_counts(
    indptr: NDArray[np.int64],
    indices: NDArray[np.int64],
    data: NDArray[np.float64],
    bhat: NDArray[np.float64],
    assign: NDArray[np.int64],
    counts: NDArray[np.int64],
) -> int: ...
def update_violations(
    links: KernelLinks,
    bhat: NDArray[np.float64],
    assign: NDArray[np.int64],
    task: int,
    old_cluster: int,
    counts: NDArray[np.int64],
) -> int: ...
