"""A collective co-allocation request (Cankar et al. 2013, section 2).

A :class:`CollectiveRequest` asks for ``count`` nodes for ``duration`` seconds, starting in
``[earliest_start, latest_start]``, with a per-node minimum ``e_i`` and a total ``d_i`` per
property (a *simple* request has no total: ``d_i = N e_i``).
"""

from __future__ import annotations

import math
from typing import Any, Dict, Mapping, Optional, Sequence, Tuple

import numpy as np

from ..._shared.validation import readonly
from .tolerance import TOLERANCE

__all__ = ["CollectiveRequest", "DEFAULT_HORIZON", "DEFAULT_MINIMUM"]

#: ``t_C``: the default length of the start window, seconds (``t_l = t_e + t_C``).
DEFAULT_HORIZON = 86400.0
#: The small positive per-resource minimum ``e_i`` used when a request gives none.
DEFAULT_MINIMUM = 1e-6


def _mapping(value: Any, argname: str) -> Dict[str, float]:
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise TypeError(f"{argname} must be a mapping of property name -> amount")
    out = {}
    for key, v in value.items():
        if not isinstance(key, str):
            raise TypeError(f"{argname} keys must be property names (str)")
        if isinstance(v, bool) or not isinstance(v, (int, float, np.number)):
            raise TypeError(f"{argname}[{key!r}] must be a number, got {type(v).__name__}")
        if not (math.isfinite(float(v)) and float(v) >= 0):
            raise ValueError(f"{argname}[{key!r}] must be a finite number >= 0, got {v!r}")
        out[key] = float(v)
    return out


class CollectiveRequest:
    """A (collective) co-allocation request.

    Parameters
    ----------
    duration : float
        ``t_res``, seconds (> 0).
    count : int
        ``N``, the number of resources (>= 1).
    earliest_start : float, optional
        ``t_e`` in seconds from the pool's origin (default 0, "the time of submission").
    latest_start : float, optional
        ``t_l`` (default ``t_e + t_C`` with ``t_C`` = :data:`DEFAULT_HORIZON`).
    minimum : mapping of str to float, optional
        ``e_i`` per property; a property without one gets :data:`DEFAULT_MINIMUM` (the
        paper's "small positive value"), or ``total / count`` for a simple property.
    total : mapping of str to float, optional
        ``d_i`` per property; a property without one is *simple*: ``d_i = N e_i``.
    labels : mapping of str to str or sequence of str, optional
        Qualitative requirements (one accepted value or a list of them).

    Raises
    ------
    TypeError, ValueError
        On malformed arguments or ``total < count * minimum``.

    Examples
    --------
    >>> req = CollectiveRequest(3600, 10, minimum={"ram": 2}, total={"ram": 40})
    >>> req.latest_start
    86400.0
    """

    def __init__(
        self,
        duration: float,
        count: int,
        earliest_start: Optional[float] = None,
        latest_start: Optional[float] = None,
        minimum: Optional[Mapping[str, float]] = None,
        total: Optional[Mapping[str, float]] = None,
        labels: Optional[Mapping[str, Any]] = None,
    ) -> None:
        if isinstance(duration, bool) or not isinstance(duration, (int, float, np.number)):
            raise TypeError(f"duration must be a number of seconds, got {type(duration).__name__}")
        if not (math.isfinite(float(duration)) and duration > 0):
            raise ValueError(f"duration must be a finite number > 0, got {duration!r}")
        if isinstance(count, (bool, np.bool_)) or not isinstance(count, (int, np.integer)):
            raise TypeError(f"count must be an int, got {type(count).__name__}")
        if count < 1:
            raise ValueError(f"count must be >= 1, got {count}")
        te = 0.0 if earliest_start is None else earliest_start
        if isinstance(te, bool) or not isinstance(te, (int, float, np.number)):
            raise TypeError("earliest_start must be a number of seconds")
        if not (math.isfinite(float(te)) and te >= 0):
            raise ValueError(f"earliest_start must be a finite number >= 0, got {te!r}")
        tl = float(te) + DEFAULT_HORIZON if latest_start is None else latest_start
        if isinstance(tl, bool) or not isinstance(tl, (int, float, np.number)):
            raise TypeError("latest_start must be a number of seconds")
        if not (math.isfinite(float(tl)) and tl >= te):
            raise ValueError(
                f"latest_start must be a finite number >= earliest_start ({te!r}), got {tl!r}"
            )
        self.duration = float(duration)
        self.count = int(count)
        self.earliest_start = float(te)
        self.latest_start = float(tl)
        self.minimum = _mapping(minimum, "minimum")
        self.total = _mapping(total, "total")
        for key, d in self.total.items():
            e = self.minimum.get(key)
            if e is not None and d < self.count * e * (1 - TOLERANCE):
                raise ValueError(
                    f"total[{key!r}]={d:g} is less than count * minimum[{key!r}] = "
                    f"{self.count * e:g}"
                )
        if labels is not None and not isinstance(labels, Mapping):
            raise TypeError("labels must be a mapping of label name -> accepted value(s)")
        self.labels: Dict[str, Any] = {}
        for key, want in (labels or {}).items():
            if not isinstance(key, str):
                raise TypeError("labels keys must be strings")
            if isinstance(want, str):
                self.labels[key] = want
            elif isinstance(want, (list, tuple)) and all(isinstance(w, str) for w in want):
                self.labels[key] = tuple(want)
            else:
                raise TypeError(f"labels[{key!r}] must be a string or a list of strings")

    @property
    def collective(self) -> bool:
        """True when some property has a total (a collective request)."""
        return bool(self.total)

    def vectors(self, names: Sequence[str]) -> Tuple[np.ndarray, np.ndarray]:
        """``(e, d)``: the per-resource minimum and the total of each property of ``names``.

        Parameters
        ----------
        names : sequence of str
            The pool's property names, in its order.

        Returns
        -------
        e : ndarray of float64
            The minimum ``e_i`` per resource of each property.
        d : ndarray of float64
            The total ``d_i`` of each property (``N e_i`` for a simple request).

        Raises
        ------
        ValueError
            When the request names a property the pool does not have.

        Examples
        --------
        >>> from coalloc.collective import CollectiveRequest
        >>> req = CollectiveRequest(600, 2, minimum={"cores": 1}, total={"cores": 5})
        >>> e, d = req.vectors(["cores", "ram"])
        >>> e.tolist(), d.tolist()
        ([1.0, 1e-06], [5.0, 2e-06])
        """
        names = tuple(names)
        for argname, table in (("minimum", self.minimum), ("total", self.total)):
            unknown = sorted(set(table) - set(names))
            if unknown:
                raise ValueError(
                    f"request {argname} names unknown properties {unknown}; the pool has "
                    f"{list(names)}"
                )
        n = self.count
        e = np.empty(len(names))
        d = np.empty(len(names))
        for i, key in enumerate(names):
            if key in self.minimum:
                e[i] = self.minimum[key]
            elif key in self.total:
                e[i] = min(DEFAULT_MINIMUM, self.total[key] / n)
            else:
                e[i] = DEFAULT_MINIMUM
            d[i] = self.total.get(key, n * e[i])
            d[i] = max(d[i], n * e[i])
        readonly(e, d)
        return e, d

    def to_dict(self) -> dict:
        """The request as a JSON-ready dictionary (the ``request`` object of the formats).

        Returns
        -------
        dict
            ``duration``, ``count``, ``earliest_start``, ``latest_start``, ``minimum`` and,
            when given, ``total`` and ``labels``.

        Examples
        --------
        >>> from coalloc.collective import CollectiveRequest
        >>> req = CollectiveRequest(600, 2, minimum={"cores": 1}, total={"cores": 5})
        >>> req.to_dict()  # doctest: +NORMALIZE_WHITESPACE
        {'duration': 600.0, 'count': 2, 'earliest_start': 0.0, 'latest_start': 86400.0,
         'minimum': {'cores': 1.0}, 'total': {'cores': 5.0}}
        """
        out: dict = {
            "duration": self.duration,
            "count": self.count,
            "earliest_start": self.earliest_start,
            "latest_start": self.latest_start,
            "minimum": dict(self.minimum),
        }
        if self.total:
            out["total"] = dict(self.total)
        if self.labels:
            out["labels"] = {
                k: v if isinstance(v, str) else list(v) for k, v in self.labels.items()
            }
        return out

    def __repr__(self) -> str:
        kind = "collective" if self.collective else "simple"
        return (
            f"CollectiveRequest({kind}: {self.count} nodes for {self.duration:g} s, start in "
            f"[{self.earliest_start:g}, {self.latest_start:g}], minimum {self.minimum}, "
            f"total {self.total}, labels {self.labels})"
        )
