import numpy as np
import numpy.typing as npt

from .model import KernelLinks

def match_and_clean(
    links: KernelLinks,
    bhat: npt.NDArray[np.float64],
    weights: npt.NDArray[np.float64],
    allowed: npt.NDArray[np.uint8],
    capacity: npt.NDArray[np.int64],
    cardinality_first: bool,
    assign: npt.NDArray[np.int64],
) -> tuple[int, int, int, float, float]: ...

def fill_free(
    links: KernelLinks,
    bhat: npt.NDArray[np.float64],
    allowed: npt.NDArray[np.uint8],
    capacity: npt.NDArray[np.int64],
    task_order: npt.NDArray[np.int64],
    cluster_order: npt.NDArray[np.int64],
    assign: npt.NDArray[np.int64],
) -> int: ...
