import numpy as np
import numpy.typing as npt

def match_and_clean(
    indptr: npt.NDArray[np.int64],
    indices: npt.NDArray[np.int64],
    data: npt.NDArray[np.float64],
    t_indptr: npt.NDArray[np.int64],
    t_indices: npt.NDArray[np.int64],
    t_data: npt.NDArray[np.float64],
    bhat: npt.NDArray[np.float64],
    weights: npt.NDArray[np.float64],
    allowed: npt.NDArray[np.uint8],
    capacity: npt.NDArray[np.int64],
    cardinality_first: bool,
    assign: npt.NDArray[np.int64],
) -> tuple[int, int, int, float, float]: ...
