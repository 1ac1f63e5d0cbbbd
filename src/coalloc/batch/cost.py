"""The predicted solve time of an instance: the per-family cost models the batch layer
sizes its chunks by (``chunksize="cost"``, the default of :func:`coalloc.solve_many`).

Each family declares its model in its ``_spec.py``: ``cost_size(instance) -> float`` (a
size read from the instance's parts in microseconds, never by solving it) and
``COST_MODEL = {kind name: (c, a, b)}``, the coefficients of ``seconds = c + a * size ** b`` for the
family's default method, fitted on the family benchmarks
(``python -m bench.shared.scaling_cost``) on the 2-core VM. The model only needs to rank
instances and to be right within a factor of a few: the batch refines it by the times the
workers measure (:class:`coalloc.batch.run._CostChunks`).
"""

from __future__ import annotations

import importlib
import math
from typing import Any, Dict, Optional, Tuple

#: family name -> its ``_spec`` module (None: the family declares no cost model).
_SPECS: Dict[str, Any] = {}


def _spec(family: str) -> Any:
    try:
        return _SPECS[family]
    except KeyError:
        pass
    try:
        module = importlib.import_module(f"coalloc.{family}._spec")
    except ImportError:
        module = None
    if module is not None and not (
        callable(getattr(module, "cost_size", None))
        and isinstance(getattr(module, "COST_MODEL", None), dict)
    ):
        module = None
    _SPECS[family] = module
    return module


def cost_key(instance: Any) -> Optional[Tuple[str, str]]:
    """``(family, kind name)`` of a problem, the key its measured times refine (None: not a
    family's problem, e.g. a file path read in the worker)."""
    family = getattr(instance, "family", None)
    if not isinstance(family, str):
        return None
    return family, type(instance).__name__


def predicted_cost(instance: Any) -> Optional[float]:
    """Seconds the family's default method is predicted to take on ``instance``.

    Parameters
    ----------
    instance : object
        A family's ``Instance`` (:class:`coalloc.ctaap.Instance`, ...).

    Returns
    -------
    float or None
        The prediction (positive, finite), or None when it cannot be made: a path, an
        invalid item, a family or kind without a model, a size that cannot be read.

    Examples
    --------
    >>> import coalloc
    >>> from coalloc.batch.cost import predicted_cost
    >>> small = coalloc.ctaap.Instance(*coalloc.generators.fig2(1, n_tasks=10, seed=0))
    >>> large = coalloc.ctaap.Instance(*coalloc.generators.fig2(1, n_tasks=100, seed=0))
    >>> predicted_cost(small) < predicted_cost(large)
    True
    >>> predicted_cost("instance.json") is None
    True
    """
    key = cost_key(instance)
    if key is None:
        return None
    spec = _spec(key[0])
    if spec is None or key[1] not in spec.COST_MODEL:
        return None
    c, a, b = spec.COST_MODEL[key[1]]
    try:
        size = float(spec.cost_size(instance))
    except Exception:  # a malformed instance: the worker reports it, not the sizer
        return None
    if not (size > 0 and math.isfinite(size)):
        return None
    seconds = c + a * size**b
    return seconds if seconds > 0 and math.isfinite(seconds) else None
