"""The family's one tolerance rule: what "meets", "reaches" and "fits" mean on float amounts."""

from __future__ import annotations

import numpy as np

__all__ = ["TOLERANCE", "tolerances"]

#: The family's one tolerance rule (see ``docs/collective.md``): property ``i`` of a pool has
#: the absolute tolerance ``tau_i = TOLERANCE * max_j p_ij`` (:attr:`ResourcePool.tolerance`,
#: scale-free: it follows the property's units). A free amount ``a_ij`` meets a minimum
#: ``e_i`` when ``a_ij >= e_i - tau_i``; ``N`` free amounts meet a total ``d_i`` when their
#: sum is ``>= d_i - N tau_i``; an amount fits on a node when it is ``<= a_ij + tau_i``. Every
#: method, the brute-force referee, :func:`~coalloc.collective.verify` and
#: :meth:`ResourcePool.reserve` apply it.
TOLERANCE = 1e-9


def tolerances(capacity: np.ndarray) -> np.ndarray:
    """``tau_i = TOLERANCE * max_j p_ij`` per property (zeros for a pool without nodes).

    Parameters
    ----------
    capacity : ndarray, shape (n, m)
        The capacities ``p_ij``.

    Returns
    -------
    ndarray of float64, shape (m,)
        The absolute tolerance of each property.

    Examples
    --------
    >>> tolerances(np.array([[4.0, 0.0], [2.0, 0.0]])).tolist()
    [4e-09, 0.0]
    """
    capacity = np.asarray(capacity, dtype=np.float64)
    if capacity.shape[0] == 0:
        return np.zeros(capacity.shape[1])
    return TOLERANCE * capacity.max(axis=0)
