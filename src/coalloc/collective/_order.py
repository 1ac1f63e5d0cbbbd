"""Demand before supply: the request, then the pool, in every signature of the family.

The old order (a :class:`ResourcePool` first, a :class:`CollectiveRequest` second) is told
apart by type and swapped, with a :class:`DeprecationWarning` where the caller wrote it.
"""

from __future__ import annotations

import warnings
from typing import Any, Optional, Tuple

from .model import CollectiveRequest, ResourcePool

__all__ = ["demand_first"]


def demand_first(first: Any, second: Any, call: Optional[str] = None, *, rest: str = ", ...",
                 note: str = "", stacklevel: int = 3) -> Tuple[Any, Any]:  # fmt: skip
    """``(request, pool)`` from two parts given in either order, told apart by type.

    Parameters
    ----------
    first, second : object
        The parts as the caller passed them.
    call : str, optional
        The function's name: the old order warns naming it (None: swap silently, as for a
        pickle of an instance made before the change).
    rest : str, default ", ..."
        The arguments after the two parts, as the warning writes them.
    note : str, default ""
        Appended to the warning.
    stacklevel : int, default 3
        Of the warning (3: the caller of the function that calls this).

    Returns
    -------
    tuple
        ``(request, pool)``; anything but the old order is returned as given (the model's
        checks name a wrong type).

    Examples
    --------
    >>> import coalloc.collective as co
    >>> from coalloc.collective._order import demand_first
    >>> pool = co.ResourcePool([[4.0]], ["cores"])
    >>> req = co.CollectiveRequest(60, 1)
    >>> demand_first(pool, req) == (req, pool) == demand_first(req, pool)
    True
    """
    if isinstance(first, ResourcePool) and isinstance(second, CollectiveRequest):
        if call is not None:
            warnings.warn(
                f"coalloc.collective.{call}(pool, request{rest}) is deprecated: pass the demand "
                f"first, {call}(request, pool{rest}){note}",
                DeprecationWarning, stacklevel=stacklevel,
            )  # fmt: skip
        return second, first
    return first, second
