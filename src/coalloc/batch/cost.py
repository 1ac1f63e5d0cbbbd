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


#: type -> ``(cost key, (c, a, b), cost_size)`` of a family's kind with a model, ``(cost key,
#: None, None)`` of one without; filled on first sight (what :func:`keyed_cost` reads per
#: instance: one dict lookup instead of the key, the spec and the model found again).
_KINDS: Dict[type, Tuple[Any, Any, Any]] = {}


def _kind_model(kind: type) -> Optional[Tuple[Any, Any, Any]]:
    """The memo entry of ``kind`` (None: its family is not a class attribute, so each
    instance is asked)."""
    entry = _KINDS.get(kind)
    if entry is not None:
        return entry
    family = getattr(kind, "family", None)
    if not isinstance(family, str):
        return None
    key = (family, kind.__name__)
    spec = _spec(family)
    if spec is None or key[1] not in spec.COST_MODEL:
        entry = (key, None, None)
    else:
        entry = (key, tuple(spec.COST_MODEL[key[1]]), spec.cost_size)
    _KINDS[kind] = entry
    return entry


def keyed_cost(instance: Any) -> Tuple[Optional[Tuple[str, str]], Optional[float]]:
    """``(cost_key(instance), predicted_cost(instance))`` in one look-up of the instance's
    kind: what the chunk sizer asks of every instance the calling process sends (issue 41:
    about 10 us less of its CPU per instance than asking both apart).

    Parameters
    ----------
    instance : object
        A family's ``Instance``, or anything else (a path, an invalid item).

    Returns
    -------
    tuple
        The cost key (None: not a family's problem) and the predicted seconds (None: no
        prediction, as :func:`predicted_cost`).

    Examples
    --------
    >>> import coalloc
    >>> from coalloc.batch.cost import keyed_cost
    >>> inst = coalloc.ctaap.Instance(*coalloc.generators.fig2(1, n_tasks=10, seed=0))
    >>> key, seconds = keyed_cost(inst)
    >>> key, seconds > 0
    (('ctaap', 'CtaapInstance'), True)
    >>> keyed_cost("instance.json")
    (None, None)
    """
    entry = _KINDS.get(type(instance))
    if entry is None:
        entry = _kind_model(type(instance))
        if entry is None:  # a family given per instance, or none at all
            key = cost_key(instance)
            return key, (_predict(instance, key) if key is not None else None)
    key, model, size_of = entry
    return key, _seconds(instance, model, size_of)


def _predict(instance: Any, key: Tuple[str, str]) -> Optional[float]:
    spec = _spec(key[0])
    if spec is None or key[1] not in spec.COST_MODEL:
        return None
    return _seconds(instance, spec.COST_MODEL[key[1]], spec.cost_size)


def _seconds(instance: Any, model: Any, size_of: Any) -> Optional[float]:
    """``c + a * size ** b`` of ``instance`` (None: no model, or a size or time that is not
    a positive finite number)."""
    if model is None:
        return None
    try:
        size = float(size_of(instance))
    except Exception:  # a malformed instance: the worker reports it, not the sizer
        return None
    if not (size > 0 and math.isfinite(size)):
        return None
    c, a, b = model
    seconds = c + a * size**b
    return seconds if seconds > 0 and math.isfinite(seconds) else None


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
    return keyed_cost(instance)[1]
